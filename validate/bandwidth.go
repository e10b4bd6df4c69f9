package validate

import (
	"math"

	"scaleplan/hw"
)

// MinBandwidthStep is the least relative difference of two devices'
// memory bandwidth that bandwidthPair splits a step by: below it the
// speed-up's noise outweighs what the bandwidth moves.
const MinBandwidthStep = 0.05

// BandwidthShare returns the share of A's step that A's memory bandwidth
// bounds, from the speed-up r of B over A (Measured or Predicted) on two
// devices that differ in bandwidth alone (r.Bandwidth > 0). With a step
// of t = C + M/bw on each, C the time no bandwidth changes (compute,
// launches, latencies) and M the bytes the bandwidth bounds,
//
//	t_A/t_B = r,  share = (M/bw_A)/t_A = (1 − 1/r) / (1 − 1/Bandwidth)
//
// A share of 1 is a step that all moves with the bandwidth, 0 one that
// does not at all; outside [0, 1] the two devices' steps differ by more
// than their bandwidth (another host, another clock). NaN where
// r.Bandwidth is 0.
func (r *DeviceRatio) BandwidthShare(speedup float64) float64 {
	if !(r.Bandwidth > 0) || r.Bandwidth == 1 {
		return math.NaN()
	}
	return (1 - 1/speedup) / (1 - 1/r.Bandwidth)
}

// bandwidthPair returns B's memory bandwidth over A's for the devices of
// r where the two share every compute figure at r's precision
// (sameCompute) and their bandwidths differ by MinBandwidthStep or more;
// 0 otherwise, or where either is not in cat.
func bandwidthPair(cat *hw.Catalog, r *DeviceRatio) float64 {
	a, errA := cat.Device(r.A)
	b, errB := cat.Device(r.B)
	p, _, _, errP := measuredPrecisions(r.Precision)
	if errA != nil || errB != nil || errP != nil || !sameCompute(a, b, p) || !(a.MemoryBandwidth > 0) {
		return 0
	}
	f := float64(b.MemoryBandwidth / a.MemoryBandwidth)
	if math.Abs(f-1) < MinBandwidthStep {
		return 0
	}
	return f
}

// sameCompute reports whether a and b give the operator model the same
// figures besides their memory: the peak at p and at fp32, the SMs, the
// measured convolution efficiencies and Winograd rates, and the L2
// bandwidth (H100 and H200 SXM; A100 SXM4 40GB and 80GB).
func sameCompute(a, b *hw.Device, p hw.Precision) bool {
	return a.PeakFLOPs(p) == b.PeakFLOPs(p) && a.PeakFLOPs(hw.FP32) == b.PeakFLOPs(hw.FP32) && a.PeakFLOPs(p) > 0 &&
		a.SMs == b.SMs && a.ConvEfficiency == b.ConvEfficiency && a.Winograd == b.Winograd && a.L2Bandwidth == b.L2Bandwidth
}
