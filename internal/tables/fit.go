package tables

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"scaleplan/fit"
	"scaleplan/fit/logs"
	"scaleplan/hw"
	"scaleplan/internal/benchlog"
	"scaleplan/internal/calib"
	"scaleplan/internal/units"
	"scaleplan/model"
	"scaleplan/scenarios"
)

// Fit lays out the report of `scaleplan fit` as tables, leaving out empty
// ones: the throughput law of each group (with a column for each label of
// groupBy, the --group-by labels), the points it excluded, the law across
// device counts, the steps-to-target curves and their points, the
// training runs and the collective tests.
func Fit(rep *fit.Report, groupBy []string) []Named {
	var out []Named
	add := func(key string, t *Table) {
		if len(t.Rows) > 0 {
			out = append(out, Named{Key: key, T: t})
		}
	}
	cols := labelColumns(rep, groupBy)
	add("throughput", throughputTable(rep, cols))
	add("excluded", excludedTable(rep))
	add("comm", commTable(rep, cols))
	add("steps", stepsTable(rep, cols))
	add("steps_points", stepsPointsTable(rep))
	add("runs", runsTable(rep))
	add("collectives", collectivesTable(rep))
	return out
}

// collectivesTable is the latency–bandwidth fit of each collective test
// of nccl-tests logs.
func collectivesTable(rep *fit.Report) *Table {
	t := &Table{
		Title: "Collectives (nccl-tests): T(S) = α + S/β per test, least squares of the relative error; bus bandwidth β × nccl-tests' factor",
		Header: []string{"source", "line", "op", "ranks", "nodes", "device", "sizes", "points", "latency α", "bandwidth β", "bus bandwidth",
			"peak busbw (at size)", "avg busbw (log)", "R²", "worst point", "note"},
	}
	for _, f := range rep.Collectives {
		sizes := sizeRange(f.Points)
		nodes, avg, peak := "-", "-", "-"
		if f.Nodes > 0 {
			nodes = strconv.Itoa(f.Nodes)
		}
		if f.AvgBusBW > 0 {
			avg = f.AvgBusBW.String()
		}
		if f.PeakBusBW > 0 {
			peak = fmt.Sprintf("%s (%s)", f.PeakBusBW, f.PeakBytes)
		}
		lat, bw, bus, r2, worst, note := "", "", "", "", "", ""
		if f.Err != nil {
			note = f.Err.Error()
			if f.Latency > 0 {
				lat = f.Latency.String()
			}
		} else {
			lat, bw, r2 = f.Latency.String(), f.Bandwidth.String(), fmt.Sprintf("%.4f", f.R2)
			worst = fmt.Sprintf("%.1f%%", 100*f.MaxRelError)
			if f.BusBandwidth > 0 {
				bus = f.BusBandwidth.String()
			} else {
				note = "op not known: no bus factor"
			}
		}
		t.Rows = append(t.Rows, []string{f.Source, strconv.Itoa(f.Line), Dash(f.Op), strconv.Itoa(f.Ranks), nodes, Dash(f.Device), sizes,
			strconv.Itoa(len(f.Points)), lat, bw, bus, peak, avg, r2, worst, note})
	}
	return t
}

// throughputTable is the fit of the throughput law to each group, with
// a column for each label of groupBy; a group the law could not be
// fitted to gives why, and the samples/s measured.
func throughputTable(rep *fit.Report, groupBy []string) *Table {
	t := &Table{
		Title:  "Throughput law v = b / (b/v0 + t) per group (b: global batch; v0: samples/s of the device group)",
		Header: append(append([]string{"model", "device", "devices", "precision"}, groupBy...), "points", "excluded", "batches", "v0", "v0 95%", "t", "t 95%", "R²", "note"),
	}
	for _, g := range rep.Groups {
		row := append(keyCells(g.Key), labelCells(g.Key.Labels, groupBy)...)
		var notes []string
		if g.Ignored > 0 {
			notes = append(notes, fmt.Sprintf("%d step records ignored", g.Ignored))
		}
		if g.BelowMin > 0 {
			notes = append(notes, fmt.Sprintf("%d under --min-batch left out", g.BelowMin))
		}
		if len(g.OOM) > 0 {
			notes = append(notes, "out of memory at "+JoinInts(g.OOM))
		}
		f := g.Fit
		if f == nil {
			row = append(row, strconv.Itoa(len(g.Points)), "", batchRange(g.Points), "", "", "", "", "")
			notes = append([]string{g.Err.Error()}, notes...)
			if m := measured(g.Points); m != "" {
				notes = append(notes, "measured "+m)
			}
			t.Rows = append(t.Rows, append(row, strings.Join(notes, "; ")))
			continue
		}
		if f.Bound {
			notes = append(notes, "t < 0 at the optimum: held at 0")
		}
		switch {
		case f.V0Unbounded:
			notes = append(notes, "v0 unbounded: the step time does not grow with the batch beyond its scatter; only t is determined (larger batches bound v0)")
		case math.IsInf(f.V0Interval[1], 1):
			notes = append(notes, fmt.Sprintf("v0 has no upper limit at %g%%: the time per sample is within its error of 0 (more or larger batches narrow it)", 100*f.Level))
		}
		if f.LackOfFit != nil {
			notes = append(notes, lackOfFitNote(f.LackOfFit))
		}
		excluded := len(g.Points) - f.Used
		v0 := Num(f.V0)
		if f.V0Unbounded {
			v0 = "unbounded"
		}
		row = append(row, strconv.Itoa(f.Used), strconv.Itoa(excluded), batchRange(g.Points),
			v0, NumInterval(f.V0Interval[0], f.V0Interval[1]),
			f.T.String(), SecondsInterval(f.TInterval), fmt.Sprintf("%.4f", f.R2), strings.Join(notes, "; "))
		t.Rows = append(t.Rows, row)
	}
	return t
}

// measured returns the samples/s of points, "X samples/s" or "X–Y
// samples/s" over several, for a group the law could not be fitted to;
// "" for none.
func measured(points []fit.Point) string {
	if len(points) == 0 {
		return ""
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range points {
		lo, hi = min(lo, p.Throughput), max(hi, p.Throughput)
	}
	if lo == hi {
		return Num(lo) + " samples/s"
	}
	return Num(lo) + "–" + Num(hi) + " samples/s"
}

// lackOfFitNote says how much repeated measurements scatter and whether
// the law misses their means by more than that (fit.LackOfFit).
func lackOfFitNote(lf *fit.LackOfFit) string {
	return fmt.Sprintf("repeats scatter %.1f%%; lack of fit p = %.2g", 100*lf.PureError, lf.P)
}

// excludedTable lists the points of every group that the law does not
// explain, which the fit left out.
func excludedTable(rep *fit.Report) *Table {
	t := &Table{
		Title:  "Points the law does not explain (excluded from the fit)",
		Header: []string{"group", "batch", "samples/s", "law", "residual", "z", "source"},
	}
	for _, g := range rep.Groups {
		for _, p := range g.Points {
			if !p.Excluded {
				continue
			}
			t.Rows = append(t.Rows, []string{g.Key.String(), strconv.Itoa(p.Batch), Num(p.Throughput), Num(p.Fitted),
				fmt.Sprintf("%+.1f%%", 100*p.Residual), FmtZ(p.Z), fmt.Sprintf("%s:%d", p.Source, p.Line)})
		}
	}
	return t
}

// commTable is the fit of the step time across device counts of each
// group apart only in its device count, with the all-reduce bandwidth
// where the gradient size is known.
func commTable(rep *fit.Report, groupBy []string) *Table {
	t := &Table{
		Title:  "Across device counts: t(p) = t_fixed + 2(p-1)/p * t_comm, t_comm = S/β",
		Header: append(append([]string{"model", "device", "precision"}, groupBy...), "devices", "t", "t_fixed", "t_comm", "t_comm 95%", "S", "bandwidth β", "β 95%", "note"),
	}
	for _, cg := range rep.Comm {
		row := append([]string{Dash(cg.Model), Dash(cg.Device), Dash(cg.Precision)}, labelCells(cg.Labels, groupBy)...)
		f := cg.Fit
		if f == nil {
			t.Rows = append(t.Rows, append(row, "", "", "", "", "", "", "", "", cg.Err.Error()))
			continue
		}
		ts := make([]string, len(f.T))
		for i, v := range f.T {
			ts[i] = v.String()
		}
		var notes []string
		if f.Exact {
			notes = append(notes, "two counts: exact")
		}
		size, bw, bwi := "", "", ""
		switch {
		case f.GradientSize == 0:
			notes = append(notes, "no --gradient-size: bandwidth not estimated")
		case f.TComm <= 0:
			size = f.GradientSize.String()
			notes = append(notes, "t does not grow with the device count")
		default:
			size, bw = f.GradientSize.String(), f.Bandwidth.String()
			if lo, hi := f.BandwidthInterval[0], f.BandwidthInterval[1]; !math.IsNaN(float64(lo)) {
				up := "∞"
				if !math.IsInf(float64(hi), 0) {
					up = hi.String()
				}
				bwi = "[" + lo.String() + ", " + up + "]"
			}
		}
		row = append(row, JoinInts(f.Counts), strings.Join(ts, ", "), f.TFixed.String(), f.TComm.String(),
			SecondsInterval(f.TCommInterval), size, bw, bwi, strings.Join(notes, "; "))
		t.Rows = append(t.Rows, row)
	}
	return t
}

// stepsTable is the steps-to-target curve of each model and target.
func stepsTable(rep *fit.Report, groupBy []string) *Table {
	t := &Table{
		Title:  "Steps to target: S(B) = S_min (1 + B_noise/B) (B: global batch)",
		Header: append(append([]string{"model", "target"}, groupBy...), "points", "not reached", "S_min", "S_min 95%", "B_noise", "B_noise 95%", "R²", "largest batch reached", "note"),
	}
	for _, sg := range rep.Steps {
		row := append([]string{Dash(sg.Model), Target(sg.Target)}, labelCells(sg.Labels, groupBy)...)
		unreached := 0
		for _, p := range sg.Points {
			if !p.Reached {
				unreached++
			}
		}
		maxB := ""
		if sg.MaxReached > 0 {
			maxB = strconv.Itoa(sg.MaxReached)
		}
		f := sg.Fit
		if f == nil {
			t.Rows = append(t.Rows, append(row, strconv.Itoa(len(sg.Points)-unreached), strconv.Itoa(unreached), "", "", "", "", "", maxB, sg.Err.Error()))
			continue
		}
		var notes []string
		if f.Used < len(sg.Points)-unreached {
			notes = append(notes, fmt.Sprintf("%d excluded", len(sg.Points)-unreached-f.Used))
		}
		if f.Bound {
			notes = append(notes, "B_noise < 0 at the optimum, held at 0: the steps do not fall as the batch grows "+
				"(every batch measured is past the noise scale, or the runs do not train to one target alike)")
		}
		if f.LackOfFit != nil {
			notes = append(notes, lackOfFitNote(f.LackOfFit))
		}
		sMin, sMinInt := Num(f.SMin), NumInterval(f.SMinInterval[0], f.SMinInterval[1])
		bNoise, bNoiseInt := Num(f.BNoise), NumInterval(f.BNoiseInterval[0], f.BNoiseInterval[1])
		if f.SMin < 1 {
			// Below one step S_min is not a number of steps: every batch
			// measured scales perfectly, and only the product is known.
			sMin, sMinInt, bNoise, bNoiseInt = "< 1", "", "> "+Num(f.SMin*f.BNoise), ""
			notes = append([]string{fmt.Sprintf("perfect scaling at every batch measured: steps × batch = %s samples to the target; "+
				"S_min and B_noise are not determined apart (batches larger than %s would show where the returns diminish)", Num(f.SMin*f.BNoise), cmp.Or(maxB, "these"))}, notes...)
		}
		note := strings.Join(notes, "; ")
		t.Rows = append(t.Rows, append(row, strconv.Itoa(f.Used), strconv.Itoa(unreached), sMin, sMinInt,
			bNoise, bNoiseInt, fmt.Sprintf("%.4f", f.R2), maxB, note))
	}
	return t
}

// stepsPointsTable lists the runs of each steps-to-target curve with
// their regime.
func stepsPointsTable(rep *fit.Report) *Table {
	t := &Table{
		Title: fmt.Sprintf("Steps-to-target regimes (perfect scaling: S within %.0f%% of S_min·B_noise/B; maximal data parallelism: within %.0f%% of S_min)",
			100*fit.RegimeTolerance, 100*fit.RegimeTolerance),
		Header: []string{"model", "target", "batch", "steps", "reached", "S(B)", "regime", "note"},
	}
	for _, sg := range rep.Steps {
		for _, p := range sg.Points {
			reached, fitted, regime, note := "yes", "", "", ""
			if sg.Fit != nil {
				fitted, regime = Num(p.Fitted), p.Regime.String()
			}
			switch {
			case !p.Reached:
				reached = "no"
				note = fmt.Sprintf("stopped at %d steps (accuracy %s)", p.Steps, Target(p.Accuracy))
				if sg.Fit != nil && p.Fitted < float64(p.Steps) {
					note += "; the curve predicts fewer steps"
				}
			case p.Excluded:
				note = fmt.Sprintf("excluded: %+.1f%% from the curve (z %s)", 100*p.Residual, FmtZ(p.Z))
			}
			t.Rows = append(t.Rows, []string{Dash(sg.Model), Target(sg.Target), strconv.Itoa(p.Batch), strconv.Itoa(p.Steps), reached, fitted, regime, note})
		}
	}
	return t
}

// runsTable lists the training runs the logs give.
func runsTable(rep *fit.Report) *Table {
	t := &Table{
		Title:  "Training runs",
		Header: []string{"source", "run", "model", "platform", "global batch", "step", "data wait", "epochs", "accuracy", "status", "time to train"},
	}
	for _, r := range rep.Runs {
		ttt := ""
		if r.TimeToTrain > 0 {
			ttt = fmt.Sprintf("%s (%.2f min)", r.TimeToTrain, float64(r.TimeToTrain/units.Minute))
		}
		step, wait := "-", "-"
		if r.StepTime > 0 {
			step = r.StepTime.String()
			if r.DataWait > 0 {
				wait = fmt.Sprintf("%s (%.1f%%)", r.DataWait, 100*float64(r.DataWait/r.StepTime))
			}
		}
		batch := "-" // the log did not give it
		if r.GlobalBatch > 0 {
			batch = strconv.Itoa(r.GlobalBatch)
		}
		epochs := "-" // none completed, or the log counts none (Megatron's)
		if r.Epochs > 0 {
			epochs = Num(r.Epochs)
		}
		t.Rows = append(t.Rows, []string{r.Source, r.Run.Run, Dash(r.Model), Dash(r.Device), batch,
			step, wait, epochs, Target(r.Accuracy), cmp.Or(r.Status, "incomplete"), ttt})
	}
	return t
}

// keyCells are the model, device, device count ("?" unknown) and
// precision of a group.
func keyCells(k fit.Key) []string {
	devices := "?"
	if k.Devices > 0 {
		devices = strconv.Itoa(k.Devices)
	}
	return []string{Dash(k.Model), Dash(k.Device), devices, Dash(k.Precision)}
}

// labelColumns returns the label columns of the fit tables: the
// --group-by labels, then those fit.Fit keeps in a key whether or not it
// is asked to, where a group has one: calib.KeptLabels, "transport" for
// workers that exchanged nothing, and the node count of groups measured
// on several nodes (benchlog.NodesLabel).
func labelColumns(rep *fit.Report, groupBy []string) []string {
	cols := slices.Clip(groupBy)
	for _, name := range append(slices.Clip(calib.KeptLabels), "transport", benchlog.NodesLabel) {
		if slices.Contains(cols, name) {
			continue
		}
		for _, g := range rep.Groups {
			if _, ok := g.Key.Labels[name]; ok {
				cols = append(cols, name)
				break
			}
		}
	}
	return cols
}

// labelCells are the values of the labels names, "-" for one absent.
func labelCells(labels map[string]string, names []string) []string {
	cells := make([]string, len(names))
	for i, n := range names {
		cells[i] = Dash(labels[n])
	}
	return cells
}

// batchRange is the range of the batches of ps, "lo–hi" or one batch;
// "" for none.
func batchRange(ps []fit.Point) string {
	if len(ps) == 0 {
		return ""
	}
	lo, hi := extent(ps, func(p fit.Point) int { return p.Batch })
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// extent returns the least and the greatest key of ps, which must not be
// empty.
func extent[P any, T cmp.Ordered](ps []P, key func(P) T) (lo, hi T) {
	lo, hi = key(ps[0]), key(ps[0])
	for _, p := range ps[1:] {
		lo, hi = min(lo, key(p)), max(hi, key(p))
	}
	return lo, hi
}

// CalibrationReach says, a line for each throughput entry of the
// calibration cal written to path, which scenarios take it
// (scenarios.PickCalibration: the model, the device by its catalogue key
// or CUDA name, the precision) or why none does, and a line for each
// steps entry whose model the profiles lack. Each line begins with path;
// `scaleplan fit --out` prints them on stderr after "fit: ".
func CalibrationReach(path string, cal *calib.Calibration, cat *hw.Catalog, prof *model.Profiles) []string {
	var lines []string
	for i := range cal.Throughput {
		lines = append(lines, throughputReach(path, cal, &cal.Throughput[i], cat, prof))
	}
	for _, e := range cal.Steps {
		if prof.Models[e.Model] == nil {
			lines = append(lines, fmt.Sprintf("%s: steps to target of %s: no scenario takes it: the profiles have no model %q", path, e.Model, e.Model))
		}
	}
	for _, e := range cal.Fabric {
		lines = append(lines, fmt.Sprintf("%s: the %s link of %s (%v, %v a message): scenarios on %s with --calibration %s take it in place of the catalogue's",
			path, e.Level, e.System, e.Bandwidth, e.Latency, e.System, path))
	}
	return lines
}

// throughputReach is CalibrationReach's line of the entry e of cal.
func throughputReach(path string, cal *calib.Calibration, e *calib.ThroughputEntry, cat *hw.Catalog, prof *model.Profiles) string {
	what := fmt.Sprintf("%s: %s on %d %s", path, e.Model, e.Devices, cmp.Or(e.Device, "(no device)"))
	if e.Precision != "" {
		what += ", " + e.Precision
	}
	variant := calib.RunVariant(e.Labels)
	if variant != "" {
		what += ", " + variant
	}
	var precs []string
	for _, p := range hw.Precisions {
		if scenarios.PrecisionApplies(e.Precision, string(p)) {
			precs = append(precs, string(p))
		}
	}
	d := cat.DeviceCalled(e.Device)
	unit, _ := prof.SampleUnit(e.Model)
	if why := unreachable(e, unit, d, precs, cat, prof); why != "" {
		return what + ": no scenario takes it: " + why
	}
	// Of the entries that apply, scenarios take the one measured on the
	// fewest devices.
	var taken []string
	var other *calib.ThroughputEntry
	for _, p := range precs {
		picked, _ := scenarios.PickEntry([]scenarios.CalibrationFile{{Path: path, Cal: cal}}, e.Model, unit, d, p)
		switch {
		case picked == nil:
		case picked == e:
			taken = append(taken, p)
		default:
			other = picked
		}
	}
	if len(taken) == 0 {
		// Entries apart only by how the model ran: say which one.
		which := ""
		if ov := calib.RunVariant(other.Labels); variant != "" || ov != "" {
			which = " (" + cmp.Or(ov, "no run labels") + ")"
		}
		return fmt.Sprintf("%s: scenarios of %s on %s take the entry on %d %s before it%s", what, e.Model, d.Name, other.Devices, Plural(other.Devices, "device", "devices"), which)
	}
	return fmt.Sprintf("%s: scenarios of %s on %s at %s compute by it (--calibration %s)", what, e.Model, d.Name, strings.Join(taken, ", "), path)
}

// unreachable says why no scenario takes the entry e, whose model's
// profile counts samples of kind unit, on the catalogue's device d, at
// the precisions precs it applies to; "" when some does.
func unreachable(e *calib.ThroughputEntry, unit model.SampleUnit, d *hw.Device, precs []string, cat *hw.Catalog, prof *model.Profiles) string {
	switch {
	case prof.Models[e.Model] == nil:
		return fmt.Sprintf("the profiles have no model %q (models: %s)", e.Model, strings.Join(prof.ModelNames(), ", "))
	case !scenarios.SampleApplies(e.Labels[calib.SampleLabel], unit):
		return fmt.Sprintf("its samples are of kind %q (label %s) and %s's profile counts %ss; multiply v0 by the profile's samples in one of them (torchbench's transformer-base: its --seq-len) and remove the label",
			e.Labels[calib.SampleLabel], calib.SampleLabel, e.Model, cmp.Or(unit, model.Image))
	case logs.Unnamed(e.Device):
		return fmt.Sprintf("name the device kind with --device (devices: %s)", strings.Join(cat.DeviceNames(), ", "))
	case d == nil:
		return fmt.Sprintf("no catalogue device is called %q (devices: %s); rename it with --device '%s=DEVICE', or list it under the device's names in a --catalog file",
			e.Device, strings.Join(cat.DeviceNames(), ", "), e.Device)
	case len(precs) == 0:
		return fmt.Sprintf("precision %q is none of %s", e.Precision, strings.Join(scenarios.MeasuredPrecisionNames(), ", "))
	case e.Devices < 1:
		return "the logs did not say on how many devices it was measured (MLPerf logs do not)"
	case e.V0Unbounded:
		return "its points did not bound v0 (measure larger batches)"
	}
	return ""
}

// LogRead says which reader read a log and what it could not: a line
// naming the log, its format and what it holds, a line for each of its
// errors (indented by two spaces) and one for the malformed lines past
// them, and a line for each of its notes. Commands print each after
// their name and ": ".
func LogRead(lg *logs.Log) []string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: read as %s (%s): ", lg.Name, lg.Format, lg.Format.Describe())
	if n := len(lg.Collectives); n > 0 && len(lg.Records) == 0 {
		fmt.Fprintf(&b, "%d collective %s", n, Plural(n, "test", "tests"))
	} else if n := len(lg.Placements); n > 0 && len(lg.Records) == 0 {
		fmt.Fprintf(&b, "%d placement %s", n, Plural(n, "row", "rows"))
	} else {
		fmt.Fprintf(&b, "%d %s", len(lg.Records), Plural(len(lg.Records), "record", "records"))
	}
	if len(lg.Runs) > 0 {
		fmt.Fprintf(&b, ", %d %s", len(lg.Runs), Plural(len(lg.Runs), "run", "runs"))
	}
	if lg.Malformed > 0 {
		fmt.Fprintf(&b, ", %d malformed %s", lg.Malformed, Plural(lg.Malformed, "line", "lines"))
	}
	lines := []string{b.String()}
	for _, e := range lg.Errors {
		lines = append(lines, fmt.Sprintf("  %v", e))
	}
	if n := lg.Malformed - len(lg.Errors); n > 0 {
		lines = append(lines, fmt.Sprintf("  and %d more", n))
	}
	for _, n := range lg.Notes {
		lines = append(lines, fmt.Sprintf("%s: %s", lg.Name, n))
	}
	return lines
}

// CalibrationWritten says what cal, the calibration of rep
// (fit.Report.Calibration) written to path, holds: a line counting its
// entries of each kind, and a line for each fitted group and steps curve
// it leaves out for want of a model name. `scaleplan fit --out` prints
// them on stderr after "fit: ".
func CalibrationWritten(rep *fit.Report, cal *calib.Calibration, path string) []string {
	n := len(cal.Throughput) + len(cal.Comm) + len(cal.Steps) + len(cal.Fabric) + len(cal.Operators)
	fabric := ""
	if len(cal.Fabric) > 0 {
		fabric = fmt.Sprintf(", %d fabric", len(cal.Fabric))
	}
	if len(cal.Operators) > 0 {
		fabric += fmt.Sprintf(", %d operators", len(cal.Operators))
	}
	lines := []string{fmt.Sprintf("wrote %s: %d throughput, %d comm, %d steps%s %s", path,
		len(cal.Throughput), len(cal.Comm), len(cal.Steps), fabric, Plural(n, "entry", "entries"))}
	for _, g := range rep.Groups {
		if g.Fit != nil && g.Key.Model == "" {
			lines = append(lines, fmt.Sprintf("not in %s: group %v has no model name", path, g.Key))
		}
	}
	for _, s := range rep.Steps {
		if s.Fit != nil && s.Model == "" {
			lines = append(lines, fmt.Sprintf("not in %s: a steps curve has no model name (give the log a model column)", path))
		}
	}
	return lines
}
