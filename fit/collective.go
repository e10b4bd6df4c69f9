package fit

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"

	"scaleplan/fit/logs"
	"scaleplan/internal/units"
)

// BusFactor returns the factor nccl-tests applies to the algorithm
// bandwidth of op over n ranks to give the bus bandwidth, the rate each
// rank's link must carry (nccl-tests' doc/PERFORMANCE.md): 2(n−1)/n for
// an all-reduce, (n−1)/n for reduce-scatter, all-gather and all-to-all, 1
// for broadcast, reduce and send/receive. ok is false for another op.
func BusFactor(op string, n int) (f float64, ok bool) {
	if n < 1 {
		return 0, false
	}
	switch op {
	case "all_reduce":
		return 2 * float64(n-1) / float64(n), true
	case "reduce_scatter", "all_gather", "alltoall":
		return float64(n-1) / float64(n), true
	case "broadcast", "reduce", "sendrecv":
		return 1, true
	}
	return 0, false
}

// CollectiveFit is the latency–bandwidth model of one logs.Collective,
//
//	T(S) = α + S/β,
//
// fitted to its points by least squares of the relative error
// (Σ ((α + S/β − T)/T)², each point weighted 1/T²), so that the small
// messages, whose time is α, and the large ones, whose time is S/β, count
// alike over a sweep of eight bytes to gigabytes. NCCL changes protocol
// and algorithm between them; MaxRelError says how far the line is from
// the worst point.
type CollectiveFit struct {
	Source string // the log's name
	logs.Collective
	// Latency is α, the time of an operation on an empty message; held at
	// 0 where the least squares would make it negative.
	Latency units.Seconds
	// Bandwidth is β, the algorithm bandwidth of large messages.
	Bandwidth units.BytesPerSec
	// BusBandwidth is β × BusFactor: what each rank's link carries; 0 when
	// the op is not known.
	BusBandwidth units.BytesPerSec
	// PeakBusBW is the largest bus bandwidth printed, at PeakBytes.
	PeakBusBW units.BytesPerSec
	PeakBytes units.Bytes
	// R2 is the weighted coefficient of determination of the times.
	R2 float64
	// MaxRelError is the largest |T(S) − T|/T over the points.
	MaxRelError float64
	// Err says why there is no fit: fewer than two sizes, a time that
	// does not grow with the size, or sizes too small for it to grow
	// measurably (ErrLatencyOnly: Latency is then the mean time, and the
	// bandwidth is not known). The other figures are then 0.
	Err error
}

// ErrFewSizes is returned, wrapped, by FitCollective for fewer than two
// distinct message sizes.
var ErrFewSizes = errors.New("fewer than two distinct message sizes")

// ErrLatencyOnly is returned, wrapped, by FitCollective when the
// largest message's bandwidth term S/β is under a hundredth of its time:
// every size is in the latency regime, and β is not measured.
var ErrLatencyOnly = errors.New("every size in the latency regime")

// FitCollective fits T(S) = α + S/β to c's points (see CollectiveFit).
func FitCollective(source string, c logs.Collective) CollectiveFit {
	f := CollectiveFit{Source: source, Collective: c}
	sizes := map[units.Bytes]bool{}
	var smax float64
	for _, p := range c.Points {
		if !(p.Time > 0) || math.IsInf(float64(p.Time), 0) || !(p.Bytes >= 0) || math.IsInf(float64(p.Bytes), 0) {
			f.Err = fmt.Errorf("a point of %v in %v: want a size of 0 or more and a time above 0", p.Bytes, p.Time)
			return f
		}
		sizes[p.Bytes] = true
		smax = max(smax, float64(p.Bytes))
		if p.BusBW > f.PeakBusBW {
			f.PeakBusBW, f.PeakBytes = p.BusBW, p.Bytes
		}
	}
	if len(sizes) < 2 {
		f.Err = fmt.Errorf("%w: %d", ErrFewSizes, len(sizes))
		return f
	}
	// T = α + c·S, each point weighted 1/T².
	x := make([]float64, len(c.Points))
	y := make([]float64, len(c.Points))
	w := make([]float64, len(c.Points))
	for i, p := range c.Points {
		x[i], y[i] = float64(p.Bytes), float64(p.Time)
		w[i] = 1 / (y[i] * y[i])
	}
	alpha, slope := stat.LinearRegression(x, y, w, false)
	if !(alpha >= 0) {
		alpha, slope = stat.LinearRegression(x, y, w, true) // through the origin
	}
	if !(slope >= 0) || math.IsInf(slope, 0) {
		f.Err = errors.New("the time does not grow with the message size")
		return f
	}
	if slope*smax < 0.01*(alpha+slope*smax) {
		f.Latency = units.Seconds(stat.Mean(y, w))
		f.Err = fmt.Errorf("%w: the time grows by under 1%% up to %s, so the bandwidth is not measured", ErrLatencyOnly, units.Bytes(smax))
		return f
	}
	f.Latency, f.Bandwidth = units.Seconds(alpha), units.BytesPerSec(1/slope)
	if k, ok := BusFactor(c.Op, c.Ranks); ok {
		f.BusBandwidth = units.BytesPerSec(float64(f.Bandwidth) * k)
	}
	f.R2 = stat.RSquared(x, y, w, alpha, slope)
	for i := range x {
		f.MaxRelError = max(f.MaxRelError, math.Abs(alpha+slope*x[i]-y[i])/y[i])
	}
	return f
}
