package cmd

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/fit/logs"
	"scaleplan/hw"
	"scaleplan/internal/config"
	"scaleplan/internal/tables"
	"scaleplan/model"
	"scaleplan/plots"
	"scaleplan/predict"
	"scaleplan/scenarios"
	"scaleplan/sim"
	"scaleplan/validate"
)

// measuredFlag is validate's --measured.
func measuredFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "measured", Usage: "compare the measurements of log `FILE` (any format fit reads: scaleplan bench, engine/torchbench on GPUs, CSV, Horovod, tf_cnn_benchmarks, torchvision, Hugging Face Trainer, Megatron-LM, DeepSpeed, torchtitan, Lightning; nccl-tests, whose all_reduce, reduce_scatter, all_gather, broadcast, alltoall and sendrecv tests are predicted on --system; and placement tables, placement,local_bsz,step_time,sync_time, calibrated on their one-device rows and predicted per placement on --system for --model) with the simulator's prediction for devices of that kind from the catalogue alone (roofline, no calibration) and with its memory model's largest batch; those of several devices with --system; --device renames what the log names; repeatable"}
}

// measuredFlags are the flags of validate that apply to --measured logs
// alone.
func measuredFlags() []cli.Flag {
	return append([]cli.Flag{measuredSystemFlag(), measuredPrecisionFlag(), measuredCalibrationFlag(), measuredFabricFromFlag(), measuredHostFlag(), deviceFlag(), modelFlag(), measuredPlotFlag(), measuredAllReduceFlag(), measuredP2PDisableFlag()},
		measuredTransportFlags()...)
}

// measuredHostFlag is validate's --host.
func measuredHostFlag() cli.Flag {
	return &cli.StringFlag{Name: "host", Usage: "with --measured: the host costs of the machine that ran the logs, table `FILE` of `scaleplan bench host` (scripts/torchhost.py) run on that machine (with a CUDA device it also measures a small operator's dispatch and launch, cuda_op, a synchronisation, cuda_sync, and a timing event, cuda_event): the operator model charges the measurements' eager PyTorch steps these in place of compute.MeasuredHost and the published launch and synchronisation; the device stays uncalibrated"}
}

// measuredP2PDisableFlag is validate's --nccl-p2p-disable.
func measuredP2PDisableFlag() cli.Flag {
	return &cli.BoolFlag{Name: "nccl-p2p-disable", Usage: "with --measured nccl-tests logs: their tests ran with NCCL_P2P_DISABLE=1, the devices of a node exchanging through host memory by NCCL's shared-memory transport at the node's shm_bandwidth (docs/network-shm.md), not over NVLink or PCIe peer-to-peer"}
}

// measuredAllReduceFlag is validate's --allreduce.
func measuredAllReduceFlag() cli.Flag {
	return &cli.StringFlag{Name: "allreduce", Value: "nccl", Usage: "with --measured nccl-tests logs: the exchange `ALG` the simulator runs for their tests on --system (nccl, the default, as the logs ran: each call as NCCL's tuning model chooses; the others run reduce-scatter and all-gather by ring, or halving-doubling for it, broadcast by ring, or tree for the trees): " + strings.Join(collectiveAlgorithms, ", ")}
}

// collectiveAlgorithms are the exchanges of a scenario that are an
// all-reduce, which --allreduce may name: all but the parameter servers.
var collectiveAlgorithms = slices.DeleteFunc(slices.Clone(scenarios.AllReduceAlgorithms), func(a string) bool { return a == "ps" || a == "async-ps" })

// measuredSystemFlag is validate's --system.
func measuredSystemFlag() cli.Flag {
	return &cli.StringFlag{Name: "system", Usage: "with --measured: the catalogue system `NAME` the logs' measurements of several devices ran on (whole nodes of it, its default transports); without it they are left out"}
}

// measuredTransportFlags are validate's --transport and --intra-transport.
func measuredTransportFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "transport", Usage: "with --measured and a system: the system's transport `NAME` that carried the gradients between nodes (verbs, ipoib, tcp, grpc, ...); default the one a scenario takes (verbs where the system has it)"},
		&cli.StringFlag{Name: "intra-transport", Usage: "with --measured and a system: the system's transport `NAME` that carried the gradients inside a node (nccl, shm, ...); default the one a scenario takes (nccl where the system has it)"},
	}
}

// measuredPrecisionFlag is validate's --precision.
func measuredPrecisionFlag() cli.Flag {
	return &cli.StringFlag{Name: "precision", Usage: "with --measured: the precision `P` of the measurements whose log does not say (Horovod, tf_cnn_benchmarks): " + strings.Join(measuredPrecisionNames(), ", ")}
}

// measuredCalibrationFlag is validate's --calibration.
func measuredCalibrationFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "calibration", Usage: "with --measured: calibration `FILE` written by `scaleplan fit --out`, or published: the measurements whose model, device and precision it measured are predicted by its law in place of the roofline, and those it was fitted to are marked and left out of the error; its fabric entries set the links of the system they name, for nccl-tests' tests and runs on several devices; repeatable"}
}

// measuredPrecisionNames are the precisions a measurement may give: those
// a calibration may, but fp64, which no profile's recipe trains at.
func measuredPrecisionNames() []string {
	return slices.DeleteFunc(scenarios.MeasuredPrecisionNames(), func(n string) bool { return n == "fp64" })
}

// measuredPlotFlag is validate's --plot.
func measuredPlotFlag() cli.Flag {
	return &cli.StringFlag{Name: "plot", Usage: "with --measured: write a throughput chart of each device, model and precision (the measured points, the prediction dotted, the out-of-memory batch) as PNG and SVG into `DIR`"}
}

// runValidateMeasured is `validate --measured FILE...`.
func runValidateMeasured(c *cli.Context, maxErr float64) error {
	cat, prof, err := loadCatalogAndProfiles(c)
	if err != nil {
		return err
	}
	rename, err := deviceRenamer("validate", c.String("device"))
	if err != nil {
		return err
	}
	in := &validate.LogReader{System: c.String("system"), Precision: c.String("precision"),
		Transport: c.String("transport"), IntraTransport: c.String("intra-transport"),
		NCCLP2PDisable: c.Bool("nccl-p2p-disable"), Catalog: cat}
	if c.IsSet("system") {
		if _, err := cat.System(in.System); err != nil {
			return usagef("validate: --system: %v", err)
		}
	}
	if c.IsSet("precision") && !slices.Contains(measuredPrecisionNames(), in.Precision) {
		return usagef("validate: --precision: %s", config.Unknown("precision", in.Precision, measuredPrecisionNames()))
	}
	if in.Host, err = hostTable("validate", c.String("host")); err != nil {
		return err
	}
	lgs, err := readLogs(c.StringSlice("measured"), func(lg *logs.Log) { reportLog(c.App.ErrWriter, "validate", lg) }, rename)
	if err != nil {
		return fmt.Errorf("validate: %w", err)
	}
	lgs, tabs := splitPlacements(lgs)
	var tabErr error // the placement tables' --max-error, returned once the rest is written
	if len(tabs) > 0 {
		if tabErr, err = runValidatePlacements(c, cat, prof, tabs, len(lgs) > 0, maxErr); err != nil {
			return err
		}
		if len(lgs) == 0 {
			return tabErr
		}
		fmt.Fprintln(c.App.Writer)
	}
	if err := runValidateLogs(c, cat, prof, in, lgs, maxErr); err != nil {
		return errors.Join(err, tabErr)
	}
	return tabErr
}

// runValidateLogs is `validate --measured` of the logs lgs other than
// placement tables.
func runValidateLogs(c *cli.Context, cat *hw.Catalog, prof *model.Profiles, in *validate.LogReader, lgs []*logs.Log, maxErr float64) error {
	if err := nameModel("validate", c.String("model"), lgs, prof); err != nil {
		return err
	}
	var ms []validate.Measured
	left := map[string]int{}
	for _, lg := range lgs {
		m, err := in.Measurements(lg, prof, left)
		if err != nil {
			return fmt.Errorf("validate: %w", err)
		}
		ms = append(ms, m...)
	}
	alg := c.String("allreduce")
	algorithm, err := sim.ParseAlgorithm(alg)
	if err != nil || !slices.Contains(collectiveAlgorithms, alg) {
		return usagef("validate: --allreduce %q: want %s", alg, strings.Join(collectiveAlgorithms, ", "))
	}
	colls := in.Collectives(lgs, algorithm, left)
	format := c.String("format")
	if len(colls) > 0 && len(ms) > 0 && (format == "json" || format == "csv") {
		return usagef("validate: --format %s takes the measurements of training logs or the collective tests of nccl-tests logs, not both in one call", format)
	}
	cals, err := scenarios.ReadCalibrationFiles(c.StringSlice("calibration"))
	if err != nil {
		return fmt.Errorf("validate: calibration: %w", err)
	}
	fitted, fabricNotes, err := fabricFrom(c, cat, algorithm)
	if err != nil {
		return err
	}
	var collErr error // the collectives' --max-error, returned once the measurements are written
	if len(colls) > 0 {
		for i := range colls {
			colls[i].Fabric = append(slices.Clone(fitted), cals...)
		}
		comps, err := validate.CompareCollectives(cat, colls)
		if err != nil {
			return fmt.Errorf("validate: %w", err)
		}
		ts, lines := tables.Collectives(comps, left)
		if err := tables.WriteReport(c.App.Writer, format, ts, fabricNotes, lines); err != nil {
			return err
		}
		collErr = collectivesMaxError(c, comps, maxErr)
		if len(ms) == 0 {
			return errors.Join(collErr, fabricUsed(cals, comps))
		}
		fmt.Fprintln(c.App.Writer)
	}
	if len(ms) == 0 {
		return noMeasurements(c.StringSlice("measured"), lgs, left)
	}
	rep, err := validate.CompareCalibrated(ms, cat, prof, cals, predict.Options{Steps: c.Int("steps")})
	if err != nil {
		return fmt.Errorf("validate: %w", err)
	}
	notes, err := measuredCalibrationsUsed(cals, rep)
	if err != nil {
		return err
	}
	ts, lines := tables.Measured(rep, left, len(colls) > 0)
	if err := tables.WriteReport(c.App.Writer, format, ts, notes, lines); err != nil {
		return err
	}
	if dir := c.String("plot"); dir != "" {
		if err := writeMeasuredCharts(c, dir, rep); err != nil {
			return err
		}
	}
	if c.IsSet("max-error") && rep.MAE > maxErr/100 {
		return errors.Join(fmt.Errorf("validate: mean absolute error %.1f%% exceeds --max-error %g%%", 100*rep.MAE, maxErr), collErr)
	}
	return collErr
}

// fabricUsed returns an error naming a calibration file none of whose
// fabric entries applies to the collective tests comps when they are all
// that is validated: a file that applies to nothing is a mistake, as in
// predict. The published figures built in are never refused.
func fabricUsed(cals []scenarios.CalibrationFile, comps []validate.CollectiveComparison) error {
	for _, f := range cals {
		used := f.Path == scenarios.Published || slices.ContainsFunc(comps, func(cp validate.CollectiveComparison) bool {
			return slices.ContainsFunc(cp.Calibrated, func(a scenarios.Applied) bool { return a.Path == f.Path })
		})
		if !used {
			return fmt.Errorf("validate: calibration %s: no fabric entry applies to the collective tests (on %s)", f.Path, comps[0].SystemName)
		}
	}
	return nil
}

// noMeasurements is the error of validate --measured paths whose logs
// lgs hold nothing to compare, with what was left out (left, by reason).
func noMeasurements(paths []string, lgs []*logs.Log, left map[string]int) error {
	var why []string
	for _, w := range tables.LeftReasons() {
		if n := left[w]; n > 0 {
			why = append(why, fmt.Sprintf("%d %s", n, w))
		}
	}
	what := "measurement or out-of-memory record"
	if slices.ContainsFunc(lgs, func(lg *logs.Log) bool { return len(lg.Collectives) > 0 }) {
		what = "measurement, out-of-memory record or collective test"
	}
	msg := fmt.Sprintf("validate: --measured %s: no %s to compare", strings.Join(paths, ", "), what)
	if len(why) > 0 {
		msg += " (left out: " + strings.Join(why, "; ") + ")"
	}
	return errors.New(msg)
}

// collectivesMaxError returns an error when --max-error is set and a
// test's mean absolute error is larger.
func collectivesMaxError(c *cli.Context, comps []validate.CollectiveComparison, maxErr float64) error {
	if !c.IsSet("max-error") {
		return nil
	}
	for _, cp := range comps {
		if cp.MAE > maxErr/100 {
			return fmt.Errorf("validate: %s: mean absolute error %.1f%% of the collective's time exceeds --max-error %g%%", cp.Source, 100*cp.MAE, maxErr)
		}
	}
	return nil
}

// writeMeasuredCharts writes one throughput chart per device, model,
// precision and variant of rep into dir (tables.ThroughputCharts).
func writeMeasuredCharts(c *cli.Context, dir string, rep *validate.MeasuredReport) error {
	var charts []*plots.Chart
	for _, data := range tables.ThroughputCharts(rep) {
		if len(data.Groups) == 0 {
			fmt.Fprintf(c.App.ErrWriter, "validate: no chart of %s: no batch ran\n", data.Subject)
			continue
		}
		ch, err := plots.Throughput(data)
		if err != nil {
			return fmt.Errorf("validate: throughput chart of %s: %w", data.Subject, err)
		}
		charts = append(charts, ch)
	}
	return writeChartFiles(c, "validate", dir, charts)
}

// measuredCalibrationsUsed returns an error naming each calibration file
// whose law computed no measurement of rep, with what the measurements
// needed and what the file has, as predict and plan refuse a calibration
// that applies to nothing. The published calibrations built in are no
// file the user wrote: where none of them applies, it returns a note
// saying that every row is the uncalibrated prediction instead.
func measuredCalibrationsUsed(cals []scenarios.CalibrationFile, rep *validate.MeasuredReport) (notes []string, err error) {
	var need, errs []string
	for _, g := range rep.Groups {
		if n := fmt.Sprintf("%s on %s, %s", g.Model, g.Device, g.Precision); !slices.Contains(need, n) {
			need = append(need, n)
		}
	}
	for i, f := range cals {
		switch {
		case rep.CalibrationsUsed[i]:
		case f.Path == scenarios.Published:
			notes = append(notes, fmt.Sprintf("calibration published: no published figure applies to these measurements (they need: %s), so each row is the uncalibrated prediction", strings.Join(need, "; ")))
		default:
			errs = append(errs, fmt.Sprintf("validate: calibration %s: no throughput entry applies to a measurement (they need: %s; the file has: %s)", f.Path, strings.Join(need, "; "), f.Entries()))
		}
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "\n"))
	}
	return notes, nil
}

// splitPlacements returns the logs of lgs that are not placement tables
// and those that are.
func splitPlacements(lgs []*logs.Log) (rest, tabs []*logs.Log) {
	for _, lg := range lgs {
		if lg.Format == logs.Placements {
			tabs = append(tabs, lg)
		} else {
			rest = append(rest, lg)
		}
	}
	return rest, tabs
}

// runValidatePlacements compares each placement table of tabs with the
// simulator (validate.ComparePlacements) on --system for --model at
// --precision (default fp32), and writes its tables; more says other logs
// follow, whose tables --format json and csv cannot join. It returns
// --max-error's error apart, to be returned once everything is written.
func runValidatePlacements(c *cli.Context, cat *hw.Catalog, prof *model.Profiles, tabs []*logs.Log, more bool, maxErr float64) (maxErrErr, err error) {
	names := make([]string, len(tabs))
	for i, lg := range tabs {
		names[i] = lg.Name
	}
	what := "placement table " + strings.Join(names, ", ")
	switch {
	case !c.IsSet("system"):
		return nil, usagef("validate: --measured %s: name the system it ran on with --system", what)
	case c.String("model") == "":
		return nil, usagef("validate: --measured %s: name its model with --model (a table does not say it): %s", what, strings.Join(prof.ModelNames(), ", "))
	case len(c.StringSlice("calibration")) > 0:
		return nil, usagef("validate: --calibration: a placement table (%s) is calibrated on its own rows of one device, not by a file", what)
	case more && (c.String("format") == "json" || c.String("format") == "csv"):
		return nil, usagef("validate: --format %s takes placement tables or other logs, not both in one call", c.String("format"))
	}
	alg, err := sim.ParseAlgorithm(c.String("allreduce"))
	if err != nil || !slices.Contains(collectiveAlgorithms, c.String("allreduce")) {
		return nil, usagef("validate: --allreduce %q: want %s", c.String("allreduce"), strings.Join(collectiveAlgorithms, ", "))
	}
	for i, lg := range tabs {
		tab := &validate.PlacementTable{Source: lg.Name, Model: c.String("model"), Precision: cmp.Or(c.String("precision"), "fp32"),
			System: c.String("system"), Transport: c.String("transport"), IntraTransport: c.String("intra-transport"),
			Algorithm: alg, Steps: lg.Placements, SimSteps: c.Int("steps")}
		rep, err := validate.ComparePlacements(tab, cat, prof)
		if err != nil {
			return nil, fmt.Errorf("validate: %w", err)
		}
		if i > 0 {
			fmt.Fprintln(c.App.Writer)
		}
		ts, lines := tables.Placements(rep)
		if err := tables.WriteReport(c.App.Writer, c.String("format"), ts, nil, lines); err != nil {
			return nil, err
		}
		if c.IsSet("max-error") && rep.MAE > maxErr/100 && maxErrErr == nil {
			maxErrErr = fmt.Errorf("validate: %s: mean absolute error %.1f%% of the step time exceeds --max-error %g%%", lg.Name, 100*rep.MAE, maxErr)
		}
	}
	return maxErrErr, nil
}
