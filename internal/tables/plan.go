package tables

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"scaleplan/plan"
	"scaleplan/predict"
)

// PlanReport is what `scaleplan plan` prints of a search: the summary,
// the Pareto set, the recommendation, the candidates and the infeasible
// configurations.
type PlanReport struct {
	res      *plan.Result
	examples int
}

// Plan returns the report of the search res, with up to examples
// infeasible configurations shown per reason in text and md.
func Plan(res *plan.Result, examples int) *PlanReport {
	return &PlanReport{res: res, examples: examples}
}

// Write prints the report in format: in json and csv the tables
// "pareto", "candidates", "infeasible" and "summary" (the summary's lines
// and the recommendation); in text and md the summary, the Pareto set,
// the recommendation, the candidates, and the infeasible configurations
// counted per reason with examples.
func (r *PlanReport) Write(w io.Writer, format string) error {
	res := r.res
	summary := planSummary(res)
	reco := recommendation(res)
	pareto := candidateTable("Pareto set: time to train against cost ("+res.CostBasis+")", res.Pareto)
	all := candidateTable("Candidates: the fastest configuration found for each system and device count", res.Candidates)
	inf := infeasibleTable(res.Infeasible)

	if format == "json" || format == "csv" {
		st := &Table{Header: []string{"summary"}}
		for _, l := range append(summary, "recommendation: "+reco) {
			st.Rows = append(st.Rows, []string{l})
		}
		return Write(w, format, []Named{{Key: "pareto", T: pareto}, {Key: "candidates", T: all}, {Key: "infeasible", T: inf}, {Key: "summary", T: st}})
	}
	for _, l := range summary {
		fmt.Fprintf(w, "%s%s\n", Bullet(format), l)
	}
	fmt.Fprintln(w)
	if err := pareto.Write(w, format); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if format == "md" {
		fmt.Fprint(w, "### Recommendation\n\n")
	}
	fmt.Fprintf(w, "recommendation: %s\n\n", reco)
	if err := all.Write(w, format); err != nil {
		return err
	}
	fmt.Fprintln(w)
	writeInfeasible(w, format, res.Infeasible, r.examples)
	return nil
}

// planSummary says what the plan searched, how, and how cost and
// compute are counted.
func planSummary(res *plan.Result) []string {
	req := res.Request
	deadline := "none"
	if req.Deadline > 0 {
		deadline = predict.Duration(req.Deadline)
	}
	budget := "none"
	if !req.Budget.IsZero() {
		budget = req.Budget.String()
	}
	summary := []string{
		fmt.Sprintf("plan: %s on %s, at most %d devices; deadline %s; budget %s; samples decoded on the %s", res.Target, strings.Join(req.Systems, ", "), req.MaxDevices, deadline, budget, req.Decode),
		fmt.Sprintf("searched %s feasible configurations: simulated %d (%d steps each), kept the fastest of each system and device count (%d), predicted with %d steps",
			predict.Group(int64(res.Enumerated)), res.Simulated, plan.ScreenSteps, len(res.Candidates), max(req.Predict.Steps, 2)),
		res.CostNote,
	}
	summary = append(summary, computeLines(res.Compute)...)
	return summary
}

// computeLines says, one line per system, how each precision's compute is
// modelled, such as "compute on dgx-a100 (a100-sxm4-80gb): fp16:
// calibrated, v0 = ...; bf16, tf32, fp32: roofline, 0.35 of the peak"
// (the precisions on the roofline together), and then, if any is on the
// roofline, what that means.
func computeLines(srcs []plan.ComputeSource) []string {
	var lines []string
	anyRoof := false
	for i := 0; i < len(srcs); {
		j := i
		var parts, ops, roof, skipped []string
		host := false
		for ; j < len(srcs) && srcs[j].System == srcs[i].System; j++ {
			host = host || srcs[j].HostMeasured
			switch {
			case srcs[j].Skipped:
				skipped = append(skipped, srcs[j].Precision)
			case srcs[j].Calibration != nil:
				parts = append(parts, srcs[j].String())
			case srcs[j].Operators:
				ops = append(ops, srcs[j].Precision)
			default:
				roof = append(roof, srcs[j].Precision)
			}
		}
		if len(ops) > 0 {
			l := fmt.Sprintf("%s: operator model of the device's datasheet (docs/compute.md)", strings.Join(ops, ", "))
			if host {
				l += ", host measured (--host)"
			}
			parts = append(parts, l)
		}
		if len(roof) > 0 {
			parts = append(parts, fmt.Sprintf("%s: roofline, %.2f of the peak", strings.Join(roof, ", "), srcs[i].Efficiency))
			anyRoof = true
		}
		if len(skipped) > 0 {
			parts = append(parts, fmt.Sprintf("%s: not searched, as measured and assumed speeds do not compare (--precisions searches them uncalibrated)", strings.Join(skipped, ", ")))
		}
		lines = append(lines, fmt.Sprintf("compute on %s (%s): %s", srcs[i].System, srcs[i].Device, strings.Join(parts, "; ")))
		i = j
	}
	if anyRoof {
		lines = append(lines, "roofline: the model's assumed fraction of the device's peak FLOP/s (docs/models.md; optimistic on tensor cores); --calibration FILE, from `scaleplan fit --out` on your measurements, replaces it with the measured law, and --calibration published with the published figures built in (V100, A100, H100; docs/validation.md)")
	}
	return lines
}

// recommendation says which candidate to use, or why none fits.
func recommendation(res *plan.Result) string {
	if len(res.Candidates) == 0 {
		return "no configuration can run; see the infeasible configurations below"
	}
	if c := res.Recommended; c != nil {
		s := fmt.Sprintf("%s — %s, %s", c.Config, predict.Duration(c.Row.Time), costText(res, c))
		if r := c.Row.TimeRange; r[1] > 0 {
			s += fmt.Sprintf("; spread of runs, the steps law's intervals: %s to %s", predict.Duration(r[0]), predict.Duration(r[1]))
		}
		if c.Row.Risk.Unknown() {
			s += "; " + c.Row.Risk.String()
		}
		s += "; " + c.Bottleneck
		if !c.Calibrated() {
			s += "; " + uncalibratedText(c)
		}
		if e := c.Row.CommError; e > 0 && c.Row.CommBy == "" {
			s += fmt.Sprintf("; its exchange is NCCL's over uncalibrated links, %.1f %% mean absolute error of the time at its %v all-reduces on published nccl-tests tables, predicted too fast (docs/validation-collectives.md); fit of the cluster's nccl-tests with --calibration measures it",
				100*e, c.Row.CommMessage)
		}
		return s
	}
	fastest := res.Candidates[0]
	cheapest := res.Pareto[len(res.Pareto)-1]
	return fmt.Sprintf("none meets the target (%s); the fastest is %s (%s, %s), the cheapest %s (%s, %s)",
		strings.Join(fastest.Misses, "; "), fastest.Config, predict.Duration(fastest.Row.Time), costText(res, &fastest),
		cheapest.Config, predict.Duration(cheapest.Row.Time), costText(res, &cheapest))
}

func costText(res *plan.Result, c *plan.Candidate) string {
	s := strconv.FormatFloat(c.Row.DeviceHours, 'f', 1, 64) + " device-hours"
	if c.Row.Cost > 0 {
		s += fmt.Sprintf(", $%.2f", c.Row.Cost)
	}
	if c.Row.Energy > 0 {
		s += fmt.Sprintf(", %.1f kWh", c.Row.Energy)
	}
	return s
}

// candidateTable lists candidates, one row each.
func candidateTable(title string, cs []plan.Candidate) *Table {
	t := &Table{Title: title, Header: []string{"system", "devices", "nodes", "precision", "batch/device", "accumulation", "stages", "global batch",
		"allreduce", "transport", "storage", "time (s)", "time to train", "compute", "device-hours", "cost ($)", "energy (kWh)", "target", "bottleneck"}}
	for _, c := range cs {
		cfg, row := c.Config, c.Row
		transport := cfg.Transport
		if transport == "" {
			transport = "-"
		}
		target := "meets"
		if !c.Meets() {
			target = strings.Join(c.Misses, "; ")
		}
		if row.Risk.Unknown() {
			// Meeting the deadline and budget says nothing of
			// reaching the accuracy at this batch.
			target += " (batch limit unknown)"
		}
		t.Rows = append(t.Rows, []string{cfg.System, strconv.Itoa(cfg.Devices), strconv.Itoa(cfg.Nodes), cfg.Precision, strconv.Itoa(cfg.BatchPerDevice),
			strconv.Itoa(cfg.Accumulation), strconv.Itoa(cfg.Stages), strconv.Itoa(cfg.GlobalBatch), cfg.Exchange(), transport, cfg.Storage,
			WholeCell(float64(row.Time)), predict.Duration(row.Time), calibratedCell(&c), strconv.FormatFloat(row.DeviceHours, 'f', 2, 64),
			orNone(row.Cost, 2), orNone(row.Energy, 1), target, c.Bottleneck})
	}
	return t
}

// calibratedCell marks whether c's compute rests on a calibration of its
// device: "calibrated" or "uncalibrated".
func calibratedCell(c *plan.Candidate) string {
	if c.Calibrated() {
		return "calibrated"
	}
	return "uncalibrated"
}

// uncalibratedText says that c's compute rests on no calibration of its
// device and how far off such predictions were measured to be: the mean
// absolute error and, where it is one at a level, the interval of the
// band predict gives its range (predict.Source.Band).
func uncalibratedText(c *plan.Candidate) string {
	how := "the roofline of the device's datasheet"
	switch {
	case c.Compute.Kind == "operators" && c.Compute.By != "":
		how = "the operator model calibrated on another device (" + c.Compute.By + ")"
	case c.Compute.Kind == "operators":
		how = "the operator model of the device's datasheet"
	}
	band := ""
	if b := c.Compute.Band(); b.Level > 0 {
		band = fmt.Sprintf(", %.0f %% of their measured steps from %s %% to %s %% of the predicted", 100*b.Level, signedPct(b.Lo), signedPct(b.Hi))
	}
	return fmt.Sprintf("uncalibrated: its compute is %s, %.1f %% mean absolute error of samples/s on published measurements%s (docs/compute.md, Validation); --calibration FILE measures it",
		how, 100*c.Compute.Error(), band)
}

func orNone(x float64, prec int) string {
	if x == 0 {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', prec, 64)
}

// infeasibleTable lists every infeasible configuration family.
func infeasibleTable(inf []plan.Infeasible) *Table {
	t := &Table{Header: []string{"system", "devices", "nodes", "precision", "batch/device", "accumulation", "stages", "global batch", "allreduce", "transport", "storage", "reason", "detail"}}
	num := func(n int) string {
		if n == 0 {
			return "*"
		}
		return strconv.Itoa(n)
	}
	str := func(s string) string {
		if s == "" {
			return "*"
		}
		return s
	}
	for _, i := range inf {
		c := i.Config
		t.Rows = append(t.Rows, []string{c.System, num(c.Devices), num(c.Nodes), str(c.Precision), num(c.BatchPerDevice), num(c.Accumulation), num(c.Stages),
			num(c.GlobalBatch), str(c.Exchange()), str(c.Transport), str(c.Storage), i.Reason, i.Detail})
	}
	return t
}

// writeInfeasible prints the count per reason and a few examples.
func writeInfeasible(w io.Writer, format string, inf []plan.Infeasible, examples int) {
	if format == "md" {
		fmt.Fprint(w, "### Infeasible\n\n")
	}
	if len(inf) == 0 {
		fmt.Fprintln(w, "infeasible: none")
		return
	}
	var reasons []string
	by := map[string][]plan.Infeasible{}
	for _, i := range inf {
		if _, ok := by[i.Reason]; !ok {
			reasons = append(reasons, i.Reason)
		}
		by[i.Reason] = append(by[i.Reason], i)
	}
	slices.SortStableFunc(reasons, func(a, b string) int { return len(by[b]) - len(by[a]) })
	fmt.Fprintf(w, "infeasible: %d configuration families (an unset field, *, stands for every value; --format json lists all)\n", len(inf))
	for _, r := range reasons {
		fmt.Fprintf(w, "%s%s: %d\n", Bullet(format), r, len(by[r]))
		for _, i := range spread(by[r], examples) {
			fmt.Fprintf(w, "    %s — %s\n", i.Config, i.Detail)
		}
	}
}

// spread returns up to n entries of inf, the first of each system before
// the second of any, so that the examples cover the systems.
func spread(inf []plan.Infeasible, n int) []plan.Infeasible {
	var out []plan.Infeasible
	used := make([]bool, len(inf))
	for len(out) < n {
		seen := map[string]bool{}
		added := false
		for i, e := range inf {
			if used[i] || seen[e.Config.System] || len(out) == n {
				continue
			}
			seen[e.Config.System] = true
			used[i] = true
			out = append(out, e)
			added = true
		}
		if !added {
			break
		}
	}
	return out
}
