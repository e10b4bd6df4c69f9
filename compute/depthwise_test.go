package compute

import (
	"math"
	"testing"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
)

// TestEffL2 checks the L2 efficiency against Jia et al.'s V100 figures:
// 2,155.88 GB/s measured of 2,048 bytes a clock at 1,530 MHz.
func TestEffL2(t *testing.T) {
	near(t, "EffL2", EffL2, 2155.88e9/(2048*1530e6))
}

// depthwiseOps returns the three passes of a depthwise convolution of c
// channels, k×k, stride s, on n images of h×h at size bytes a value, as
// model/ops_layers.go lists them (its extent o = (h + 2·(k/2) − k)/s + 1):
// forward x and weights in, y out; grad_input dy and weights in, dx out;
// grad_weight dy and x in, the weights' gradient out.
func depthwiseOps(n, c, h, k, s, size int64) (fwd, gin, gw model.Op) {
	o := (h+2*(k/2)-k)/s + 1
	x, y, w := n*c*h*h*size, n*c*o*o*size, c*k*k*size
	flops := float64(2 * n * o * o * c * k * k)
	base := model.Op{Kind: model.GroupedConv, FLOPs: flops, Groups: c, Kernel: int(k), Stride: int(s), OutH: o, OutW: o}
	fwd, gin, gw = base, base, base
	fwd.Read, fwd.Write, fwd.M, fwd.N, fwd.K = asBytes(x+w), asBytes(y), n*o*o, 1, k*k
	phase := (k + s - 1) / s
	gin.Pass, gin.Read, gin.Write, gin.M, gin.N, gin.K = model.Backward, asBytes(y+w), asBytes(x), n*h*h, 1, phase*phase
	gw.Pass, gw.GradWeight, gw.Read, gw.Write, gw.M, gw.N, gw.K = model.Backward, true, asBytes(y+x), asBytes(w), 1, k*k, n*o*o
	return fwd, gin, gw
}

func asBytes(v int64) units.Bytes { return units.Bytes(v) }

// TestDepthwiseBackend checks which library runs a depthwise convolution
// against ConvParams::use_cudnn_depthwise and
// check_cudnn_depthwise_workload_with_filter (aten/src/ATen/native/Convolution.cpp).
func TestDepthwiseBackend(t *testing.T) {
	cases := []struct {
		name     string
		p        hw.Precision
		nchw     bool
		k, s, h  int64
		own      bool
		notDepth bool
	}{
		{"fp32 NCHW", hw.FP32, true, 3, 1, 56, true, false},
		{"tf32 NCHW", hw.TF32, true, 5, 2, 56, true, false},
		{"fp32 channels_last", hw.FP32, false, 3, 1, 56, false, false},
		{"fp16 channels_last stride 2", hw.FP16, false, 5, 2, 56, false, false},
		{"fp16 NCHW 3×3 stride 1", hw.FP16, true, 3, 1, 56, false, false},
		{"bf16 NCHW 5×5 stride 1", hw.BF16, true, 5, 1, 56, false, false},
		{"fp16 NCHW stride 2", hw.FP16, true, 3, 2, 56, true, false},
		{"fp16 NCHW 7×7 stride 1", hw.FP16, true, 7, 1, 56, true, false},
		{"fp16 NCHW 3×3 stride 1, 6 wide", hw.FP16, true, 3, 1, 6, true, false},
		{"fp32 NCHW grouped, 2 channels a group", hw.FP32, true, 3, 1, 56, false, true},
	}
	for _, tc := range cases {
		c := &Config{Device: toy(), Precision: tc.p, NCHW: tc.nchw}
		f, gi, gw := depthwiseOps(2, 32, tc.h, tc.k, tc.s, 4)
		for _, op := range []*model.Op{&f, &gi, &gw} {
			if tc.notDepth {
				op.N, op.M = 2, 2
			}
			if got := c.ownDepthwise(op); got != tc.own {
				t.Errorf("%s (grad weight %v, backward %v): PyTorch's own kernel %v, want %v", tc.name, op.GradWeight, op.Pass == model.Backward, got, tc.own)
			}
		}
	}
}

// TestDepthwisePassesClosedForm times the three passes of a depthwise
// convolution on the toy device with an L2 of 4 TB/s: the forward and
// input-gradient passes at EffDepthwise of the DRAM bandwidth, the weight
// gradient of PyTorch's own kernel at the slower of that and its k² reads
// of dy and x at EffL2 of the L2's bandwidth.
func TestDepthwisePassesClosedForm(t *testing.T) {
	d := toy()
	d.L2Bandwidth = 4e12
	cuda := 10e12 * 0.8
	l2 := 4e12 * 2155.88 / 3133.44
	for _, k := range []int64{3, 5} {
		f, gi, gw := depthwiseOps(8, 64, 56, k, 1, 4)
		x := float64(8 * 64 * 56 * 56 * 4) // x, y, dx and dy alike at stride 1
		w := float64(64 * k * k * 4)
		flops := float64(2 * 8 * 56 * 56 * 64 * k * k)
		dram := func(b float64) float64 { return math.Max(flops/cuda, b/(1e12*0.24)) }
		own := &Config{Device: d, Precision: hw.FP32, NCHW: true}
		cudnn := &Config{Device: d, Precision: hw.FP32}
		for _, tc := range []struct {
			what string
			c    *Config
			op   *model.Op
			want float64
		}{
			{"forward, own", own, &f, dram(2*x + w)},
			{"grad input, own", own, &gi, dram(2*x + w)},
			{"grad weight, own", own, &gw, math.Max(dram(2*x+w), float64(k*k)*2*x/l2)},
			{"grad weight, cuDNN", cudnn, &gw, dram(2*x + w)},
		} {
			got, err := OpTime(tc.c, tc.op)
			if err != nil {
				t.Fatal(err)
			}
			near(t, tc.what+" k "+string(rune('0'+k))+" (s)", float64(got), tc.want)
		}
	}
	// 3×3: 9 reads at 2.75 TB/s take less than one at 0.24 TB/s, so DRAM
	// decides; 5×5: 25 take longer, so the L2 does.
	_, _, gw3 := depthwiseOps(8, 64, 56, 3, 1, 4)
	_, _, gw5 := depthwiseOps(8, 64, 56, 5, 1, 4)
	own := &Config{Device: d, Precision: hw.FP32, NCHW: true}
	if own.depthwiseL2(&gw3) >= float64(gw3.Read+gw3.Write)/(1e12*0.24) {
		t.Error("3×3 weight gradient: the L2 decides, want DRAM")
	}
	if own.depthwiseL2(&gw5) <= float64(gw5.Read+gw5.Write)/(1e12*0.24) {
		t.Error("5×5 weight gradient: DRAM decides, want the L2")
	}
	// A calibration's grouped efficiency at half the default halves both
	// terms' rates; a device without an L2 figure keeps the DRAM term.
	cal := &Config{Device: d, Precision: hw.FP32, NCHW: true, Eff: &Efficiencies{}}
	cal.Eff.Set(Grouped, EffDepthwise/2)
	a, _ := OpTime(own, &gw5)
	b, _ := OpTime(cal, &gw5)
	near(t, "calibrated at half the efficiency / default", float64(b/a), 2)
	bare := &Config{Device: toy(), Precision: hw.FP32, NCHW: true}
	got, _ := OpTime(bare, &gw5)
	near(t, "no L2 figure (s)", float64(got), float64(gw5.Read+gw5.Write)/(1e12*0.24))
}

// TestEfficientNetBlockDepthwise checks, by a hand count on the H200
// (8,985.6 GB/s of L2, 4.8 TB/s of DRAM), the depthwise convolutions of two
// EfficientNet-B4 blocks at batch 2: blocks.3 (3×3, stride 1, 192 channels
// at 95×95) and blocks.6 (5×5, stride 2, 192 channels from 95×95 to
// 48×48). In NCHW at fp32 PyTorch runs both with its own kernels; at fp16
// cuDNN runs blocks.3 and PyTorch blocks.6; in channels_last cuDNN runs
// both.
func TestEfficientNetBlockDepthwise(t *testing.T) {
	const n = 2
	d := builtin(t, "h200-sxm-141gb")
	dram, l2, cuda := 4.8e12*0.24, 8985.6e9*2155.88/3133.44, 67e12*0.8
	type pass struct{ fwd, gin, gw float64 }
	hand := func(size float64, c, h, o, k float64, ownGW bool) pass {
		x, y, w := n*c*h*h*size, n*c*o*o*size, c*k*k*size
		flops := 2 * n * o * o * c * k * k
		t := func(b float64) float64 { return math.Max(flops/cuda, b/dram) }
		p := pass{t(x + w + y), t(y + w + x), t(y + x + w)}
		if ownGW {
			p.gw = math.Max(p.gw, k*k*(x+y)/l2)
		}
		return p
	}
	for _, tc := range []struct {
		what  string
		p     hw.Precision
		mp    model.Precision
		nchw  bool
		size  float64
		owned [2]bool
	}{
		{"fp32 NCHW", hw.FP32, model.FP32, true, 4, [2]bool{true, true}},
		{"fp16 NCHW", hw.FP16, model.FP16, true, 2, [2]bool{false, true}},
		{"fp16 channels_last", hw.FP16, model.FP16, false, 2, [2]bool{false, false}},
	} {
		want := map[string]pass{
			"blocks.3.dw.conv": hand(tc.size, 192, 95, 95, 3, tc.owned[0]),
			"blocks.6.dw.conv": hand(tc.size, 192, 95, 48, 5, tc.owned[1]),
		}
		ops, err := model.Ops("efficientnet-b4", model.Shape{Batch: n, Precision: tc.mp})
		if err != nil {
			t.Fatal(err)
		}
		c := &Config{Device: d, Precision: tc.p, NCHW: tc.nchw}
		seen := 0
		for i := range ops {
			op := &ops[i]
			for name, w := range want {
				var exp float64
				switch op.Name {
				case name:
					exp = w.fwd
				case name + ".grad_input":
					exp = w.gin
				case name + ".grad_weight":
					exp = w.gw
				default:
					continue
				}
				seen++
				got, err := OpTime(c, op)
				if err != nil {
					t.Fatal(err)
				}
				near(t, tc.what+" "+op.Name+" (s)", float64(got), exp)
			}
		}
		if seen != 6 {
			t.Errorf("%s: %d of the blocks' six depthwise passes found", tc.what, seen)
		}
	}
}
