package fit

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/stat/distuv"
)

// Panic messages for programmer errors.
const (
	badLength = "fit: slice lengths do not match"
	badLevel  = "fit: confidence level outside (0, 1)"
)

// Settings control the least-squares fits of Throughput and Steps. A nil
// *Settings means the defaults.
type Settings struct {
	// Level is the confidence level of the intervals, in (0, 1).
	// Default 0.95.
	Level float64

	// OutlierLevel is the family-wise significance level of the outlier
	// test: a point is excluded when the two-sided p-value of its
	// standardized prediction residual is below OutlierLevel/n, with n the
	// number of points still in the fit (Bonferroni). Default 0.01. A
	// negative value turns the test off.
	OutlierLevel float64

	// MaxExcluded is the largest fraction of the points the outlier test
	// may exclude. Default 0.2.
	MaxExcluded float64
}

// DefaultSettings are the settings a nil *Settings stands for.
var DefaultSettings = Settings{Level: 0.95, OutlierLevel: 0.01, MaxExcluded: 0.2}

func (s *Settings) orDefault() Settings {
	if s == nil {
		return DefaultSettings
	}
	d := *s
	if d.Level == 0 {
		d.Level = DefaultSettings.Level
	}
	if !(d.Level > 0 && d.Level < 1) {
		panic(badLevel)
	}
	if d.OutlierLevel == 0 {
		d.OutlierLevel = DefaultSettings.OutlierLevel
	}
	if d.MaxExcluded == 0 {
		d.MaxExcluded = DefaultSettings.MaxExcluded
	}
	return d
}

// curve is a two-parameter law y = f(x; a, c) with a > 0 and c >= 0 that
// is the constant y = a where c = 0. eval returns f and its partial
// derivatives with respect to a and c.
type curve interface {
	eval(x, a, c float64) (f, fa, fc float64)
}

// lsq is a weighted least-squares fit of a curve with relative errors,
//
//	y_i = f(x_i; a, c) · (1 + ε_i),  ε_i ~ N(0, s²),
//
// and an outlier test that leaves out one batch size at a time.
type lsq struct {
	a, c     float64
	bound    bool          // c is held at its bound 0
	s        float64       // standard deviation of the relative residuals; NaN when dof = 0
	ssr      float64       // sum of the squared relative residuals of the points used
	ainv     [2][2]float64 // (JᵀJ)⁻¹ of the free parameters; NaN when singular
	dof      int           // points used minus free parameters
	used     int           // points used
	cov      [2][2]float64 // covariance of (a, c); NaN when unknown
	aInt     [2]float64    // confidence interval of a
	cInt     [2]float64    // confidence interval of c
	r2       float64       // 1 − SS_res/SS_tot of y over the points used
	fitted   []float64     // f(x_i) for every point
	resid    []float64     // (y_i − f_i)/f_i for every point
	z        []float64     // standardized prediction residuals; NaN where not tested
	excluded []bool        // points the outlier test excluded
	lof      *LackOfFit    // nil when the test cannot run
}

// solve fits cv to (x, y) starting from (a0, c0); cs is the scale of c.
// The caller has checked that x and y are finite and positive and that x
// holds at least two distinct values.
func solve(cv curve, x, y []float64, a0, c0, cs float64, set Settings) *lsq {
	n := len(x)
	keep := make([]bool, n)
	for i := range keep {
		keep[i] = true
	}
	a, c, bound := fitKept(cv, x, y, keep, a0, c0, cs)
	l := summarize(cv, x, y, keep, a, c, bound, set.Level)
	maxEx := int(set.MaxExcluded * float64(n))
	excluded := 0
	for {
		worst, p := l.predictionTest(cv, x, keep)
		if worst < 0 || excluded >= maxEx || !(p < set.OutlierLevel/float64(l.used)) {
			break
		}
		keep[worst] = false
		excluded++
		a, c, bound = fitKept(cv, x, y, keep, a, c, cs)
		l = summarize(cv, x, y, keep, a, c, bound, set.Level)
	}
	// Excluded points are standardized against the final fit.
	for i := range x {
		if keep[i] {
			continue
		}
		l.excluded[i] = true
		if h := l.hat(cv, x[i]); l.s > 0 && !math.IsNaN(h) {
			l.z[i] = l.resid[i] / (l.s * math.Sqrt(1+h))
		}
	}
	l.lof = l.lackOfFit(x, y, keep)
	return l
}

// LackOfFit is the test of a fitted law against repeated measurements:
// with points measured more than once at the same batch size, the sum of
// the squared relative residuals splits exactly into the scatter of the
// repeats about their batch's mean (pure error) and the distance of those
// means from the law (lack of fit),
//
//	Σ ((y − f)/f)² = Σ ((y − ȳ_b)/f_b)² + Σ_b n_b ((ȳ_b − f_b)/f_b)²,
//	   SS_res      =       SS_pe        +          SS_lof,
//
// because the law's value f_b is the same for every point of batch b. If
// the law is right, F = (SS_lof/(c − p)) / (SS_pe/(n − c)), with n points
// at c batch sizes and p fitted parameters, follows the F distribution
// with (c − p, n − c) degrees of freedom (Draper and Smith, Applied
// Regression Analysis, ch. 2). A low R² with a large P says the points
// scatter more than the law misses them: the measurements, not the law,
// are what to improve.
type LackOfFit struct {
	// PureError is the standard deviation of the relative scatter of the
	// repeats, √(SS_pe/(n − c)), e.g. 0.05 for 5 %.
	PureError float64
	// F is the ratio of the mean squares of lack of fit and pure error.
	F float64
	// DF are the degrees of freedom (c − p, n − c).
	DF [2]int
	// P is the probability of an F at least this large if the law were
	// right; below a chosen level (such as 0.05) the law does not
	// describe the points within their scatter.
	P float64
}

// lackOfFit returns the lack-of-fit test of l over the kept points, or
// nil when it cannot run: no batch size measured twice, no degree of
// freedom left for the lack of fit (c <= p), or repeats that agree to
// rounding (SS_pe at most 1e-24 per point).
func (l *lsq) lackOfFit(x, y []float64, keep []bool) *LackOfFit {
	xs, groups := groupKept(x, keep)
	p := freeParams(l.bound)
	c := len(xs)
	dfLOF, dfPE := c-p, l.used-c
	if dfLOF < 1 || dfPE < 1 {
		return nil
	}
	var sspe float64
	for _, xb := range xs {
		idx := groups[xb]
		var sum float64
		for _, i := range idx {
			sum += y[i]
		}
		mean := sum / float64(len(idx))
		for _, i := range idx {
			d := (y[i] - mean) / l.fitted[i]
			sspe += d * d
		}
	}
	if !(sspe > float64(l.used)*1e-24) { // repeats that agree to rounding
		return nil
	}
	sslof := max(l.ssr-sspe, 0) // ≥ 0 but for rounding
	f := (sslof / float64(dfLOF)) / (sspe / float64(dfPE))
	return &LackOfFit{
		PureError: math.Sqrt(sspe / float64(dfPE)),
		F:         f,
		DF:        [2]int{dfLOF, dfPE},
		P:         distuv.F{D1: float64(dfLOF), D2: float64(dfPE)}.Survival(f),
	}
}

// freeParams returns the number of parameters a fit adjusts: 2, or 1
// when c sits on its bound 0.
func freeParams(bound bool) int {
	if bound {
		return 1
	}
	return 2
}

// groupKept returns the distinct x of the kept points in increasing order
// (so that every use visits them the same way every run) and, for each,
// the indices of its kept points.
func groupKept(x []float64, keep []bool) (xs []float64, groups map[float64][]int) {
	groups = map[float64][]int{}
	for i := range x {
		if !keep[i] {
			continue
		}
		if _, ok := groups[x[i]]; !ok {
			xs = append(xs, x[i])
		}
		groups[x[i]] = append(groups[x[i]], i)
	}
	sort.Float64s(xs)
	return xs, groups
}

// predictionTest leaves out each batch size in turn and standardizes the
// left-out points' relative residuals by their prediction error. The
// left-out fits are the exact group-deletion formulas of the linearized
// model: for the m kept points at one batch, whose Jacobian rows are all j,
// with h = j (JᵀJ)⁻¹ jᵀ and g = h/(1 − m h),
//
//	e_(i) = e_i + g Σ e,   var e_(i) = s²_(G) (1 + g),
//	s²_(G) = (SSR − Σ e² − g (Σ e)²) / (n − m − p).
//
// It writes every kept point's z into l.z and returns the index and the
// two-sided p-value (Student's t with n − m − p degrees of freedom) of the
// most extreme one, or -1 when the test cannot run: fewer than three
// distinct batch sizes, or no degree of freedom left.
func (l *lsq) predictionTest(cv curve, x []float64, keep []bool) (worst int, pmin float64) {
	worst, pmin = -1, 1.0
	xs, groups := groupKept(x, keep)
	if len(xs) < 3 {
		return worst, pmin
	}
	p := freeParams(l.bound)
	for _, xb := range xs {
		idx := groups[xb]
		var sum, sum2 float64
		for _, i := range idx {
			sum += l.resid[i]
			sum2 += l.resid[i] * l.resid[i]
		}
		m := len(idx)
		dof := l.used - m - p
		h := l.hat(cv, xb)
		den := 1 - float64(m)*h
		if dof < 1 || math.IsNaN(h) || den <= 1e-12 {
			continue
		}
		g := h / den
		ssr := l.ssr - sum2 - g*sum*sum
		if !(ssr > 0) {
			continue
		}
		sg := math.Sqrt(ssr / float64(dof))
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(dof)}
		for _, i := range idx {
			l.z[i] = (l.resid[i] + g*sum) / (sg * math.Sqrt(1+g))
			if pv := 2 * t.Survival(math.Abs(l.z[i])); pv < pmin {
				worst, pmin = i, pv
			}
		}
	}
	return worst, pmin
}

// fitKept minimizes the weighted sum of squares over the kept points with
// weights 1/f², recomputed from the previous estimate for up to four
// passes. If the optimum has c < 0 the bound is active and the fit is
// redone with c = 0, where f = a and the solution is the mean of y.
func fitKept(cv curve, x, y []float64, keep []bool, a, c, cs float64) (float64, float64, bool) {
	w := make([]float64, len(x))
	for pass := 0; pass < 4; pass++ {
		for i := range x {
			if !keep[i] {
				continue
			}
			f, _, _ := cv.eval(x[i], a, c)
			if !(f > 0) || math.IsInf(f, 0) {
				f = y[i]
			}
			w[i] = 1 / (f * f)
		}
		an, cn, ok := newton(cv, x, y, keep, w, a, c, cs)
		if !ok {
			break
		}
		done := math.Abs(an-a) <= 1e-10*a && math.Abs(cn-c) <= 1e-10*cs
		a, c = an, cn
		if done {
			break
		}
	}
	if c >= 0 {
		return a, c, false
	}
	var sum float64
	for i := range y {
		if keep[i] {
			sum += y[i]
		}
	}
	return sum / float64(count(keep)), 0, true
}

// newton minimizes ½ Σ w_i (y_i − f_i)² over u = (ln a, c/cs) with
// gonum's Newton method and the Gauss–Newton Hessian JᵀWJ, a
// Levenberg–Marquardt-like iteration: Newton adds a multiple of the
// identity where JᵀWJ is not positive definite.
func newton(cv curve, x, y []float64, keep []bool, w []float64, a, c, cs float64) (float64, float64, bool) {
	// sums accumulates the objective, gradient and Gauss–Newton Hessian.
	sums := func(u []float64) (F float64, g [2]float64, h [3]float64, ok bool) {
		a, c := math.Exp(u[0]), u[1]*cs
		for i := range x {
			if !keep[i] {
				continue
			}
			f, fa, fc := cv.eval(x[i], a, c)
			if !(f > 0) || math.IsInf(f, 0) || math.IsNaN(fa) || math.IsNaN(fc) {
				return math.Inf(1), g, h, false
			}
			r := y[i] - f
			ja, jc := fa*a, fc*cs // chain rule for u
			F += w[i] * r * r
			g[0] -= w[i] * r * ja
			g[1] -= w[i] * r * jc
			h[0] += w[i] * ja * ja
			h[1] += w[i] * ja * jc
			h[2] += w[i] * jc * jc
		}
		return F / 2, g, h, true
	}
	// gonum asks for F, the gradient and the Hessian at a location in
	// separate calls; one pass over the points gives all three.
	var (
		lastU  = [2]float64{math.NaN(), math.NaN()}
		lastF  float64
		lastG  [2]float64
		lastH  [3]float64
		cached = func(u []float64) {
			if u[0] != lastU[0] || u[1] != lastU[1] {
				lastF, lastG, lastH, _ = sums(u)
				lastU = [2]float64{u[0], u[1]}
			}
		}
	)
	p := optimize.Problem{
		Func: func(u []float64) float64 {
			cached(u)
			return lastF
		},
		Grad: func(grad, u []float64) {
			cached(u)
			grad[0], grad[1] = lastG[0], lastG[1]
		},
		Hess: func(hess *mat.SymDense, u []float64) {
			cached(u)
			hess.SetSym(0, 0, lastH[0])
			hess.SetSym(0, 1, lastH[1])
			hess.SetSym(1, 1, lastH[2])
		},
	}
	u0 := []float64{math.Log(a), c / cs}
	if F, _, _, ok := sums(u0); !ok || math.IsInf(F, 0) {
		return a, c, false
	}
	set := &optimize.Settings{
		GradientThreshold: 1e-11,
		MajorIterations:   200,
		FuncEvaluations:   2000,
		Converger:         &optimize.FunctionConverge{Absolute: 1e-15, Relative: 1e-13, Iterations: 20},
	}
	res, err := optimize.Minimize(p, u0, set, &optimize.Newton{Linesearcher: &optimize.Backtracking{}})
	if res == nil || math.IsNaN(res.F) || math.IsInf(res.F, 0) {
		return a, c, false
	}
	// A line search that cannot improve on a point at the optimum ends
	// with an error; the location is still the best found.
	_ = err
	an, cn := math.Exp(res.X[0]), res.X[1]*cs
	if !(an > 0) || math.IsInf(an, 0) || math.IsNaN(cn) {
		return a, c, false
	}
	return an, cn, true
}

// summarize computes residuals, the covariance, intervals and R² of the fit
// (a, c) over the kept points.
func summarize(cv curve, x, y []float64, keep []bool, a, c float64, bound bool, level float64) *lsq {
	n := len(x)
	l := &lsq{
		a: a, c: c, bound: bound,
		fitted: make([]float64, n), resid: make([]float64, n),
		z: nanSlice(n), excluded: make([]bool, n),
	}
	used := count(keep)
	l.used = used
	l.dof = used - freeParams(bound)
	jac := mat.NewDense(used, 2, nil)
	var ssr, ssAbs, sumY float64
	k := 0
	for i := range x {
		f, fa, fc := cv.eval(x[i], a, c)
		l.fitted[i] = f
		l.resid[i] = (y[i] - f) / f
		if !keep[i] {
			continue
		}
		jac.Set(k, 0, fa/f)
		jac.Set(k, 1, fc/f)
		k++
		ssr += l.resid[i] * l.resid[i]
		d := y[i] - f
		ssAbs += d * d
		sumY += y[i]
	}
	// R² of y: SS_res over SS_tot about the mean of the kept y.
	mean := sumY / float64(used)
	var sst float64
	for i := range y {
		if keep[i] {
			sst += (y[i] - mean) * (y[i] - mean)
		}
	}
	// Equal y (sst zero, or rounding of the mean) are met by the constant
	// curve (c = 0) up to the rounding of its parameters: R² is 1 then.
	tiny := float64(used) * (1e-12 * mean) * (1e-12 * mean)
	switch {
	case sst > tiny:
		l.r2 = 1 - ssAbs/sst
	case ssAbs <= tiny:
		l.r2 = 1
	default:
		l.r2 = math.NaN()
	}
	l.ssr = ssr
	l.s = math.NaN()
	if l.dof > 0 {
		l.s = math.Sqrt(ssr / float64(l.dof))
	}
	for i := range l.cov {
		l.cov[i] = [2]float64{math.NaN(), math.NaN()}
		l.ainv[i] = [2]float64{math.NaN(), math.NaN()}
	}
	l.aInt = [2]float64{math.NaN(), math.NaN()}
	l.cInt = [2]float64{math.NaN(), math.NaN()}

	// cov = s² (JᵀJ)⁻¹ with J the Jacobian of the relative residuals.
	var jtj mat.SymDense
	jtj.SymOuterK(1, jac.T())
	var chol mat.Cholesky
	var inv mat.SymDense
	full := chol.Factorize(&jtj)
	if full {
		if err := chol.InverseTo(&inv); err != nil {
			full = false
		}
	}
	switch {
	case bound && jtj.At(0, 0) > 0:
		l.ainv[0][0] = 1 / jtj.At(0, 0)
	case !bound && full:
		l.ainv = [2][2]float64{{inv.At(0, 0), inv.At(0, 1)}, {inv.At(1, 0), inv.At(1, 1)}}
	}
	if l.dof <= 0 || !(l.s >= 0) {
		return l
	}
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(l.dof)}.Quantile(1 - (1-level)/2)
	s2 := l.s * l.s
	switch {
	case !bound && full:
		l.cov = [2][2]float64{{s2 * inv.At(0, 0), s2 * inv.At(0, 1)}, {s2 * inv.At(1, 0), s2 * inv.At(1, 1)}}
		ea, ec := q*math.Sqrt(l.cov[0][0]), q*math.Sqrt(l.cov[1][1])
		l.aInt = [2]float64{math.Max(0, a-ea), a + ea}
		l.cInt = [2]float64{math.Max(0, c-ec), c + ec}
	case bound:
		if jtj.At(0, 0) > 0 {
			l.cov[0][0] = s2 / jtj.At(0, 0)
			ea := q * math.Sqrt(l.cov[0][0])
			l.aInt = [2]float64{math.Max(0, a-ea), a + ea}
		}
		if full {
			// c sits on its bound: the interval is one-sided, [0, q·se].
			l.cInt = [2]float64{0, q * l.s * math.Sqrt(inv.At(1, 1))}
		}
	}
	return l
}

// hat returns j (JᵀJ)⁻¹ jᵀ for the relative Jacobian row j of a point at
// x: the leverage of a point of the fit, or the variance factor of a
// prediction there.
func (l *lsq) hat(cv curve, x float64) float64 {
	f, fa, fc := cv.eval(x, l.a, l.c)
	ja, jc := fa/f, fc/f
	if l.bound {
		return ja * ja * l.ainv[0][0]
	}
	return ja*ja*l.ainv[0][0] + 2*ja*jc*l.ainv[0][1] + jc*jc*l.ainv[1][1]
}

func count(keep []bool) int {
	n := 0
	for _, k := range keep {
		if k {
			n++
		}
	}
	return n
}

// distinct returns the distinct values of x at the kept points, ascending.
func distinct(x []float64, keep []bool) []float64 {
	var xs []float64
	for i, v := range x {
		if keep == nil || keep[i] {
			xs = append(xs, v)
		}
	}
	sort.Float64s(xs)
	out := xs[:0]
	for i, v := range xs {
		if i == 0 || v != xs[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func nanSlice(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = math.NaN()
	}
	return s
}

func median(x []float64) float64 {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
