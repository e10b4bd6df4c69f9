package fit

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// EpochsFit is the epochs-to-target law that the steps law
// S(B) = S_min·(1 + B_noise/B) implies for a training set of N samples
// per epoch (McCandlish et al. 2018, "An empirical model of large-batch
// training", eq. 2.11):
//
//	E(B) = S(B)·B/N = E_min·(1 + B/B_noise),   E_min = S_min·B_noise/N.
//
// Epochs grow with the batch: at B ≪ B_noise a run needs E_min epochs
// whatever its batch, at B ≫ B_noise it needs S_min steps whatever its
// batch, hence E ≈ S_min·B/N.
type EpochsFit struct {
	// Steps is S(B) in steps, fitted to S = E·N/B; its relative residuals
	// are those of E.
	Steps *StepsFit
	// N is the samples per epoch; 1 when E counts samples.
	N float64
	// EMin is S_min·B_noise/N, epochs at small batch.
	EMin float64
}

// Predict returns E(B), epochs to target at global batch B.
func (f *EpochsFit) Predict(B float64) float64 { return f.Steps.Predict(B) * B / f.N }

// Epochs fits E(B) = E_min·(1 + B/B_noise) to global batches and epochs
// to target of a training set of n samples per epoch, as Steps on
// S = E·n/B. It returns an error for n not a finite number > 0 and
// Steps' errors.
func Epochs(batch, epochs []float64, n float64, s *Settings) (*EpochsFit, error) {
	if !(n > 0) || math.IsInf(n, 0) {
		return nil, fmt.Errorf("samples per epoch %v: want a finite number > 0", n)
	}
	if len(batch) != len(epochs) {
		return nil, fmt.Errorf("%d batches, %d epoch counts: want as many", len(batch), len(epochs))
	}
	steps := make([]float64, len(batch))
	for i := range batch {
		steps[i] = epochs[i] * n / batch[i]
	}
	sf, err := Steps(batch, steps, s)
	if err != nil {
		return nil, err
	}
	return &EpochsFit{Steps: sf, N: n, EMin: sf.SMin * sf.BNoise / n}, nil
}

// PowerFit is E(B) = A·B^K fitted by least squares on log E against log B:
// the alternative to EpochsFit where epochs grow more slowly than linearly
// in the batch.
type PowerFit struct {
	A, K float64
	// S is the standard deviation of log E about the line (≈ the relative
	// residual), with len−2 degrees of freedom.
	S float64
}

// Predict returns A·B^K.
func (f *PowerFit) Predict(B float64) float64 { return f.A * math.Pow(B, f.K) }

// Power fits E = A·B^K. It returns an error for a value that is not a
// finite number > 0, for unequal lengths and for fewer than two distinct
// batches.
func Power(batch, epochs []float64) (*PowerFit, error) {
	if len(batch) != len(epochs) {
		return nil, fmt.Errorf("%d batches, %d epoch counts: want as many", len(batch), len(epochs))
	}
	if err := checkPositive(batch, epochs, "batch", "epochs"); err != nil {
		return nil, err
	}
	if xs := distinct(batch, nil); len(xs) < 2 {
		return nil, fewBatches(batch)
	}
	x, y := make([]float64, len(batch)), make([]float64, len(batch))
	for i := range batch {
		x[i], y[i] = math.Log(batch[i]), math.Log(epochs[i])
	}
	a, k := stat.LinearRegression(x, y, nil, false)
	var ss float64
	for i := range x {
		r := y[i] - (a + k*x[i])
		ss += r * r
	}
	s := math.NaN()
	if len(x) > 2 {
		s = math.Sqrt(ss / float64(len(x)-2))
	}
	return &PowerFit{A: math.Exp(a), K: k, S: s}, nil
}

// Holdout is the prediction of one held-out group (an MLPerf round) by a
// law fitted to every other group.
type Holdout struct {
	Group string
	// Train and Held count the points fitted and predicted.
	Train, Held int
	// Predicted is the law's value at each held-out point, in input order
	// of Index.
	Index     []int
	Predicted []float64
	// MeanAbsErr and MeanErr are the mean of |p−y|/y and of (p−y)/y over
	// the held-out points: positive means more epochs predicted than run.
	MeanAbsErr, MeanErr float64
	// Err is the fit's error when the other groups could not be fitted;
	// the prediction fields are then empty.
	Err error
}

// Fitter fits a law to points and returns its prediction.
type Fitter func(batch, y []float64) (func(B float64) float64, error)

// ErrOneGroup is returned by LeaveOneGroupOut for fewer than two groups.
var ErrOneGroup = errors.New("leave one group out needs at least two groups")

// LeaveOneGroupOut fits, for each group g in order of first appearance,
// the law of fitter to the points of every other group and predicts g's
// points. The points of g never reach fitter when g is held out.
func LeaveOneGroupOut(batch, y []float64, groups []string, fitter Fitter) ([]Holdout, error) {
	if len(batch) != len(y) || len(batch) != len(groups) {
		return nil, fmt.Errorf("%d batches, %d values, %d groups: want as many", len(batch), len(y), len(groups))
	}
	var order []string
	for _, g := range groups {
		if !slices.Contains(order, g) {
			order = append(order, g)
		}
	}
	if len(order) < 2 {
		return nil, ErrOneGroup
	}
	out := make([]Holdout, 0, len(order))
	for _, g := range order {
		h := Holdout{Group: g}
		var tb, ty []float64
		for i := range batch {
			if groups[i] == g {
				h.Index = append(h.Index, i)
				continue
			}
			tb, ty = append(tb, batch[i]), append(ty, y[i])
		}
		h.Train, h.Held = len(tb), len(h.Index)
		pred, err := fitter(tb, ty)
		if err != nil {
			h.Err, h.Index = err, nil
			out = append(out, h)
			continue
		}
		for _, i := range h.Index {
			p := pred(batch[i])
			h.Predicted = append(h.Predicted, p)
			e := (p - y[i]) / y[i]
			h.MeanAbsErr += math.Abs(e) / float64(h.Held)
			h.MeanErr += e / float64(h.Held)
		}
		out = append(out, h)
	}
	return out, nil
}
