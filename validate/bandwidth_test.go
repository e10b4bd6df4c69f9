package validate

import (
	"math"
	"testing"
)

// TestBandwidthShare: two steps of t = C + M/bw, one device's bandwidth
// 1.5 times the other's, give back the share of the first that moves with
// the bandwidth, M/bw_A over t_A, for steps wholly bound (1), not at all
// (0) and in between; a ratio without a bandwidth pair gives NaN.
func TestBandwidthShare(t *testing.T) {
	const bwA, bwB = 2.0, 3.0
	for _, c := range []struct{ compute, bytes float64 }{{0, 6}, {5, 0}, {1, 6}, {3, 0.5}} {
		tA, tB := c.compute+c.bytes/bwA, c.compute+c.bytes/bwB
		r := DeviceRatio{MeasuredA: 1 / tA, MeasuredB: 1 / tB, Bandwidth: bwB / bwA}
		want := (c.bytes / bwA) / tA
		if got := r.BandwidthShare(r.Measured()); math.Abs(got-want) > 1e-12 {
			t.Errorf("C %v, M %v: share %v, want %v", c.compute, c.bytes, got, want)
		}
	}
	r := DeviceRatio{MeasuredA: 1, MeasuredB: 2}
	if got := r.BandwidthShare(r.Measured()); !math.IsNaN(got) {
		t.Errorf("no bandwidth pair: share %v, want NaN", got)
	}
}

// TestBandwidthPair: the catalogue's H100 SXM and H200 share their compute
// figures and differ in bandwidth, 4.8/3.35 TB/s (the datasheets), as the
// A100 SXM4 40GB and 80GB do, 2,039/1,555 GB/s; an A100 and an H100 differ
// in compute, and the V100 SXM2 16GB and 32GB share their bandwidth too:
// no pair. An unknown device or precision gives none either.
func TestBandwidthPair(t *testing.T) {
	cat, _ := defaults(t)
	for _, c := range []struct {
		a, b, prec string
		want       float64
	}{
		{"h100-sxm5-80gb", "h200-sxm-141gb", "amp-fp16", 4.8 / 3.35},
		{"h100-sxm5-80gb", "h200-sxm-141gb", "fp32", 4.8 / 3.35},
		{"a100-sxm4-40gb", "a100-sxm4-80gb", "tf32", 2039.0 / 1555},
		{"a100-sxm4-80gb", "h100-sxm5-80gb", "amp-fp16", 0},
		{"v100-sxm2-16gb", "v100-sxm2-32gb", "fp32", 0},
		{"h100-sxm5-80gb", "no-such-gpu", "fp32", 0},
		{"h100-sxm5-80gb", "h200-sxm-141gb", "fp64", 0},
	} {
		got := bandwidthPair(cat, &DeviceRatio{A: c.a, B: c.b, Precision: c.prec})
		if math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s, %s at %s: %v, want %v", c.a, c.b, c.prec, got, c.want)
		}
	}
}
