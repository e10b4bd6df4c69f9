package compute

import (
	"testing"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
)

// TestLoaderHost checks the closed forms of an input loader in the
// training process (Config.LoaderHost): without a synchronisation at the
// step's end its b·L joins the host's time after the last launch and
// hides behind a longer device pass (max(H + b·L, D)); with the gradient
// scaler's it follows the device (D + H_opt + b·L); and a host whose
// loading outlasts the device decides the step.
func TestLoaderHost(t *testing.T) {
	ops := paramOps()
	dev := 2/Quantisation(12800, 1000, 1000, 1, 100) + 2*float64(KernelTime) // paramOps' two 1/q s products, a kernel each
	c := &Config{Device: toy(), Precision: hw.FP16, Mode: Eager, Optimizer: model.Momentum}
	base, err := Step(c, ops)
	if err != nil {
		t.Fatal(err)
	}
	const b, per = 12, 5 * units.Millisecond
	c.loaderStep = b * per
	s, _ := Step(c, ops)
	near(t, "loader host", float64(s.Host.Loader), b*5e-3)
	near(t, "no sync: hidden behind the device", float64(s.Compute()), dev)
	near(t, "host total", float64(s.Host.Total()-base.Host.Total()), b*5e-3)

	c.GradScaler = true
	base, _ = Step(&Config{Device: toy(), Precision: hw.FP16, Mode: Eager, Optimizer: model.Momentum, GradScaler: true}, ops)
	s, _ = Step(c, ops)
	near(t, "sync: after the device", float64(s.Compute()-base.Compute()), b*5e-3)

	c.GradScaler, c.loaderStep = false, 2*units.Seconds(dev) // loading longer than the device
	s, _ = Step(c, ops)
	h := s.Host.Forward + s.Host.Backward + s.Host.Scaler + s.Host.Optimizer
	near(t, "no sync, loader longer: host decides", float64(s.Compute()), float64(h)+2*dev)

	c.loaderStep = 0
	c.LoaderHost = -1
	if _, err := Step(c, ops); err == nil {
		t.Error("a negative loader time: want an error")
	}
}

// TestLoaderLaw checks that LawAt charges LoaderHost per sample: under
// the gradient scaler's synchronisation each sample's law grows by it
// exactly and the fixed part stays.
func TestLoaderLaw(t *testing.T) {
	cat, err := hw.Default()
	if err != nil {
		t.Fatal(err)
	}
	a := cat.Devices["a100-sxm4-80gb"]
	if a == nil {
		t.Fatal("catalogue: no a100-sxm4-80gb")
	}
	c := Config{Device: a, Precision: hw.FP16, Mode: Eager, Autocast: true, GradScaler: true, Optimizer: model.Momentum}
	l0, err := LawAt(c, "maskrcnn-r50-fpn", 2)
	if err != nil {
		t.Fatal(err)
	}
	c.LoaderHost = model.HybridLoadHost
	l1, err := LawAt(c, "maskrcnn-r50-fpn", 2)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "per sample", float64(l1.PerSample-l0.PerSample), float64(model.HybridLoadHost))
	near(t, "fixed", float64(l1.Fixed), float64(l0.Fixed))
}

// TestHostCallsTime checks the eager host's time of counted calls: 10
// CPU calls at the measured 0.729 µs (torch-host.csv's dispatch), 2
// kernels at pytorch/pytorch#32194's 3.3 µs dispatch and the CUDA graphs
// blog's 0.9 µs launch, and a sync at the blog's 5.8 µs; on a measured
// host (HostCosts.CallsTime), at its table's figures.
func TestHostCallsTime(t *testing.T) {
	got := HostCallsTime(model.HostCalls{CPU: 10, Kernels: 2, Syncs: 1})
	near(t, "host calls", float64(got), 10*0.729e-6+2*4.2e-6+5.8e-6)
	if HostCallsTime(model.HostCalls{}) != 0 {
		t.Error("no calls: want no time")
	}
	// A host whose table measured 2 µs a CPU operator, 35 µs a kernel
	// and 20 µs a synchronisation.
	h := &HostCosts{CPUOp: 2e-6, Kernel: 35e-6, Sync: 20e-6}
	near(t, "measured host's calls", float64(h.CallsTime(model.HostCalls{CPU: 10, Kernels: 2, Syncs: 1})), 10*2e-6+2*35e-6+20e-6)
}
