package cmd

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/fit/logs"
	"scaleplan/internal/config"
	"scaleplan/internal/tables"
	"scaleplan/plots"
	"scaleplan/predict"
	"scaleplan/scenarios"
	"scaleplan/sim"
	"scaleplan/validate"
)

// measuredFlag is validate's --measured.
func measuredFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "measured", Usage: "compare the measurements of log `FILE` (any format fit reads: scaleplan bench, engine/torchbench on GPUs, CSV, Horovod, tf_cnn_benchmarks, torchvision, Hugging Face Trainer, Megatron-LM, DeepSpeed, torchtitan, Lightning; and nccl-tests, whose all_reduce tests are predicted on --system) with the simulator's prediction for devices of that kind from the catalogue alone (roofline, no calibration) and with its memory model's largest batch; those of several devices with --system; --device renames what the log names; repeatable"}
}

// measuredFlags are the flags of validate that apply to --measured logs
// alone.
func measuredFlags() []cli.Flag {
	return append([]cli.Flag{measuredSystemFlag(), measuredPrecisionFlag(), measuredCalibrationFlag(), deviceFlag(), modelFlag(), measuredPlotFlag(), measuredAllReduceFlag()},
		measuredTransportFlags()...)
}

// measuredAllReduceFlag is validate's --allreduce.
func measuredAllReduceFlag() cli.Flag {
	return &cli.StringFlag{Name: "allreduce", Value: "ring", Usage: "with --measured nccl-tests logs: the all-reduce `ALG` the simulator runs for their all_reduce tests on --system: " + strings.Join(collectiveAlgorithms, ", ")}
}

// collectiveAlgorithms are the exchanges of a scenario that are an
// all-reduce, which --allreduce may name: all but the parameter servers.
var collectiveAlgorithms = slices.DeleteFunc(slices.Clone(scenarios.AllReduceAlgorithms), func(a string) bool { return a == "ps" || a == "async-ps" })

// measuredSystemFlag is validate's --system.
func measuredSystemFlag() cli.Flag {
	return &cli.StringFlag{Name: "system", Usage: "with --measured: the catalogue system `NAME` the logs' measurements of several devices ran on (whole nodes of it, its default transports); without it they are left out"}
}

// measuredTransportFlags are validate's --transport and --intra-transport.
func measuredTransportFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "transport", Usage: "with --measured and a system: the system's transport `NAME` that carried the gradients between nodes (verbs, ipoib, tcp, grpc, ...); default the one a scenario takes (verbs where the system has it)"},
		&cli.StringFlag{Name: "intra-transport", Usage: "with --measured and a system: the system's transport `NAME` that carried the gradients inside a node (nccl, shm, ...); default the one a scenario takes (nccl where the system has it)"},
	}
}

// measuredPrecisionFlag is validate's --precision.
func measuredPrecisionFlag() cli.Flag {
	return &cli.StringFlag{Name: "precision", Usage: "with --measured: the precision `P` of the measurements whose log does not say (Horovod, tf_cnn_benchmarks): " + strings.Join(measuredPrecisionNames(), ", ")}
}

// measuredCalibrationFlag is validate's --calibration.
func measuredCalibrationFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "calibration", Usage: "with --measured: calibration `FILE` written by `scaleplan fit --out`, or published: the measurements whose model, device and precision it measured are predicted by its law in place of the roofline, and those it was fitted to are marked and left out of the error; repeatable"}
}

// measuredPrecisionNames are the precisions a measurement may give: those
// a calibration may, but fp64, which no profile's recipe trains at.
func measuredPrecisionNames() []string {
	return slices.DeleteFunc(scenarios.MeasuredPrecisionNames(), func(n string) bool { return n == "fp64" })
}

// measuredPlotFlag is validate's --plot.
func measuredPlotFlag() cli.Flag {
	return &cli.StringFlag{Name: "plot", Usage: "with --measured: write a throughput chart of each device, model and precision (the measured points, the prediction dotted, the out-of-memory batch) as PNG and SVG into `DIR`"}
}

// runValidateMeasured is `validate --measured FILE...`.
func runValidateMeasured(c *cli.Context, maxErr float64) error {
	cat, prof, err := loadCatalogAndProfiles(c)
	if err != nil {
		return err
	}
	rename, err := deviceRenamer("validate", c.String("device"))
	if err != nil {
		return err
	}
	in := &validate.LogReader{System: c.String("system"), Precision: c.String("precision"),
		Transport: c.String("transport"), IntraTransport: c.String("intra-transport"), Catalog: cat}
	if c.IsSet("system") {
		if _, err := cat.System(in.System); err != nil {
			return usagef("validate: --system: %v", err)
		}
	}
	if c.IsSet("precision") && !slices.Contains(measuredPrecisionNames(), in.Precision) {
		return usagef("validate: --precision: %s", config.Unknown("precision", in.Precision, measuredPrecisionNames()))
	}
	lgs, err := readLogs(c.StringSlice("measured"), func(lg *logs.Log) { reportLog(c.App.ErrWriter, "validate", lg) }, rename)
	if err != nil {
		return fmt.Errorf("validate: %w", err)
	}
	if err := nameModel("validate", c.String("model"), lgs, prof); err != nil {
		return err
	}
	var ms []validate.Measured
	left := map[string]int{}
	for _, lg := range lgs {
		m, err := in.Measurements(lg, prof, left)
		if err != nil {
			return fmt.Errorf("validate: %w", err)
		}
		ms = append(ms, m...)
	}
	alg := c.String("allreduce")
	algorithm, err := sim.ParseAlgorithm(alg)
	if err != nil || !slices.Contains(collectiveAlgorithms, alg) {
		return usagef("validate: --allreduce %q: want %s", alg, strings.Join(collectiveAlgorithms, ", "))
	}
	colls := in.Collectives(lgs, algorithm, left)
	format := c.String("format")
	if len(colls) > 0 && len(ms) > 0 && (format == "json" || format == "csv") {
		return usagef("validate: --format %s takes the measurements of training logs or the collective tests of nccl-tests logs, not both in one call", format)
	}
	var collErr error // the collectives' --max-error, returned once the measurements are written
	if len(colls) > 0 {
		comps, err := validate.CompareCollectives(cat, colls)
		if err != nil {
			return fmt.Errorf("validate: %w", err)
		}
		if err := writeCollectives(c.App.Writer, format, comps, left); err != nil {
			return err
		}
		collErr = collectivesMaxError(c, comps, maxErr)
		if len(ms) == 0 {
			return collErr
		}
		fmt.Fprintln(c.App.Writer)
	}
	if len(ms) == 0 {
		var why []string
		for _, w := range leftReasons {
			if n := left[w]; n > 0 {
				why = append(why, fmt.Sprintf("%d %s", n, w))
			}
		}
		what := "measurement or out-of-memory record"
		if slices.ContainsFunc(lgs, func(lg *logs.Log) bool { return len(lg.Collectives) > 0 }) {
			what = "measurement, out-of-memory record or all-reduce test"
		}
		msg := fmt.Sprintf("validate: --measured %s: no %s to compare", strings.Join(c.StringSlice("measured"), ", "), what)
		if len(why) > 0 {
			msg += " (left out: " + strings.Join(why, "; ") + ")"
		}
		return errors.New(msg)
	}
	cals, err := scenarios.ReadCalibrationFiles(c.StringSlice("calibration"))
	if err != nil {
		return fmt.Errorf("validate: calibration: %w", err)
	}
	rep, err := validate.CompareCalibrated(ms, cat, prof, cals, predict.Options{Steps: c.Int("steps")})
	if err != nil {
		return fmt.Errorf("validate: %w", err)
	}
	notes, err := measuredCalibrationsUsed(cals, rep)
	if err != nil {
		return err
	}
	if err := writeMeasured(c.App.Writer, c.String("format"), rep, left, len(colls) > 0, notes); err != nil {
		return err
	}
	if dir := c.String("plot"); dir != "" {
		if err := writeMeasuredCharts(c, dir, rep); err != nil {
			return err
		}
	}
	if c.IsSet("max-error") && rep.MAE > maxErr/100 {
		return errors.Join(fmt.Errorf("validate: mean absolute error %.1f%% exceeds --max-error %g%%", 100*rep.MAE, maxErr), collErr)
	}
	return collErr
}

// leftReasons are the reasons to leave a record or a collective test out,
// in the order they are reported: the records', then the tests'.
var leftReasons = slices.Concat(validate.RecordReasons, validate.TestReasons)

// leftLines says how many of left were left out for each of reasons, a
// line each: "4 records left out, of several devices: ...", "1 test left
// out, of another op than all_reduce ...".
func leftLines(left map[string]int, reasons []string) []string {
	var lines []string
	for _, why := range reasons {
		n := left[why]
		switch {
		case n == 0:
		case slices.Contains(validate.TestReasons, why):
			lines = append(lines, fmt.Sprintf("%d %s left out, %s", n, tables.Plural(n, "test", "tests"), strings.TrimPrefix(why, "of a collective test ")))
		default:
			lines = append(lines, fmt.Sprintf("%d %s left out, %s", n, tables.Plural(n, "record", "records"), why))
		}
	}
	return lines
}

// writeCollectives prints the all-reduce tests measured against predicted,
// a row per message size, and a summary line per test.
func writeCollectives(w io.Writer, format string, comps []validate.CollectiveComparison, left map[string]int) error {
	t := &tables.Table{
		Title: "All-reduce tests (nccl-tests) measured against predicted on the catalogue system's links",
		Header: []string{"source", "ranks", "nodes", "system", "exchange", "algorithm", "size", "measured (us)", "predicted (us)", "error (%)",
			"measured busbw (GB/s)", "predicted busbw (GB/s)", "line"},
	}
	var lines []string
	for _, c := range comps {
		nodes := c.Ranks / c.DevicesPerNode
		for _, r := range c.Rows {
			t.Rows = append(t.Rows, []string{c.Source, strconv.Itoa(c.Ranks), strconv.Itoa(nodes), c.SystemName, tables.Dash(c.Exchange), c.Algorithm.String(),
				r.Bytes.String(), strconv.FormatFloat(float64(r.Measured)*1e6, 'f', 2, 64), strconv.FormatFloat(float64(r.Predicted)*1e6, 'f', 2, 64),
				signedPct(r.Error), strconv.FormatFloat(float64(r.MeasuredBusBW)/1e9, 'f', 2, 64), strconv.FormatFloat(float64(r.PredictedBusBW)/1e9, 'f', 2, 64),
				strconv.Itoa(r.Line)})
		}
		first, last := c.Rows[0], c.Rows[len(c.Rows)-1]
		lines = append(lines, fmt.Sprintf("%s: all-reduce over %d ranks, %d %s of %s (%s, %s): mean absolute error of the time %.1f%% over %d %s; at %s %v measured, %v predicted (%s%%); at %s bus bandwidth %v measured, %v predicted (%s%% in time)",
			c.Source, c.Ranks, nodes, tables.Plural(nodes, "node", "nodes"), c.SystemName, tables.Dash(c.Exchange), c.Algorithm, 100*c.MAE, len(c.Rows), tables.Plural(len(c.Rows), "size", "sizes"),
			first.Bytes, first.Measured, first.Predicted, signedPct(first.Error), last.Bytes, last.MeasuredBusBW, last.PredictedBusBW, signedPct(last.Error)))
	}
	lines = append(lines, leftLines(left, validate.TestReasons)...)
	return tables.WriteReport(w, format, []tables.Named{{Key: "collectives", T: t}}, nil, lines)
}

// collectivesMaxError returns an error when --max-error is set and a
// test's mean absolute error is larger.
func collectivesMaxError(c *cli.Context, comps []validate.CollectiveComparison, maxErr float64) error {
	if !c.IsSet("max-error") {
		return nil
	}
	for _, cp := range comps {
		if cp.MAE > maxErr/100 {
			return fmt.Errorf("validate: %s: mean absolute error %.1f%% of the all-reduce time exceeds --max-error %g%%", cp.Source, 100*cp.MAE, maxErr)
		}
	}
	return nil
}

// writeMeasured prints every measurement against its prediction, then one
// line per device, model, precision, variant and device count with the
// memory limit, then, where one device of two kinds ran the same
// configuration, the speed of one kind over the other (rep.Ratios), then
// the summary. The variant column is there when a group has one, the
// devices and system columns when a group has several devices, and the
// compute column when a calibration computed a row. The
// summary says what was left out, the collective tests too unless
// testsWritten (their table says it).
func writeMeasured(w io.Writer, format string, rep *validate.MeasuredReport, left map[string]int, testsWritten bool, notes []string) error {
	variants := slices.ContainsFunc(rep.Groups, func(g validate.MeasuredGroup) bool { return g.Variant != "" })
	several := slices.ContainsFunc(rep.Groups, func(g validate.MeasuredGroup) bool { return g.Devices > 1 })
	// key returns the cells that name a group, in a new slice: its device,
	// model, precision, variant (where a group has one), devices and
	// system (where a group has several devices).
	key := func(device, model, precision, variant, devices, system string) []string {
		k := []string{device, model, precision}
		if variants {
			k = append(k, variant)
		}
		if several {
			k = append(k, devices, system)
		}
		return k
	}
	header := func(rest ...string) []string {
		return append(key("device", "model", "precision", "variant", "devices", "system"), rest...)
	}
	cells := func(g *validate.MeasuredGroup) []string {
		return key(g.Device, g.Model, g.Precision, tables.Dash(g.Variant), strconv.Itoa(g.Devices), tables.Dash(g.System))
	}
	sources := rep.CalibrationSources()
	calibrated := len(sources) > 0
	title := "Measured against predicted from the catalogue alone ("
	compute := "roofline, no calibration"
	if calibrated {
		title = "Measured against predicted ("
		compute = "compute by a calibration where one applies, else the roofline"
	}
	if several {
		title += compute + "; several devices on the system's nodes, synthetic input)"
	} else {
		title += "one device, " + compute + ")"
	}
	rowHeader := header("batch", "measured (samples/s)", "predicted (samples/s)", "error (%)")
	if calibrated {
		rowHeader = append(rowHeader, "compute")
	}
	if several {
		rowHeader = append(rowHeader, "exchange", "scaling measured (%)", "scaling predicted (%)")
	}
	rowHeader = append(rowHeader, "peak memory", "memory model", "source")
	rows := &tables.Table{Title: title, Header: rowHeader}
	for i := range rep.Groups {
		g := &rep.Groups[i]
		for _, r := range g.Rows {
			meas, pred, e := "out of memory", "-", "-"
			if !r.OOM {
				meas, pred, e = tables.Num(r.SamplesPerSec), tables.Num(r.Predicted), signedPct(r.Error())
			}
			peak := "-"
			if r.PeakMemory > 0 {
				peak = r.PeakMemory.Decimal()
			}
			row := append(cells(g), strconv.Itoa(r.Batch), meas, pred, e)
			if calibrated {
				how := "roofline"
				switch {
				case r.Fitted:
					how = "fitted (not a prediction)"
				case r.Calibration != "":
					how = "calibrated"
				}
				row = append(row, how)
			}
			if several {
				row = append(row, tables.Dash(r.Exchange), pctOrDash(r.MeasuredScaling), pctOrDash(r.PredictedScaling))
			}
			rows.Rows = append(rows.Rows, append(row, peak, r.Footprint.Decimal(), r.Source))
		}
	}
	title = "Per device, model and precision"
	switch {
	case variants && several:
		title = "Per device, model, precision, variant and device count"
	case variants:
		title = "Per device, model, precision and variant"
	case several:
		title = "Per device, model, precision and device count"
	}
	sum := &tables.Table{Title: title,
		Header: header("batches", "mean absolute error (%)", "error at the largest batch (%)", "largest batch run", "first out of memory", "memory model's largest batch", "within one power of two")}
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
		sum.Rows = append(sum.Rows, append(cells(&g), strconv.Itoa(len(g.Rows)), mae, last, strconv.Itoa(g.LargestRun), oom, pmax, agree))
	}
	ts := []tables.Named{{Key: "measurements", T: rows}, {Key: "groups", T: sum}}
	if len(rep.Ratios) > 0 {
		h := []string{"model", "precision"}
		if variants {
			h = append(h, "variant")
		}
		ratios := &tables.Table{Title: "Between kinds of device (one device of each, at the largest batch both ran)",
			Header: append(h, "batch", "device A", "device B", "A measured (samples/s)", "B measured (samples/s)", "B/A measured", "B/A predicted", "error (%)")}
		for _, r := range rep.Ratios {
			row := []string{r.Model, r.Precision}
			if variants {
				row = append(row, tables.Dash(r.Variant))
			}
			ratios.Rows = append(ratios.Rows, append(row, strconv.Itoa(r.Batch), r.A, r.B, tables.Num(r.MeasuredA), tables.Num(r.MeasuredB),
				fmt.Sprintf("%.3f", r.Measured()), fmt.Sprintf("%.3f", r.Predicted()), signedPct(r.Error())))
		}
		ts = append(ts, tables.Named{Key: "devices", T: ratios})
	}
	var lines []string
	switch {
	case !calibrated:
		lines = append(lines, fmt.Sprintf("mean absolute error of samples/s over %d measurements: %.1f%%", rep.Rows, 100*rep.MAE))
	case rep.Rows == 0:
		lines = append(lines, fmt.Sprintf("no prediction: the calibration was fitted to every measurement that ran (%d)", rep.Fitted))
	default:
		l := fmt.Sprintf("mean absolute error of samples/s over %d %s: %.1f%%", rep.Rows, tables.Plural(rep.Rows, "prediction", "predictions"), 100*rep.MAE)
		if mae, n := rep.CalibratedError(); n > 0 && n < rep.Rows {
			l += fmt.Sprintf(", %.1f%% over the %d computed by a calibration", 100*mae, n)
		}
		lines = append(lines, fmt.Sprintf("%s; %d %s the calibration was fitted to left out", l, rep.Fitted, tables.Plural(rep.Fitted, "measurement", "measurements")))
	}
	for _, src := range sources {
		lines = append(lines, "calibrated by "+src)
	}
	if rep.ScalingRows > 0 {
		lines = append(lines, fmt.Sprintf("scaling efficiency against one device at the same batch, over %d %s: predicted %.1f points from measured, mean absolute", rep.ScalingRows, tables.Plural(rep.ScalingRows, "measurement", "measurements"), 100*rep.ScalingError))
	}
	if n := len(rep.Ratios); n > 0 {
		lines = append(lines, fmt.Sprintf("speed of one kind of device over another, over %d %s: predicted %.1f%% from measured, mean absolute", n, tables.Plural(n, "configuration", "configurations"), 100*rep.RatioError))
	}
	reasons := leftReasons
	if testsWritten {
		reasons = validate.RecordReasons // the tests' are under their own table
	}
	lines = append(lines, leftLines(left, reasons)...)
	lines = append(lines, "the memory model's largest batch agrees when it lies between half the largest batch that ran and twice the first that ran out of memory; with no out-of-memory record there is no limit to check it against")
	return tables.WriteReport(w, format, ts, notes, lines)
}

// writeMeasuredCharts writes one throughput chart per device, model,
// precision and variant of rep into dir (rep.ThroughputCharts), with a
// line for each device count: the measured samples/s against the global
// batch with the law fitted to them, the prediction through the same
// batches, and the first batch that ran out of memory.
func writeMeasuredCharts(c *cli.Context, dir string, rep *validate.MeasuredReport) error {
	label := "predicted from the catalogue (no calibration)"
	if rep.Calibrated() {
		label = "predicted (by the calibration where one applies)"
	}
	var charts []*plots.Chart
	for _, tc := range rep.ThroughputCharts() {
		if len(tc.Series) == 0 {
			fmt.Fprintf(c.App.ErrWriter, "validate: no chart of %s: no batch ran\n", tc.Subject)
			continue
		}
		data := plots.ThroughputData{Subject: tc.Subject, PredictedLabel: label}
		for _, s := range tc.Series {
			data.Groups = append(data.Groups, throughputGroup(s))
		}
		ch, err := plots.Throughput(data)
		if err != nil {
			return fmt.Errorf("validate: throughput chart of %s: %w", tc.Subject, err)
		}
		charts = append(charts, ch)
	}
	bar := newBar(c, "validate: charts", len(charts))
	paths, err := writeCharts(dir, charts, bar)
	bar.Done()
	for _, p := range paths {
		fmt.Fprintf(c.App.ErrWriter, "validate: wrote %s\n", p)
	}
	if err != nil {
		return fmt.Errorf("validate: %w", err)
	}
	return nil
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

// pctOrDash prints a fraction as a percentage with one decimal, "-" for
// NaN.
func pctOrDash(f float64) string {
	if math.IsNaN(f) {
		return "-"
	}
	return fmt.Sprintf("%.1f", 100*f)
}

// measuredCalibrationsUsed returns an error naming each calibration file
// whose law computed no measurement of rep, with what the measurements
// needed and what the file has, as predict and plan refuse a calibration
// that applies to nothing. The published calibrations built in are no
// file the user wrote: where none of them applies, it returns a note
// saying that every row is the uncalibrated prediction instead.
func measuredCalibrationsUsed(cals []scenarios.CalibrationFile, rep *validate.MeasuredReport) (notes []string, err error) {
	var need, errs []string
	for _, g := range rep.Groups {
		if n := fmt.Sprintf("%s on %s, %s", g.Model, g.Device, g.Precision); !slices.Contains(need, n) {
			need = append(need, n)
		}
	}
	for i, f := range cals {
		switch {
		case rep.CalibrationsUsed[i]:
		case f.Path == scenarios.Published:
			notes = append(notes, fmt.Sprintf("calibration published: no published figure applies to these measurements (they need: %s), so each row is the uncalibrated prediction", strings.Join(need, "; ")))
		default:
			errs = append(errs, fmt.Sprintf("validate: calibration %s: no throughput entry applies to a measurement (they need: %s; the file has: %s)", f.Path, strings.Join(need, "; "), f.Entries()))
		}
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "\n"))
	}
	return notes, nil
}
