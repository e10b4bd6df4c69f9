package cmd

// Chart files: the scenario charts of package report and the other
// charts of package plots written as PNG and SVG. simulate --plot and
// predict --plot call writeScenarioCharts; plot and plan call
// plots.WriteCharts; fit, bench and validate --measured call
// writeChartFiles.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"

	"github.com/urfave/cli/v2"

	"scaleplan/fit"
	"scaleplan/fit/logs"
	"scaleplan/internal/progress"
	"scaleplan/internal/tables"
	"scaleplan/plots"
	"scaleplan/report"
	"scaleplan/scenarios"
)

// writeScenarioCharts writes every chart runs support (report.AllCharts)
// into dir as PNG and SVG (plots.WriteCharts) and returns the paths written,
// also those written before an error. It says on c's stderr, prefixed by
// the command's name, which charts it left out, and shows a progress bar
// while it draws. Traced runs (report.Simulate with trace) get a timeline.
// For predict: build one report.Run per scenario from the rows that ran
// (Results and, from the command's own time to target, TimeToTrain), call
// Run.TraceLast for a timeline, and call it with the --plot directory; plan's
// Pareto chart goes through plots.Pareto and plots.WriteCharts.
func writeScenarioCharts(c *cli.Context, dir string, runs ...*report.Run) ([]string, error) {
	charts, notes, err := report.AllCharts(runs)
	if err != nil {
		return nil, fmt.Errorf("%s: charts: %w", c.Command.Name, err)
	}
	for _, n := range notes {
		fmt.Fprintf(c.App.ErrWriter, "%s: %s\n", c.Command.Name, n)
	}
	bar := newBar(c, c.Command.Name+": charts", len(charts))
	defer bar.Done()
	paths, err := plots.WriteCharts(dir, charts, bar)
	if err != nil {
		return paths, fmt.Errorf("%s: %w", c.Command.Name, err)
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
		if kind == report.Timeline && len(args) > 1 {
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
				fmt.Fprintf(c.App.ErrWriter, "plot: %s: %s\n", r.Name, tables.ComputeNote(r))
			}
		}
		bar := newBar(c, "plot: simulate", total)
		defer bar.Done()
		var runs []*report.Run
		for _, r := range rs {
			run, err := report.Simulate(r, 0, kind == report.Timeline, bar)
			if err != nil {
				return nil, err
			}
			runs = append(runs, run)
		}
		charts, err := report.Charts(kind, runs)
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
	return writeChartFiles(c, name, dir, charts)
}

// writeChartFiles writes charts into dir (plots.WriteCharts) under a
// progress bar, says "NAME: wrote PATH" on c's stderr for each file
// written, also those before an error, and returns the error prefixed by
// the command's name.
func writeChartFiles(c *cli.Context, name, dir string, charts []*plots.Chart) error {
	bar := newBar(c, name+": charts", len(charts))
	paths, err := plots.WriteCharts(dir, charts, bar)
	bar.Done()
	for _, p := range paths {
		fmt.Fprintf(c.App.ErrWriter, "%s: wrote %s\n", name, p)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
