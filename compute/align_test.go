package compute

import (
	"testing"

	"scaleplan/hw"
	"scaleplan/model"
)

// TestMisaligned checks the misaligned products' slowdown against closed
// forms on the toy device with MisalignedGEMM 3: a product whose leading
// dimension is one value short of a 16-byte multiple covers the same tiles
// in proportion to its FLOPs (a K one short changes only the FLOPs), so
// only the slowdown tells the two apart. An odd number of 16-bit values
// takes OddGEMM 5 where the device gives one, MisalignedGEMM where it does
// not, and an odd number of tf32 values MisalignedGEMM. The rows
// dimension, a weight gradient's reduction over the rows, fp32 products,
// convolutions and a device that gives no slowdown take none.
func TestMisaligned(t *testing.T) {
	product := func(name string, kind model.OpKind, m, n, k int64) model.Op {
		return model.Op{Name: name, Kind: kind, FLOPs: 2 * float64(m*n*k), M: m, N: n, K: k, Groups: 1}
	}
	for _, c := range []struct {
		what string
		slow float64 // the device's MisalignedGEMM
		odd  float64 // and its OddGEMM
		p    hw.Precision
		a, b model.Op
		want float64
	}{
		{"fp16 N 1,270 over 1,272", 3, 5, hw.FP16, product("x", model.MatMul, 1280, 1270, 4096), product("x", model.MatMul, 1280, 1272, 4096), 3},
		{"fp16 N 1,271 (odd) over 1,272", 3, 5, hw.FP16, product("x", model.MatMul, 1280, 1271, 4096), product("x", model.MatMul, 1280, 1272, 4096), 5},
		{"bf16 K 50,257 (odd) over 50,264", 3, 5, hw.BF16, product("x", model.MatMul, 1280, 1280, 50257), product("x", model.MatMul, 1280, 1280, 50264), 5 * 50257.0 / 50264},
		{"fp16 N 1,271 (odd) over 1,272, no OddGEMM", 3, 0, hw.FP16, product("x", model.MatMul, 1280, 1271, 4096), product("x", model.MatMul, 1280, 1272, 4096), 3},
		{"tf32 N 1,271 (odd) over 1,272", 3, 5, hw.TF32, product("x", model.MatMul, 1280, 1271, 4096), product("x", model.MatMul, 1280, 1272, 4096), 3},
		{"bf16 K 4,094 over 4,096 (the FLOPs' ratio)", 3, 5, hw.BF16, product("x", model.MatMul, 1280, 1280, 4094), product("x", model.MatMul, 1280, 1280, 4096), 3 * 4094.0 / 4096},
		{"bf16 K 4,095 (odd) over 4,096 (the FLOPs' ratio)", 3, 5, hw.BF16, product("x", model.MatMul, 1280, 1280, 4095), product("x", model.MatMul, 1280, 1280, 4096), 5 * 4095.0 / 4096},
		{"fp16 rows 1,271 over 1,272", 3, 5, hw.FP16, product("x", model.MatMul, 1271, 1280, 4096), product("x", model.MatMul, 1272, 1280, 4096), 1},
		{"fp16 weight gradient, rows 4,095 as K", 3, 5, hw.FP16, product("x.grad_weight", model.MatMul, 1280, 1280, 4095), product("x.grad_weight", model.MatMul, 1280, 1280, 4096), 4095.0 / 4096},
		{"fp16 weight gradient, M 1,270", 3, 5, hw.FP16, product("x.grad_weight", model.MatMul, 1270, 1280, 4096), product("x.grad_weight", model.MatMul, 1272, 1280, 4096), 3},
		{"tf32 N 1,270 over 1,268 (4 values to 16 bytes)", 3, 5, hw.TF32, product("x", model.MatMul, 1280, 1270, 4096), product("x", model.MatMul, 1280, 1268, 4096), 3},
		{"tf32 N 1,260 over 1,268", 3, 5, hw.TF32, product("x", model.MatMul, 1280, 1260, 4096), product("x", model.MatMul, 1280, 1268, 4096), 1},
		{"fp32 N 1,271 over 1,272", 3, 5, hw.FP32, product("x", model.MatMul, 1280, 1271, 4096), product("x", model.MatMul, 1280, 1272, 4096), 1},
		{"fp16 convolution N 1,271 over 1,272", 3, 5, hw.FP16, product("x", model.Conv, 1280, 1271, 4096), product("x", model.Conv, 1280, 1272, 4096), 1},
		{"fp16 N 1,271 over 1,272 on a device of no slowdown", 0, 5, hw.FP16, product("x", model.MatMul, 1280, 1271, 4096), product("x", model.MatMul, 1280, 1272, 4096), 1},
	} {
		d := toy()
		d.Peak.TF32, d.Peak.BF16 = 50e12, 100e12
		d.MisalignedGEMM, d.OddGEMM = c.slow, c.odd
		cfg := &Config{Device: d, Precision: c.p}
		ta, err := OpTime(cfg, &c.a)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := OpTime(cfg, &c.b)
		if err != nil {
			t.Fatal(err)
		}
		if got := float64(ta / tb); got < c.want*(1-1e-9) || got > c.want*(1+1e-9) {
			t.Errorf("%s: time ratio %.9g, want %v", c.what, got, c.want)
		}
	}
}

// TestNCHWBatchNorm checks a channels-first batch norm against closed
// forms on the toy device with NCHWBatchNorm 0.01 (1e11 values a second
// at its 10 TFLOP/s fp32 peak): 6 GB moved at fp16 are 3e9 values, 30 ms,
// where the bandwidth gives 6e9/(1e12·EffMemory); in channels_last, on a
// layer norm, or on a device that gives no rate, the bandwidth's time.
func TestNCHWBatchNorm(t *testing.T) {
	const bytes = 6e9
	bn := model.Op{Name: "bn", Kind: model.Norm, Read: 4e9, Write: 2e9, BatchNorm: true}
	ln := bn
	ln.BatchNorm = false
	memory := bytes / (1e12 * EffMemory)
	for _, c := range []struct {
		what string
		op   model.Op
		nchw bool
		rate float64
		want float64
	}{
		{"NCHW batch norm", bn, true, 0.01, 3e9 / 1e11},
		{"channels_last batch norm", bn, false, 0.01, memory},
		{"NCHW layer norm", ln, true, 0.01, memory},
		{"NCHW batch norm, no rate", bn, true, 0, memory},
	} {
		d := toy()
		d.NCHWBatchNorm = c.rate
		got, err := OpTime(&Config{Device: d, Precision: hw.FP16, NCHW: c.nchw}, &c.op)
		if err != nil {
			t.Fatal(err)
		}
		near(t, c.what+" (s)", float64(got), c.want)
	}
}

// TestOptimizerPasses checks each torch.optim optimizer's values read and
// written per parameter against its foreach calls' depths
// (optimizerDepths): d + 1 for an in-place call of d lists, d for the
// out-of-place ones (momentum SGD's grads + wd·params, Adam's square
// root), and against the counts of torch/optim's source.
func TestOptimizerPasses(t *testing.T) {
	for _, c := range []struct {
		o          model.Optimizer
		outOfPlace int // the index of the out-of-place call, −1 for none
		want       int
	}{{model.SGD, -1, 3}, {model.Momentum, 0, 11}, {model.Adam, 3, 19}, {model.AdamW, 4, 21}} {
		sum := 0
		for i, d := range optimizerDepths(c.o) {
			sum += d + 1
			if i == c.outOfPlace {
				sum--
			}
		}
		if got := OptimizerPasses(c.o); got != sum || got != c.want {
			t.Errorf("%s: %d values a parameter, its calls' depths give %d, torch/optim %d", c.o, got, sum, c.want)
		}
	}
	for _, o := range []model.Optimizer{model.FusedAdam, model.BertAdam, model.LAMB, model.LARS} {
		if n := OptimizerPasses(o); n != 0 {
			t.Errorf("%s: %d, want 0 (not torch.optim's)", o, n)
		}
	}
}
