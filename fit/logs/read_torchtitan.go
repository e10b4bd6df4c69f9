package logs

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"scaleplan/internal/benchlog"
	"scaleplan/internal/calib"
	"scaleplan/internal/units"
)

// Lines of torchtitan (torchtitan/train.py's Trainer, components/metrics.py's
// MetricsProcessor and DeviceMemoryMonitor, distributed/parallel_dims.py's
// build_mesh, distributed/utils.py's maybe_enable_amp), as its logger prints
// them ("[rank0]:[titan] 2026-11-20 10:00:00,123 - root - INFO - ...").
var (
	ttMeshNew  = regexp.MustCompile(`Building device mesh with parallelism: (.*)$`)
	ttMeshOld  = regexp.MustCompile(`Building (\d+)-D device mesh with \[(.*?)\], \[(.*?)\]`)
	ttDegree   = regexp.MustCompile(`(\w+)=(\d+)`)
	ttCapacity = regexp.MustCompile(`[A-Z]+ capacity: (.+?) with [\d.]+GiB memory`)
	ttModel    = regexp.MustCompile(`Model (\S+) (\S+) size: [\d,]+ total parameters`)
	ttArgs     = regexp.MustCompile(`'mixed_precision_param': '(\w+)'`)
	ttTime     = regexp.MustCompile(`(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)`)
	ttBatch    = regexp.MustCompile(`(local batch size|global batch size|gradient accumulation steps|sequence length) (\d+)`)
)

// readTorchtitan reads the console output of torchtitan, PyTorch's
// platform for training large language models (FSDP2, tensor, pipeline and
// context parallelism):
//
//	[rank0]:[titan] 2026-11-20 10:00:00,101 - root - INFO - Starting job: Llama 3 8B training
//	[rank0]:[titan] 2026-11-20 10:00:02,311 - root - INFO - Building device mesh with parallelism: pp=1, dp_replicate=1, dp_shard=8, cp=1, tp=1, ep=1, etp=1
//	[rank0]:[titan] 2026-11-20 10:00:05,420 - root - INFO - CUDA capacity: NVIDIA H100 80GB HBM3 with 79.11GiB memory
//	[rank0]:[titan] 2026-11-20 10:00:05,502 - root - INFO - Model llama3 8B size: 8,030,261,248 total parameters
//	[rank0]:[titan] 2026-11-20 10:00:09,930 - root - INFO - Mixed precision training is handled by fully_shard
//	[rank0]:[titan] 2026-11-20 10:00:09,931 - root - INFO - Trainer is initialized with local batch size 2, global batch size 16, gradient accumulation steps 1, sequence length 8192, total steps 50 (warmup 10).
//	[rank0]:[titan] 2026-11-20 10:00:09,933 - root - INFO - Training starts at step 1
//	[rank0]:[titan] 2026-11-20 10:00:31,870 - root - INFO - step:  1  loss: 12.2480  grad_norm:  4.1420  memory: 42.02GiB(53.12%)  tps: 747  tflops: 43.27  mfu: 4.38%
//	[rank0]:[titan] 2026-11-20 10:00:50,774 - root - INFO - step: 10  loss:  9.8721  grad_norm:  2.9015  memory: 58.71GiB(74.21%)  tps: 7,800  tflops: 451.81  mfu: 45.68%
//	...
//	[rank0]:[titan] 2026-11-20 10:02:15,020 - root - INFO - Training completed
//
// The MetricsProcessor logs step 1 and then every metrics.log_freq steps:
// tps, the tokens one device trained on per second since the last line
// (the tokens of its data-parallel rank over the seconds times the devices
// of a model replica's tensor, pipeline and context split; older releases
// call it wps). Its colours (ANSI escapes) are taken out first. Each "Starting
// job" line starts a run, and so does a step line before any or one whose
// step does not follow the last. A run gives one measurement record: the
// tokens per second of one device over its lines after the first (step
// 1's compilation), each line weighted by the steps it covers,
//
//	tps = Σ k_i / Σ (k_i / tps_i)
//
// samples/s = tps × devices / sequence length (a sample is a sequence,
// the label sample "sequence-N" as Megatron-LM's records), the step time
// global batch / samples/s. The devices are the product of the mesh's
// degrees (pp, dp_replicate, dp_shard, cp, tp; ep and etp split the
// experts of those same devices), from "Building device mesh with
// parallelism: pp=1, dp_replicate=1, ..." or the older "Building 2-D
// device mesh with ['dp_shard', 'tp'], [4, 2]"; the batch per device the
// local batch size, the global batch and the accumulation as the Trainer
// prints them ("Trainer is initialized with ..." or the older "Training
// starts at step 1, with ..."); the label layout the parallel sizes ("tp2
// pp1 cp1 dp4", LayoutLabel). The device is the CUDA (or ROCm, XPU) device
// name of the "capacity" line (catalogue devices carry these names), the
// model the train spec and flavour ("llama3-8b"), the peak memory the
// largest "memory:" (the allocator's peak reserved GiB of rank 0, 2^30
// bytes). The precision: fp32 where mixed precision is disabled, else the
// training.mixed_precision_param that a "Running with args" line prints,
// else bf16, torchtitan's default, with a note. The run's time to train is
// from the "Training starts at step" line to "Training completed", when
// both carry a date and time. torchtitan logs a loss, no accuracy: no
// steps to a target.
func readTorchtitan(data []byte, lg *Log) {
	t := &ttReader{lg: lg}
	lines(data, t.line)
	t.flush()
	noteLayouts(lg)
}

// ttRun is what the lines of a torchtitan run said.
type ttRun struct {
	ttSetup
	line, id                 int
	active                   bool
	steps, lastStep, recLine int
	weight, sum              float64 // Σ k/tps, Σ k over the lines after the first
	peak                     float64 // bytes
	start, end               float64 // seconds since 1970
	started, ended           bool
}

// ttReader is the state of readTorchtitan: the run it is in.
type ttReader struct {
	lg  *Log
	cur ttRun
}

// begin starts a run at line n.
func (t *ttReader) begin(n int) {
	t.flush()
	t.cur = ttRun{line: n, id: len(t.lg.Runs) + 1, active: true}
}

// begun makes the lines that follow part of a run: the current one if it
// has no step line yet (torchtitan prints its set-up, then trains), else
// a new one.
func (t *ttReader) begun(n int) {
	if !t.cur.active || t.cur.steps > 0 || t.cur.ended {
		t.begin(n)
	}
}

// line reads line n of a torchtitan log.
func (t *ttReader) line(n int, l []byte) {
	if !ttMentions(l) {
		return
	}
	s := ttStrip(string(l))
	switch {
	case strings.Contains(s, "Starting job:"):
		t.begin(n)
	case strings.Contains(s, "device mesh with"):
		t.begun(n)
		if err := t.cur.mesh(s); err != nil {
			t.lg.malformed(n, l, err)
		}
	case t.setup(n, s):
	case strings.Contains(s, "local batch size"):
		t.begun(n)
		t.batches(n, l, s)
	case strings.Contains(s, "Training starts at step"):
		t.begun(n)
		t.cur.start, t.cur.started = ttDate(s)
	case strings.Contains(s, "Training completed"):
		if t.cur.active {
			t.cur.end, _ = ttDate(s)
			t.cur.ended = true
		}
	case strings.Contains(s, "step:"):
		t.step(n, l, s)
	}
}

// setup reads the device, model and precision lines of the set-up; it
// reports whether s is one.
func (t *ttReader) setup(n int, s string) bool {
	cur := &t.cur
	switch {
	case strings.Contains(s, " capacity: "):
		if m := ttCapacity.FindStringSubmatch(s); m != nil {
			t.begun(n)
			cur.device = strings.TrimSpace(m[1])
		}
	case strings.Contains(s, "total parameters"):
		if m := ttModel.FindStringSubmatch(s); m != nil {
			t.begun(n)
			cur.model = strings.ToLower(m[1] + "-" + m[2])
		}
	case strings.Contains(s, "Running with args"):
		if m := ttArgs.FindStringSubmatch(s); m != nil {
			t.begun(n)
			switch m[1] {
			case "bfloat16":
				cur.precision = "bf16"
			case "float16":
				cur.precision = "fp16"
			case "float32":
				cur.precision = "fp32"
			}
			cur.fromArgs = cur.precision != ""
		}
	case strings.Contains(s, "Mixed precision training is "):
		t.begun(n)
		switch {
		case strings.Contains(s, "Mixed precision training is disabled"):
			cur.precision, cur.amp = "fp32", false
		case strings.Contains(s, "Mixed precision training is handled by"):
			cur.amp = true
			if cur.precision == "fp32" && !cur.fromArgs {
				cur.precision = ""
			}
		}
	default:
		return false
	}
	return true
}

// batches reads the Trainer's line of batches and sequence length.
func (t *ttReader) batches(n int, l []byte, s string) {
	cur := &t.cur
	field := map[string]*int{"local batch size": &cur.local, "global batch size": &cur.global,
		"gradient accumulation steps": &cur.accum, "sequence length": &cur.seq}
	for _, m := range ttBatch.FindAllStringSubmatch(s, -1) {
		v, err := parseCount(m[1], m[2])
		if err != nil {
			t.lg.malformed(n, l, err)
			return
		}
		*field[m[1]] = v
	}
	if strings.Contains(s, "Training starts at step") {
		cur.start, cur.started = ttDate(s)
	}
}

// step reads a step line into the run, starting a run where it is the
// first or does not follow the last.
func (t *ttReader) step(n int, l []byte, s string) {
	f, ok := ttStepFields(s)
	if !ok {
		return
	}
	step, tps, err := f.numbers()
	if err != nil {
		t.lg.malformed(n, l, err)
		return
	}
	switch {
	case !t.cur.active:
		t.begin(n)
	case t.cur.steps > 0 && step <= t.cur.lastStep:
		t.lg.notef("line %d: step %d after step %d: a new run", n, step, t.cur.lastStep)
		setup := t.cur.ttSetup
		t.begin(n)
		t.cur.ttSetup = setup // a run that restarts keeps the set-up it printed once
	}
	cur := &t.cur
	if f.memory != "" {
		if gib, err := strconv.ParseFloat(f.memory, 64); err == nil && gib >= 0 && gib < 1e6 {
			cur.peak = max(cur.peak, gib*(1<<30))
		}
	}
	covered := step - cur.lastStep
	first := cur.steps == 0
	cur.steps++
	cur.lastStep = step
	if first {
		return // step 1: compilation and the first allocations
	}
	cur.sum += float64(covered)
	cur.weight += float64(covered) / tps
	cur.recLine = n
}

// numbers returns the step and the tokens per second of one device of a
// step line.
func (f *ttFields) numbers() (step int, tps float64, err error) {
	step, err1 := parseCount("step", f.step)
	err2 := errors.New("no tps: want the tokens per second of one device")
	if f.rate != "" {
		tps, err2 = strconv.ParseFloat(strings.ReplaceAll(f.rate, ",", ""), 64)
		if err2 != nil || !(tps > 0 && tps < 1e300) {
			err2 = fmt.Errorf("%s %s: want tokens per second above 0", f.rateName, f.rate)
		}
	}
	return step, tps, oneLine([]error{err1, err2})
}

// flush turns the run, if it trained, into a Run and its measurement
// record.
func (t *ttReader) flush() {
	if !t.cur.active {
		return
	}
	defer func() { t.cur = ttRun{} }()
	r := &t.cur
	if r.steps == 0 && !r.ended {
		return // set-up without a training step: a run that did not start
	}
	out := Run{Line: r.line, Run: strconv.Itoa(r.id), Model: r.model, Benchmark: r.model, Device: "?", GlobalBatch: r.global}
	if world := r.world(); world > 0 {
		out.Device = fmt.Sprintf("%dx%s", world, cmp.Or(r.device, "GPU"))
	}
	if r.ended {
		out.Status = "finished"
		if r.started && r.end > r.start {
			out.TimeToTrain = units.Seconds(r.end - r.start)
		}
	}
	out.StepTime = t.measure(r)
	t.lg.Runs = append(t.lg.Runs, out)
}

// measure adds the measurement record of run r and returns its step
// time; 0, with a note, when the run does not give one.
func (t *ttReader) measure(r *ttRun) units.Seconds {
	world := r.world()
	switch {
	case r.sum == 0:
		t.lg.notef("line %d: run %d: no step line after the first (step 1's compilation is left out): no measurement", r.line, r.id)
		return 0
	case world == 0:
		t.lg.notef("line %d: run %d: no \"Building device mesh\" line: its device count is unknown, no measurement", r.line, r.id)
		return 0
	case r.local == 0 || r.global == 0 || r.seq == 0:
		t.lg.notef("line %d: run %d: no \"Trainer is initialized with local batch size ...\" line with the batches and the sequence length: no measurement", r.line, r.id)
		return 0
	}
	if r.accum == 0 && r.global%(r.local*r.dp) == 0 {
		r.accum = r.global / (r.local * r.dp) // releases that print no accumulation
	}
	tps := r.sum / r.weight
	rate := tps * float64(world) / float64(r.seq)
	prec := r.precision
	if prec == "" && r.amp {
		prec = "bf16"
		t.lg.notef("line %d: run %d: precision bf16, torchtitan's default training.mixed_precision_param; the log does not print it (job.print_args does)", r.line, r.id)
	}
	rec := benchlog.Record{
		Kind: benchlog.KindMeasurement, Run: strconv.Itoa(r.id), Model: r.model, Device: cmp.Or(r.device, "GPU"), Precision: prec,
		Workers: world, Batch: r.local, GlobalBatch: r.global, Accumulate: r.accum,
		Steps: int(r.sum), StepTime: float64(r.global) / rate, SamplesPerSec: rate, PeakMemory: r.peak,
		Labels: map[string]string{
			calib.SampleLabel: fmt.Sprintf("sequence-%d", r.seq),
			LayoutLabel:       fmt.Sprintf("tp%d pp%d cp%d dp%d", r.tp, r.pp, r.cp, r.dp),
		},
	}
	t.lg.addValid(rec, r.recLine, nil)
	return units.Seconds(rec.StepTime)
}

// ttKeys are the phrases of the lines readTorchtitan reads.
var ttKeys = [][]byte{[]byte("step:"), []byte("device mesh with"), []byte(" capacity: "), []byte("total parameters"), []byte("Running with args"),
	[]byte("Mixed precision training is "), []byte("local batch size"), []byte("Training starts at step"), []byte("Training completed"), []byte("Starting job:")}

// ttMentions reports whether l may be a line readTorchtitan reads.
func ttMentions(l []byte) bool {
	for _, k := range ttKeys {
		if bytes.Contains(l, k) {
			return true
		}
	}
	return false
}

// isTorchtitanStep reports whether l, its colours taken out, is
// torchtitan's training step line: a step, a loss and a tps (or wps).
func isTorchtitanStep(l []byte) bool {
	f, ok := ttStepFields(ttStrip(string(l)))
	return ok && f.rate != "" && f.rate[0] >= '0' && f.rate[0] <= '9'
}

// ttStrip returns s without its colours: the ANSI escapes ESC [ ... m of
// torchtitan's utils.Color.
func ttStrip(s string) string {
	if strings.IndexByte(s, 0x1b) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';') {
				j++
			}
			if j < len(s) && s[j] == 'm' {
				i = j
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ttFields are the figures of a training step line, as printed.
type ttFields struct {
	step           string // "10"
	rateName, rate string // "tps", "7,800"; "" when the line has none
	memory         string // GiB, "58.71"; "" when the line has none
}

// ttStepFields reads a training step line, "step: 10  loss: 9.87 ...
// memory: 58.71GiB(74.21%)  tps: 7,800 ...": a word "step:" followed by a
// number and "loss:". ok is false for any other line, a validation step
// ("validate step: 10  loss: ...") included.
func ttStepFields(s string) (f ttFields, ok bool) {
	i := 0
	for {
		j := strings.Index(s[i:], "step:")
		if j < 0 {
			return f, false
		}
		i += j
		if i == 0 || s[i-1] == ' ' || s[i-1] == '\t' {
			break
		}
		i += len("step:")
	}
	if strings.HasSuffix(strings.TrimRight(s[:i], " \t"), "validate") {
		return f, false
	}
	rest := strings.TrimLeft(s[i+len("step:"):], " \t")
	d := 0
	for d < len(rest) && rest[d] >= '0' && rest[d] <= '9' {
		d++
	}
	f.step, rest = rest[:d], rest[d:]
	if t := strings.TrimLeft(rest, " \t"); d == 0 || len(t) == len(rest) || !strings.HasPrefix(t, "loss:") {
		return f, false
	}
	word := func(key string) string {
		k := strings.Index(rest, key)
		if k < 0 {
			return ""
		}
		v := strings.TrimLeft(rest[k+len(key):], " \t")
		if e := strings.IndexAny(v, " \t"); e >= 0 {
			v = v[:e]
		}
		return v
	}
	for _, name := range []string{"tps", "wps"} {
		if v := word(" " + name + ":"); v != "" {
			f.rateName, f.rate = name, v
			break
		}
	}
	if v, _, found := strings.Cut(word(" memory:"), "GiB"); found {
		f.memory = v
	}
	return f, true
}

// ttSetup is what torchtitan prints of a run before it trains.
type ttSetup struct {
	tp, pp, cp, dp            int // the mesh's degrees; 0 before a mesh line
	local, global, accum, seq int
	device, model, precision  string
	fromArgs                  bool // precision from a print of the arguments
	amp                       bool // mixed precision by fully_shard or AMP
}

// world returns the run's devices, the product of the mesh's degrees; 0
// before a mesh line.
func (u *ttSetup) world() int { return u.tp * u.pp * u.cp * u.dp }

// mesh reads a mesh line into the tensor, pipeline, context and
// data-parallel degrees; another line that mentions a mesh leaves them.
func (u *ttSetup) mesh(s string) error {
	deg := map[string]int{}
	if m := ttMeshNew.FindStringSubmatch(s); m != nil {
		for _, d := range ttDegree.FindAllStringSubmatch(m[1], -1) {
			v, err := parseCount(d[1], d[2])
			if err != nil {
				return err
			}
			deg[d[1]] = v
		}
	} else if m := ttMeshOld.FindStringSubmatch(s); m != nil {
		var names []string
		for _, f := range strings.Split(m[2], ",") {
			if f = strings.Trim(strings.TrimSpace(f), `'"`); f != "" {
				names = append(names, f)
			}
		}
		var sizes []string
		for _, f := range strings.Split(m[3], ",") {
			if f = strings.TrimSpace(f); f != "" {
				sizes = append(sizes, f)
			}
		}
		if len(names) != len(sizes) {
			return fmt.Errorf("device mesh of %d names and %d sizes", len(names), len(sizes))
		}
		for i, name := range names {
			v, err := parseCount(name, sizes[i])
			if err != nil {
				return err
			}
			deg[name] += v
		}
	} else {
		return nil // another line that mentions a mesh
	}
	tp, pp, cp, dp := 1, 1, 1, 1
	for name, v := range deg {
		switch {
		case name == "pp":
			pp = v
		case name == "tp":
			tp = v
		case name == "cp":
			cp = v
		case name == "dp" || strings.HasPrefix(name, "dp_"):
			dp *= v
		} // ep, etp: the experts' split of the same devices
	}
	if w := tp * pp * cp * dp; w > maxCount {
		return fmt.Errorf("device mesh of %d devices", w)
	}
	u.tp, u.pp, u.cp, u.dp = tp, pp, cp, dp
	return nil
}

// ttDate returns the date and time of a torchtitan line in seconds since
// 1970 (dateSeconds), and false when it carries none.
func ttDate(s string) (float64, bool) {
	m := ttTime.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	return dateSeconds(m[1:])
}
