package compute

import (
	"math"
	"testing"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
)

// deepBenchConv is one row of Baidu DeepBench's "Results FP32" sheet
// (github.com/baidu-research/DeepBench, results/train/): a 3×3 stride-1
// convolution padded by 1 of n inputs of w×h×c to k channels, and its
// measured forward, input-gradient ("wrt Inputs") and weight-gradient
// ("wrt Parameters") times, ms.
type deepBenchConv struct {
	w, h, c, n, k  int64
	fwd, din, dwei float64
}

// ops returns the row's three passes as model/ops_layers.go's conv makes
// them, at fp32.
func (r deepBenchConv) ops() [3]model.Op {
	pix := r.n * r.w * r.h
	flops := 2 * float64(pix) * float64(r.k*r.c*9)
	base := model.Op{Kind: model.Conv, FLOPs: flops, Groups: 1, Kernel: 3, Stride: 1, OutH: r.h, OutW: r.w,
		Read: units.Bytes(4 * (pix*r.c + r.k*r.c*9)), Write: units.Bytes(4 * pix * r.k)}
	f, di, dw := base, base, base
	f.Pass, f.M, f.N, f.K = model.Forward, pix, r.k, r.c*9
	di.Pass, di.M, di.N, di.K = model.Backward, pix, r.c, r.k*9
	dw.Pass, dw.M, dw.N, dw.K, dw.GradWeight = model.Backward, r.k, r.c*9, pix, true
	return [3]model.Op{f, di, dw}
}

// deepBenchWinogradRows returns the rows of DeepBench's V100 fp32
// convolutions (testdata/measurements/deepbench/v100-conv.csv) that the
// catalogue's Winograd rates were fitted to: 3×3, stride 1, padded by 1,
// batch 16 and above 10 GFLOP (14.8 to 33.0).
func deepBenchWinogradRows(t *testing.T) []deepBenchConv {
	var rows []deepBenchConv
	for _, r := range deepBenchConvRows(t) {
		v := r.shape
		if v[5] != 3 || v[6] != 3 || v[7] != 1 || v[8] != 1 || v[9] != 1 || v[10] != 1 || v[3] != 16 {
			continue
		}
		c := deepBenchConv{w: v[0], h: v[1], c: v[2], n: v[3], k: v[4], fwd: r.ms[0], din: r.ms[1], dwei: r.ms[2]}
		if c.ops()[0].FLOPs > 10e9 {
			rows = append(rows, c)
		}
	}
	if len(rows) != 8 {
		t.Fatalf("%d rows of 3×3 stride-1 convolutions of batch 16 above 10 GFLOP, want DeepBench's 8", len(rows))
	}
	return rows
}

// TestWinogradDeepBench reproduces DeepBench's fp32 times of its 3×3
// stride-1 rows of batch 16 and at least 14.8 GFLOP, which the catalogue's
// Winograd rates were fitted to, on the V100 (deepBenchWinogradRows: sheet
// at commit 30c51150, cuDNN 7.6.2) and the P100 (at f48528cf, cuDNN
// 6.0.21): every pass within 6 % on the V100 and 2 % on the P100, the
// weight gradient where it has 128 input channels or more (below, cuDNN
// does not run it as Winograd).
func TestWinogradDeepBench(t *testing.T) {
	for _, tc := range []struct {
		device string
		tol    float64
		rows   []deepBenchConv
	}{
		{"v100-sxm2-16gb", 0.06, deepBenchWinogradRows(t)},
		{"p100-sxm2", 0.02, []deepBenchConv{
			{350, 80, 64, 16, 64, 2.814, 2.814, 0},
			{175, 40, 128, 16, 128, 2.037, 2.016, 2.024},
			{84, 20, 256, 16, 256, 1.545, 1.523, 1.531},
			{42, 10, 512, 16, 512, 1.725, 1.709, 1.601},
		}},
	} {
		c := &Config{Device: builtin(t, tc.device), Precision: hw.FP32}
		for _, r := range tc.rows {
			ops := r.ops()
			for i, want := range []float64{r.fwd, r.din, r.dwei} {
				if r.c < WinogradGradWeightMinChannels && i == 2 {
					continue
				}
				got, err := OpTime(c, &ops[i])
				if err != nil {
					t.Fatal(err)
				}
				ms := float64(got) * 1e3
				if d := ms/want - 1; math.Abs(d) > tc.tol {
					t.Errorf("%s %d×%d×%d to %d, pass %d: %.3f ms, DeepBench %.3f ms (%+.1f %%)",
						tc.device, r.w, r.h, r.c, r.k, i, ms, want, 100*d)
				}
			}
		}
	}
}

// TestWinogradSelect checks which convolutions run as Winograd: a dense
// 3×3 stride-1 one at fp32 with enough input channels, on a device that
// gives the pass's rate, by the closed form of hw.WinogradPass where that
// is faster; every other one as the implicit GEMM, FLOPs / (peak · the
// device's convolution efficiency · q), q on the CUDA cores' tiles at fp32.
func TestWinogradSelect(t *testing.T) {
	v100 := builtin(t, "v100-sxm2-16gb")
	r := deepBenchConv{w: 28, h: 28, c: 256, n: 64, k: 256}
	gemm := func(d *hw.Device, p hw.Precision, op model.Op) float64 {
		e := EffGEMM
		if p == hw.FP32 {
			e = DeviceEfficiency(d, CUDACore) // the V100's DeepBench products
		}
		if m := d.ConvEfficiency.Of(p != hw.FP32); m > 0 {
			e = m
		}
		q := Quantisation(op.M, op.N, op.K, 1, d.SMs)
		if p == hw.FP32 {
			q = QuantisationSIMT(op.M, op.N, op.K, 1, d.SMs) // the CUDA cores' tiles
		}
		return op.FLOPs / (float64(d.PeakFLOPs(p)) * e * q)
	}
	// F(4×4, 3×3) tiles cover 28×28 exactly; 256 channels in and out.
	wino := func(rate, ch float64, op model.Op) float64 {
		return op.FLOPs / (rate * 15.7e12 / (1 + ch*2/256.0))
	}
	small := deepBenchConv{w: 28, h: 28, c: 16, n: 64, k: 256}.ops()
	narrow := deepBenchConv{w: 28, h: 28, c: 64, n: 64, k: 256}.ops()
	seven := deepBenchConv{w: 7, h: 7, c: 512, n: 64, k: 512}.ops()
	// One output pixel uses 1 of its tile's 16: Winograd at 38.2/16 TFLOP/s
	// is slower than the implicit GEMM, which the autotuner takes.
	pixel := deepBenchConv{w: 1, h: 1, c: 512, n: 1024, k: 512}.ops()
	ops := r.ops()
	stride2, pointwise := ops[0], ops[0]
	stride2.Stride, pointwise.Kernel = 2, 1
	a100 := builtin(t, "a100-sxm4-40gb")
	for _, tc := range []struct {
		what string
		d    *hw.Device
		p    hw.Precision
		op   model.Op
		want float64
	}{
		{"forward", v100, hw.FP32, ops[0], wino(2.726, 30.7, ops[0])},
		{"input gradient", v100, hw.FP32, ops[1], wino(2.692, 28.9, ops[1])},
		{"weight gradient", v100, hw.FP32, ops[2], wino(3.218, 53.2, ops[2])},
		// 7×7 outputs fill 49 of the 64 pixels of their four tiles.
		{"7×7 output", v100, hw.FP32, seven[0], seven[0].FLOPs / (2.726 * 15.7e12 / (1 + 30.7*2/512.0) * 49 / 64)},
		{"1×1 output", v100, hw.FP32, pixel[0], gemm(v100, hw.FP32, pixel[0])},
		{"16 input channels", v100, hw.FP32, small[0], gemm(v100, hw.FP32, small[0])},
		{"weight gradient of 64 input channels", v100, hw.FP32, narrow[2], gemm(v100, hw.FP32, narrow[2])},
		{"forward of 64 input channels", v100, hw.FP32, narrow[0], op64(narrow[0])},
		{"stride 2", v100, hw.FP32, stride2, gemm(v100, hw.FP32, stride2)},
		{"1×1", v100, hw.FP32, pointwise, gemm(v100, hw.FP32, pointwise)},
		{"fp16", v100, hw.FP16, ops[0], gemm(v100, hw.FP16, ops[0])},
		{"no rate (A100)", a100, hw.FP32, ops[0], gemm(a100, hw.FP32, ops[0])},
	} {
		got, err := OpTime(&Config{Device: tc.d, Precision: tc.p}, &tc.op)
		if err != nil {
			t.Fatal(err)
		}
		if d := float64(got)/tc.want - 1; math.Abs(d) > 1e-9 {
			t.Errorf("%s: %.6g s, want %.6g s", tc.what, float64(got), tc.want)
		}
	}
	// A calibration's CUDA-core efficiency scales the rate, by its ratio
	// to the device's published one.
	var e Efficiencies
	e.Set(CUDACore, 0.4)
	cal, _ := OpTime(&Config{Device: v100, Precision: hw.FP32, Eff: &e}, &ops[0])
	near(t, "calibrated Winograd forward (s)", float64(cal), wino(2.726, 30.7, ops[0])*DeviceEfficiency(v100, CUDACore)/0.4)
}

// op64 is the V100's Winograd forward time of a convolution of 64 input
// and 256 output channels on full tiles.
func op64(op model.Op) float64 {
	return op.FLOPs / (2.726 * 15.7e12 / (1 + 30.7*(1/64.0+1/256.0)))
}
