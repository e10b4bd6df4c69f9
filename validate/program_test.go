package validate

import (
	"math"
	"strings"
	"testing"

	"scaleplan/hw"
	"scaleplan/model"
	"scaleplan/predict"
)

// TestProgramLabels checks the amp, clip, steps_counted and steps_timed
// columns: read into Measured, and refused with the valid values named.
func TestProgramLabels(t *testing.T) {
	var m Measured
	err := programLabels(&m, map[string]string{"amp": "apex-o2", "clip": "global-norm", "steps_counted": "100", "steps_timed": "101"})
	if err != nil || m.AMP != AMPApexO2 || !m.ClipNorm || m.StepsCounted != 100 || m.StepsTimed != 101 {
		t.Errorf("%+v, %v: want apex-o2, clipped, 100 of 101 steps", m, err)
	}
	if got, want := m.timedShare(), 1.01; math.Abs(got-want) > 1e-15 {
		t.Errorf("timed share %v, want %v", got, want)
	}
	for labels, want := range map[[2]string]string{
		{"amp", "o3"}:          "want apex-o2 or autocast",
		{"clip", "yes"}:        "want global-norm or none",
		{"steps_counted", "0"}: "at least 1",
		{"steps_timed", "101"}: "give both or neither",
	} {
		var m Measured
		err := programLabels(&m, map[string]string{labels[0]: labels[1]})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s %q: %v, want %q", labels[0], labels[1], err, want)
		}
	}
}

// TestApexO2 checks what apex's O2 changes in a PyTorch row of amp-fp16:
// no autocast (a fp16 model), the loss scaler's wait, fp16 gradients
// exchanged (2 bytes against autocast's 4), and the bytes per parameter
// around the optimizer: the unscaling (2 + 4), the master weights' read
// for the copy into the model (4) and the clip's read, read and write of
// the fp32 master gradients (12).
func TestApexO2(t *testing.T) {
	d := &hw.Device{Name: "d", SMs: 1}
	ms := &Measured{Framework: "torch", Precision: "amp-fp16", AMP: AMPApexO2, ClipNorm: true, Optimizer: model.FusedAdam}
	c := measuredCompute(ms, d, hw.FP16, model.FusedAdam, 0)
	if c.Autocast || !c.GradScaler || !c.ClipNorm {
		t.Errorf("autocast %v, scaler %v, clip %v: want false, true, true", c.Autocast, c.GradScaler, c.ClipNorm)
	}
	if got := gradientBytes(ms, hw.FP16, model.FP16); got != 2 {
		t.Errorf("apex O2: %v bytes a gradient, want 2", got)
	}
	if got := gradientBytes(&Measured{Framework: "torch", Precision: "amp-fp16"}, hw.FP16, model.FP16); got != 4 {
		t.Errorf("autocast: %v bytes a gradient, want 4", got)
	}
	if got := programUpdateBytes(ms, model.FP16, model.FP32); got != 2+4+4+12 {
		t.Errorf("apex O2 with clipping: %v bytes a parameter, want 22", got)
	}
	if got := programUpdateBytes(&Measured{ClipNorm: true}, model.FP32, model.FP32); got != 12 {
		t.Errorf("fp32 with clipping: %v bytes a parameter, want 12", got)
	}
}

// TestTimedSteps checks that a row whose timed region ran 101 steps for
// the 100 its throughput counts is predicted 100/101 of the same row
// without the columns.
func TestTimedSteps(t *testing.T) {
	cat, prof := defaults(t)
	row := Measured{Device: "a100-sxm4-80gb", Model: "bert-base-squad", Precision: "tf32", Batch: 32, SeqLen: 384,
		SamplesPerSec: 100, Framework: "torch", Optimizer: model.BertAdam}
	timed := row
	timed.StepsCounted, timed.StepsTimed = 100, 101
	rep, err := CompareMeasured([]Measured{row, timed}, cat, prof, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows := rep.Groups[0].Rows
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2 in one group", len(rows))
	}
	if got, want := rows[1].Predicted, rows[0].Predicted*100/101; math.Abs(got-want) > 1e-9*want {
		t.Errorf("timed 101 of 100 steps: %v samples/s, want %v", got, want)
	}
}

// TestHybridLoader checks the loader column: hybrid on a PyTorch Mask
// R-CNN row charges model.HybridLoadHost and model.HybridTargets' calls per
// image to the step (compute.Config.LoaderHost), and is refused on another model or
// framework and for another value, the valid ones named.
func TestHybridLoader(t *testing.T) {
	m := Measured{Model: "maskrcnn-r50-fpn", Framework: "torch"}
	if err := programLabels(&m, map[string]string{"loader": "hybrid"}); err != nil || m.Loader != LoaderHybrid {
		t.Fatalf("%+v, %v: want the hybrid loader", m, err)
	}
	c := measuredCompute(&m, &hw.Device{Name: "d", SMs: 1}, hw.TF32, model.Momentum, 0)
	// The decode, 1.378 ms, and the targets' calls at the eager host's
	// figures: 133.05 CPU calls at 0.729 µs, 20.5 kernels at 3.3 + 0.9 µs
	// and 4 stream syncs at 5.8 µs (model.HybridTargets' hand count).
	want := 1.378e-3 + 133.05*0.729e-6 + 20.5*4.2e-6 + 4*5.8e-6
	if got := float64(c.LoaderHost); math.Abs(got/want-1) > 1e-9 {
		t.Errorf("loader host %v s, want %v s", got, want)
	}
	if c := measuredCompute(&Measured{Model: "maskrcnn-r50-fpn", Framework: "torch"}, &hw.Device{Name: "d", SMs: 1}, hw.TF32, model.Momentum, 0); c.LoaderHost != 0 {
		t.Errorf("no loader column: loader host %v, want 0", c.LoaderHost)
	}
	for _, c := range []struct {
		m         Measured
		loader    string
		wantError string
	}{
		{Measured{Model: "resnet50", Framework: "torch"}, "hybrid", "not a torch row of resnet50"},
		{Measured{Model: "maskrcnn-r50-fpn", Framework: "tensorflow"}, "hybrid", "not a tensorflow row"},
		{Measured{Model: "maskrcnn-r50-fpn", Framework: "torch"}, "dali", "want hybrid or none"},
	} {
		if err := programLabels(&c.m, map[string]string{"loader": c.loader}); err == nil || !strings.Contains(err.Error(), c.wantError) {
			t.Errorf("%s row of %s, loader %s: %v, want %q", c.m.Framework, c.m.Model, c.loader, err, c.wantError)
		}
	}
}

// TestHybridLoaderStep decomposes the predicted step of a PyTorch Mask
// R-CNN row in AMP on one A100 at 12 images: with the hybrid loader it is
// the step without it plus 12 images' loading, the decode (1.378 ms) and
// the targets' calls (133.05 CPU calls at 0.729 µs, 20.5 kernels at 4.2
// µs, 4 syncs at 5.8 µs), in full since GradScaler's wait puts the loader
// after the device; a row without the loader column (the V100 FP32 rows')
// has neither.
func TestHybridLoaderStep(t *testing.T) {
	cat, prof := defaults(t)
	step := func(loader string) float64 {
		m := Measured{Device: "a100-sxm4-80gb", Model: "maskrcnn-r50-fpn", Precision: "amp-fp16", Batch: 12, Devices: 1,
			Framework: "torch", SamplesPerSec: 24, Loader: loader}
		rep, err := CompareMeasured([]Measured{m}, cat, prof, predict.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return 12 / rep.Groups[0].Rows[0].Predicted
	}
	per := 1.378e-3 + 133.05*0.729e-6 + 20.5*4.2e-6 + 4*5.8e-6
	if got, want := step(LoaderHybrid)-step(""), 12*per; math.Abs(got/want-1) > 1e-6 {
		t.Errorf("hybrid loader adds %.4g s a step, want 12 × %.4g s = %.4g s", got, per, want)
	}
}

// TestFuseLabel checks the fuse column: bn-relu on a resnet50 row sets
// compute.Config.FuseBNReLU, nothing or none leaves it off, and another
// model or value is refused, the valid ones named.
func TestFuseLabel(t *testing.T) {
	m := Measured{Model: "resnet50", Framework: "mxnet"}
	if err := programLabels(&m, map[string]string{"fuse": "bn-relu"}); err != nil || !m.FuseBNReLU {
		t.Fatalf("%+v, %v: want the batch norms fused", m, err)
	}
	if c := measuredCompute(&m, &hw.Device{Name: "d", SMs: 1}, hw.FP16, model.Momentum, 0); !c.FuseBNReLU {
		t.Error("fuse bn-relu: compute.Config.FuseBNReLU false")
	}
	for _, v := range []string{"", "none"} {
		m := Measured{Model: "resnet50"}
		if err := programLabels(&m, map[string]string{"fuse": v}); err != nil || m.FuseBNReLU {
			t.Errorf("fuse %q: %+v, %v; want nothing fused", v, m, err)
		}
	}
	for _, c := range []struct {
		model, fuse, wantError string
	}{
		{"efficientnet-b4", "bn-relu", "fuse bn-relu: the batch norms of resnet50's generator, not of efficientnet-b4"},
		{"resnet50", "bn-add-relu", `fuse "bn-add-relu": want bn-relu or none (default)`},
	} {
		m := Measured{Model: c.model}
		if err := programLabels(&m, map[string]string{"fuse": c.fuse}); err == nil || err.Error() != c.wantError {
			t.Errorf("%s, fuse %q: %v; want %q", c.model, c.fuse, err, c.wantError)
		}
	}
}

// TestTorchOptimizerPasses checks the bytes per parameter a PyTorch
// program's torch.optim step moves beyond sim.UpdateBytesPerParam's one
// pass, by hand: AdamW under autocast in fp16 reads and writes 21 fp32
// values a parameter (84 bytes) where the one pass counts a 2-byte
// gradient, the fp32 weight read and written and two moments read and
// written, and the master copy's 2 (2 + 8 + 16 + 2 = 28), and GradScaler
// reads and writes the fp32 gradient (8): 64. Momentum SGD in fp32: 11
// values (44 bytes) against 4 + 8 + 8 = 20: 24. torch.optim's Adam under
// apex O2 with clipping (DeepLearningExamples' GNMT): Adam's 19 fp32
// values (76 bytes) against the one pass's 28, apex's unscaling (2 + 4)
// and master copy (4), the clip's 12, and no GradScaler: 70. Neither for
// another framework or for apex's fused Adam.
func TestTorchOptimizerPasses(t *testing.T) {
	for _, c := range []struct {
		what       string
		ms         Measured
		sp, master model.Precision
		want       float64
	}{
		{"torch AdamW amp-fp16", Measured{Framework: "torch", Precision: "amp-fp16", Optimizer: model.AdamW}, model.FP16, model.FP32, 84 - 28 + 8},
		{"torch momentum fp32", Measured{Framework: "torch", Precision: "fp32"}, model.FP32, model.FP32, 44 - 20},
		{"torch AdamW amp-bf16", Measured{Framework: "torch", Precision: "amp-bf16", Optimizer: model.AdamW}, model.BF16, model.FP32, 84 - 28},
		{"mxnet momentum fp32", Measured{Framework: "mxnet", Precision: "fp32"}, model.FP32, model.FP32, 0},
		{"torch fused Adam fp32", Measured{Framework: "torch", Precision: "fp32", Optimizer: model.FusedAdam}, model.FP32, model.FP32, 0},
		{"torch Adam under apex O2", Measured{Framework: "torch", Precision: "amp-fp16", Optimizer: model.Adam, AMP: AMPApexO2, ClipNorm: true}, model.FP16, model.FP32, 76 - 28 + 2 + 4 + 4 + 12},
	} {
		if got := programUpdateBytes(&c.ms, c.sp, c.master); got != c.want {
			t.Errorf("%s: %v bytes a parameter, want %v", c.what, got, c.want)
		}
	}
}

// TestDLEGNMTProgram checks how validate reads DeepLearningExamples' GNMT
// rows (docs/validation-gnmt.md): the global batch of 1,024 over 128
// pairs a GPU is 8 micro-batches a step on one GPU, 2 on four, 1 on
// eight (train.py's set_iter_size), and a mixed-precision row's update
// moves 98 bytes a parameter, by hand: apex's fused pass of Adam with
// fp16 gradients, fp32 master weights and moments and the fp16 copy
// (2 + 8 + 16 + 2 = 28), torch.optim's further passes (19·4 − 28 = 48),
// apex O2's unscaling and master copy (2 + 4 + 4) and the clip (12),
// over the device's memory bandwidth: 160,671,297 parameters, 17.5 ms
// on a V100.
func TestDLEGNMTProgram(t *testing.T) {
	cat, prof := defaults(t)
	ms := measuredFile(t, cat, prof, "../testdata/measurements/published-dle-gnmt.csv")
	if len(ms) != 12 {
		t.Fatalf("%d rows, want 12", len(ms))
	}
	m, err := prof.Model("gnmt")
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]int{1: 8, 4: 2, 8: 1}
	for i := range ms {
		r := &ms[i]
		if r.Accumulation != want[r.Devices] || r.Batch != 128 || r.SeqLen != 37 || r.Optimizer != model.Adam || !r.ClipNorm || !r.ZeroGrad {
			t.Errorf("%s: accumulation %d, batch %d, seq_len %d, optimizer %s, clip %v, zero_grad %v; want %d, 128, 37, adam, true, true",
				r.Source, r.Accumulation, r.Batch, r.SeqLen, r.Optimizer, r.ClipNorm, r.ZeroGrad, want[r.Devices])
		}
		if r.Precision != "amp-fp16" || r.Device != "v100-sxm2-16gb" {
			continue
		}
		if r.AMP != AMPApexO2 {
			t.Errorf("%s: amp %q, want apex-o2", r.Source, r.AMP)
		}
		d := cat.DeviceCalled(r.Device)
		got := float64(measuredUpdate(m, d, r, model.FP16, model.FP32))
		wantT := float64(m.Params) * 98 / float64(d.MemoryBandwidth)
		if m.Params != 160671297 || math.Abs(got/wantT-1) > 1e-12 || math.Abs(got-17.5e-3) > 0.05e-3 {
			t.Errorf("%s: update %.6g s of %d parameters, want %.6g s (98 bytes a parameter, 17.5 ms)", r.Source, got, m.Params, wantT)
		}
	}
}
