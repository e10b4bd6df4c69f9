package validate

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// IntervalLevels are the quantiles that bound ErrorInterval: the 10th and
// the 90th percentile, so that the interval holds 80 % of the errors.
var IntervalLevels = [2]float64{0.1, 0.9}

// IntervalMinRows is the fewest errors ErrorInterval bounds: with fewer,
// a 10th percentile is one of the extremes.
const IntervalMinRows = 10

// ErrorInterval returns the IntervalLevels quantiles of errs, linearly
// interpolated between the sorted errors (gonum's stat.LinInterp: the
// quantile p lies at rank p·n): the interval that holds 80 % of them.
// NaN errors are left out; with fewer than IntervalMinRows left the
// interval is NaN, NaN.
//
// Of a measurement's error of samples/s (MeasuredRow.Error), the interval
// bounds the measured step time too: a measured step is the predicted one
// times 1 + the error. So, unlike a mean absolute error, it says which way
// the model misses: [−0.1, 0.5] is a model whose measured steps take from
// 10 % less to 50 % more than it predicts, in 8 cases of 10.
func ErrorInterval(errs []float64) [2]float64 {
	s := slices.DeleteFunc(slices.Clone(errs), math.IsNaN)
	if len(s) < IntervalMinRows {
		return [2]float64{math.NaN(), math.NaN()}
	}
	slices.Sort(s)
	return [2]float64{stat.Quantile(IntervalLevels[0], stat.LinInterp, s, nil), stat.Quantile(IntervalLevels[1], stat.LinInterp, s, nil)}
}
