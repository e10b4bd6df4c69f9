package validate

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"scaleplan/scenarios"
	"scaleplan/sim"
)

// tf2Steps reads the TensorFlow 2 rows of the published Mask R-CNN file
// and returns each row's step in milliseconds (global batch over the
// published throughput), keyed "device precision devices batch".
func tf2Steps(t *testing.T) map[string]float64 {
	t.Helper()
	recs := csvTable(t, "../testdata/measurements/published-dle-maskrcnn-r50-fpn.csv")
	steps := map[string]float64{}
	for _, rec := range recs[1:] { // the first is the header
		if len(rec) < 9 || rec[8] != "tensorflow" {
			continue
		}
		n, err1 := strconv.Atoi(rec[3])
		b, err2 := strconv.Atoi(rec[4])
		x, err3 := strconv.ParseFloat(rec[5], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("row %v: %v %v %v", rec, err1, err2, err3)
		}
		steps[fmt.Sprintf("%s %s %d %d", rec[1], rec[2], n, b)] = 1000 * float64(n*b) / x
	}
	return steps
}

// csvTable returns the records of a comma-separated file, its "#" lines
// left out.
func csvTable(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comment = '#'
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

// detectionDoc returns a check that docs/validation-detection.md holds a
// text (docQuote).
func detectionDoc(t *testing.T) func(string) {
	t.Helper()
	return docQuote(t, "validation-detection.md")
}

// TestTF2InputDocFigures checks the figures docs/validation-detection.md
// ("The TensorFlow 2 program's input on eight GPUs") gives: the bytes a
// device receives per image, from the shapes DeepLearningExamples'
// parser gives its tensors; the steps of the TensorFlow 2 rows, from the
// published throughputs; the rate a device's copy needs to hide behind
// the step; and the host's core-seconds per image the eight-GPU rows'
// growth would take over the node's cores as validate counts them.
func TestTF2InputDocFigures(t *testing.T) {
	has := detectionDoc(t)
	positions := 0
	for l := 2; l <= 6; l++ { // levels 2-6 of an 832 × 1344 image
		positions += (832 >> l) * (1344 >> l)
	}
	anchors := 3 * positions
	image := 832 * 1344 * 3 * 4
	masks := 100 * 116 * 116 * 4
	score, box := anchors*4, anchors*4*4
	small := 100*4*4 + 100*4 + 5*4 + 8 // boxes, classes, image information, source id
	perImage := image + masks + score + box + small
	for _, s := range []string{
		fmt.Sprintf("%s positions × 3 = %s", commas(positions), commas(anchors)),
		commas(image) + " bytes", commas(masks), commas(score), commas(box), commas(small),
		"**" + commas(perImage) + " bytes**",
	} {
		has(s)
	}
	if perImage != 24388504 {
		t.Errorf("bytes per image %d, want 24,388,504 (the sum of the shapes)", perImage)
	}

	st := tf2Steps(t)
	ms := func(k string) string { return fmt.Sprintf("%.0f", st[k]) }
	a, v := "a100-sxm4-80gb", "v100-sxm2-16gb"
	has(fmt.Sprintf("(TF32 %s and %s ms, AMP %s and %s ms at 2 and 4 images a GPU)",
		ms(a+" tf32 8 2"), ms(a+" tf32 8 4"), ms(a+" amp-fp16 8 2"), ms(a+" amp-fp16 8 4")))
	has(fmt.Sprintf("(%s and %s ms against %s and %s)",
		ms(a+" tf32 1 2"), ms(a+" tf32 1 4"), ms(a+" amp-fp16 1 2"), ms(a+" amp-fp16 1 4")))
	has(fmt.Sprintf("(AMP: %s → %s ms)", ms(v+" amp-fp16 8 2"), ms(v+" amp-fp16 8 4")))
	slope := func(d, p string) float64 { return (st[d+" "+p+" 8 4"] - st[d+" "+p+" 8 2"]) / 16 }
	sa, sa32 := slope(a, "amp-fp16"), slope(a, "tf32")
	sv, sv32 := slope(v, "amp-fp16"), slope(v, "fp32")
	has(fmt.Sprintf("growing by %.1f to %.1f ms per image of the global batch", sa, sa32))
	has(fmt.Sprintf("by %.1f (AMP", sv))
	has(fmt.Sprintf("to %.1f ms (FP32)", sv32))

	cat, _ := defaults(t)
	eff := func(system, device string) float64 {
		_, node, err := systemOf(cat, system, cat.DeviceCalled(device))
		if err != nil {
			t.Fatal(err)
		}
		in := sim.Input{Cores: node.CPU.Cores(), Threads: node.CPU.Threads(), Workers: node.CPU.Threads(), SMTYield: scenarios.SMTYield}
		return in.DecodeParallelism()
	}
	ca, cv := eff("dgx-a100", a), eff("dgx1", v)
	has(fmt.Sprintf("(%.1f and %.0f, above)", ca, cv))
	has(fmt.Sprintf("that is %.1f to %.1f core-seconds an image on the DGX A100 and %.2f to %.2f on the DGX-1",
		sa*ca/1000, sa32*ca/1000, sv*cv/1000, sv32*cv/1000))
	nms := 201600*14.45e-9 + 1999000*13.17e-9 + (50400+12600+3150+819)*14.45e-9 + (3*1999000+819*818/2)*13.17e-9
	has(fmt.Sprintf("of which the suppression modelled above is %.2f", nms))

	batch := 4 * float64(perImage)
	has(fmt.Sprintf("at 4 images %.1f MB in the shortest measured step of eight GPUs (%s ms, DGX A100 AMP)", batch/1e6, ms(a+" amp-fp16 8 4")))
	shortest := math.Inf(1)
	for k, s := range st {
		if strings.HasSuffix(k, " 8 4") {
			shortest = math.Min(shortest, s)
		}
	}
	if shortest != st[a+" amp-fp16 8 4"] {
		t.Errorf("the shortest step of eight GPUs at 4 images is %.1f ms, not the DGX A100 AMP row's", shortest)
	}
	rate := batch / (shortest / 1000) / 1e9
	has(fmt.Sprintf("%.2f GB/s, %.2f GB/s for the two GPUs", rate, 2*rate))
	has(fmt.Sprintf("the DGX-1's two at 4 images need %.2f GB/s", 2*batch/(st[v+" amp-fp16 8 4"]/1000)/1e9))
}

// commas writes n with a comma between each three digits, as the docs do.
func commas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestMirroredExchange checks that a row of DeepLearningExamples'
// TensorFlow 2 Mask R-CNN exchanges its gradient as MirroredStrategy's
// NcclAllReduce(num_packs=1) does, in one collective after the backward
// pass of 4 bytes a parameter (Keras' float32 variables, at TF32 and at
// AMP alike), and that no other row does: a PyTorch row of the same model
// and a TensorFlow row of another overlap their buckets with the backward
// pass, and a row that names no framework carries its storage precision.
func TestMirroredExchange(t *testing.T) {
	doc, err := os.ReadFile("../docs/validation-detection.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	gradient := func(bytes float64, params int64) float64 { return bytes * float64(params) }
	cat, prof := defaults(t)
	d := cat.DeviceCalled("a100-sxm4-80gb")
	if d == nil {
		t.Fatal("the catalogue lacks a100-sxm4-80gb")
	}
	for _, tc := range []struct {
		model, framework, precision string
		noOverlap                   bool
		bytes                       float64
	}{
		{"maskrcnn-r50-fpn", "tensorflow", "amp-fp16", true, 4},
		{"maskrcnn-r50-fpn", "tensorflow", "tf32", true, 4},
		{"maskrcnn-r50-fpn", "torch", "amp-fp16", false, 4},
		{"maskrcnn-r50-fpn", "", "amp-fp16", false, 2},
		{"efficientnet-b4", "tensorflow", "amp-fp16", false, 2},
	} {
		mdl, err := prof.Model(tc.model)
		if err != nil {
			t.Fatal(err)
		}
		m := Measured{Device: d.Name, Model: mdl.Name, Precision: tc.precision, Batch: 4, Devices: 8, System: "dgx-a100", Framework: tc.framework}
		cfg, err := measuredConfig(mdl, d, &m, 4, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for _, l := range cfg.Comm.Layers {
			sum += float64(l)
		}
		if want := gradient(tc.bytes, mdl.Params); math.Abs(sum-want) > 1e-6*want {
			t.Errorf("%s %q %s: gradient %.0f bytes, want %.0f (%g a parameter)", tc.model, tc.framework, tc.precision, sum, want, tc.bytes)
		}
		if tc.noOverlap {
			quote := fmt.Sprintf("of 4 bytes a parameter (`TestMirroredExchange`): %.1f MB", gradient(tc.bytes, mdl.Params)/1e6)
			if !strings.Contains(text, quote) {
				t.Errorf("docs/validation-detection.md lacks %q", quote)
			}
		}
		if cfg.Comm.NoOverlap != tc.noOverlap {
			t.Errorf("%s %q %s: exchange after the backward pass %v, want %v", tc.model, tc.framework, tc.precision, cfg.Comm.NoOverlap, tc.noOverlap)
		}
	}
}
