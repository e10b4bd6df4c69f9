package cmd

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/internal/tables"
	"scaleplan/predict"
	"scaleplan/report"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// predictCommand is `scaleplan predict [SCENARIO]`.
func predictCommand() *cli.Command {
	return &cli.Command{
		Name:      "predict",
		Usage:     "time to target accuracy across cluster sizes, where the time goes, and the risk",
		ArgsUsage: "[SCENARIO|STUDY]",
		Description: "For every cluster size of the scenario's sweep, predicts the time to the recipe's\n" +
			"target: steps to target × simulated step time + staging + evaluation + start-up, with\n" +
			"the step's breakdown (compute, exposed communication, exposed input, pipeline bubble,\n" +
			"straggler wait), samples/s, scaling efficiency against the smallest size (ratio of\n" +
			"device-hours per run), device-hours, cost where the catalogue has a price, and energy\n" +
			"where it has node power or device TDP. Steps come from the recipe (epochs × data set /\n" +
			"global batch) or from the scenario's fitted steps-to-target curve. A global batch past\n" +
			"the largest the recipe is known to reach its target with is marked at risk.\n\n" +
			"With no argument it runs the built-in study: ResNet-50 to 90 epochs with Caffe2 on\n" +
			"TSUBAME 3.0 (seed 001) as delivered, with the data staged, and staged with verbs, from\n" +
			"1 to 512 GPUs, one table each, then the three side by side and the answer. A STUDY is\n" +
			"a YAML file with a variants list (docs/predict.md).\n\n" +
			"Examples:\n" +
			"   scaleplan predict\n" +
			"   scaleplan predict tsubame3-resnet50-caffe2-verbs\n" +
			"   scaleplan predict --devices 8,16,32,64 zinrai-200h-resnet50-mlperf-v0.7\n" +
			"   scaleplan predict --format json mystudy.yaml",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "devices", Usage: "device counts `N,N,...` to predict (replaces the sweep)"},
			placementFlag(),
			&cli.StringFlag{Name: "batch", Usage: "per-device batches `B,B,...`"},
			&cli.IntFlag{Name: "steps", Value: sim.DefaultSteps, Usage: "optimizer steps to simulate per configuration, `N` ≥ 2; the first is left out of the steady state"},
			calibrationFlag(),
			hostFlag(),
			&cli.StringFlag{Name: "steps-to-target", Usage: "steps-to-target laws `FILE` (a calibration with steps entries, such as scenarios/calibrations/mlperf-epochs.yaml, docs/mlperf-epochs.md) in place of each scenario's steps: its entry of the model and optimizer counts the steps, S(B) = S_min·(1 + B_noise/B), and its intervals give the spread of runs"},
			&cli.StringFlag{Name: "plot", Usage: "write charts (time to train and efficiency of every variant, breakdown and timeline) as PNG and SVG into `DIR`"},
			formatFlag(),
		},
		Action: withArgs(runPredict),
	}
}

func runPredict(c *cli.Context, args []string) error {
	format := c.String("format")
	if err := checkFormat(format); err != nil {
		return err
	}
	if len(args) > 1 {
		return usagef("predict takes at most one SCENARIO or STUDY, got %d arguments: %s", len(args), strings.Join(args, " "))
	}
	if err := checkOutputs("predict", flagPaths(c.String, "plot"), commandInputs(c, "SCENARIO", args)); err != nil {
		return err
	}
	var devices, batch []int
	var err error
	if c.IsSet("devices") {
		if devices, err = parseCounts("predict", "devices", c.String("devices")); err != nil {
			return err
		}
	}
	if c.IsSet("batch") {
		if batch, err = parseCounts("predict", "batch", c.String("batch")); err != nil {
			return err
		}
	}
	placement, err := placementOption(c, "predict")
	if err != nil {
		return err
	}
	if n := c.Int("steps"); n < 2 || n > sim.MaxSteps {
		return usagef("predict: --steps %d: want 2 to %d", n, sim.MaxSteps)
	}
	var name string
	if len(args) == 1 {
		name = args[0]
	}
	study, err := predict.Load(name)
	if err != nil {
		return err
	}
	sopt := scenarioOptions(c)
	o := &simOverrides{devices: devices, batch: batch, placement: placement}
	if f := c.String("steps-to-target"); f != "" {
		if o.stepsToTarget, err = filepath.Abs(f); err != nil {
			return fmt.Errorf("predict: --steps-to-target %s: %w", f, err)
		}
	}
	sopt.Edit, sopt.Overrides = o.edit, o.sources()
	if err := readCalibrations("predict", c.StringSlice("calibration"), &sopt); err != nil {
		return err
	}
	if err := readHost("predict", c.String("host"), &sopt); err != nil {
		return err
	}
	ps, err := study.Run(sopt, predict.Options{Steps: c.Int("steps")})
	if err != nil {
		return err
	}
	rs := make([]*scenarios.Resolved, len(ps))
	for i, p := range ps {
		rs[i] = p.Scenario
	}
	if err := scenarios.CalibrationsUsed(sopt.Calibrations, rs); err != nil {
		return fmt.Errorf("predict: %w", err)
	}
	if err := tables.Predict(study, ps).Write(c.App.Writer, format); err != nil {
		return err
	}
	if !predict.Summarize(ps).Fastest.Found() {
		return errors.New("predict: no configuration could be simulated; the table gives each one's reason")
	}
	if dir := c.String("plot"); dir != "" {
		return writePredictionCharts(c, dir, ps)
	}
	return nil
}

// writePredictionCharts draws every prediction of a study into dir: time to
// train and efficiency with one line per variant, the step breakdown and
// the timeline of each variant's largest configuration.
func writePredictionCharts(c *cli.Context, dir string, ps []*predict.Prediction) error {
	var runs []*report.Run
	for _, p := range ps {
		run := &report.Run{R: p.Scenario}
		for _, row := range p.Rows {
			if row.Result != nil {
				run.Results = append(run.Results, row.Result)
				run.TimeToTrain = append(run.TimeToTrain, row.Time)
			}
		}
		if err := run.TraceLast(c.Int("steps")); err != nil {
			return err
		}
		runs = append(runs, run)
	}
	paths, err := writeScenarioCharts(c, dir, runs...)
	for _, p := range paths {
		fmt.Fprintf(c.App.ErrWriter, "predict: wrote %s\n", p)
	}
	return err
}

// parseCounts parses a comma-separated list of positive integers for
// --flag of command cmd.
func parseCounts(cmd, flag, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, usagef("%s: --%s %q: want positive integers separated by commas, such as 1,4,32", cmd, flag, s)
		}
		out = append(out, n)
	}
	return out, nil
}
