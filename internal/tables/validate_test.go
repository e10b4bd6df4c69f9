package tables

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"scaleplan/validate"
)

// The cells of a case's figures, written out by hand.
func TestMetricCells(t *testing.T) {
	for _, c := range []struct {
		metric string
		v      float64
		want   string
	}{
		{validate.SamplesPerSecond, 1234.56, "1234.6 samples/s"},
		{validate.V0, 0.04, "0.0 samples/s"},
		{validate.TimeToTrain, 5989.4, "5,989 s"},
		{validate.TimeToTrain, 999.96, "1000 s"},
		{validate.StepTime, 0.123456, "0.1235 s"},
	} {
		if got := metricValue(c.metric, c.v); got != c.want {
			t.Errorf("metricValue(%s, %v) = %q, want %q", c.metric, c.v, got, c.want)
		}
	}
	for e, want := range map[float64]string{0.0004: "0.0", -0.0004: "0.0", 0.1234: "+12.3", -0.05: "-5.0", 0.0005: "+0.1"} {
		if got := signedPct(e); got != want {
			t.Errorf("signedPct(%v) = %q, want %q", e, got, want)
		}
	}
	if got := pctOrDash(math.NaN()) + " " + pctOrDash(0.8766); got != "- 87.7" {
		t.Errorf("pctOrDash(NaN), pctOrDash(0.8766) = %q, want \"- 87.7\"", got)
	}
}

// The summary of a report of five cases: one independent, one tuned, one
// calibrating, one bound that holds of two, one failed.
func TestValidationSummary(t *testing.T) {
	cal := &validate.Case{Name: "cal", Calibrates: true}
	worst := validate.CaseResult{Case: &validate.Case{Name: "w"}, Error: -0.2345}
	rep := &validate.Report{
		Results: []validate.CaseResult{worst, {Case: cal}, {Case: &validate.Case{Name: "x"}, Err: errors.New("no")}},
		N:       1, MAE: 0.2345, NTuned: 2, MAETuned: 0.15, Bounds: 2, BoundsHeld: 1, Failed: 1, Worst: &worst,
		Scale: validate.SizeBucket{Min: 64, N: 3, MAE: 0.1, Bias: -0.05},
		Sizes: []validate.SizeBucket{{Min: 64, Max: 128, N: 2, MAE: 0.125, Bias: -0.125}, {Min: 129, Max: 512}, {Min: 513, N: 1, MAE: 0.05, Bias: 0.05}},
	}
	want := []string{
		"mean absolute error over the 1 independent cases (not calibrating, not tuned, not bounds): 23.4%; worst: w (-23.4%)",
		"including the 1 tuned cases: 15.0% over 2 cases",
		"MLPerf time to train at 64 accelerators or more (cases with the epochs law): 10.0% over 3 independent cases; mean signed error by accelerators: 64-128: -12.5% (2, |error| 12.5%); 129-512: none; above 512: +5.0% (1, |error| 5.0%)",
		"calibrating cases, left out of the error: cal",
		"bounds: 1 of 2 hold",
		"failed: 1 case could not be predicted",
	}
	if got := ValidationSummary(rep); !reflect.DeepEqual(got, want) {
		t.Errorf("ValidationSummary:\n%q\nwant\n%q", got, want)
	}
}

// Records and tests left out, a line per reason, in the order given.
func TestLeftLines(t *testing.T) {
	left := map[string]int{validate.LeftSeveral: 4, validate.LeftCollectiveOp: 1, validate.LeftCount: 0}
	want := []string{
		"4 records left out, " + validate.LeftSeveral,
		"1 test left out, " + validate.LeftCollectiveOp,
	}
	if got := LeftLines(left, LeftReasons()); !reflect.DeepEqual(got, want) {
		t.Errorf("LeftLines:\n%q\nwant\n%q", got, want)
	}
	if got := LeftLines(left, validate.RecordReasons); !reflect.DeepEqual(got, want[:1]) {
		t.Errorf("LeftLines of the records' reasons:\n%q\nwant\n%q", got, want[:1])
	}
}

// Markdown links a case's source to its URL in the source cell; text
// lists the URL as a note under the table.
func TestValidationSourceLink(t *testing.T) {
	rep := &validate.Report{Results: []validate.CaseResult{{
		Case:      &validate.Case{Name: "c", Metric: validate.TimeToTrain, Source: "MLPerf v2.1", URL: "https://example.org/logs"},
		Published: validate.Published{Value: 10}, Predicted: 11, Error: 0.1,
	}}}
	ts, notes, _ := Validation(rep, "md")
	if got := ts[0].T.Rows[0][8]; got != "[MLPerf v2.1](https://example.org/logs)" || len(notes) != 0 {
		t.Errorf("md: source cell %q, notes %q; want the link and no note", got, notes)
	}
	ts, notes, _ = Validation(rep, "text")
	if got := ts[0].T.Rows[0][8]; got != "MLPerf v2.1" || !reflect.DeepEqual(notes, []string{"c: https://example.org/logs"}) {
		t.Errorf("text: source cell %q, notes %q; want the source and the URL as a note", got, notes)
	}
}
