package validate

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// SourceError is the error of samples/s of the predictions of one source:
// the rows read from one log file (Measured.Source less its ":line"). Of
// logs from several files, it says which file the model misses, which
// way, and whether on one device or on several.
type SourceError struct {
	Source string
	// Rows counts the source's predictions, its rows that ran and that no
	// calibration was fitted to, as MeasuredReport.Rows counts them. Mean
	// and MAE are the mean of their MeasuredRow.Error and of its absolute
	// value; Interval is their ErrorInterval (NaN, NaN under
	// IntervalMinRows rows).
	Rows      int
	Mean, MAE float64
	Interval  [2]float64
	// OneRows and OneMAE are Rows and MAE over the predictions of one
	// device, SeveralRows and SeveralMAE over those of several: the
	// second without the first is what the exchange and the node add. A
	// MAE is NaN where its count is 0.
	OneRows, SeveralRows int
	OneMAE, SeveralMAE   float64
}

// SourceFile returns the file of a measurement's source: s less a final
// ":LINE" of digits, s itself where it has none.
func SourceFile(s string) string {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 || i == len(s)-1 {
		return s
	}
	for _, c := range s[i+1:] {
		if c < '0' || c > '9' {
			return s
		}
	}
	return s[:i]
}

// sourceErrors returns the errors of groups' predictions by source file
// (SourceFile of each row's Source), in the order of the files' names,
// and of all of them together (all, Source ""). Rows that ran out of
// memory, or that a calibration was fitted to, count in none.
func sourceErrors(groups []MeasuredGroup) (files []SourceError, all SourceError) {
	var total errorAcc
	by := map[string]*errorAcc{}
	for _, g := range groups {
		for _, r := range g.Rows {
			e := r.Error()
			if r.Fitted || math.IsNaN(e) {
				continue
			}
			f := SourceFile(r.Source)
			a := by[f]
			if a == nil {
				a = &errorAcc{}
				by[f] = a
			}
			several := r.Devices > 1
			a.add(e, several)
			total.add(e, several)
		}
	}
	files = make([]SourceError, 0, len(by))
	for f, a := range by {
		files = append(files, a.result(f))
	}
	slices.SortFunc(files, func(a, b SourceError) int { return cmp.Compare(a.Source, b.Source) })
	return files, total.result("")
}

// errorAcc gathers the errors of predictions, all of them and those of
// one device and of several apart.
type errorAcc struct{ errs, one, many []float64 }

func (a *errorAcc) add(e float64, several bool) {
	a.errs = append(a.errs, e)
	if several {
		a.many = append(a.many, e)
	} else {
		a.one = append(a.one, e)
	}
}

// result returns a's errors as source's SourceError.
func (a *errorAcc) result(source string) SourceError {
	return SourceError{Source: source, Rows: len(a.errs), OneRows: len(a.one), SeveralRows: len(a.many),
		Mean: meanOf(a.errs, false), MAE: meanOf(a.errs, true), Interval: ErrorInterval(a.errs),
		OneMAE: meanOf(a.one, true), SeveralMAE: meanOf(a.many, true)}
}

// meanOf returns the mean of errs, of their absolute values where abs;
// NaN for none.
func meanOf(errs []float64, abs bool) float64 {
	if len(errs) == 0 {
		return math.NaN()
	}
	var sum float64
	for _, e := range errs {
		if abs {
			e = math.Abs(e)
		}
		sum += e
	}
	return sum / float64(len(errs))
}
