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
