package cmd

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/internal/atomicfile"
	"scaleplan/internal/config"
	"scaleplan/internal/tables"
	"scaleplan/report"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// traceSteps is the number of steady-state steps --trace records.
const traceSteps = 2

// simulateCommand is `scaleplan simulate SCENARIO`.
func simulateCommand() *cli.Command {
	return &cli.Command{
		Name:      "simulate",
		Usage:     "simulate a scenario's training steps: step time, where it goes, throughput, memory",
		ArgsUsage: "SCENARIO",
		Description: "Simulates every configuration of the scenario's sweep (a shipped scenario's name or a\n" +
			"YAML file) event by event and prints one row per configuration: the steady-state step\n" +
			"time (the mean of the steps after the first, which fills the prefetch queue) and its\n" +
			"parts, which sum to it: compute, exposed communication, exposed input wait, pipeline\n" +
			"bubble and straggler wait; samples/s, device utilisation and memory per device.\n" +
			"The overrides go through the scenario's own checks. --storage reads from the given\n" +
			"storage without staging; --decode device moves decoding onto the accelerators (DALI).\n" +
			"--trace writes the last configuration's last steps as Chrome trace-event JSON, which\n" +
			"ui.perfetto.dev opens. --plot writes the charts into a directory. Flags may come\n" +
			"before or after the scenario.\n\n" +
			"Examples:\n" +
			"   scaleplan simulate tsubame3-resnet50-caffe2-default\n" +
			"   scaleplan simulate --devices 32,128 --transport verbs tsubame3-resnet50-caffe2-staged\n" +
			"   scaleplan simulate --batch 8,64,256 --format csv seed003-resnet50-2gpu-nop2p\n" +
			"   scaleplan simulate --devices 128 --trace step.json tsubame3-resnet50-caffe2-verbs\n" +
			"   scaleplan simulate tsubame3-resnet50-caffe2-verbs --plot charts",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "devices", Usage: "device counts `N,N,...` to simulate (e.g. 1,4,32,128)"},
			placementFlag(),
			&cli.StringFlag{Name: "batch", Usage: "per-device batches `B,B,...`"},
			&cli.StringFlag{Name: "allreduce", Usage: "gradient exchange `ALG`: " + strings.Join(scenarios.AllReduceAlgorithms, ", ")},
			&cli.StringFlag{Name: "transport", Usage: "transport `NAME` between nodes (verbs, ipoib, tcp, grpc, ...; the system's)"},
			&cli.StringFlag{Name: "storage", Usage: "read samples from `KIND`: " + strings.Join(scenarios.StorageKinds, ", ") + " (no staging)"},
			&cli.StringFlag{Name: "decode", Usage: "decode samples on the `SITE`: host (the nodes' CPU cores) or device (on the accelerators, as NVIDIA DALI does)"},
			&cli.StringFlag{Name: "seed", Usage: "random `SEED` of the straggler jitter (default the scenario's)"},
			calibrationFlag(),
			hostFlag(),
			&cli.IntFlag{Name: "steps", Value: sim.DefaultSteps, Usage: "optimizer steps to simulate per configuration, `N` ≥ 1; the first is left out of the steady state"},
			&cli.StringFlag{Name: "trace", Usage: "write the last configuration's last steps as Chrome trace-event JSON to `FILE`"},
			&cli.StringFlag{Name: "plot", Usage: "write charts (time to train, efficiency, breakdown, the last configuration's last step) as PNG and SVG into `DIR`"},
			formatFlag(),
		},
		Action: withArgs(runSimulate),
	}
}

// parseInts parses a comma-separated list of positive integers.
func parseInts(flag, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, usagef("simulate: --%s %q: want positive integers separated by commas, such as 1,4,32", flag, s)
		}
		out = append(out, n)
	}
	return out, nil
}

// placementFlag is --placement of simulate and predict.
func placementFlag() cli.Flag {
	return &cli.StringFlag{Name: "placement", Usage: "devices on each node `K,K,...` (e.g. 1,2,3,4), for nodes using different numbers of devices; replaces --devices and the sweep"}
}

// placementOption returns --placement's devices per node, nil if unset;
// it refuses --devices alongside.
func placementOption(c *cli.Context, cmd string) ([]int, error) {
	if !c.IsSet("placement") {
		return nil, nil
	}
	if c.IsSet("devices") {
		return nil, usagef("%s: --placement gives the devices; leave out --devices", cmd)
	}
	pl, err := parseInts("placement", c.String("placement"))
	if err != nil {
		return nil, usagef("%s: --placement %q: want positive device counts per node separated by commas, such as 1,2,3,4", cmd, c.String("placement"))
	}
	return pl, nil
}

// simOverrides are the command line's changes to a scenario.
type simOverrides struct {
	devices, batch              []int
	placement                   []int
	allreduce, transport, store string
	decode                      string
	seed                        uint64
	seedSet                     bool
	stepsToTarget               string // a steps-to-target laws file, absolute
}

func (o *simOverrides) edit(s *scenarios.Scenario) {
	if o.devices != nil {
		s.Sweep.Devices = o.devices
	}
	if o.placement != nil {
		sum := 0
		for _, k := range o.placement {
			sum += k
		}
		s.Parallelism.Placement, s.Sweep.Devices = o.placement, []int{sum}
	}
	if o.batch != nil {
		s.Sweep.Batch = o.batch
		s.BatchPerDevice = o.batch[0]
	}
	if o.allreduce != "" {
		s.Parallelism.AllReduce = o.allreduce
	}
	if o.transport != "" {
		s.Parallelism.Transport = o.transport
	}
	if o.store != "" {
		s.Input.Storage = o.store
		s.Input.Staging = false
	}
	if o.decode != "" {
		s.Input.Decode = o.decode
	}
	if o.seedSet {
		s.Seed = o.seed
	}
	if o.stepsToTarget != "" {
		s.StepsToTarget = &scenarios.StepsToTarget{File: o.stepsToTarget}
	}
}

// sources returns the YAML paths edit changes and the flags their values
// come from, for scenarios.Options.Overrides.
func (o *simOverrides) sources() map[string]string {
	m := map[string]string{}
	if o.devices != nil {
		m["sweep.devices"] = "--devices"
	}
	if o.placement != nil {
		m["sweep.devices"], m["parallelism.placement"] = "--placement", "--placement"
	}
	if o.batch != nil {
		m["sweep.batch"], m["batch_per_device"] = "--batch", "--batch"
	}
	if o.allreduce != "" {
		m["parallelism.allreduce"] = "--allreduce"
	}
	if o.transport != "" {
		m["parallelism.transport"] = "--transport"
	}
	if o.store != "" {
		m["input.storage"], m["input.staging"] = "--storage", "--storage"
	}
	if o.decode != "" {
		m["input.decode"] = "--decode"
	}
	if o.seedSet {
		m["seed"] = "--seed"
	}
	if o.stepsToTarget != "" {
		m["steps_to_target"] = "--steps-to-target"
	}
	return m
}

func simOptions(c *cli.Context) (*simOverrides, error) {
	o := &simOverrides{allreduce: c.String("allreduce"), transport: c.String("transport"), store: c.String("storage"), decode: c.String("decode")}
	var err error
	if s := c.String("devices"); c.IsSet("devices") {
		if o.devices, err = parseInts("devices", s); err != nil {
			return nil, err
		}
	}
	if s := c.String("batch"); c.IsSet("batch") {
		if o.batch, err = parseInts("batch", s); err != nil {
			return nil, err
		}
	}
	if o.placement, err = placementOption(c, "simulate"); err != nil {
		return nil, err
	}
	if o.allreduce != "" && !slices.Contains(scenarios.AllReduceAlgorithms, o.allreduce) {
		return nil, usagef("simulate: --allreduce: %s", config.Unknown("all-reduce algorithm", o.allreduce, scenarios.AllReduceAlgorithms))
	}
	if o.store != "" && !slices.Contains(scenarios.StorageKinds, o.store) {
		return nil, usagef("simulate: --storage: %s", config.Unknown("storage", o.store, scenarios.StorageKinds))
	}
	if o.decode != "" && !slices.Contains(scenarios.DecodeSites, o.decode) {
		return nil, usagef("simulate: --decode: %s", config.Unknown("decode site", o.decode, scenarios.DecodeSites))
	}
	if c.IsSet("seed") {
		if o.seed, err = strconv.ParseUint(c.String("seed"), 10, 64); err != nil {
			return nil, usagef("simulate: --seed %q: want a non-negative integer", c.String("seed"))
		}
		o.seedSet = true
	}
	if n := c.Int("steps"); n < 1 || n > sim.MaxSteps {
		return nil, usagef("simulate: --steps %d: want 1 to %d", n, sim.MaxSteps)
	}
	return o, nil
}

func runSimulate(c *cli.Context, args []string) error {
	format := c.String("format")
	if err := checkFormat(format); err != nil {
		return err
	}
	if len(args) != 1 {
		return usagef("simulate takes one SCENARIO (a shipped scenario's name or a YAML file); `scaleplan catalog` lists them")
	}
	if err := checkOutputs("simulate", flagPaths(c.String, "trace", "plot"), commandInputs(c, "SCENARIO", args)); err != nil {
		return err
	}
	o, err := simOptions(c)
	if err != nil {
		return err
	}
	opt := scenarioOptions(c)
	opt.Edit, opt.Overrides = o.edit, o.sources()
	if err := readCalibrations("simulate", c.StringSlice("calibration"), &opt); err != nil {
		return err
	}
	if err := readHost("simulate", c.String("host"), &opt); err != nil {
		return err
	}
	rs, err := loadScenarios("simulate", opt, args[0])
	if err != nil {
		return err
	}
	r := rs[0]
	pts := r.Points()
	results := make([]*sim.Result, len(pts))
	bar := newBar(c, "simulate", len(pts))
	defer bar.Done()
	for i, p := range pts {
		bar.Item(report.DevicesName(p.Devices))
		cfg, err := r.Build(p)
		if err != nil {
			return fmt.Errorf("%s at %d devices, batch %d: %w", r.Name, p.Devices, p.BatchPerDevice, err)
		}
		cfg.Steps = c.Int("steps")
		if c.String("trace") != "" && i == len(pts)-1 {
			cfg.TraceSteps = min(traceSteps, cfg.Steps)
		}
		if c.String("plot") != "" && i == len(pts)-1 {
			cfg.TraceSteps = max(cfg.TraceSteps, 1) // for the timeline
		}
		if results[i], err = sim.Run(cfg); err != nil {
			return err
		}
		bar.Add(1)
	}
	bar.Done()
	w := c.App.Writer
	if err := tables.Simulation(r, results, c.Int("steps")).Write(w, format); err != nil {
		return err
	}
	if format == "text" || format == "md" {
		for _, n := range tables.SimulationNotes(r, results) {
			fmt.Fprintf(w, "\n%s\n", n)
		}
	}
	if path := c.String("trace"); path != "" && len(results) > 0 {
		last := results[len(results)-1]
		if last.Trace == nil {
			return fmt.Errorf("simulate: %s has no steps to trace (the asynchronous parameter server has none)", r.Name)
		}
		if err := atomicfile.Write(path, last.Trace.WriteJSON); err != nil {
			return err
		}
		fmt.Fprintf(c.App.ErrWriter, "simulate: wrote the last %d steps of %d devices, batch %d to %s\n",
			min(traceSteps, c.Int("steps")), last.Devices, last.MicroBatch, path)
	}
	if dir := c.String("plot"); dir != "" {
		paths, err := writeScenarioCharts(c, dir, &report.Run{R: r, Results: results})
		for _, p := range paths {
			fmt.Fprintf(c.App.ErrWriter, "simulate: wrote %s\n", p)
		}
		return err
	}
	return nil
}
