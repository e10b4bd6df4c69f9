package cmd

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/hw"
	"scaleplan/internal/config"
	"scaleplan/internal/tables"
	"scaleplan/internal/units"
	"scaleplan/plan"
	"scaleplan/plots"
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
			"   scaleplan plan --recipe mlperf-v0.7-resnet50 --systems dgx-a100 --budget '$50, 100 kWh' --format json\n\n" +
			"With --llm, plans an LLM instead: searches GPU counts (--gpus N or LO-HI), global batches\n" +
			"(the model's published range), tensor, sequence, pipeline (with virtual stages), data, context\n" +
			"and expert parallelism, micro-batch, recomputation and ZeRO stage for a transformer on one\n" +
			"--system, keeps the layouts that fit memory, and prints the fastest, or with --tokens and\n" +
			"--deadline the cheapest that trains them in time (--budget: the fastest within it), with their\n" +
			"step time, tokens/s, MFU, memory per GPU, GPU-hours and bottleneck (docs/llm-plan.md):\n" +
			"   scaleplan plan --llm llama3-70b --system dgx-h100 --gpus 1024 --tokens 15T\n" +
			"   scaleplan plan --llm llama3-70b --system dgx-h100 --gpus 1024-16384 --tokens 15T --deadline 30d",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "recipe", Usage: "training `RECIPE` of the profiles (required)"},
			&cli.StringFlag{Name: "model", Usage: "`MODEL` (default the recipe's)"},
			&cli.StringFlag{Name: "systems", Usage: "candidate `SYSTEMS`, comma-separated (default every catalogue system but localhost)"},
			&cli.IntFlag{Name: "max-devices", Value: plan.DefaultMaxDevices, Usage: "largest device count `N` to search"},
			&cli.StringFlag{Name: "deadline", Usage: "time to target to meet, a `DURATION` such as 2h or 90 min; with --llm and --tokens, the time to train the tokens, and the cheapest layout that meets it ranks first"},
			&cli.StringFlag{Name: "budget", Usage: "`BUDGETS`, comma-separated: '100 device-hours', '$5000' or '5000 USD', '500 kWh' (with --llm and --tokens: device-hours or dollars, the fastest within it ranking first)"},
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
			&cli.StringSliceFlag{Name: "calibration", Usage: "calibration `FILE` written by `scaleplan fit --out`, or published (the published figures built in: ResNet-50 at fp16 on the V100, A100 and H100): the systems whose device and precision it measured compute by its law instead of the roofline, and its fabric entries set the links of the systems they name; with --llm, the first llm entry (fit --llm) of the system's device multiplies its operator times; repeatable"},
			&cli.StringFlag{Name: "host", Usage: "host costs `FILE` of the machines planned on, a table of `scaleplan bench host`: the configurations computed by the operator model charge their eager PyTorch steps these in place of the defaults (docs/compute-calibration.md); with --llm, each kernel's launch is the table's cuda_op in place of the published eager launch"},
			&cli.StringFlag{Name: "steps-to-target", Usage: "steps-to-target laws `FILE` (a calibration with steps entries, such as scenarios/calibrations/mlperf-epochs.yaml, docs/mlperf-epochs.md): the model's entry of the recipe's optimizer counts the steps, S(B) = S_min·(1 + B_noise/B), and its intervals give the recommendation's spread of runs; default the recipe's epochs"},
			&cli.IntFlag{Name: "steps", Value: sim.DefaultSteps, Usage: "optimizer steps to simulate for each kept configuration, `N` ≥ 2"},
			&cli.IntFlag{Name: "examples", Value: 3, Usage: "infeasible examples `N` to show per reason in text and md"},
			&cli.StringFlag{Name: "plot", Usage: "write the Pareto front (time vs cost) as PNG and SVG into `DIR`"},
			&cli.StringFlag{Name: "llm", Usage: "plan the layouts of the transformer `MODEL` (llama3-70b, gpt3-175b, ...; `scaleplan catalog` lists them) instead of a recipe"},
			&cli.StringFlag{Name: "system", Usage: "with --llm: the `SYSTEM` to plan on"},
			&cli.StringFlag{Name: "gpus", Usage: "with --llm: the GPUs `N` to use, whole nodes, or a range LO-HI (such as 1024-16384) whose whole-node counts of a power of two or three times one are searched"},
			&cli.StringFlag{Name: "tokens", Usage: "with --llm: the token budget `T` (such as 15T or 1e12) to time the training of"},
			&cli.StringFlag{Name: "global-batch", Usage: "with --llm: sequences per step `B,B,...` to search (default the powers of two in the model's published range of tokens per step, else 4 Mi tokens' worth)"},
			&cli.IntFlag{Name: "top", Value: 10, Usage: "with --llm: layouts `N` to print"},
			&cli.StringFlag{Name: "precision", Value: "bf16", Usage: "with --llm: the matrix products' precision `P`: bf16, or fp8 (Transformer Engine's FP8 linear layers, bf16 elsewhere; the device needs an fp8 peak)"},
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
	if c.IsSet("llm") {
		return runPlanLLM(c, format)
	}
	for _, f := range []string{"system", "gpus", "tokens", "global-batch", "top", "precision"} {
		if c.IsSet(f) {
			return usagef("plan: --%s goes with --llm", f)
		}
	}
	if err := checkOutputs("plan", flagPaths(c.String, "plot"), commandInputs(c, "", nil)); err != nil {
		return err
	}
	req := plan.Request{Recipe: c.String("recipe"), Model: c.String("model"), MaxDevices: c.Int("max-devices"), Decode: c.String("decode"),
		Calibrations: c.StringSlice("calibration"), StepsToTarget: c.String("steps-to-target"), Scenario: scenarioOptions(c)}
	if err := readHost("plan", c.String("host"), &req.Scenario); err != nil {
		return err
	}
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
	if err := tables.Plan(res, c.Int("examples")).Write(c.App.Writer, format); err != nil {
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
	paths, err := plots.WriteCharts(dir, []*plots.Chart{ch}, nil)
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

// runPlanLLM is `scaleplan plan --llm`.
func runPlanLLM(c *cli.Context, format string) error {
	req := plan.LLMRequest{Model: c.String("llm"), System: c.String("system"), Top: c.Int("top"), Calibrations: c.StringSlice("calibration"),
		Precision: hw.Precision(c.String("precision"))}
	if req.Precision != hw.BF16 && req.Precision != hw.FP8 {
		return usagef("plan --llm: --precision %q: want bf16 or fp8", req.Precision)
	}
	var err error
	if req.Host, err = hostTable("plan", c.String("host")); err != nil {
		return err
	}
	if req.GPUs, req.MaxGPUs, err = parseGPURange(c.String("gpus")); err != nil || req.System == "" {
		return usagef("plan --llm: want --system SYSTEM and --gpus N or LO-HI (such as 1024-16384), GPUs ≥ 1")
	}
	if req.Top < 1 {
		return usagef("plan --llm: --top %d: want ≥ 1", req.Top)
	}
	if s := c.String("global-batch"); s != "" {
		if req.GlobalBatches, err = parseInts("global-batch", s); err != nil {
			return usagef("plan --llm: --global-batch %q: want sequences per step, positive and comma-separated, such as 512,1024", s)
		}
	}
	if s := c.String("tokens"); s != "" {
		v, err := parseTokens(s)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return usagef("plan --llm: --tokens %q: want a positive count such as 15T or 1e12", s)
		}
		req.Tokens = v
	}
	if s := c.String("deadline"); s != "" {
		if req.Deadline, err = units.ParseSeconds(s); err != nil || !(req.Deadline > 0) {
			return usagef("plan --llm: --deadline %q: want a positive duration such as 30d or 720h", s)
		}
	}
	if s := c.String("budget"); s != "" {
		if req.Budget, err = plan.ParseBudget(s); err != nil {
			return usagef("plan --llm: --budget: %v", err)
		}
	}
	if (req.Deadline > 0 || !req.Budget.IsZero()) && req.Tokens == 0 {
		return usagef("plan --llm: --deadline and --budget want --tokens, the token budget to train")
	}
	p, err := plan.LLM(req)
	if err != nil {
		return err
	}
	return tables.LLMPlan(p).Write(c.App.Writer, format)
}

// parseGPURange reads --gpus: N, or LO-HI.
func parseGPURange(s string) (lo, hi int, err error) {
	a, b, ok := strings.Cut(s, "-")
	if lo, err = strconv.Atoi(strings.TrimSpace(a)); err != nil || lo < 1 {
		return 0, 0, fmt.Errorf("--gpus %q: want N or LO-HI", s)
	}
	if !ok {
		return lo, lo, nil
	}
	if hi, err = strconv.Atoi(strings.TrimSpace(b)); err != nil || hi < lo {
		return 0, 0, fmt.Errorf("--gpus %q: want N or LO-HI with LO ≤ HI", s)
	}
	return lo, hi, nil
}

// tokenSuffixes are the multipliers --tokens reads after a number: K, M,
// B or G (billion), T.
var tokenSuffixes = map[string]float64{"K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}

// parseTokens reads a token count: a number, or one with a suffix of
// tokenSuffixes ("15T", "1.5B").
func parseTokens(s string) (float64, error) {
	s = strings.TrimSpace(s)
	mult := 1.0
	if n := len(s); n > 0 {
		if m, ok := tokenSuffixes[strings.ToUpper(s[n-1:])]; ok {
			s, mult = strings.TrimSpace(s[:n-1]), m
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	return v * mult, err
}
