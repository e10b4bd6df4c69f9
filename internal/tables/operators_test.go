package tables

import (
	"math"
	"testing"

	"scaleplan/validate"
)

// TestOperatorLines checks the summary of rows whose operator figures a
// calibration gave: two predictions carried from the H200, 10 % and 30 %
// off, one of them scaling the H200's law; and a calibrating row of the
// H200 itself.
func TestOperatorLines(t *testing.T) {
	row := func(meas, pred float64, ops string, fitted bool) validate.MeasuredRow {
		return validate.MeasuredRow{Measured: validate.Measured{SamplesPerSec: meas}, Predicted: pred, Operators: ops, Fitted: fitted, ByOperators: true,
			MeasuredScaling: math.NaN(), PredictedScaling: math.NaN()}
	}
	rep := &validate.MeasuredReport{Groups: []validate.MeasuredGroup{
		{Device: "h100-sxm5-80gb", Rows: []validate.MeasuredRow{
			row(100, 110, "carried from h200-sxm-141gb, scaling the law measured on NVIDIA H200", false),
			row(100, 70, "carried from h200-sxm-141gb", false),
		}},
		{Device: "h200-sxm-141gb", Rows: []validate.MeasuredRow{row(100, 100, "fitted on h200-sxm-141gb", true)}},
	}}
	got := operatorLines(rep)
	want := []string{
		"operators carried from h200-sxm-141gb: 2 predictions, 20.0% mean absolute (10.0% over the 1 that scale the other device's measured law, 30.0% over the rest)",
		"operators fitted on h200-sxm-141gb: 1 calibrating row (fitted to, left out)",
	}
	if len(got) != len(want) {
		t.Fatalf("lines %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d:\n%s\nwant\n%s", i, got[i], want[i])
		}
	}
}
