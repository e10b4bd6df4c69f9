package logs

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"scaleplan/internal/benchlog"
	"scaleplan/internal/units"
)

// CSV column names, after lower-casing and turning spaces and dashes into
// underscores. A unit in parentheses or brackets after a step-time name,
// "step_time (ms)", scales plain numbers; a cell may also carry its own
// unit, "54 ms". Other columns become labels.
var csvColumns = map[string][]string{
	"batch":           {"batch", "batch_size", "per_device_batch", "per_device_batch_size", "per_device_train_batch_size", "batch_per_device", "local_batch", "micro_batch", "micro_batch_size", "bs"},
	"global_batch":    {"global_batch", "global_batch_size", "total_batch", "total_batch_size", "effective_batch_size"},
	"accumulation":    {"accumulation", "accumulation_steps", "gradient_accumulation_steps", "grad_accum", "accumulate", "iter_size"},
	"devices":         {"devices", "num_devices", "n_devices", "device_count", "gpus", "num_gpus", "n_gpus", "ngpus", "gpu_count", "workers", "world_size", "ranks"},
	"samples_per_s":   {"samples_per_s", "samples_per_sec", "samples_per_second", "samples/s", "samples/sec", "throughput", "img/s", "img/sec", "images/s", "images/sec", "images_per_sec", "images_per_second", "img_per_sec", "examples_per_sec", "examples_per_second", "sequences_per_second"},
	"step_time":       {"step_time", "step_time_s", "step_s", "time_per_step", "sec_per_step", "seconds_per_step"},
	"step_time_ms":    {"step_time_ms", "step_ms", "time_per_step_ms"},
	"steps_to_target": {"steps_to_target"},
	"reached":         {"reached"},
	"accuracy":        {"accuracy", "acc", "eval_accuracy"},
	"target":          {"target"},
	"model":           {"model"},
	"device":          {"device", "device_kind", "accelerator"},
	"precision":       {"precision", "dtype"},
}

// csvAgreement is how far apart, as a fraction, a row's samples_per_s and
// its global batch over step_time may be: a log that takes one as the mean
// of per-step figures and the other from the mean step differs by the
// steps' scatter, a few per cent at most for a steady run, while a speed
// per device beside the step of all of them differs by the device count.
const csvAgreement = 0.05

var errOneColumn = errors.New("csv header has one column")

// csvHeader maps the columns of a CSV header.
type csvHeader struct {
	sep      byte           // ',', ';' or '\t'
	names    []string       // normalized column names
	col      map[string]int // canonical name → column index
	stepUnit float64        // seconds per plain step-time number
}

// parseHeader reads a header line. It must name a batch column (batch or
// global_batch) and a samples_per_s, step_time or steps_to_target column.
func parseHeader(line string) (*csvHeader, error) {
	h := &csvHeader{sep: ',', col: map[string]int{}, stepUnit: 1}
	best := strings.Count(line, ",")
	for _, c := range []byte{';', '\t'} {
		if n := strings.Count(line, string(c)); n > best {
			h.sep, best = c, n
		}
	}
	if best == 0 {
		return nil, errOneColumn
	}
	fields, err := splitCSV(line, rune(h.sep))
	if err != nil {
		return nil, fmt.Errorf("csv header: %w", err)
	}
	if err := h.columns(fields); err != nil {
		return nil, err
	}
	if i, ok := h.col["step_time_ms"]; ok {
		if _, both := h.col["step_time"]; both {
			return nil, errors.New("csv header: two step-time columns")
		}
		h.col["step_time"] = i
		delete(h.col, "step_time_ms")
	}
	if err := h.required(line); err != nil {
		return nil, err
	}
	return h, nil
}

// columns finds the canonical columns among a header's fields, and the
// unit of its step time.
func (h *csvHeader) columns(fields []string) error {
	canon := map[string]string{}
	for c, aliases := range csvColumns {
		for _, a := range aliases {
			canon[a] = c
		}
	}
	for i, f := range fields {
		name, unit := normalizeColumn(f)
		h.names = append(h.names, name)
		c, ok := canon[name]
		if !ok {
			continue
		}
		if _, dup := h.col[c]; dup {
			return fmt.Errorf("csv header: columns %s and %s both give %s", quote(fields[h.col[c]]), quote(f), c)
		}
		h.col[c] = i
		switch {
		case c == "step_time_ms":
			h.stepUnit = 1e-3
		case c == "step_time" && unit != "":
			u, err := units.ParseSeconds("1 " + unit)
			if err != nil {
				return fmt.Errorf("csv header: column %s: %w", quote(f), err)
			}
			h.stepUnit = float64(u)
		}
	}
	return nil
}

// required returns an error for a header without a batch column or a
// column of speed or steps.
func (h *csvHeader) required(line string) error {
	_, b := h.col["batch"]
	_, g := h.col["global_batch"]
	_, v := h.col["samples_per_s"]
	_, t := h.col["step_time"]
	_, s := h.col["steps_to_target"]
	if !b && !g {
		return fmt.Errorf("csv header %s: no batch column (want one of %s)", quote(line), strings.Join(append(csvColumns["batch"][:2:2], csvColumns["global_batch"][:2]...), ", "))
	}
	if !v && !t && !s {
		return fmt.Errorf("csv header %s: no samples_per_s, step_time or steps_to_target column", quote(line))
	}
	return nil
}

// normalizeColumn lower-cases a header cell, turns spaces and dashes into
// underscores and splits off a unit in parentheses or brackets.
func normalizeColumn(f string) (name, unit string) {
	f = strings.ToLower(strings.TrimSpace(f))
	if i := strings.IndexAny(f, "(["); i > 0 && (strings.HasSuffix(f, ")") || strings.HasSuffix(f, "]")) {
		unit = strings.TrimSpace(f[i+1 : len(f)-1])
		f = strings.TrimSpace(f[:i])
	}
	f = strings.NewReplacer(" ", "_", "-", "_").Replace(f)
	return f, unit
}

// splitRow returns the cells of a row in dst[:0]: a row without quotes is
// split at its separators, others are read as CSV (in a new slice).
func splitRow(dst []string, line string, sep byte) ([]string, error) {
	if strings.IndexByte(line, '"') >= 0 {
		return splitCSV(line, rune(sep))
	}
	return appendSplit(dst[:0], line, sep), nil
}

// appendSplit appends the fields of s between the separators sep to dst.
func appendSplit(dst []string, s string, sep byte) []string {
	for {
		i := strings.IndexByte(s, sep)
		if i < 0 {
			return append(dst, s)
		}
		dst = append(dst, s[:i])
		s = s[i+1:]
	}
}

func splitCSV(line string, sep rune) ([]string, error) {
	r := csv.NewReader(strings.NewReader(line))
	r.Comma = sep
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	rec, err := r.Read()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, pe.Err
		}
		return nil, err
	}
	return rec, nil
}

// readCSV reads rows under a header, line by line from lr. A row with
// steps_to_target is a convergence record; other rows are measurements.
// batch is the batch per device and devices defaults to 1; global_batch,
// when absent, is batch × devices, and when given without batch beside a
// devices column it must divide by the devices. Lines starting with # are
// comments. Past AggregateRows measurement rows, rows are merged into one
// measurement per configuration and batch (csvRows).
func readCSV(lr *lineReader, lg *Log) error {
	var h *csvHeader
	var rows csvRows
	for {
		l, ok := lr.next()
		if !ok {
			break
		}
		t := bytes.TrimSpace(l)
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		s := string(t)
		if h == nil {
			var err error
			if h, err = parseHeader(s); err != nil {
				return fmt.Errorf("%s: %w", lg.Name, err)
			}
			continue
		}
		rec, err := h.record(s)
		if err == nil {
			err = rec.Validate()
		}
		if err == nil {
			err = checkBounds(&rec)
		}
		if err != nil {
			lg.malformed(lr.n, t, err)
			continue
		}
		rows.add(lg, rec, lr.n)
	}
	if lr.err != nil {
		return lr.err
	}
	if h == nil {
		return fmt.Errorf("%s: %w in %s: want %s", lg.Name, ErrNoRecords, CSV.Describe(), CSV.expect())
	}
	rows.flush(lg)
	return nil
}

// csvRows keeps the measurement rows of a CSV one by one up to
// AggregateRows, and past it merges them all into one measurement per
// configuration and batch, whose throughput is the mean of its rows': a
// file of ten million rows is then held as a few records.
type csvRows struct {
	kept   int            // measurement rows added to the log one by one
	index  map[string]int // key → aggs; nil until the rows are merged
	aggs   []csvAgg
	merged int // rows merged
	key    []byte
}

// csvAgg is the measurement rows of one configuration and batch.
type csvAgg struct {
	rec  benchlog.Record // the first row's, its speed then replaced by the mean
	line int             // the first row's line
	n    int             // rows
	sum  float64         // of their throughputs, samples/s
}

// add takes a row's record, valid and within the bounds of checkBounds,
// into lg, or into its configuration's aggregate past AggregateRows.
func (c *csvRows) add(lg *Log, rec benchlog.Record, line int) {
	if rec.Kind != benchlog.KindMeasurement {
		lg.appendRecord(rec, line)
		return
	}
	if c.index == nil && c.kept < AggregateRows {
		c.kept++
		lg.appendRecord(rec, line)
		return
	}
	if c.index == nil {
		c.index = map[string]int{}
		keep := 0
		for i, r := range lg.Records {
			if r.Kind == benchlog.KindMeasurement {
				c.merge(lg, r, lg.Lines[i])
				continue
			}
			lg.Records[keep], lg.Lines[keep] = r, lg.Lines[i]
			keep++
		}
		lg.Records, lg.Lines = slices.Clip(lg.Records[:keep]), slices.Clip(lg.Lines[:keep])
	}
	c.merge(lg, rec, line)
}

// merge adds a measurement row to its configuration's aggregate.
func (c *csvRows) merge(lg *Log, rec benchlog.Record, line int) {
	c.key = recordKey(c.key[:0], &rec)
	i, ok := c.index[string(c.key)]
	if !ok {
		if len(c.aggs)+len(lg.Records) >= MaxRecords {
			lg.over = true
			return
		}
		i = len(c.aggs)
		c.index[string(c.key)] = i
		c.aggs = append(c.aggs, csvAgg{rec: rec, line: line})
	}
	a := &c.aggs[i]
	a.n++
	a.sum += rec.Throughput()
	c.merged++
}

// flush adds the aggregates to lg, in the order of their first lines
// among its other records, and notes the merge.
func (c *csvRows) flush(lg *Log) {
	if c.index == nil {
		return
	}
	for _, a := range c.aggs {
		r := a.rec
		r.SamplesPerSec, r.StepTime, r.StepTimeStd = a.sum/float64(a.n), 0, 0
		lg.Records = append(lg.Records, r)
		lg.Lines = append(lg.Lines, a.line)
	}
	idx := make([]int, len(lg.Records))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int { return cmp.Compare(lg.Lines[i], lg.Lines[j]) })
	recs, lines := make([]benchlog.Record, len(idx)), make([]int, len(idx))
	for k, i := range idx {
		recs[k], lines[k] = lg.Records[i], lg.Lines[i]
	}
	lg.Records, lg.Lines = recs, lines
	lg.notef("%d measurement rows (more than %d) merged into %d measurements, one per configuration and batch at the mean throughput of its rows, each at the line of its first row; the outlier and lack-of-fit tests see these means", c.merged, AggregateRows, len(c.aggs))
}

// recordKey appends to b what identifies a measurement's configuration:
// every field but its speed, and its labels.
func recordKey(b []byte, r *benchlog.Record) []byte {
	for _, s := range []string{r.Model, r.Device, r.Precision, r.Transport, r.Run} {
		b = append(append(b, s...), 0)
	}
	for _, n := range []int{r.Workers, r.Batch, r.GlobalBatch, r.Accumulate} {
		b = append(strconv.AppendInt(b, int64(n), 10), 0)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Labels)) {
		b = append(append(append(append(b, k...), '='), r.Labels[k]...), 0)
	}
	return b
}

// record turns one row into a record.
func (h *csvHeader) record(line string) (benchlog.Record, error) {
	cells, err := splitRow(nil, line, h.sep)
	if err != nil {
		return benchlog.Record{}, err
	}
	if len(cells) != len(h.names) {
		return benchlog.Record{}, fmt.Errorf("have %d fields, want %d", len(cells), len(h.names))
	}
	row := csvRow{h: h, cells: cells}
	f, err := row.figures()
	if err != nil {
		return benchlog.Record{}, err
	}
	stepTime, err := row.stepTime()
	if err != nil {
		return benchlog.Record{}, err
	}
	if err := f.devicesAndBatches(); err != nil {
		return benchlog.Record{}, err
	}
	r := benchlog.Record{
		Model: row.cell("model"), Device: row.cell("device"), Precision: row.cell("precision"),
		Workers: f.devices, Batch: f.batch, GlobalBatch: f.global, Labels: row.labels(),
	}
	if f.accum > 1 {
		r.Accumulate = f.accum
	}
	if _, ok := h.col["steps_to_target"]; ok && row.cell("steps_to_target") != "" {
		return r, row.convergence(&r, f)
	}
	if err := row.agree(f, stepTime); err != nil {
		return r, err
	}
	r.Kind = benchlog.KindMeasurement
	r.SamplesPerSec = f.samples
	r.StepTime = stepTime
	return r, nil
}

// csvRow is a row of a CSV log, split into its cells.
type csvRow struct {
	h     *csvHeader
	cells []string
}

// cell returns the cell of canonical column c; "" where the log has none.
func (row csvRow) cell(c string) string {
	if i, ok := row.h.col[c]; ok {
		return strings.TrimSpace(row.cells[i])
	}
	return ""
}

// num returns the number >= 0 in column c; 0 for an empty cell.
func (row csvRow) num(c string) (float64, error) {
	s := row.cell(c)
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%s %s: want a number >= 0", c, quote(s))
	}
	return v, nil
}

// integer returns the whole number in column c, up to 2^31; 0 for an
// empty cell.
func (row csvRow) integer(c string) (int, error) {
	v, err := row.num(c)
	if err != nil {
		return 0, err
	}
	if v != math.Trunc(v) || v > maxCount {
		return 0, fmt.Errorf("%s %s: want a whole number up to 2^31", c, quote(row.cell(c)))
	}
	return int(v), nil
}

// csvFigures are the numbers of a row; 0 where its cell is empty.
type csvFigures struct {
	batch, global, devices, accum, steps int
	samples, acc, target                 float64
}

// figures returns the numbers of the row. An empty cell is a column the
// row does not give; a zero in a column of counts or speeds is a value
// no measurement has.
func (row csvRow) figures() (csvFigures, error) {
	var f csvFigures
	var errs []error
	get := func(dst *int, c string) {
		v, err := row.integer(c)
		errs = append(errs, err)
		*dst = v
	}
	getf := func(dst *float64, c string) {
		v, err := row.num(c)
		errs = append(errs, err)
		*dst = v
	}
	get(&f.batch, "batch")
	get(&f.global, "global_batch")
	get(&f.devices, "devices")
	get(&f.accum, "accumulation")
	get(&f.steps, "steps_to_target")
	getf(&f.samples, "samples_per_s")
	getf(&f.acc, "accuracy")
	getf(&f.target, "target")
	if err := oneLine(errs); err != nil {
		return f, err
	}
	errs = nil
	for _, z := range []struct {
		col string
		v   float64
	}{{"batch", float64(f.batch)}, {"global_batch", float64(f.global)}, {"devices", float64(f.devices)}, {"accumulation", float64(f.accum)}, {"steps_to_target", float64(f.steps)}, {"samples_per_s", f.samples}} {
		if z.v == 0 && row.cell(z.col) != "" {
			errs = append(errs, fmt.Errorf("%s %s: want a number > 0", z.col, quote(row.cell(z.col))))
		}
	}
	return f, oneLine(errs)
}

// stepTime returns the row's step time, seconds: a number in the
// header's unit, or a time with its unit ("85 ms"); 0 for none.
func (row csvRow) stepTime() (float64, error) {
	s := row.cell("step_time")
	if s == "" {
		return 0, nil
	}
	var stepTime float64
	if _, err := strconv.ParseFloat(s, 64); err != nil && strings.IndexFunc(s, func(r rune) bool { return r >= 'a' && r <= 'z' || r == 'µ' }) >= 0 {
		t, err := units.ParseSeconds(s)
		if err != nil {
			return 0, fmt.Errorf("step_time: %w", err)
		}
		stepTime = float64(t)
	} else {
		v, err := row.num("step_time")
		if err != nil {
			return 0, err
		}
		stepTime = scale(v, row.h.stepUnit)
	}
	if stepTime == 0 {
		return 0, fmt.Errorf("step_time %s: want a time > 0", quote(s))
	}
	return stepTime, nil
}

// devicesAndBatches fills in the batch per device from a global batch
// beside a device count and accumulation (it must be whole), one device
// and one micro-batch a step where the row gives none, and the global
// batch from the batch per device. A global batch larger than the batch
// per device times the devices, without an accumulation column, is
// gradient accumulation: the micro-batches a step are their quotient (it
// must be whole). A global batch that is not batch × devices ×
// accumulation is an error.
func (f *csvFigures) devicesAndBatches() error {
	if f.batch == 0 && f.global > 0 && f.devices > 0 {
		per := f.devices * max(f.accum, 1)
		if f.global%per != 0 {
			return fmt.Errorf("global_batch %d is not a multiple of devices %d × accumulation %d: want a whole batch per device (or give the batch column)", f.global, f.devices, max(f.accum, 1))
		}
		f.batch = f.global / per
	}
	if f.devices == 0 {
		f.devices = 1
	}
	per := f.batch * f.devices
	if f.accum == 0 && f.global > per && per > 0 {
		if f.global%per != 0 {
			return fmt.Errorf("global_batch %d is not a whole number of steps of batch %d on %d devices: want global_batch = batch × devices × accumulation", f.global, f.batch, f.devices)
		}
		f.accum = f.global / per
	}
	f.accum = max(f.accum, 1)
	if f.global == 0 {
		f.global = per * f.accum
	}
	if f.batch > 0 && f.global != per*f.accum {
		return fmt.Errorf("global_batch %d is not batch %d × devices %d × accumulation %d = %d", f.global, f.batch, f.devices, f.accum, per*f.accum)
	}
	return nil
}

// labels returns the row's cells of the columns that are no canonical
// column, by their names; nil for none.
func (row csvRow) labels() map[string]string {
	var labels map[string]string
	for i, name := range row.h.names {
		if _, known := canonOf(row.h, i); known {
			continue
		}
		if v := strings.TrimSpace(row.cells[i]); v != "" && name != "" {
			if labels == nil {
				labels = map[string]string{}
			}
			labels[name] = v
		}
	}
	return labels
}

// convergence makes r the row's convergence record.
func (row csvRow) convergence(r *benchlog.Record, f csvFigures) error {
	r.Kind = benchlog.KindConvergence
	r.StepsToTarget = f.steps
	r.Reached = true
	if s := strings.ToLower(row.cell("reached")); s != "" {
		switch s {
		case "true", "yes", "1", "y":
		case "false", "no", "0", "n":
			r.Reached = false
		default:
			return fmt.Errorf("reached %s: want true or false", quote(row.cell("reached")))
		}
	}
	r.Accuracy, r.Target = fraction(f.acc), fraction(f.target)
	return nil
}

// agree returns an error where a row gives both a throughput and a step
// time, and they disagree by more than csvAgreement: the usual
// disagreement is a throughput per device beside the step time of the
// whole batch.
func (row csvRow) agree(f csvFigures, stepTime float64) error {
	if !(f.samples > 0 && stepTime > 0 && f.global > 0) {
		return nil
	}
	implied := float64(f.global) / stepTime
	if !(math.Abs(f.samples/implied-1) > csvAgreement) {
		return nil
	}
	hint := "give one of the two"
	if f.devices > 1 {
		hint += fmt.Sprintf(", or the samples/s of all %d devices", f.devices)
	}
	return fmt.Errorf("samples_per_s %s and step_time %v disagree by more than %g%%: a global batch of %d in %v is %.4g samples/s (%s)",
		row.cell("samples_per_s"), units.Seconds(stepTime), 100*csvAgreement, f.global, units.Seconds(stepTime), implied, hint)
}

// canonOf reports the canonical name of column i, if it has one.
func canonOf(h *csvHeader, i int) (string, bool) {
	for c, j := range h.col {
		if j == i {
			return c, true
		}
	}
	return "", false
}

// scale returns v·unit, dividing by 1/unit for units below one so that
// 116.2 ms is 0.1162 s and not 0.11620000000000001 s.
func scale(v, unit float64) float64 {
	if d := math.Round(1 / unit); unit < 1 && d*unit == 1 {
		return v / d
	}
	return v * unit
}

// fraction reads an accuracy: values in (1, 100] are percent, divided by
// 100 and rounded to 12 significant digits.
func fraction(v float64) float64 {
	if v > 1 && v <= 100 {
		f, _ := strconv.ParseFloat(strconv.FormatFloat(v/100, 'g', 12, 64), 64)
		return f
	}
	return v
}
