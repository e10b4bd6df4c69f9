package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scaleplan/hw"
	"scaleplan/model"
)

// writeCalibrations writes each document to a file of its own in a
// temporary directory and reads them.
func writeCalibrations(t *testing.T, docs ...string) []CalibrationFile {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i, d := range docs {
		p := filepath.Join(dir, string(rune('a'+i))+".yaml")
		if err := os.WriteFile(p, []byte(d), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	files, err := ReadCalibrationFiles(paths)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestPickCalibration checks the choice among files against the rule: the
// model, the device kind (its key or its CUDA name) and the precision (or
// none; PyTorch's amp-fp16 and amp-bf16 for fp16 and bf16) must match; of
// the entries that do, the one measured on the fewest devices wins, the
// first file's on a tie.
func TestPickCalibration(t *testing.T) {
	files := writeCalibrations(t,
		"throughput:\n"+
			"  - {model: resnet50, device: p100-sxm2, devices: 4, precision: fp32, v0: 700, t: 30 ms, r2: 0.99, points: 3, source: four.csv}\n"+
			"  - {model: resnet50, device: v100-sxm2-32gb, devices: 1, precision: fp32, v0: 400, t: 10 ms, r2: 0.99, points: 3}\n",
		"throughput:\n"+
			"  - {model: resnet50, device: p100-sxm2, devices: 1, v0: 190, t: 20 ms, r2: 0.99, points: 3, source: one.csv}\n"+
			"  - {model: resnet50, device: p100-sxm2, devices: 1, precision: fp16, v0: 300, t: 20 ms, r2: 0.99, points: 3}\n",
		"throughput:\n"+
			"  - {model: resnet50, device: p100-sxm2, devices: 1, precision: fp32, v0: 150, t: 5 ms, r2: 0.99, points: 3}\n",
		// As PyTorch logs name them: CUDA's device name, automatic mixed precision.
		"throughput:\n"+
			"  - {model: resnet50, device: NVIDIA H100 80GB HBM3, devices: 1, precision: amp-fp16, v0: 3000, t: 0 s, r2: 0.99, points: 3}\n"+
			"  - {model: resnet50, device: NVIDIA H100 80GB HBM3, devices: 1, precision: amp-bf16, v0: 2900, t: 0 s, r2: 0.99, points: 3}\n"+
			"  - {model: resnet50, device: NVIDIA A100-SXM4-80GB, devices: 1, precision: amp, v0: 2100, t: 0 s, r2: 0.99, points: 3}\n",
		// torchbench's transformer-base counts sentence pairs.
		"throughput:\n"+
			"  - {model: transformer-base, device: NVIDIA H200, devices: 1, precision: fp32, labels: {sample: sentence-pair}, v0: 805.6, t: 9 ms, r2: 0.99, points: 3}\n"+
			"  - {model: transformer-base, device: NVIDIA H200, devices: 1, precision: fp32, labels: {sample: token-pair}, v0: 103117, t: 9 ms, r2: 0.99, points: 3}\n")
	cat, err := hw.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		model, device, prec string
		unit                model.SampleUnit
		file                int // -1: none applies
		v0                  float64
	}{
		{"resnet50", "p100-sxm2", "fp32", "", 1, 190},                          // one device beats four; the second file before the third
		{"resnet50", "p100-sxm2", "fp16", "", 1, 190},                          // the entry without a precision comes first in its file
		{"resnet50", "v100-sxm2-32gb", "fp32", "", 0, 400},                     //
		{"resnet50", "v100-sxm2-32gb", "fp16", "", -1, 0},                      // precision
		{"gnmt", "p100-sxm2", "fp32", "", -1, 0},                               // model
		{"resnet50", "t4", "fp16", "", -1, 0},                                  // device
		{"resnet50", "h100-sxm5-80gb", "fp16", "", 3, 3000},                    // CUDA's name; amp-fp16 is fp16
		{"resnet50", "h100-sxm5-80gb", "bf16", "", 3, 2900},                    // amp-bf16 is bf16
		{"resnet50", "h100-sxm5-80gb", "fp32", "", -1, 0},                      // amp is not fp32
		{"resnet50", "a100-sxm4-80gb", "fp16", "", 3, 2100},                    // amp alone: autocast's float16
		{"resnet50", "a100-sxm4-80gb", "bf16", "", -1, 0},                      //
		{"transformer-base", "h200-sxm-141gb", "fp32", model.Token, 4, 103117}, // a sentence pair is no token
		{"transformer-base", "h200-sxm-141gb", "fp32", model.Sentence, 4, 805.6},
		{"resnet50", "h200-sxm-141gb", "fp32", "", -1, 0},
	} {
		cal, i, err := PickCalibration(files, tc.model, tc.unit, cat.Devices[tc.device], tc.prec)
		if err != nil {
			t.Fatal(err)
		}
		if i != tc.file || (tc.file < 0) != (cal == nil) {
			t.Errorf("%s on %s at %s: file %d, calibration %+v; want file %d", tc.model, tc.device, tc.prec, i, cal, tc.file)
			continue
		}
		if cal != nil && (cal.V0 != tc.v0 || cal.Devices != 1 || !strings.HasPrefix(cal.Source, files[i].Path)) {
			t.Errorf("%s on %s at %s: %+v, want v0 %v on 1 device from %s", tc.model, tc.device, tc.prec, cal, tc.v0, files[i].Path)
		}
	}
	p100 := cat.Devices["p100-sxm2"]
	if cal, _, _ := PickCalibration(files, "resnet50", model.Image, p100, "fp32"); cal.Source != files[1].Path+" (one.csv)" || float64(cal.T) != 0.020 {
		t.Errorf("source %q, t %v", cal.Source, cal.T)
	}
	unbounded := writeCalibrations(t, "throughput:\n  - {model: resnet50, device: p100-sxm2, devices: 1, v0: 1.8e7, v0_unbounded: true, v0_lower: 805500, t: 10 ms, r2: 1, points: 4, batches: [16, 128]}\n")
	if _, _, err := PickCalibration(unbounded, "resnet50", "", p100, "fp32"); err == nil || !strings.Contains(err.Error(), "did not bound v0") || !strings.Contains(err.Error(), unbounded[0].Path) {
		t.Errorf("unbounded: %v", err)
	}
}

// TestOptionsCalibrations: a calibration given in Options replaces a
// shipped scenario's compute, and is named in CalibratedBy; one that does
// not apply leaves the scenario as it is.
func TestOptionsCalibrations(t *testing.T) {
	files := writeCalibrations(t,
		"throughput:\n  - {model: resnet50, device: p100-sxm2, devices: 1, precision: fp32, v0: 150, t: 5 ms, r2: 0.99, points: 3}\n",
		"throughput:\n  - {model: resnet50, device: a100-sxm4-80gb, devices: 1, precision: fp16, v0: 2180, t: 0 s, r2: 1, points: 2}\n")
	own, err := Load("tsubame3-resnet50-caffe2-verbs", Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Load("tsubame3-resnet50-caffe2-verbs", Options{Calibrations: files})
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Calibration; r.CalibratedBy != files[0].Path || c == nil || c.V0 != 150 || float64(c.T) != 0.005 || own.CalibratedBy != "" {
		t.Errorf("calibrated by %q: %+v", r.CalibratedBy, c)
	}
	r, err = Load("tsubame3-resnet50-caffe2-verbs", Options{Calibrations: files[1:]})
	if err != nil {
		t.Fatal(err)
	}
	if r.CalibratedBy != "" || (r.Calibration == nil) != (own.Calibration == nil) || (r.Calibration != nil && *r.Calibration != *own.Calibration) {
		t.Errorf("an A100 entry changed a P100 scenario: %q, %+v", r.CalibratedBy, r.Calibration)
	}
}

// TestCalibrationsUsed: of the two files, the P100's computes the P100
// scenario and passes; the A100's applies to nothing and is refused,
// naming what the scenario needed and what the file has; the published
// figures built in, which apply to no P100 either, are never refused.
func TestCalibrationsUsed(t *testing.T) {
	files := writeCalibrations(t,
		"throughput:\n  - {model: resnet50, device: p100-sxm2, devices: 1, precision: fp32, v0: 150, t: 5 ms, r2: 0.99, points: 3}\n",
		"throughput:\n  - {model: resnet50, device: a100-sxm4-80gb, devices: 1, precision: fp16, v0: 2180, t: 0 s, r2: 1, points: 2}\n")
	r, err := Load("tsubame3-resnet50-caffe2-verbs", Options{Calibrations: files})
	if err != nil {
		t.Fatal(err)
	}
	if err := CalibrationsUsed(files[:1], []*Resolved{r}); err != nil {
		t.Errorf("the P100's file: %v", err)
	}
	want := "calibration " + files[1].Path + ": no throughput, comm, fabric or operators entry applies to the scenario (it needs resnet50 on p100-sxm2 at fp32 on system tsubame3; the file has: resnet50 on 1 a100-sxm4-80gb, fp16)"
	if err := CalibrationsUsed(files, []*Resolved{r, r}); err == nil || !strings.Contains(err.Error(), "any of the 2 scenarios (they need resnet50 on p100-sxm2 at fp32 on system tsubame3;") {
		t.Errorf("two scenarios, the A100's file: %v", err)
	}
	if err := CalibrationsUsed(files[1:], []*Resolved{r}); err == nil || err.Error() != want {
		t.Errorf("the A100's file: %v, want %q", err, want)
	}
	published, err := ReadCalibrationFiles([]string{Published})
	if err != nil {
		t.Fatal(err)
	}
	if err := CalibrationsUsed(published, []*Resolved{r}); err != nil {
		t.Errorf("published: %v", err)
	}
}

func TestSampleApplies(t *testing.T) {
	for _, tc := range []struct {
		label string
		unit  model.SampleUnit
		want  bool
	}{
		{"", model.Token, true},
		{"", "", true},
		{"sentence-pair", model.Token, false},
		{"sentence-pair", model.Sentence, true},
		{"sentence", model.Sentence, true},
		{"token-pair", model.Token, true},
		{"token", model.Sentence, false},
		{"image", "", true},
		{"image", model.Token, false},
		{"frame", model.Image, false},
	} {
		if got := SampleApplies(tc.label, tc.unit); got != tc.want {
			t.Errorf("SampleApplies(%q, %q) = %v, want %v", tc.label, tc.unit, got, tc.want)
		}
	}
}

// Every precision a measurement may name applies to exactly one of the
// catalogue's, and any other name to none.
func TestMeasuredPrecisionNames(t *testing.T) {
	want := map[string]string{"fp64": "fp64", "fp32": "fp32", "tf32": "tf32", "fp16": "fp16", "bf16": "bf16",
		"amp-fp16": "fp16", "amp": "fp16", "amp-bf16": "bf16"}
	names := MeasuredPrecisionNames()
	if len(names) != len(want) {
		t.Errorf("MeasuredPrecisionNames() = %q, want the %d of %v", names, len(want), want)
	}
	for _, m := range append(names, "fp8", "int8", "AMP") {
		var applies []string
		for _, p := range hw.Precisions {
			if PrecisionApplies(m, string(p)) {
				applies = append(applies, string(p))
			}
		}
		if w, ok := want[m]; ok && (len(applies) != 1 || applies[0] != w) || !ok && len(applies) != 0 {
			t.Errorf("%q applies to %q, want %q", m, applies, want[m])
		}
	}
}
