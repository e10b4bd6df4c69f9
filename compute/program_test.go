package compute

import (
	"testing"

	"scaleplan/hw"
	"scaleplan/model"
)

// TestBertAdamHost checks BertAdam's host time on bert-base-squad against
// the tensors counted by hand from DeepLearningExamples' modeling.py and
// run_squad.py's no_decay list: in the weight-decay group the three
// embedding tables, six weights a layer (query, key, value, the attention
// output, the two feed-forward layers) and the span head's, 3 + 72 + 1 =
// 76; in the other the embedding LayerNorm's two, per layer six biases
// and two LayerNorms' four, and the span head's bias, 2 + 120 + 1 = 123;
// 19 and 17 kernels each (model.BertAdamKernels), 3.3 + 0.9 µs a kernel,
// or the 35 µs a kernel of a host whose table measures it (HostCosts.Kernel).
func TestBertAdamHost(t *testing.T) {
	ops, err := model.Ops("bert-base-squad", model.Shape{Batch: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := float64(76*19+123*17) * (3.3e-6 + 0.9e-6)
	near(t, "bertadam host", float64((&Config{}).bertAdamHost(bertAdamKernels(ops))), want)
	slow := &Config{Host: &HostCosts{Kernel: 35e-6}}
	near(t, "bertadam host at 35 µs a kernel", float64(slow.bertAdamHost(bertAdamKernels(ops))), float64(76*19+123*17)*35e-6)
	c := &Config{Device: toy(), Precision: hw.FP32, Mode: Eager, Optimizer: model.BertAdam}
	s, err := Step(c, ops)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "step's optimizer host", float64(s.Host.Optimizer), want)
}

// TestClipNorm checks GradientClipper's host time and its wait: the
// norm's multi-tensor launch (2 tensors, one launch) and reduction before
// the host reads it, the scale's launch after, each call dispatched once;
// the optimizer's host time then follows the device's.
func TestClipNorm(t *testing.T) {
	ops := paramOps()
	q := Quantisation(12800, 1000, 1000, 1, 100)
	dev := 2/q + 2*float64(KernelTime)
	opt := 4*(3.3e-6+0.9e-6) + 2*1.815e-6 // momentum SGD, as TestOverlapSync
	before, after := 3.3e-6+2*0.9e-6, 3.3e-6+0.9e-6
	c := &Config{Device: toy(), Precision: hw.FP16, Mode: Eager, Optimizer: model.Momentum, ClipNorm: true}
	s, err := Step(c, ops)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Sync {
		t.Error("a clipped step: want Sync")
	}
	near(t, "clip before the read", float64(s.Host.Scaler), before)
	near(t, "clip after, then the optimizer", float64(s.Host.Optimizer), opt+after)
	near(t, "device, then the optimizer", float64(s.Compute()), dev+opt+after)
}
