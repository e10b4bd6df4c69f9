package tables

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"scaleplan/validate"
)

// Measured returns the tables and summary lines of validate --measured
// for rep: every measurement against its prediction, then one row per
// device, model, precision, variant and device count with the memory
// limit, then, where one device of two kinds ran the same configuration,
// the speed of one kind over the other (rep.Ratios), and, of logs from
// several files, the error of each file's predictions (rep.Sources). The
// variant column is there when a group has one, the devices and system
// columns when a group has several devices, and the compute column when a
// calibration or the operator model computed a row. The lines say what
// was left out (left, by reason), the collective tests too unless
// testsWritten (their table says it).
func Measured(rep *validate.MeasuredReport, left map[string]int, testsWritten bool) (ts []Named, lines []string) {
	l := measuredLayout{
		variants:   slices.ContainsFunc(rep.Groups, func(g validate.MeasuredGroup) bool { return g.Variant != "" }),
		several:    slices.ContainsFunc(rep.Groups, func(g validate.MeasuredGroup) bool { return g.Devices > 1 }),
		calibrated: rep.Calibrated(),
		operators: slices.ContainsFunc(rep.Groups, func(g validate.MeasuredGroup) bool {
			return slices.ContainsFunc(g.Rows, func(r validate.MeasuredRow) bool { return r.ByOperators })
		}),
	}
	ts = []Named{{Key: "measurements", T: l.rows(rep)}, {Key: "groups", T: l.groups(rep)}}
	if len(rep.Ratios) > 0 {
		ts = append(ts, Named{Key: "devices", T: l.ratios(rep)})
	}
	if len(rep.Sources) > 1 {
		ts = append(ts, Named{Key: "sources", T: sources(rep)})
	}
	return ts, measuredLines(rep, left, testsWritten)
}

// measuredLayout is which of the optional columns the tables of a
// MeasuredReport have.
type measuredLayout struct {
	variants   bool // a group has a variant
	several    bool // a group has several devices
	calibrated bool // a calibration applies to a row
	operators  bool // the operator model computed a row
}

// key returns the cells that name a group, in a new slice: its device,
// model, precision, variant (where a group has one), devices and system
// (where a group has several devices).
func (l measuredLayout) key(device, model, precision, variant, devices, system string) []string {
	k := []string{device, model, precision}
	if l.variants {
		k = append(k, variant)
	}
	if l.several {
		k = append(k, devices, system)
	}
	return k
}

// header returns the header of a table of groups: the key's, then rest.
func (l measuredLayout) header(rest ...string) []string {
	return append(l.key("device", "model", "precision", "variant", "devices", "system"), rest...)
}

// cells returns the cells that name g.
func (l measuredLayout) cells(g *validate.MeasuredGroup) []string {
	return l.key(g.Device, g.Model, g.Precision, Dash(g.Variant), strconv.Itoa(g.Devices), Dash(g.System))
}

// rows is the table of every measurement against its prediction.
func (l measuredLayout) rows(rep *validate.MeasuredReport) *Table {
	title := "Measured against predicted from the catalogue alone ("
	compute := "roofline, no calibration"
	switch {
	case l.calibrated:
		title = "Measured against predicted ("
		compute = "compute by a calibration where one applies, else by operators where the model has them, else the roofline"
	case l.operators:
		compute = "compute by operators where the model has them, else the roofline; no calibration"
	}
	if l.several {
		title += compute + "; several devices on the system's nodes, synthetic input)"
	} else {
		title += "one device, " + compute + ")"
	}
	h := l.header("batch", "measured (samples/s)", "predicted (samples/s)", "error (%)")
	if l.calibrated || l.operators {
		h = append(h, "compute")
	}
	if l.several {
		h = append(h, "exchange", "scaling measured (%)", "scaling predicted (%)")
	}
	t := &Table{Title: title, Header: append(h, "peak memory", "memory model", "source")}
	for i := range rep.Groups {
		g := &rep.Groups[i]
		for _, r := range g.Rows {
			t.Rows = append(t.Rows, l.row(g, r))
		}
	}
	return t
}

// row is the row of measurement r of group g.
func (l measuredLayout) row(g *validate.MeasuredGroup, r validate.MeasuredRow) []string {
	meas, pred, e := "out of memory", "-", "-"
	if !r.OOM {
		meas, pred, e = Num(r.SamplesPerSec), Num(r.Predicted), signedPct(r.Error())
	}
	peak := "-"
	if r.PeakMemory > 0 {
		peak = r.PeakMemory.Decimal()
	}
	row := append(l.cells(g), strconv.Itoa(r.Batch), meas, pred, e)
	if l.calibrated || l.operators {
		how := "by roofline"
		switch {
		case r.Fitted && r.Operators != "":
			how = "calibrating (operators " + r.Operators + ")"
		case r.Fitted:
			how = "fitted (not a prediction)"
		case r.Calibration != "":
			how = "calibrated"
		case r.ByOperators && r.Operators != "":
			how = "by operators " + r.Operators
		case r.ByOperators:
			how = "by operators"
		}
		if r.ByOperators && r.Host != nil {
			how += ", host measured" // validate --host: the host's costs are its table's
		}
		row = append(row, how)
	}
	if l.several {
		row = append(row, Dash(r.Exchange), pctOrDash(r.MeasuredScaling), pctOrDash(r.PredictedScaling))
	}
	return append(row, peak, r.Footprint.Decimal(), r.Source)
}

// groups is the table of a row per group, with its errors and the memory
// model's largest batch against the largest that ran.
func (l measuredLayout) groups(rep *validate.MeasuredReport) *Table {
	title := "Per device, model and precision"
	switch {
	case l.variants && l.several:
		title = "Per device, model, precision, variant and device count"
	case l.variants:
		title = "Per device, model, precision and variant"
	case l.several:
		title = "Per device, model, precision and device count"
	}
	t := &Table{Title: title,
		Header: l.header("batches", "mean absolute error (%)", "error at the largest batch (%)", "largest batch run", "first out of memory", "memory model's largest batch", "within one power of two")}
	for _, g := range rep.Groups {
		mae, last := "-", "-"
		if !math.IsNaN(g.MAE) {
			mae = fmt.Sprintf("%.1f", 100*g.MAE)
		}
		if !math.IsNaN(g.LargestError) {
			last = signedPct(g.LargestError)
		}
		oom, pmax := "-", "unbounded"
		if g.FirstOOM > 0 {
			oom = strconv.Itoa(g.FirstOOM)
		}
		if g.PredictedMax >= 0 {
			pmax = strconv.Itoa(g.PredictedMax)
		}
		agree := "no"
		switch {
		case g.MemoryAgrees() && g.FirstOOM == 0:
			agree = "no limit measured"
		case g.MemoryAgrees():
			agree = "yes"
		}
		t.Rows = append(t.Rows, append(l.cells(&g), strconv.Itoa(len(g.Rows)), mae, last, strconv.Itoa(g.LargestRun), oom, pmax, agree))
	}
	return t
}

// ratios is the table of the speed of one kind of device over another.
func (l measuredLayout) ratios(rep *validate.MeasuredReport) *Table {
	h := []string{"model", "precision"}
	if l.variants {
		h = append(h, "variant")
	}
	h = append(h, "batch", "device A", "device B", "A measured (samples/s)", "B measured (samples/s)", "B/A measured", "B/A predicted", "error (%)")
	split := slices.ContainsFunc(rep.Ratios, func(r validate.DeviceRatio) bool { return r.Bandwidth > 0 })
	if split {
		h = append(h, "B/A bandwidth", "bandwidth-bound share of A, measured (%)", "bandwidth-bound share of A, predicted (%)")
	}
	t := &Table{Title: "Between kinds of device (one device of each, at the largest batch both ran)", Header: h}
	for _, r := range rep.Ratios {
		row := []string{r.Model, r.Precision}
		if l.variants {
			row = append(row, Dash(r.Variant))
		}
		row = append(row, strconv.Itoa(r.Batch), r.A, r.B, Num(r.MeasuredA), Num(r.MeasuredB),
			fmt.Sprintf("%.3f", r.Measured()), fmt.Sprintf("%.3f", r.Predicted()), signedPct(r.Error()))
		if split {
			bw := "-"
			if r.Bandwidth > 0 {
				bw = fmt.Sprintf("%.3f", r.Bandwidth)
			}
			row = append(row, bw, pctOrDash(r.BandwidthShare(r.Measured())), pctOrDash(r.BandwidthShare(r.Predicted())))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// sources is the table of the errors of each source file's predictions
// (rep.Sources).
func sources(rep *validate.MeasuredReport) *Table {
	t := &Table{Title: "By source file (its predictions' error of samples/s; a measured step is the predicted one times 1 + the error)",
		Header: []string{"source", "predictions", "mean error (%)", "mean absolute error (%)", "error, 10th percentile (%)", "error, 90th percentile (%)",
			"predictions of one device", "mean absolute error of one device (%)", "predictions of several devices", "mean absolute error of several devices (%)"}}
	for _, s := range rep.Sources {
		t.Rows = append(t.Rows, []string{s.Source, strconv.Itoa(s.Rows), signedPct(s.Mean), pctOrDash(s.MAE), pctOrDashSigned(s.Interval[0]), pctOrDashSigned(s.Interval[1]),
			strconv.Itoa(s.OneRows), pctOrDash(s.OneMAE), strconv.Itoa(s.SeveralRows), pctOrDash(s.SeveralMAE)})
	}
	return t
}

// measuredLines is the summary of rep: its errors, the calibrations, the
// scaling and the kinds of device, what was left out, and how the memory
// model is judged.
func measuredLines(rep *validate.MeasuredReport, left map[string]int, testsWritten bool) []string {
	var lines []string
	sources := rep.CalibrationSources()
	switch {
	case len(sources) == 0:
		lines = append(lines, fmt.Sprintf("mean absolute error of samples/s over %d measurements: %.1f%%", rep.Rows, 100*rep.MAE))
	case rep.Rows == 0:
		lines = append(lines, fmt.Sprintf("no prediction: the calibration was fitted to every measurement that ran (%d)", rep.Fitted))
	default:
		l := fmt.Sprintf("mean absolute error of samples/s over %d %s: %.1f%%", rep.Rows, Plural(rep.Rows, "prediction", "predictions"), 100*rep.MAE)
		if mae, n := rep.CalibratedError(); n > 0 && n < rep.Rows {
			l += fmt.Sprintf(", %.1f%% over the %d computed by a calibration", 100*mae, n)
		}
		lines = append(lines, fmt.Sprintf("%s; %d %s the calibration was fitted to left out", l, rep.Fitted, Plural(rep.Fitted, "measurement", "measurements")))
	}
	lines = append(lines, intervalLine(rep)...)
	for _, src := range sources {
		lines = append(lines, "calibrated by "+src)
	}
	lines = append(lines, operatorLines(rep)...)
	lines = append(lines, splitLine(rep)...)
	if rep.ScalingRows > 0 {
		lines = append(lines, fmt.Sprintf("scaling efficiency against one device at the same batch, over %d %s: predicted %.1f points from measured, mean absolute", rep.ScalingRows, Plural(rep.ScalingRows, "measurement", "measurements"), 100*rep.ScalingError))
	}
	if n := len(rep.Ratios); n > 0 {
		lines = append(lines, fmt.Sprintf("speed of one kind of device over another, over %d %s: predicted %.1f%% from measured, mean absolute", n, Plural(n, "configuration", "configurations"), 100*rep.RatioError))
	}
	reasons := LeftReasons()
	if testsWritten {
		reasons = validate.RecordReasons // the tests' are under their own table
	}
	lines = append(lines, LeftLines(left, reasons)...)
	return append(lines, "the memory model's largest batch agrees when it lies between half the largest batch that ran and twice the first that ran out of memory; with no out-of-memory record there is no limit to check it against")
}

// splitLine states the mean absolute error of rep's predictions of one
// device and of several (rep.All), where it has both: what the node and
// the exchange add to the device's compute.
func splitLine(rep *validate.MeasuredReport) []string {
	a := rep.All
	if a.OneRows == 0 || a.SeveralRows == 0 {
		return nil
	}
	return []string{fmt.Sprintf("mean absolute error of samples/s on one device %.1f%% over %d %s, on several %.1f%% over %d",
		100*a.OneMAE, a.OneRows, Plural(a.OneRows, "prediction", "predictions"), 100*a.SeveralMAE, a.SeveralRows)}
}

// intervalLine states rep's ErrorInterval over the predictions, which way
// the model misses and by how much in most cases; none under
// validate.IntervalMinRows predictions.
func intervalLine(rep *validate.MeasuredReport) []string {
	iv := rep.Interval
	if math.IsNaN(iv[0]) {
		return nil
	}
	lv := validate.IntervalLevels
	return []string{fmt.Sprintf("error of samples/s in %.0f%% of the %d %s: %s%% to %s%% (its quantiles %g and %g; a measured step is the predicted one times 1 + the error)",
		100*(lv[1]-lv[0]), rep.Rows, Plural(rep.Rows, "prediction", "predictions"), signedPct(iv[0]), signedPct(iv[1]), lv[0], lv[1])}
}

// pctOrDash prints a fraction as a percentage with one decimal, "-" for
// NaN.
func pctOrDash(f float64) string {
	if math.IsNaN(f) {
		return "-"
	}
	return fmt.Sprintf("%.1f", 100*f)
}

// operatorLines says, per source of a calibration's operator figures
// ("fitted on h200-sxm-141gb", "carried from h200-sxm-141gb"), how many
// rows it predicted and their mean absolute error, of them how many
// scaled another device's measured law, and how many rows it was fitted
// to (calibrating, left out).
func operatorLines(rep *validate.MeasuredReport) []string {
	type tally struct {
		n, scaled, fitted int
		sum, scaledSum    float64
	}
	by := map[string]*tally{}
	var order []string
	for _, g := range rep.Groups {
		for _, r := range g.Rows {
			if r.Operators == "" || r.OOM {
				continue
			}
			src, _, scaled := strings.Cut(r.Operators, ", scaling the law measured on ")
			t := by[src]
			if t == nil {
				t = &tally{}
				by[src] = t
				order = append(order, src)
			}
			e := math.Abs(r.Error())
			switch {
			case r.Fitted:
				t.fitted++
			case math.IsNaN(e):
			default:
				t.n++
				t.sum += e
				if scaled {
					t.scaled++
					t.scaledSum += e
				}
			}
		}
	}
	var lines []string
	for _, src := range order {
		t := by[src]
		l := "operators " + src + ":"
		if t.n > 0 {
			l += fmt.Sprintf(" %d %s, %.1f%% mean absolute", t.n, Plural(t.n, "prediction", "predictions"), 100*t.sum/float64(t.n))
			if t.scaled > 0 {
				l += fmt.Sprintf(" (%.1f%% over the %d that scale the other device's measured law, %s over the rest)", 100*t.scaledSum/float64(t.scaled), t.scaled,
					restPct(t.sum-t.scaledSum, t.n-t.scaled))
			}
		}
		if t.fitted > 0 {
			if t.n > 0 {
				l += ";"
			}
			l += fmt.Sprintf(" %d calibrating %s (fitted to, left out)", t.fitted, Plural(t.fitted, "row", "rows"))
		}
		lines = append(lines, l)
	}
	return lines
}

// restPct is sum/n as a percentage, "none" for n = 0.
func restPct(sum float64, n int) string {
	if n == 0 {
		return "none"
	}
	return fmt.Sprintf("%.1f%%", 100*sum/float64(n))
}
