package logs

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"

	"scaleplan/internal/benchlog"
)

// Lines of Horovod's pytorch_synthetic_benchmark.py. An mpirun tag such as
// "[1,0]<stdout>:" may precede them.
var (
	hvdModel = regexp.MustCompile(`Model: (\S+)\s*$`)
	hvdBatch = regexp.MustCompile(`Batch size: (\d+)\s*$`)
	hvdCount = regexp.MustCompile(`Number of (GPU|CPU)s: (\d+)\s*$`)
	hvdIter  = regexp.MustCompile(`Iter #(\d+): (\S+) img/sec per (GPU|CPU)\s*$`)
	hvdPer   = regexp.MustCompile(`Img/sec per (GPU|CPU): (\S+?)(?: \+-(\S+))?\s*$`)
	hvdTotal = regexp.MustCompile(`Total img/sec on (\d+) (GPU|CPU)\(s\): (\S+?)(?: \+-(\S+))?\s*$`)
)

// readHorovod reads the output of Horovod's synthetic benchmark:
//
//	Model: resnet50
//	Batch size: 32
//	Number of GPUs: 4
//	Iter #0: 97.5 img/sec per GPU
//	Img/sec per GPU: 97.6 +-0.5
//	Total img/sec on 4 GPU(s): 390.4 +-2.0
//
// Each "Total img/sec" line gives one measurement record. A run whose
// output stops before it is taken from "Img/sec per GPU" times the count,
// or from the mean of its "Iter" lines. A "Model:" line starts a new run,
// so the output of a sweep may be concatenated into one file.
func readHorovod(data []byte, lg *Log) {
	h := &hvdReader{lg: lg}
	lines(data, h.line)
	h.flush()
}

// hvdRun is what the lines of a run of the synthetic benchmark said.
type hvdRun struct {
	model, device string
	batch, count  int
	perDev        float64
	perLine       int
	iters         []float64
	iterLine      int
	done          bool // a Total line was read
}

// hvdReader is the state of readHorovod: the run it is in.
type hvdReader struct {
	lg  *Log
	cur hvdRun
}

// line reads line n of the benchmark's output.
func (h *hvdReader) line(n int, l []byte) {
	s := strings.TrimSpace(string(l))
	switch {
	case strings.Contains(s, "Model: "):
		m := hvdModel.FindStringSubmatch(s)
		if m == nil {
			h.lg.malformed(n, l, fmt.Errorf("want %q", "Model: NAME"))
			return
		}
		h.flush()
		h.cur = hvdRun{model: m[1]}
	case strings.Contains(s, "Batch size: "):
		m := hvdBatch.FindStringSubmatch(s)
		if m == nil {
			h.lg.malformed(n, l, fmt.Errorf("want %q", "Batch size: N"))
			return
		}
		b, err := parseCount("batch size", m[1])
		if err != nil {
			h.lg.malformed(n, l, err)
		}
		h.cur.batch = b
	case strings.Contains(s, "Number of GPUs") || strings.Contains(s, "Number of CPUs"):
		h.devices(n, l, s)
	case strings.Contains(s, "Iter #"):
		m := hvdIter.FindStringSubmatch(s)
		v, err := positive(m, 2)
		if err != nil {
			h.lg.malformed(n, l, fmt.Errorf("want %q: %w", "Iter #i: X img/sec per GPU", err))
			return
		}
		h.cur.iters = append(h.cur.iters, v)
		h.cur.iterLine = n
	case strings.Contains(s, "Img/sec per "):
		m := hvdPer.FindStringSubmatch(s)
		v, err := positive(m, 2)
		if err != nil {
			h.lg.malformed(n, l, fmt.Errorf("want %q: %w", "Img/sec per GPU: X +-Y", err))
			return
		}
		h.cur.perDev, h.cur.perLine = v, n
	case strings.Contains(s, "Total img/sec on "):
		h.total(n, l, s)
	}
}

// devices reads the "Number of GPUs" line.
func (h *hvdReader) devices(n int, l []byte, s string) {
	m := hvdCount.FindStringSubmatch(s)
	if m == nil {
		h.lg.malformed(n, l, fmt.Errorf("want %q", "Number of GPUs: N"))
		return
	}
	c, err := parseCount("number of "+m[1]+"s", m[2])
	if err != nil {
		h.lg.malformed(n, l, err)
		return
	}
	h.cur.device, h.cur.count = m[1], c
}

// total reads the "Total img/sec" line, the run's result.
func (h *hvdReader) total(n int, l []byte, s string) {
	const want = "Total img/sec on N GPU(s): X +-Y"
	m := hvdTotal.FindStringSubmatch(s)
	v, err := positive(m, 3)
	if err != nil {
		h.lg.malformed(n, l, fmt.Errorf("want %q: %w", want, err))
		return
	}
	c, err := parseCount(m[2]+"s", m[1])
	if err != nil {
		h.lg.malformed(n, l, fmt.Errorf("want %q: %w", want, err))
		return
	}
	if h.cur.count > 0 && (c != h.cur.count || m[2] != h.cur.device) {
		// Both are hvd.size(): a log that disagrees is two runs' output
		// run together.
		h.lg.malformed(n, l, fmt.Errorf("total on %d %ss, where \"Number of %ss\" said %d", c, m[2], h.cur.device, h.cur.count))
		return
	}
	h.cur.done = true
	h.emit(n, l, c, m[2], v)
}

// emit adds the run's measurement record of total samples/s on count
// devices.
func (h *hvdReader) emit(line int, text []byte, count int, device string, total float64) {
	if h.cur.batch == 0 {
		h.lg.malformed(line, text, errors.New(`no usable "Batch size:" line before this result`))
		return
	}
	h.lg.addValid(benchlog.Record{
		Kind: benchlog.KindMeasurement, Model: h.cur.model, Device: device,
		Workers: count, Batch: h.cur.batch, GlobalBatch: h.cur.batch * count,
		SamplesPerSec: total,
	}, line, text)
}

// flush takes the result of a run whose output stops before its Total
// line from what it printed before.
func (h *hvdReader) flush() {
	cur := &h.cur
	if cur.done || cur.count == 0 {
		return
	}
	switch {
	case cur.perLine > 0:
		h.lg.notef("line %d: output ends before \"Total img/sec\": took Img/sec per %s × %d", cur.perLine, cur.device, cur.count)
		h.emit(cur.perLine, nil, cur.count, cur.device, cur.perDev*float64(cur.count))
	case len(cur.iters) > 0:
		var sum float64
		for _, v := range cur.iters {
			sum += v
		}
		mean := sum / float64(len(cur.iters))
		h.lg.notef("line %d: output ends before the summary: took the mean of %d Iter lines", cur.iterLine, len(cur.iters))
		h.emit(cur.iterLine, nil, cur.count, cur.device, mean*float64(cur.count))
	}
}

// maxCount bounds the counts a log may give (batch sizes, device counts,
// steps): 2^31 of any of them is beyond every real run, and two of them
// multiply into a global batch without overflow.
const maxCount = 1 << 31

// parseCount parses s, the count that what names, as a whole number from 1 to
// maxCount.
func parseCount(what, s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxCount {
		return 0, fmt.Errorf("%s %s: want a whole number from 1 to 2^31", what, quote(s))
	}
	return n, nil
}

// positive parses m[i] as a finite number > 0; m nil means the line did
// not match.
func positive(m []string, i int) (float64, error) {
	v, err := nonNegative(m, i)
	if err == nil && v == 0 {
		return 0, fmt.Errorf("bad number %s", quote(m[i]))
	}
	return v, err
}

// nonNegative parses m[i] as a finite number ≥ 0; m nil means the line did
// not match.
func nonNegative(m []string, i int) (float64, error) {
	if m == nil {
		return 0, errors.New("line does not match")
	}
	v, err := strconv.ParseFloat(m[i], 64)
	if err != nil || !(v >= 0) || v > 1e300 {
		return 0, fmt.Errorf("bad number %s", quote(m[i]))
	}
	return v, nil
}

// Lines of tf_cnn_benchmarks.
var (
	tfModel     = regexp.MustCompile(`^Model:\s+(\S+)`)
	tfBatch     = regexp.MustCompile(`^Batch size:\s+(\d+) global\s*$`)
	tfPerDevice = regexp.MustCompile(`^(\d+)(?:\.0+)? per device\s*$`)
	tfDevices   = regexp.MustCompile(`^Devices:\s+\[(.*)\]\s*$`)
	tfBatches   = regexp.MustCompile(`^Num batches:\s+(\d+)\s*$`)
	tfLabel     = regexp.MustCompile(`^(Mode|Variables|TensorFlow|Dataset):\s+(.+?)\s*$`)
	tfStep      = regexp.MustCompile(`^(\d+)\s+images/sec: (\S+) \+/- (\S+) \(jitter = (\S+)\)`)
	tfTotal     = regexp.MustCompile(`^total images/sec: (\S+)\s*$`)
)

// readTFCNN reads the output of tf_cnn_benchmarks:
//
//	Model:       resnet50
//	Mode:        training
//	Batch size:  256 global
//	             64 per device
//	Num batches: 100
//	Devices:     ['/gpu:0', '/gpu:1', '/gpu:2', '/gpu:3']
//	...
//	Step	Img/sec	total_loss
//	1	images/sec: 761.7 +/- 0.0 (jitter = 0.0)	7.847
//	100	images/sec: 760.7 +/- 0.3 (jitter = 1.8)	7.822
//	----------------------------------------------------------------
//	total images/sec: 760.22
//
// Each "total images/sec" line gives one measurement record with labels
// mode, variables, tensorflow and dataset. A run whose output stops before
// it is taken from its last step line (the running mean). A "Model:" line
// starts a new run.
func readTFCNN(data []byte, lg *Log) {
	t := &tfReader{lg: lg}
	lines(data, t.line)
	t.flush()
}

// tfRun is what the lines of a run of tf_cnn_benchmarks said.
type tfRun struct {
	model, device         string
	global, perDev, count int
	batches               int
	labels                map[string]string
	last                  float64
	lastLine              int
	done                  bool
}

// tfReader is the state of readTFCNN: the run it is in.
type tfReader struct {
	lg  *Log
	cur tfRun
}

// line reads line n of the benchmark's output.
func (t *tfReader) line(n int, l []byte) {
	s := strings.TrimSpace(string(l))
	if m := tfModel.FindStringSubmatch(s); m != nil {
		if t.cur.model != "" {
			t.flush()
			t.cur = tfRun{}
		}
		t.cur.model = m[1]
		return
	}
	if t.cur.done {
		// Lines after a result belong to the next run, whose
		// "TensorFlow:" line comes before its "Model:" line.
		t.cur = tfRun{}
	}
	switch {
	case strings.HasPrefix(s, "Batch size:"):
		if v, ok := t.count(n, l, tfBatch.FindStringSubmatch(s), "Batch size:  N global", "global batch"); ok {
			t.cur.global = v
		}
	case strings.HasSuffix(s, "per device"):
		if v, ok := t.count(n, l, tfPerDevice.FindStringSubmatch(s), "N per device", "batch per device"); ok {
			t.cur.perDev = v
		}
	case strings.HasPrefix(s, "Devices:"):
		t.devices(n, l, s)
	case strings.HasPrefix(s, "Num batches:"):
		if m := tfBatches.FindStringSubmatch(s); m != nil {
			t.cur.batches, _ = strconv.Atoi(m[1])
		}
	case tfLabel.MatchString(s):
		m := tfLabel.FindStringSubmatch(s)
		if t.cur.labels == nil {
			t.cur.labels = map[string]string{}
		}
		t.cur.labels[strings.ToLower(m[1])] = m[2]
	case strings.Contains(s, "images/sec:") && !strings.HasPrefix(s, "total"):
		m := tfStep.FindStringSubmatch(s)
		v, err := positive(m, 2)
		if err != nil {
			t.lg.malformed(n, l, fmt.Errorf("want %q: %w", "STEP\timages/sec: X +/- Y (jitter = Z)\tLOSS", err))
			return
		}
		t.cur.last, t.cur.lastLine = v, n
	case strings.HasPrefix(s, "total images/sec"):
		m := tfTotal.FindStringSubmatch(s)
		v, err := positive(m, 1)
		if err != nil {
			t.lg.malformed(n, l, fmt.Errorf("want %q: %w", "total images/sec: X", err))
			return
		}
		t.cur.done = true
		t.emit(n, l, v)
	}
}

// count returns the count m[1] of a batch line, what it names: 0, with
// the line malformed, where it is out of range. ok is false, with the
// line malformed, where the line does not match (m nil).
func (t *tfReader) count(n int, l []byte, m []string, want, what string) (v int, ok bool) {
	if m == nil {
		t.lg.malformed(n, l, fmt.Errorf("want %q", want))
		return 0, false
	}
	v, err := parseCount(what, m[1])
	if err != nil {
		t.lg.malformed(n, l, err)
	}
	return v, true
}

// devices reads the Devices list: its count and kind.
func (t *tfReader) devices(n int, l []byte, s string) {
	m := tfDevices.FindStringSubmatch(s)
	if m == nil {
		t.lg.malformed(n, l, fmt.Errorf("want %q", "Devices:     ['/gpu:0', ...]"))
		return
	}
	cur := &t.cur
	cur.count, cur.device = 0, ""
	for _, d := range strings.Split(m[1], ",") {
		d = strings.ToLower(strings.Trim(strings.TrimSpace(d), `'"`))
		if d == "" {
			continue
		}
		cur.count++
		switch {
		case strings.Contains(d, "gpu"):
			cur.device = "GPU"
		case strings.Contains(d, "cpu") && cur.device == "":
			cur.device = "CPU"
		}
	}
}

// workers returns the run's device count at line: the global batch and
// total images/sec are over every worker (tf_cnn_benchmarks multiplies
// both by num_workers), the Devices list is this worker's: with several
// workers (Horovod, one GPU a process) the devices are global / per
// device, not the list's.
func (t *tfReader) workers(line int) int {
	cur := &t.cur
	count := cur.count
	if cur.perDev > 0 && cur.global > 0 && cur.global%cur.perDev == 0 {
		count = cur.global / cur.perDev
		if cur.count > 0 && count != cur.count {
			t.lg.notef("line %d: global batch %d is %d per device × %d devices, where the Devices list has %d: a run of several workers, counted as %d devices", line, cur.global, cur.perDev, count, cur.count, count)
		}
	}
	if count == 0 {
		count = 1
	}
	return count
}

// emit adds the run's measurement record of total samples/s.
func (t *tfReader) emit(line int, text []byte, total float64) {
	cur := &t.cur
	if cur.global == 0 && cur.perDev == 0 {
		t.lg.malformed(line, text, errors.New(`no usable "Batch size:" line before this result`))
		return
	}
	count := t.workers(line)
	per, global := cur.perDev, cur.global
	if per == 0 {
		per = global / count
	}
	if global == 0 {
		global = per * count
	}
	var labels map[string]string
	if len(cur.labels) > 0 {
		labels = maps.Clone(cur.labels)
	}
	t.lg.addValid(benchlog.Record{
		Kind: benchlog.KindMeasurement, Model: cur.model, Device: cur.device,
		Workers: count, Batch: per, GlobalBatch: global, Steps: cur.batches,
		SamplesPerSec: total, Labels: labels,
	}, line, text)
}

// flush takes the result of a run whose output stops before its total
// line from its last step line.
func (t *tfReader) flush() {
	if t.cur.done || t.cur.lastLine == 0 {
		return
	}
	t.lg.notef("line %d: output ends before \"total images/sec\": took the running mean of the last step line", t.cur.lastLine)
	t.emit(t.cur.lastLine, nil, t.cur.last)
}
