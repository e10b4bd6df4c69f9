package tables

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"scaleplan/internal/units"
	"scaleplan/predict"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// PredictReport is what `scaleplan predict` prints of a study's
// predictions: a table per prediction with its notes, the side-by-side
// table when there are several, and the answer.
type PredictReport struct {
	study *predict.Study
	ps    []*predict.Prediction
}

// Predict returns the report of the predictions ps of study.
func Predict(study *predict.Study, ps []*predict.Prediction) *PredictReport {
	return &PredictReport{study: study, ps: ps}
}

// Write prints the report in format: in json and csv the tables, then
// "notes" (a row per note of each variant) and "answer"; in text and md
// each prediction's table with its notes under it, the side-by-side
// table, and the answer's lines.
func (r *PredictReport) Write(w io.Writer, format string) error {
	ps := r.ps
	var ts []Named
	notes := &Table{Title: "Notes", Header: []string{"variant", "note"}}
	pnotes := make([][]string, len(ps)) // of each prediction
	for i, p := range ps {
		ts = append(ts, Named{Key: Snake(p.Label), T: predictionTable(p, format == "json" || format == "csv")})
		pnotes[i] = predictionNotes(p)
		for _, n := range pnotes[i] {
			notes.Rows = append(notes.Rows, []string{p.Label, n})
		}
	}
	if len(ps) > 1 {
		// First: csv prints the first table unless --table names another.
		ts = append([]Named{{Key: "side_by_side", T: sideBySideTable(r.study, ps)}}, ts...)
	}
	answer := &Table{Title: "Answer", Header: []string{"answer"}}
	for _, l := range predict.Summarize(ps).Lines() {
		answer.Rows = append(answer.Rows, []string{l})
	}
	if format == "json" || format == "csv" {
		return Write(w, format, append(ts, Named{Key: "notes", T: notes}, Named{Key: "answer", T: answer}))
	}
	if len(ps) > 1 {
		ts = append(ts[1:], ts[0])
	}
	for i, nt := range ts {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := nt.T.Write(w, format); err != nil {
			return err
		}
		if i < len(ps) {
			fmt.Fprintln(w)
			for _, n := range pnotes[i] {
				fmt.Fprintf(w, "%s%s\n", Bullet(format), n)
			}
		}
	}
	fmt.Fprintln(w)
	if format == "md" {
		fmt.Fprint(w, "### Answer\n\n")
	}
	for _, l := range answer.Rows {
		fmt.Fprintf(w, "%s%s\n", Bullet(format), l[0])
	}
	return nil
}

// predictionTable is one prediction, a row per configuration; machine
// (json, csv) gives the time to train's interval as two columns, "time to
// train low" and "time to train high", where text has one "range".
func predictionTable(p *predict.Prediction, machine bool) *Table {
	r := p.Scenario
	transport := r.Parallelism.Transport
	if transport == "" {
		transport = "none"
	}
	storage := r.Input.Storage
	if r.Input.Staging {
		storage += ", staged"
	}
	title := fmt.Sprintf("%s: %s to %s on %s (%s), %s, %s over %s, storage %s; compute %s",
		p.Label, r.Mdl.Name, recipeTarget(p), r.Sys.Name, r.Device.Name, r.Precision, r.Parallelism.Exchange(), transport, storage, computeSource(r))
	if p.Label != r.Name {
		title = p.Label + " (" + r.Name + ")" + strings.TrimPrefix(title, p.Label)
	}
	var bubble, straggler bool
	for _, row := range p.Rows {
		if row.OK() {
			bubble = bubble || row.Result.Breakdown.Bubble > 0
			straggler = straggler || row.Result.Breakdown.Straggler > 0
		}
	}
	t := &Table{Title: title, Header: []string{"devices", "nodes", "batch/device", "global batch", "steps", "step (ms)", "compute (ms)", "exposed comm (ms)", "exposed input (ms)"}}
	placement := p.Scenario.Parallelism.Placement
	uneven := len(placement) > 0
	if uneven {
		t.Header = slices.Insert(t.Header, 2, "placement")
	}
	if bubble {
		t.Header = append(t.Header, "bubble (ms)")
	}
	if straggler {
		t.Header = append(t.Header, "straggler (ms)")
	}
	t.Header = append(t.Header, "overheads (s)", "time (s)", "time to train")
	if machine {
		t.Header = append(t.Header, "time to train low", "time to train high")
	} else {
		t.Header = append(t.Header, "range")
	}
	t.Header = append(t.Header, "compute", "samples/s", "efficiency (%)", "device-hours")
	if p.Price > 0 {
		t.Header = append(t.Header, "cost ($)")
	}
	if p.Energy.Basis != "" {
		t.Header = append(t.Header, "energy (kWh)")
	}
	if p.Rule == predict.Linear {
		t.Header = append(t.Header, "lr")
	}
	t.Header = append(t.Header, "risk")
	for _, row := range p.Rows {
		pt := row.Point
		cells := []string{strconv.Itoa(pt.Devices), strconv.Itoa(pt.Nodes), strconv.Itoa(pt.BatchPerDevice), strconv.Itoa(pt.GlobalBatch), strconv.Itoa(row.StepsToTarget)}
		if uneven {
			cells = slices.Insert(cells, 2, PlacementCell(placement, pt.Nodes, pt.Devices))
		}
		if !row.OK() {
			cells = append(cells, "error: "+row.ErrText())
			for len(cells) < len(t.Header) {
				cells = append(cells, "-")
			}
			t.Rows = append(t.Rows, cells)
			continue
		}
		res := row.Result
		b := res.Breakdown
		cells = append(cells, stepMS(res.StepTime), stepMS(b.Compute), stepMS(b.Comm), stepMS(b.Input))
		if bubble {
			cells = append(cells, stepMS(b.Bubble))
		}
		if straggler {
			cells = append(cells, stepMS(b.Straggler))
		}
		cells = append(cells,
			strconv.FormatFloat(float64(row.Overheads()), 'f', 1, 64),
			WholeCell(float64(row.Time)),
			predict.Duration(row.Time))
		cells = append(cells, rangeCells(row.TrainRange, machine)...)
		cells = append(cells, p.Source.String(),
			WholeCell(res.SamplesPerSec),
			strconv.FormatFloat(100*row.Efficiency, 'f', 1, 64),
			strconv.FormatFloat(row.DeviceHours, 'f', 1, 64))
		if p.Price > 0 {
			cells = append(cells, strconv.FormatFloat(row.Cost, 'f', 2, 64))
		}
		if p.Energy.Basis != "" {
			cells = append(cells, strconv.FormatFloat(row.Energy, 'f', 1, 64))
		}
		if p.Rule == predict.Linear {
			cells = append(cells, strconv.FormatFloat(row.LearningRate, 'g', 4, 64))
		}
		cells = append(cells, row.Risk.Short())
		t.Rows = append(t.Rows, cells)
	}
	return t
}

// rangeCells is the time to train's interval r: "low – high" for text,
// the two ends for machine; "-" where r is zero.
func rangeCells(r [2]units.Seconds, machine bool) []string {
	switch {
	case r[1] <= 0 && machine:
		return []string{"-", "-"}
	case r[1] <= 0:
		return []string{"-"}
	case machine:
		return []string{predict.Duration(r[0]), predict.Duration(r[1])}
	}
	return []string{predict.Duration(r[0]) + " – " + predict.Duration(r[1])}
}

func stepMS(s units.Seconds) string { return strconv.FormatFloat(float64(s)*1e3, 'f', 2, 64) }

func recipeTarget(p *predict.Prediction) string {
	tg := p.Scenario.Rcp.Target()
	if tg.Metric == "" {
		return "its target"
	}
	return fmt.Sprintf("%s %g", tg.Metric, tg.Value)
}

// predictionNotes says how the prediction's figures are counted.
func predictionNotes(p *predict.Prediction) []string {
	r := p.Scenario
	out := []string{
		"steps to target: " + p.Steps.String(),
	}
	if n := spreadNote(p); n != "" {
		out = append(out, n)
	}
	out = append(out, "learning rate: "+p.Rule.Describe(r.Rcp))
	out = append(out, ComputeNote(r), RangeNote(p))
	if n := NetworkNote(r); n != "" {
		out = append(out, n)
	}
	if n := PageCacheNote(r); n != "" {
		out = append(out, n)
	}
	if n := exchangeNote(p.CheckExchange()); n != "" {
		out = append(out, n)
	}
	out = append(out, "time to train = steps × step + overheads (staging, first-epoch drive reads, evaluation, start-up); efficiency = device-hours of the smallest size / device-hours")
	if p.Price > 0 {
		out = append(out, fmt.Sprintf("cost = device-hours × $%.2f (%s)", p.Price, r.Sys.PriceSource))
	} else {
		out = append(out, "cost: the catalogue has no price for "+r.Sys.Name+"; device-hours only")
	}
	out = append(out, p.Energy.String())
	return out
}

// spreadNote gives each row's time at the ends of the steps curve's
// intervals, or "" when the curve has none.
func spreadNote(p *predict.Prediction) string {
	var parts []string
	for _, row := range p.Rows {
		if row.TimeRange[1] > 0 {
			parts = append(parts, fmt.Sprintf("%d devices %s to %s", row.Point.Devices, predict.Duration(row.TimeRange[0]), predict.Duration(row.TimeRange[1])))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "spread of runs, the steps law's intervals: " + strings.Join(parts, "; ")
}

// ComputeNote says what r's compute time comes from: its device's roofline
// or a calibration, with the calibration's law and source.
func ComputeNote(r *scenarios.Resolved) string {
	c := r.Calibration
	switch {
	case c == nil && r.OperatorCompute() && r.OperatorsBy != "":
		return "compute: operator model of " + r.Device.Name + " at " + r.Precision + ", calibrated by " + r.OperatorsBy
	case c == nil && r.OperatorCompute():
		return "compute: operator model of " + r.Device.Name + " at " + r.Precision
	case c == nil:
		return "compute: roofline of " + r.Device.Name + " at " + r.Precision
	}
	s := fmt.Sprintf("compute: calibrated, v0 = %s samples/s on %d device(s), t = %v", predict.Rate(c.V0), c.Devices, c.T)
	if c.Source != "" {
		s += " (" + c.Source + ")"
	}
	return s
}

// RangeNote says what the range column of p's rows is: the time to train
// at the ends of the calibration's v0 and t intervals, or the band of the
// uncalibrated compute model's measured error; and, where rows widened it
// by their exposed communication's band (Row.CommError), by how much.
func RangeNote(p *predict.Prediction) string {
	if !p.Source.Calibrated() {
		return uncalibratedRangeNote(p.Source) + commRangeNote(p.Rows) + unmeasuredCommNote(p)
	}
	c := p.Scenario.Calibration
	if _, _, ok := predict.LawRange(c, 1); !ok {
		return "range: none, the calibration gives no intervals of v0 and t"
	}
	s := fmt.Sprintf("range: time to train with the compute of the law t(b) = b/v0 + t at the ends of its intervals (closed form: v0 %s to %s samples/s, t %v to %v), the change taken on every step",
		predict.Rate(c.V0Interval[0]), predict.Rate(c.V0Interval[1]), c.TInterval[0], c.TInterval[1])
	return s + commRangeNote(p.Rows) + unmeasuredCommNote(p)
}

// uncalibratedRangeNote says what the range of an uncalibrated source's
// rows is: its model's measured band, an interval at a level or ∓ a mean
// absolute error.
func uncalibratedRangeNote(src predict.Source) string {
	name := src.Kind + " model's"
	if src.By != "" {
		name += " (calibrated on another device by " + src.By + ")"
	}
	if b := src.Band(); b.Level > 0 {
		return fmt.Sprintf("range: time to train with the steps' time from %s %% to %s %%, the %s measured band: the measured steps of %.0f %% of its validation's rows lay within it, from the %.0fth to the %.0fth percentile of its error (docs/compute.md, Validation)",
			signedPct(b.Lo), signedPct(b.Hi), name, 100*b.Level, 50*(1-b.Level), 50*(1+b.Level))
	}
	return fmt.Sprintf("range: time to train with the steps' time ∓ %.1f %%, the %s measured mean absolute error of samples/s (docs/compute.md, Validation); not an interval at a level",
		100*src.Error(), name)
}

// unmeasuredCommNote says, where a row exposes communication that its
// range left out (predict gave it no band: an exchange other than NCCL's,
// whose error no published table measures), that no band covers that
// time; "" else.
func unmeasuredCommNote(p *predict.Prediction) string {
	if p.Scenario == nil {
		return ""
	}
	for _, r := range p.Rows {
		if r.Result != nil && r.Result.Breakdown.Comm > 0 && r.CommError == 0 && r.CommBy == "" {
			return "; the exposed communication of its exchange (" + p.Scenario.Parallelism.Exchange() + ") is not in it: no published table measures that model's error"
		}
	}
	return ""
}

// commRangeNote is the part of RangeNote for the rows whose range their
// exposed communication widened: each distinct message size and node
// class with its error, in the rows' order, those from the published
// nccl-tests tables apart from those from a fabric calibration's fit; ""
// for none.
func commRangeNote(rows []predict.Row) string {
	var published, fitted []string
	for _, r := range rows {
		if r.CommError == 0 || r.Result == nil {
			continue
		}
		where := "one node"
		if r.Result.Nodes > 1 {
			where = "several nodes"
		}
		part := fmt.Sprintf("%.1f %% at %v on %s", 100*r.CommError, r.CommMessage, where)
		list := &published
		if r.CommBy != "" {
			part += " (" + r.CommBy + ")"
			list = &fitted
		}
		if !slices.Contains(*list, part) {
			*list = append(*list, part)
		}
	}
	var s string
	if len(published) > 0 {
		s += "; and the steps' exposed communication ∓ NCCL's collective model's measured mean absolute error of the time at the size of a gradient bucket's all-reduce, uncalibrated, on published nccl-tests tables (" +
			strings.Join(published, ", ") + "; docs/validation-collectives.md), the model being too fast there"
	}
	if len(fitted) > 0 {
		s += "; and the steps' exposed communication ∓ the fabric calibration's own mean absolute error of the time over the sizes it was fitted to (" +
			strings.Join(fitted, ", ") + "), a lower bound of its error elsewhere"
	}
	return s
}

// computeSource says in a word or two what r's compute time comes from,
// for a prediction's title, so that the same scenario predicted alone and
// in a study says which calibration each used: "by operators" (package
// compute; "by operators calibrated by FILE" with an operators entry of
// the device; ", host measured" where --host gave the host's costs), "by
// roofline", or "calibrated" and the calibration's file where a
// --calibration gave it.
func computeSource(r *scenarios.Resolved) string {
	host := ""
	if r.Host != nil {
		host = ", host measured"
	}
	switch {
	case r.OperatorCompute() && r.OperatorsBy != "":
		return "by operators calibrated by " + r.OperatorsBy + host
	case r.OperatorCompute():
		return "by operators" + host
	case r.Calibration == nil:
		return "by roofline"
	case r.CalibratedBy != "":
		return "calibrated by " + r.CalibratedBy
	}
	return "calibrated"
}

// exchangeNote says that c's all-reduce is latency-bound and what would
// take it faster, or "" for nil.
func exchangeNote(c *predict.ExchangeCheck) string {
	if c == nil {
		return ""
	}
	name := func(a, inter sim.Algorithm) string {
		if a == sim.Hierarchical {
			return a.String() + " with " + inter.String() + " between nodes"
		}
		return a.String()
	}
	s := fmt.Sprintf("exchange: latency-bound at %d devices: %s all-reduces a %v bucket in %v, %.0f%% of it the latency its steps cost (one byte takes %v)",
		c.Devices, name(c.Algorithm, c.InterNode), c.Bucket, c.Time, 100*float64(c.Latency)/float64(c.Time), c.Latency)
	if c.FasterTime < c.Time {
		alg := name(c.Faster, c.FasterInterNode)
		s += fmt.Sprintf("; of the simulator's all-reduces, %s takes it in %v (parallelism.allreduce, inter_node; docs/network.md, \"Rings at scale\")", alg, c.FasterTime)
	}
	return s
}

// PageCacheNote says how much of the data set the page cache serves, or ""
// when the scenario does not read local drives through it.
func PageCacheNote(r *scenarios.Resolved) string {
	hit := r.PageCacheHit()
	if hit == 0 {
		return ""
	}
	return fmt.Sprintf("page cache: %.0f%% of the data set (%v) fits in %.0f%% of a node's %v host memory; epochs after the first read it from there (input.page_cache: off to read the drives every epoch)",
		100*hit, r.Data.TrainBytes(), 100*scenarios.PageCacheShare, r.Node.HostMemory)
}

// sideBySideTable is the time to train of every variant at each device count.
func sideBySideTable(study *predict.Study, ps []*predict.Prediction) *Table {
	title := "Time to train side by side"
	if study.Description != "" {
		title += ": " + study.Description
	}
	t := &Table{Title: title, Header: []string{"devices", "global batch"}, Units: map[string]string{}}
	type key struct{ devices, batch int }
	var keys []key
	seen := map[key]bool{}
	for _, p := range ps {
		t.Header = append(t.Header, p.Label)
		t.Units[p.Label] = "seconds"
		for _, row := range p.Rows {
			k := key{row.Point.Devices, row.Point.BatchPerDevice}
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	t.Header = append(t.Header, "risk")
	for _, k := range keys {
		cells := []string{strconv.Itoa(k.devices), "-"}
		risk := "-"
		for _, p := range ps {
			cell := "-"
			for _, row := range p.Rows {
				if row.Point.Devices == k.devices && row.Point.BatchPerDevice == k.batch {
					cells[1] = strconv.Itoa(row.Point.GlobalBatch)
					risk = row.Risk.Short()
					if row.OK() {
						cell = predict.Duration(row.Time)
					} else {
						cell = "error"
					}
				}
			}
			cells = append(cells, cell)
		}
		t.Rows = append(t.Rows, append(cells, risk))
	}
	return t
}
