package logs

import (
	"bytes"
	"cmp"
	"encoding/json"
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

// mllog is one ":::MLLOG {...}" event as the mlperf_logging library writes
// it: namespace, time_ms, event_type, key, value, metadata.
type mllog struct {
	Namespace string                     `json:"namespace"`
	TimeMS    *float64                   `json:"time_ms"`
	EventType string                     `json:"event_type"`
	Key       *string                    `json:"key"`
	Value     json.RawMessage            `json:"value"`
	Metadata  map[string]json.RawMessage `json:"metadata"`
}

// The markers of the two MLPerf log formats. ":::MLL " (with its space)
// never matches a ":::MLLOG" line.
var (
	mllogMarker = []byte(":::MLLOG")
	mllMarker   = []byte(":::MLL ")
)

// decodeMLLOG decodes a ":::MLLOG {json}" line (MLPerf Training v0.7 and
// later). ok is false for a line without the marker.
func decodeMLLOG(l []byte) (e mllog, ok bool, err error) {
	i := bytes.Index(l, mllogMarker)
	if i < 0 {
		return e, false, nil
	}
	err = json.Unmarshal(bytes.TrimSpace(l[i+len(mllogMarker):]), &e)
	return e, true, err
}

// errMLL says what a v0.6 line looks like.
var errMLL = errors.New(`want ":::MLL SECONDS KEY: {\"value\": ..., \"metadata\": {...}}"`)

// decodeMLL decodes a line of the MLPerf Training v0.6 compliance log, as
// mlperf_compliance's mlperf_log.py prints it:
//
//	:::MLL 1561012831.003 run_start: {"value": null, "metadata": {"lineno": 190, "file": "train_imagenet.py"}}
//
// the time in seconds since the epoch (three decimals), the key, then
// "value" and "metadata" as JSON. The time becomes milliseconds
// (mllTime). ok is false for a line without the marker.
func decodeMLL(l []byte) (e mllog, ok bool, err error) {
	i := bytes.Index(l, mllMarker)
	if i < 0 {
		return e, false, nil
	}
	rest := bytes.TrimLeft(l[i+len(mllMarker):], " \t")
	sp := bytes.IndexAny(rest, " \t")
	if sp < 0 {
		return e, true, errMLL
	}
	ms, err := mllTime(rest[:sp])
	if err != nil {
		return e, true, err
	}
	rest = bytes.TrimLeft(rest[sp:], " \t")
	c := bytes.IndexByte(rest, ':')
	if c < 1 || bytes.ContainsAny(rest[:c], " \t\"{}") {
		return e, true, errMLL
	}
	var body struct {
		Value    json.RawMessage            `json:"value"`
		Metadata map[string]json.RawMessage `json:"metadata"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(rest[c+1:]), &body); err != nil {
		return e, true, err
	}
	key := string(rest[:c])
	return mllog{TimeMS: &ms, Key: &key, Value: body.Value, Metadata: body.Metadata}, true, nil
}

// mllTime reads the seconds of a v0.6 line, at most 12 digits with an
// optional fraction of at most 9, as milliseconds. The digits are read as
// one integer and scaled by a power of ten, so that a time of three or
// fewer decimals is a whole number of milliseconds exactly (sec·1000 in
// floating point is not always: 1092502555.600 s gives 1092502555599.9999).
func mllTime(s []byte) (float64, error) {
	ip, fp, _ := bytes.Cut(s, []byte("."))
	digits := func(b []byte) bool {
		for _, c := range b {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	}
	if len(ip) == 0 || len(ip) > 12 || len(fp) > 9 || !digits(ip) || !digits(fp) {
		return 0, fmt.Errorf("time %s: want seconds since the epoch, such as 1561012831.003", quote(string(s)))
	}
	n, err := strconv.ParseUint(string(ip)+string(fp), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("time %s: %w", quote(string(s)), err)
	}
	ms := float64(n)
	if k := len(fp) - 3; k > 0 {
		ms /= math.Pow10(k)
	} else {
		ms *= math.Pow10(-k)
	}
	return ms, nil
}

// catalogueModel returns the catalogue's name (model/profiles) for an
// MLPerf Training benchmark name, or the name itself when the catalogue
// has no model of that benchmark. MLPerf's transformer is Transformer
// (big) (recipe mlperf-v0.7-transformer).
func catalogueModel(benchmark string) string {
	switch benchmark {
	case "resnet":
		return "resnet50"
	case "ssd":
		return "ssd-resnet34"
	case "maskrcnn":
		return "maskrcnn-r50-fpn"
	case "transformer":
		return "transformer-big"
	}
	return benchmark // gnmt, and benchmarks the catalogue does not have
}

// mlperfTrainSamples returns the samples of an epoch of an MLPerf
// benchmark whose training set the rules fix, and the set's name; 0 when
// it is not fixed or not known here. They are the train_samples that v0.7
// logs print and the catalogue's datasets (model/profiles/datasets.yaml):
// ImageNet-1k's 1,281,167 images, and the 117,266 COCO 2017 training images
// that have annotations (MLPerf's SSD and Mask R-CNN drop the others). The
// translation benchmarks count sentences (GNMT) or tokens (Transformer)
// that depend on preprocessing: none is assumed for them.
func mlperfTrainSamples(benchmark string) (int, string) {
	switch benchmark {
	case "resnet":
		return 1281167, "ImageNet-1k"
	case "ssd", "maskrcnn":
		return 117266, "COCO 2017"
	}
	return 0, ""
}

// mlInterval is a timed interval of training: an epoch or a block of epochs.
type mlInterval struct {
	line   int
	first  float64 // epoch_num of an epoch, first_epoch_num of a block
	ms     float64 // duration, milliseconds
	epochs float64 // epochs it covers
}

// queuedCoverage is the share of their blocks' training time below which
// a run's epochs are taken to be stamped as they were queued rather than
// as they ran: the epochs of NVIDIA's logs whose stamps are real sum to
// 99 % or more of their blocks (v2.0's ResNet-50 on 1, 8 and 128 DGX A100
// nodes: 99.4-99.9 %), where those of its sgdwfastlarsv2 runs, whose
// GPUs are still at work when an epoch is stamped as stopped, sum to 92 %
// (v1.1, 540 nodes) and 20 % (v2.0, 527 nodes).
const queuedCoverage = 0.95

// mlRun collects the events of one run.
type mlRun struct {
	startMS, stopMS   float64
	started, stopped  bool
	startLine         int
	stopLine, last    int
	status            string
	epochStart        map[float64]float64 // epoch_num → time_ms
	blockStart        map[float64]float64 // first_epoch_num → time_ms
	blockCount        map[float64]float64 // first_epoch_num → epoch_count
	blockEval         map[float64]float64 // first_epoch_num → the first eval_start inside the block
	epochs, blocks    []mlInterval
	accuracy          float64
	haveAcc, pctNoted bool
}

// readMLPerf reads an MLPerf Training log whose lines decode reads: the
// ":::MLLOG" lines of v0.7 and later (decodeMLLOG) or the ":::MLL" lines
// of v0.6 (decodeMLL). The keys it uses are the same in both:
//
//	submission_benchmark, submission_platform, submission_org,
//	submission_division, submission_status   model, device and labels
//	global_batch_size, train_samples         samples per step and per epoch
//	d_batch_size, gradient_accumulation_steps
//	                                         samples per device and micro-batch (NVIDIA's
//	                                         logs print it), micro-batches per step:
//	                                         workers = global/(d·accumulation)
//	epoch_start/epoch_stop (epoch_num)       samples/s per epoch
//	block_start/block_stop (first_epoch_num, epoch_count)
//	                                         samples/s per block, when there are no epochs
//	                                         or they were stamped as queued (below)
//	eval_start                               where a block's training ends
//	eval_accuracy                            accuracy (values above 1 read as percent;
//	                                         BLEU/100 for transformer and gnmt)
//	run_start/run_stop (status)              time to train; steps to the target
//
// submission_benchmark is MLPerf's benchmark name; the records carry the
// catalogue's name for it (catalogueModel) and the logged name as the
// label "benchmark". A block's time is its training: block_start to the
// first eval_start inside it, or to block_stop. Where a run's epochs sum
// to less than queuedCoverage of their blocks' training, its epochs were
// stamped as they were queued, not as they ran (NVIDIA's sgdwfastlarsv2
// runs log four epochs of a block in a burst and then wait for the GPUs
// before the evaluation), and its blocks give the samples/s instead, with
// a note. Each epoch (or block) gives a measurement record and
// each run that stopped a convergence record: steps = epochs × train_samples
// / global_batch_size, reached when run_stop's status is "success". A log
// without train_samples (published v0.6 logs do not print it) takes the size of the
// benchmark's training set where MLPerf fixes it (mlperfTrainSamples), with
// a note. MLPerf's keys do not give the accelerator count; where a log
// prints d_batch_size (NVIDIA's do) and it times gradient_accumulation_steps
// (1 when not logged) divides global_batch_size, the records have workers =
// global_batch_size / (d_batch_size · accumulation), that batch per device
// and that accumulation, else workers 0 (a d_batch_size that does not
// divide it is noted). A run_stop with no run_start before it, or not
// after it in time, refuses its run (a malformed line naming both lines
// and times): the run's time to train and success are unknown. Lines
// without the marker are other output and are skipped.
func readMLPerf(data []byte, lg *Log, decode func([]byte) (mllog, bool, error)) {
	m := &mlReader{lg: lg, labels: map[string]string{}}
	lines(data, func(n int, l []byte) {
		e, ok, err := decode(l)
		if !ok {
			return
		}
		if err == nil {
			err = checkEvent(e)
		}
		if err != nil {
			lg.malformed(n, l, err)
			return
		}
		if m.run == nil {
			m.run = newMLRun()
		}
		m.run.last = n
		m.event(mlLine{n: n, l: l, e: e, key: *e.Key, t: *e.TimeMS})
	})
	m.finish()
}

// mlReader is the state of readMLPerf: the settings logged so far, which
// every run after them takes, and the run whose events it collects.
type mlReader struct {
	lg           *Log
	model, bench string
	device       string
	labels       map[string]string
	globalBatch  float64
	deviceBatch  float64
	accumulation float64
	trainSamples float64
	run          *mlRun
}

// mlLine is one event of an MLPerf log: its line n and text l, its key
// and its time in milliseconds.
type mlLine struct {
	n   int
	l   []byte
	e   mllog
	key string
	t   float64
}

// meta returns the number of metadata key k.
func (ev *mlLine) meta(k string) (float64, bool) { return jsonNumber(ev.e.Metadata[k]) }

func newMLRun() *mlRun {
	return &mlRun{epochStart: map[float64]float64{}, blockStart: map[float64]float64{}, blockCount: map[float64]float64{}, blockEval: map[float64]float64{}}
}

// checkEvent returns an error for an event without a key or a finite
// time.
func checkEvent(e mllog) error {
	switch {
	case e.Key == nil || *e.Key == "":
		return errors.New(`missing "key"`)
	case e.TimeMS == nil:
		return errors.New(`missing "time_ms"`)
	case math.IsNaN(*e.TimeMS) || math.IsInf(*e.TimeMS, 0):
		return errors.New(`bad "time_ms"`)
	}
	return nil
}

// bad counts ev's line as malformed for err.
func (m *mlReader) bad(ev mlLine, err error) { m.lg.malformed(ev.n, ev.l, err) }

// finish turns the run collected so far, if any, into records.
func (m *mlReader) finish() {
	if m.run == nil {
		return
	}
	m.finishRun(m.run)
	m.run = nil
}

// event takes one event into the settings or the run.
func (m *mlReader) event(ev mlLine) {
	switch ev.key {
	case "submission_benchmark", "submission_platform", "submission_org", "submission_division", "submission_status":
		m.submission(ev)
	case "global_batch_size", "d_batch_size", "gradient_accumulation_steps", "train_samples":
		m.size(ev)
	case "run_start":
		m.runStart(ev)
	case "run_stop":
		m.runStop(ev)
	case "epoch_start", "epoch_stop":
		m.epoch(ev)
	case "block_start", "eval_start", "block_stop":
		m.block(ev)
	case "eval_accuracy":
		m.accuracy(ev)
	}
}

// submission takes the benchmark (the model), the platform (the device)
// and the labels of the submission.
func (m *mlReader) submission(ev mlLine) {
	switch ev.key {
	case "submission_benchmark":
		m.bench = jsonString(ev.e.Value)
		m.model = catalogueModel(m.bench)
		if m.bench != "" {
			m.labels["benchmark"] = m.bench
		} else {
			delete(m.labels, "benchmark")
		}
	case "submission_platform":
		m.device = jsonString(ev.e.Value)
	default:
		if v := jsonString(ev.e.Value); v != "" {
			m.labels[ev.key[len("submission_"):]] = v
		}
	}
}

// size takes a batch size, an accumulation or the samples of an epoch:
// whole numbers from 1 (to 2^31 but for train_samples).
func (m *mlReader) size(ev mlLine) {
	v, ok := jsonNumber(ev.e.Value)
	if !ok || v < 0 || v > 1e15 {
		m.bad(ev, fmt.Errorf("%s: value %s: want a number in [0, 1e15]", ev.key, clip(string(ev.e.Value))))
		return
	}
	if v < 1 || v != math.Trunc(v) || (ev.key != "train_samples" && v > maxCount) {
		want := "a whole number >= 1"
		if ev.key != "train_samples" {
			want = "a whole number from 1 to 2^31"
		}
		m.bad(ev, fmt.Errorf("%s: value %s: want %s", ev.key, clip(string(ev.e.Value)), want))
		return
	}
	switch ev.key {
	case "global_batch_size":
		m.globalBatch = v
	case "d_batch_size":
		m.deviceBatch = v
	case "gradient_accumulation_steps":
		m.accumulation = v
	default:
		m.trainSamples = v
	}
}

// runStart starts a run, finishing the one started before it.
func (m *mlReader) runStart(ev mlLine) {
	if m.run.started {
		m.finish()
		m.run = newMLRun()
		m.run.last = ev.n
	}
	m.run.started, m.run.startMS, m.run.startLine = true, ev.t, ev.n
}

// runStop finishes the run, or refuses it without a run_start before the
// stop.
func (m *mlReader) runStop(ev mlLine) {
	run := m.run
	if !run.started {
		m.bad(ev, errors.New("run_stop with no run_start before it: run refused (a later run_start starts another run)"))
		m.run = nil
		return
	}
	if ev.t <= run.startMS {
		m.bad(ev, fmt.Errorf("run_stop at line %d (%s ms) is not after run_start at line %d (%s ms): run refused",
			ev.n, msText(ev.t), run.startLine, msText(run.startMS)))
		m.run = nil
		return
	}
	run.stopped, run.stopMS, run.stopLine = true, ev.t, ev.n
	run.status = jsonString(ev.e.Metadata["status"])
	m.finish()
}

// epoch times an epoch from its epoch_start to its epoch_stop.
func (m *mlReader) epoch(ev mlLine) {
	run, t := m.run, ev.t
	k, _ := ev.meta("epoch_num")
	if ev.key == "epoch_start" {
		run.epochStart[k] = t
		return
	}
	s, ok := run.epochStart[k]
	if !ok {
		return
	}
	delete(run.epochStart, k)
	if t <= s {
		m.bad(ev, fmt.Errorf("epoch %v stops at %s ms, not after its epoch_start at %s ms", k, msText(t), msText(s)))
		return
	}
	run.epochs = append(run.epochs, mlInterval{line: ev.n, first: k, ms: t - s, epochs: 1})
}

// block times a block of epochs from its block_start to the first
// eval_start inside it, or to its block_stop.
func (m *mlReader) block(ev mlLine) {
	run, t := m.run, ev.t
	switch ev.key {
	case "block_start":
		k, _ := ev.meta("first_epoch_num")
		c, ok := ev.meta("epoch_count")
		if !ok || !(c > 0) || c > 1e6 {
			c = 1
		}
		run.blockStart[k], run.blockCount[k] = t, c
		delete(run.blockEval, k)
		return
	case "eval_start":
		for k, s := range run.blockStart { // the open block, if any
			if _, ok := run.blockEval[k]; !ok && t > s {
				run.blockEval[k] = t
			}
		}
		return
	}
	k, _ := ev.meta("first_epoch_num")
	s, ok := run.blockStart[k]
	if !ok {
		return
	}
	delete(run.blockStart, k)
	if t <= s {
		m.bad(ev, fmt.Errorf("block of epoch %v stops at %s ms, not after its block_start at %s ms", k, msText(t), msText(s)))
		return
	}
	if e, ok := run.blockEval[k]; ok && e < t {
		t = e // the block's training ends where its evaluation starts
	}
	run.blocks = append(run.blocks, mlInterval{line: ev.n, first: k, ms: t - s, epochs: run.blockCount[k]})
}

// accuracy takes the run's accuracy, a fraction, or a percentage (BLEU
// for the translation benchmarks) noted once a run.
func (m *mlReader) accuracy(ev mlLine) {
	run := m.run
	v, ok := jsonNumber(ev.e.Value)
	if !ok || v < 0 {
		m.bad(ev, fmt.Errorf("eval_accuracy: value %s: want a number >= 0", clip(string(ev.e.Value))))
		return
	}
	if v > 1 && v <= 100 && !run.pctNoted {
		if m.bench == "transformer" || m.bench == "gnmt" {
			// The translation benchmarks log BLEU, which a bench log's
			// fraction holds as BLEU/100.
			m.lg.notef("line %d: eval_accuracy %v is BLEU, recorded as BLEU/100", ev.n, v)
		} else {
			m.lg.notef("line %d: eval_accuracy %v read as percent", ev.n, v)
		}
		run.pctNoted = true
	}
	if v = fraction(v); v <= 1 {
		run.accuracy, run.haveAcc = v, true
	}
}

// mlDevices is how a run's global batch splits: workers devices of batch
// samples, accumulate micro-batches a step; all 0 where the log does not
// say.
type mlDevices struct {
	workers, batch, accumulate int
}

// finishRun turns the events of one run into a Run, a measurement record
// per timed epoch (or block) and a convergence record.
func (m *mlReader) finishRun(r *mlRun) {
	lg := m.lg
	id := strconv.Itoa(len(lg.Runs) + 1)
	intervals, epochs := m.intervals(r, id)
	if !r.started && !r.stopped && len(intervals) == 0 {
		return // only settings, no run
	}
	run := m.runOf(r, id, epochs)
	lg.Runs = append(lg.Runs, run)
	dev := m.devices(id)
	samples, ok := m.epochSamples(id, len(intervals))
	if !ok {
		return
	}
	var steps float64
	gb := m.globalBatch
	for _, iv := range intervals {
		n := iv.epochs * samples
		sps := n / (iv.ms / 1000)
		steps += gb / sps
		lg.addValid(benchlog.Record{
			Kind: benchlog.KindMeasurement, Run: id, Model: m.model, Device: m.device,
			Workers: dev.workers, Batch: dev.batch, Accumulate: dev.accumulate,
			GlobalBatch: run.GlobalBatch, Steps: int(math.Round(n / gb)),
			StepTime: gb / sps, SamplesPerSec: sps, Labels: m.copyLabels(),
		}, iv.line, nil)
	}
	lg.Runs[len(lg.Runs)-1].StepTime = units.Seconds(steps / float64(len(intervals)))
	if r.stopped && epochs > 0 {
		lg.addValid(benchlog.Record{
			Kind: benchlog.KindConvergence, Run: id, Model: m.model, Device: m.device,
			Workers: dev.workers, Batch: dev.batch, Accumulate: dev.accumulate, GlobalBatch: run.GlobalBatch, Accuracy: run.Accuracy, Reached: r.status == "success",
			StepsToTarget: max(1, int(math.Round(epochs*samples/gb))), Labels: m.copyLabels(),
		}, r.stopLine, nil)
	}
}

// intervals returns the timed intervals of run id, its epochs or, when
// it has none or they were stamped as queued (queuedCoverage), its
// blocks, and the epochs they cover.
func (m *mlReader) intervals(r *mlRun, id string) ([]mlInterval, float64) {
	intervals := r.epochs
	if len(intervals) == 0 {
		intervals = r.blocks
	} else if c, ok := r.coverage(); ok && c < queuedCoverage {
		m.lg.notef("run %s: its epochs sum to %.0f%% of their blocks' training time (block_start to eval_start): stamped as they were queued, not as they ran; samples/s per block instead", id, 100*c)
		intervals = r.blocks
	}
	var epochs float64
	for _, iv := range intervals {
		epochs += iv.epochs
	}
	return intervals, epochs
}

// runOf returns the Run of r, run id, of epochs epochs.
func (m *mlReader) runOf(r *mlRun, id string, epochs float64) Run {
	run := Run{Line: r.last, Run: id, Model: m.model, Benchmark: m.bench, Device: m.device, GlobalBatch: int(math.Round(m.globalBatch)), Epochs: epochs, Status: r.status}
	if r.haveAcc {
		run.Accuracy = r.accuracy
	}
	if r.stopped {
		run.Line = r.stopLine
	}
	if r.started && r.stopped && r.stopMS >= r.startMS {
		run.TimeToTrain = units.Seconds((r.stopMS - r.startMS) / 1000)
	}
	return run
}

// devices splits the global batch of run id by d_batch_size, or by the
// IPU count of a Graphcore platform's name (podDevices), noting where
// neither divides it.
func (m *mlReader) devices(id string) mlDevices {
	var d mlDevices
	gb, db, a := m.globalBatch, m.deviceBatch, max(m.accumulation, 1)
	switch n, pod := podDevices(m.device); {
	case db >= 1 && gb >= 1:
		if w := gb / (db * a); w >= 1 && w == math.Trunc(w) {
			d.workers, d.batch = int(w), int(db)
		} else {
			per := fmt.Sprintf("d_batch_size %v", db)
			if a > 1 {
				per += fmt.Sprintf(" times gradient_accumulation_steps %v", a)
			}
			m.lg.notef("run %s: %s does not divide global_batch_size %v: device count unknown", id, per, gb)
		}
	case pod && gb >= 1:
		if b := gb / (float64(n) * a); b >= 1 && b == math.Trunc(b) {
			d.workers, d.batch = n, int(b)
			m.lg.notef("run %s: %d devices, from the platform's name %s (Graphcore names its systems by their IPU count), %d samples each per micro-batch", id, n, m.device, d.batch)
		} else {
			m.lg.notef("run %s: %d devices (platform %s) times gradient_accumulation_steps %v do not divide global_batch_size %v: device count unknown", id, n, m.device, a, gb)
		}
	}
	if d.workers > 0 && a > 1 {
		d.accumulate = int(a)
	}
	return d
}

// epochSamples returns the samples of an epoch of run id, of intervals
// timed intervals: train_samples, or the benchmark's training set
// (mlperfTrainSamples), noted. ok is false, with a note, where the run's
// samples/s cannot be computed.
func (m *mlReader) epochSamples(id string, intervals int) (float64, bool) {
	switch {
	case intervals == 0:
		return 0, false
	case m.globalBatch < 1:
		m.lg.notef("run %s: no global_batch_size: samples/s per epoch not computed", id)
		return 0, false
	case m.trainSamples < 1:
		n, set := mlperfTrainSamples(m.bench)
		if n == 0 {
			m.lg.notef("run %s: no train_samples: samples/s per epoch not computed", id)
			return 0, false
		}
		m.lg.notef("run %s: no train_samples: %d assumed, the %s training set of MLPerf %s", id, n, set, m.bench)
		return float64(n), true
	}
	return m.trainSamples, true
}

// copyLabels returns a copy of the submission's labels; nil for none.
func (m *mlReader) copyLabels() map[string]string {
	if len(m.labels) == 0 {
		return nil
	}
	return maps.Clone(m.labels)
}

// coverage returns the share of its blocks' training time that the run's
// epochs inside those blocks sum to, over the blocks that hold an epoch;
// false when no block holds one. The epochs are sorted by number and
// summed by prefix, so that a log of many blocks and epochs costs
// O((blocks + epochs) log epochs).
func (r *mlRun) coverage() (float64, bool) {
	eps := slices.Clone(r.epochs)
	slices.SortFunc(eps, func(a, b mlInterval) int { return cmp.Compare(a.first, b.first) })
	sum := make([]float64, len(eps)+1) // sum[i]: the first i epochs' time
	for i, e := range eps {
		sum[i+1] = sum[i] + e.ms
	}
	from := func(num float64) int {
		i, _ := slices.BinarySearchFunc(eps, num, func(e mlInterval, n float64) int { return cmp.Compare(e.first, n) })
		return i
	}
	var epochs, blocks float64
	for _, b := range r.blocks {
		if lo, hi := from(b.first), from(b.first+b.epochs); hi > lo {
			epochs += sum[hi] - sum[lo]
			blocks += b.ms
		}
	}
	return epochs / blocks, blocks > 0
}

// podDevices returns N for a submission_platform of the form "POD<N>",
// "IPU-POD<N>" or "Bow-POD<N>" (any case): Graphcore's MLPerf logs name
// their system so and print no d_batch_size, and an IPU-POD<N> is N IPUs
// (Graphcore's IPU-POD datasheets), so the name gives the device count.
func podDevices(platform string) (int, bool) {
	p := strings.ToLower(platform)
	for _, pre := range []string{"ipu-", "bow-"} {
		p = strings.TrimPrefix(p, pre)
	}
	rest, ok := strings.CutPrefix(p, "pod")
	if !ok || rest == "" || len(rest) > 6 {
		return 0, false
	}
	if rest[0] == '0' || strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return 0, false
	}
	n, _ := strconv.Atoi(rest) // six digits or fewer
	return n, true
}

// msText writes a time in milliseconds since the epoch in full.
func msText(ms float64) string { return strconv.FormatFloat(ms, 'f', -1, 64) }

// jsonNumber reads a JSON number, or a string holding one.
func jsonNumber(raw json.RawMessage) (float64, bool) {
	var v float64
	if err := json.Unmarshal(raw, &v); err == nil {
		return v, true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if v, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
			return v, true
		}
	}
	return 0, false
}

// jsonString reads a JSON string, or the text of another scalar.
func jsonString(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	if v, ok := jsonNumber(raw); ok {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}
