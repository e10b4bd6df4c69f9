package fit

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"scaleplan/internal/units"
)

// ErrFewCounts is returned, wrapped, by Comm for fewer than two distinct
// device counts.
var ErrFewCounts = errors.New("fewer than two distinct device counts")

// CommFit splits the fixed step time t of fits at several device counts p
// into a part that does not grow with p and a ring all-reduce term:
//
//	t(p) = t_fixed + r(p)·t_comm,   r(p) = 2(p−1)/p,   t_comm = S/β,
//
// where S is the gradient size in bytes and β the effective all-reduce
// bandwidth. A ring all-reduce moves 2(p−1)/p·S bytes per rank; its
// latency term 2(p−1)·α is small next to the bandwidth term for gradients
// of megabytes and is absorbed by t_comm. With two device counts the line
// passes through both points; with more it is the weighted least-squares
// line.
type CommFit struct {
	Counts []int           // device counts, as given
	T      []units.Seconds // fixed step time at each count, as given
	// TFixed is the part of t that does not depend on p (t at p = 1).
	TFixed units.Seconds
	// TComm is S/β: what r(p) = 1, that is p = 2, adds to t.
	TComm units.Seconds
	// TFixedInterval and TCommInterval are the confidence intervals at
	// Level; NaN when unknown (two counts without standard errors).
	TFixedInterval, TCommInterval [2]units.Seconds
	Level                         float64
	// GradientSize is S, the bytes all-reduced per step; 0 if not given.
	GradientSize units.Bytes
	// Bandwidth is the effective all-reduce bandwidth β = S/TComm; 0 when
	// GradientSize is 0 or TComm <= 0 (t does not grow with p).
	Bandwidth units.BytesPerSec
	// BandwidthInterval is S over the ends of TCommInterval; its upper end
	// is +Inf when TCommInterval reaches 0.
	BandwidthInterval [2]units.BytesPerSec
	// Exact reports that there were two device counts: the line passes
	// through both.
	Exact bool
	// Weighted reports that the counts were weighted by 1/se² of their t.
	Weighted bool
}

// Ring returns r(p) = 2(p−1)/p, the fraction of the gradient that each rank
// sends (and receives) in a ring all-reduce over p ranks.
func Ring(p int) float64 {
	return 2 * float64(p-1) / float64(p)
}

// Comm fits t(p) = t_fixed + Ring(p)·t_comm to the fixed step times t at
// device counts p. se, if not nil, holds the standard errors of t (from
// the throughput fits, ThroughputFit.Cov); with all of them finite and > 0
// the counts are weighted by 1/se² and the intervals treat se as known
// (normal quantile). Otherwise the fit is unweighted and the intervals use
// the residual scatter (Student's t with n − 2 degrees of freedom), which
// needs three or more counts. gradient is S; 0 leaves Bandwidth unset.
//
// Comm panics if the lengths of p, t and a non-nil se differ.
func Comm(p []int, t, se []units.Seconds, gradient units.Bytes, s *Settings) (*CommFit, error) {
	if len(p) != len(t) || (se != nil && len(se) != len(t)) {
		panic(badLength)
	}
	set := s.orDefault()
	x := make([]float64, len(p))
	y := make([]float64, len(p))
	for i := range p {
		if p[i] < 1 {
			return nil, fmt.Errorf("device count %d: must be >= 1", p[i])
		}
		if !(t[i] >= 0) || math.IsInf(float64(t[i]), 0) {
			return nil, fmt.Errorf("devices %d: t %v: must be a finite number >= 0", p[i], float64(t[i]))
		}
		x[i], y[i] = Ring(p[i]), float64(t[i])
	}
	if len(distinct(x, nil)) < 2 {
		return nil, fmt.Errorf("%w: have %v", ErrFewCounts, p)
	}
	var w []float64
	if se != nil {
		w = make([]float64, len(se))
		for i, e := range se {
			if !(e > 0) || math.IsInf(float64(e), 0) {
				w = nil
				break
			}
			w[i] = 1 / float64(e*e)
		}
	}
	alpha, beta := stat.LinearRegression(x, y, w, false)
	f := &CommFit{
		Counts: append([]int(nil), p...), T: append([]units.Seconds(nil), t...),
		TFixed: units.Seconds(alpha), TComm: units.Seconds(beta),
		Level: set.Level, GradientSize: gradient,
		Exact: len(p) == 2, Weighted: w != nil,
	}
	nan := units.Seconds(math.NaN())
	f.TFixedInterval = [2]units.Seconds{nan, nan}
	f.TCommInterval = [2]units.Seconds{nan, nan}

	// cov = (XᵀWX)⁻¹ with known weights, s²(XᵀX)⁻¹ without.
	X := mat.NewDense(len(x), 2, nil)
	for i := range x {
		sw := 1.0
		if w != nil {
			sw = math.Sqrt(w[i])
		}
		X.Set(i, 0, sw)
		X.Set(i, 1, sw*x[i])
	}
	var xtx, inv mat.SymDense
	xtx.SymOuterK(1, X.T())
	var chol mat.Cholesky
	q, scale := math.NaN(), 1.0
	switch {
	case w != nil:
		q = distuv.UnitNormal.Quantile(1 - (1-set.Level)/2)
	case len(x) > 2:
		var ssr float64
		for i := range x {
			r := y[i] - alpha - beta*x[i]
			ssr += r * r
		}
		dof := float64(len(x) - 2)
		scale = ssr / dof
		q = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: dof}.Quantile(1 - (1-set.Level)/2)
	}
	if !math.IsNaN(q) && chol.Factorize(&xtx) && chol.InverseTo(&inv) == nil {
		ea := q * math.Sqrt(scale*inv.At(0, 0))
		eb := q * math.Sqrt(scale*inv.At(1, 1))
		f.TFixedInterval = [2]units.Seconds{units.Seconds(alpha - ea), units.Seconds(alpha + ea)}
		f.TCommInterval = [2]units.Seconds{units.Seconds(beta - eb), units.Seconds(beta + eb)}
	}
	if gradient > 0 && beta > 0 {
		S := float64(gradient)
		f.Bandwidth = units.BytesPerSec(S / beta)
		lo, hi := float64(f.TCommInterval[0]), float64(f.TCommInterval[1])
		if !math.IsNaN(lo) {
			up := math.Inf(1)
			if lo > 0 {
				up = S / lo
			}
			f.BandwidthInterval = [2]units.BytesPerSec{units.BytesPerSec(S / hi), units.BytesPerSec(up)}
		} else {
			f.BandwidthInterval = [2]units.BytesPerSec{units.BytesPerSec(math.NaN()), units.BytesPerSec(math.NaN())}
		}
	}
	return f, nil
}
