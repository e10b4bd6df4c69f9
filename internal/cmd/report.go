package cmd

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"scaleplan/internal/atomicfile"
	"scaleplan/report"
	"scaleplan/sim"
)

// reportCommand is `scaleplan report SCENARIO [-o FILE]`.
func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "write a scenario's predictions, breakdown and charts as one self-contained HTML file",
		ArgsUsage: "SCENARIO [-o FILE]",
		Description: "Simulates every configuration of the scenario's sweep (a shipped scenario's name or a\n" +
			"YAML file) as `scaleplan simulate` does and writes one HTML file that needs nothing\n" +
			"else to open: the predictions per configuration (step time and its parts, samples/s,\n" +
			"time to train, scaling efficiency, published times where the scenario has them),\n" +
			"where the step time goes, the charts (time to train and efficiency against device\n" +
			"count, the breakdown, the last configuration's last step as a timeline) as inline\n" +
			"SVG, and every input: system, node, device, model, recipe, parallelism, input\n" +
			"pipeline. Time to train is the recipe's steps at the global batch times the step\n" +
			"time, plus staging and the scenario's overheads. Prints the path written.\n" +
			"Flags may come before or after the scenario.\n\n" +
			"Examples:\n" +
			"   scaleplan report tsubame3-resnet50-caffe2-verbs -o report.html\n" +
			"   scaleplan report --devices 8,16,32,64 ipu-pod64-efficientnet-b4 -o ipu.html",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Value: "report.html", Usage: "write the report to `FILE`"},
			&cli.StringFlag{Name: "devices", Usage: "simulate device counts `N,N,...` instead of the sweep's"},
			calibrationFlag(),
			hostFlag(),
			&cli.IntFlag{Name: "steps", Value: sim.DefaultSteps, Usage: "optimizer steps to simulate per configuration, `N` ≥ 1; the first is left out of the steady state"},
		},
		Action: withArgs(runReport),
	}
}

func runReport(c *cli.Context, args []string) error {
	if len(args) != 1 {
		return usagef("report takes one SCENARIO (a shipped scenario's name or a YAML file); `scaleplan catalog` lists them")
	}
	if err := checkOutputs("report", flagPaths(c.String, "out"), commandInputs(c, "SCENARIO", args)); err != nil {
		return err
	}
	steps := c.Int("steps")
	if steps < 1 || steps > sim.MaxSteps {
		return usagef("report: --steps %d: want 1 to %d", steps, sim.MaxSteps)
	}
	opt := scenarioOptions(c)
	if s := c.String("devices"); s != "" {
		devices, err := parseInts("devices", s)
		if err != nil {
			return usagef("report: --devices %q: want positive integers separated by commas, such as 1,4,32", s)
		}
		ov := &simOverrides{devices: devices}
		opt.Edit, opt.Overrides = ov.edit, ov.sources()
	}
	if err := readCalibrations("report", c.StringSlice("calibration"), &opt); err != nil {
		return err
	}
	if err := readHost("report", c.String("host"), &opt); err != nil {
		return err
	}
	rs, err := loadScenarios("report", opt, args[0])
	if err != nil {
		return err
	}
	r := rs[0]
	bar := newBar(c, "report", len(r.Points())+4)
	defer bar.Done()
	run, err := report.Simulate(r, steps, true, bar)
	if err != nil {
		return err
	}
	page, err := report.Render(run, steps, bar)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	path := c.String("out")
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	if err := atomicfile.WriteBytes(path, page); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	bar.Done()
	fmt.Fprintln(c.App.Writer, path)
	return nil
}
