package fit

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
)

// RegimeTolerance is the relative distance from an asymptote within which
// a batch counts as being in that asymptote's regime: 0.2, that is 20 %.
const RegimeTolerance = 0.2

// Regime is one of the three regimes of steps-to-target against batch size
// (Shallue et al. 2018; seed 004).
type Regime int

// The regimes, from small to large batch, after Unclassified, the zero
// value, for a batch without a fitted curve.
const (
	Unclassified Regime = iota
	// PerfectScaling: doubling the batch halves the steps. S(B) is within
	// RegimeTolerance of the line S_min·B_noise/B, that is
	// B <= RegimeTolerance·B_noise.
	PerfectScaling
	// DiminishingReturns: between the two asymptotes.
	DiminishingReturns
	// MaximalDataParallelism: more batch, no fewer steps. S(B) is within
	// RegimeTolerance of S_min, that is B >= B_noise/RegimeTolerance.
	MaximalDataParallelism
)

func (r Regime) String() string {
	switch r {
	case Unclassified:
		return "unclassified"
	case PerfectScaling:
		return "perfect scaling"
	case DiminishingReturns:
		return "diminishing returns"
	case MaximalDataParallelism:
		return "maximal data parallelism"
	}
	return fmt.Sprintf("Regime(%d)", int(r))
}

// StepsFit is the steps-to-target curve
//
//	S(B) = S_min · (1 + B_noise/B)
//
// fitted to (global batch, steps) points (McCandlish et al. 2018).
type StepsFit struct {
	// SMin is the number of steps at infinite batch.
	SMin float64
	// BNoise is the noise scale, samples: the batch at which S is twice
	// SMin.
	BNoise float64
	// SMinInterval and BNoiseInterval are the confidence intervals at
	// Level, clipped to >= 0; NaN when no degree of freedom is left.
	SMinInterval, BNoiseInterval [2]float64
	// Level is the confidence level, e.g. 0.95.
	Level float64
	// R2 is the coefficient of determination of S over the points used.
	R2 float64
	// S is the standard deviation of the relative residuals.
	S float64
	// LackOfFit tests the curve against repeated runs at the same batch
	// (several seeds); nil without them (see LackOfFit).
	LackOfFit *LackOfFit
	// Used is the number of points in the fit; DOF = Used − 2 (− 1 when
	// BNoise sits on its bound 0).
	Used, DOF int
	// Bound reports that BNoise was held at 0.
	Bound bool

	// Per input point, in input order:
	Fitted    []float64 // Ŝ(B)
	Residuals []float64 // (S − Ŝ)/Ŝ
	Z         []float64 // standardized prediction residual; NaN where not tested
	Excluded  []bool    // points the curve does not explain
}

// Predict returns S(B), the steps to reach the target at global batch B.
func (f *StepsFit) Predict(B float64) float64 {
	return f.SMin * (1 + f.BNoise/B)
}

// Regime returns the regime of the fitted curve at global batch B:
//
//	B <= RegimeTolerance · B_noise   PerfectScaling          (S within 20 % of S_min·B_noise/B)
//	B >= B_noise / RegimeTolerance   MaximalDataParallelism  (S within 20 % of S_min)
//	otherwise                        DiminishingReturns
func (f *StepsFit) Regime(B float64) Regime {
	return regimeOf(B, f.BNoise)
}

func regimeOf(B, bNoise float64) Regime {
	switch {
	case B*RegimeTolerance >= bNoise:
		return MaximalDataParallelism
	case B <= RegimeTolerance*bNoise:
		return PerfectScaling
	}
	return DiminishingReturns
}

// stepsLaw is S = S_min (1 + B_noise/B), with a = S_min and c = B_noise.
type stepsLaw struct{}

func (stepsLaw) eval(B, sMin, bNoise float64) (f, fs, fb float64) {
	return sMin * (1 + bNoise/B), 1 + bNoise/B, sMin / B
}

// Steps fits S(B) = S_min·(1 + B_noise/B) to global batches B and steps to
// target S. It starts from the weighted linear regression
//
//	S = S_min + (S_min·B_noise) · (1/B),  weights 1/S²,
//
// and refines (S_min, B_noise) by the same relative-error least squares
// and outlier test as Throughput, with S_min > 0 and B_noise >= 0.
//
// Steps panics if batch and steps differ in length. It returns an error for
// a value that is not a finite number > 0 and for fewer than two distinct
// batch sizes.
func Steps(batch, steps []float64, s *Settings) (*StepsFit, error) {
	if len(batch) != len(steps) {
		panic(badLength)
	}
	set := s.orDefault()
	if err := checkPositive(batch, steps, "batch", "steps"); err != nil {
		return nil, err
	}
	if xs := distinct(batch, nil); len(xs) < 2 {
		return nil, fewBatches(batch)
	}
	x, w := make([]float64, len(batch)), make([]float64, len(batch))
	for i := range batch {
		x[i], w[i] = 1/batch[i], 1/(steps[i]*steps[i])
	}
	alpha, beta := stat.LinearRegression(x, steps, w, false)
	sMin, bNoise := alpha, beta/alpha
	if !(alpha > 0) || math.IsInf(alpha, 0) {
		sMin = minOf(steps)
		bNoise = 0
	}
	if !(bNoise >= 0) || math.IsInf(bNoise, 0) {
		bNoise = 0
	}
	l := solve(stepsLaw{}, batch, steps, sMin, bNoise, median(batch), set)
	return &StepsFit{
		SMin: l.a, BNoise: l.c,
		SMinInterval: l.aInt, BNoiseInterval: l.cInt,
		Level: set.Level, R2: l.r2, S: l.s, LackOfFit: l.lof, Used: l.used, DOF: l.dof, Bound: l.bound,
		Fitted: l.fitted, Residuals: l.resid, Z: l.z, Excluded: l.excluded,
	}, nil
}

func minOf(x []float64) float64 {
	m := math.Inf(1)
	for _, v := range x {
		m = math.Min(m, v)
	}
	return m
}
