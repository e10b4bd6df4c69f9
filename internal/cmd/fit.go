package cmd

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/fit"
	"scaleplan/fit/logs"
	"scaleplan/hw"
	"scaleplan/internal/calib"
	"scaleplan/internal/tables"
	"scaleplan/internal/units"
	"scaleplan/model"
	"scaleplan/scenarios"
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
			"be fitted, saying why for each; 2 for a wrong command line, including an output\n" +
			"(--out, --plot) that is one of the LOGs.\n\n" +
			"Examples:\n" +
			"   scaleplan fit bench.jsonl\n" +
			"   scaleplan fit --gradient-size '102.2 MB' --out calib.yaml one-gpu.csv two-gpus.csv\n" +
			"   scaleplan fit --group-by framework --format md sweep.csv hvd-*.log\n" +
			"   scaleplan fit --device A100-SXM4-80GB train-b128.log train-b256.log",
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
		},
		Action: withArgs(runFit),
	}
}

func runFit(c *cli.Context, args []string) error {
	format := c.String("format")
	if err := checkFormat(format); err != nil {
		return err
	}
	if len(args) == 0 {
		return usagef("fit: no LOG given (want %s, or nccl-tests output)", logFormats)
	}
	if err := checkOutputs("fit", flagPaths(c.String, "out", "plot"), commandInputs(c, "LOG", args)); err != nil {
		return err
	}
	opt := &fit.Options{GroupBy: c.StringSlice("group-by")}
	if s := c.String("gradient-size"); s != "" {
		g, err := units.ParseBytes(s)
		if err != nil || g <= 0 {
			return usagef("fit: --gradient-size %q: want a size such as '102.2 MB'", s)
		}
		opt.GradientSize = g
	}
	if c.Bool("keep-outliers") {
		opt.Settings = &fit.Settings{OutlierLevel: -1}
	}
	if opt.MinBatch = c.Int("min-batch"); opt.MinBatch < 0 {
		return usagef("fit: --min-batch %d: want a batch >= 0", opt.MinBatch)
	}
	var err error
	if opt.Target, err = parseTarget("fit", c.String("target")); err != nil {
		return err
	}
	rename, err := deviceRenamer("fit", c.String("device"))
	if err != nil {
		return err
	}
	stderr := c.App.ErrWriter
	lgs, err := readLogs(args, func(lg *logs.Log) { reportLog(stderr, "fit", lg) }, rename)
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
	if err := tables.Write(c.App.Writer, format, fitTables(rep, opt)); err != nil {
		return err
	}
	if err := noneFitted(rep); err != nil {
		return err
	}
	if out := c.String("out"); out != "" {
		cat, prof, err := loadCatalogAndProfiles(c)
		if err != nil {
			return err
		}
		if err := writeCalibration(stderr, rep, out); err != nil {
			return err
		}
		calibrationReach(stderr, out, rep.Calibration(), cat, prof)
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

// logFormats names the logs fit reads, for the messages of fit and plot
// given none.
const logFormats = "bench logs, CSV, MLPerf, Horovod, tf_cnn_benchmarks, torchvision train.py, Hugging Face Trainer, Megatron-LM, DeepSpeed or torchtitan output, or Lightning's metrics.csv"

// readLogs reads the logs named (logs.ReadFiles), says what it read
// through report, and renames their devices (deviceRenamer), refusing a
// --device that renamed nothing.
func readLogs(names []string, report func(*logs.Log), rename *deviceRename) ([]*logs.Log, error) {
	lgs, err := logs.ReadFiles(names, func(lg *logs.Log) {
		report(lg)
		rename.Apply(lg)
	})
	var pe *fs.PathError
	switch {
	case errors.Is(err, logs.ErrRepeated):
		return nil, usageError{err}
	case errors.Is(err, fs.ErrNotExist) && errors.As(err, &pe) && slices.Contains(scenarios.Names(), pe.Path):
		return nil, fmt.Errorf("%w (%s is a shipped scenario; logs are read here: `scaleplan plot scaling|efficiency|breakdown|timeline` draws scenarios)", err, pe.Path)
	case err != nil:
		return nil, err
	}
	if err := rename.Check(); err != nil {
		return nil, usagef("%s: --device %w", rename.cmd, err)
	}
	return lgs, nil
}

// reportLog says on stderr which reader read a log and what it could not.
func reportLog(w io.Writer, cmd string, lg *logs.Log) {
	fmt.Fprintf(w, "%s: %s: read as %s (%s): ", cmd, lg.Name, lg.Format, lg.Format.Describe())
	if n := len(lg.Collectives); n > 0 && len(lg.Records) == 0 {
		fmt.Fprintf(w, "%d collective %s", n, tables.Plural(n, "test", "tests"))
	} else {
		fmt.Fprintf(w, "%d %s", len(lg.Records), tables.Plural(len(lg.Records), "record", "records"))
	}
	if len(lg.Runs) > 0 {
		fmt.Fprintf(w, ", %d %s", len(lg.Runs), tables.Plural(len(lg.Runs), "run", "runs"))
	}
	if lg.Malformed > 0 {
		fmt.Fprintf(w, ", %d malformed %s", lg.Malformed, tables.Plural(lg.Malformed, "line", "lines"))
	}
	fmt.Fprintln(w)
	for _, e := range lg.Errors {
		fmt.Fprintf(w, "%s:   %v\n", cmd, e)
	}
	if n := lg.Malformed - len(lg.Errors); n > 0 {
		fmt.Fprintf(w, "%s:   and %d more\n", cmd, n)
	}
	for _, n := range lg.Notes {
		fmt.Fprintf(w, "%s: %s: %s\n", cmd, lg.Name, n)
	}
}

// writeCalibration writes the report's calibration to path.
func writeCalibration(w io.Writer, rep *fit.Report, path string) error {
	cal := rep.Calibration()
	n := len(cal.Throughput) + len(cal.Comm) + len(cal.Steps)
	if n == 0 {
		if len(rep.Collectives) > 0 {
			return fmt.Errorf("fit: nothing to write to %s: collective tests are not calibration entries (they measure the system's links, which the catalogue's YAML gives; docs/catalog.md), and no group with a model name was fitted", path)
		}
		return fmt.Errorf("fit: nothing to write to %s: no group with a model name was fitted", path)
	}
	if err := cal.WriteFile(path); err != nil {
		return err
	}
	fmt.Fprintf(w, "fit: wrote %s: %d throughput, %d comm, %d steps %s\n", path,
		len(cal.Throughput), len(cal.Comm), len(cal.Steps), tables.Plural(n, "entry", "entries"))
	for _, g := range rep.Groups {
		if g.Fit != nil && g.Key.Model == "" {
			fmt.Fprintf(w, "fit: not in %s: group %v has no model name\n", path, g.Key)
		}
	}
	for _, s := range rep.Steps {
		if s.Fit != nil && s.Model == "" {
			fmt.Fprintf(w, "fit: not in %s: a steps curve has no model name (give the log a model column)\n", path)
		}
	}
	return nil
}

// targetFlag is --target of fit and plot.
func targetFlag() cli.Flag {
	return &cli.StringFlag{Name: "target", Usage: "validation accuracy `ACC` (0.759, or 75.9 as a percentage) for the runs whose logs evaluate without naming a target (torchvision, Hugging Face Trainer, Lightning): each gives its steps to reach it"}
}

// targetUsed returns a usage error for a --target that no run of logs
// uses: only runs whose logs evaluate without naming a target have one
// (logs.Run.Evals), and a target given to other logs would do nothing.
func targetUsed(cmd string, target float64, lgs []*logs.Log) error {
	if target == 0 || logs.Evaluated(lgs) {
		return nil
	}
	return usagef("%s: --target applies to runs whose logs evaluate without naming a target (torchvision's train.py, the Hugging Face Trainer's eval_accuracy, Lightning's val_acc); none of these logs has one", cmd)
}

// parseTarget reads --target: a fraction in (0, 1], or a percentage in
// (1, 100]; "" is 0, none.
func parseTarget(cmd, s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	switch {
	case err != nil || !(v > 0) || v > 100:
		return 0, usagef("%s: --target %q: want an accuracy such as 0.759 or 75.9", cmd, s)
	case v > 1:
		v /= 100
	}
	return v, nil
}

// deviceFlag is --device of fit and plot.
func deviceFlag() cli.Flag {
	return &cli.StringFlag{Name: "device", Usage: "device kind `NAME` for logs that only say GPU or CPU, or nothing (Horovod, tf_cnn_benchmarks, torchvision, Hugging Face Trainer, Megatron-LM, DeepSpeed, Lightning); or FROM=TO[,FROM=TO...] to rename the devices a log names (e.g. 'V100=v100-sxm2-16gb')"}
}

// deviceRename is what --device does to the records of the logs read
// (logs.Rename), with the command it is of for its messages.
type deviceRename struct {
	cmd string
	*logs.Rename
}

// deviceRenamer parses --device spec of cmd; an empty spec changes nothing.
func deviceRenamer(cmd, spec string) (*deviceRename, error) {
	r, err := logs.ParseRename(spec)
	if err != nil {
		return nil, usagef("%s: --device %w", cmd, err)
	}
	return &deviceRename{cmd, r}, nil
}

// calibrationReach says on w, for each throughput entry of the calibration
// written to path, which scenarios take it (scenarios.PickCalibration: the
// model, the device by its catalogue key or CUDA name, the precision) or
// why none does, and names a steps entry whose model the profiles lack.
func calibrationReach(w io.Writer, path string, cal *calib.Calibration, cat *hw.Catalog, prof *model.Profiles) {
	for i := range cal.Throughput {
		e := &cal.Throughput[i]
		what := fmt.Sprintf("fit: %s: %s on %d %s", path, e.Model, e.Devices, cmp.Or(e.Device, "(no device)"))
		if e.Precision != "" {
			what += ", " + e.Precision
		}
		variant := calib.RunVariant(e.Labels)
		if variant != "" {
			what += ", " + variant
		}
		var precs []string
		for _, p := range hw.Precisions {
			if scenarios.PrecisionApplies(e.Precision, string(p)) {
				precs = append(precs, string(p))
			}
		}
		d := cat.DeviceCalled(e.Device)
		unit, _ := prof.SampleUnit(e.Model)
		switch {
		case prof.Models[e.Model] == nil:
			fmt.Fprintf(w, "%s: no scenario takes it: the profiles have no model %q (models: %s)\n", what, e.Model, strings.Join(prof.ModelNames(), ", "))
		case !scenarios.SampleApplies(e.Labels[calib.SampleLabel], unit):
			fmt.Fprintf(w, "%s: no scenario takes it: its samples are of kind %q (label %s) and %s's profile counts %ss; multiply v0 by the profile's samples in one of them (torchbench's transformer-base: its --seq-len) and remove the label\n",
				what, e.Labels[calib.SampleLabel], calib.SampleLabel, e.Model, cmp.Or(unit, model.Image))
		case logs.Unnamed(e.Device):
			fmt.Fprintf(w, "%s: no scenario takes it: name the device kind with --device (devices: %s)\n", what, strings.Join(cat.DeviceNames(), ", "))
		case d == nil:
			fmt.Fprintf(w, "%s: no scenario takes it: no catalogue device is called %q (devices: %s); rename it with --device '%s=DEVICE', or list it under the device's names in a --catalog file\n",
				what, e.Device, strings.Join(cat.DeviceNames(), ", "), e.Device)
		case len(precs) == 0:
			fmt.Fprintf(w, "%s: no scenario takes it: precision %q is none of %s\n", what, e.Precision, strings.Join(scenarios.MeasuredPrecisionNames(), ", "))
		case e.Devices < 1:
			fmt.Fprintf(w, "%s: no scenario takes it: the logs did not say on how many devices it was measured (MLPerf logs do not)\n", what)
		case e.V0Unbounded:
			fmt.Fprintf(w, "%s: no scenario takes it: its points did not bound v0 (measure larger batches)\n", what)
		default:
			// Of the entries that apply, scenarios take the one measured on
			// the fewest devices.
			var taken []string
			var other *calib.ThroughputEntry
			for _, p := range precs {
				picked, _ := scenarios.PickEntry([]scenarios.CalibrationFile{{Path: path, Cal: cal}}, e.Model, unit, d, p)
				switch {
				case picked == nil:
				case picked == e:
					taken = append(taken, p)
				default:
					other = picked
				}
			}
			if len(taken) == 0 {
				// Entries apart only by how the model ran: say which one.
				which := ""
				if ov := calib.RunVariant(other.Labels); variant != "" || ov != "" {
					which = " (" + cmp.Or(ov, "no run labels") + ")"
				}
				fmt.Fprintf(w, "%s: scenarios of %s on %s take the entry on %d %s before it%s\n", what, e.Model, d.Name, other.Devices, tables.Plural(other.Devices, "device", "devices"), which)
				continue
			}
			fmt.Fprintf(w, "%s: scenarios of %s on %s at %s compute by it (--calibration %s)\n", what, e.Model, d.Name, strings.Join(taken, ", "), path)
		}
	}
	for _, e := range cal.Steps {
		if prof.Models[e.Model] == nil {
			fmt.Fprintf(w, "fit: %s: steps to target of %s: no scenario takes it: the profiles have no model %q\n", path, e.Model, e.Model)
		}
	}
}

// modelFlag is --model of fit and validate --measured.
func modelFlag() cli.Flag {
	return &cli.StringFlag{Name: "model", Usage: "model profile `NAME` of the records whose log names no model (Lightning, DeepSpeed, Megatron-LM), so that what is fitted to them is of that model"}
}

// nameModel sets the model of every record and run of logs that names
// none to name (logs.NameModel). It returns a usage error for a name the profiles lack
// and for logs whose records all name their model, as --device does for
// logs that all name their device.
func nameModel(cmd, name string, lgs []*logs.Log, prof *model.Profiles) error {
	if name == "" {
		return nil
	}
	if _, err := prof.Model(name); err != nil {
		return usagef("%s: --model: %v", cmd, err)
	}
	if logs.NameModel(lgs, name) == 0 {
		return usagef("%s: --model %s: every record of these logs names its model", cmd, name)
	}
	return nil
}
