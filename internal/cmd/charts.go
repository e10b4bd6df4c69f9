package cmd

// Scenario charts: simulated sweeps mapped onto the plain inputs of
// package plots (time to train and efficiency against device count, the
// step-time breakdown, one step as a timeline), and the files they are
// written to. simulate --plot, plot scaling|efficiency|breakdown|timeline
// and report use them; predict and plan call writeScenarioCharts.

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/fit"
	"scaleplan/fit/logs"
	"scaleplan/internal/progress"
	"scaleplan/internal/units"
	"scaleplan/plots"
	"scaleplan/predict"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// scenarioRun is one scenario's sweep, simulated: what the scenario charts
// draw.
type scenarioRun struct {
	// R is the resolved scenario.
	R *scenarios.Resolved
	// Results holds one simulation per configuration, in the sweep's
	// order. The timeline chart draws the last one with a Trace.
	Results []*sim.Result
	// TimeToTrain holds the time to train of each result, seconds; nil
	// means predict.TimeToTarget of each (steps × step time + one-time costs).
	TimeToTrain []units.Seconds
}

// ttt returns the time to train of result i.
func (s *scenarioRun) ttt(i int) units.Seconds {
	if s.TimeToTrain != nil {
		return s.TimeToTrain[i]
	}
	return predict.TimeToTarget(s.R, s.Results[i])
}

// simulateSweep builds and simulates every configuration of r's sweep,
// steps optimizer steps each (0 means sim.DefaultSteps). With trace set it
// records the last configuration's last step (Result.Trace) for the
// timeline. bar, which may be nil, counts one per configuration.
func simulateSweep(r *scenarios.Resolved, steps int, trace bool, bar *progress.Bar) (*scenarioRun, error) {
	pts := r.Points()
	run := &scenarioRun{R: r, Results: make([]*sim.Result, len(pts))}
	for i, p := range pts {
		bar.Item(fmt.Sprintf("%s, %d devices", r.Name, p.Devices))
		cfg, err := r.Build(p)
		if err != nil {
			return nil, fmt.Errorf("%s at %d devices, batch %d: %w", r.Name, p.Devices, p.BatchPerDevice, err)
		}
		if steps > 0 {
			cfg.Steps = steps
		}
		if trace && i == len(pts)-1 {
			cfg.TraceSteps = 1
		}
		if run.Results[i], err = sim.Run(cfg); err != nil {
			return nil, err // named by sim.Run after cfg.Name: "r at N devices, batch B: …"
		}
		bar.Add(1)
	}
	return run, nil
}

// traceLast simulates run's last configuration again, steps optimizer
// steps (0 means sim.DefaultSteps), recording its last step, and puts that
// result in its place, so that the timeline chart has a step to draw. The
// simulation is deterministic: the new result equals the old one but for
// its Trace. For commands (predict) whose results were simulated without a
// trace.
func traceLast(run *scenarioRun, steps int) error {
	if len(run.Results) == 0 {
		return nil
	}
	last := run.Results[len(run.Results)-1]
	for _, p := range run.R.Points() {
		if p.Devices != last.Devices || p.BatchPerDevice != last.MicroBatch {
			continue
		}
		cfg, err := run.R.Build(p)
		if err != nil {
			return err
		}
		if steps > 0 {
			cfg.Steps = steps
		}
		cfg.TraceSteps = 1
		res, err := sim.Run(cfg)
		if err != nil {
			return err
		}
		run.Results[len(run.Results)-1] = res
		return nil
	}
	return fmt.Errorf("%s: no configuration of %s, batch %d in the sweep", run.R.Name, devicesName(last.Devices), last.MicroBatch)
}

// publishedSetups maps the shipped scenarios whose recipe lists published
// times to train for several software setups to their own setup
// (model.Measurement.Setup in the recipe's time_to_train). Seed 001's
// Table 2, in recipe tsubame3-resnet50, gives Caffe2's time to 90 epochs
// on 1, 4, 32 and 128 GPUs, in seconds:
//
//	(a) default          604987  154931  44862  135905
//	(b) staged           593992   88185  21111   10089
//	(c) staged + verbs   608629  152852  21774    5989
//
// A scenario not listed here gets the recipe's entries without a setup.
var publishedSetups = map[string]string{
	"tsubame3-resnet50-caffe2-default": "a-default",
	"tsubame3-resnet50-caffe2-staged":  "b-staged",
	"tsubame3-resnet50-caffe2-verbs":   "c-staged-verbs",
}

// published returns r's published times to train as a curve named name:
// its recipe's time_to_train entries measured on r's system, with r's
// setup (publishedSetups), that are not upper bounds, and whose global
// batch, where given, is the one r's sweep has at that device count (or r's
// sweep does not have that count). ok is false when there is none.
func published(r *scenarios.Resolved, name string) (c plots.Curve, ok bool) {
	setup := publishedSetups[r.Name]
	batches := map[int][]int{}
	for _, p := range r.Points() {
		batches[p.Devices] = append(batches[p.Devices], p.GlobalBatch)
	}
	c.Name = name
	for _, m := range r.Rcp.TimeToTrain {
		if m.System != r.Sys.Name || m.Setup != setup || m.UpperBound || m.Devices < 1 || !(m.Time > 0) {
			continue
		}
		if bs, swept := batches[m.Devices]; swept && m.GlobalBatch > 0 && !slices.Contains(bs, int(m.GlobalBatch)) {
			continue
		}
		c.X = append(c.X, float64(m.Devices))
		c.Y = append(c.Y, float64(m.Time))
	}
	return c, len(c.X) > 0
}

// shortNames returns the scenario names without the dash-separated words
// they all begin with ("tsubame3-resnet50-caffe2-default" and
// "...-staged" become "default" and "staged"); one name, or names that
// would become empty, stay whole.
func shortNames(names []string) []string {
	if len(names) < 2 {
		return slices.Clone(names)
	}
	words := make([][]string, len(names))
	for i, n := range names {
		words[i] = strings.Split(n, "-")
	}
	common := len(words[0])
	for _, w := range words[1:] {
		k := 0
		for k < min(common, len(w)) && w[k] == words[0][k] {
			k++
		}
		common = k
	}
	out := make([]string, len(names))
	for i, w := range words {
		if common >= len(w) {
			return slices.Clone(names)
		}
		out[i] = strings.Join(w[common:], "-")
	}
	return out
}

// subject is "MODEL on SYSTEM" when every run trains the same model on the
// same system, else "".
func subject(runs []*scenarioRun) string {
	if len(runs) == 0 {
		return ""
	}
	r0 := runs[0].R
	for _, s := range runs[1:] {
		if s.R.Mdl.Name != r0.Mdl.Name || s.R.Sys.Name != r0.Sys.Name {
			return ""
		}
	}
	return r0.Mdl.Name + " on " + r0.Sys.Name
}

// batchesPerDevice returns the distinct per-device batches of run's
// results, in order of first appearance.
func batchesPerDevice(run *scenarioRun) []int {
	var bs []int
	for _, res := range run.Results {
		if !slices.Contains(bs, res.MicroBatch) {
			bs = append(bs, res.MicroBatch)
		}
	}
	return bs
}

// deviceCounts returns the number of distinct device counts of run's
// results.
func deviceCounts(run *scenarioRun) int {
	seen := map[int]bool{}
	for _, res := range run.Results {
		seen[res.Devices] = true
	}
	return len(seen)
}

// scalingData returns the input of the time-to-train and efficiency
// charts: one predicted curve per run (per run and per-device batch when
// a run sweeps several batches) of time to train against device count,
// and each run's published times as a measured curve of the same name.
// Curves are named by shortNames of the scenarios.
func scalingData(runs []*scenarioRun) plots.ScalingData {
	names := make([]string, len(runs))
	for i, s := range runs {
		names[i] = s.R.Name
	}
	short := shortNames(names)
	d := plots.ScalingData{Subject: subject(runs)}
	for i, s := range runs {
		bs := batchesPerDevice(s)
		for _, b := range bs {
			c := plots.Curve{Name: short[i]}
			if len(bs) > 1 {
				c.Name = fmt.Sprintf("%s, batch %d", short[i], b)
			}
			for j, res := range s.Results {
				if res.MicroBatch == b {
					c.X = append(c.X, float64(res.Devices))
					c.Y = append(c.Y, float64(s.ttt(j)))
				}
			}
			d.Predicted = append(d.Predicted, c)
		}
		if c, ok := published(s.R, short[i]); ok {
			d.Measured = append(d.Measured, c)
		}
	}
	return d
}

// barLabels returns the breakdown bars' labels and axis label: the device
// counts, or device count × per-device batch when a device count repeats.
func barLabels(run *scenarioRun) (labels []string, xLabel string) {
	labels = make([]string, len(run.Results))
	if deviceCounts(run) == len(run.Results) {
		for i, res := range run.Results {
			labels[i] = strconv.Itoa(res.Devices)
		}
		return labels, "devices"
	}
	for i, res := range run.Results {
		labels[i] = fmt.Sprintf("%d×%d", res.Devices, res.MicroBatch)
	}
	return labels, "devices × batch per device"
}

// breakdownData returns the input of the breakdown chart: one bar per
// configuration, its parts sim.Breakdown's compute, exposed
// communication, exposed input, bubble and straggler wait (the order of
// plots.BreakdownParts), which sum to the step time.
func breakdownData(run *scenarioRun) plots.BreakdownData {
	labels, xl := barLabels(run)
	d := plots.BreakdownData{Subject: run.R.Name, XLabel: xl}
	for i, res := range run.Results {
		b := res.Breakdown
		d.Bars = append(d.Bars, plots.Breakdown{Label: labels[i],
			Parts: []float64{float64(b.Compute), float64(b.Comm), float64(b.Input), float64(b.Bubble), float64(b.Straggler)}})
	}
	return d
}

// errNoTrace is returned by timelineData for a run without a traced
// synchronous step.
var errNoTrace = errors.New("no traced step (the asynchronous parameter server has no synchronous steps)")

// timelineData returns the input of the timeline chart: the last step of
// the last traced result of run, from its Chrome trace. Rows are the
// traced devices (their track names, e.g. "device 0 (node 0)"), then the
// gradient exchange of each pipeline stage, then node 0's input pipeline
// and the shared database file; kinds are the devices' forward, backward
// and update, "communication" and "input". Waits are left out (the
// timeline shows them as gaps). Spans are clipped to the step and timed
// from its start.
func timelineData(run *scenarioRun) (plots.TimelineData, error) {
	var res *sim.Result
	for _, r := range run.Results {
		if r.Trace != nil && len(r.Steps) > 0 {
			res = r
		}
	}
	if res == nil {
		return plots.TimelineData{}, errNoTrace
	}
	step := res.Steps[len(res.Steps)-1]
	t0, t1 := float64(step.Start)*1e6, float64(step.End)*1e6 // µs, as the trace
	tracks := map[[2]int]string{}
	stages := 0
	for _, e := range res.Trace.Events {
		if e.Ph == "M" && e.Name == "thread_name" {
			tracks[[2]int{e.Pid, e.Tid}] = e.Args["name"]
			if e.Pid == 2 {
				stages++
			}
		}
	}
	type span struct {
		pid, tid int
		s        plots.Span
	}
	var spans []span
	for _, e := range res.Trace.Events {
		if e.Ph != "X" || e.Cat == "wait" {
			continue
		}
		a, b := max(e.Ts, t0), min(e.Ts+e.Dur, t1)
		if !(b > a) {
			continue
		}
		s := plots.Span{Start: units.Seconds((a - t0) / 1e6), End: units.Seconds((b - t0) / 1e6)}
		switch e.Pid {
		case 1:
			s.Row, s.Kind = tracks[[2]int{e.Pid, e.Tid}], e.Name
		case 2:
			s.Row, s.Kind = "gradient exchange", "communication"
			if stages > 1 {
				s.Row = fmt.Sprintf("gradient exchange, stage %d", e.Tid)
			}
		case 3:
			s.Row, s.Kind = tracks[[2]int{e.Pid, e.Tid}], "input"
		default: // links (pid 4): the timeline has a row per device, not per link
			continue
		}
		if s.Row == "" {
			s.Row = fmt.Sprintf("track %d.%d", e.Pid, e.Tid)
		}
		spans = append(spans, span{e.Pid, e.Tid, s})
	}
	if len(spans) == 0 {
		return plots.TimelineData{}, errNoTrace
	}
	slices.SortStableFunc(spans, func(x, y span) int {
		return cmp.Or(cmp.Compare(x.pid, y.pid), cmp.Compare(x.tid, y.tid), cmp.Compare(x.s.Start, y.s.Start))
	})
	d := plots.TimelineData{Subject: fmt.Sprintf("%s, %s, batch %d", run.R.Name, devicesName(res.Devices), res.MicroBatch)}
	for _, s := range spans {
		d.Spans = append(d.Spans, s.s)
	}
	return d, nil
}

func devicesName(n int) string {
	if n == 1 {
		return "1 device"
	}
	return strconv.Itoa(n) + " devices"
}

// Scenario chart kinds, which are also the base names of their files.
const (
	chartScaling    = "scaling"    // time to train vs devices, all runs in one chart
	chartEfficiency = "efficiency" // scaling efficiency vs devices, all runs in one chart
	chartBreakdown  = "breakdown"  // step-time breakdown, one chart per run
	chartTimeline   = "timeline"   // one step, one chart per run with a trace
)

// scenarioCharts draws the charts of kind for runs: one chart over all
// runs for chartScaling and chartEfficiency, one per run for
// chartBreakdown and chartTimeline. Each chart's Kind is kind.
func scenarioCharts(kind string, runs []*scenarioRun) ([]*plots.Chart, error) {
	var out []*plots.Chart
	add := func(ch *plots.Chart, err error) error {
		if err != nil {
			return err
		}
		ch.Kind = kind
		out = append(out, ch)
		return nil
	}
	switch kind {
	case chartScaling:
		if err := add(plots.TimeToTrain(scalingData(runs))); err != nil {
			return nil, err
		}
	case chartEfficiency:
		if err := add(plots.Efficiency(scalingData(runs))); err != nil {
			return nil, err
		}
	case chartBreakdown:
		for _, s := range runs {
			if err := add(plots.StepBreakdown(breakdownData(s))); err != nil {
				return nil, fmt.Errorf("%s: %w", s.R.Name, err)
			}
		}
	case chartTimeline:
		for _, s := range runs {
			d, err := timelineData(s)
			if err != nil {
				return nil, fmt.Errorf("%s: timeline: %w", s.R.Name, err)
			}
			if err := add(plots.Timeline(d)); err != nil {
				return nil, fmt.Errorf("%s: %w", s.R.Name, err)
			}
		}
	default:
		panic("cmd: unknown scenario chart kind " + kind)
	}
	return out, nil
}

// allScenarioCharts draws every chart the runs support: time to train and
// efficiency when some run has two device counts or more, the breakdown of
// every run, and the timeline of every run with a traced step. What it
// leaves out it says in notes.
func allScenarioCharts(runs []*scenarioRun) (charts []*plots.Chart, notes []string, err error) {
	counts := 0
	for _, s := range runs {
		counts = max(counts, deviceCounts(s))
	}
	kinds := []string{chartBreakdown}
	if counts >= 2 {
		kinds = append([]string{chartScaling, chartEfficiency}, kinds...)
	} else {
		notes = append(notes, "one device count: no time-to-train or efficiency chart (sweep several, e.g. --devices 1,4,32)")
	}
	for _, k := range kinds {
		chs, err := scenarioCharts(k, runs)
		if err != nil {
			return nil, nil, err
		}
		charts = append(charts, chs...)
	}
	var traced []*scenarioRun
	for _, s := range runs {
		if _, err := timelineData(s); err != nil {
			notes = append(notes, fmt.Sprintf("%s: no timeline chart: %v", s.R.Name, err))
			continue
		}
		traced = append(traced, s)
	}
	chs, err := scenarioCharts(chartTimeline, traced)
	if err != nil {
		return nil, nil, err
	}
	return append(charts, chs...), notes, nil
}

// writeScenarioCharts writes every chart runs support (allScenarioCharts)
// into dir as PNG and SVG (writeCharts) and returns the paths written,
// also those written before an error. It says on c's stderr, prefixed by
// the command's name, which charts it left out, and shows a progress bar
// while it draws. Traced runs (simulateSweep with trace) get a timeline.
// For predict: build one scenarioRun per scenario from the rows that ran
// (Results and, from the command's own time to target, TimeToTrain), call
// traceLast for a timeline, and call it with the --plot directory; plan's
// Pareto chart goes through plots.Pareto and writeCharts.
func writeScenarioCharts(c *cli.Context, dir string, runs ...*scenarioRun) ([]string, error) {
	charts, notes, err := allScenarioCharts(runs)
	if err != nil {
		return nil, fmt.Errorf("%s: charts: %w", c.Command.Name, err)
	}
	for _, n := range notes {
		fmt.Fprintf(c.App.ErrWriter, "%s: %s\n", c.Command.Name, n)
	}
	bar := newBar(c, c.Command.Name+": charts", len(charts))
	defer bar.Done()
	paths, err := writeCharts(dir, charts, bar)
	if err != nil {
		return paths, fmt.Errorf("%s: %w", c.Command.Name, err)
	}
	return paths, nil
}

// writeCharts writes each chart as dir/BASE.png and dir/BASE.svg,
// creating dir, and returns the paths written, also those written before
// an error. BASE is the chart's Kind, followed by a slug of its subject
// when several charts have that kind, and by a number when names still
// clash. bar, which may be nil, counts one per chart.
func writeCharts(dir string, charts []*plots.Chart, bar *progress.Bar) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	perKind := map[string]int{}
	for _, ch := range charts {
		perKind[ch.Kind]++
	}
	used := map[string]int{}
	var paths []string
	for _, ch := range charts {
		base := ch.Kind
		if perKind[ch.Kind] > 1 {
			if s := slug(subjectOf(ch)); s != "" {
				base += "-" + s
			}
		}
		if used[base]++; used[base] > 1 {
			base = fmt.Sprintf("%s-%d", base, used[base])
		}
		bar.Item(base)
		ps, err := plots.WriteAll(dir, base, ch.Plot)
		paths = append(paths, ps...)
		if err != nil {
			return paths, err
		}
		bar.Add(1)
	}
	return paths, nil
}

// newBar returns a progress bar of total units on c's stderr. It draws
// only when stderr is a terminal and the work has run for about a second
// (package progress). Call Done when the work ends.
func newBar(c *cli.Context, label string, total int) *progress.Bar {
	return progress.New(c.App.ErrWriter, label, total, nil)
}

// interspersed returns c's arguments that are not flags, setting on c the
// flags that follow the first argument (urfave/cli stops parsing flags
// there), so that `simulate SCENARIO --plot DIR` works. A lone "--" ends
// the flags. It returns flag.ErrHelp for -h or --help.
func interspersed(c *cli.Context) ([]string, error) {
	in := c.Args().Slice()
	if !slices.ContainsFunc(in, func(a string) bool { return len(a) > 1 && a[0] == '-' }) {
		return in, nil
	}
	fs := flag.NewFlagSet(c.Command.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	canon := map[string]string{}
	for _, f := range c.Command.Flags {
		if err := f.Apply(fs); err != nil {
			return nil, err
		}
		for _, n := range f.Names() {
			canon[n] = f.Names()[0]
		}
	}
	var args []string
	for len(in) > 0 {
		if err := fs.Parse(in); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(in) > len(rest) && in[len(in)-len(rest)-1] == "--" {
			args = append(args, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		args = append(args, rest[0])
		in = rest[1:]
	}
	var err error
	fs.Visit(func(f *flag.Flag) {
		name := canon[f.Name]
		if name == "help" {
			err = flag.ErrHelp
			return
		}
		vals := []string{f.Value.String()}
		if s, ok := f.Value.(*cli.StringSlice); ok {
			vals = s.Value()
		}
		for _, v := range vals {
			if e := c.Set(name, v); e != nil && err == nil {
				err = fmt.Errorf("--%s %q: %w", name, v, e)
			}
		}
	})
	return args, err
}

// withArgs is an Action that takes the command's arguments with its flags
// before or after them (interspersed) and runs run with them; for -h it
// shows the command's help instead, and a bad flag is a usage error.
func withArgs(run func(c *cli.Context, args []string) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		args, err := interspersed(c)
		if errors.Is(err, flag.ErrHelp) {
			parent := c
			if l := c.Lineage(); len(l) > 1 {
				parent = l[1]
			}
			return cli.ShowCommandHelp(parent, c.Command.Name)
		}
		if err != nil {
			return flagError(commandPath(c), c.Command.Flags, err)
		}
		if err := emptyValue(c); err != nil {
			return err
		}
		if err := tableFormat(c); err != nil {
			return err
		}
		return run(c, args)
	}
}

// scenarioKind returns the charts function of `plot KIND SCENARIO...` for
// a scenario chart kind: it loads and simulates the scenarios (the sweep
// given by --devices, if set; the compute by the --calibration files that
// apply) and draws the chart.
func scenarioKind(kind string) func(c *cli.Context, o *plotOptions, args []string) ([]*plots.Chart, error) {
	return func(c *cli.Context, o *plotOptions, args []string) ([]*plots.Chart, error) {
		if len(args) == 0 {
			return nil, usagef("plot %s: no SCENARIO given (a shipped scenario's name or a YAML file; `scaleplan catalog` lists them)", kind)
		}
		if kind == chartTimeline && len(args) > 1 {
			return nil, usagef("plot timeline takes one SCENARIO, got %d", len(args))
		}
		rs, err := plotScenarios(scenarioOptions(c), o, kind, args)
		if err != nil {
			return nil, err
		}
		total := 0
		for _, r := range rs {
			total += len(r.Points())
			if r.Calibration != nil || len(o.calibrations) > 0 {
				fmt.Fprintf(c.App.ErrWriter, "plot: %s: %s\n", r.Name, computeNote(r))
			}
		}
		bar := newBar(c, "plot: simulate", total)
		defer bar.Done()
		var runs []*scenarioRun
		for _, r := range rs {
			run, err := simulateSweep(r, 0, kind == chartTimeline, bar)
			if err != nil {
				return nil, err
			}
			runs = append(runs, run)
		}
		charts, err := scenarioCharts(kind, runs)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", kind, err)
		}
		return charts, nil
	}
}

// plotScenarios resolves the scenarios of a scenario kind of `plot`
// against opt, with o's device counts and calibration files.
func plotScenarios(opt scenarios.Options, o *plotOptions, kind string, args []string) ([]*scenarios.Resolved, error) {
	if o.devices != "" {
		devices, err := parseInts("devices", o.devices)
		if err != nil {
			return nil, usagef("plot: --devices %q: want positive integers separated by commas, such as 1,4,32", o.devices)
		}
		ov := &simOverrides{devices: devices}
		opt.Edit, opt.Overrides = ov.edit, ov.sources()
	}
	if err := readCalibrations("plot", o.calibrations, &opt); err != nil {
		return nil, err
	}
	return loadScenarios("plot "+kind, opt, args...)
}

// writeFitCharts writes the charts of a fit report into dir, as `plot
// throughput` and `plot steps` draw them, and says on stderr what it
// wrote, its lines starting with the command name. A report with nothing
// to draw is noted, not an error.
func writeFitCharts(c *cli.Context, name, dir string, rep *fit.Report, logs []*logs.Log) error {
	var charts []*plots.Chart
	for _, d := range plots.ThroughputFromReport(rep, logs) {
		ch, err := plots.Throughput(d)
		if err != nil {
			return fmt.Errorf("%s: throughput chart of %s: %w", name, d.Subject, err)
		}
		charts = append(charts, ch)
	}
	for _, d := range plots.StepsFromReport(rep) {
		ch, err := plots.Steps(d)
		if err != nil {
			return fmt.Errorf("%s: steps chart of %s: %w", name, d.Subject, err)
		}
		charts = append(charts, ch)
	}
	if len(charts) == 0 {
		fmt.Fprintf(c.App.ErrWriter, "%s: no chart: the logs hold neither throughput measurements nor convergence records\n", name)
		return nil
	}
	bar := newBar(c, name+": charts", len(charts))
	paths, err := writeCharts(dir, charts, bar)
	bar.Done()
	for _, p := range paths {
		fmt.Fprintf(c.App.ErrWriter, "%s: wrote %s\n", name, p)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
