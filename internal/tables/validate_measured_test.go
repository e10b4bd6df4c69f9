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

// TestDevicesBandwidth: the table between kinds of device gains the
// bandwidth split where a pair shares its compute, with dashes for the
// other pairs, and has no such columns where no pair does. The H100 and
// H200's measured speed-up of 1.107 over a bandwidth 4.8/3.35 times
// larger puts (1 − 1/1.107)/(1 − 3.35/4.8) = 31.8 % of the H100's step on
// its bandwidth.
func TestDevicesBandwidth(t *testing.T) {
	pair := validate.DeviceRatio{Model: "resnet50", Precision: "amp-fp16", Batch: 1024, A: "h100-sxm5-80gb", B: "h200-sxm-141gb",
		MeasuredA: 2772, MeasuredB: 3067, PredictedA: 3705, PredictedB: 5114, Bandwidth: 4.8 / 3.35}
	other := validate.DeviceRatio{Model: "resnet50", Precision: "amp-fp16", Batch: 256, A: "a100-sxm4-80gb", B: "h100-sxm5-80gb",
		MeasuredA: 1000, MeasuredB: 2000, PredictedA: 1000, PredictedB: 2500}
	table := func(rs ...validate.DeviceRatio) *Table {
		ts, _ := Measured(&validate.MeasuredReport{Ratios: rs}, nil, false)
		for _, n := range ts {
			if n.Key == "devices" {
				return n.T
			}
		}
		t.Fatal("no devices table")
		return nil
	}
	tb := table(pair, other)
	n := len(tb.Header)
	if got := tb.Header[n-3:]; !slices.Equal(got, []string{"B/A bandwidth", "bandwidth-bound share of A, measured (%)", "bandwidth-bound share of A, predicted (%)"}) {
		t.Fatalf("last columns %q", got)
	}
	if got, want := tb.Rows[0][n-3:], []string{"1.433", "31.8", "91.2"}; !slices.Equal(got, want) {
		t.Errorf("pair: %q, want %q", got, want)
	}
	if got, want := tb.Rows[1][n-3:], []string{"-", "-", "-"}; !slices.Equal(got, want) {
		t.Errorf("other: %q, want %q", got, want)
	}
	if tb := table(other); slices.Contains(tb.Header, "B/A bandwidth") {
		t.Errorf("columns %q without a pair of one compute", tb.Header)
	}
}

// TestSplitLine: the summary states the mean absolute error on one device
// and on several, where the report has both, and nothing where it has one
// kind only.
func TestSplitLine(t *testing.T) {
	rep := &validate.MeasuredReport{All: validate.SourceError{OneRows: 4, OneMAE: 0.2, SeveralRows: 2, SeveralMAE: 0.4}}
	want := []string{"mean absolute error of samples/s on one device 20.0% over 4 predictions, on several 40.0% over 2"}
	if got := splitLine(rep); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	rep.All = validate.SourceError{OneRows: 3, OneMAE: 0.1, SeveralMAE: math.NaN()}
	if got := splitLine(rep); got != nil {
		t.Errorf("one device only: %q, want no line", got)
	}
}
