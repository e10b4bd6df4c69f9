package cmd

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/fit"
	"scaleplan/fit/logs"
	"scaleplan/hw"
	"scaleplan/internal/benchlog"
	"scaleplan/internal/calib"
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
	if err := writeTables(c.App.Writer, format, fitTables(rep, opt)); err != nil {
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

// noneFitted returns an error saying why each group failed when the
// report has groups (throughput, steps-to-target or collective tests) and
// not one of them could be fitted: the tables then hold nothing a user
// could use, and the exit status says so.
func noneFitted(rep *fit.Report) error {
	var why []string
	for _, g := range rep.Groups {
		if g.Fit != nil {
			return nil
		}
		why = append(why, fmt.Sprintf("throughput group %v: %v", g.Key, g.Err))
	}
	for _, s := range rep.Steps {
		if s.Fit != nil {
			return nil
		}
		why = append(why, fmt.Sprintf("steps-to-target curve of %s: %v", cmp.Or(s.Model, "?"), s.Err))
	}
	for _, c := range rep.Collectives {
		if c.Err == nil || errors.Is(c.Err, fit.ErrLatencyOnly) {
			return nil
		}
		why = append(why, fmt.Sprintf("collective test of %s, line %d: %v", c.Source, c.Line, c.Err))
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("fit: no group could be fitted:\n  %s", strings.Join(why, "\n  "))
}

// logFormats names the logs fit reads, for the messages of fit and plot
// given none.
const logFormats = "bench logs, CSV, MLPerf, Horovod, tf_cnn_benchmarks, torchvision train.py, Hugging Face Trainer, Megatron-LM, DeepSpeed or torchtitan output, or Lightning's metrics.csv"

// readLogs reads the logs named, says what it read through report, and
// renames their devices (deviceRenamer), refusing a --device that renamed
// nothing.
func readLogs(names []string, report func(*logs.Log), rename *deviceRename) ([]*logs.Log, error) {
	seen := map[string]string{}
	for _, name := range names {
		if prev, ok := seen[filepath.Clean(name)]; ok {
			return nil, usagef("%s is given twice (also as %s): its records would count twice", name, prev)
		}
		seen[filepath.Clean(name)] = name
	}
	var lgs []*logs.Log
	for _, name := range names {
		lg, err := logs.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) && slices.Contains(scenarios.Names(), name) {
			return nil, fmt.Errorf("%w (%s is a shipped scenario; logs are read here: `scaleplan plot scaling|efficiency|breakdown|timeline` draws scenarios)", err, name)
		}
		if err != nil {
			return nil, err
		}
		report(lg)
		rename.apply(lg)
		lgs = append(lgs, lg)
	}
	return lgs, rename.check()
}

// reportLog says on stderr which reader read a log and what it could not.
func reportLog(w io.Writer, cmd string, lg *logs.Log) {
	fmt.Fprintf(w, "%s: %s: read as %s (%s): ", cmd, lg.Name, lg.Format, lg.Format.Describe())
	if n := len(lg.Collectives); n > 0 && len(lg.Records) == 0 {
		fmt.Fprintf(w, "%d collective %s", n, plural(n, "test", "tests"))
	} else {
		fmt.Fprintf(w, "%d %s", len(lg.Records), plural(len(lg.Records), "record", "records"))
	}
	if len(lg.Runs) > 0 {
		fmt.Fprintf(w, ", %d %s", len(lg.Runs), plural(len(lg.Runs), "run", "runs"))
	}
	if lg.Malformed > 0 {
		fmt.Fprintf(w, ", %d malformed %s", lg.Malformed, plural(lg.Malformed, "line", "lines"))
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
		len(cal.Throughput), len(cal.Comm), len(cal.Steps), plural(n, "entry", "entries"))
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
	if target == 0 {
		return nil
	}
	for _, lg := range lgs {
		for _, r := range lg.Runs {
			if len(r.Evals) > 0 {
				return nil
			}
		}
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

// deviceRename is what --device does to the records of the logs read:
// a name alone becomes the device of the records whose log says only GPU
// or CPU (or nothing); FROM=TO pairs, separated by commas, rename each
// FROM (ignoring case) to its TO. It remembers what it changed and which
// devices it saw, so that check can refuse a spec that changed nothing.
type deviceRename struct {
	cmd, spec string            // spec without "=": the device of unnamed records
	to        map[string]string // lower-case FROM → TO; nil without pairs
	from      map[string]string // lower-case FROM → FROM as given
	used      map[string]bool   // FROMs (or spec) that renamed a record
	seen      map[string]bool   // devices the records named, as they did
}

// deviceRenamer parses --device spec of cmd; an empty spec changes nothing.
func deviceRenamer(cmd, spec string) (*deviceRename, error) {
	d := &deviceRename{cmd: cmd, spec: spec, used: map[string]bool{}, seen: map[string]bool{}}
	if spec == "" || !strings.Contains(spec, "=") {
		return d, nil
	}
	d.to, d.from = map[string]string{}, map[string]string{}
	for _, pair := range strings.Split(spec, ",") {
		from, name, ok := strings.Cut(pair, "=")
		from, name = strings.TrimSpace(from), strings.TrimSpace(name)
		if !ok || from == "" || name == "" || strings.Contains(name, "=") {
			return nil, usagef("%s: --device %q: want a device NAME, or FROM=TO pairs separated by commas, such as 'V100=v100-sxm2-16gb'", cmd, spec)
		}
		d.to[strings.ToLower(from)], d.from[strings.ToLower(from)] = name, from
	}
	return d, nil
}

// renamed returns what device becomes and the key of d.used it counts
// under; the key is "" when d leaves device as it is.
func (d *deviceRename) renamed(device string) (string, string) {
	switch {
	case d.to != nil:
		if name, ok := d.to[strings.ToLower(device)]; ok {
			return name, strings.ToLower(device)
		}
	case d.spec != "" && unnamedDevice(device):
		return d.spec, d.spec
	}
	return device, ""
}

// apply renames the devices of lg's records, and of its runs' platforms.
func (d *deviceRename) apply(lg *logs.Log) {
	for i := range lg.Records {
		r := &lg.Records[i]
		d.seen[r.Device] = true
		if name, key := d.renamed(r.Device); key != "" {
			d.used[key] = true
			r.Device = name
		}
	}
	if lg.Format == logs.MLPerf || lg.Format == logs.MLPerfV06 {
		return // MLPerf's platforms are systems' names, left as logged
	}
	for i := range lg.Runs {
		// A run's platform is "NxKIND" where its log gave a device kind
		// (torchvision, Hugging Face Trainer, Megatron-LM; "?" where it
		// gave none): it names the kind as the records now do.
		r := &lg.Runs[i]
		n, kind, ok := strings.Cut(r.Device, "x")
		if !ok || n == "" || strings.Trim(n, "0123456789") != "" {
			continue
		}
		if kind == "?" {
			kind = ""
		}
		if name, key := d.renamed(kind); key != "" {
			r.Device = n + "x" + name
		}
	}
}

// check returns an error if the spec renamed no record, or one of its
// FROMs none: a misspelt device would change nothing and say nothing.
func (d *deviceRename) check() error {
	delete(d.seen, "") // records of no device (steps to target) are not worth naming
	devices := slices.Sorted(maps.Keys(d.seen))
	switch {
	case d.spec == "" || len(d.seen) == 0:
		return nil
	case d.to == nil && !d.used[d.spec]:
		return usagef("%s: --device %q: every record names its device (%s); rename one with FROM=TO", d.cmd, d.spec, strings.Join(devices, ", "))
	}
	for _, from := range slices.Sorted(maps.Keys(d.to)) {
		if !d.used[from] {
			return usagef("%s: --device %q: no record is on device %q (the records' devices: %s)", d.cmd, d.spec, d.from[from], strings.Join(devices, ", "))
		}
	}
	return nil
}

// unnamedDevice reports whether a log named device only by its kind (GPU,
// CPU) or not at all: what --device NAME names.
func unnamedDevice(device string) bool { return device == "" || device == "GPU" || device == "CPU" }

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
		case unnamedDevice(e.Device):
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
				fmt.Fprintf(w, "%s: scenarios of %s on %s take the entry on %d %s before it%s\n", what, e.Model, d.Name, other.Devices, plural(other.Devices, "device", "devices"), which)
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

// namedTable is a table and the key it has in JSON output.
// fitTables lays the report out as tables, leaving out empty ones.
func fitTables(rep *fit.Report, opt *fit.Options) []namedTable {
	var out []namedTable
	add := func(key string, t *table) {
		if len(t.Rows) > 0 {
			out = append(out, namedTable{key, t})
		}
	}
	cols := labelColumns(rep, opt.GroupBy)
	add("throughput", throughputTable(rep, cols))
	add("excluded", excludedTable(rep))
	add("comm", commTable(rep, cols))
	add("steps", stepsTable(rep, cols))
	add("steps_points", stepsPointsTable(rep))
	add("runs", runsTable(rep))
	add("collectives", collectivesTable(rep))
	return out
}

// collectivesTable is the latency–bandwidth fit of each collective test
// of nccl-tests logs.
func collectivesTable(rep *fit.Report) *table {
	t := &table{
		Title: "Collectives (nccl-tests): T(S) = α + S/β per test, least squares of the relative error; bus bandwidth β × nccl-tests' factor",
		Header: []string{"source", "line", "op", "ranks", "nodes", "device", "sizes", "points", "latency α", "bandwidth β", "bus bandwidth",
			"peak busbw (at size)", "avg busbw (log)", "R²", "worst point", "note"},
	}
	for _, f := range rep.Collectives {
		sizes := "-"
		if len(f.Points) > 0 {
			lo, hi := f.Points[0].Bytes, f.Points[0].Bytes
			for _, p := range f.Points {
				lo, hi = min(lo, p.Bytes), max(hi, p.Bytes)
			}
			sizes = fmt.Sprintf("%s–%s", lo, hi)
		}
		nodes, avg, peak := "-", "-", "-"
		if f.Nodes > 0 {
			nodes = strconv.Itoa(f.Nodes)
		}
		if f.AvgBusBW > 0 {
			avg = f.AvgBusBW.String()
		}
		if f.PeakBusBW > 0 {
			peak = fmt.Sprintf("%s (%s)", f.PeakBusBW, f.PeakBytes)
		}
		lat, bw, bus, r2, worst, note := "", "", "", "", "", ""
		if f.Err != nil {
			note = f.Err.Error()
			if f.Latency > 0 {
				lat = f.Latency.String()
			}
		} else {
			lat, bw, r2 = f.Latency.String(), f.Bandwidth.String(), fmt.Sprintf("%.4f", f.R2)
			worst = fmt.Sprintf("%.1f%%", 100*f.MaxRelError)
			if f.BusBandwidth > 0 {
				bus = f.BusBandwidth.String()
			} else {
				note = "op not known: no bus factor"
			}
		}
		t.Rows = append(t.Rows, []string{f.Source, strconv.Itoa(f.Line), dash(f.Op), strconv.Itoa(f.Ranks), nodes, dash(f.Device), sizes,
			strconv.Itoa(len(f.Points)), lat, bw, bus, peak, avg, r2, worst, note})
	}
	return t
}

func throughputTable(rep *fit.Report, groupBy []string) *table {
	t := &table{
		Title:  "Throughput law v = b / (b/v0 + t) per group (b: global batch; v0: samples/s of the device group)",
		Header: append(append([]string{"model", "device", "devices", "precision"}, groupBy...), "points", "excluded", "batches", "v0", "v0 95%", "t", "t 95%", "R²", "note"),
	}
	for _, g := range rep.Groups {
		row := append(keyCells(g.Key), labelCells(g.Key.Labels, groupBy)...)
		var notes []string
		if g.Ignored > 0 {
			notes = append(notes, fmt.Sprintf("%d step records ignored", g.Ignored))
		}
		if g.BelowMin > 0 {
			notes = append(notes, fmt.Sprintf("%d under --min-batch left out", g.BelowMin))
		}
		if len(g.OOM) > 0 {
			notes = append(notes, "out of memory at "+joinInts(g.OOM))
		}
		f := g.Fit
		if f == nil {
			row = append(row, strconv.Itoa(len(g.Points)), "", batchRange(g.Points), "", "", "", "", "")
			notes = append([]string{g.Err.Error()}, notes...)
			if m := measured(g.Points); m != "" {
				notes = append(notes, "measured "+m)
			}
			t.Rows = append(t.Rows, append(row, strings.Join(notes, "; ")))
			continue
		}
		if f.Bound {
			notes = append(notes, "t < 0 at the optimum: held at 0")
		}
		switch {
		case f.V0Unbounded:
			notes = append(notes, "v0 unbounded: the step time does not grow with the batch beyond its scatter; only t is determined (larger batches bound v0)")
		case math.IsInf(f.V0Interval[1], 1):
			notes = append(notes, fmt.Sprintf("v0 has no upper limit at %g%%: the time per sample is within its error of 0 (more or larger batches narrow it)", 100*f.Level))
		}
		if f.LackOfFit != nil {
			notes = append(notes, lackOfFitNote(f.LackOfFit))
		}
		excluded := len(g.Points) - f.Used
		v0 := num(f.V0)
		if f.V0Unbounded {
			v0 = "unbounded"
		}
		row = append(row, strconv.Itoa(f.Used), strconv.Itoa(excluded), batchRange(g.Points),
			v0, numInterval(f.V0Interval[0], f.V0Interval[1]),
			f.T.String(), secondsInterval(f.TInterval), fmt.Sprintf("%.4f", f.R2), strings.Join(notes, "; "))
		t.Rows = append(t.Rows, row)
	}
	return t
}

// measured returns the samples/s of points, "X samples/s" or "X–Y
// samples/s" over several, for a group the law could not be fitted to;
// "" for none.
func measured(points []fit.Point) string {
	if len(points) == 0 {
		return ""
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range points {
		lo, hi = min(lo, p.Throughput), max(hi, p.Throughput)
	}
	if lo == hi {
		return num(lo) + " samples/s"
	}
	return num(lo) + "–" + num(hi) + " samples/s"
}

// lackOfFitNote says how much repeated measurements scatter and whether
// the law misses their means by more than that (fit.LackOfFit).
func lackOfFitNote(lf *fit.LackOfFit) string {
	return fmt.Sprintf("repeats scatter %.1f%%; lack of fit p = %.2g", 100*lf.PureError, lf.P)
}

func excludedTable(rep *fit.Report) *table {
	t := &table{
		Title:  "Points the law does not explain (excluded from the fit)",
		Header: []string{"group", "batch", "samples/s", "law", "residual", "z", "source"},
	}
	for _, g := range rep.Groups {
		for _, p := range g.Points {
			if !p.Excluded {
				continue
			}
			t.Rows = append(t.Rows, []string{g.Key.String(), strconv.Itoa(p.Batch), num(p.Throughput), num(p.Fitted),
				fmt.Sprintf("%+.1f%%", 100*p.Residual), fmtZ(p.Z), fmt.Sprintf("%s:%d", p.Source, p.Line)})
		}
	}
	return t
}

func commTable(rep *fit.Report, groupBy []string) *table {
	t := &table{
		Title:  "Across device counts: t(p) = t_fixed + 2(p-1)/p * t_comm, t_comm = S/β",
		Header: append(append([]string{"model", "device", "precision"}, groupBy...), "devices", "t", "t_fixed", "t_comm", "t_comm 95%", "S", "bandwidth β", "β 95%", "note"),
	}
	for _, cg := range rep.Comm {
		row := append([]string{dash(cg.Model), dash(cg.Device), dash(cg.Precision)}, labelCells(cg.Labels, groupBy)...)
		f := cg.Fit
		if f == nil {
			t.Rows = append(t.Rows, append(row, "", "", "", "", "", "", "", "", cg.Err.Error()))
			continue
		}
		ts := make([]string, len(f.T))
		for i, v := range f.T {
			ts[i] = v.String()
		}
		var notes []string
		if f.Exact {
			notes = append(notes, "two counts: exact")
		}
		size, bw, bwi := "", "", ""
		switch {
		case f.GradientSize == 0:
			notes = append(notes, "no --gradient-size: bandwidth not estimated")
		case f.TComm <= 0:
			size = f.GradientSize.String()
			notes = append(notes, "t does not grow with the device count")
		default:
			size, bw = f.GradientSize.String(), f.Bandwidth.String()
			if lo, hi := f.BandwidthInterval[0], f.BandwidthInterval[1]; !math.IsNaN(float64(lo)) {
				up := "∞"
				if !math.IsInf(float64(hi), 0) {
					up = hi.String()
				}
				bwi = "[" + lo.String() + ", " + up + "]"
			}
		}
		row = append(row, joinInts(f.Counts), strings.Join(ts, ", "), f.TFixed.String(), f.TComm.String(),
			secondsInterval(f.TCommInterval), size, bw, bwi, strings.Join(notes, "; "))
		t.Rows = append(t.Rows, row)
	}
	return t
}

func stepsTable(rep *fit.Report, groupBy []string) *table {
	t := &table{
		Title:  "Steps to target: S(B) = S_min (1 + B_noise/B) (B: global batch)",
		Header: append(append([]string{"model", "target"}, groupBy...), "points", "not reached", "S_min", "S_min 95%", "B_noise", "B_noise 95%", "R²", "largest batch reached", "note"),
	}
	for _, sg := range rep.Steps {
		row := append([]string{dash(sg.Model), target(sg.Target)}, labelCells(sg.Labels, groupBy)...)
		unreached := 0
		for _, p := range sg.Points {
			if !p.Reached {
				unreached++
			}
		}
		maxB := ""
		if sg.MaxReached > 0 {
			maxB = strconv.Itoa(sg.MaxReached)
		}
		f := sg.Fit
		if f == nil {
			t.Rows = append(t.Rows, append(row, strconv.Itoa(len(sg.Points)-unreached), strconv.Itoa(unreached), "", "", "", "", "", maxB, sg.Err.Error()))
			continue
		}
		var notes []string
		if f.Used < len(sg.Points)-unreached {
			notes = append(notes, fmt.Sprintf("%d excluded", len(sg.Points)-unreached-f.Used))
		}
		if f.Bound {
			notes = append(notes, "B_noise < 0 at the optimum, held at 0: the steps do not fall as the batch grows "+
				"(every batch measured is past the noise scale, or the runs do not train to one target alike)")
		}
		if f.LackOfFit != nil {
			notes = append(notes, lackOfFitNote(f.LackOfFit))
		}
		sMin, sMinInt := num(f.SMin), numInterval(f.SMinInterval[0], f.SMinInterval[1])
		bNoise, bNoiseInt := num(f.BNoise), numInterval(f.BNoiseInterval[0], f.BNoiseInterval[1])
		if f.SMin < 1 {
			// Below one step S_min is not a number of steps: every batch
			// measured scales perfectly, and only the product is known.
			sMin, sMinInt, bNoise, bNoiseInt = "< 1", "", "> "+num(f.SMin*f.BNoise), ""
			notes = append([]string{fmt.Sprintf("perfect scaling at every batch measured: steps × batch = %s samples to the target; "+
				"S_min and B_noise are not determined apart (batches larger than %s would show where the returns diminish)", num(f.SMin*f.BNoise), cmp.Or(maxB, "these"))}, notes...)
		}
		note := strings.Join(notes, "; ")
		t.Rows = append(t.Rows, append(row, strconv.Itoa(f.Used), strconv.Itoa(unreached), sMin, sMinInt,
			bNoise, bNoiseInt, fmt.Sprintf("%.4f", f.R2), maxB, note))
	}
	return t
}

func stepsPointsTable(rep *fit.Report) *table {
	t := &table{
		Title: fmt.Sprintf("Steps-to-target regimes (perfect scaling: S within %.0f%% of S_min·B_noise/B; maximal data parallelism: within %.0f%% of S_min)",
			100*fit.RegimeTolerance, 100*fit.RegimeTolerance),
		Header: []string{"model", "target", "batch", "steps", "reached", "S(B)", "regime", "note"},
	}
	for _, sg := range rep.Steps {
		for _, p := range sg.Points {
			reached, fitted, regime, note := "yes", "", "", ""
			if sg.Fit != nil {
				fitted, regime = num(p.Fitted), p.Regime.String()
			}
			switch {
			case !p.Reached:
				reached = "no"
				note = fmt.Sprintf("stopped at %d steps (accuracy %s)", p.Steps, target(p.Accuracy))
				if sg.Fit != nil && p.Fitted < float64(p.Steps) {
					note += "; the curve predicts fewer steps"
				}
			case p.Excluded:
				note = fmt.Sprintf("excluded: %+.1f%% from the curve (z %s)", 100*p.Residual, fmtZ(p.Z))
			}
			t.Rows = append(t.Rows, []string{dash(sg.Model), target(sg.Target), strconv.Itoa(p.Batch), strconv.Itoa(p.Steps), reached, fitted, regime, note})
		}
	}
	return t
}

func runsTable(rep *fit.Report) *table {
	t := &table{
		Title:  "Training runs",
		Header: []string{"source", "run", "model", "platform", "global batch", "step", "data wait", "epochs", "accuracy", "status", "time to train"},
	}
	for _, r := range rep.Runs {
		ttt := ""
		if r.TimeToTrain > 0 {
			ttt = fmt.Sprintf("%s (%.2f min)", r.TimeToTrain, float64(r.TimeToTrain/units.Minute))
		}
		step, wait := "-", "-"
		if r.StepTime > 0 {
			step = r.StepTime.String()
			if r.DataWait > 0 {
				wait = fmt.Sprintf("%s (%.1f%%)", r.DataWait, 100*float64(r.DataWait/r.StepTime))
			}
		}
		batch := "-" // the log did not give it
		if r.GlobalBatch > 0 {
			batch = strconv.Itoa(r.GlobalBatch)
		}
		epochs := "-" // none completed, or the log counts none (Megatron's)
		if r.Epochs > 0 {
			epochs = num(r.Epochs)
		}
		t.Rows = append(t.Rows, []string{r.Source, r.Run.Run, dash(r.Model), dash(r.Device), batch,
			step, wait, epochs, target(r.Accuracy), cmp.Or(r.Status, "incomplete"), ttt})
	}
	return t
}

func keyCells(k fit.Key) []string {
	devices := "?"
	if k.Devices > 0 {
		devices = strconv.Itoa(k.Devices)
	}
	return []string{dash(k.Model), dash(k.Device), devices, dash(k.Precision)}
}

// labelColumns returns the label columns of the fit tables: the
// --group-by labels, then those fit.Fit keeps in a key whether or not it
// is asked to, where a group has one: calib.KeptLabels, and "transport"
// for workers that exchanged nothing.
func labelColumns(rep *fit.Report, groupBy []string) []string {
	cols := slices.Clip(groupBy)
	for _, name := range append(slices.Clip(calib.KeptLabels), "transport") {
		if slices.Contains(cols, name) {
			continue
		}
		for _, g := range rep.Groups {
			if _, ok := g.Key.Labels[name]; ok {
				cols = append(cols, name)
				break
			}
		}
	}
	return cols
}

func labelCells(labels map[string]string, names []string) []string {
	cells := make([]string, len(names))
	for i, n := range names {
		cells[i] = dash(labels[n])
	}
	return cells
}

func batchRange(ps []fit.Point) string {
	if len(ps) == 0 {
		return ""
	}
	lo, hi := ps[0].Batch, ps[0].Batch
	for _, p := range ps {
		lo, hi = min(lo, p.Batch), max(hi, p.Batch)
	}
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// num prints x to four significant digits, whole from 10⁴ up, with an
// exponent below 10⁻⁴ (units.FormatNumber).
func num(x float64) string { return units.FormatNumber(x) }

func numInterval(lo, hi float64) string {
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi):
		return "—"
	case math.IsInf(lo, 1):
		return "∞"
	case math.IsInf(hi, 1):
		return ">= " + num(lo)
	}
	return "[" + num(lo) + ", " + num(hi) + "]"
}

func secondsInterval(iv [2]units.Seconds) string {
	if math.IsNaN(float64(iv[0])) || math.IsNaN(float64(iv[1])) {
		return "—"
	}
	return "[" + iv[0].String() + ", " + iv[1].String() + "]"
}

func fmtZ(z float64) string {
	if math.IsNaN(z) {
		return "—"
	}
	return fmt.Sprintf("%.1f", z)
}

func target(x float64) string {
	if x == 0 {
		return "-"
	}
	return num(x)
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

func dash(s string) string { return cmp.Or(s, "-") }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// modelFlag is --model of fit and validate --measured.
func modelFlag() cli.Flag {
	return &cli.StringFlag{Name: "model", Usage: "model profile `NAME` of the records whose log names no model (Lightning, DeepSpeed, Megatron-LM), so that what is fitted to them is of that model"}
}

// nameModel sets the model of every record and run of logs that names
// none to name. It returns a usage error for a name the profiles lack
// and for logs whose records all name their model, as --device does for
// logs that all name their device.
func nameModel(cmd, name string, lgs []*logs.Log, prof *model.Profiles) error {
	if name == "" {
		return nil
	}
	if _, err := prof.Model(name); err != nil {
		return usagef("%s: --model: %v", cmd, err)
	}
	named := 0
	for _, lg := range lgs {
		for i := range lg.Records {
			if r := &lg.Records[i]; r.Model == "" && r.Kind != benchlog.KindHeader && r.Kind != benchlog.KindLink {
				r.Model = name
				named++
			}
		}
		for i := range lg.Runs {
			if r := &lg.Runs[i]; r.Model == "" {
				r.Model = name
				named++
			}
		}
	}
	if named == 0 {
		return usagef("%s: --model %s: every record of these logs names its model", cmd, name)
	}
	return nil
}
