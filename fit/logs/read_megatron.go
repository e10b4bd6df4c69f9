package logs

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"scaleplan/internal/benchlog"
	"scaleplan/internal/calib"
	"scaleplan/internal/units"
)

// Lines of Megatron-LM (megatron/training: arguments.py's print of the
// arguments and of the parallel layout, training.py's training_log and
// print_datetime), also printed by the frameworks built on it (NeMo's
// Megatron path, Megatron-DeepSpeed, MindSpeed).
var (
	mgIteration = regexp.MustCompile(`(?:^|\s)iteration\s+(\d+)/\s*(\d+)\s*\|`)
	mgArgument  = regexp.MustCompile(`^\s*(\w+) \.{2,} (.*?)\s*$`)
	mgLayout    = regexp.MustCompile(`(encoder-)?(world|data-parallel|context-parallel|tensor-model-parallel|pipeline-model-parallel) size: (\d+)`)
	mgDatetime  = regexp.MustCompile(`^\[(before the start of training step|after training is done)\] datetime: ((\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d))`)
	mgMemory    = regexp.MustCompile(`\| max allocated: ([\d.]+) \|`)
)

// LayoutLabel is the label of a Megatron-LM record that gives its
// parallel layout: "tp4 pp2 cp1 dp8", the tensor, pipeline, context and
// data-parallel sizes.
const LayoutLabel = "layout"

// ModelParallel reports whether labels give a parallel layout
// (LayoutLabel) that splits the model: a tensor, pipeline or context
// parallel size other than 1. Records without one are data parallel.
func ModelParallel(labels map[string]string) bool {
	for _, f := range strings.Fields(labels[LayoutLabel]) {
		if strings.HasPrefix(f, "dp") {
			continue
		}
		if i := strings.IndexFunc(f, unicode.IsDigit); i < 0 || f[i:] != "1" {
			return true
		}
	}
	return false
}

// mgArgumentsStart and mgArgumentsEnd frame Megatron's print of its
// arguments, one "  name ........ value" line each.
const (
	mgArgumentsStart = "------------------------ arguments ------------------------"
	mgArgumentsEnd   = "-------------------- end of arguments ---------------------"
)

// readMegatron reads the output of Megatron-LM's training loop:
//
//	------------------------ arguments ------------------------
//	  bf16 ............................................ True
//	  global_batch_size ............................... 512
//	  micro_batch_size ................................ 2
//	  seq_length ...................................... 4096
//	  ...
//	-------------------- end of arguments ---------------------
//	using world size: 64, data-parallel size: 8, context-parallel size: 1, tensor-model-parallel size: 4, pipeline-model-parallel size: 2
//	[before the start of training step] datetime: 2026-11-26 06:00:00
//	 [2026-11-26 06:02:11] iteration       10/    5000 | consumed samples:         5120 | elapsed time per iteration (ms): 13105.3 | ... | global batch size:   512 | lm loss: 1.04E+01 | ...
//	[Rank 0] (after 10 iterations) memory (MB) | allocated: 10770.3 | max allocated: 15754.8 | reserved: 16334.0 | max reserved: 16334.0
//	[after training is done] datetime: 2026-11-26 09:12:45
//
// Each print of the arguments starts a run, and so does an iteration line
// before any or one whose iteration does not follow the last. Each
// iteration line prints the mean time of the iterations since the last
// (the log interval) and the global batch, in sequences of seq_length
// tokens. A run gives one measurement record per global batch (several
// under --rampup-batch-size): the mean step over its lines, each weighted
// by the iterations it covers, leaving out the run's first line (the first
// iteration's compilation and the data loader's start) and the first line
// at each new batch (its interval may straddle the change); the devices
// are the world size, the batch per device the micro batch, the
// accumulation global batch / (micro batch × data-parallel size); the
// precision bf16 or fp16 (Megatron's mixed precision: 16-bit compute,
// fp32 main weights; fp32 without either); the label sample
// "sequence-N" (calib.SampleLabel) and the label layout the parallel
// sizes ("tp4 pp2 cp1 dp8"). The peak memory is the largest "max
// allocated" of any rank (MB of 2^20 bytes). The run's time to train is
// from "before the start of training step" to "after training is done"
// (to the second; validation and checkpoints included), when both are
// printed. The logs name no model and no device kind (--device names it:
// the records say GPU) and no accuracy: validation prints a loss.
func readMegatron(data []byte, lg *Log) {
	g := &mgReader{lg: lg}
	lines(data, g.line)
	g.flush()
	noteLayouts(lg)
}

// mgBatch is what the iteration lines of a run at one global batch said.
type mgBatch struct {
	batch, line    int
	weighted, iter float64 // Σ time × iterations, Σ iterations
	skipped        bool    // its first line was left out
}

// mgRun is what the lines of a Megatron-LM run said.
type mgRun struct {
	line, id              int
	active, inArgs        bool
	args                  map[string]string
	world, dp, tp, pp, cp int
	lastIter, lines       int
	batches               []*mgBatch
	intervals             []StepInterval
	peak                  float64 // bytes
	start, end            float64 // seconds since 1970 of the datetimes
	started, ended        bool    // whether they were printed
}

// mgReader is the state of readMegatron: the run it is in.
type mgReader struct {
	lg  *Log
	cur mgRun
}

// line reads line n of a Megatron-LM log.
func (g *mgReader) line(n int, l []byte) {
	s := string(l)
	if g.cur.inArgs {
		// One "  name ..... value" line an argument, to the end of the
		// print, or to a line that is not one (a log cut inside the
		// print).
		if m := mgArgument.FindStringSubmatch(s); m != nil {
			g.cur.args[m[1]] = m[2]
			return
		}
		g.cur.inArgs = false
	}
	switch {
	case strings.Contains(s, mgArgumentsStart):
		g.begin(n)
		g.cur.inArgs = true
	case strings.Contains(s, mgArgumentsEnd):
	case strings.Contains(s, "using world size: "):
		g.begin(n)
		g.layout(n, l, s)
	case strings.Contains(s, "] datetime: "):
		g.datetime(n, l, s)
	case strings.Contains(s, "max allocated: "):
		if m := mgMemory.FindStringSubmatch(s); m != nil && g.cur.active {
			if mb, err := strconv.ParseFloat(m[1], 64); err == nil && mb >= 0 && mb < 1e15 {
				g.cur.peak = max(g.cur.peak, mb*(1<<20))
			}
		}
	case strings.Contains(s, "elapsed time per iteration (ms):"):
		g.iteration(n, l, s)
	}
}

// begin makes the lines that follow part of a run: the current one if
// it has no iteration line yet (Megatron prints its layout, then its
// arguments, then trains), else a new one.
func (g *mgReader) begin(n int) {
	if g.cur.active && g.cur.lines == 0 && !g.cur.ended {
		return
	}
	g.flush()
	g.cur = mgRun{line: n, id: len(g.lg.Runs) + 1, active: true, args: map[string]string{}}
}

// layout reads the parallel sizes of a "using world size" line.
func (g *mgReader) layout(n int, l []byte, s string) {
	for _, m := range mgLayout.FindAllStringSubmatch(s, -1) {
		if m[1] != "" {
			continue // an encoder's, 0 without one
		}
		v, err := parseCount(m[2]+" size", m[3])
		if err != nil {
			g.lg.malformed(n, l, err)
			continue
		}
		switch m[2] {
		case "world":
			g.cur.world = v
		case "data-parallel":
			g.cur.dp = v
		case "tensor-model-parallel":
			g.cur.tp = v
		case "pipeline-model-parallel":
			g.cur.pp = v
		case "context-parallel":
			g.cur.cp = v
		}
	}
}

// datetime reads the datetime before the training step or after
// training.
func (g *mgReader) datetime(n int, l []byte, s string) {
	m := mgDatetime.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil || !g.cur.active {
		return
	}
	t, ok := dateSeconds(m[3:])
	if !ok {
		g.lg.malformed(n, l, fmt.Errorf("datetime %s: want YYYY-MM-DD HH:MM:SS", quote(m[2])))
		return
	}
	if m[1] == "after training is done" {
		g.cur.end, g.cur.ended = t, true
	} else {
		g.cur.start, g.cur.started = t, true
	}
}

// iteration reads an iteration line into its run's batch, starting a
// run where it is the first or does not follow the last.
func (g *mgReader) iteration(n int, l []byte, s string) {
	m := mgIteration.FindStringSubmatch(s)
	if m == nil {
		return
	}
	iter, err1 := parseCount("iteration", m[1])
	ms, err2 := mgField(s, "elapsed time per iteration (ms):")
	gbs, err3 := parseCount("global batch size", strings.TrimSpace(mgRaw(s, "global batch size:")))
	if err := oneLine([]error{err1, err2, err3}); err != nil {
		g.lg.malformed(n, l, err)
		return
	}
	switch {
	case !g.cur.active:
		g.begin(n)
	case g.cur.lines > 0 && iter <= g.cur.lastIter:
		g.lg.notef("line %d: iteration %d after iteration %d: a new run", n, iter, g.cur.lastIter)
		g.flush()
		g.begin(n)
	}
	cur := &g.cur
	cur.lines++
	var b *mgBatch
	if k := len(cur.batches); k > 0 && cur.batches[k-1].batch == gbs {
		b = cur.batches[k-1]
	} else {
		b = &mgBatch{batch: gbs}
		cur.batches = append(cur.batches, b)
	}
	covered := iter - cur.lastIter
	cur.lastIter = iter
	if !b.skipped {
		// The run's first line holds its first iteration; a batch's
		// first line may hold iterations of the last.
		b.skipped = true
		return
	}
	b.line = n
	cur.intervals = append(cur.intervals, StepInterval{GlobalBatch: gbs, Iterations: covered, Step: units.Seconds(ms / 1000)})
	b.weighted += ms / 1000 * float64(covered)
	b.iter += float64(covered)
}

// arg returns the count the argument name gives, 0 if it gives none.
func (r *mgRun) arg(name string) int {
	v, _ := parseCount(name, r.args[name])
	return v
}

// mgSetup is what a run's layout and arguments say of its records.
type mgSetup struct {
	world, dp, mbs int
	prec           string
	labels         map[string]string
}

// setup returns the run's layout and arguments, the layout line's sizes
// before the arguments'.
func (r *mgRun) setup() mgSetup {
	u := mgSetup{world: cmp.Or(r.world, r.arg("world_size")), dp: cmp.Or(r.dp, r.arg("data_parallel_size")), mbs: r.arg("micro_batch_size")}
	tp := cmp.Or(r.tp, r.arg("tensor_model_parallel_size"))
	pp := cmp.Or(r.pp, r.arg("pipeline_model_parallel_size"))
	cp := cmp.Or(r.cp, r.arg("context_parallel_size"), 1)
	switch {
	case r.args["bf16"] == "True":
		u.prec = "bf16"
	case r.args["fp16"] == "True":
		u.prec = "fp16"
	case r.args["bf16"] == "False" && r.args["fp16"] == "False":
		u.prec = "fp32"
	}
	if seq := r.arg("seq_length"); seq > 0 {
		u.labels = map[string]string{calib.SampleLabel: fmt.Sprintf("sequence-%d", seq)}
	}
	if tp > 0 && pp > 0 && u.dp > 0 {
		if u.labels == nil {
			u.labels = map[string]string{}
		}
		u.labels[LayoutLabel] = fmt.Sprintf("tp%d pp%d cp%d dp%d", tp, pp, cp, u.dp)
	}
	return u
}

// flush turns the run, if any, into a measurement record per global
// batch and a Run.
func (g *mgReader) flush() {
	if !g.cur.active {
		return
	}
	defer func() { g.cur = mgRun{} }()
	r := &g.cur
	u := r.setup()
	if len(r.args) == 0 && len(r.batches) > 0 {
		g.lg.notef("line %d: run %d: no print of Megatron's arguments before it: its precision, micro batch and sequence length are unknown", r.line, r.id)
	}
	if u.world == 0 && len(r.batches) > 0 {
		g.lg.notef("line %d: run %d: no \"using world size\" line or world_size argument before it: its device count is unknown", r.line, r.id)
	}
	var stepSum, iterSum float64
	for _, b := range r.batches {
		if b.iter == 0 {
			continue
		}
		st := b.weighted / b.iter
		stepSum += b.weighted
		iterSum += b.iter
		rec := benchlog.Record{
			Kind: benchlog.KindMeasurement, Run: strconv.Itoa(r.id), Device: "GPU", Precision: u.prec,
			Workers: u.world, Batch: u.mbs, GlobalBatch: b.batch,
			Steps: int(b.iter), StepTime: st, SamplesPerSec: float64(b.batch) / st,
			PeakMemory: r.peak, Labels: maps.Clone(u.labels),
		}
		if u.mbs > 0 && u.dp > 0 && b.batch%(u.mbs*u.dp) == 0 {
			rec.Accumulate = b.batch / (u.mbs * u.dp)
		}
		g.lg.addValid(rec, b.line, nil)
	}
	out := r.out(u.world, stepSum, iterSum)
	if len(r.batches) == 0 && out.Status == "" {
		return // arguments without a training step: a run that did not start
	}
	g.lg.Runs = append(g.lg.Runs, out)
}

// out returns the Run of r on world devices, of stepSum seconds over
// iterSum measured iterations.
func (r *mgRun) out(world int, stepSum, iterSum float64) Run {
	out := Run{Line: r.line, Run: strconv.Itoa(r.id), Device: "?", Intervals: r.intervals}
	if world > 0 {
		out.Device = fmt.Sprintf("%dxGPU", world)
	}
	if len(r.batches) > 0 {
		out.GlobalBatch = r.batches[len(r.batches)-1].batch
	}
	if iterSum > 0 {
		out.StepTime = units.Seconds(stepSum / iterSum)
	}
	if r.ended {
		out.Status = "finished"
		if r.started && r.end > r.start {
			out.TimeToTrain = units.Seconds(r.end - r.start)
		}
	}
	return out
}

// noteLayouts notes that lg's records come from runs of several parallel
// layouts (LayoutLabel), which fit does not tell apart unless asked to.
func noteLayouts(lg *Log) {
	var layouts []string
	for _, r := range lg.Records {
		if l := r.Labels[LayoutLabel]; l != "" && !slices.Contains(layouts, l) {
			layouts = append(layouts, l)
		}
	}
	if len(layouts) > 1 {
		lg.notef("runs of %d parallel layouts (%s): fit them apart with --group-by layout", len(layouts), strings.Join(layouts, "; "))
	}
}

// dateSeconds returns the seconds since 1970-01-01 00:00:00 of a datetime's
// year, month, day, hour, minute and second (the package reads no clock and
// keeps no time zone: only differences of these are used), and false if
// one is out of range.
func dateSeconds(f []string) (float64, bool) {
	var v [6]int
	for i := range v {
		v[i], _ = strconv.Atoi(f[i])
	}
	y, mo, d, h, mi, sec := v[0], v[1], v[2], v[3], v[4], v[5]
	leap := func(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }
	days := [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
	if leap(y) {
		days[2] = 29
	}
	if y < 1970 || mo < 1 || mo > 12 || d < 1 || d > days[mo] || h > 23 || mi > 59 || sec > 59 {
		return 0, false
	}
	n := d - 1 // days before the date since 1970
	for yy := 1970; yy < y; yy++ {
		n += 365
		if leap(yy) {
			n++
		}
	}
	for m := 1; m < mo; m++ {
		n += days[m]
	}
	return float64(n*86400 + h*3600 + mi*60 + sec), true
}

// mgRaw returns the text of s after key up to the next "|", or "".
func mgRaw(s, key string) string {
	i := strings.Index(s, key)
	if i < 0 {
		return ""
	}
	v := s[i+len(key):]
	if j := strings.IndexByte(v, '|'); j >= 0 {
		v = v[:j]
	}
	return v
}

// mgField parses the number after key, a time in milliseconds, as a
// finite number > 0.
func mgField(s, key string) (float64, error) {
	v := strings.TrimSpace(mgRaw(s, key))
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f > 0) || f > 1e300 {
		return 0, fmt.Errorf("%s %s: want a time above 0", strings.TrimSuffix(key, ":"), quote(v))
	}
	return f, nil
}
