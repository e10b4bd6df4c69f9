package compute

import (
	"math"
	"testing"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
)

// someEff are efficiencies unlike the defaults, for the tests.
func someEff() *Efficiencies {
	e := &Efficiencies{Launch: 17 * units.Microsecond, StepHost: 300 * units.Microsecond, KernelTime: 2 * units.Microsecond}
	for i, k := range Classes {
		e.Set(k, 0.3+0.08*float64(i))
	}
	return e
}

// TestProfileMatchesStep checks that a Profile's time under efficiencies
// is Step's compute time under the same efficiencies, for models of every
// class, every precision, both layouts, fused attention and autocast with
// its scaler and an optimizer's host (BertAdam's, with the loss read, for
// the Transformer).
func TestProfileMatchesStep(t *testing.T) {
	d := builtin(t, "h100-sxm5-80gb")
	for _, name := range []string{"resnet50", "efficientnet-b4", "transformer-base", "mlp", "cnn", "gpt3-125m"} {
		for _, p := range []hw.Precision{hw.FP32, hw.TF32, hw.FP16, hw.BF16} {
			for _, v := range []struct{ nchw, amp bool }{{false, false}, {true, false}, {true, true}} {
				nchw := v.nchw
				c := Config{Device: d, Precision: p, Mode: Eager, NCHW: nchw}
				if v.amp { // autocast's float32 operators and casts, the scaler's sync, Adam's host
					c.Autocast, c.GradScaler, c.Optimizer = true, p == hw.FP16, model.Adam
					if name == "transformer-base" { // BertAdam's host, the loss read
						c.Optimizer, c.LossSync = model.BertAdam, true
					}
				}
				if tr, err := model.LookupTransformer(name); err == nil {
					c.FusedAttention = tr.FusedAttention
				}
				ops, err := model.Ops(name, model.Shape{Batch: 8, Precision: storage(p)})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				prof, err := NewProfile(c, ops)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range []*Efficiencies{nil, someEff()} {
					c.Eff = e
					s, err := Step(&c, ops)
					if err != nil {
						t.Fatal(err)
					}
					if got, want := float64(prof.Time(e)), float64(s.Compute()); math.Abs(got-want) > 1e-9*want {
						t.Errorf("%s %s nchw=%v amp=%v eff=%v: profile %g s, step %g s", name, p, nchw, v.amp, e != nil, got, want)
					}
				}
			}
		}
	}
}

// TestCarryTwiceResources checks Habitat's scaling in closed form: on a
// device with twice every peak, twice the memory bandwidth and twice the
// SMs, an operator's time under the same efficiencies is half, for a
// product whose tiles fill whole waves on both (264 tiles: two waves of
// 132, one of 264), a memory-bound operator and a grouped convolution.
func TestCarryTwiceResources(t *testing.T) {
	a := *builtin(t, "h100-sxm5-80gb")
	b := a
	b.Name, b.SMs, b.MemoryBandwidth = "twice", 2*a.SMs, 2*a.MemoryBandwidth
	pk := a.Peak
	b.Peak = hw.Peak{FP64: 2 * pk.FP64, FP32: 2 * pk.FP32, TF32: 2 * pk.TF32, FP16: 2 * pk.FP16, BF16: 2 * pk.BF16}
	ops := []model.Op{
		{Kind: model.MatMul, FLOPs: 2 * 128 * 264 * 128 * 4096, M: 128 * 264, N: 128, K: 4096, Groups: 1, Read: 1 << 20, Write: 1 << 20},
		{Kind: model.Elementwise, FLOPs: 1e6, Read: 1 << 28, Write: 1 << 28},
		{Kind: model.GroupedConv, FLOPs: 1e12, Read: 1 << 20, Write: 1 << 20},
	}
	e := someEff()
	for _, p := range []hw.Precision{hw.FP16, hw.FP32} {
		for i := range ops {
			ta, err := OpTime(&Config{Device: &a, Precision: p, Eff: e}, &ops[i])
			if err != nil {
				t.Fatal(err)
			}
			tb, err := OpTime(&Config{Device: &b, Precision: p, Eff: e}, &ops[i])
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(float64(tb)/float64(ta)-0.5) > 1e-12 {
				t.Errorf("%s op %d: %v on the device twice as fast, %v on the other: want half", p, i, tb, ta)
			}
		}
	}
	// The product's time from the constants by hand on a: FLOPs/(peak·e).
	want := ops[0].FLOPs / (float64(a.PeakFLOPs(hw.FP16)) * e.Of(TensorFP16))
	if got, _ := OpTime(&Config{Device: &a, Precision: hw.FP16, Eff: e}, &ops[0]); math.Abs(float64(got)/want-1) > 1e-12 {
		t.Errorf("product: %v, want %v s", got, want)
	}
}

// TestEfficienciesDefaults checks that the zero Efficiencies is the
// uncalibrated model and that ParseClass knows every class.
func TestEfficienciesDefaults(t *testing.T) {
	if len(Classes) != numClasses {
		t.Fatalf("%d classes, numClasses %d", len(Classes), numClasses)
	}
	var e *Efficiencies
	for _, k := range Classes {
		if got := e.Of(k); got != DefaultEfficiency(k) || got <= 0 {
			t.Errorf("%s: %v", k, got)
		}
		if c, err := ParseClass(string(k)); err != nil || c != k {
			t.Errorf("ParseClass(%s) = %v, %v", k, c, err)
		}
	}
	if e.Of(MemoryBound) != EffMemory || e.Of(Flash) != EffFlash || e.Of(TensorTF32) != EffGEMM {
		t.Error("defaults are not the published constants")
	}
	if _, err := ParseClass("tensor-fp8"); err == nil {
		t.Error("ParseClass(tensor-fp8): no error")
	}
	c := Config{Mode: Compiled}
	if c.launch() != LaunchKernel {
		t.Errorf("launch %v, want %v", c.launch(), LaunchKernel)
	}
}

// TestStepHostOverlapped checks that a calibration's host cost per step
// is host time, overlapped with the device once: with a StepHost far
// above the device's time the step is the host's time in closed form,
// StepHost plus each forward operator's kernels at the calibrated launch
// cost, module call and autograd record, plus each backward operator's
// kernels; with none, the device's time when the device decides.
func TestStepHostOverlapped(t *testing.T) {
	d := builtin(t, "h100-sxm5-80gb")
	ops, err := model.Ops("resnet50", model.Shape{Batch: 256, Precision: model.FP16})
	if err != nil {
		t.Fatal(err)
	}
	e := &Efficiencies{Launch: 7 * units.Microsecond, StepHost: 10}
	c := Config{Device: d, Precision: hw.FP16, Mode: Eager, Eff: e}
	want := float64(e.StepHost)
	for i := range ops {
		switch ops[i].Pass {
		case model.Forward:
			want += float64(units.Seconds(c.Kernels(&ops[i]))*e.Launch + MeasuredHost.ModuleCall + MeasuredHost.AutogradRecord)
		case model.Backward:
			want += float64(units.Seconds(c.Kernels(&ops[i])) * e.Launch)
		}
	}
	s, err := Step(&c, ops)
	if err != nil {
		t.Fatal(err)
	}
	if got := float64(s.Compute()); math.Abs(got-want) > 1e-9*want {
		t.Errorf("host-bound step: %g s, want %g s", got, want)
	}
	c.Eff = &Efficiencies{Launch: e.Launch}
	if s, err = Step(&c, ops); err != nil {
		t.Fatal(err)
	}
	if dev := s.DeviceForward + s.DeviceBackward; s.Host.Total() >= dev || s.Compute() != dev {
		t.Errorf("device-bound step: %v s, want the device's %v s (host %v s)", s.Compute(), dev, s.Host.Total())
	}
}

// TestLibraryLaunch checks the host's closed form for an NCHW tensor-core
// convolution, which runs as one dispatched operator and two transposes
// that cuDNN launches inside it: calibrated, launch + 2·LaunchKernel a
// pass (the forward adding its module call and autograd record);
// uncalibrated, the mode's launch for each of the three kernels.
func TestLibraryLaunch(t *testing.T) {
	conv := model.Op{Kind: model.Conv, FLOPs: 1e6, M: 64, N: 64, K: 64, Groups: 1, Read: 1e4, Write: 1e4}
	fwd, bwd := conv, conv
	fwd.Pass, bwd.Pass = model.Forward, model.Backward
	ops := []model.Op{fwd, bwd}
	module := float64(MeasuredHost.ModuleCall + MeasuredHost.AutogradRecord)
	const l = 20e-6
	for _, c := range []struct {
		name     string
		eff      *Efficiencies
		nchw     bool
		fwd, bwd float64
	}{
		{"calibrated NCHW", &Efficiencies{Launch: l}, true, l + 2*0.9e-6 + module, l + 2*0.9e-6},
		{"calibrated NHWC", &Efficiencies{Launch: l}, false, l + module, l},
		{"uncalibrated NCHW", nil, true, 3*4.2e-6 + module, 3 * 4.2e-6},
	} {
		s, err := Step(&Config{Device: toy(), Precision: hw.FP16, Mode: Eager, NCHW: c.nchw, Eff: c.eff}, ops)
		if err != nil {
			t.Fatal(err)
		}
		near(t, c.name+" host forward", float64(s.Host.Forward), c.fwd)
		near(t, c.name+" host backward", float64(s.Host.Backward), c.bwd)
		near(t, c.name+" launches", float64(s.Launch), c.fwd+c.bwd-module)
	}
}

// TestKernelTime checks that a calibration's KernelTime adds to the
// device's time of a step exactly its kernels times it, in place of eager
// mode's published KernelTime, which adds its own the same way: every
// forward and backward operator's kernels (model.Op.KernelCount, three
// for an NCHW tensor-core convolution, two for a float32 operator under
// autocast) and autocast's casts of the weights, one per parameter tensor
// of a product or convolution in each pass.
func TestKernelTime(t *testing.T) {
	d := builtin(t, "h100-sxm5-80gb")
	ops, err := model.Ops("resnet50", model.Shape{Batch: 32, Precision: model.FP16})
	if err != nil {
		t.Fatal(err)
	}
	kernels := 0
	for i := range ops {
		o := &ops[i]
		switch {
		case o.Pass == model.UpdatePass:
			continue
		case o.Kind == model.Conv:
			kernels += 3
		case o.Float32:
			kernels += 2
		default:
			kernels += o.KernelCount()
		}
		if o.Pass == model.Forward && (o.Kind == model.Conv || o.Kind == model.MatMul || o.Kind == model.GroupedConv) {
			kernels += 2 * o.ParamTensors()
		}
	}
	const kt = 3 * units.Microsecond
	base := Efficiencies{Launch: units.Microsecond}
	with := base
	with.KernelTime = kt
	two := base
	two.KernelTime = 2 * kt
	dev := func(e *Efficiencies) float64 {
		c := Config{Device: d, Precision: hw.FP16, Mode: Eager, NCHW: true, Autocast: true, Eff: e}
		s, err := Step(&c, ops)
		if err != nil {
			t.Fatal(err)
		}
		return float64(s.DeviceForward + s.DeviceBackward)
	}
	near(t, "added device time (s)", dev(&two)-dev(&with), float64(kt)*float64(kernels))
	near(t, "published kernel time over a calibrated one (s)", dev(&base)-dev(&with), float64(KernelTime-kt)*float64(kernels))
}

// BenchmarkProfileTime is one evaluation of a fit's objective: the
// compute time of a Profile of EfficientNet-B4 at batch 64 under AMP with
// the scaler and Adam on an H100, under efficiencies unlike the defaults.
func BenchmarkProfileTime(b *testing.B) {
	c := Config{Device: builtin(b, "h100-sxm5-80gb"), Precision: hw.FP16, Mode: Eager, NCHW: true,
		Autocast: true, GradScaler: true, Optimizer: model.Adam}
	ops, err := model.Ops("efficientnet-b4", model.Shape{Batch: 64, Precision: model.FP16})
	if err != nil {
		b.Fatal(err)
	}
	prof, err := NewProfile(c, ops)
	if err != nil {
		b.Fatal(err)
	}
	e := someEff()
	for b.Loop() {
		prof.Time(e)
	}
}
