package compute

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
)

// TestQuantisationSIMT checks the CUDA cores' quantisation against hand
// counts on a V100's 80 SMs. A 4096×1024 product fills 256 tiles of
// 128×128, four waves of which the last is a fifth full (0.8); of 64×64
// it fills 1,024, 13 waves, 1024/1040 = 64/65, which no tile of SIMTTiles
// beats. A product of 16 rows and 4,096 columns wastes seven eighths of
// every 128-row tile (32 tiles, split in two along K = 1,024: 0.125 ·
// 64/80 = 0.1); a 32-row tile wastes half (32×128: 32 tiles split in two,
// 0.5 · 64/80 = 0.4; 32×32: 128 tiles in two waves, 0.5 · 128/160 = 0.4).
// A tensor-core product keeps the 128×128 tile.
func TestQuantisationSIMT(t *testing.T) {
	for _, c := range []struct {
		m, n, k       int64
		simt, tensors float64
	}{
		{4096, 1024, 1024, 64.0 / 65, 0.8},
		{16, 4096, 1024, 0.4, 0.1},
	} {
		if got := QuantisationSIMT(c.m, c.n, c.k, 1, 80); math.Abs(got-c.simt) > 1e-12 {
			t.Errorf("%d×%d×%d: SIMT quantisation %v, want %v", c.m, c.n, c.k, got, c.simt)
		}
		if got := Quantisation(c.m, c.n, c.k, 1, 80); math.Abs(got-c.tensors) > 1e-12 {
			t.Errorf("%d×%d×%d: quantisation %v, want %v", c.m, c.n, c.k, got, c.tensors)
		}
	}
	// OpTime takes the SIMT tiles for an fp32 product only.
	v100 := builtin(t, "v100-sxm2-16gb")
	op := model.Op{Kind: model.MatMul, Pass: model.Forward, FLOPs: 2 * 4096 * 1024 * 1024, M: 4096, N: 1024, K: 1024, Groups: 1}
	for _, c := range []struct {
		p hw.Precision
		q float64
	}{{hw.FP32, 64.0 / 65}, {hw.FP16, 0.8}} {
		cfg := &Config{Device: v100, Precision: c.p}
		got, err := OpTime(cfg, &op)
		if err != nil {
			t.Fatal(err)
		}
		want := op.FLOPs / (float64(v100.PeakFLOPs(c.p)) * cfg.eff(cfg.ClassOf(&op)) * c.q)
		if math.Abs(float64(got)/want-1) > 1e-9 {
			t.Errorf("%s: %v, want %v s", c.p, float64(got), want)
		}
	}
}

// TestDeepBenchCUDAGEMM derives the V100's CUDA-core GEMM efficiency in
// the catalogue (hw.Device.GEMMEfficiency.CUDA) from Baidu's DeepBench:
// over its fp32 products of more than 128 columns
// (testdata/measurements/deepbench/v100-gemm.csv), the median of each
// product's rate over the fp32 peak and its QuantisationSIMT.
func TestDeepBenchCUDAGEMM(t *testing.T) {
	recs := csvRecords(t, "../testdata/measurements/deepbench/v100-gemm.csv")
	for _, name := range []string{"v100-sxm2-16gb", "v100-sxm2-32gb"} {
		d := builtin(t, name)
		var effs []float64
		for _, rec := range recs[1:] {
			if rec[6] != "fp32" {
				continue
			}
			var dim [3]int64
			for i := range dim {
				v, err := strconv.ParseInt(rec[1+i], 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				dim[i] = v
			}
			ms, err := strconv.ParseFloat(rec[7], 64)
			if err != nil {
				t.Fatal(err)
			}
			if dim[1] <= 128 {
				continue
			}
			rate := 2 * float64(dim[0]*dim[1]*dim[2]) / (ms * float64(units.Millisecond))
			effs = append(effs, rate/(float64(d.PeakFLOPs(hw.FP32))*QuantisationSIMT(dim[0], dim[1], dim[2], 1, d.SMs)))
		}
		slices.Sort(effs)
		if len(effs) != 83 {
			t.Fatalf("%d products of more than 128 columns, want DeepBench's 83", len(effs))
		}
		med := effs[len(effs)/2]
		if got := d.GEMMEfficiency.CUDA; math.Abs(got-med) > 0.0005 {
			t.Errorf("%s: gemm_efficiency.cuda %v, DeepBench's median %.4f", name, got, med)
		}
		if got := DeviceEfficiency(d, CUDACore); got != d.GEMMEfficiency.CUDA {
			t.Errorf("%s: CUDA-core class %v, want the catalogue's %v", name, got, d.GEMMEfficiency.CUDA)
		}
	}
}

// TestDeepBenchCUDAConv derives the V100's CUDA-core convolution
// efficiency in the catalogue (hw.Device.ConvEfficiency.CUDA) from Baidu's
// DeepBench (testdata/measurements/deepbench/v100-conv.csv): over its fp32
// forward convolutions that cuDNN ran as an implicit GEMM
// (IMPLICIT_GEMM, IMPLICIT_PRECOMP_GEMM; Winograd and FFT do fewer
// multiplications than the FLOPs counted) in at least 0.2 ms, where the
// model's time per kernel (KernelTime) is under a tenth of the call, the
// median of each one's rate over the fp32 peak and its QuantisationSIMT
// (M = images × output pixels, N = output channels, K = input channels ×
// filter area).
func TestDeepBenchCUDAConv(t *testing.T) {
	if KernelTime*10 > 0.2*units.Millisecond {
		t.Fatalf("KernelTime %v is a tenth of 0.2 ms or more: the selection below no longer leaves it out", KernelTime)
	}
	rows := deepBenchConvRows(t)
	for _, name := range []string{"v100-sxm2-16gb", "v100-sxm2-32gb"} {
		d := builtin(t, name)
		var effs []float64
		for _, r := range rows {
			if !r.implicitGEMM() || r.ms[0] < 0.2 {
				continue
			}
			m, n, k := r.forward()
			rate := 2 * float64(m*n*k) / (r.ms[0] * float64(units.Millisecond))
			effs = append(effs, rate/(float64(d.PeakFLOPs(hw.FP32))*QuantisationSIMT(m, n, k, 1, d.SMs)))
		}
		slices.Sort(effs)
		if len(effs) < 10 {
			t.Fatalf("%d implicit-GEMM convolutions of at least 0.2 ms", len(effs))
		}
		med := effs[len(effs)/2]
		t.Logf("%s: %d convolutions, efficiency %.3f to %.3f, median %.4f", name, len(effs), effs[0], effs[len(effs)-1], med)
		if got := d.ConvEfficiency.CUDA; math.Abs(got-med) > 0.0005 {
			t.Errorf("%s: conv_efficiency.cuda %v, DeepBench's median %.4f", name, got, med)
		}
	}
}

// deepBenchConvRow is one row of DeepBench's V100 fp32 convolutions
// (testdata/measurements/deepbench/v100-conv.csv): its shape, w h c n k
// s r pad_w pad_h stride_w stride_h; its three passes' times in ms,
// forward, input gradient (0 where the sheet gives none) and weight
// gradient; and the forward algorithm cuDNN chose.
type deepBenchConvRow struct {
	shape [11]int64
	ms    [3]float64
	alg   string
}

// deepBenchConvRows reads v100-conv.csv.
func deepBenchConvRows(t *testing.T) []deepBenchConvRow {
	t.Helper()
	recs := csvRecords(t, "../testdata/measurements/deepbench/v100-conv.csv")
	if got, want := strings.Join(recs[0], ","), "application,w,h,c,n,k,s,r,pad_w,pad_h,stride_w,stride_h,fwd_ms,bwd_inputs_ms,bwd_params_ms,fwd_algorithm"; got != want {
		t.Fatalf("v100-conv.csv: header %q, want %q", got, want)
	}
	rows := make([]deepBenchConvRow, len(recs)-1)
	for j, rec := range recs[1:] {
		r := &rows[j]
		for i := range r.shape {
			x, err := strconv.ParseInt(rec[1+i], 10, 64)
			if err != nil || x < 0 {
				t.Fatalf("v100-conv.csv: %v: %q", rec, rec[1+i])
			}
			r.shape[i] = x
		}
		for i := range r.ms {
			if rec[12+i] == "" && i == 1 {
				continue // no input gradient of an input layer
			}
			x, err := strconv.ParseFloat(rec[12+i], 64)
			if err != nil || !(x > 0) {
				t.Fatalf("v100-conv.csv: %v: %q", rec, rec[12+i])
			}
			r.ms[i] = x
		}
		r.alg = rec[15]
	}
	return rows
}

// implicitGEMM reports whether cuDNN ran r's forward pass as an implicit
// GEMM (Winograd and FFT do fewer multiplications than the FLOPs
// counted).
func (r *deepBenchConvRow) implicitGEMM() bool {
	return r.alg == "IMPLICIT_GEMM" || r.alg == "IMPLICIT_PRECOMP_GEMM"
}

// forward returns r's forward implicit GEMM: M = images × output pixels,
// N = output channels, K = input channels × filter area.
func (r *deepBenchConvRow) forward() (m, n, k int64) {
	v := r.shape
	w, h, c, imgs, out, s, fr := v[0], v[1], v[2], v[3], v[4], v[5], v[6]
	q := (w+2*v[7]-s)/v[9] + 1
	p := (h+2*v[8]-fr)/v[10] + 1
	return imgs * p * q, out, c * fr * s
}

// TestFusedAttentionFloat32 checks the rate of a fused attention's
// products by the tensors' type: 16-bit at the precision's peak; float32
// (an fp32 or tf32 step, PyTorch's memory-efficient kernel) at a third of
// the TF32 peak (three TF32 products for each fp32 one), on a Hopper
// device at EffFlashAmpereOnHopper instead of EffFlash, and on a device
// without TF32 at the fp32 peak. The operator is large enough that its
// products, not its bytes, bound it.
func TestFusedAttentionFloat32(t *testing.T) {
	op := model.Op{Kind: model.Attention, Pass: model.Forward, FLOPs: 4 * 512 * 2048 * 2048 * 64, M: 2048, N: 2048, K: 64, Groups: 512,
		Read: 2 * 512 * 2048 * 64 * 3, Write: 2 * 512 * 2048 * 64}
	for _, c := range []struct {
		device string
		p      hw.Precision
		rate   float64 // FLOP/s before EffFlash and the quantisation
	}{
		{"h100-sxm5-80gb", hw.BF16, 989.4e12},
		{"h100-sxm5-80gb", hw.TF32, 494.7e12 / 3 * 0.35 / 0.5},
		{"h100-sxm5-80gb", hw.FP32, 494.7e12 / 3 * 0.35 / 0.5},
		{"a100-sxm4-40gb", hw.TF32, 156e12 / 3},
		{"a100-sxm4-40gb", hw.FP32, 156e12 / 3},
		{"v100-sxm2-16gb", hw.FP32, 15.7e12},
	} {
		d := builtin(t, c.device) // rates: the datasheets' dense peaks
		cfg := &Config{Device: d, Precision: c.p, FusedAttention: true}
		got, err := OpTime(cfg, &op)
		if err != nil {
			t.Fatal(err)
		}
		want := op.FLOPs / (c.rate * EffFlash * Quantisation(op.M, op.N, op.K, op.Groups, d.SMs))
		if math.Abs(float64(got)/want-1) > 1e-3 {
			t.Errorf("%s %s: %.4g s, want %.4g s", c.device, c.p, float64(got), want)
		}
	}
}
