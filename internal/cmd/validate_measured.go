package cmd

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/fit"
	"scaleplan/internal/benchlog"
	"scaleplan/internal/calib"
	"scaleplan/internal/units"
	"scaleplan/model"
	"scaleplan/plots"
	"scaleplan/predict"
)

// measuredFlag is validate's --measured.
func measuredFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "measured", Usage: "compare the one-device measurements of log `FILE` (any format fit reads: scaleplan bench, engine/torchbench on GPUs, CSV, torchvision, Hugging Face Trainer, Megatron-LM, DeepSpeed) with the simulator's prediction for one device of that kind from the catalogue alone (roofline, no calibration) and with its memory model's largest batch; --device renames what the log names; repeatable"}
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
	logs, err := readLogs(c.StringSlice("measured"), func(lg *fit.Log) { reportLog(c.App.ErrWriter, "validate", lg) }, rename)
	if err != nil {
		return fmt.Errorf("validate: %w", err)
	}
	var ms []predict.Measured
	skipped := 0
	for _, lg := range logs {
		m, n, err := readMeasured(lg, prof)
		if err != nil {
			return fmt.Errorf("validate: %w", err)
		}
		ms = append(ms, m...)
		skipped += n
	}
	if len(ms) == 0 {
		return fmt.Errorf("validate: --measured %s: no measurement or out-of-memory record of one device", strings.Join(c.StringSlice("measured"), ", "))
	}
	rep, err := predict.CompareMeasured(ms, cat, prof, predict.Options{Steps: c.Int("steps")})
	if err != nil {
		return fmt.Errorf("validate: %w", err)
	}
	if err := writeMeasured(c.App.Writer, c.String("format"), rep, skipped); err != nil {
		return err
	}
	if dir := c.String("plot"); dir != "" {
		if err := writeMeasuredCharts(c, dir, rep); err != nil {
			return err
		}
	}
	if c.IsSet("max-error") && rep.MAE > maxErr/100 {
		return fmt.Errorf("validate: mean absolute error %.1f%% exceeds --max-error %g%%", 100*rep.MAE, maxErr)
	}
	return nil
}

// readMeasured takes the one-device measurement and out-of-memory records
// of a log read by fit (any format it reads), and counts the records of
// several devices it leaves out (they need a node and its links, which a
// log does not name). A sentence-pair sample of a model profiled per
// token pair counts as the header's config.seq_len token pairs; the
// header's config.models_info.MODEL.optimizer (torchbench) names the
// optimizer.
func readMeasured(lg *fit.Log, prof *model.Profiles) ([]predict.Measured, int, error) {
	var (
		out     []predict.Measured
		skipped int
		header  benchlog.Record
		err     error
	)
	for i, rec := range lg.Records {
		where := lg.Name
		if i < len(lg.Lines) {
			where = fmt.Sprintf("%s:%d", lg.Name, lg.Lines[i])
		}
		switch rec.Kind {
		case benchlog.KindHeader:
			header = rec
			continue
		case benchlog.KindMeasurement, benchlog.KindOOM:
		default:
			continue
		}
		if rec.Workers > 1 {
			skipped++
			continue
		}
		dev := rec.Device
		if dev == "" && header.Machine != nil {
			dev = header.Machine.DeviceName
		}
		m := predict.Measured{
			Device: dev, Model: rec.Model, Precision: rec.Precision, Batch: rec.Batch,
			SamplesPerSec: rec.Throughput(), PeakMemory: units.Bytes(rec.PeakMemory),
			OOM: rec.Kind == benchlog.KindOOM, Source: where,
			Optimizer: headerOptimizer(header, rec.Model), Variant: calib.RunVariant(rec.Labels),
		}
		if m.Batch == 0 {
			m.Batch = rec.EffectiveGlobalBatch()
		}
		if m.Model == "" || m.Precision == "" || m.Device == "" {
			return nil, 0, fmt.Errorf("%s: a %s record needs model, precision and device (or the header's machine.device_name; --device names it for a log that does not)", where, rec.Kind)
		}
		if rec.Labels[calib.SampleLabel] == "sentence-pair" {
			if m.SampleScale, err = sentenceScale(header, rec.Model, prof); err != nil {
				return nil, 0, fmt.Errorf("%s: %w", where, err)
			}
		}
		out = append(out, m)
	}
	return out, skipped, nil
}

// sentenceScale returns the profile's samples in one sentence pair of
// model: the header's config.seq_len for a model profiled per token pair,
// 1 for one profiled per sentence pair, and an error for any other.
func sentenceScale(header benchlog.Record, name string, prof *model.Profiles) (float64, error) {
	unit, err := prof.SampleUnit(name)
	if err != nil {
		return 0, err
	}
	switch unit {
	case model.Sentence:
		return 1, nil
	case model.Token:
	default:
		return 0, fmt.Errorf("samples are sentence pairs, but %s is profiled per %s", name, cmp.Or(unit, model.Image))
	}
	n, ok := header.Config["seq_len"].(float64)
	if !ok || !(n >= 1) || n != math.Trunc(n) {
		return 0, fmt.Errorf("samples are sentence pairs and %s is profiled per token pair, but the log's header gives no config.seq_len (whole tokens per sentence) to convert them", name)
	}
	return n, nil
}

// headerOptimizer reads the optimizer of model from a torchbench header's
// config.models_info.MODEL.optimizer ("adam lr 1e-4 ...", "sgd lr 0.01
// momentum 0.9 ..."); "" (the default, momentum) when the header does not
// say.
func headerOptimizer(header benchlog.Record, name string) model.Optimizer {
	info, _ := header.Config["models_info"].(map[string]any)
	mi, _ := info[name].(map[string]any)
	s, _ := mi["optimizer"].(string)
	f := strings.Fields(strings.ToLower(s))
	if len(f) == 0 {
		return ""
	}
	switch f[0] {
	case "adam", "adamw":
		return model.Optimizer(f[0])
	case "sgd":
		for _, w := range f[1:] {
			if w == "momentum" {
				return model.Momentum
			}
		}
		return model.SGD
	}
	return ""
}

// writeMeasured prints every measurement against its prediction, then one
// line per device, model, precision and variant with the memory limit. The
// variant column is there when a group has one.
func writeMeasured(w io.Writer, format string, rep *predict.MeasuredReport, skipped int) error {
	variants := slices.ContainsFunc(rep.Groups, func(g predict.MeasuredGroup) bool { return g.Variant != "" })
	// key returns the cells that name a group, in a new slice.
	key := func(device, model, precision, variant string) []string {
		if variants {
			return []string{device, model, precision, variant}
		}
		return []string{device, model, precision}
	}
	rows := &table{Title: "Measured against predicted from the catalogue alone (one device, roofline, no calibration)",
		Header: append(key("device", "model", "precision", "variant"), "batch", "measured (samples/s)", "predicted (samples/s)", "error (%)", "peak memory", "memory model", "source")}
	for _, g := range rep.Groups {
		for _, r := range g.Rows {
			meas, pred, e := "out of memory", "-", "-"
			if !r.OOM {
				meas, pred, e = num(r.SamplesPerSec), num(r.Predicted), signedPct(r.Error())
			}
			peak := "-"
			if r.PeakMemory > 0 {
				peak = r.PeakMemory.Decimal()
			}
			rows.Rows = append(rows.Rows, append(key(g.Device, g.Model, g.Precision, dash(g.Variant)), strconv.Itoa(r.Batch), meas, pred, e, peak, r.Footprint.Decimal(), r.Source))
		}
	}
	title := "Per device, model and precision"
	if variants {
		title = "Per device, model, precision and variant"
	}
	sum := &table{Title: title,
		Header: append(key("device", "model", "precision", "variant"), "batches", "mean absolute error (%)", "error at the largest batch (%)", "largest batch run", "first out of memory", "memory model's largest batch", "within one power of two")}
	for _, g := range rep.Groups {
		mae, last := "-", "-"
		if !math.IsNaN(g.MAE) {
			mae = fmt.Sprintf("%.1f", 100*g.MAE)
		}
		if !math.IsNaN(g.LargestError) {
			last = signedPct(g.LargestError)
		}
		oom, pmax := "-", "unbounded"
		if g.FirstOOM > 0 {
			oom = strconv.Itoa(g.FirstOOM)
		}
		if g.PredictedMax >= 0 {
			pmax = strconv.Itoa(g.PredictedMax)
		}
		agree := "no"
		switch {
		case g.MemoryAgrees() && g.FirstOOM == 0:
			agree = "no limit measured"
		case g.MemoryAgrees():
			agree = "yes"
		}
		sum.Rows = append(sum.Rows, append(key(g.Device, g.Model, g.Precision, dash(g.Variant)), strconv.Itoa(len(g.Rows)), mae, last, strconv.Itoa(g.LargestRun), oom, pmax, agree))
	}
	lines := []string{fmt.Sprintf("mean absolute error of samples/s over %d measurements: %.1f%%", rep.Rows, 100*rep.MAE)}
	if skipped > 0 {
		lines = append(lines, fmt.Sprintf("%d records of several devices left out: they need a node and its links, which a bench log does not name", skipped))
	}
	lines = append(lines, "the memory model's largest batch agrees when it lies between half the largest batch that ran and twice the first that ran out of memory; with no out-of-memory record there is no limit to check it against")
	if format == "json" || format == "csv" {
		s := &table{Header: []string{"summary"}}
		for _, l := range lines {
			s.Rows = append(s.Rows, []string{l})
		}
		return writeTables(w, format, []namedTable{{"measurements", rows}, {"groups", sum}, {"summary", s}})
	}
	if err := rows.write(w, format); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := sum.write(w, format); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, l := range lines {
		fmt.Fprintf(w, "%s%s\n", mdBullet(format), l)
	}
	return nil
}

// writeMeasuredCharts writes one throughput chart per group of rep into
// dir: the measured samples/s with the law fitted to them, the prediction
// through the same batches, and the first batch that ran out of memory.
func writeMeasuredCharts(c *cli.Context, dir string, rep *predict.MeasuredReport) error {
	var charts []*plots.Chart
	for _, g := range rep.Groups {
		tg := plots.ThroughputGroup{Name: "1 device"}
		for _, r := range g.Rows {
			if r.OOM {
				continue
			}
			b := float64(r.Batch)
			tg.Points = append(tg.Points, plots.ThroughputPoint{Batch: b, Throughput: r.SamplesPerSec})
			tg.Predicted = append(tg.Predicted, plots.ThroughputPoint{Batch: b, Throughput: r.Predicted})
		}
		if g.FirstOOM > 0 {
			tg.OOM = []float64{float64(g.FirstOOM)}
		}
		subject := strings.TrimSpace(fmt.Sprintf("%s %s %s %s", g.Model, g.Device, g.Precision, g.Variant))
		if len(tg.Points) == 0 {
			fmt.Fprintf(c.App.ErrWriter, "validate: no chart of %s: no batch ran\n", subject)
			continue
		}
		// The law fitted to the measurements, as fit draws it, where it fits.
		bs, vs := make([]float64, len(tg.Points)), make([]float64, len(tg.Points))
		for i, p := range tg.Points {
			bs[i], vs[i] = p.Batch, p.Throughput
		}
		if f, err := fit.Throughput(bs, vs, nil); err == nil {
			tg.Fit = f
			for i := range tg.Points {
				tg.Points[i].Excluded = f.Excluded[i]
			}
		}
		ch, err := plots.Throughput(plots.ThroughputData{Subject: subject, Groups: []plots.ThroughputGroup{tg},
			PredictedLabel: "predicted from the catalogue (no calibration)"})
		if err != nil {
			return fmt.Errorf("validate: throughput chart of %s: %w", subject, err)
		}
		charts = append(charts, ch)
	}
	bar := newBar(c, "validate: charts", len(charts))
	paths, err := writeCharts(dir, charts, bar)
	bar.Done()
	for _, p := range paths {
		fmt.Fprintf(c.App.ErrWriter, "validate: wrote %s\n", p)
	}
	if err != nil {
		return fmt.Errorf("validate: %w", err)
	}
	return nil
}
