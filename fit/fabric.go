package fit

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/stat/distuv"

	"scaleplan/fit/logs"
	"scaleplan/internal/calib"
	"scaleplan/internal/units"
)

// FabricModel is a simulator's time of one collective of size bytes on a
// network whose calibrated level has link bandwidth bw and per-message
// latency lat, the rest of the network held as it is. fit does not
// import the simulator: the caller builds the model (scenarios.FabricModel
// does, around sim's collective time).
type FabricModel func(bw units.BytesPerSec, lat units.Seconds, size units.Bytes) (units.Seconds, error)

// FabricTest is one collective test to fit and the model that predicts it.
type FabricTest struct {
	Source string // the log's name and the test's line: "nccl.txt:6"
	logs.Collective
	Model FabricModel
}

// FabricTestFit is how the fitted level predicts one test.
type FabricTestFit struct {
	Source string
	logs.Collective
	// Predicted is the model's time at each point, at the fit.
	Predicted []units.Seconds
	// Error is the mean |predicted − measured|/measured over the points;
	// MaxError the largest.
	Error, MaxError float64
}

// FabricFit is the link bandwidth B and latency L of one level of a
// network that minimise, over every point i of every test,
//
//	Σ ln²(T_model(B, L, S_i) / T_i)
//
// the squared log ratio, so that an 8-byte message timed in microseconds
// and a gigabyte timed in tens of milliseconds count alike. The minimum is
// found by Nelder–Mead over (ln B, ln L), started from the best point of
// a grid around the starting figures and restarted from its optimum until
// it no longer improves; the intervals are the Gauss–Newton ones at Level
// (the Jacobian by central differences, s² the residual variance over
// n − 2 degrees of freedom, Student's t), mapped back from the logs.
type FabricFit struct {
	Bandwidth units.BytesPerSec
	Latency   units.Seconds
	// BandwidthInterval and LatencyInterval are the confidence intervals
	// at Level; NaN where the points do not determine them (two sizes,
	// or a parameter the times do not depend on).
	BandwidthInterval [2]units.BytesPerSec
	LatencyInterval   [2]units.Seconds
	Level             float64
	Tests             []FabricTestFit
	// Error is the mean |predicted − measured|/measured over every point.
	Error float64
	// Sizes is the number of points fitted, over all tests.
	Sizes int
	// Undetermined names the parameter ("bandwidth" or "latency") that no
	// time depends on at the fit (a 1 % change moves no time by
	// minSensitivity %): another link bounds every size, and the figure
	// is where the search stopped, with no interval; nil when both are
	// determined.
	Undetermined []string
}

// ErrUndetermined is returned, wrapped, by FitFabric when the tests'
// times depend on neither the bandwidth nor the latency being fitted.
var ErrUndetermined = errors.New("the tests do not determine the link")

// minSensitivity is the smallest d ln T / d ln x, over the points, that
// FitFabric takes to determine a parameter x: a 1 % change of x must move
// some time by 0.05 %.
const minSensitivity = 0.05

// ErrFabricModel is returned, wrapped, by FitFabric when the model fails
// at the starting point.
var ErrFabricModel = errors.New("the simulator cannot time the tests")

// FitFabric fits the bandwidth and latency of one level to tests (see
// FabricFit), starting from bw0 and lat0 (the catalogue's figures; a
// latency of 0 starts at 1 us). It needs two or more points in all; every
// time must be finite and above 0.
func FitFabric(tests []FabricTest, bw0 units.BytesPerSec, lat0 units.Seconds, s *Settings) (*FabricFit, error) {
	set := s.orDefault()
	n := 0
	for _, t := range tests {
		for _, p := range t.Points {
			if !(p.Time > 0) || math.IsInf(float64(p.Time), 0) || !(p.Bytes > 0) || math.IsInf(float64(p.Bytes), 0) {
				return nil, fmt.Errorf("%s: line %d: size %v, time %v: want both above 0 and finite", t.Source, p.Line, float64(p.Bytes), float64(p.Time))
			}
			n++
		}
	}
	if n < 2 {
		return nil, fmt.Errorf("%w: %d points in all", ErrFewSizes, n)
	}
	if !(bw0 > 0) || math.IsInf(float64(bw0), 0) {
		return nil, fmt.Errorf("starting bandwidth %v: want a finite rate above 0", float64(bw0))
	}
	if !(lat0 > 0) {
		lat0 = units.Microsecond
	}
	res := func(x []float64) ([]float64, error) { return residuals(tests, n, x) }
	x := []float64{math.Log(float64(bw0)), math.Log(float64(lat0))}
	if _, err := res(x); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFabricModel, err)
	}
	x = minimize(res, x)
	f := &FabricFit{Bandwidth: units.BytesPerSec(math.Exp(x[0])), Latency: units.Seconds(math.Exp(x[1])), Level: set.Level, Sizes: n}
	J, err := jacobian(res, x, n)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFabricModel, err)
	}
	for j, name := range []string{"bandwidth", "latency"} {
		var most float64
		for i := range n {
			most = max(most, math.Abs(J.At(i, j)))
		}
		if most < minSensitivity {
			f.Undetermined = append(f.Undetermined, name)
		}
	}
	if len(f.Undetermined) == 2 {
		return nil, fmt.Errorf("%w: no test's time changes by %.2g%% when its bandwidth or its latency changes by 1%% (at %v, %v): other links bound every size",
			ErrUndetermined, minSensitivity, f.Bandwidth, f.Latency)
	}
	f.intervals(res, x, J)
	if err := f.predict(tests); err != nil {
		return nil, err
	}
	return f, nil
}

// residuals returns ln(T_model/T) at every point of tests for x = (ln B,
// ln L).
func residuals(tests []FabricTest, n int, x []float64) ([]float64, error) {
	r := make([]float64, 0, n)
	bw, lat := units.BytesPerSec(math.Exp(x[0])), units.Seconds(math.Exp(x[1]))
	for _, t := range tests {
		for _, p := range t.Points {
			m, err := t.Model(bw, lat, p.Bytes)
			if err != nil {
				return nil, fmt.Errorf("%s: %v at %v, %v: %w", t.Source, p.Bytes, bw, lat, err)
			}
			if !(m > 0) || math.IsInf(float64(m), 0) {
				return nil, fmt.Errorf("%s: %v at %v, %v: the model gives %v", t.Source, p.Bytes, bw, lat, float64(m))
			}
			r = append(r, math.Log(float64(m)/float64(p.Time)))
		}
	}
	return r, nil
}

// searchDecades bounds FitFabric's search: B and L within six decades of
// the starting figures either way. A link the times do not depend on
// would otherwise drift without end; at the bound it is reported as not
// determined.
const searchDecades = 6

// minimize returns the x that minimises the sum of squares of res by
// Nelder–Mead, restarted from each optimum until the sum stops falling
// (at most eight runs). A point where res fails, or more than
// searchDecades from x, costs +Inf.
func minimize(res func([]float64) ([]float64, error), x []float64) []float64 {
	x0 := slices.Clone(x)
	sum := sumSquares(res, func(x []float64) bool {
		return math.Abs(x[0]-x0[0]) > searchDecades*math.Ln10 || math.Abs(x[1]-x0[1]) > searchDecades*math.Ln10
	})
	x, best := gridStart(sum, x)
	conv := &optimize.FunctionConverge{Absolute: 1e-16, Relative: 1e-12, Iterations: 40}
	return nelderMeadRestarts(sum, x, best, conv, 4000, 0.5)
}

// sumSquares returns the sum of squares of res at x, +Inf where out(x)
// or res fails.
func sumSquares(res func([]float64) ([]float64, error), out func([]float64) bool) func([]float64) float64 {
	return func(x []float64) float64 {
		if out(x) {
			return math.Inf(1)
		}
		r, err := res(x)
		if err != nil {
			return math.Inf(1)
		}
		var s float64
		for _, v := range r {
			s += v * v
		}
		return s
	}
}

// nelderMeadRestarts minimises sum from x, where it is best, by
// Nelder–Mead (converging by conv within iters iterations, from a simplex
// of size simplex) restarted from each optimum until the sum stops
// falling by more than a part in 10¹², at most eight runs.
func nelderMeadRestarts(sum func([]float64) float64, x []float64, best float64, conv *optimize.FunctionConverge, iters int, simplex float64) []float64 {
	for range 8 {
		p := optimize.Problem{Func: sum}
		set := &optimize.Settings{Converger: conv, MajorIterations: iters, Concurrent: 1}
		r, err := optimize.Minimize(p, x, set, &optimize.NelderMead{SimplexSize: simplex})
		if r == nil || !(r.F < best) {
			break
		}
		done := best-r.F <= 1e-12*best || err != nil
		x, best = r.X, r.F
		if done {
			break
		}
	}
	return x
}

// jacobian returns d res_i / d x_j at x by central differences.
func jacobian(res func([]float64) ([]float64, error), x []float64, n int) (*mat.Dense, error) {
	J := mat.NewDense(n, len(x), nil)
	const h = 1e-4
	for j := range x {
		xp, xm := slices.Clone(x), slices.Clone(x)
		xp[j] += h
		xm[j] -= h
		rp, err := res(xp)
		if err != nil {
			return nil, err
		}
		rm, err := res(xm)
		if err != nil {
			return nil, err
		}
		for i := range n {
			J.Set(i, j, (rp[i]-rm[i])/(2*h))
		}
	}
	return J, nil
}

// gridStart returns the point of least sum on a grid around x0 (ln B
// from x0 − ln 1000 to x0 + ln 10 by quarter decades, ln L from x0 −
// ln 100 to x0 + ln 100 by half decades) and its sum: where a link that
// is not being fitted bounds the times, the sum is flat around the
// catalogue's figures, and Nelder–Mead started there would not find the
// region where the fitted link matters.
func gridStart(sum func([]float64) float64, x0 []float64) ([]float64, float64) {
	best, fbest := slices.Clone(x0), sum(x0)
	for i := -12; i <= 4; i++ {
		for j := -4; j <= 4; j++ {
			x := []float64{x0[0] + float64(i)*math.Ln10/4, x0[1] + float64(j)*math.Ln10/2}
			if f := sum(x); f < fbest {
				best, fbest = x, f
			}
		}
	}
	return best, fbest
}

// intervals sets f's confidence intervals from the Gauss–Newton
// covariance at x, J the Jacobian of the residuals there, over the
// determined parameters only (an undetermined one's column is about 0 and
// would make JᵀJ singular); NaN where it is not known.
func (f *FabricFit) intervals(res func([]float64) ([]float64, error), x []float64, J *mat.Dense) {
	nan := math.NaN()
	f.BandwidthInterval = [2]units.BytesPerSec{units.BytesPerSec(nan), units.BytesPerSec(nan)}
	f.LatencyInterval = [2]units.Seconds{units.Seconds(nan), units.Seconds(nan)}
	var cols []int
	for j, name := range []string{"bandwidth", "latency"} {
		if !slices.Contains(f.Undetermined, name) {
			cols = append(cols, j)
		}
	}
	n, _ := J.Dims()
	k := len(cols)
	r0, err := res(x)
	if n <= k || err != nil {
		return
	}
	var ssr float64
	for _, v := range r0 {
		ssr += v * v
	}
	Jk := mat.NewDense(n, k, nil)
	for c, j := range cols {
		for i := range n {
			Jk.Set(i, c, J.At(i, j))
		}
	}
	var jtj, inv mat.SymDense
	jtj.SymOuterK(1, Jk.T())
	var chol mat.Cholesky
	if !chol.Factorize(&jtj) || chol.InverseTo(&inv) != nil {
		return
	}
	dof := float64(n - k)
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: dof}.Quantile(1 - (1-f.Level)/2)
	for c, j := range cols {
		e := q * math.Sqrt(ssr/dof*inv.At(c, c))
		lo, hi := math.Exp(x[j]-e), math.Exp(x[j]+e)
		if j == 0 {
			f.BandwidthInterval = [2]units.BytesPerSec{units.BytesPerSec(lo), units.BytesPerSec(hi)}
		} else {
			f.LatencyInterval = [2]units.Seconds{units.Seconds(lo), units.Seconds(hi)}
		}
	}
}

// predict fills f.Tests and f.Error with each test's times at the fit.
func (f *FabricFit) predict(tests []FabricTest) error {
	var sum float64
	for _, t := range tests {
		tf := FabricTestFit{Source: t.Source, Collective: t.Collective}
		for _, p := range t.Points {
			m, err := t.Model(f.Bandwidth, f.Latency, p.Bytes)
			if err != nil {
				return fmt.Errorf("%s: %w", t.Source, err)
			}
			e := math.Abs(float64(m-p.Time)) / float64(p.Time)
			tf.Predicted = append(tf.Predicted, m)
			tf.Error += e / float64(len(t.Points))
			tf.MaxError = max(tf.MaxError, e)
			sum += e
		}
		f.Tests = append(f.Tests, tf)
	}
	f.Error = sum / float64(f.Sizes)
	return nil
}

// Entry returns f as the calibration entry of level (calib.Intra or
// calib.Inter) of system over transport, fitted with the simulator's
// all-reduce algorithm; the mean error rounded to four decimals, the
// intervals left out where they are not known.
func (f *FabricFit) Entry(system, level, transport, algorithm string) calib.FabricEntry {
	e := calib.FabricEntry{System: system, Level: level, Transport: transport, Algorithm: algorithm,
		Bandwidth: f.Bandwidth, Latency: f.Latency, Error: round4(f.Error), Tests: len(f.Tests), Sizes: f.Sizes,
		Undetermined: slices.Clone(f.Undetermined)}
	if bi := f.BandwidthInterval; !math.IsNaN(float64(bi[0])) && !math.IsNaN(float64(bi[1])) {
		e.BandwidthInterval = bi[:]
	}
	if li := f.LatencyInterval; !math.IsNaN(float64(li[0])) && !math.IsNaN(float64(li[1])) {
		e.LatencyInterval = li[:]
	}
	var srcs []string
	for _, t := range f.Tests {
		if len(e.Ranks) == 0 {
			e.Ranks = []int{t.Ranks, t.Ranks}
		}
		e.Ranks[0], e.Ranks[1] = min(e.Ranks[0], t.Ranks), max(e.Ranks[1], t.Ranks)
		name := t.Source
		if i := strings.LastIndex(name, ":"); i > 0 {
			name = name[:i]
		}
		if !slices.Contains(srcs, name) {
			srcs = append(srcs, name)
		}
	}
	e.Source = strings.Join(srcs, ", ")
	return e
}
