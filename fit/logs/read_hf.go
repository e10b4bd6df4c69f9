package logs

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"path"
	"regexp"
	"strconv"
	"strings"

	"scaleplan/internal/benchlog"
	"scaleplan/internal/units"
)

// Lines of the Hugging Face Trainer (transformers' Trainer, and the
// example scripts that run it: run_glue.py, run_clm.py, run_image_
// classification.py, ...). The header lines are logged at level info, so
// they may follow a logging prefix ("11/26/2026 07:00:00 - INFO -
// transformers.trainer - "); a launcher's prefix ("[default0]:", "0: ")
// may precede any line.
// hfHeader starts the Trainer's header.
const hfHeader = "***** Running training *****"

var (
	hfPerDevice  = regexp.MustCompile(`Instantaneous batch size per device = ([\d,]+)\s*$`)
	hfTotal      = regexp.MustCompile(`Total train batch size \(w\. parallel, distributed & accumulation\) = ([\d,]+)\s*$`)
	hfAccumulate = regexp.MustCompile(`Gradient Accumulation steps = ([\d,]+)\s*$`)
	hfMaxSteps   = regexp.MustCompile(`Total optimization steps = ([\d,]+)\s*$`)
	hfEpochs     = regexp.MustCompile(`Num Epochs = ([\d,]+)\s*$`)
	hfResumed    = regexp.MustCompile(`Continuing training from global step (\d+)\s*$`)
	hfProcess    = regexp.MustCompile(`Process rank: -?\d+, device: ([A-Za-z]+)`)
	hfNameOrPath = regexp.MustCompile(`^\s*"_name_or_path": "([^"]+)"`)
	hfPrecision  = regexp.MustCompile(`(?:^|[\s(,])(fp16|bf16)=(True|False)(?:[,)]|\s*$)`)
	hfNumber     = regexp.MustCompile(`^(?:np\.)?(?:float|int)(?:16|32|64)?\((.*)\)$`)
)

// readHFTrainer reads the console output of the Hugging Face Trainer, as
// its main process prints it:
//
//	***** Running training *****
//	  Num examples = 60,000
//	  Num Epochs = 3
//	  Instantaneous batch size per device = 32
//	  Total train batch size (w. parallel, distributed & accumulation) = 128
//	  Gradient Accumulation steps = 1
//	  Total optimization steps = 1,407
//	{'loss': 0.5412, 'grad_norm': 3.21, 'learning_rate': 3.3e-05, 'epoch': 1.07}
//	{'eval_loss': 0.31, 'eval_accuracy': 0.912, 'eval_runtime': 4.51, 'eval_samples_per_second': 2217.3, 'eval_steps_per_second': 17.7, 'epoch': 1.0}
//	{'train_runtime': 512.7, 'train_samples_per_second': 351.1, 'train_steps_per_second': 2.744, 'train_loss': 0.402, 'epoch': 3.0}
//
// The dictionaries are Python's repr of the Trainer's logs (newer
// releases print their numbers as strings of four digits, '0.5412', and
// some add the 'step'; numpy numbers print as np.float64(0.912)). Each
// header starts a run, and so does a training dictionary after a finished
// run or before any header. A run's devices are the data-parallel
// replicas, total batch / (batch per device × accumulation): with
// nn.DataParallel, each of a process's GPUs (the Trainer counts them in
// the total, not in the batch per device); with tensor or pipeline
// parallelism each replica spans several devices, which the log does not
// say. Its time to train is train_runtime, which the Trainer measures
// from the header to the end of its loop; its measurement record's step
// time is that time less the evaluations during training (their
// eval_runtime), over the steps it ran: to the final dictionary's 'step'
// where it prints one (a run stopped early ends before the header's
// total), else to the total optimization steps, from the global step it
// resumed from. Checkpoint saving, logging and the first steps' warm-up
// stay in it: it is the mean step of the whole run, not of its steady
// state. Its evaluations are the dictionaries with
// an eval_accuracy (a fraction), each after its 'step', or, where the
// log prints none, after epoch × the run's steps per epoch (the
// optimization steps over the last dictionary's epoch, to within the
// rounding of the printed epoch). Evaluations after train_runtime
// (trainer.evaluate()) give the run's accuracy only. The device kind is
// the example scripts' "Process rank: 0, device: cuda:0" (cuda is GPU),
// the precision their TrainingArguments' fp16 and bf16 (autocast:
// amp-fp16, amp-bf16; both False: fp32; no TrainingArguments: unknown),
// the model the last element of the model configuration's "_name_or_path"
// (hfModel; Run.Benchmark keeps it as logged).
// Without a header the Trainer logged below level info: the run is
// listed, but gives no measurement, for want of its batch.
func readHFTrainer(data []byte, lg *Log) {
	h := &hfReader{lg: lg}
	lines(data, func(n int, l []byte) {
		s := hfSegment(l)
		if h.setting(n, l, s) {
			return
		}
		h.precision(s)
		h.dict(n, l, s)
	})
	h.flush()
}

// hfEval is an evaluation of a Trainer run as logged.
type hfEval struct {
	line     int
	step     int // the dictionary's 'step'; -1 if it has none
	epoch    float64
	accuracy float64
}

// hfRun is what the lines of a Trainer run said.
type hfRun struct {
	line                         int
	id                           string
	headed, final                bool
	perDevice, total, accumulate int
	maxSteps, epochs, resumed    int
	headerErr                    error
	model, logged, device, prec  string
	evals                        []hfEval
	evalTime                     float64
	evalCount                    int
	runtime, lastEpoch           float64
	finalLine, finalStep         int     // finalStep: the final dictionary's 'step'; 0 if it prints none
	accuracy                     float64 // the last evaluation's
	active                       bool
}

// hfReader is the state of readHFTrainer: the run it is in, and what the
// lines before a run said, which the run takes when it starts.
type hfReader struct {
	lg                          *Log
	cur                         hfRun
	model, logged, device, prec string
}

// start starts a run at line n, headed if at the Trainer's header.
func (h *hfReader) start(n int, headed bool) {
	h.cur = hfRun{line: n, id: strconv.Itoa(len(h.lg.Runs) + 1), headed: headed, model: h.model, logged: h.logged, device: h.device, prec: h.prec, active: true}
}

// setting reads a line of the header or of the settings printed before
// a run; it reports whether the line is done with.
func (h *hfReader) setting(n int, l []byte, s string) bool {
	cur := &h.cur
	switch {
	case strings.Contains(s, hfHeader):
		h.flush()
		h.start(n, true)
		return true
	case strings.Contains(s, " = ") && cur.headed && !cur.final:
		return h.headerLine(n, l, s)
	case strings.Contains(s, "Continuing training from global step"):
		if m := hfResumed.FindStringSubmatch(s); m != nil && cur.active && !cur.final {
			if v, err := strconv.Atoi(m[1]); err == nil && v >= 0 && v <= maxCount {
				cur.resumed = v
			}
		}
		return true
	case strings.Contains(s, "Process rank: "):
		if m := hfProcess.FindStringSubmatch(s); m != nil {
			switch d := m[1]; d {
			case "cuda":
				h.device = "GPU"
			case "cpu":
				h.device = "CPU"
			default:
				h.device = d
			}
		}
		return true
	case strings.Contains(s, "TrainingArguments("):
		h.prec = "" // a new dump; its fp16 and bf16 follow, on this line or the next
	case strings.Contains(s, `"_name_or_path": `):
		if m := hfNameOrPath.FindStringSubmatch(s); m != nil {
			h.logged = m[1]
			h.model = hfModel(m[1])
		}
		return true
	}
	return false
}

// headerLine reads a "name = value" line of the header; it reports
// whether it was one.
func (h *hfReader) headerLine(n int, l []byte, s string) bool {
	cur := &h.cur
	if h.header(n, l, "batch size per device", hfPerDevice, s, &cur.perDevice) ||
		h.header(n, l, "total train batch size", hfTotal, s, &cur.total) ||
		h.header(n, l, "gradient accumulation steps", hfAccumulate, s, &cur.accumulate) ||
		h.header(n, l, "total optimization steps", hfMaxSteps, s, &cur.maxSteps) {
		return true
	}
	if m := hfEpochs.FindStringSubmatch(s); m != nil {
		// Streaming datasets print sys.maxsize: no epoch count.
		if v, err := strconv.Atoi(strings.ReplaceAll(m[1], ",", "")); err == nil && v >= 1 && v <= maxCount {
			cur.epochs = v
		}
		return true
	}
	return false
}

// header reads the count re finds in s into dst; it reports whether re
// matched.
func (h *hfReader) header(n int, l []byte, what string, re *regexp.Regexp, s string, dst *int) bool {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	v, err := parseCount(what, strings.ReplaceAll(m[1], ",", ""))
	if err != nil {
		h.lg.malformed(n, l, err)
		h.cur.headerErr = err
		return true
	}
	*dst = v
	return true
}

// precision reads fp16 and bf16 of a TrainingArguments dump.
func (h *hfReader) precision(s string) {
	for _, m := range hfPrecisionOf(s) {
		switch {
		case m[2] == "True":
			h.prec = "amp-" + m[1]
		case h.prec == "":
			h.prec = "fp32"
		}
	}
}

// hfNums reads the numbers of a logged dictionary, collecting what is
// malformed in bad.
type hfNums struct {
	d   map[string]string
	bad []error
}

// num returns the number at key, if d has one, and counts the line as
// malformed if it is not a finite number ≥ 0.
func (p *hfNums) num(key string) (float64, bool) {
	v, ok := p.d[key]
	if !ok {
		return 0, false
	}
	f, err := hfFloat(v)
	if err != nil || f < 0 || f > 1e300 {
		p.bad = append(p.bad, fmt.Errorf("%s %s: want a number of at least 0", key, quote(v)))
		return 0, false
	}
	return f, true
}

// dict reads a logged dictionary of training, evaluation or the run's
// end, starting a run where it is the first of one.
func (h *hfReader) dict(n int, l []byte, s string) {
	d, ok := hfDict(s)
	if !ok {
		return
	}
	_, training := d["loss"]
	_, evaluated := d["eval_runtime"]
	_, finished := d["train_runtime"]
	if !training && !evaluated && !finished {
		return
	}
	if !h.cur.active || (h.cur.final && (training || finished)) {
		if !training && !finished {
			return // an evaluation before any training (trainer.evaluate() first)
		}
		h.flush()
		h.start(n, false)
	}
	p := &hfNums{d: d}
	epoch, hasEpoch := p.num("epoch")
	step := -1
	if v, ok := p.num("step"); ok && v == math.Trunc(v) && v <= maxCount {
		step = int(v)
	}
	switch {
	case finished:
		ok = h.finished(n, l, p, step)
	case evaluated:
		ok = h.evaluated(n, l, p, step, epoch, hasEpoch)
	default:
		err := oneLine(p.bad)
		if ok = err == nil; !ok {
			h.lg.malformed(n, l, err)
		}
	}
	if ok && hasEpoch {
		h.cur.lastEpoch = epoch
	}
}

// finished reads the run's final dictionary; it reports whether it was
// well formed.
func (h *hfReader) finished(n int, l []byte, p *hfNums, step int) bool {
	rt, ok := p.num("train_runtime")
	if ok && rt == 0 {
		p.bad = append(p.bad, errors.New("train_runtime 0: want the seconds the run took"))
	}
	if err := oneLine(p.bad); err != nil {
		h.lg.malformed(n, l, err)
		return false
	}
	h.cur.final, h.cur.finalLine, h.cur.runtime = true, n, rt
	h.cur.finalStep = max(step, 0)
	return true
}

// evaluated reads an evaluation's dictionary; it reports whether it was
// well formed and during training.
func (h *hfReader) evaluated(n int, l []byte, p *hfNums, step int, epoch float64, hasEpoch bool) bool {
	cur := &h.cur
	rt, _ := p.num("eval_runtime")
	acc, hasAcc := p.num("eval_accuracy")
	if hasAcc && acc > 1 {
		p.bad = append(p.bad, fmt.Errorf("eval_accuracy %v: want a fraction from 0 to 1", acc))
	}
	if err := oneLine(p.bad); err != nil {
		h.lg.malformed(n, l, err)
		return false
	}
	if hasAcc {
		cur.accuracy = acc
	}
	if cur.final {
		return false // trainer.evaluate() after training: its accuracy only
	}
	cur.evalTime += rt
	cur.evalCount++
	if hasAcc && (hasEpoch || step >= 0) {
		cur.evals = append(cur.evals, hfEval{line: n, step: step, epoch: epoch, accuracy: acc})
	}
	return true
}

// flush turns the run, if any, into a Run and its measurement record.
func (h *hfReader) flush() {
	if !h.cur.active {
		return
	}
	r := &h.cur
	workers := h.workers(r)
	// last is the global step the run ended at: the final dictionary's
	// 'step' where it prints one (a run stopped early, by
	// EarlyStoppingCallback, ends before the header's total), else the
	// header's total.
	last := r.maxSteps
	if r.final && r.finalStep > 0 {
		last = r.finalStep
	}
	steps := last - r.resumed
	evals := h.evals(r, last)
	var step units.Seconds
	if r.final && workers > 0 && steps > 0 {
		step = h.measure(r, workers, last, steps)
	}
	if r.headed && !r.final {
		h.lg.notef("line %d: run %s: the log ends before its {'train_runtime': ...} line (a run cut off, or accelerate's no_trainer scripts, which print the same header): no time to train and no measurement",
			r.line, r.id)
	}
	if r.resumed > 0 && steps <= 0 && last > 0 {
		h.lg.malformed(r.line, []byte(hfHeader), fmt.Errorf("resumed from global step %d of %d: no step left to run", r.resumed, last))
	}
	h.lg.Runs = append(h.lg.Runs, r.out(workers, step, evals))
	h.cur = hfRun{}
}

// workers returns the data-parallel replicas of run r from its header,
// or 0, noting why, where the header does not give them.
func (h *hfReader) workers(r *hfRun) int {
	switch {
	case !r.headed:
		h.lg.notef("line %d: run %s: no %q header before it (the Trainer logs it at level info: TrainingArguments(log_level=\"info\"), --log_level info): its batch and devices are unknown, so it gives no measurement",
			r.line, r.id, hfHeader)
	case r.headerErr != nil:
		// Counted as malformed at the header's line.
	case r.perDevice == 0 || r.total == 0 || r.accumulate == 0 || r.maxSteps == 0:
		var missing []string
		for _, f := range []struct {
			name string
			v    int
		}{{"Instantaneous batch size per device", r.perDevice}, {"Total train batch size", r.total},
			{"Gradient Accumulation steps", r.accumulate}, {"Total optimization steps", r.maxSteps}} {
			if f.v == 0 {
				missing = append(missing, f.name)
			}
		}
		h.lg.malformed(r.line, []byte(hfHeader), fmt.Errorf("header without %s", strings.Join(missing, ", ")))
	case r.total%(r.perDevice*r.accumulate) != 0:
		h.lg.malformed(r.line, []byte(hfHeader), fmt.Errorf("total train batch size %d is not a multiple of batch per device %d × accumulation %d",
			r.total, r.perDevice, r.accumulate))
	default:
		return r.total / (r.perDevice * r.accumulate)
	}
	return 0
}

// evals returns the evaluations of run r, which ended at global step
// last, each after its 'step' or its epoch × the run's steps per epoch.
func (h *hfReader) evals(r *hfRun, last int) []Eval {
	perEpoch := 0.0 // optimization steps per epoch
	switch {
	case last > 0 && r.final && r.lastEpoch > 0:
		perEpoch = float64(last) / r.lastEpoch
	case r.maxSteps > 0 && r.epochs > 0:
		perEpoch = float64(r.maxSteps) / float64(r.epochs)
	}
	var evals []Eval
	for _, e := range r.evals {
		s := e.step
		if s < 0 {
			if perEpoch == 0 {
				continue
			}
			s = int(math.Round(e.epoch * perEpoch))
		}
		if s > 0 {
			evals = append(evals, Eval{Line: e.line, Steps: s, Accuracy: e.accuracy})
		}
	}
	if perEpoch == 0 && len(evals) < len(r.evals) {
		h.lg.notef("line %d: run %s: %d of its evaluations print no step, and the run has no steps per epoch (the header's optimization steps over its epochs): left out of its steps to target",
			r.line, r.id, len(r.evals)-len(evals))
	}
	return evals
}

// measure adds the measurement record of finished run r, of steps steps
// to global step last, and returns its step time; 0, with the line
// malformed, when its evaluations took all of its time.
func (h *hfReader) measure(r *hfRun, workers, last, steps int) units.Seconds {
	train := r.runtime - r.evalTime
	if !(train > 0) {
		h.lg.malformed(r.finalLine, nil, fmt.Errorf("train_runtime %g s is not more than its %d evaluations' eval_runtime, %g s", r.runtime, r.evalCount, r.evalTime))
		return 0
	}
	step := units.Seconds(train / float64(steps))
	if r.evalCount > 0 {
		h.lg.notef("line %d: run %s: its %d evaluations during training (%.4g s of its %.4g s train_runtime) are taken out of its step time; checkpoint saving and the first steps' warm-up are not",
			r.finalLine, r.id, r.evalCount, r.evalTime, r.runtime)
	}
	if r.resumed > 0 {
		h.lg.notef("line %d: run %s: resumed from global step %d: %d steps ran", r.finalLine, r.id, r.resumed, steps)
	}
	if last < r.maxSteps {
		h.lg.notef("line %d: run %s: stopped at global step %d of the header's %d (early stopping): %d steps ran", r.finalLine, r.id, last, r.maxSteps, steps)
	}
	h.lg.addValid(benchlog.Record{
		Kind: benchlog.KindMeasurement, Run: r.id, Model: r.model, Device: r.device, Precision: r.prec,
		Workers: workers, Batch: r.perDevice, GlobalBatch: r.total, Accumulate: r.accumulate,
		Steps: steps, StepTime: float64(step), SamplesPerSec: float64(r.total) / float64(step),
	}, r.finalLine, nil)
	return step
}

// out returns the Run of r, on workers replicas, of mean step step.
func (r *hfRun) out(workers int, step units.Seconds, evals []Eval) Run {
	dev := "?"
	if workers > 0 {
		dev = fmt.Sprintf("%dx%s", workers, cmp.Or(r.device, "?"))
	}
	out := Run{
		Line: r.line, Run: r.id, Model: r.model, Benchmark: r.logged, Device: dev,
		Epochs: r.lastEpoch, Accuracy: r.accuracy, StepTime: step, Evals: evals,
	}
	if workers > 0 {
		out.GlobalBatch = r.total
	}
	if r.final {
		out.Status, out.TimeToTrain = "finished", units.Seconds(r.runtime)
	}
	return out
}

// hfModel returns the catalogue's name (model/profiles) for a model's
// "_name_or_path", a Hub name or a directory: its last element, with
// the Hub's "resnet-50" (microsoft/resnet-50) as the catalogue's
// "resnet50".
func hfModel(nameOrPath string) string {
	name := path.Base(strings.TrimRight(nameOrPath, "/"))
	if name == "resnet-50" {
		return "resnet50"
	}
	return name
}

// isHFLog reports whether s is a dictionary the Trainer logs: its
// training log ('loss' and 'epoch'), an evaluation's ('eval_runtime') or
// the end of training's ('train_runtime').
func isHFLog(s string) bool {
	d, ok := hfDict(s)
	if !ok {
		return false
	}
	_, loss := d["loss"]
	_, epoch := d["epoch"]
	_, eval := d["eval_runtime"]
	_, end := d["train_runtime"]
	return loss && epoch || eval || end
}

// hfSegment returns what a line of the Trainer's output shows: the text
// after its last carriage return (before it, a progress bar's earlier
// states), without trailing blanks.
func hfSegment(l []byte) string {
	s := string(l)
	if i := strings.LastIndexByte(s, '\r'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimRight(s, " \t")
}

// hfDict parses the Python dictionary at the end of s, the repr of a
// Trainer log: {'key': value, ...} with string keys, values that are
// numbers, strings, True, False, None or calls such as np.float64(0.5).
// What precedes it may be a launcher's prefix or a progress bar, not an
// assignment or a call (TrainOutput(..., metrics={...}) repeats the last
// log). It returns the values as text, strings unquoted, and false if s
// does not end in such a dictionary.
func hfDict(s string) (map[string]string, bool) {
	i := strings.Index(s, "{'")
	if i < 0 || !strings.HasSuffix(s, "}") {
		return nil, false
	}
	if p := strings.TrimSpace(s[:i]); p != "" && strings.IndexByte("=(,[{", p[len(p)-1]) >= 0 {
		return nil, false
	}
	r := s[i+1:]
	d := map[string]string{}
	for {
		r = strings.TrimLeft(r, " ")
		if r == "}" {
			return d, true
		}
		key, rest, ok := hfQuoted(r)
		if !ok {
			return nil, false
		}
		r = strings.TrimLeft(rest, " ")
		if !strings.HasPrefix(r, ":") {
			return nil, false
		}
		r = strings.TrimLeft(r[1:], " ")
		var val string
		if r != "" && (r[0] == '\'' || r[0] == '"') {
			val, r, ok = hfQuoted(r)
			if !ok {
				return nil, false
			}
		} else {
			j := hfValueEnd(r)
			if j <= 0 {
				return nil, false
			}
			val, r = strings.TrimSpace(r[:j]), r[j:]
		}
		d[key] = val
		switch {
		case strings.HasPrefix(r, ","):
			r = r[1:]
		case r == "}":
		default:
			return nil, false
		}
	}
}

// hfPrecisionOf returns the fp16=... and bf16=... settings on s, a line
// of a TrainingArguments dump.
func hfPrecisionOf(s string) [][]string {
	if !strings.Contains(s, "16=") {
		return nil
	}
	return hfPrecision.FindAllStringSubmatch(s, -1)
}

// hfQuoted reads the Python string literal at the start of s, in single
// or double quotes with backslash escapes, and returns its text and the
// rest of s.
func hfQuoted(s string) (text, rest string, ok bool) {
	if s == "" || (s[0] != '\'' && s[0] != '"') {
		return "", "", false
	}
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case c == q:
			return b.String(), s[i+1:], true
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false
}

// hfValueEnd returns the index of the comma or closing brace that ends
// the unquoted value at the start of s, outside parentheses and quotes,
// or -1.
func hfValueEnd(s string) int {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case (c == ',' || c == '}') && depth == 0:
			return i
		}
	}
	return -1
}

// hfFloat parses a logged number: Python's float or int, as a string of
// newer releases ('0.5412'), or as numpy's repr (np.float64(0.912)).
func hfFloat(v string) (float64, error) {
	if m := hfNumber.FindStringSubmatch(v); m != nil {
		v = m[1]
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("bad number %s", quote(v))
	}
	return f, nil
}
