package fit

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/stat/distuv"
)

// OperatorParam is one figure of an operator calibration: a class's
// efficiency (Max 1) or the host's cost per kernel (Max 0, unbounded).
type OperatorParam struct {
	Name string
	// Default is the figure before the fit, > 0: where the search starts
	// and what an undetermined figure keeps.
	Default float64
	// Max bounds the figure from above; 0 for no bound.
	Max float64
	// Fixed keeps the figure at Default: measured apart from the rows (a
	// host table's cost per kernel), not fitted to them.
	Fixed bool
}

// OperatorModel returns the predicted time of every row at the figures
// values (one per OperatorParam, each > 0), in the order of the measured
// times.
type OperatorModel func(values []float64) ([]float64, error)

// MaxCollinear is the largest share of a figure's column of sensitivities
// that the other figures' columns may leave unexplained for it to count as
// collinear with them: (1 − R²) of the column regressed on the others
// below 1e-8. Two figures whose rows move the times alike (the host's
// cost per kernel and per step, when every row runs one model, whose
// kernels per step do not change with the batch) cannot both be fitted.
const MaxCollinear = 1e-8

// MaxSpread is the widest interval, High/Low at the fit's Level, of a
// figure the rows determine. A figure fitted with a wider one (a class
// whose rows are all of one model and whose time could go to its
// arithmetic or to its memory traffic alike, such as tensor-tf32 on rows
// of one ResNet-50 sweep: [0.003, 1]) is not measured by them but
// extrapolated; it keeps its default, and the others are fitted again
// without it. A factor 10 is the decade either way of a figure that the
// fit's coordinate search first scans (minimizeBounded): an interval
// wider than that tells less than the scan's own range.
const MaxSpread = 10

// MinShare is the least sensitivity d ln t / d ln figure, over the rows,
// for which a figure counts as determined by them: a class that bounds
// less than 0.1 % of every row's time is not.
const MinShare = 1e-3

// OperatorsFit is the result of FitOperators.
type OperatorsFit struct {
	Params []OperatorParam
	// Values are the fitted figures; an undetermined one is its Default.
	Values []float64
	// Low and High bound each figure at Level (from the Jacobian of the
	// log residuals at the fit); NaN where the fit gives none (an
	// undetermined figure, fewer rows than figures, a singular Jacobian).
	Low, High []float64
	// Undetermined marks the figures no row depended on (MinShare) or
	// that moved the rows' times as figures before them did (Collinear).
	Undetermined []bool
	// Collinear marks the undetermined figures that the rows depended on,
	// but as they did on figures before them (MaxCollinear).
	Collinear []bool
	// Unresolved marks the undetermined figures whose interval at the
	// fit was wider than MaxSpread.
	Unresolved []bool
	// Rows is the rows fitted.
	Rows int
	// ErrorBefore and Error are the mean |predicted/measured − 1| of the
	// rows' times at the defaults and at the fit.
	ErrorBefore, Error float64
	Level              float64
}

// FitOperators fits the figures of params so that f's times match measured
// in the least-squares sense of their logarithms, Σ ln(f_i/measured_i)²,
// by Nelder–Mead over the figures' logarithms within their bounds (from a
// coordinate search over the decade below and above each default). A
// figure no row's time depends on (|d ln t_i / d ln v| < MinShare for
// every row at the defaults) keeps its default and is marked
// Undetermined, and so does one whose interval at the fit is wider than
// MaxSpread (Unresolved): the others are then fitted again without it. A
// Fixed figure keeps its default and has no interval.
func FitOperators(measured []float64, params []OperatorParam, f OperatorModel, s *Settings) (*OperatorsFit, error) {
	set := s.orDefault()
	if len(measured) == 0 || len(params) == 0 {
		return nil, errors.New("operator fit: no rows or no figures to fit")
	}
	for i, m := range measured {
		if !(m > 0) || math.IsInf(m, 0) {
			return nil, fmt.Errorf("operator fit: row %d: measured time %v: want a finite time > 0", i+1, m)
		}
	}
	def := make([]float64, len(params))
	for j, p := range params {
		if !(p.Default > 0) || (p.Max > 0 && p.Default > p.Max) {
			return nil, fmt.Errorf("operator fit: figure %s: default %v: want > 0 and at most %v", p.Name, p.Default, p.Max)
		}
		def[j] = p.Default
	}
	fit := &OperatorsFit{Params: params, Values: slices.Clone(def), Rows: len(measured), Level: set.Level}
	full := func(x []float64, free []int) []float64 {
		v := slices.Clone(def)
		for i, j := range free {
			v[j] = math.Exp(x[i])
		}
		return v
	}
	res := func(free []int) func([]float64) ([]float64, error) {
		return func(x []float64) ([]float64, error) {
			return logResiduals(f, full(x, free), measured)
		}
	}
	all := make([]int, len(params))
	x0 := make([]float64, len(params))
	for j := range params {
		all[j], x0[j] = j, math.Log(def[j])
	}
	J, err := jacobian(res(all), x0, len(measured))
	if err != nil {
		return nil, fmt.Errorf("operator fit: %w", err)
	}
	var free []int
	fit.Undetermined = make([]bool, len(params))
	for j, p := range params {
		if p.Fixed {
			continue // kept at its default, neither fitted nor undetermined
		}
		if colMax(J, j) < MinShare {
			fit.Undetermined[j] = true
		} else {
			free = append(free, j)
		}
	}
	fit.Collinear, fit.Unresolved = make([]bool, len(params)), make([]bool, len(params))
	free = independent(J, free, fit.Undetermined, fit.Collinear)
	if fit.ErrorBefore, err = meanError(f, def, measured); err != nil {
		return nil, fmt.Errorf("operator fit: %w", err)
	}
	for len(free) > 0 {
		lo, hi := searchBounds(params, def, free)
		x := minimizeBounded(res(free), logsOf(def, free), lo, hi)
		fit.Values = full(x, free)
		if fit.Error, err = meanError(f, fit.Values, measured); err != nil {
			return nil, fmt.Errorf("operator fit: %w", err)
		}
		fit.intervals(res(free), x, free, len(measured))
		kept := fit.resolved(free)
		if len(kept) == len(free) {
			return fit, nil
		}
		free = kept
	}
	fit.Values, fit.Error = slices.Clone(def), fit.ErrorBefore
	fit.Low, fit.High = nanSlice(len(params)), nanSlice(len(params))
	return fit, nil
}

// resolved returns the figures of free whose interval is at most
// MaxSpread wide (or not known), marking the others Undetermined and
// Unresolved.
func (f *OperatorsFit) resolved(free []int) []int {
	var kept []int
	for _, j := range free {
		if f.High[j]/f.Low[j] > MaxSpread {
			f.Undetermined[j], f.Unresolved[j] = true, true
			continue
		}
		kept = append(kept, j)
	}
	return kept
}

// logsOf returns the logarithms of def's figures free.
func logsOf(def []float64, free []int) []float64 {
	x := make([]float64, len(free))
	for i, j := range free {
		x[i] = math.Log(def[j])
	}
	return x
}

// searchBounds returns the bounds of the search over the logarithms of
// the figures free: searchDecades either side of each default, the high
// end cut at the figure's Max.
func searchBounds(params []OperatorParam, def []float64, free []int) (lo, hi []float64) {
	lo, hi = make([]float64, len(free)), make([]float64, len(free))
	for i, j := range free {
		x := math.Log(def[j])
		lo[i], hi[i] = x-searchDecades*math.Ln10, x+searchDecades*math.Ln10
		if params[j].Max > 0 {
			hi[i] = math.Log(params[j].Max)
		}
	}
	return lo, hi
}

// independent returns the figures of free whose columns of J are not
// collinear with those of the figures before them (MaxCollinear), marking
// the others undetermined and collinear: of two that move the rows' times alike, the
// later in params keeps its default.
func independent(J *mat.Dense, free []int, undetermined, collinear []bool) []int {
	var kept []int
	for _, j := range free {
		if len(kept) > 0 && unexplained(J, kept, j) < MaxCollinear {
			undetermined[j], collinear[j] = true, true
			continue
		}
		kept = append(kept, j)
	}
	return kept
}

// unexplained returns the share of column j's squared norm that the least
// squares fit of it by the columns cols of J leaves: 1 − R² without an
// intercept.
func unexplained(J *mat.Dense, cols []int, j int) float64 {
	n, _ := J.Dims()
	A := mat.NewDense(n, len(cols), nil)
	for k, c := range cols {
		for i := range n {
			A.Set(i, k, J.At(i, c))
		}
	}
	y := mat.NewVecDense(n, nil)
	for i := range n {
		y.SetVec(i, J.At(i, j))
	}
	var x, fitted, r mat.VecDense
	if err := x.SolveVec(A, y); err != nil {
		return 1
	}
	fitted.MulVec(A, &x)
	r.SubVec(y, &fitted)
	yy := mat.Dot(y, y)
	if yy == 0 {
		return 0
	}
	return mat.Dot(&r, &r) / yy
}

// logResiduals returns ln(f_i(v)/measured_i).
func logResiduals(f OperatorModel, v, measured []float64) ([]float64, error) {
	t, err := f(v)
	if err != nil {
		return nil, err
	}
	if len(t) != len(measured) {
		return nil, fmt.Errorf("model gave %d times for %d rows", len(t), len(measured))
	}
	r := make([]float64, len(t))
	for i := range t {
		if !(t[i] > 0) || math.IsInf(t[i], 0) {
			return nil, fmt.Errorf("row %d: predicted time %v", i+1, t[i])
		}
		r[i] = math.Log(t[i] / measured[i])
	}
	return r, nil
}

// meanError returns the mean |f_i(v)/measured_i − 1|.
func meanError(f OperatorModel, v, measured []float64) (float64, error) {
	t, err := f(v)
	if err != nil {
		return 0, err
	}
	var s float64
	for i := range measured {
		s += math.Abs(t[i]/measured[i] - 1)
	}
	return s / float64(len(measured)), nil
}

// colMax returns the largest |J_ij| of column j.
func colMax(J *mat.Dense, j int) float64 {
	r, _ := J.Dims()
	var m float64
	for i := range r {
		m = math.Max(m, math.Abs(J.At(i, j)))
	}
	return m
}

// minimizeBounded returns the x in [lo, hi] that minimises the sum of
// squares of res: a coordinate search (each coordinate over 0.05-decade
// steps within a decade of where it is, twice), then Nelder–Mead
// restarted from each optimum until the sum stops falling (at most eight
// runs). A point outside the bounds, or where res fails, costs +Inf.
func minimizeBounded(res func([]float64) ([]float64, error), x, lo, hi []float64) []float64 {
	sum := sumSquares(res, func(x []float64) bool {
		for i := range x {
			if x[i] < lo[i] || x[i] > hi[i] {
				return true
			}
		}
		return false
	})
	x = slices.Clone(x)
	best := sum(x)
	for range 2 {
		for i := range x {
			c := x[i]
			for k := -20; k <= 20; k++ {
				y := slices.Clone(x)
				y[i] = c + float64(k)*0.05*math.Ln10
				if v := sum(y); v < best {
					x, best = y, v
				}
			}
		}
	}
	conv := &optimize.FunctionConverge{Absolute: 1e-18, Relative: 1e-13, Iterations: 60}
	return nelderMeadRestarts(sum, x, best, conv, 20000, 0.2)
}

// intervals sets Low and High from the Jacobian of the log residuals at x
// (the free figures' logarithms): cov = s²(JᵀJ)⁻¹ with s² the residual
// variance over n − p degrees of freedom, and ln v ± t·√cov_jj, the high
// end cut at the figure's bound.
func (f *OperatorsFit) intervals(res func([]float64) ([]float64, error), x []float64, free []int, n int) {
	f.Low, f.High = nanSlice(len(f.Params)), nanSlice(len(f.Params))
	p := len(free)
	if n <= p {
		return
	}
	r, err := res(x)
	if err != nil {
		return
	}
	J, err := jacobian(res, x, n)
	if err != nil {
		return
	}
	var ssr float64
	for _, v := range r {
		ssr += v * v
	}
	s2 := ssr / float64(n-p)
	var jtj, inv mat.Dense
	jtj.Mul(J.T(), J)
	if err := inv.Inverse(&jtj); err != nil {
		return
	}
	tq := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - p)}.Quantile(0.5 + f.Level/2)
	for i, j := range free {
		v := inv.At(i, i) * s2
		if !(v >= 0) || math.IsInf(v, 0) {
			continue
		}
		h := tq * math.Sqrt(v)
		f.Low[j], f.High[j] = math.Exp(x[i]-h), math.Exp(x[i]+h)
		if m := f.Params[j].Max; m > 0 {
			f.High[j] = math.Min(f.High[j], m)
		}
	}
}
