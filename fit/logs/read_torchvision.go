package logs

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"scaleplan/internal/benchlog"
	"scaleplan/internal/units"
)

// Lines of torchvision's reference training scripts (references/
// classification, detection, segmentation and video_classification:
// train.py with utils.MetricLogger). A torchrun or Slurm prefix before
// them ("[default0]:", "0: ") is allowed.
var (
	tvEpochLine = regexp.MustCompile(`Epoch: \[(\d+)\]\s+\[\s*(\d+)/(\d+)\]`)
	tvEpochEnd  = regexp.MustCompile(`Epoch: \[(\d+)\] Total time: (.+?)\s*$`)
	tvAccuracy  = regexp.MustCompile(`(?:^|\s)(?:\*|Test:)\s+(EMA\s+)?Acc@1 (\S+) Acc@5 (\S+)`)
	tvTrainTime = regexp.MustCompile(`Training time (.+?)\s*$`)
	tvDistInit  = regexp.MustCompile(`\| distributed init \(rank (\d+)\)`)
	tvCOCOAP    = regexp.MustCompile(`Average Precision\s+\(AP\) @\[ IoU=0\.50:0\.95 \| area=\s*all \| maxDets=\s*\d+ \] = (\S+)`)
	tvDuration  = regexp.MustCompile(`^(?:(\d+) days?, )?(\d+):(\d{2}):(\d{2}(?:\.\d+)?)$`)

	tvArgInt  = func(name string) *regexp.Regexp { return regexp.MustCompile(`[(,\s]` + name + `=(\d+)[,)]`) }
	tvArgStr  = func(name string) *regexp.Regexp { return regexp.MustCompile(`[(,\s]` + name + `='([^']*)'`) }
	tvArgBool = func(name string) *regexp.Regexp { return regexp.MustCompile(`[(,\s]` + name + `=(True|False)[,)]`) }

	tvBatch       = tvArgInt("batch_size")
	tvWorld       = tvArgInt("world_size")
	tvModel       = tvArgStr("model")
	tvDevice      = tvArgStr("device")
	tvAMP         = tvArgBool("amp")
	tvApex        = tvArgBool("apex")
	tvDistributed = tvArgBool("distributed")
)

// FrameworkLabel is the label that names a record's training program,
// as a CSV's framework column does: validate predicts the record with
// that program's operators (model.Shape.Framework).
const FrameworkLabel = "framework"

// TorchvisionFramework is the framework the torchvision reader gives its
// records: the reference scripts run torchvision's own models in eager
// PyTorch, so that a detection log's Mask R-CNN is torchvision's, not
// maskrcnn-benchmark's (model/ops_detect_tv.go).
const TorchvisionFramework = "torchvision"

// TorchvisionWindow is the number of iterations whose mean time a
// torchvision MetricLogger line prints (its SmoothedValue's default window,
// the same in every release of the references). The reader measures an
// epoch from the lines whose window starts after the epoch's first
// iteration, which carries the data loader's start and cuDNN's autotuning.
const TorchvisionWindow = 20

// torchvisionModel returns the catalogue's name (model/profiles) for a
// torchvision model name, or the name itself when the catalogue has no
// model of that name.
func torchvisionModel(name string) string {
	switch name {
	case "efficientnet_b4":
		return "efficientnet-b4"
	case "maskrcnn_resnet50_fpn":
		return "maskrcnn-r50-fpn"
	}
	return name
}

// readTorchvision reads the output of torchvision's reference training
// scripts (train.py under references/), as rank 0 prints it:
//
//	Namespace(..., batch_size=32, ..., model='resnet50', ..., world_size=8, ...)
//	Epoch: [0]  [  20/5005]  eta: ...  lr: 0.1  img/s: ...  loss: ...  time: 0.1931  data: 0.0012  max mem: 10163
//	Epoch: [0] Total time: 0:16:25
//	Test:  Acc@1 23.456 Acc@5 47.890        (older releases: " * Acc@1 ... Acc@5 ...")
//	Training time 1 day, 2:03:04
//
// The Namespace line (print(args)) gives the batch per process, the model,
// the device, the precision (amp or apex: amp-fp16, autocast to float16 as
// torchbench names it; otherwise fp32) and the
// world size (processes, one per device; 1 when distributed=False; the
// "| distributed init (rank N)" lines when the Namespace has none). Each
// "Epoch: [e]  [i/N]" line prints the mean time of the last
// TorchvisionWindow iterations (time:, data loading included) and of their
// wait for data (data:). Each epoch gives a measurement record: the step
// time is the mean of its lines whose window lies past the first
// iteration (i ≥ TorchvisionWindow), its steps the iterations those
// windows cover, the samples/s world × batch over the step time,
// the data wait the mean of the same lines' data:, the peak memory the
// largest max mem (MiB). Each Namespace line starts a run (Log.Runs): its
// epochs are the "Total time" lines, its accuracy the last evaluation's
// (classification: Acc@1, not the EMA model's; detection: the COCO box AP
// at IoU 0.50:0.95 after "IoU metric: bbox"; segmentation: "mean IoU"),
// its time to train "Training time", and its status
// "finished" once that line is read, its Evals each evaluation after the steps
// (the N of "[i/N]") of the epochs closed before it. The logs name no
// target accuracy, so they give no convergence record; fit.Options.Target
// makes one of each run's Evals. Other lines (data loading, warnings, the
// Test: progress) are skipped.
func readTorchvision(data []byte, lg *Log) {
	v := &tvReader{lg: lg}
	lines(data, v.line)
	v.flushRun()
}

// tvEpoch is what the training lines of an epoch said.
type tvEpoch struct {
	n              int     // epoch number
	line           int     // line of its last training line
	steps, wait    float64 // sums of the used lines' time: and data:
	used           int     // lines used
	covered        int     // iterations in the union of their windows
	last           int     // iteration of the last used line
	peak           float64 // bytes
	iterations     int     // N of its "[i/N]"
	closed, active bool
}

// tvRun is what the lines of a run of train.py said.
type tvRun struct {
	line                 int
	id                   string
	model, device, prec  string
	logged               string // model name as logged
	batch, world, ranks  int
	worldGiven           bool
	epochs               int
	accuracy             float64
	ttt                  units.Seconds
	finished, namespaced bool
	steps                int // optimizer steps of the epochs closed so far
	evals                []Eval
	stepSum, waitSum     float64 // over its measured epochs
	measured             int
}

// tvReader is the state of readTorchvision.
type tvReader struct {
	lg  *Log
	cur tvRun
	ep  tvEpoch
	// ranks is one more than the largest rank of the "distributed init"
	// lines since the last Namespace line: each process prints one before
	// rank 0 prints its arguments.
	ranks int
	// cocoIoU is the IoU type of the COCO summary being printed ("IoU
	// metric: bbox"), until its box AP at IoU 0.50:0.95 is read.
	cocoIoU string
}

// line reads line n of a train.py log.
func (v *tvReader) line(n int, l []byte) {
	s := strings.TrimRight(string(l), " \t\r")
	switch {
	case strings.Contains(s, "Namespace(") && tvBatch.MatchString(s):
		v.namespace(n, l, s)
	case strings.Contains(s, "distributed init") && tvDistInit.MatchString(s):
		if r, err := strconv.Atoi(tvDistInit.FindStringSubmatch(s)[1]); err == nil {
			v.ranks = max(v.ranks, r+1)
		}
	case strings.Contains(s, "Total time:") && tvEpochEnd.MatchString(s):
		v.epochEnd(n, l, s)
	case strings.Contains(s, "Epoch: ["):
		v.train(n, l, s)
	case strings.Contains(s, "Acc@1") && tvAccuracy.MatchString(s):
		if m := tvAccuracy.FindStringSubmatch(s); m[1] == "" { // else the EMA model's
			v.evaluated(n, l, "Acc@1", m[2], 100)
		}
	case strings.HasPrefix(strings.TrimSpace(s), "IoU metric: "):
		v.cocoIoU = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "IoU metric: "))
	case v.cocoIoU == "bbox" && tvCOCOAP.MatchString(s):
		v.cocoIoU = "" // the first AP of the box summary; the rest are at other IoUs and areas
		v.evaluated(n, l, "box AP", tvCOCOAP.FindStringSubmatch(s)[1], 1)
	case strings.HasPrefix(s, "mean IoU: "):
		v.evaluated(n, l, "mean IoU", strings.TrimSpace(strings.TrimPrefix(s, "mean IoU: ")), 100)
	case strings.Contains(s, "Training time") && tvTrainTime.MatchString(s):
		d, err := tvParseDuration(tvTrainTime.FindStringSubmatch(s)[1])
		if err != nil {
			v.lg.malformed(n, l, err)
			return
		}
		v.flushEpoch(v.ep.line, nil)
		v.cur.ttt, v.cur.finished = d, true
	}
}

// namespace starts a run at its Namespace line, print(args).
func (v *tvReader) namespace(n int, l []byte, s string) {
	v.flushRun()
	v.cur = tvRun{line: n, id: strconv.Itoa(len(v.lg.Runs) + 1), namespaced: true, prec: "fp32", ranks: v.ranks}
	v.ranks = 0
	cur := &v.cur
	var bad []error
	b, err := parseCount("batch_size", tvBatch.FindStringSubmatch(s)[1])
	bad = append(bad, err)
	cur.batch = b
	if m := tvWorld.FindStringSubmatch(s); m != nil {
		w, err := parseCount("world_size", m[1])
		bad = append(bad, err)
		cur.world, cur.worldGiven = w, true
	}
	if m := tvDistributed.FindStringSubmatch(s); m != nil && m[1] == "False" {
		cur.world, cur.worldGiven = 1, true
	}
	if m := tvModel.FindStringSubmatch(s); m != nil {
		cur.logged = m[1]
		cur.model = torchvisionModel(m[1])
	}
	if m := tvDevice.FindStringSubmatch(s); m != nil {
		switch d := m[1]; {
		case strings.HasPrefix(d, "cuda"):
			cur.device = "GPU"
		case d == "cpu":
			cur.device = "CPU"
		default:
			cur.device = d
		}
	}
	for _, re := range []*regexp.Regexp{tvAMP, tvApex} {
		if m := re.FindStringSubmatch(s); m != nil && m[1] == "True" {
			cur.prec = "amp-fp16"
		}
	}
	if err := oneLine(bad); err != nil {
		// Its epochs are malformed for want of a batch, and the run is
		// not listed.
		v.lg.malformed(n, l, err)
		cur.batch, cur.namespaced = 0, false
	}
}

// epochEnd closes an epoch at its "Total time" line.
func (v *tvReader) epochEnd(n int, l []byte, s string) {
	m := tvEpochEnd.FindStringSubmatch(s)
	e, _ := strconv.Atoi(m[1])
	if _, err := tvParseDuration(m[2]); err != nil {
		v.lg.malformed(n, l, err)
		return
	}
	v.cur.epochs++
	if v.ep.active && v.ep.n == e {
		v.cur.steps += v.ep.iterations
		v.ep.closed = true
		v.flushEpoch(n, l)
	}
}

// train reads a training line, "Epoch: [e]  [i/N] ... time: T  data: D".
func (v *tvReader) train(n int, l []byte, s string) {
	m := tvEpochLine.FindStringSubmatch(s)
	if m == nil {
		return
	}
	e, _ := strconv.Atoi(m[1])
	i, _ := strconv.Atoi(m[2])
	total, _ := strconv.Atoi(m[3])
	step, wait, err := tvStepTimes(s, i, total)
	if err != nil {
		v.lg.malformed(n, l, err)
		return
	}
	if v.ep.active && v.ep.n != e {
		v.flushEpoch(v.ep.line, nil)
	}
	if !v.ep.active {
		v.ep = tvEpoch{n: e, active: true, iterations: total}
	}
	v.ep.line = n
	if mm, ok := tvField(s, " max mem: "); ok {
		if mib, err := strconv.ParseFloat(mm, 64); err == nil && mib >= 0 && mib < 1e15 {
			v.ep.peak = max(v.ep.peak, mib*(1<<20))
		}
	}
	v.ep.add(i, step, wait)
}

// tvStepTimes returns the time: and data: of a training line at
// iteration i of total.
func tvStepTimes(s string, i, total int) (step, wait float64, err error) {
	tm := tvTimeData(s)
	if tm == nil {
		return 0, 0, fmt.Errorf("want %q", "Epoch: [e]  [i/N]  ...  time: T  data: D")
	}
	if step, err = positive(tm, 1); err != nil {
		return 0, 0, fmt.Errorf("time: %w", err)
	}
	if wait, err = nonNegative(tm, 2); err != nil {
		return 0, 0, fmt.Errorf("data: %w", err)
	}
	if i >= total {
		return 0, 0, fmt.Errorf("iteration %d of %d", i, total)
	}
	return step, wait, nil
}

// add takes the step and data times of a line at iteration i past the
// first window into the epoch's means.
func (ep *tvEpoch) add(i int, step, wait float64) {
	if i < TorchvisionWindow {
		return
	}
	if ep.used == 0 {
		ep.covered = TorchvisionWindow
	} else {
		ep.covered += min(TorchvisionWindow, max(0, i-ep.last))
	}
	ep.steps += step
	ep.wait += wait
	ep.last = i
	ep.used++
}

// evaluated records an evaluation's accuracy, text in units of scale
// (100: a percentage, 1: a fraction), as the run's accuracy and, after a
// closed epoch, as one of its Evals.
func (v *tvReader) evaluated(n int, l []byte, what, text string, scale float64) {
	x, err := strconv.ParseFloat(text, 64)
	if err != nil || !(x >= 0 && x <= scale) {
		v.lg.malformed(n, l, fmt.Errorf("%s %s: want a number from 0 to %g", what, quote(text), scale))
		return
	}
	v.cur.accuracy = x / scale
	if v.cur.steps > 0 {
		v.cur.evals = append(v.cur.evals, Eval{Line: n, Steps: v.cur.steps, Accuracy: x / scale})
	}
}

// workers returns the run's processes: its world_size, else the ranks
// of its "distributed init" lines, else 1.
func (r *tvRun) workers() int {
	switch {
	case r.worldGiven:
		return r.world
	case r.ranks > 0:
		return r.ranks
	}
	return 1
}

// flushEpoch turns the epoch, if any, into a measurement record at
// endLine, of text.
func (v *tvReader) flushEpoch(endLine int, text []byte) {
	ep, cur := &v.ep, &v.cur
	if !ep.active {
		return
	}
	defer func() { v.ep = tvEpoch{} }()
	if ep.used == 0 {
		v.lg.notef("line %d: run %s, epoch %d: no training line past iteration %d (the first window holds the epoch's first iteration): not measured",
			ep.line, cur.id, ep.n, TorchvisionWindow-1)
		return
	}
	if cur.batch == 0 {
		v.lg.malformed(endLine, text, fmt.Errorf("epoch %d: no Namespace line (print(args)) with a batch_size of at least 1 before it", ep.n))
		return
	}
	if !ep.closed {
		v.lg.notef("line %d: run %s, epoch %d: no \"Total time\" line follows (the log ends or moves on): measured from its %d lines", ep.line, cur.id, ep.n, ep.used)
	}
	w := cur.workers()
	st, wait := ep.steps/float64(ep.used), ep.wait/float64(ep.used)
	cur.stepSum += st
	cur.waitSum += wait
	cur.measured++
	v.lg.addValid(benchlog.Record{
		Kind: benchlog.KindMeasurement, Run: cur.id, Model: cur.model, Device: cur.device, Precision: cur.prec,
		Workers: w, Batch: cur.batch, GlobalBatch: cur.batch * w,
		Steps: ep.covered, StepTime: st,
		SamplesPerSec: float64(cur.batch*w) / st,
		Phases:        &benchlog.Phases{DataWait: wait},
		PeakMemory:    ep.peak,
		Labels:        map[string]string{FrameworkLabel: TorchvisionFramework},
	}, endLine, text)
}

// flushRun turns the run, if it had a Namespace line, into a Run.
func (v *tvReader) flushRun() {
	v.flushEpoch(v.ep.line, nil)
	cur := &v.cur
	if !cur.namespaced {
		return
	}
	if !cur.worldGiven && cur.ranks == 0 {
		v.lg.notef("line %d: run %s: the Namespace line has no world_size and no \"distributed init\" line follows: 1 process assumed", cur.line, cur.id)
	}
	status := ""
	if cur.finished {
		status = "finished"
	}
	w := cur.workers()
	run := Run{
		Line: cur.line, Run: cur.id, Model: cur.model, Benchmark: cur.logged,
		Device: fmt.Sprintf("%dx%s", w, cmp.Or(cur.device, "?")), GlobalBatch: cur.batch * w,
		Epochs: float64(cur.epochs), Accuracy: cur.accuracy, Status: status, TimeToTrain: cur.ttt,
		Evals: cur.evals,
	}
	if cur.measured > 0 {
		run.StepTime = units.Seconds(cur.stepSum / float64(cur.measured))
		run.DataWait = units.Seconds(cur.waitSum / float64(cur.measured))
	}
	v.lg.Runs = append(v.lg.Runs, run)
}

// tvTimeData returns {line, T, D} for a training line's "time: T" and
// the "data: D" after it, or nil: what the pattern `\s time: (\S+)\s+data:
// (\S+)` would match, without a regular expression for every line of a
// long log.
func tvTimeData(s string) []string {
	i := strings.Index(s, " time: ")
	if i < 1 || !isSpace(s[i-1]) {
		return nil
	}
	t, _ := tvField(s[i:], " time: ")
	rest := s[i+len(" time: ")+len(t):]
	if len(rest) == 0 || !isSpace(rest[0]) {
		return nil
	}
	rest = strings.TrimLeft(rest, " \t")
	if !strings.HasPrefix(rest, "data: ") {
		return nil
	}
	d, _ := tvField(rest, "data: ")
	if t == "" || d == "" {
		return nil
	}
	return []string{s, t, d}
}

// tvField returns the text after the first key in s up to the next blank,
// and whether s has key.
func tvField(s, key string) (string, bool) {
	i := strings.Index(s, key)
	if i < 0 {
		return "", false
	}
	v := s[i+len(key):]
	if j := strings.IndexAny(v, " \t"); j >= 0 {
		v = v[:j]
	}
	return v, true
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// tvParseDuration parses Python's str(datetime.timedelta): "0:16:25",
// "1 day, 2:03:04", "3 days, 0:00:01".
func tvParseDuration(s string) (units.Seconds, error) {
	m := tvDuration.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("duration %s: want H:MM:SS or D days, H:MM:SS", quote(s))
	}
	var days int
	if m[1] != "" {
		days, _ = strconv.Atoi(m[1])
	}
	h, _ := strconv.Atoi(m[2])
	mins, _ := strconv.Atoi(m[3])
	sec, _ := strconv.ParseFloat(m[4], 64)
	if mins > 59 || sec >= 60 {
		return 0, fmt.Errorf("duration %s: minutes and seconds must be below 60", quote(s))
	}
	return units.Seconds(float64(days*86400+h*3600+mins*60) + sec), nil
}
