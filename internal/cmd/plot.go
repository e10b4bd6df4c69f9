package cmd

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/fit"
	"scaleplan/fit/logs"
	"scaleplan/internal/mlperfepochs"
	"scaleplan/internal/tables"
	"scaleplan/plots"
	"scaleplan/report"
)

// plotKind is one kind of chart `scaleplan plot` draws.
type plotKind struct {
	name  string // the KIND argument
	group string // which of kindFlags' groups of flags it takes
	args  string // what follows KIND, for messages: "LOG..."
	usage string // one line for --help
	// charts reads args and returns the charts to write. Errors in the
	// command line are usage errors.
	charts func(c *cli.Context, o *plotOptions, args []string) ([]*plots.Chart, error)
}

// plotKinds lists the kinds in the order --help shows them.
var plotKinds = []plotKind{
	{"throughput", "log", "LOG...", "samples/s vs global batch, fitted v = b/(b/v0 + t), per device count", throughputCharts},
	{"steps", "log", "LOG...", "steps to target vs global batch, S(B) = S_min (1 + B_noise/B), regimes", stepsCharts},
	{"epochs", "MLPerf epochs", "", "MLPerf submissions' epochs to target vs global batch, E(B) = E_min (1 + B/B_noise)", epochsCharts},
	{report.Scaling, "scenario", "SCENARIO...", "time to train vs devices, one line per scenario, published times as squares", scenarioKind(report.Scaling)},
	{report.Efficiency, "scenario", "SCENARIO...", "scaling efficiency T(n0)·n0 / (T(n)·n) vs devices, one line per scenario", scenarioKind(report.Efficiency)},
	{report.Breakdown, "scenario", "SCENARIO...", "step time split into compute, exposed communication and input, bubble, straggler", scenarioKind(report.Breakdown)},
	{report.Timeline, "scenario", "SCENARIO", "one simulated step of the largest (or --devices N) configuration as a timeline", scenarioKind(report.Timeline)},
}

// kindFlags are, by group of kinds, the flags of `scaleplan plot` that
// only the kinds of that group take.
var kindFlags = map[string][]string{
	"log":           {"group-by", "device", "target", "keep-outliers"},
	"scenario":      {"devices", "calibration"},
	"MLPerf epochs": {"benchmark", "optimizer", "epochs"},
}

// kindsOf names the kinds of a group, in plotKinds' order.
func kindsOf(group string) string {
	var names []string
	for _, p := range plotKinds {
		if p.group == group {
			names = append(names, p.name)
		}
	}
	return strings.Join(names, ", ")
}

// checkFlags refuses a flag that k does not take, which would otherwise
// change nothing and say nothing.
func (k *plotKind) checkFlags(c *cli.Context) error {
	for _, group := range slices.Sorted(maps.Keys(kindFlags)) {
		if group == k.group {
			continue
		}
		for _, f := range kindFlags[group] {
			if c.IsSet(f) {
				return usagef("plot %s: --%s is for the %s kinds (%s), not %s", k.name, f, group, kindsOf(group), kindsOf(k.group))
			}
		}
	}
	return nil
}

// plotOptions are the flags of `scaleplan plot`.
type plotOptions struct {
	out          string   // directory to write to
	groupBy      []string // labels that also split the fit groups
	device       string   // device kind for logs that only say GPU or CPU
	keepOutliers bool
	devices      string   // device counts that replace a scenario's sweep, "N,N,..."
	calibrations []string // --calibration files for the scenario kinds
	target       string   // --target for runs that evaluate without one
	benchmark    string   // epochs: the MLPerf benchmark
	optimizer    string   // epochs: the optimizer family, "" for each
	epochs       string   // epochs: a table of scripts/mlperfepochs, "" for the embedded one
}

// plotCommand is `scaleplan plot KIND ARGS... [-o DIR]`.
func plotCommand() *cli.Command {
	var kinds strings.Builder
	for _, k := range plotKinds {
		args := k.args
		if args == "" {
			args = "--benchmark"
		}
		fmt.Fprintf(&kinds, "   %-11s %-12s %s\n", k.name, args, k.usage)
	}
	return &cli.Command{
		Name:      "plot",
		Usage:     "draw charts as PNG and SVG",
		ArgsUsage: "KIND LOG...|SCENARIO...|--benchmark NAME [-o DIR]",
		Description: "Draws a chart of KIND and writes it as DIR/KIND.png and DIR/KIND.svg (800 x 600\n" +
			"pixels), or DIR/KIND-SUBJECT.png and .svg when there are several subjects\n" +
			"(models, device kinds, precisions, targets, scenarios); prints the paths written.\n" +
			"Flags may come before or after the arguments.\n\n" +
			"Kinds:\n" + kinds.String() + "\n" +
			"LOG is any log `scaleplan fit` reads (bench log, CSV, MLPerf, Horovod,\n" +
			"tf_cnn_benchmarks, torchvision's train.py, the Hugging Face Trainer,\n" +
			"Megatron-LM, DeepSpeed, Lightning's metrics.csv); the logs are fitted as\n" +
			"`scaleplan fit` does, and the chart shows the points with the fitted law.\n" +
			"SCENARIO is a shipped scenario's name or a YAML file, simulated as\n" +
			"`scaleplan simulate` does; time to train is the recipe's steps at the global\n" +
			"batch times the step time, plus staging and overheads.\n" +
			"With --calibration (a file `scaleplan fit --out` wrote, or published) a scenario\n" +
			"whose model, device and precision the file measured computes by its law, as in\n" +
			"`scaleplan predict`; stderr says which.\n" +
			"epochs draws the MLPerf Training submissions of --benchmark (a table of\n" +
			"scripts/mlperfepochs, by default the one built in; docs/mlperf-epochs.md) with\n" +
			"the law fitted to each optimizer family, or to --optimizer's alone.\n\n" +
			"Examples:\n" +
			"   scaleplan plot throughput bench.jsonl -o charts\n" +
			"   scaleplan plot steps --group-by optimizer convergence.csv\n" +
			"   scaleplan plot scaling tsubame3-resnet50-caffe2-default tsubame3-resnet50-caffe2-staged tsubame3-resnet50-caffe2-verbs\n" +
			"   scaleplan plot epochs --benchmark resnet --optimizer lars -o charts\n" +
			"   scaleplan plot timeline tsubame3-resnet50-caffe2-verbs --devices 32\n" +
			"   scaleplan plot breakdown dgx-h100-resnet50-mlperf-v3.0 --calibration published",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Value: ".", Usage: "write the charts into `DIR` (created if missing)"},
			&cli.StringSliceFlag{Name: "group-by", Usage: "label `NAMES` that also split the groups, comma-separated (e.g. framework)"},
			deviceFlag(),
			targetFlag(),
			&cli.BoolFlag{Name: "keep-outliers", Usage: "fit every point; do not exclude points the law does not explain"},
			&cli.StringFlag{Name: "devices", Usage: "scenario kinds: simulate device counts `N,N,...` instead of the sweep's (timeline: the last)"},
			calibrationFlag(),
			&cli.StringFlag{Name: "benchmark", Usage: "epochs: the MLPerf benchmark `NAME` (" + strings.Join(mlperfepochs.Names(), ", ") + ")"},
			&cli.StringFlag{Name: "optimizer", Usage: "epochs: draw only the optimizer family `NAME` (e.g. lars, sgd; default each)"},
			&cli.StringFlag{Name: "epochs", Usage: "epochs: read the submissions from `FILE`, a table of scripts/mlperfepochs (default the built-in one)"},
		},
		Action: withArgs(runPlot),
	}
}

func runPlot(c *cli.Context, args []string) error {
	o := &plotOptions{out: c.String("out"), groupBy: c.StringSlice("group-by"), device: c.String("device"), keepOutliers: c.Bool("keep-outliers"), devices: c.String("devices"), calibrations: c.StringSlice("calibration"), target: c.String("target"),
		benchmark: c.String("benchmark"), optimizer: c.String("optimizer"), epochs: c.String("epochs")}
	var names []string
	for _, k := range plotKinds {
		names = append(names, k.name)
	}
	if len(args) == 0 {
		return usagef("plot: no chart KIND given (valid: %s)", strings.Join(names, ", "))
	}
	var kind *plotKind
	for i := range plotKinds {
		if plotKinds[i].name == args[0] {
			kind = &plotKinds[i]
		}
	}
	if kind == nil {
		return usagef("plot: unknown chart kind %q (valid: %s)", args[0], strings.Join(names, ", "))
	}
	if err := kind.checkFlags(c); err != nil {
		return err
	}
	if err := checkOutputs("plot", flagPaths(c.String, "out"), commandInputs(c, "LOG", args[1:])); err != nil {
		return err
	}
	charts, err := kind.charts(c, o, args[1:])
	if err != nil {
		return err
	}
	bar := newBar(c, "plot: charts", len(charts))
	paths, err := plots.WriteCharts(o.out, charts, bar)
	bar.Done()
	for _, p := range paths {
		fmt.Fprintln(c.App.Writer, p)
	}
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}

// fitLogs reads and fits the logs as `scaleplan fit` does, saying on
// stderr what it read.
func fitLogs(c *cli.Context, o *plotOptions, kind string, names []string) (*fit.Report, []*logs.Log, error) {
	if len(names) == 0 {
		return nil, nil, usagef("plot %s: no LOG given (want %s)", kind, logFormats)
	}
	opt := &fit.Options{GroupBy: o.groupBy}
	var err error
	if opt.Target, err = parseTarget("plot "+kind, o.target); err != nil {
		return nil, nil, err
	}
	if o.keepOutliers {
		opt.Settings = &fit.Settings{OutlierLevel: -1}
	}
	rename, err := deviceRenamer("plot "+kind, o.device)
	if err != nil {
		return nil, nil, err
	}
	stderr := c.App.ErrWriter
	lgs, err := readLogs(names, func(lg *logs.Log) {
		fmt.Fprintf(stderr, "plot: %s: read as %s: %d records", lg.Name, lg.Format, len(lg.Records))
		if lg.Malformed > 0 {
			fmt.Fprintf(stderr, ", %d malformed %s (scaleplan fit lists them)", lg.Malformed, tables.Plural(lg.Malformed, "line", "lines"))
		}
		fmt.Fprintln(stderr)
	}, rename)
	if err != nil {
		return nil, nil, err
	}
	if err := targetUsed("plot "+kind, opt.Target, lgs); err != nil {
		return nil, nil, err
	}
	rep, err := fit.Fit(lgs, opt)
	if err != nil {
		return nil, nil, fmt.Errorf("plot %s: %w", kind, err)
	}
	return rep, lgs, nil
}

func throughputCharts(c *cli.Context, o *plotOptions, args []string) ([]*plots.Chart, error) {
	rep, lgs, err := fitLogs(c, o, "throughput", args)
	if err != nil {
		return nil, err
	}
	for _, g := range rep.Groups {
		if g.Err != nil && len(g.Points) > 0 {
			fmt.Fprintf(c.App.ErrWriter, "plot: %v: no fit, points only: %v\n", g.Key, g.Err)
		}
	}
	var out []*plots.Chart
	for _, d := range plots.ThroughputFromReport(rep, lgs) {
		ch, err := plots.Throughput(d)
		if err != nil {
			return nil, fmt.Errorf("plot throughput: %s: %w", d.Subject, err)
		}
		out = append(out, ch)
	}
	if len(out) == 0 {
		return nil, errors.New("plot throughput: the logs hold no throughput measurement (want step time or samples/s per batch)")
	}
	return out, nil
}

func stepsCharts(c *cli.Context, o *plotOptions, args []string) ([]*plots.Chart, error) {
	rep, _, err := fitLogs(c, o, "steps", args)
	if err != nil {
		return nil, err
	}
	for _, sg := range rep.Steps {
		if sg.Err != nil {
			fmt.Fprintf(c.App.ErrWriter, "plot: steps to target of %s: no fit, points only: %v\n", tables.Dash(sg.Model), sg.Err)
		}
	}
	var out []*plots.Chart
	for _, d := range plots.StepsFromReport(rep) {
		ch, err := plots.Steps(d)
		if err != nil {
			return nil, fmt.Errorf("plot steps: %s: %w", d.Subject, err)
		}
		out = append(out, ch)
	}
	if len(out) == 0 {
		return nil, errors.New("plot steps: the logs hold no convergence record (want steps to target per global batch)")
	}
	return out, nil
}
