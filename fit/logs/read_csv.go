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
	sep      rune
	names    []string       // normalized column names
	col      map[string]int // canonical name → column index
	stepUnit float64        // seconds per plain step-time number
}

// parseHeader reads a header line. It must name a batch column (batch or
// global_batch) and a samples_per_s, step_time or steps_to_target column.
func parseHeader(line string) (*csvHeader, error) {
	h := &csvHeader{sep: ',', col: map[string]int{}, stepUnit: 1}
	best := strings.Count(line, ",")
	for _, r := range []rune{';', '\t'} {
		if n := strings.Count(line, string(r)); n > best {
			h.sep, best = r, n
		}
	}
	if best == 0 {
		return nil, errOneColumn
	}
	fields, err := splitCSV(line, h.sep)
	if err != nil {
		return nil, fmt.Errorf("csv header: %w", err)
	}
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
			return nil, fmt.Errorf("csv header: columns %s and %s both give %s", quote(fields[h.col[c]]), quote(f), c)
		}
		h.col[c] = i
		switch {
		case c == "step_time_ms":
			h.stepUnit = 1e-3
		case c == "step_time" && unit != "":
			u, err := units.ParseSeconds("1 " + unit)
			if err != nil {
				return nil, fmt.Errorf("csv header: column %s: %w", quote(f), err)
			}
			h.stepUnit = float64(u)
		}
	}
	if i, ok := h.col["step_time_ms"]; ok {
		if _, both := h.col["step_time"]; both {
			return nil, errors.New("csv header: two step-time columns")
		}
		h.col["step_time"] = i
		delete(h.col, "step_time_ms")
	}
	_, b := h.col["batch"]
	_, g := h.col["global_batch"]
	_, v := h.col["samples_per_s"]
	_, t := h.col["step_time"]
	_, s := h.col["steps_to_target"]
	if !b && !g {
		return nil, fmt.Errorf("csv header %s: no batch column (want one of %s)", quote(line), strings.Join(append(csvColumns["batch"][:2:2], csvColumns["global_batch"][:2]...), ", "))
	}
	if !v && !t && !s {
		return nil, fmt.Errorf("csv header %s: no samples_per_s, step_time or steps_to_target column", quote(line))
	}
	return h, nil
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

// split returns the cells of a row: a row without quotes is split at
// its separators, others are read as CSV.
func (h *csvHeader) split(line string) ([]string, error) {
	if !strings.Contains(line, `"`) {
		return strings.Split(line, string(h.sep)), nil
	}
	return splitCSV(line, h.sep)
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

func (c *csvRows) add(lg *Log, rec benchlog.Record, line int) {
	if rec.Kind != benchlog.KindMeasurement {
		lg.add(rec, line)
		return
	}
	if c.index == nil && c.kept < AggregateRows {
		c.kept++
		lg.add(rec, line)
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
	var r benchlog.Record
	cells, err := h.split(line)
	if err != nil {
		return r, err
	}
	if len(cells) != len(h.names) {
		return r, fmt.Errorf("have %d fields, want %d", len(cells), len(h.names))
	}
	cell := func(c string) string {
		if i, ok := h.col[c]; ok {
			return strings.TrimSpace(cells[i])
		}
		return ""
	}
	num := func(c string) (float64, error) {
		s := cell(c)
		if s == "" {
			return 0, nil
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return 0, fmt.Errorf("%s %s: want a number >= 0", c, quote(s))
		}
		return v, nil
	}
	integer := func(c string) (int, error) {
		v, err := num(c)
		if err != nil {
			return 0, err
		}
		if v != math.Trunc(v) || v > maxCount {
			return 0, fmt.Errorf("%s %s: want a whole number up to 2^31", c, quote(cell(c)))
		}
		return int(v), nil
	}
	var errs []error
	get := func(dst *int, c string) {
		v, err := integer(c)
		errs = append(errs, err)
		*dst = v
	}
	getf := func(dst *float64, c string) {
		v, err := num(c)
		errs = append(errs, err)
		*dst = v
	}
	var batch, global, devices, steps int
	var samples, acc, target float64
	get(&batch, "batch")
	get(&global, "global_batch")
	get(&devices, "devices")
	get(&steps, "steps_to_target")
	getf(&samples, "samples_per_s")
	getf(&acc, "accuracy")
	getf(&target, "target")
	if err := oneLine(errs); err != nil {
		return r, err
	}
	// An empty cell is a column this row does not give; a zero in a
	// column of counts or speeds is a value no measurement has.
	errs = nil
	for _, z := range []struct {
		col string
		v   float64
	}{{"batch", float64(batch)}, {"global_batch", float64(global)}, {"devices", float64(devices)}, {"steps_to_target", float64(steps)}, {"samples_per_s", samples}} {
		if z.v == 0 && cell(z.col) != "" {
			errs = append(errs, fmt.Errorf("%s %s: want a number > 0", z.col, quote(cell(z.col))))
		}
	}
	if err := oneLine(errs); err != nil {
		return r, err
	}
	var stepTime float64
	if s := cell("step_time"); s != "" {
		if _, err := strconv.ParseFloat(s, 64); err != nil && strings.IndexFunc(s, func(r rune) bool { return r >= 'a' && r <= 'z' || r == 'µ' }) >= 0 {
			t, err := units.ParseSeconds(s)
			if err != nil {
				return r, fmt.Errorf("step_time: %w", err)
			}
			stepTime = float64(t)
		} else {
			v, err := num("step_time")
			if err != nil {
				return r, err
			}
			stepTime = scale(v, h.stepUnit)
		}
		if stepTime == 0 {
			return r, fmt.Errorf("step_time %s: want a time > 0", quote(s))
		}
	}
	if batch == 0 && global > 0 && devices > 0 {
		// A global batch beside a device count gives the batch per
		// device, which must be whole.
		if global%devices != 0 {
			return r, fmt.Errorf("global_batch %d is not a multiple of devices %d: want a whole batch per device (or give the batch column)", global, devices)
		}
		batch = global / devices
	}
	if devices == 0 {
		devices = 1
	}
	if global == 0 {
		global = batch * devices
	}
	r = benchlog.Record{
		Model: cell("model"), Device: cell("device"), Precision: cell("precision"),
		Workers: devices, Batch: batch, GlobalBatch: global,
	}
	for i, name := range h.names {
		if _, known := canonOf(h, i); known {
			continue
		}
		if v := strings.TrimSpace(cells[i]); v != "" && name != "" {
			if r.Labels == nil {
				r.Labels = map[string]string{}
			}
			r.Labels[name] = v
		}
	}
	if _, ok := h.col["steps_to_target"]; ok && cell("steps_to_target") != "" {
		r.Kind = benchlog.KindConvergence
		r.StepsToTarget = steps
		r.Reached = true
		if s := strings.ToLower(cell("reached")); s != "" {
			switch s {
			case "true", "yes", "1", "y":
			case "false", "no", "0", "n":
				r.Reached = false
			default:
				return r, fmt.Errorf("reached %s: want true or false", quote(cell("reached")))
			}
		}
		r.Accuracy, r.Target = fraction(acc), fraction(target)
		return r, nil
	}
	if samples > 0 && stepTime > 0 && global > 0 {
		// A row that gives both must give the same speed: the usual
		// disagreement is a throughput per device beside the step time
		// of the whole batch.
		if implied := float64(global) / stepTime; math.Abs(samples/implied-1) > csvAgreement {
			hint := "give one of the two"
			if devices > 1 {
				hint += fmt.Sprintf(", or the samples/s of all %d devices", devices)
			}
			return r, fmt.Errorf("samples_per_s %s and step_time %v disagree by more than %g%%: a global batch of %d in %v is %.4g samples/s (%s)",
				cell("samples_per_s"), units.Seconds(stepTime), 100*csvAgreement, global, units.Seconds(stepTime), implied, hint)
		}
	}
	r.Kind = benchlog.KindMeasurement
	r.SamplesPerSec = samples
	r.StepTime = stepTime
	return r, nil
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
