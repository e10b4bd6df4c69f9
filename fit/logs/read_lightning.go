package logs

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"scaleplan/internal/benchlog"
	"scaleplan/internal/units"
)

// Columns of a PyTorch Lightning metrics.csv (its CSVLogger) that the
// ThroughputMonitor callback (lightning.pytorch.callbacks, Lightning 2.1
// and later) logs for the training stage, "train" joined to its keys by
// the callback's separator, "/".
const (
	// plTime, plBatches and plSamples are cumulative from the start of
	// training on one device: seconds (validation taken out), batches and
	// samples. They are logged from the first batch on.
	plTime    = "train/time"
	plBatches = "train/batches"
	plSamples = "train/samples"
	// plDeviceRate is the samples/s of one device over the callback's
	// window of recent batches (window_size, default 100); it is logged
	// once the window is full.
	plDeviceRate = "train/device/samples_per_sec"
	// plRate is plDeviceRate times the world size; the callback logs it
	// only with more than one device.
	plRate = "train/samples_per_sec"
)

// isLightningHeader reports whether line is the header of a Lightning
// metrics.csv with the ThroughputMonitor's cumulative columns.
func isLightningHeader(line string) bool {
	fields, err := splitCSV(line, ',')
	return err == nil && lightningColumns(fields)
}

// lightningColumns reports whether a header's fields hold the
// ThroughputMonitor's cumulative columns.
func lightningColumns(fields []string) bool {
	return slices.Contains(fields, plTime) && slices.Contains(fields, plBatches) && slices.Contains(fields, plSamples)
}

// plRow is one row's ThroughputMonitor figures, each −1 where the row has
// none.
type plRow struct {
	line                   int
	text                   []byte
	time, batches, samples float64 // cumulative, one device
	deviceRate, rate       float64 // samples/s
}

// readLightning reads a PyTorch Lightning metrics.csv written by its
// CSVLogger with the ThroughputMonitor callback:
//
//	epoch,step,train/time,train/batches,train/samples,train/device/batches_per_sec,train/device/samples_per_sec,train/batches_per_sec,train/samples_per_sec,train_loss
//	0,99,10.92,100,6400,9.95,636.8,39.8,2547.2,
//	0,99,,,,,,,,2.31
//
// The rows are sparse: each holds what one call of the logger logged (the
// callback's figures, the model's own metrics, validation's). A run is one
// training: a file holds one, and a row whose cumulative batches fall
// below the last row's starts another. Each run gives one measurement
// record, over the rows from the first one with a samples/s of one device
// (the callback's window full: the first window_size batches, where
// compilation and warm-up fall, are left out) to the last one with the
// cumulative columns: samples/s of one device the samples over the
// seconds between them, times the world size (the ratio of the logged
// samples/s of all devices to one's; 1 where the callback logs none, as
// it does for one device); the step time the seconds over the batches
// between them; the batch per device the cumulative samples over the
// cumulative batches. A run whose window never filled gives no record,
// and a note says so. The file names no model, precision or device
// (--device names it).
//
// The model's own metrics have the names it logs them under; one column
// whose name, lower-cased, starts with "val" and holds "acc" (val_acc,
// val/accuracy) is read as its validation accuracy (a fraction, or a
// percentage above 1), each value after the optimizer steps of its row's
// step column plus one (Lightning logs validation before it counts the
// batch that stepped last). A run with such evaluations is also a
// training run (Log.Runs) whose evaluations give steps to a target
// (fit.Options.Target). Several such columns (val_acc_step and val_acc_epoch)
// are none, with a note.
func readLightning(data []byte, lg *Log) {
	p := &plReader{lg: lg}
	lines(data, p.line)
	p.flush()
}

// plReader is the state of readLightning: the header's columns and the
// run it is in.
type plReader struct {
	lg        *Log
	col       map[string]int
	width     int
	runs      int
	first     plRow // the run's first row with a device rate; line 0 if none
	last      plRow // the run's last row with the cumulative columns from first on
	prev      plRow // the run's last row with the cumulative columns; line 0 before any
	ratios    []float64
	runLine   int
	cells     []string
	haveFirst bool
	accuracy  string // the validation accuracy's column; "" if none
	evals     []Eval // the run's evaluations
	bad       []error
}

// line reads line n of a metrics.csv: its header or a row.
func (p *plReader) line(n int, l []byte) {
	s := strings.TrimSpace(string(l))
	switch {
	case s == "" || strings.HasPrefix(s, "#"):
	case p.col == nil:
		p.header(n, l, s)
	case len(p.col) > 0:
		p.row(n, l, s)
	}
}

// header reads the columns of the header, and which is the validation
// accuracy.
func (p *plReader) header(n int, l []byte, s string) {
	fields, err := splitCSV(s, ',')
	if err != nil || !lightningColumns(fields) {
		p.lg.malformed(n, l, fmt.Errorf("want a header with %s, %s and %s", plTime, plBatches, plSamples))
		p.col = map[string]int{} // read no row against it
		return
	}
	p.col, p.width = map[string]int{}, len(fields)
	for i, f := range fields {
		p.col[f] = i
	}
	var accs []string
	for _, f := range fields {
		if g := strings.ToLower(f); strings.HasPrefix(g, "val") && strings.Contains(g, "acc") {
			accs = append(accs, f)
		}
	}
	switch {
	case len(accs) == 1 && slices.Contains(fields, "step"):
		p.accuracy = accs[0]
	case len(accs) > 1:
		p.lg.notef("line %d: columns %s all look like a validation accuracy: none is read, so no steps to a target", n, clip(strings.Join(accs, ", ")))
	}
}

// get returns the number in column name of the row, −1 where the row
// has none, counting one that is not a number >= 0 in p.bad.
func (p *plReader) get(name string) float64 {
	i, ok := p.col[name]
	if !ok {
		return -1
	}
	c := strings.TrimSpace(p.cells[i])
	if c == "" {
		return -1
	}
	v, err := strconv.ParseFloat(c, 64)
	if err != nil || !(v >= 0) || math.IsInf(v, 0) {
		p.bad = append(p.bad, fmt.Errorf("%s %s: want a number >= 0", name, quote(p.cells[i])))
		return -1
	}
	return v
}

// evaluation returns the row's validation accuracy, a fraction, and its
// step column; −1 where it has none.
func (p *plReader) evaluation() (acc, step float64) {
	acc, step = -1, -1
	if p.accuracy == "" {
		return acc, step
	}
	if acc = p.get(p.accuracy); acc > 1 && acc <= 100 {
		acc /= 100 // a percentage
	} else if acc > 100 {
		p.bad = append(p.bad, fmt.Errorf("%s %g: want a fraction from 0 to 1, or a percentage", p.accuracy, acc))
	}
	if step = p.get("step"); acc >= 0 && (step < 0 || step != math.Trunc(step) || step > maxCount) {
		p.bad = append(p.bad, fmt.Errorf("%s without a whole step: want the optimizer steps taken, less one, in the step column", p.accuracy))
	}
	return acc, step
}

// row reads a row of figures into the run, starting another run where
// its cumulative batches fall below the last row's.
func (p *plReader) row(n int, l []byte, s string) {
	// The logger writes numbers and empty cells; p.cells is reused.
	var err error
	if p.cells, err = splitRow(p.cells, s, ','); err != nil {
		p.lg.malformed(n, l, err)
		return
	}
	if len(p.cells) != p.width {
		p.lg.malformed(n, l, fmt.Errorf("have %d fields, want %d", len(p.cells), p.width))
		return
	}
	p.bad = p.bad[:0]
	r := plRow{line: n, text: l, time: p.get(plTime), batches: p.get(plBatches), samples: p.get(plSamples), deviceRate: p.get(plDeviceRate), rate: p.get(plRate)}
	acc, step := p.evaluation()
	if err := oneLine(p.bad); err != nil {
		p.lg.malformed(n, l, err)
		return
	}
	if acc >= 0 && p.prev.line != 0 {
		// Validation is logged at the count of batches that stepped
		// before the last one is counted (its training_epoch_loop's
		// on_advance_end): one step fewer than were taken.
		p.evals = append(p.evals, Eval{Line: n, Steps: int(step) + 1, Accuracy: acc})
	}
	if r.time < 0 || r.batches < 0 || r.samples < 0 {
		return // a row of other metrics
	}
	if r.batches == 0 || r.samples == 0 {
		p.lg.malformed(n, l, fmt.Errorf("%s %g, %s %g: want at least one batch and one sample", plBatches, r.batches, plSamples, r.samples))
		return
	}
	p.add(r)
}

// add takes a row of the cumulative columns into the run.
func (p *plReader) add(r plRow) {
	if p.prev.line != 0 && r.batches < p.prev.batches {
		p.flush()
	}
	if p.prev.line == 0 {
		p.runLine = r.line
	}
	p.prev = r
	if r.deviceRate > 0 && !p.haveFirst {
		p.first, p.haveFirst = r, true
	}
	if p.haveFirst {
		p.last = r
	}
	if r.deviceRate > 0 && r.rate > 0 {
		p.ratios = append(p.ratios, r.rate/r.deviceRate)
	}
}

// flush turns the run, if any, into a measurement record and, where it
// evaluated, a Run.
func (p *plReader) flush() {
	if p.prev.line == 0 {
		return
	}
	defer func() {
		p.first, p.last, p.prev, p.ratios, p.haveFirst, p.evals = plRow{}, plRow{}, plRow{}, p.ratios[:0], false, nil
	}()
	p.runs++
	if !p.haveFirst {
		p.lg.notef("line %d: run %d: no %s: the ThroughputMonitor's window of batches never filled (%g batches ran)", p.runLine, p.runs, plDeviceRate, p.prev.batches)
		return
	}
	rec, ok := p.record()
	if !ok {
		return
	}
	p.lg.addValid(rec, p.last.line, p.last.text)
	if len(p.evals) > 0 && rec.Validate() == nil {
		dev := "1 device"
		if rec.Workers > 1 {
			dev = fmt.Sprintf("%d devices", rec.Workers)
		}
		p.lg.Runs = append(p.lg.Runs, Run{Line: p.runLine, Run: rec.Run, Device: dev, GlobalBatch: rec.GlobalBatch, Status: StatusUnknown,
			Accuracy: p.evals[len(p.evals)-1].Accuracy, StepTime: units.Seconds(rec.StepTime), Evals: p.evals})
	}
}

// record returns the run's measurement record, from its first row with
// a device rate to its last; false, with the last row malformed, where
// it has no whole batch.
func (p *plReader) record() (benchlog.Record, bool) {
	first, last := p.first, p.last
	world := 1.0
	if len(p.ratios) > 0 {
		slices.Sort(p.ratios)
		world = math.Round(p.ratios[len(p.ratios)/2])
	}
	batch := last.samples / last.batches
	b := math.Round(batch)
	if math.Abs(batch-b) > 1e-6*b {
		p.lg.notef("line %d: run %d: %g samples in %g batches of one device: batches of different sizes, taken as %g", last.line, p.runs, last.samples, last.batches, b)
	}
	rec := benchlog.Record{Kind: benchlog.KindMeasurement, Run: strconv.Itoa(p.runs),
		Workers: int(world), Batch: int(b), GlobalBatch: int(b * world)}
	if dt, db := last.time-first.time, last.batches-first.batches; dt > 0 && db > 0 {
		rec.Steps = int(db)
		rec.StepTime = dt / db
		rec.SamplesPerSec = world * (last.samples - first.samples) / dt
	} else {
		rec.SamplesPerSec = world * first.deviceRate
		rec.StepTime = b / first.deviceRate
	}
	if rec.Batch < 1 || rec.Workers < 1 {
		p.lg.malformed(last.line, last.text, fmt.Errorf("%g samples in %g batches on %g devices: want a whole batch of at least one sample", last.samples, last.batches, world))
		return rec, false
	}
	return rec, true
}
