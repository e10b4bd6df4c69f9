package validate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"scaleplan/compute"
	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
)

// deepBenchConvOps returns one row of v100-conv.csv (application, w, h,
// c, n, k, s, r, pad_w, pad_h, stride_w, stride_h, ...) as the model's
// three fp32 operators, forward, input gradient and weight gradient, with
// the implicit GEMMs model/ops_layers.go's conv gives them: M = images ×
// output pixels, N = output channels, K = input channels × filter area;
// the input gradient the transposed product per stride phase; the weight
// gradient M = output channels, N = input channels × filter area, K =
// images × output pixels. A filter that is not square gets no Kernel (no
// Winograd). flops is the direct convolution's.
func deepBenchConvOps(t *testing.T, rec []string) (ops [3]model.Op) {
	t.Helper()
	var v [11]int64 // w h c n k s r pad_w pad_h stride_w stride_h
	for i := range v {
		x, err := strconv.ParseInt(rec[1+i], 10, 64)
		if err != nil || x < 0 || (x == 0 && i < 7) {
			t.Fatalf("v100-conv.csv: %v: %q", rec, rec[1+i])
		}
		v[i] = x
	}
	w, h, c, n, k, s, r := v[0], v[1], v[2], v[3], v[4], v[5], v[6]
	ow, oh := (w+2*v[7]-s)/v[9]+1, (h+2*v[8]-r)/v[10]+1
	pix := n * ow * oh
	flops := 2 * float64(pix) * float64(k*c*r*s)
	base := model.Op{Kind: model.Conv, FLOPs: flops, Groups: 1, Stride: int(v[9]), OutH: oh, OutW: ow,
		Read: units.Bytes(4 * (n*w*h*c + k*c*r*s)), Write: units.Bytes(4 * pix * k)}
	if r == s && v[9] == v[10] {
		base.Kernel = int(r)
	}
	phases := ((r + v[10] - 1) / v[10]) * ((s + v[9] - 1) / v[9])
	f, di, dw := base, base, base
	f.Pass, f.M, f.N, f.K = model.Forward, pix, k, c*r*s
	di.Pass, di.M, di.N, di.K = model.Backward, n*w*h, c, k*phases
	dw.Pass, dw.M, dw.N, dw.K, dw.GradWeight = model.Backward, k, c*r*s, pix, true
	return [3]model.Op{f, di, dw}
}

// TestDeepBenchConv checks docs/validation-operators.md ("Convolutions on
// the V100"): each of DeepBench's fp32 convolutions on the V100, its three
// passes timed as operators of the model (compute.OpTime on
// v100-sxm2-16gb, without the time per kernel, as the products' table),
// grouped by the forward algorithm cuDNN chose (implicit GEMM, or
// Winograd and FFT) and by pass: the count, the mean |error|, the median
// error and the range. Run with -v to print every row.
func TestDeepBenchConv(t *testing.T) {
	cat, _ := defaults(t)
	d := cat.DeviceCalled("v100-sxm2-16gb")
	table := csvTable(t, "../testdata/measurements/deepbench/v100-conv.csv")
	if got, want := strings.Join(table[0], ","), "application,w,h,c,n,k,s,r,pad_w,pad_h,stride_w,stride_h,fwd_ms,bwd_inputs_ms,bwd_params_ms,fwd_algorithm"; got != want {
		t.Fatalf("v100-conv.csv: header %q, want %q", got, want)
	}
	passes := []string{"forward", "input gradient", "weight gradient"}
	groups := map[string][]float64{}
	var withKernel []float64         // implicit forward passes, each with KernelTime
	var strided, pointwise []float64 // input gradient (stride 2) and weight gradient (1×1) over forward, measured
	var bwdEff [2][]float64          // input and weight gradients of 0.2 ms or more: rate / (peak · q)
	var worst struct {
		ratio float64
		rec   []string
	}
	cfg := &compute.Config{Device: d, Precision: hw.FP32}
	for _, rec := range table[1:] {
		ops := deepBenchConvOps(t, rec)
		implicit := rec[15] == "IMPLICIT_GEMM" || rec[15] == "IMPLICIT_PRECOMP_GEMM"
		alg := "implicit GEMM"
		if !implicit {
			alg = "Winograd or FFT"
		}
		var ms [3]float64
		for i := range ops {
			if rec[12+i] == "" {
				continue // no input gradient of an input layer
			}
			v, err := strconv.ParseFloat(rec[12+i], 64)
			if err != nil || !(v > 0) {
				t.Fatalf("v100-conv.csv: %v: %q", rec, rec[12+i])
			}
			ms[i] = v
			tm, err := compute.OpTime(cfg, &ops[i])
			if err != nil {
				t.Fatal(err)
			}
			measured := v * float64(units.Millisecond)
			e := float64(tm)/measured - 1
			key := alg + ", " + passes[i]
			groups[key] = append(groups[key], e)
			t.Logf("%s %sx%sx%s n %s to %s, %sx%s stride %s, %s %s: %g ms measured, %.3g predicted, %s",
				rec[0], rec[1], rec[2], rec[3], rec[4], rec[5], rec[7], rec[6], rec[11], rec[15], passes[i], v,
				float64(tm)/float64(units.Millisecond), signed(pct(e)))
			if !implicit {
				continue
			}
			if i == 0 {
				withKernel = append(withKernel, float64(tm+compute.KernelTime)/measured-1)
			} else if v >= 0.2 {
				q := compute.QuantisationSIMT(ops[i].M, ops[i].N, ops[i].K, 1, d.SMs)
				bwdEff[i-1] = append(bwdEff[i-1], ops[i].FLOPs/measured/(float64(d.PeakFLOPs(hw.FP32))*q))
			}
		}
		if !implicit {
			continue
		}
		if ms[1] > 0 && rec[11] != "1" {
			strided = append(strided, ms[1]/ms[0])
		}
		if rec[6] == "1" && rec[7] == "1" {
			r := ms[2] / ms[0]
			pointwise = append(pointwise, r)
			if r > worst.ratio {
				worst.ratio, worst.rec = r, rec
			}
		}
	}
	say := docSay(t, "validation-operators.md")
	for _, alg := range []string{"implicit GEMM", "Winograd or FFT"} {
		for _, p := range passes {
			e := groups[alg+", "+p]
			if len(e) == 0 {
				t.Fatalf("no %s rows of %s", p, alg)
			}
			say(fmt.Sprintf("| %s | %s | %s |", alg, p, errorCells(e)))
		}
	}
	say(fmt.Sprintf("the implicit forward passes' median goes from %s to %s", signed(pct(median(groups["implicit GEMM, forward"]))), signed(pct(median(withKernel)))))
	say(fmt.Sprintf("The input gradient of a strided convolution takes a median of %.1f times its forward (%.1f to %.1f)", median(strided), slices.Min(strided), slices.Max(strided)))
	say(fmt.Sprintf("the weight gradients of 1 × 1 convolutions take a median of %.1f times their forward (%.1f to %.1f)", median(pointwise), slices.Min(pointwise), slices.Max(pointwise)))
	say(fmt.Sprintf("(%s × %s filters over %s pixels: %.1f times)", worst.rec[5], worst.rec[3], thousands(int(deepBenchConvOps(t, worst.rec)[0].M)), worst.ratio))
	say(fmt.Sprintf("the backward passes' own medians (%.3f and %.3f of the peak", median(bwdEff[0]), median(bwdEff[1])))
}
