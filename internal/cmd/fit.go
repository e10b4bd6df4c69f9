package cmd

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/fit"
	"scaleplan/fit/logs"
	"scaleplan/internal/calib"
	"scaleplan/internal/tables"
	"scaleplan/internal/units"
	"scaleplan/sim"
	"scaleplan/validate"
)

// fitCommand is `scaleplan fit LOG...`.
func fitCommand() *cli.Command {
	return &cli.Command{
		Name:      "fit",
		Usage:     "fit v = b / (b/v0 + t) and steps-to-target curves to training logs; write a calibration",
		ArgsUsage: "LOG...",
		Description: "Reads each LOG, detects its format and says on stderr which reader it used and\n" +
			"how many lines it could not read. Formats: the scaleplan bench log (JSON lines),\n" +
			"CSV with a header (batch, devices, samples_per_s or step_time; other columns\n" +
			"are labels), MLPerf Training logs (:::MLLOG lines from v0.7, :::MLL in v0.6),\n" +
			"Horovod's pytorch_synthetic_benchmark.py output, tf_cnn_benchmarks output, the\n" +
			"output of torchvision's reference train.py (PyTorch, one GPU or torchrun), the\n" +
			"Hugging Face Trainer's (its \"***** Running training *****\" header and the\n" +
			"dictionaries it logs), Megatron-LM's (its arguments and iteration lines),\n" +
			"DeepSpeed's engine's (its configuration and RunningAvgSamplesPerSec lines),\n" +
			"torchtitan's (its device mesh, batch sizes and step lines), PyTorch\n" +
			"Lightning's metrics.csv (CSVLogger) with its ThroughputMonitor columns, and\n" +
			"nccl-tests' (each collective test's latency and bandwidth).\n\n" +
			"Measurements are grouped by model, device kind, device count, precision and\n" +
			"the --group-by labels; each group gets v0 (samples/s of the device group at\n" +
			"infinite batch) and t (fixed time per step) with 95% intervals, and points the\n" +
			"law does not explain (a drop at the largest batch from memory pressure) are\n" +
			"excluded and listed. Groups that differ only in device count also get\n" +
			"t(p) = t_fixed + 2(p-1)/p * t_comm and, with --gradient-size, the all-reduce\n" +
			"bandwidth. Convergence records (steps to target per global batch) get\n" +
			"S(B) = S_min (1 + B_noise/B) and the regime of every batch, automatically.\n\n" +
			"CSV columns (names lower-cased, spaces and dashes read as _):\n" +
			"   batch          the batch PER DEVICE; also batch_size, per_device_batch,\n" +
			"                  per_device_train_batch_size, micro_batch_size, local_batch, bs\n" +
			"   global_batch   samples per step over all devices; also global_batch_size,\n" +
			"                  total_batch_size, effective_batch_size; without batch it is\n" +
			"                  divided by devices (a row where it does not divide is refused)\n" +
			"   devices        also num_gpus, gpus, n_gpus, world_size, num_devices, ranks;\n" +
			"                  default 1\n" +
			"   samples_per_s  of all devices; also samples_per_second, samples/s, throughput,\n" +
			"                  images_per_sec, images/sec, img/s, examples_per_sec\n" +
			"   step_time      seconds, or step_time_ms, 'step_time (ms)', or cells like '54 ms'\n" +
			"   steps_to_target, reached, accuracy, target, model, device, precision\n" +
			"Other columns are labels.\n\n" +
			"Limits: a line over 1 MiB, a CSV or bench log over 4 GiB, a log of another\n" +
			"format over 256 MiB, or more than 500,000 records in one log is an error.\n" +
			"Past 100,000 measurement rows, a CSV's rows are merged into one measurement\n" +
			"per configuration and batch at their mean throughput (a note says so). A\n" +
			"line giving a throughput that is not finite, not above 0 or over 1e9\n" +
			"samples/s per device, a step time outside 1 ns to 1e6 s, a batch over 2^30\n" +
			"or over 10^7 devices is refused as malformed. fit exits 1 when no group could\n" +
			"be fitted, saying why for each, and for an output (--out, --plot) that is one\n" +
			"of the LOGs, which it never writes over; 2 for a wrong command line.\n\n" +
			"Examples:\n" +
			"   scaleplan fit bench.jsonl\n" +
			"   scaleplan fit --gradient-size '102.2 MB' --out calib.yaml one-gpu.csv two-gpus.csv\n" +
			"   scaleplan fit --group-by framework --format md sweep.csv hvd-*.log\n" +
			"   scaleplan fit --device A100-SXM4-80GB train-b128.log train-b256.log\n" +
			"   scaleplan fit --system dgx-h100 --out fabric.yaml all_reduce_1node.txt all_reduce_2nodes.txt",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "group-by", Usage: "label `NAMES` that also split the groups, comma-separated (e.g. framework; transport splits by a bench log's transport)"},
			&cli.StringFlag{Name: "out", Usage: "write the calibration YAML to `FILE`, for a scenario to reference"},
			formatFlag(),
			&cli.StringFlag{Name: "gradient-size", Usage: "gradient `SIZE` all-reduced per step (e.g. '102.2 MB'), for the all-reduce bandwidth"},
			deviceFlag(),
			modelFlag(),
			targetFlag(),
			&cli.BoolFlag{Name: "keep-outliers", Usage: "fit every point; do not exclude points the law does not explain"},
			&cli.IntFlag{Name: "min-batch", Usage: "fit only the global batches of `B` samples and more (on a GPU the smallest batches are bound by the host launching kernels, which the law's t does not describe)"},
			&cli.StringFlag{Name: "plot", Usage: "write the throughput and steps-to-target charts as PNG and SVG into `DIR`"},
			&cli.StringFlag{Name: "system", Usage: "fit the links of catalogue system `NAME` to the nccl-tests tests of the logs (all_reduce, reduce_scatter, all_gather, broadcast, alltoall, sendrecv) (the level inside a node from tests on one node, between nodes from tests on several), by inverting the simulator; --out writes them as fabric entries"},
			&cli.BoolFlag{Name: "operators", Usage: "also fit, per device and framework mode, each operator class's efficiency and the host's cost per kernel to the measurements of one device that the operator model covers (least squares of the log step time over every model, batch and precision); --out writes them as operators entries, which validate and scenarios carry to other devices (docs/calibrate.md)"},
			&cli.StringFlag{Name: "host", Usage: "with --operators: the host costs of the machine that ran the logs, table `FILE` of `scaleplan bench host` run on it: its cuda_op is held as the host's cost per kernel instead of fitted (launch_measured), and its other costs replace the defaults, so that the device's figures are fitted apart from the host (docs/compute-calibration.md)"},
			&cli.StringSliceFlag{Name: "profile", Usage: "fit each operator class's efficiency to the per-operator profile `FILE` (what bench --framework torch --profile writes beside its log, or a Chrome trace of torch.profiler run with with_flops): FLOPs over device time at the class's peak; repeatable; with no LOG, only the profiles are fitted"},
			&cli.StringFlag{Name: "llm", Usage: "fit, with --system, the compute factor of transformer `MODEL` (`scaleplan catalog` lists them) to each measured layout of Megatron-LM, torchtitan or DeepSpeed LOGs: the multiplier on the operator model's times that makes plan --llm's step of the logged layout equal the measured step (warm-up left out), with its interval over the logged intervals; --out writes llm entries that plan --llm --calibration applies (docs/llm.md)"},
			&cli.StringFlag{Name: "layout", Usage: "with --llm: the parallel `LAYOUT` ('tp2 pp4 cp1 dp8', optionally with ep, v and a sharding zero1, zero2, zero3, fsdp, distopt) when the log prints none (default: data parallel over its devices)"},
			&cli.StringFlag{Name: "allreduce", Value: "nccl", Usage: "with --system: the exchange `ALG` the simulator runs for the tests, whose links are fitted (nccl, the default, as validate --measured runs them): " + strings.Join(collectiveAlgorithms, ", ")},
		},
		Action: withArgs(runFit),
	}
}

func runFit(c *cli.Context, args []string) error {
	format := c.String("format")
	if err := checkFormat(format); err != nil {
		return err
	}
	if c.IsSet("llm") {
		return runFitLLM(c, args, format)
	}
	if len(args) == 0 && len(c.StringSlice("profile")) > 0 {
		return runProfileFit(c)
	}
	if len(args) == 0 {
		return usagef("fit: no LOG given (want %s, or nccl-tests output)", logFormats)
	}
	if err := checkOutputs("fit", flagPaths(c.String, "out", "plot"), commandInputs(c, "LOG", args)); err != nil {
		return err
	}
	opt, err := fitOptions(c)
	if err != nil {
		return err
	}
	stderr := c.App.ErrWriter
	lgs, err := readFitLogs(c, args)
	if err != nil {
		return err
	}
	if c.IsSet("model") {
		prof, err := loadProfiles(c)
		if err != nil {
			return err
		}
		if err := nameModel("fit", c.String("model"), lgs, prof); err != nil {
			return err
		}
	}
	if err := targetUsed("fit", opt.Target, lgs); err != nil {
		return err
	}
	rep, err := fit.Fit(lgs, opt)
	if err != nil {
		return err
	}
	if opt.GradientSize > 0 && len(rep.Comm) == 0 {
		fmt.Fprintf(stderr, "fit: --gradient-size: no group has measurements at two device counts or more, so no all-reduce bandwidth is estimated\n")
	}
	fabric, err := fitFabric(c, lgs)
	if err != nil {
		return err
	}
	ops, err := fitOperators(c, lgs)
	if err != nil {
		return err
	}
	profiled, err := fitProfiles(c)
	if err != nil {
		return err
	}
	ops = mergeOperators(stderr, ops, profiled)
	out := tables.Fit(rep, opt.GroupBy)
	if ops != nil {
		out = append(out, tables.OperatorsFit(ops)...)
	}
	if fabric != nil {
		out = append(out, tables.FabricFit(fabric)...)
		printLines(stderr, "fit", tables.FabricLines(fabric))
	}
	if err := tables.Write(c.App.Writer, format, out); err != nil {
		return err
	}
	if err := noneFitted(rep); err != nil {
		return err
	}
	return writeFitOutputs(c, rep, lgs, fabric, operatorEntries(ops))
}

// readFitLogs reads fit's LOGs, renaming their devices as --device says
// and reporting each on stderr.
func readFitLogs(c *cli.Context, args []string) ([]*logs.Log, error) {
	rename, err := deviceRenamer("fit", c.String("device"))
	if err != nil {
		return nil, err
	}
	stderr := c.App.ErrWriter
	return readLogs(args, func(lg *logs.Log) { reportLog(stderr, "fit", lg) }, rename)
}

// fitFabric fits the links of --system to the logs' collective tests
// (validate.FitFabric); nil without --system. A --system without a
// collective test is an error: it would fit nothing.
func fitFabric(c *cli.Context, lgs []*logs.Log) (*validate.FabricCalibration, error) {
	system := c.String("system")
	if system == "" {
		return nil, nil
	}
	if !slices.ContainsFunc(lgs, func(lg *logs.Log) bool { return len(lg.Collectives) > 0 }) {
		return nil, usagef("fit: --system %s: no LOG holds a collective test (nccl-tests output) to fit its links to", system)
	}
	alg := c.String("allreduce")
	algorithm, err := sim.ParseAlgorithm(alg)
	if err != nil || !slices.Contains(collectiveAlgorithms, alg) {
		return nil, usagef("fit: --allreduce %q: want %s", alg, strings.Join(collectiveAlgorithms, ", "))
	}
	cat, err := loadCatalog(c)
	if err != nil {
		return nil, err
	}
	fc, err := validate.FitFabric(cat, system, lgs, algorithm, sim.CollectiveTime)
	if err != nil {
		return nil, fmt.Errorf("fit: --system: %w", err)
	}
	return fc, nil
}

// fitOptions reads the flags of fit that set the fit's options.
func fitOptions(c *cli.Context) (*fit.Options, error) {
	opt := &fit.Options{GroupBy: c.StringSlice("group-by")}
	if s := c.String("gradient-size"); s != "" {
		g, err := units.ParseBytes(s)
		if err != nil || g <= 0 {
			return nil, usagef("fit: --gradient-size %q: want a size such as '102.2 MB'", s)
		}
		opt.GradientSize = g
	}
	if c.Bool("keep-outliers") {
		opt.Settings = &fit.Settings{OutlierLevel: -1}
	}
	if opt.MinBatch = c.Int("min-batch"); opt.MinBatch < 0 {
		return nil, usagef("fit: --min-batch %d: want a batch >= 0", opt.MinBatch)
	}
	var err error
	if opt.Target, err = parseTarget("fit", c.String("target")); err != nil {
		return nil, err
	}
	return opt, nil
}

// writeFitOutputs writes the calibration of --out, saying which scenarios
// take its entries, and the charts of --plot.
func writeFitOutputs(c *cli.Context, rep *fit.Report, lgs []*logs.Log, fabric *validate.FabricCalibration, ops []calib.OperatorsEntry) error {
	stderr := c.App.ErrWriter
	if out := c.String("out"); out != "" {
		cat, prof, err := loadCatalogAndProfiles(c)
		if err != nil {
			return err
		}
		cal, err := writeCalibration(stderr, rep, fabric, ops, out)
		if err != nil {
			return err
		}
		printLines(stderr, "fit", tables.CalibrationReach(out, cal, cat, prof))
	}
	if dir := c.String("plot"); dir != "" {
		return writeFitCharts(c, "fit", dir, rep, lgs)
	}
	return nil
}

// noneFitted returns, prefixed with fit:, the report's error when not
// one of its groups could be fitted (fit.Report.NoneFitted): the tables
// then hold nothing a user could use, and the exit status says so.
func noneFitted(rep *fit.Report) error {
	if err := rep.NoneFitted(); err != nil {
		return fmt.Errorf("fit: %w", err)
	}
	return nil
}

// writeCalibration writes the report's calibration, with the fabric
// entries of fabric (nil: none) and the operators entries ops, to path, says on w what it holds
// (tables.CalibrationWritten) and returns it.
func writeCalibration(w io.Writer, rep *fit.Report, fabric *validate.FabricCalibration, ops []calib.OperatorsEntry, path string) (*calib.Calibration, error) {
	cal := rep.Calibration()
	if fabric != nil {
		cal.Fabric = fabric.Entries()
	}
	cal.Operators = ops
	n := len(cal.Throughput) + len(cal.Comm) + len(cal.Steps) + len(cal.Fabric) + len(cal.Operators)
	if n == 0 {
		switch {
		case fabric != nil:
			return nil, fmt.Errorf("fit: nothing to write to %s: no level of system %s could be fitted to the collective tests, and no group with a model name was fitted", path, fabric.System)
		case len(rep.Collectives) > 0:
			return nil, fmt.Errorf("fit: nothing to write to %s: collective tests calibrate a system's links only with --system, the catalogue system they ran on, and no group with a model name was fitted", path)
		}
		return nil, fmt.Errorf("fit: nothing to write to %s: no group with a model name was fitted", path)
	}
	if err := cal.WriteFile(path); err != nil {
		return nil, err
	}
	printLines(w, "fit", tables.CalibrationWritten(rep, cal, path))
	return cal, nil
}
