package validate

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"scaleplan/internal/units"
)

// tf2ParseReferenceClock is the clock of the core scripts/tf2parse.c and
// scripts/jpegcpu.c ran on: the 2.6 GHz AMD EPYC virtual machine of
// model/testdata/jpeg-cpu.csv and nms-cpu.csv.
const tf2ParseReferenceClock = 2.6 * units.GHz

// cocoInstances is COCO's mean count of instances an image (Lin et al.,
// "Microsoft COCO: Common Objects in Context", ECCV 2014, section 5), as
// model/loader.go takes it.
const cocoInstances = 7.7

// tf2ParseStages lists scripts/tf2parse.c's stages in its table's order,
// each with the share of images that run it: the random flip's
// probability 0.5 (dataset_parser.py, augment_image), 1 for the rest.
var tf2ParseStages = []struct {
	name, per string
	share     float64
}{
	{"image_to_float", "image", 1}, {"normalize", "image", 1}, {"flip_image", "image", 0.5},
	{"resize_image", "image", 1}, {"pad_image", "image", 1},
	{"mask_png_decode", "instance", 1}, {"mask_to_float", "instance", 1}, {"flip_mask", "instance", 0.5},
	{"resize_mask", "instance", 1}, {"pad_mask", "instance", 1}, {"crop_mask", "instance", 1},
	{"anchor_iou_match", "instance", 1}, {"anchor_sample", "image", 1}, {"anchor_encode", "image", 1},
}

// tf2Parse returns the parse of one image on one reference core in
// milliseconds from the two tables: the JPEG's decode (jpeg-cpu.csv), the
// stages per image once and those per instance cocoInstances times, each
// at its share; and, apart, the anchor labeller's part.
func tf2Parse(t *testing.T) (total, anchors, jpeg float64) {
	t.Helper()
	rows := csvTable(t, "../model/testdata/tf2-parse.csv")
	if len(rows) != len(tf2ParseStages)+1 || strings.Join(rows[0], ",") != "stage,per,ms" {
		t.Fatalf("tf2-parse.csv: want the header and %d stages, got %v", len(tf2ParseStages), rows)
	}
	for i, s := range tf2ParseStages {
		r := rows[i+1]
		if len(r) != 3 || r[0] != s.name || r[1] != s.per {
			t.Fatalf("tf2-parse.csv row %d: %v, want %s per %s", i+2, r, s.name, s.per)
		}
		ms, err := strconv.ParseFloat(r[2], 64)
		if err != nil || !(ms > 0) {
			t.Fatalf("tf2-parse.csv row %d: %q: want a positive time (%v)", i+2, r[2], err)
		}
		v := ms * s.share
		if s.per == "instance" {
			v *= cocoInstances
		}
		total += v
		if strings.HasPrefix(s.name, "anchor_") {
			anchors += v
		}
	}
	j := csvTable(t, "../model/testdata/jpeg-cpu.csv")
	if len(j) != 2 || len(j[0]) != 7 || j[0][5] != "decode_ms" {
		t.Fatalf("jpeg-cpu.csv: want the header and one row with decode_ms, got %v", j)
	}
	jpeg, err := strconv.ParseFloat(j[1][5], 64)
	if err != nil {
		t.Fatal(err)
	}
	return total + jpeg, anchors, jpeg
}

// TestTF2ParseBounds checks what docs/validation-detection.md says of the
// TensorFlow 2 program's parse, from scripts/tf2parse.c's table: its time
// per image on the reference core, scaled by the clocks to each node's
// core; that on one thread (at the boost clock of one busy core) it would
// make every eight-GPU row's step (global batch × parse) longer than
// measured, and its growth per image larger; and that parsed as the
// program's map does, the global batch's images at once on the node's
// threads (it has at least as many as images), it takes one image's parse
// at the clock of that many busy cores, shorter than every measured step.
func TestTF2ParseBounds(t *testing.T) {
	has := detectionDoc(t)
	parse, anchors, jpeg := tf2Parse(t)
	has(fmt.Sprintf("%.1f ms an image on the reference core, of which the anchors' labels take %.1f and the JPEG's decode %.3f",
		parse, anchors, jpeg))
	st := tf2Steps(t)
	cat, _ := defaults(t)
	threads := map[string]int{}
	for _, n := range []struct{ system, device, precisions string }{
		{"dgx-a100", "a100-sxm4-80gb", "tf32 amp-fp16"}, {"dgx1", "v100-sxm2-16gb", "fp32 amp-fp16"},
	} {
		_, node, err := systemOf(cat, n.system, cat.DeviceCalled(n.device))
		if err != nil {
			t.Fatal(err)
		}
		threads[n.system] = node.CPU.Threads()
		one := parse * float64(tf2ParseReferenceClock/node.CPU.ClockAt(1))
		lo, hi, slow := math.Inf(1), 0.0, 0.0
		for _, b := range []int{2, 4} {
			images := 8 * b
			if node.CPU.Threads() < images {
				t.Fatalf("%s: %d threads, fewer than the %d images of a step", n.system, node.CPU.Threads(), images)
			}
			all := parse * float64(tf2ParseReferenceClock/node.CPU.ClockAt(images))
			slow = math.Max(slow, all)
			for _, p := range strings.Fields(n.precisions) {
				step := st[fmt.Sprintf("%s %s 8 %d", n.device, p, b)]
				if bound := float64(images) * one; !(bound > step) {
					t.Errorf("%s %s %d images: one thread's parse %.0f ms, not longer than the measured step %.0f ms", n.system, p, images, bound, step)
				}
				if slope := (st[fmt.Sprintf("%s %s 8 4", n.device, p)] - st[fmt.Sprintf("%s %s 8 2", n.device, p)]) / 16; !(one > slope) {
					t.Errorf("%s %s: one thread's parse %.1f ms an image, not more than the measured growth %.1f", n.system, p, one, slope)
				}
				if !(all < step) {
					t.Errorf("%s %s %d images: the parallel parse %.0f ms, not shorter than the step %.0f ms", n.system, p, images, all, step)
				}
				lo, hi = math.Min(lo, step), math.Max(hi, step)
			}
		}
		has(fmt.Sprintf("`%s`: %.1f ms on one thread at %.1f GHz, %.0f and %.0f ms for 16 and 32 images against the measured %.0f to %.0f ms; in parallel at most %.0f ms",
			n.system, one, float64(node.CPU.ClockAt(1))/1e9, 16*one, 32*one, lo, hi, slow))
	}
	has(fmt.Sprintf("by default (`tensorflow/core/framework/dataset.cc`, `GetRunnerThreadpoolSizeFromOpKernelContext`), %d on the DGX A100, %d on the DGX-1",
		threads["dgx-a100"], threads["dgx1"]))
}
