package cmd

import (
	"fmt"
	"io"
	"scaleplan/plots"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/internal/config"
	"scaleplan/internal/tables"
	"scaleplan/internal/units"
	"scaleplan/plan"
	"scaleplan/predict"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// planCommand is `scaleplan plan`.
func planCommand() *cli.Command {
	return &cli.Command{
		Name:      "plan",
		Usage:     "search systems and configurations for the fastest and cheapest ways to a target",
		ArgsUsage: " ",
		Description: "Given a recipe (and its model), a deadline and/or a budget, and candidate systems, searches\n" +
			"device counts, per-device batch, gradient accumulation, pipeline stages, precision, the\n" +
			"all-reduce algorithm, the transport between nodes and the storage, and prints the Pareto\n" +
			"set of time to target against cost: for each system and device count the fastest\n" +
			"configuration found, predicted exactly as `scaleplan predict` would, with its bottleneck\n" +
			"in words, then the recommendation (the cheapest that meets the deadline and budget).\n" +
			"Cost is device-hours × price where every system has a price, else device-hours.\n" +
			"Configurations that cannot run (out of memory, past the recipe's batch limit, more nodes\n" +
			"than the system has, transport or storage not available) are counted per reason with\n" +
			"examples; --format json lists all of them. docs/predict.md describes the search.\n\n" +
			"Examples:\n" +
			"   scaleplan plan --recipe mlperf-v0.7-resnet50 --deadline 2h --systems dgx-a100,dgx-h100,zinrai-200h,tsubame3\n" +
			"   scaleplan plan --recipe tsubame3-resnet50 --systems tsubame3 --budget '200 device-hours' --storage staged,shared-db\n" +
			"   scaleplan plan --recipe mlperf-v0.7-resnet50 --systems dgx-a100 --budget '$50, 100 kWh' --format json",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "recipe", Usage: "training `RECIPE` of the profiles (required)"},
			&cli.StringFlag{Name: "model", Usage: "`MODEL` (default the recipe's)"},
			&cli.StringFlag{Name: "systems", Usage: "candidate `SYSTEMS`, comma-separated (default every catalogue system but localhost)"},
			&cli.IntFlag{Name: "max-devices", Value: plan.DefaultMaxDevices, Usage: "largest device count `N` to search"},
			&cli.StringFlag{Name: "deadline", Usage: "time to target to meet, a `DURATION` such as 2h or 90 min"},
			&cli.StringFlag{Name: "budget", Usage: "`BUDGETS`, comma-separated: '100 device-hours', '$5000' or '5000 USD', '500 kWh'"},
			&cli.StringFlag{Name: "devices", Usage: "device counts `N,N,...` to search (default 1 and whole nodes in powers of two)"},
			&cli.StringFlag{Name: "batch", Usage: "per-device batches `B,B,...` (default the recipe's × 2, 1, 1/2, 1/4, 1/8)"},
			&cli.StringFlag{Name: "accumulation", Usage: "micro-batches per step `M,M,...` (default 1,2,4 and the recipe's)"},
			&cli.StringFlag{Name: "stages", Usage: "pipeline stages `S,S,...` (default 1,2,4 and the recipe's)"},
			&cli.StringFlag{Name: "allreduce", Usage: "gradient exchanges `ALG,...` (default ring, halving-doubling, double-tree, hierarchical; torus-2d on IPU-Link)"},
			&cli.StringFlag{Name: "inter-node", Usage: "hierarchical's all-reduces between nodes `ALG,...` (default ring, double-tree): " + strings.Join(scenarios.InterNodeAlgorithms, ", ")},
			&cli.StringFlag{Name: "transports", Usage: "transports between nodes `T,...` (default the system's)"},
			&cli.StringFlag{Name: "storage", Usage: "`STORAGE,...`: local, staged, shared, shared-db (default staged,shared with a file server, else local)"},
			&cli.StringFlag{Name: "decode", Value: "host", Usage: "where samples are decoded: `host` (the nodes' CPU cores) or device (on the accelerators, as NVIDIA DALI does)"},
			&cli.StringFlag{Name: "precisions", Usage: "compute precisions `P,...` (default those the device has)"},
			&cli.StringSliceFlag{Name: "calibration", Usage: "calibration `FILE` written by `scaleplan fit --out`, or published (the published figures built in: ResNet-50 at fp16 on the V100, A100 and H100): the systems whose device and precision it measured compute by its law instead of the roofline; repeatable"},
			&cli.IntFlag{Name: "steps", Value: sim.DefaultSteps, Usage: "optimizer steps to simulate for each kept configuration, `N` ≥ 2"},
			&cli.IntFlag{Name: "examples", Value: 3, Usage: "infeasible examples `N` to show per reason in text and md"},
			&cli.StringFlag{Name: "plot", Usage: "write the Pareto front (time vs cost) as PNG and SVG into `DIR`"},
			formatFlag(),
		},
		Action: runPlan,
	}
}

func runPlan(c *cli.Context) error {
	format := c.String("format")
	if err := checkFormat(format); err != nil {
		return err
	}
	if c.NArg() > 0 {
		return usagef("plan takes no argument, got %q; give the recipe with --recipe", c.Args().First())
	}
	if err := checkOutputs("plan", flagPaths(c.String, "plot"), commandInputs(c, "", nil)); err != nil {
		return err
	}
	req := plan.Request{Recipe: c.String("recipe"), Model: c.String("model"), MaxDevices: c.Int("max-devices"), Decode: c.String("decode"),
		Calibrations: c.StringSlice("calibration"), Scenario: scenarioOptions(c)}
	if !slices.Contains(scenarios.DecodeSites, req.Decode) {
		return usagef("plan: --decode: %s", config.Unknown("decode site", req.Decode, scenarios.DecodeSites))
	}
	if req.Recipe == "" {
		return usagef("plan: --recipe is required (`scaleplan catalog` lists the recipes)")
	}
	if n := c.Int("max-devices"); n < 1 || n > sim.MaxRanks {
		return usagef("plan: --max-devices %d: want 1 to %d", n, sim.MaxRanks)
	}
	if n := c.Int("steps"); n < 2 || n > sim.MaxSteps {
		return usagef("plan: --steps %d: want 2 to %d", n, sim.MaxSteps)
	}
	req.Predict.Steps = c.Int("steps")
	if n := c.Int("examples"); n < 0 {
		return usagef("plan: --examples %d: want 0 or more", n)
	}
	if c.IsSet("systems") {
		if req.Systems = splitList(c.String("systems")); len(req.Systems) == 0 {
			return usagef("plan: --systems is empty: want system names, comma-separated (`scaleplan catalog` lists them), or leave it out for every system")
		}
	}
	if s := c.String("deadline"); s != "" {
		d, err := units.ParseSeconds(s)
		if err != nil || !(d > 0) {
			return usagef("plan: --deadline %q: want a positive duration such as 2h or 90 min", s)
		}
		req.Deadline = d
	}
	if s := c.String("budget"); s != "" {
		b, err := plan.ParseBudget(s)
		if err != nil {
			return usagef("plan: --budget: %v", err)
		}
		req.Budget = b
	}
	sp := &req.Space
	for _, f := range []struct {
		name string
		dst  *[]int
	}{{"devices", &sp.Devices}, {"batch", &sp.Batches}, {"accumulation", &sp.Accumulation}, {"stages", &sp.Stages}} {
		if c.IsSet(f.name) {
			v, err := parseCounts("plan", f.name, c.String(f.name))
			if err != nil {
				return err
			}
			*f.dst = v
		}
	}
	for _, f := range []struct {
		name  string
		dst   *[]string
		valid []string
		kind  string
	}{{"allreduce", &sp.AllReduce, scenarios.AllReduceAlgorithms, "all-reduce algorithm"},
		{"inter-node", &sp.InterNode, scenarios.InterNodeAlgorithms, "all-reduce between nodes"}, {"transports", &sp.Transports, nil, ""},
		{"storage", &sp.Storage, plan.Storages, "storage"}, {"precisions", &sp.Precisions, scenarios.Precisions, "precision"}} {
		if !c.IsSet(f.name) {
			continue
		}
		*f.dst = splitList(c.String(f.name))
		if len(*f.dst) == 0 {
			return usagef("plan: --%s is empty: want one or more, comma-separated, or leave it out for the default", f.name)
		}
		for _, v := range *f.dst {
			if f.valid != nil && !slices.Contains(f.valid, v) {
				return usagef("plan: --%s: %s", f.name, config.Unknown(f.kind, v, f.valid))
			}
		}
	}
	res, err := plan.Search(req)
	if err != nil {
		return err
	}
	if err := writePlan(c.App.Writer, format, res, c.Int("examples")); err != nil {
		return err
	}
	if dir := c.String("plot"); dir != "" {
		return writeParetoChart(c, dir, res)
	}
	return nil
}

// writeParetoChart draws every kept candidate's time against its cost, the
// Pareto front and the recommendation.
func writeParetoChart(c *cli.Context, dir string, res *plan.Result) error {
	subject, _, _ := strings.Cut(res.Target, " (")
	d := plots.ParetoData{Subject: subject, CostUnit: res.CostBasis}
	for i := range res.Candidates {
		cd := &res.Candidates[i]
		d.Points = append(d.Points, plots.PlanPoint{
			Label:    fmt.Sprintf("%s × %d", cd.Config.System, cd.Config.Devices),
			Time:     cd.Row.Time,
			Cost:     cd.Cost,
			Chosen:   res.Recommended != nil && cd.Config == res.Recommended.Config,
			Feasible: cd.Meets(),
		})
	}
	ch, err := plots.Pareto(d)
	if err != nil {
		return fmt.Errorf("plan: chart: %w", err)
	}
	paths, err := writeCharts(dir, []*plots.Chart{ch}, nil)
	for _, p := range paths {
		fmt.Fprintf(c.App.ErrWriter, "plan: wrote %s\n", p)
	}
	return err
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// writePlan prints the plan's summary, Pareto set, recommendation,
// candidates and infeasible configurations.
func writePlan(w io.Writer, format string, res *plan.Result, examples int) error {
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
	reco := recommendation(res)
	pareto := candidateTable("Pareto set: time to train against cost ("+res.CostBasis+")", res.Pareto)
	all := candidateTable("Candidates: the fastest configuration found for each system and device count", res.Candidates)
	inf := infeasibleTable(res.Infeasible)

	if format == "json" || format == "csv" {
		st := &tables.Table{Header: []string{"summary"}}
		for _, l := range append(summary, "recommendation: "+reco) {
			st.Rows = append(st.Rows, []string{l})
		}
		return tables.Write(w, format, []tables.Named{{Key: "pareto", T: pareto}, {Key: "candidates", T: all}, {Key: "infeasible", T: inf}, {Key: "summary", T: st}})
	}
	for _, l := range summary {
		fmt.Fprintf(w, "%s%s\n", tables.Bullet(format), l)
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
	writeInfeasible(w, format, res.Infeasible, examples)
	return nil
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
		var parts, roof, skipped []string
		for ; j < len(srcs) && srcs[j].System == srcs[i].System; j++ {
			switch {
			case srcs[j].Skipped:
				skipped = append(skipped, srcs[j].Precision)
			case srcs[j].Calibration != nil:
				parts = append(parts, srcs[j].String())
			default:
				roof = append(roof, srcs[j].Precision)
			}
		}
		if len(roof) > 0 {
			parts = append(parts, fmt.Sprintf("%s: roofline, %.2f of the peak", strings.Join(roof, ", "), srcs[i].Efficiency))
			anyRoof = true
		}
		if len(skipped) > 0 {
			parts = append(parts, fmt.Sprintf("%s: not searched, as measured and assumed speeds do not compare (--precisions searches them on the roofline)", strings.Join(skipped, ", ")))
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
		if c.Row.Risk.Unknown() {
			s += "; " + c.Row.Risk.String()
		}
		return s + "; " + c.Bottleneck
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
func candidateTable(title string, cs []plan.Candidate) *tables.Table {
	t := &tables.Table{Title: title, Header: []string{"system", "devices", "nodes", "precision", "batch/device", "accumulation", "stages", "global batch",
		"allreduce", "transport", "storage", "time (s)", "time to train", "device-hours", "cost ($)", "energy (kWh)", "target", "bottleneck"}}
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
			tables.WholeCell(float64(row.Time)), predict.Duration(row.Time), strconv.FormatFloat(row.DeviceHours, 'f', 2, 64),
			orNone(row.Cost, 2), orNone(row.Energy, 1), target, c.Bottleneck})
	}
	return t
}

func orNone(x float64, prec int) string {
	if x == 0 {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', prec, 64)
}

// infeasibleTable lists every infeasible configuration family.
func infeasibleTable(inf []plan.Infeasible) *tables.Table {
	t := &tables.Table{Header: []string{"system", "devices", "nodes", "precision", "batch/device", "accumulation", "stages", "global batch", "allreduce", "transport", "storage", "reason", "detail"}}
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
		fmt.Fprintf(w, "%s%s: %d\n", tables.Bullet(format), r, len(by[r]))
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
