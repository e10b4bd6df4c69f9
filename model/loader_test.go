package model

import (
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestHybridLoadTable checks HybridLoadHost against the table it is taken
// from, scripts/jpegcpu.c's output in testdata/jpeg-cpu.csv: the read,
// decode and copy of one image of COCO's size and mean file size.
func TestHybridLoadTable(t *testing.T) {
	rows := csvRows(t, "testdata/jpeg-cpu.csv")
	if len(rows) != 2 || strings.Join(rows[0], ",") != "width,height,bytes,quality,read_ms,decode_ms,copy_ms" {
		t.Fatalf("table: want the header and one row, got %v", rows)
	}
	v := make([]float64, len(rows[1]))
	for i := range v {
		var err error
		if v[i], err = strconv.ParseFloat(rows[1][i], 64); err != nil {
			t.Fatal(err)
		}
	}
	// 640 × 480 pixels; a file within 2 % of 160 kB (18 GB / 118,287).
	if v[0] != 640 || v[1] != 480 || math.Abs(v[2]/160e3-1) > 0.02 {
		t.Errorf("image %v × %v, %v bytes: want 640 × 480 and about 160 kB", v[0], v[1], v[2])
	}
	want := (v[4] + v[5] + v[6]) * 1e-3
	if got := float64(HybridLoadHost); math.Abs(got/want-1) > 0.005 {
		t.Errorf("HybridLoadHost %.4g s, the table's read + decode + copy %.4g s", got, want)
	}
}

// csvRows returns the rows of a comma-separated table under testdata,
// its blank and "#" comment lines left out.
func csvRows(t *testing.T, path string) [][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	for line := range strings.Lines(string(data)) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			rows = append(rows, strings.Split(line, ","))
		}
	}
	return rows
}

// TestHybridTargetCalls checks the hybrid loader's calls per image
// against a hand count of DeepLearningExamples' code path (729963dd,
// maskrcnn_benchmark):
//
//	build_target     torch.tensor, reshape                        2
//	                 BoxList as_tensor                            1
//	                 convert: split, 2×(sub, clamp, add), cat,
//	                          as_tensor                           9
//	                 labels' torch.tensor                         1
//	clip_to_image    4×(column, clamp_)                           8
//	                 keep: 4 columns, 2 gt, and                   7
//	                 self[keep]: boxes, as_tensor, labels,
//	                          masks' nonzero, squeeze, tolist     6   = 34
//	Resize           split, 4 mul, cat, as_tensor                 7
//	flip (p = 0.5)   split, 2×2 sub, cat, as_tensor               7 · 0.5
//	per polygon      as_tensor, pin_memory                        2
//	                 resize: clone, 2×(slice, imul, setitem)      7
//	                 flip: clone, slice, 2 sub, setitem           5 · 0.5
//
// so 44.5 + 11.5 per polygon CPU calls; on the device the image's copy 1,
// resize 4, flip 1 · 0.5, convert 2, channel index 2, × 255 1, normalize
// 7, the target's copies 2 + 1: 20.5 kernels; 4 syncs of the loader's
// stream (index, mean, std, any).
func TestHybridTargetCalls(t *testing.T) {
	for _, c := range []struct {
		polygons float64
		want     HostCalls
	}{
		{0, HostCalls{CPU: 44.5, Kernels: 20.5, Syncs: 4}},
		{1, HostCalls{CPU: 56, Kernels: 20.5, Syncs: 4}},
		{7.7, HostCalls{CPU: 44.5 + 11.5*7.7, Kernels: 20.5, Syncs: 4}},
	} {
		got := HybridTargetCalls(c.polygons)
		if math.Abs(got.CPU-c.want.CPU) > 1e-9 || got.Kernels != c.want.Kernels || got.Syncs != c.want.Syncs {
			t.Errorf("%v polygons: %+v, want %+v", c.polygons, got, c.want)
		}
	}
	// COCO's 7.7 instances an image (Lin et al. 2014, section 5), one
	// polygon each.
	if HybridTargets != HybridTargetCalls(7.7) {
		t.Errorf("HybridTargets %+v, want the calls of 7.7 polygons", HybridTargets)
	}
}
