package compute

import (
	"testing"

	"scaleplan/hw"
	"scaleplan/model"
)

// TestZeroGrad checks ZeroGrad on bert-base-squad against counts by hand
// of BertForQuestionAnswering (DeepLearningExamples' modeling.py): 199
// parameter tensors (the three embedding tables and the embedding
// LayerNorm's two; per layer four projections, two feed-forward layers
// and two LayerNorms, 16; the span head's weight and bias) of
// 108,893,186 values. Per step: an in-place addition (reads the zeroed
// and the new gradient, writes the sum) and a zero_ per tensor, 4·g bytes
// a parameter at g bytes a gradient (2 for apex O2's fp16 model, 4 in
// fp32 or tf32 and under autocast), on the device's bandwidth at the
// memory-bound efficiency; the backward pass's host launches one kernel
// per tensor, the optimizer's a detach_ (3.3 µs, no kernel) and a zero_
// (3.3 + 0.9 µs).
func TestZeroGrad(t *testing.T) {
	const tensors, params = 199, 108893186
	ops, err := model.Ops("bert-base-squad", model.Shape{Batch: 1})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(paramSizes(ops)); n != tensors {
		t.Fatalf("%d parameter tensors, by hand %d", n, tensors)
	}
	for _, c := range []struct {
		name     string
		p        hw.Precision
		autocast bool
		grad     float64
	}{{"apex O2 fp16", hw.FP16, false, 2}, {"fp32", hw.FP32, false, 4}, {"autocast fp16", hw.FP16, true, 4}} {
		base := Config{Device: toy(), Precision: c.p, Mode: Eager, Autocast: c.autocast}
		zero := base
		zero.ZeroGrad = true
		s0, err := Step(&base, ops)
		if err != nil {
			t.Fatal(err)
		}
		s1, err := Step(&zero, ops)
		if err != nil {
			t.Fatal(err)
		}
		dev := 4*c.grad*params/(float64(toy().MemoryBandwidth)*base.eff(MemoryBound)) + zeroGradKernels*tensors*float64(KernelTime)
		near(t, c.name+": device", float64(s1.DeviceBackward-s0.DeviceBackward), dev)
		near(t, c.name+": backward host", float64(s1.Host.Backward-s0.Host.Backward), tensors*(3.3e-6+0.9e-6))
		near(t, c.name+": optimizer host", float64(s1.Host.Optimizer-s0.Host.Optimizer), tensors*(3.3e-6+3.3e-6+0.9e-6))
	}
}
