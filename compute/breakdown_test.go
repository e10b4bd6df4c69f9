package compute

import (
	"math"
	"testing"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
)

// TestKindTimesClosedForm checks KindTimes on the toy device (1 TB/s,
// 10 TFLOP/s fp32, 100 TFLOP/s fp16) under autocast at fp16 against the
// roofline by hand: an elementwise operator moving 2 GB at EffMemory of
// the bandwidth; a norm autocast runs in float32, twice its 16-bit bytes,
// its input's cast (3 × its Write) counted as a cast; a convolution of
// 2·M·N·K FLOPs on full waves at EffGEMM of the fp16 peak, whose weight
// (K·N values) autocast casts once a pass each way (6 bytes a value); an
// update left out. Each kernel adds eager mode's KernelTime: one each for
// the elementwise operator, the norm and the convolution, three casts.
func TestKindTimesClosedForm(t *testing.T) {
	bw := 1e12 * EffMemory
	const m, n, k = 128 * 100, 128, 1024
	ops := []model.Op{
		{Kind: model.Elementwise, Pass: model.Forward, Read: 1e9, Write: 1e9, FLOPs: 1e6},
		{Kind: model.Norm, Pass: model.Backward, Read: 3e8, Write: 1e8, FLOPs: 1e6, Float32: true},
		{Kind: model.Conv, Pass: model.Forward, M: m, N: n, K: k, FLOPs: 2 * m * n * k, Read: 1e3, Write: 1e3, Params: k * n},
		{Kind: model.Update, Pass: model.UpdatePass, Read: 1e9, Write: 1e9},
	}
	c := &Config{Device: toy(), Precision: hw.FP16, Autocast: true}
	got, err := KindTimes(c, ops)
	if err != nil {
		t.Fatal(err)
	}
	roof := map[model.OpKind]float64{
		model.Elementwise: 2e9 / bw,
		model.Norm:        2 * 4e8 / bw,
		model.Conv:        2 * m * n * k / (100e12 * EffGEMM),
		CastKind:          3e8/bw + 2*6*k*n/bw,
	}
	kernels := map[model.OpKind]float64{model.Elementwise: 1, model.Norm: 1, model.Conv: 1, CastKind: 3}
	if len(got) != len(roof) {
		t.Errorf("kinds %v, want %v", got, roof)
	}
	for kind, w := range roof {
		near(t, string(kind)+" (s)", float64(got[kind]), w+kernels[kind]*float64(KernelTime))
	}
	// A calibration's time per kernel takes KernelTime's place in each
	// kernel of its kind: the norm's and its cast's one each, the
	// weight's two casts.
	cal := *c
	cal.Eff = &Efficiencies{KernelTime: 1e-6}
	got2, err := KindTimes(&cal, ops)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "norm with kernel time (s)", float64(got2[model.Norm]), roof[model.Norm]+1e-6)
	near(t, "casts with kernel time (s)", float64(got2[CastKind]), roof[CastKind]+3e-6)
	if _, err := KindTimes(&Config{Device: &hw.Device{Name: "cpu"}, Precision: hw.FP32}, ops); err == nil {
		t.Error("a device without SMs: no error")
	}
}

// TestKindTimesAddUp checks that KindTimes splits Step's device time of
// the passes without loss, on EfficientNet-B4 as DeepLearningExamples ran
// it: PyTorch AMP in channels_last (autocast, the scaler), TF32 in NCHW,
// TensorFlow with XLA, and under a calibration's kernel time.
func TestKindTimesAddUp(t *testing.T) {
	a100 := catalogued(t, "a100-sxm4-80gb")
	for _, c := range []Config{
		{Device: a100, Precision: hw.FP16, Autocast: true, GradScaler: true, Optimizer: model.Momentum},
		{Device: a100, Precision: hw.TF32, NCHW: true, Optimizer: model.Momentum},
		{Device: a100, Precision: hw.TF32, Mode: Compiled, Framework: "tensorflow"},
		{Device: a100, Precision: hw.FP16, Autocast: true, Eff: &Efficiencies{KernelTime: 2e-6}},
	} {
		ops, err := model.Ops("efficientnet-b4", model.Shape{Batch: 16, Precision: storage(c.Precision), Framework: c.Framework, Fused: c.Mode == Compiled})
		if err != nil {
			t.Fatal(err)
		}
		kinds, err := KindTimes(&c, ops)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Step(&c, ops)
		if err != nil {
			t.Fatal(err)
		}
		var sum units.Seconds
		for _, v := range kinds {
			sum += v
		}
		if want := s.DeviceForward + s.DeviceBackward; math.Abs(float64(sum-want)) > 1e-9*float64(want) {
			t.Errorf("%s %s: kinds add up to %v s, want the passes' %v s", c.Precision, c.Mode, sum, want)
		}
	}
}

// TestEfficientNetA100OverV100 checks where the operator model puts
// EfficientNet-B4's gain from a V100 to an A100-80GB in PyTorch AMP and
// channels_last (DeepLearningExamples' rows, batch 32 and 128 a GPU): every
// memory-bound kind, the depthwise convolutions (cuDNN's, at EffDepthwise
// of the bandwidth) with them, takes the datasheets' bandwidth ratio,
// 2,039/900 GB/s, less time an image (within 0.1 %: a few of their
// operators are bound by the fp32 peaks, 19.5/15.7); the dense
// convolutions gain less, the peaks' and measured efficiencies' ratio,
// 312·0.415 / (125·0.701) = 1.48 on full waves, times the better waves of
// the A100's larger batch. The kinds' times are their operators' alone,
// the time per kernel taken out: twice the times at a calibrated 1 µs a
// kernel less those at 2 µs.
func TestEfficientNetA100OverV100(t *testing.T) {
	perImage := func(dev string, b int) map[model.OpKind]float64 {
		ops, err := model.Ops("efficientnet-b4", model.Shape{Batch: b, Precision: model.FP16})
		if err != nil {
			t.Fatal(err)
		}
		at := func(k units.Seconds) map[model.OpKind]units.Seconds {
			c := &Config{Device: catalogued(t, dev), Precision: hw.FP16, Autocast: true, GradScaler: true, Optimizer: model.Momentum,
				Eff: &Efficiencies{KernelTime: k}}
			kinds, err := KindTimes(c, ops)
			if err != nil {
				t.Fatal(err)
			}
			return kinds
		}
		one, two := at(units.Microsecond), at(2*units.Microsecond)
		out := map[model.OpKind]float64{}
		for k, v := range one {
			out[k] = float64(2*v-two[k]) / float64(b)
		}
		return out
	}
	v, a := perImage("v100-sxm2-16gb", 32), perImage("a100-sxm4-80gb", 128)
	const bw = 2039.0 / 900
	for _, k := range []model.OpKind{model.Elementwise, model.Norm, model.Pool, model.GroupedConv} {
		if v[k] <= 0 {
			t.Fatalf("%s: no time on the V100", k)
		}
		if r := v[k] / a[k]; math.Abs(r/bw-1) > 1e-3 {
			t.Errorf("%s V100/A100 an image = %.5f, want %.5f", k, r, bw)
		}
	}
	if r := v[model.Conv] / a[model.Conv]; r < 312*0.415/(125*0.701) || r >= bw {
		t.Errorf("conv V100/A100 an image = %.3f, want at least %.3f and below %.3f", r, 312*0.415/(125*0.701), bw)
	}
}

// catalogued returns the catalogue's device called name.
func catalogued(t *testing.T, name string) *hw.Device {
	t.Helper()
	cat, err := hw.Load()
	if err != nil {
		t.Fatal(err)
	}
	d, err := cat.Device(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
