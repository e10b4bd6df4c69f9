package tables

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"scaleplan/plots"
	"scaleplan/predict"
	"scaleplan/validate"
)

// Validation returns the tables and lines of `scaleplan validate` for rep,
// in format: the cases, predicted against published with the error, and
// the error summary (ValidationSummary). Text and Markdown have the tuned
// parameters as notes under the table, text the links too, Markdown each
// source as a link to its URL; csv and json have them as columns, with predicted and published as numbers in the unit the
// row's unit column names and the bound's sign apart.
func Validation(rep *validate.Report, format string) (ts []Named, notes, lines []string) {
	full := format == "json" || format == "csv"
	t := &Table{Title: "Validation: predicted against published", Header: []string{"case", "metric", "configuration", "predicted", "published", "error (%)", "role", "calibration", "source"}}
	if full {
		t.Header = append(t.Header, "unit", "bound", "url", "tuned", "note")
	}
	for _, r := range rep.Results {
		c := r.Case
		row := caseRow(r)
		if full {
			if r.Err == nil {
				row[3] = strconv.FormatFloat(r.Predicted, 'g', -1, 64)
			}
			row[4] = strconv.FormatFloat(r.Published.Value, 'g', -1, 64)
			row = append(row, Snake(metricUnit(c.Metric)), r.Published.Bound, c.URL, c.Tuned, c.Note)
		} else {
			if c.Tuned != "" {
				notes = append(notes, fmt.Sprintf("%s is tuned: %s", c.Name, c.Tuned))
			}
			switch {
			case c.URL != "" && format == "md":
				row[8] = "[" + row[8] + "](" + c.URL + ")"
			case c.URL != "":
				notes = append(notes, fmt.Sprintf("%s: %s", c.Name, c.URL))
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return []Named{{Key: "cases", T: t}}, notes, ValidationSummary(rep)
}

// caseRow is the row of a case's result as text and Markdown print it:
// its name, metric, configuration (the scenario and the values it sets,
// by name), predicted, published, error, role, calibration and source.
func caseRow(r validate.CaseResult) []string {
	c := r.Case
	cfg := c.Scenario.String()
	keys := make([]string, 0, len(c.Set))
	for k := range c.Set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		cfg += fmt.Sprintf(", %s %d", k, c.Set[k])
	}
	pred, errPct := "-", "-"
	if r.Err != nil {
		pred = "error: " + r.Err.Error()
	} else {
		pred = metricValue(c.Metric, r.Predicted)
		errPct = signedPct(r.Error)
		if r.Published.Bound != "" {
			errPct = "holds"
			if r.Error != 0 {
				errPct = "violated by " + signedPct(r.Error)
			}
		}
	}
	pub := metricValue(c.Metric, r.Published.Value)
	if r.Published.Bound != "" {
		pub = r.Published.Bound + " " + pub
	}
	cal := "-"
	switch {
	case c.Calibrates:
		cal = "sets " + r.Fitted.String()
	case len(c.CalibratedBy) > 0:
		cal = r.Used.String() + " from " + strings.Join(c.CalibratedBy, ", ")
	}
	return []string{c.Name, c.Metric, cfg, pred, pub, errPct, r.Role(), cal, c.Source}
}

// signedPct formats a relative error as a signed percentage, "0.0" when
// it rounds to zero.
func signedPct(e float64) string {
	if math.Abs(e) < 0.0005 {
		return "0.0"
	}
	return fmt.Sprintf("%+.1f", 100*e)
}

// ValidationSummary states the errors over the cases of rep, a line each:
// the mean absolute error over the independent cases and the worst, with
// the tuned cases, the calibrating cases, the bounds and the failures.
func ValidationSummary(rep *validate.Report) []string {
	var out []string
	s := fmt.Sprintf("mean absolute error over the %d independent cases (not calibrating, not tuned, not bounds): %.1f%%", rep.N, 100*rep.MAE)
	if w := rep.Worst; w != nil {
		s += fmt.Sprintf("; worst: %s (%+.1f%%)", w.Case.Name, 100*w.Error)
	}
	out = append(out, s)
	if rep.NTuned > rep.N {
		out = append(out, fmt.Sprintf("including the %d tuned cases: %.1f%% over %d cases", rep.NTuned-rep.N, 100*rep.MAETuned, rep.NTuned))
	}
	if l := sizesLine(rep); l != "" {
		out = append(out, l)
	}
	var cal []string
	for _, r := range rep.Results {
		if r.Case.Calibrates {
			cal = append(cal, r.Case.Name)
		}
	}
	if len(cal) > 0 {
		out = append(out, fmt.Sprintf("calibrating cases, left out of the error: %s", strings.Join(cal, ", ")))
	}
	if rep.Bounds > 0 {
		out = append(out, fmt.Sprintf("bounds: %d of %d hold", rep.BoundsHeld, rep.Bounds))
	}
	if rep.Failed > 0 {
		out = append(out, fmt.Sprintf("failed: %d %s could not be predicted", rep.Failed, Plural(rep.Failed, "case", "cases")))
	}
	return out
}

// sizesLine states the error of the independent MLPerf time-to-train
// cases at 64 accelerators or more and its mean signed error by size; ""
// without such cases.
func sizesLine(rep *validate.Report) string {
	if rep.Scale.N == 0 {
		return ""
	}
	var parts []string
	for _, b := range rep.Sizes {
		size := fmt.Sprintf("%d-%d", b.Min, b.Max)
		if b.Max == 0 {
			size = fmt.Sprintf("above %d", b.Min-1)
		}
		if b.N == 0 {
			parts = append(parts, size+": none")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s: %+.1f%% (%d, |error| %.1f%%)", size, 100*b.Bias, b.N, 100*b.MAE))
	}
	return fmt.Sprintf("MLPerf time to train at %d accelerators or more (cases with the epochs law): %.1f%% over %d independent cases; mean signed error by accelerators: %s",
		rep.Scale.Min, 100*rep.Scale.MAE, rep.Scale.N, strings.Join(parts, "; "))
}

// metricValue formats a value of metric with its unit.
func metricValue(metric string, v float64) string {
	if metricUnit(metric) == "samples/s" {
		return strconv.FormatFloat(v, 'f', 1, 64) + " samples/s"
	}
	if v >= 1000 {
		return predict.Group(int64(math.Round(v))) + " s"
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + " s"
}

// metricUnit is the unit of a case's metric: samples/s or s.
func metricUnit(metric string) string {
	switch metric {
	case validate.SamplesPerSecond, validate.V0:
		return "samples/s"
	}
	return "s"
}

// LeftLines says how many of left (counts by reason, as validate's
// LogReader leaves records and tests out) were left out for each of
// reasons, a line each: "4 records left out, of several devices: ...",
// "1 test left out, of another op than all_reduce ...".
func LeftLines(left map[string]int, reasons []string) []string {
	var lines []string
	for _, why := range reasons {
		n := left[why]
		switch {
		case n == 0:
		case slices.Contains(validate.TestReasons, why):
			lines = append(lines, fmt.Sprintf("%d %s left out, %s", n, Plural(n, "test", "tests"), strings.TrimPrefix(why, "of a collective test ")))
		default:
			lines = append(lines, fmt.Sprintf("%d %s left out, %s", n, Plural(n, "record", "records"), why))
		}
	}
	return lines
}

// LeftReasons returns the reasons validate leaves a record or a collective
// test out, in the order they are reported: the records', then the
// tests'.
func LeftReasons() []string { return slices.Concat(validate.RecordReasons, validate.TestReasons) }

// Collectives returns the table of the all-reduce tests of comps measured
// against predicted, a row per message size, the table of their time error
// by band of sizes, and a summary line per test, then the lines of the
// tests left out (left, by reason).
func Collectives(comps []validate.CollectiveComparison, left map[string]int) (ts []Named, lines []string) {
	t := &Table{
		Title: "Collective tests (nccl-tests) measured against predicted on the catalogue system's links",
		Header: []string{"source", "op", "ranks", "nodes", "system", "exchange", "algorithm", "size", "measured (us)", "predicted (us)", "error (%)",
			"measured busbw (GB/s)", "predicted busbw (GB/s)", "line"},
	}
	for _, c := range comps {
		nodes := c.Ranks / c.DevicesPerNode
		for _, r := range c.Rows {
			t.Rows = append(t.Rows, []string{c.Source, c.Op, strconv.Itoa(c.Ranks), strconv.Itoa(nodes), c.SystemName, Dash(c.Exchange), c.Algorithm.String(),
				r.Bytes.String(), strconv.FormatFloat(float64(r.Measured)*1e6, 'f', 2, 64), strconv.FormatFloat(float64(r.Predicted)*1e6, 'f', 2, 64),
				signedPct(r.Error), strconv.FormatFloat(float64(r.MeasuredBusBW)/1e9, 'f', 2, 64), strconv.FormatFloat(float64(r.PredictedBusBW)/1e9, 'f', 2, 64),
				strconv.Itoa(r.Line)})
		}
		first, last := c.Rows[0], c.Rows[len(c.Rows)-1]
		lines = append(lines, fmt.Sprintf("%s: %s over %d ranks, %d %s of %s (%s, %s): mean absolute error of the time %.1f%% over %d %s; at %s %v measured, %v predicted (%s%%); at %s bus bandwidth %.1f GB/s measured, %.1f GB/s predicted (%s%% in time)",
			c.Source, c.Op, c.Ranks, nodes, Plural(nodes, "node", "nodes"), c.SystemName, Dash(c.Exchange), c.Algorithm, 100*c.MAE, len(c.Rows), Plural(len(c.Rows), "size", "sizes"),
			first.Bytes, first.Measured, first.Predicted, signedPct(first.Error), last.Bytes, float64(last.MeasuredBusBW)/1e9, float64(last.PredictedBusBW)/1e9, signedPct(last.Error)))
	}
	lines = append(lines, LeftLines(left, validate.TestReasons)...)
	return []Named{{Key: "collectives", T: t}, {Key: "sizes", T: sizeErrors(validate.SizeErrors(comps))}}, lines
}

// sizeErrors is the table of the tests' time error by band of message
// sizes (validate.SizeErrors).
func sizeErrors(bands []validate.SizeError) *Table {
	t := &Table{
		Title: "Time error by message size, over the tests above (a negative error: predicted too fast; measured slower: the measured time over the predicted, less 1, " +
			"at the 10th and 90th percentiles of the band's rows, from ten rows on)",
		Header: []string{"sizes", "rows", "tests", "mean error (%)", "mean absolute error (%)", "tests predicted too fast",
			"measured slower, 10th percentile (%)", "measured slower, 90th percentile (%)"},
	}
	for _, b := range bands {
		t.Rows = append(t.Rows, []string{b.Band(), strconv.Itoa(b.Rows), strconv.Itoa(b.Tests), signedPct(b.Signed),
			strconv.FormatFloat(100*b.Abs, 'f', 1, 64), strconv.Itoa(b.Fast), pctOrDashSigned(b.Slower[0]), pctOrDashSigned(b.Slower[1])})
	}
	return t
}

// pctOrDashSigned prints a fraction as a signed percentage with one
// decimal (signedPct), "-" for NaN.
func pctOrDashSigned(f float64) string {
	if math.IsNaN(f) {
		return "-"
	}
	return signedPct(f)
}

// ThroughputCharts returns the data of one throughput chart per device,
// model, precision and variant of rep (rep.ThroughputCharts), with a line
// for each device count: the measured samples/s against the global batch
// with the law fitted to them, the prediction through the same batches,
// and the first batch that ran out of memory. A chart where no batch ran
// has no groups.
func ThroughputCharts(rep *validate.MeasuredReport) []plots.ThroughputData {
	label := "predicted from the catalogue (no calibration)"
	if rep.Calibrated() {
		label = "predicted (by the calibration where one applies)"
	}
	var out []plots.ThroughputData
	for _, tc := range rep.ThroughputCharts() {
		data := plots.ThroughputData{Subject: tc.Subject, PredictedLabel: label}
		for _, s := range tc.Series {
			data.Groups = append(data.Groups, throughputGroup(s))
		}
		out = append(out, data)
	}
	return out
}

// throughputGroup is s as the input of plots.Throughput.
func throughputGroup(s validate.ThroughputSeries) plots.ThroughputGroup {
	g := plots.ThroughputGroup{Name: s.Name, Fit: s.Fit}
	for i, b := range s.Batch {
		p := plots.ThroughputPoint{Batch: b, Throughput: s.Measured[i]}
		if s.Fit != nil {
			p.Excluded = s.Fit.Excluded[i]
		}
		g.Points = append(g.Points, p)
		g.Predicted = append(g.Predicted, plots.ThroughputPoint{Batch: b, Throughput: s.Predicted[i]})
	}
	if s.OOM > 0 {
		g.OOM = []float64{s.OOM}
	}
	return g
}
