package tables

import (
	"math"
	"slices"
	"testing"

	"scaleplan/validate"
)

// TestSources: the table of errors by source file comes with logs of
// two files or more, a row each, percentages with one decimal, signed
// where the error's sign says which way the model misses, and a dash
// where a figure has no rows (an interval under ten predictions, no row
// of several devices).
func TestSources(t *testing.T) {
	nan := math.NaN()
	rep := &validate.MeasuredReport{Sources: []validate.SourceError{
		{Source: "a.csv", Rows: 12, Mean: 0.1234, MAE: 0.2, Interval: [2]float64{-0.05, 0.4}, OneRows: 12, OneMAE: 0.2, SeveralMAE: nan},
		{Source: "b.jsonl", Rows: 2, Mean: -0.0004, MAE: 0.3, Interval: [2]float64{nan, nan}, OneRows: 1, OneMAE: 0.1, SeveralRows: 1, SeveralMAE: 0.5},
	}}
	ts, _ := Measured(rep, nil, false)
	i := slices.IndexFunc(ts, func(n Named) bool { return n.Key == "sources" })
	if i < 0 {
		t.Fatalf("no sources table among %d", len(ts))
	}
	want := [][]string{
		{"a.csv", "12", "+12.3", "20.0", "-5.0", "+40.0", "12", "20.0", "0", "-"},
		{"b.jsonl", "2", "0.0", "30.0", "-", "-", "1", "10.0", "1", "50.0"},
	}
	if got := ts[i].T.Rows; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("rows\n%q\nwant\n%q", got, want)
	}
	rep.Sources = rep.Sources[:1]
	ts, _ = Measured(rep, nil, false)
	if slices.ContainsFunc(ts, func(n Named) bool { return n.Key == "sources" }) {
		t.Error("a sources table of one file; want none")
	}
}
