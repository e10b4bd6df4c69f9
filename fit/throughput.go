package fit

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"scaleplan/internal/units"
)

// ErrFewBatches is returned, wrapped, for data with fewer than two distinct
// batch sizes: one batch size cannot separate v0 from t.
var ErrFewBatches = errors.New("fewer than two distinct batch sizes")

// ThroughputFit is the throughput law fitted to one group of measurements.
type ThroughputFit struct {
	// V0 is the throughput at infinite batch, samples per second over the
	// whole device group.
	V0 float64
	// T is the fixed time per step that does not grow with the batch.
	T units.Seconds
	// V0Interval and TInterval are the confidence intervals at Level,
	// clipped to V0 >= 0 and T >= 0; NaN when no degree of freedom is left
	// (two points).
	V0Interval [2]float64
	TInterval  [2]units.Seconds
	// Level is the confidence level of the intervals, e.g. 0.95.
	Level float64
	// Cov is the covariance of (V0, T) in samples/s and seconds; NaN when
	// unknown.
	Cov [2][2]float64
	// R2 is the coefficient of determination of v over the points used.
	R2 float64
	// S is the standard deviation of the relative residuals (v − v̂)/v̂
	// of the points used, e.g. 0.02 for 2 % noise; NaN with two points.
	S float64
	// LackOfFit tests the law against repeated measurements of the same
	// batch; nil without them (see LackOfFit).
	LackOfFit *LackOfFit
	// Used is the number of points in the fit and DOF = Used − 2 (Used − 1
	// when T sits on its bound 0).
	Used, DOF int
	// Bound reports that the unconstrained optimum had T < 0 and T was
	// held at 0; TInterval is then one-sided, [0, upper].
	Bound bool
	// V0Unbounded reports that the points do not bound v0 at all: over
	// the batches measured the step time does not grow with the batch by
	// more than their scatter, the regression's time per sample 1/v0 is
	// not above its own standard error (with two points, not above 0),
	// and v = b/t explains them as well. V0 is then where the least
	// squares stopped, as large as it drifted, and means nothing; only T
	// is determined. Larger batches, where the time per sample shows,
	// bound it.
	//
	// Whether or not V0Unbounded is set, when 1/v0 is within its error of
	// 0 at Level the points give v0 no upper limit: V0Interval is then
	// [lower, +Inf], lower being the smallest v0 they allow (+Inf when
	// they fit v = b/t exactly). With two points there is no error to
	// judge by, and the interval stays NaN.
	V0Unbounded bool
	// Start is the linear-regression estimate the refinement started from.
	Start struct {
		V0 float64
		T  units.Seconds
	}

	// Per input point, in input order:
	Fitted    []float64 // v̂ = b/(b/V0 + T), samples/s
	Residuals []float64 // relative residual (v − v̂)/v̂
	Z         []float64 // standardized prediction residual (see Settings.OutlierLevel); NaN where not tested
	Excluded  []bool    // points the law does not explain, left out of the fit
}

// Predict returns the throughput the law gives at batch b, samples/s.
func (f *ThroughputFit) Predict(b float64) float64 {
	return b / (b/f.V0 + float64(f.T))
}

// StepTime returns the time of one step at batch b: b/V0 + T.
func (f *ThroughputFit) StepTime(b float64) units.Seconds {
	return units.Seconds(b/f.V0) + f.T
}

// throughputLaw is v = b v0 / (b + v0 t), with a = v0 and c = t.
type throughputLaw struct{}

func (throughputLaw) eval(b, v0, t float64) (f, fv0, ft float64) {
	d := b + v0*t
	f = b * v0 / d
	fv0 = b * b / (d * d)
	ft = -b * v0 * v0 / (d * d)
	return f, fv0, ft
}

// Throughput fits the throughput law
//
//	v = b / (b/v0 + t)
//
// to batches b (samples per step over the device group) and throughputs v
// (samples per second over the device group). It starts from the weighted
// linear regression
//
//	1/v = 1/v0 + t · (1/b),  weights v²,
//
// and refines (v0, t) by weighted nonlinear least squares on v with
// weights 1/v̂², which treats the noise as relative (multiplicative),
// keeping v0 > 0 and t >= 0. Points the law does not explain are excluded
// by the test described at Settings.OutlierLevel.
//
// Throughput panics if b and v differ in length. It returns an error for
// a value that is not a finite number > 0 and for fewer than two distinct
// batch sizes (ErrFewBatches).
func Throughput(b, v []float64, s *Settings) (*ThroughputFit, error) {
	if len(b) != len(v) {
		panic(badLength)
	}
	set := s.orDefault()
	if err := checkPositive(b, v, "batch", "throughput"); err != nil {
		return nil, err
	}
	if xs := distinct(b, nil); len(xs) < 2 {
		return nil, fewBatches(b)
	}
	x, y := make([]float64, len(b)), make([]float64, len(b))
	w := make([]float64, len(b))
	for i := range b {
		x[i], y[i], w[i] = 1/b[i], 1/v[i], v[i]*v[i]
	}
	alpha, beta := stat.LinearRegression(x, y, w, false)
	v0, t := 1/alpha, beta
	if !(alpha > 0) || math.IsInf(v0, 0) {
		v0 = 1.05 * maxOf(v)
	}
	if !(t >= 0) || math.IsInf(t, 0) {
		t = 0
	}
	cs := median(b) / v0 // time scale of t: the batch term at the median batch
	l := solve(throughputLaw{}, b, v, v0, t, cs, set)
	f := &ThroughputFit{
		V0: l.a, T: units.Seconds(l.c),
		V0Interval: l.aInt,
		TInterval:  [2]units.Seconds{units.Seconds(l.cInt[0]), units.Seconds(l.cInt[1])},
		Level:      set.Level,
		Cov:        l.cov,
		R2:         l.r2, S: l.s, LackOfFit: l.lof, Used: l.used, DOF: l.dof, Bound: l.bound,
		Fitted: l.fitted, Residuals: l.resid, Z: l.z, Excluded: l.excluded,
	}
	f.Start.V0, f.Start.T = v0, units.Seconds(t)
	p, se, upper, open := perSampleBound(b, v, f.Excluded, set.Level)
	f.V0Unbounded = p <= se // NaN (no regression) is not a finding
	if open {
		lo := math.Inf(1)
		if upper > 0 {
			lo = 1 / upper
		}
		f.V0Interval = [2]float64{lo, math.Inf(1)}
	}
	return f, nil
}

// perSampleBound returns the time per sample p = 1/v0 of the weighted
// linear regression of 1/v on 1/b over the kept points, weights v²
// (relative errors, as the fit's start),
//
//	1/v = p + t·(1/b),
//
// with its standard error se(p) = s·√(Σw x² / D), D = Σw·Σw x² − (Σw x)²,
// s² the mean squared relative residual over n − 2 degrees of freedom,
// and the upper confidence limit of p, max(p, 0) + q·se(p), q the Student
// t quantile of the two-sided level. open reports that p is within
// q·se(p) of 0 (or below it): the points give v0 no upper limit. With one
// distinct batch (no regression) p is NaN and open false; with two points
// p is exact, se 0 and open false.
func perSampleBound(b, v []float64, excluded []bool, level float64) (p, se, upper float64, open bool) {
	var sw, swx, swxx, swy, swxy float64
	n := 0
	for i := range b {
		if excluded[i] {
			continue
		}
		x, y, w := 1/b[i], 1/v[i], v[i]*v[i]
		sw, swx, swxx, swy, swxy = sw+w, swx+w*x, swxx+w*x*x, swy+w*y, swxy+w*x*y
		n++
	}
	d := sw*swxx - swx*swx
	if !(d > 0) {
		return math.NaN(), math.NaN(), math.NaN(), false
	}
	p = (swxx*swy - swx*swxy) / d
	t := (sw*swxy - swx*swy) / d
	if n <= 2 {
		return p, 0, math.NaN(), false
	}
	var ss float64
	for i := range b {
		if !excluded[i] {
			r := v[i] * (1/v[i] - p - t/b[i])
			ss += r * r
		}
	}
	se = math.Sqrt(ss / float64(n-2) * swxx / d)
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 2)}.Quantile(1 - (1-level)/2)
	return p, se, max(p, 0) + q*se, !(p > q*se)
}

// checkPositive returns an error for the first x or y that is not a finite
// number > 0.
func checkPositive(x, y []float64, xName, yName string) error {
	for i := range x {
		if !(x[i] > 0) || math.IsInf(x[i], 0) {
			return fmt.Errorf("point %d: %s %v: must be a finite number > 0", i+1, xName, x[i])
		}
		if !(y[i] > 0) || math.IsInf(y[i], 0) {
			return fmt.Errorf("point %d: %s %v: must be a finite number > 0", i+1, yName, y[i])
		}
	}
	return nil
}

func fewBatches(b []float64) error {
	if len(b) == 0 {
		return fmt.Errorf("%w: no points", ErrFewBatches)
	}
	if len(b) == 1 {
		return fmt.Errorf("%w: one point, at batch %v", ErrFewBatches, b[0])
	}
	return fmt.Errorf("%w: all %d points at batch %v", ErrFewBatches, len(b), b[0])
}

func maxOf(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, v)
	}
	return m
}
