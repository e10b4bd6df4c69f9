package tables

import (
	"fmt"
	"math"
	"strconv"

	"scaleplan/validate"
)

// Placements returns the tables and summary lines of validate --measured
// for a placement table's report: every row's step time and exposed
// exchange against the simulator's, then one row per placement class
// with its mean error and bias; the lines give the calibration (the law
// fitted to one device) and the mean error over every predicted row.
func Placements(rep *validate.PlacementReport) (ts []Named, lines []string) {
	ts = []Named{{Key: "placements", T: placementRows(rep)}, {Key: "classes", T: placementClasses(rep)}}
	law := rep.Law
	one := 0
	for _, r := range rep.Rows {
		if r.Calibrating {
			one++
		}
	}
	lines = append(lines, fmt.Sprintf("%s: compute calibrated on one %s (placement 1): the law v = b/(b/v0 + t) fitted to %d of its %d rows, v0 %s samples/s, t %s, R² %.4f",
		rep.Source, rep.Device, law.Used, one, Num(law.V0), law.T, law.R2))
	if !math.IsNaN(rep.MAE) {
		lines = append(lines, fmt.Sprintf("%s: mean absolute error of the step time over %d predicted rows: %.1f%%", rep.Source, predictedRows(rep), 100*rep.MAE))
	}
	return ts, lines
}

// predictedRows counts the rows of rep that are predictions.
func predictedRows(rep *validate.PlacementReport) int {
	n := 0
	for _, c := range rep.Classes {
		n += c.Rows
	}
	return n
}

// placementRows is the table of every row against its prediction.
func placementRows(rep *validate.PlacementReport) *Table {
	t := &Table{
		Title: fmt.Sprintf("Step times of %s (%s) on %s per placement, measured against simulated (compute calibrated on one device; network %s from the catalogue)",
			rep.Model, rep.Precision, rep.System, Dash(rep.Exchange)),
		Units:  map[string]string{"placement": "label"}, // "1234" is four nodes, not a number
		Header: []string{"placement", "class", "devices", "batch", "step measured (ms)", "step predicted (ms)", "error (%)", "sync measured (ms)", "sync predicted (ms)", "line"},
	}
	for _, r := range rep.Rows {
		e, class := signedPct(r.Error()), string(r.Class)
		if r.Calibrating {
			e, class = "-", class+" (calibration)"
		}
		t.Rows = append(t.Rows, []string{validate.PlacementName(r.Placement), class, strconv.Itoa(r.Devices()), strconv.Itoa(r.Batch),
			msOf(float64(r.StepTime)), msOf(float64(r.Predicted)), e, msOf(float64(r.SyncTime)), msOf(float64(r.PredictedSync)), strconv.Itoa(r.Line)})
	}
	return t
}

// placementClasses is the table of a row per placement class.
func placementClasses(rep *validate.PlacementReport) *Table {
	t := &Table{
		Title:  fmt.Sprintf("Per placement class of %s on %s: error of the predicted step time", rep.Model, rep.System),
		Header: []string{"class", "rows", "mean absolute error (%)", "bias (%)", "mean sync measured (ms)", "mean sync predicted (ms)", "implied ring bus rate (Gbit/s)"},
	}
	for _, c := range rep.Classes {
		rate := "-"
		if !math.IsNaN(c.ImpliedBusRate) {
			rate = fmt.Sprintf("%.2f", 8*c.ImpliedBusRate/1e9)
		}
		t.Rows = append(t.Rows, []string{string(c.Class), strconv.Itoa(c.Rows), fmt.Sprintf("%.1f", 100*c.MAE), signedPct(c.Bias),
			msOf(float64(c.Sync)), msOf(float64(c.PredictedSync)), rate})
	}
	return t
}

// msOf writes seconds as milliseconds with 1 decimal.
func msOf(s float64) string { return fmt.Sprintf("%.1f", 1e3*s) }
