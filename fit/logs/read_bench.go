package logs

import (
	"errors"
	"fmt"
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
	type run struct {
		model, device string
		batch, count  int
		perDev        float64
		perLine       int
		iters         []float64
		iterLine      int
		done          bool // a Total line was read
	}
	var cur run
	emit := func(line int, text []byte, count int, device string, total float64) {
		if cur.batch == 0 {
			lg.malformed(line, text, errors.New(`no usable "Batch size:" line before this result`))
			return
		}
		lg.addValid(benchlog.Record{
			Kind: benchlog.KindMeasurement, Model: cur.model, Device: device,
			Workers: count, Batch: cur.batch, GlobalBatch: cur.batch * count,
			SamplesPerSec: total,
		}, line, text)
	}
	flush := func() {
		if cur.done || cur.count == 0 {
			return
		}
		switch {
		case cur.perLine > 0:
			lg.notef("line %d: output ends before \"Total img/sec\": took Img/sec per %s × %d", cur.perLine, cur.device, cur.count)
			emit(cur.perLine, nil, cur.count, cur.device, cur.perDev*float64(cur.count))
		case len(cur.iters) > 0:
			var sum float64
			for _, v := range cur.iters {
				sum += v
			}
			mean := sum / float64(len(cur.iters))
			lg.notef("line %d: output ends before the summary: took the mean of %d Iter lines", cur.iterLine, len(cur.iters))
			emit(cur.iterLine, nil, cur.count, cur.device, mean*float64(cur.count))
		}
	}
	lines(data, func(n int, l []byte) {
		s := strings.TrimSpace(string(l))
		bad := func(want string) { lg.malformed(n, l, fmt.Errorf("want %q", want)) }
		switch {
		case strings.Contains(s, "Model: "):
			m := hvdModel.FindStringSubmatch(s)
			if m == nil {
				bad("Model: NAME")
				return
			}
			flush()
			cur = run{model: m[1]}
		case strings.Contains(s, "Batch size: "):
			m := hvdBatch.FindStringSubmatch(s)
			if m == nil {
				bad("Batch size: N")
				return
			}
			b, err := parseCount("batch size", m[1])
			if err != nil {
				lg.malformed(n, l, err)
			}
			cur.batch = b
		case strings.Contains(s, "Number of GPUs") || strings.Contains(s, "Number of CPUs"):
			m := hvdCount.FindStringSubmatch(s)
			if m == nil {
				bad("Number of GPUs: N")
				return
			}
			c, err := parseCount("number of "+m[1]+"s", m[2])
			if err != nil {
				lg.malformed(n, l, err)
				return
			}
			cur.device, cur.count = m[1], c
		case strings.Contains(s, "Iter #"):
			m := hvdIter.FindStringSubmatch(s)
			v, err := positive(m, 2)
			if err != nil {
				lg.malformed(n, l, fmt.Errorf("want %q: %w", "Iter #i: X img/sec per GPU", err))
				return
			}
			cur.iters = append(cur.iters, v)
			cur.iterLine = n
		case strings.Contains(s, "Img/sec per "):
			m := hvdPer.FindStringSubmatch(s)
			v, err := positive(m, 2)
			if err != nil {
				lg.malformed(n, l, fmt.Errorf("want %q: %w", "Img/sec per GPU: X +-Y", err))
				return
			}
			cur.perDev, cur.perLine = v, n
		case strings.Contains(s, "Total img/sec on "):
			m := hvdTotal.FindStringSubmatch(s)
			v, err := positive(m, 3)
			if err != nil {
				lg.malformed(n, l, fmt.Errorf("want %q: %w", "Total img/sec on N GPU(s): X +-Y", err))
				return
			}
			c, err := parseCount(m[2]+"s", m[1])
			if err != nil {
				lg.malformed(n, l, fmt.Errorf("want %q: %w", "Total img/sec on N GPU(s): X +-Y", err))
				return
			}
			if cur.count > 0 && (c != cur.count || m[2] != cur.device) {
				// Both are hvd.size(): a log that disagrees is two
				// runs' output run together.
				lg.malformed(n, l, fmt.Errorf("total on %d %ss, where \"Number of %ss\" said %d", c, m[2], cur.device, cur.count))
				return
			}
			cur.done = true
			emit(n, l, c, m[2], v)
		}
	})
	flush()
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
	type run struct {
		model, device         string
		global, perDev, count int
		batches               int
		labels                map[string]string
		last                  float64
		lastLine              int
		done                  bool
	}
	var cur run
	emit := func(line int, text []byte, total float64) {
		if cur.global == 0 && cur.perDev == 0 {
			lg.malformed(line, text, errors.New(`no usable "Batch size:" line before this result`))
			return
		}
		// The global batch and total images/sec are over every worker
		// (tf_cnn_benchmarks multiplies both by num_workers), the Devices
		// list is this worker's: with several workers (Horovod, one GPU a
		// process) the devices are global / per device, not the list's.
		count := cur.count
		if cur.perDev > 0 && cur.global > 0 && cur.global%cur.perDev == 0 {
			count = cur.global / cur.perDev
			if cur.count > 0 && count != cur.count {
				lg.notef("line %d: global batch %d is %d per device × %d devices, where the Devices list has %d: a run of several workers, counted as %d devices", line, cur.global, cur.perDev, count, cur.count, count)
			}
		}
		if count == 0 {
			count = 1
		}
		per, global := cur.perDev, cur.global
		if per == 0 {
			per = global / count
		}
		if global == 0 {
			global = per * count
		}
		var labels map[string]string
		if len(cur.labels) > 0 {
			labels = make(map[string]string, len(cur.labels))
			for k, v := range cur.labels {
				labels[k] = v
			}
		}
		lg.addValid(benchlog.Record{
			Kind: benchlog.KindMeasurement, Model: cur.model, Device: cur.device,
			Workers: count, Batch: per, GlobalBatch: global, Steps: cur.batches,
			SamplesPerSec: total, Labels: labels,
		}, line, text)
	}
	flush := func() {
		if cur.done || cur.lastLine == 0 {
			return
		}
		lg.notef("line %d: output ends before \"total images/sec\": took the running mean of the last step line", cur.lastLine)
		emit(cur.lastLine, nil, cur.last)
	}
	lines(data, func(n int, l []byte) {
		s := strings.TrimSpace(string(l))
		if m := tfModel.FindStringSubmatch(s); m != nil {
			if cur.model != "" {
				flush()
				cur = run{}
			}
			cur.model = m[1]
			return
		}
		if cur.done {
			// Lines after a result belong to the next run, whose
			// "TensorFlow:" line comes before its "Model:" line.
			cur = run{}
		}
		switch {
		case strings.HasPrefix(s, "Batch size:"):
			m := tfBatch.FindStringSubmatch(s)
			if m == nil {
				lg.malformed(n, l, fmt.Errorf("want %q", "Batch size:  N global"))
				return
			}
			g, err := parseCount("global batch", m[1])
			if err != nil {
				lg.malformed(n, l, err)
			}
			cur.global = g
		case strings.HasSuffix(s, "per device"):
			m := tfPerDevice.FindStringSubmatch(s)
			if m == nil {
				lg.malformed(n, l, fmt.Errorf("want %q", "N per device"))
				return
			}
			b, err := parseCount("batch per device", m[1])
			if err != nil {
				lg.malformed(n, l, err)
			}
			cur.perDev = b
		case strings.HasPrefix(s, "Devices:"):
			m := tfDevices.FindStringSubmatch(s)
			if m == nil {
				lg.malformed(n, l, fmt.Errorf("want %q", "Devices:     ['/gpu:0', ...]"))
				return
			}
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
		case strings.HasPrefix(s, "Num batches:"):
			if m := tfBatches.FindStringSubmatch(s); m != nil {
				cur.batches, _ = strconv.Atoi(m[1])
			}
		case tfLabel.MatchString(s):
			m := tfLabel.FindStringSubmatch(s)
			if cur.labels == nil {
				cur.labels = map[string]string{}
			}
			cur.labels[strings.ToLower(m[1])] = m[2]
		case strings.Contains(s, "images/sec:") && !strings.HasPrefix(s, "total"):
			m := tfStep.FindStringSubmatch(s)
			v, err := positive(m, 2)
			if err != nil {
				lg.malformed(n, l, fmt.Errorf("want %q: %w", "STEP\timages/sec: X +/- Y (jitter = Z)\tLOSS", err))
				return
			}
			cur.last, cur.lastLine = v, n
		case strings.HasPrefix(s, "total images/sec"):
			m := tfTotal.FindStringSubmatch(s)
			v, err := positive(m, 1)
			if err != nil {
				lg.malformed(n, l, fmt.Errorf("want %q: %w", "total images/sec: X", err))
				return
			}
			cur.done = true
			emit(n, l, v)
		}
	})
	flush()
}
