package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/event"
	"scaleplan/sim/internal/netsim"
)

// jitterStream is the second word of the PCG seed of the jitter draws.
const jitterStream = 0x5ca1e9a7

// Run simulates cfg and returns its steady state. It returns an error
// wrapping ErrConfig that lists every problem of cfg, or one wrapping
// ErrMemory if the configuration does not fit in device memory, each
// beginning with cfg.Name where it has one; it never panics on a bad
// configuration. The same cfg gives the same Result.
func Run(cfg Config) (*Result, error) {
	res, err := runWith(cfg, nil)
	if err != nil && cfg.Name != "" {
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	return res, err
}

// runWith is Run without the configuration's name in its errors; setup,
// if not nil, may install test hooks on the run before it starts.
func runWith(cfg Config, setup func(*run)) (*Result, error) {
	c := cfg
	c.Comm.Layers = append([]units.Bytes(nil), cfg.Comm.Layers...)
	if err := c.validate(); err != nil {
		return nil, err
	}
	if err := c.checkMemory(); err != nil {
		return nil, err
	}
	r, err := newRun(&c)
	if err != nil {
		return nil, err
	}
	if setup != nil {
		setup(r)
	}
	return r.run()
}

// task is one forward or backward of a micro-batch.
type task struct {
	back bool
	mb   int
}

// schedule returns stage s's tasks for one step.
func schedule(sched Schedule, S, s, M int) []task {
	ts := make([]task, 0, 2*M)
	if sched == GPipe {
		for j := range M {
			ts = append(ts, task{false, j})
		}
		for j := range M {
			ts = append(ts, task{true, j})
		}
		return ts
	}
	warm := min(S-s-1, M)
	for j := range warm {
		ts = append(ts, task{false, j})
	}
	for j := range M - warm {
		ts = append(ts, task{false, warm + j}, task{true, j})
	}
	for j := M - warm; j < M; j++ {
		ts = append(ts, task{true, j})
	}
	return ts
}

// What a waiting rank waits for.
const (
	waitNone = iota
	waitInput
	waitAct
	waitGrad
)

// Rank phases.
const (
	phaseTask = iota
	phaseComm
	phaseUpdate
	phaseDone
)

// rank is one device's state. The fields a task's start and end touch
// come first, in the first three of its cache lines, the rest after. An
// arrival (run.arrive) reads only the third line, which the send
// (run.send) touched a few hundred events before, and the micro-batch's
// record, unless it resumes the rank.
type rank struct {
	r     *run
	tasks []task
	next  int
	phase int
	cur   task
	begin float64 // start of the running task
	dur   float64 // its duration
	id    int
	stage int

	waitStart float64
	f, b      float64 // jittered forward and backward of this step
	inflt     int32   // micro-batches in flight
	peakInf   int32

	// For pipelines: per micro-batch arrival and send times, -1 if none.
	mbs []mbTimes

	waiting       int32
	waitMB        int32   // the micro-batch waited for, under waitAct or waitGrad
	compute, comm float64 // accumulated this step
	lastBack      bool
	slowed        bool // its rate has changed at least once

	node int
	rep  int

	// The last backward's progress under interference (see setRate):
	// work w0 (seconds at full rate) done by t0, progressing at rate
	// since; ev is its end event.
	w0, t0, rate float64
	ev           event.Handle

	phi    float64 // jitter factor of this step
	bEnd   float64 // end of the last backward
	doneAt float64 // end of the update

	// Accumulated this step.
	input, bubble, straggler float64
	busy                     float64 // compute of the traced step, for sampling

	_ [3]float64 // to 320 bytes, five cache lines, so each rank starts a line
}

// mbTimes is when a micro-batch's activations and gradients reached a
// rank and were sent to it, -1 if not yet: a wait reads the arrival and
// the send of one micro-batch, from one record.
type mbTimes struct {
	actAt, actSent, gradAt, gradSent float64
}

type group struct {
	r       *run
	stage   int
	ranks   []int // rank ids
	all     bool  // ranks are all the ranks (nil to netsim)
	buckets []units.Bytes
	frac    []float64 // cumulative fraction of the stage gradient through each bucket

	release []float64
	started int
	ended   int
	bMax    float64
	next    int // next bucket to reduce
	arDone  bool
	arEnd   float64
	arStart float64
	flying  bool // a bucket's all-reduce is in flight
	doneFn  func(*netsim.Result)
	startEv bucketEvent
}

type bucketEvent struct{ g *group }

func (e *bucketEvent) Fire() { e.g.startBucket() }

type run struct {
	c    *Config
	s    event.Scheduler
	topo *netsim.Topology
	rng  *rand.Rand

	ranks   []rank
	groups  []group
	loaders []*loader
	// coldRead is the time a node takes to read one step's samples
	// from its drives, ignoring the page cache (Input.CacheHit).
	coldRead float64
	db       *dbServer
	storage  *netsim.Link // the shared storage's aggregate link, if any

	sched     [][]task // per stage
	fwd, bwd  float64  // per stage, before jitter
	upd       float64  // per stage
	sigma, mu float64  // lognormal jitter

	step      int
	stepStart float64
	done      int
	steps     []Step
	err       error

	tr *tracer

	sends      []sendReq // transfers sent at this instant
	spare      []sendReq // the other buffer of sends, for flush
	flushing   bool
	keyBuf     []byte
	groupPaths map[string]*netsim.Path
	sendIndex  map[[3]int]int
	batches    []batch        // flush's scratch: its flow groups
	routes     []*netsim.Path // by 2·src + back: the route of a lone send
	free       []*delivery    // deliveries whose flows are done, for reuse

	// onDeliver, when set (tests), is called for every micro-batch the
	// input pipeline delivers: the replica, the global micro-batch index
	// and the first sample position.
	onDeliver func(rep, q int, first int64)
	// onEvent, when set (tests), is called after every event.
	onEvent func(now units.Seconds)
	// onStep, when set (tests), is called when a step has ended, with the
	// ranks' accounts of it still in place.
	onStep func()
	// refArrive, when set (tests), makes arrive find the waiting task
	// from the rank's task list (arriveRef), the reference for its wait.
	refArrive bool
}

func newRun(c *Config) (*run, error) {
	r := &run{c: c, rng: rand.New(rand.NewPCG(c.Seed, jitterStream)), groupPaths: make(map[string]*netsim.Path), sendIndex: make(map[[3]int]int)}
	topo, err := netsim.NewTopology(&r.s, c.topology())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	r.topo = topo
	S, M := c.Stages, c.Accumulation
	cm := float64(float64(c.MicroBatch)*float64(c.Compute.PerSample)) + float64(c.Compute.Fixed)
	r.fwd = float64(c.Compute.ForwardFraction*cm) / float64(S)
	r.bwd = float64((1-c.Compute.ForwardFraction)*cm) / float64(S)
	if c.Recompute {
		r.bwd += r.fwd
	}
	r.upd = float64(c.Compute.Update) / float64(S)
	if c.Comm.Algorithm == ParameterServer || c.Comm.Algorithm == AsyncParameterServer {
		r.upd = 0 // the servers apply the update
	}
	if c.Jitter > 0 {
		r.sigma = math.Sqrt(math.Log1p(c.Jitter * c.Jitter))
		r.mu = -r.sigma * r.sigma / 2
	}
	r.sched = make([][]task, S)
	for s := range S {
		r.sched[s] = schedule(c.Schedule, S, s, M)
	}
	R := c.Ranks()
	r.ranks = make([]rank, R)
	r.routes = make([]*netsim.Path, 2*R)
	nodeOf := c.nodeOf()
	var times []mbTimes // the pipeline's per micro-batch times, rank after rank
	if S > 1 {
		times = make([]mbTimes, M*R)
	}
	for i := range r.ranks {
		k := &r.ranks[i]
		*k = rank{r: r, id: i, node: nodeOf[i], stage: i % S, rep: i / S, tasks: r.sched[i%S]}
		if S > 1 {
			k.mbs = times[M*i : M*(i+1) : M*(i+1)]
		}
	}
	r.groups = make([]group, S)
	stageBuckets := c.stageBuckets()
	for s := range S {
		g := &r.groups[s]
		*g = group{r: r, stage: s, all: S == 1, buckets: stageBuckets}
		g.startEv.g = g
		for rep := range c.Replicas() {
			g.ranks = append(g.ranks, rep*S+s)
		}
		total := 0.0
		for _, b := range g.buckets {
			total += float64(b)
		}
		cum := 0.0
		g.frac = make([]float64, len(g.buckets))
		for i, b := range g.buckets {
			cum += float64(b)
			g.frac[i] = 1
			if total > 0 && i < len(g.buckets)-1 {
				g.frac[i] = cum / total
			}
		}
		g.release = make([]float64, len(g.buckets))
		g.doneFn = g.bucketDone
	}
	if c.TraceSteps > 0 {
		r.tr = newTracer(r) // before the loaders, whose first reads are labelled
	}
	// The asynchronous parameter server does not simulate the input
	// pipeline (runAsync): its reads would only take NIC bandwidth from
	// the pushes and pulls.
	if c.Input.Storage != Synthetic && c.Comm.Algorithm != AsyncParameterServer {
		r.newLoaders()
	}
	if r.tr != nil {
		r.tr.watchLinks()
	}
	return r, nil
}

// stageBuckets returns the gradient buckets of one stage in the order the
// backward pass fills them. With one stage the layer layout is grouped
// like model.Buckets: a bucket closes when the next layer would take it
// over Bucket, and a larger layer is a bucket of its own. A stage of a
// pipeline holds 1/S of the gradient, cut into equal buckets of at most
// Bucket. With NoOverlap the whole is one bucket.
func (c *Config) stageBuckets() []units.Bytes {
	layers := c.Comm.Layers
	if len(layers) == 0 {
		layers = []units.Bytes{c.Memory.Gradients}
	}
	total := units.Bytes(0)
	for _, l := range layers {
		total += l
	}
	if c.Stages > 1 {
		st := total / units.Bytes(c.Stages)
		layers = []units.Bytes{st}
		if n := math.Ceil(float64(st / c.Comm.Bucket)); n > 1 && !c.Comm.NoOverlap {
			n = min(n, 1<<16)
			layers = make([]units.Bytes, int(n))
			for i := range layers {
				layers[i] = st / units.Bytes(n)
			}
		}
		total = st
	}
	if c.Comm.NoOverlap {
		return []units.Bytes{total}
	}
	var out []units.Bytes
	var cur units.Bytes
	open := false
	for _, l := range layers {
		if open && cur+l > c.Comm.Bucket {
			out = append(out, cur)
			cur, open = 0, false
		}
		cur += l
		open = true
	}
	if open {
		out = append(out, cur)
	}
	return out
}

func (r *run) run() (*Result, error) {
	c := r.c
	if c.Comm.Algorithm == AsyncParameterServer {
		return r.runAsync()
	}
	r.startStep()
	for r.err == nil && r.s.Step() {
		if r.onEvent != nil {
			r.onEvent(r.s.Now())
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.steps) != c.Steps {
		return nil, fmt.Errorf("sim: simulated %d of %d steps", len(r.steps), c.Steps)
	}
	res := r.result()
	first := 0
	if len(r.steps) > 1 {
		first = 1
	}
	var T, cp, cm, in, bu, st float64
	for _, s := range r.steps[first:] {
		T += float64(s.Time())
		cp += float64(s.Breakdown.Compute)
		cm += float64(s.Breakdown.Comm)
		in += float64(s.Breakdown.Input)
		bu += float64(s.Breakdown.Bubble)
		st += float64(s.Breakdown.Straggler)
	}
	n := float64(len(r.steps) - first)
	res.StepTime = units.Seconds(T / n)
	res.Breakdown = Breakdown{units.Seconds(cp / n), units.Seconds(cm / n), units.Seconds(in / n), units.Seconds(bu / n), units.Seconds(st / n)}
	if res.StepTime > 0 {
		res.SamplesPerSec = float64(res.GlobalBatch) / float64(res.StepTime)
		res.Utilisation = min(1, max(0, cp/T))
	}
	if in := &c.Input; in.CacheHit > 0 && in.Samples > 0 && r.coldRead > float64(res.StepTime) {
		steps := (in.Samples + int64(res.GlobalBatch) - 1) / int64(res.GlobalBatch)
		res.CacheWarmup = units.Seconds(float64(steps) * (r.coldRead - float64(res.StepTime)))
	}
	res.Steps = r.steps
	res.Events = r.s.Events()
	if r.tr != nil {
		res.Trace = r.tr.finish()
	}
	return res, nil
}

// result returns the fields of a Result that do not depend on the run.
func (r *run) result() *Result {
	c := r.c
	f, _ := c.PeakFootprint()
	return &Result{
		Devices: c.Ranks(), Nodes: c.Nodes, Placement: c.Placement, Stages: c.Stages, Replicas: c.Replicas(),
		MicroBatch: c.MicroBatch, Accumulation: c.Accumulation, GlobalBatch: c.GlobalBatch(),
		Memory: f, Staging: c.stagingTime(),
	}
}

// jitter draws a compute factor with mean 1 and coefficient of variation
// Config.Jitter: lognormal, exp(mu + sigma·z), sigma² = ln(1 + cv²),
// mu = −sigma²/2.
func (r *run) jitter() float64 {
	if r.sigma == 0 {
		return 1
	}
	return math.Exp(r.mu + r.sigma*r.rng.NormFloat64())
}

// startStep starts step r.step on every rank at the current time.
func (r *run) startStep() {
	now := float64(r.s.Now())
	r.stepStart = now
	r.done = 0
	for i := range r.groups {
		g := &r.groups[i]
		clear(g.release)
		g.started, g.ended, g.next, g.bMax, g.arDone, g.flying = 0, 0, 0, 0, false, false
	}
	for i := range r.ranks {
		k := &r.ranks[i]
		k.phi = r.jitter()
		k.f, k.b = r.fwd*k.phi, r.bwd*k.phi
		k.next, k.phase, k.waiting = 0, phaseTask, waitNone
		k.compute, k.input, k.bubble, k.comm, k.straggler = 0, 0, 0, 0, 0
		for j := range k.mbs {
			k.mbs[j] = mbTimes{-1, -1, -1, -1}
		}
	}
	if r.tr != nil && r.step == r.tr.from {
		r.tr.observe() // the links' flows as the traced steps begin
	}
	for i := range r.ranks {
		r.ranks[i].try()
	}
}

// try starts the rank's next task if its dependency is met, or waits.
func (k *rank) try() {
	r := k.r
	t := k.tasks[k.next]
	now := float64(r.s.Now())
	c := r.c
	S := c.Stages
	switch {
	case !t.back && k.stage == 0:
		if l := k.loader(); l != nil {
			q := r.step*c.Accumulation + t.mb
			if !l.isReady(q) {
				k.wait(waitInput, t.mb, now)
				return
			}
			l.take(q)
		}
	case !t.back:
		if k.mbs[t.mb].actAt < 0 {
			k.wait(waitAct, t.mb, now)
			return
		}
	case k.stage < S-1:
		if k.mbs[t.mb].gradAt < 0 {
			k.wait(waitGrad, t.mb, now)
			return
		}
	}
	k.resume(now)
	k.begin, k.cur = now, t
	if t.back {
		k.dur = k.b
	} else {
		k.dur = k.f
	}
	ev := r.s.AtEvent(units.Seconds(now+k.dur), k)
	if t.back && k.next == len(k.tasks)-1 {
		k.lastBack, k.slowed, k.w0, k.t0, k.rate, k.ev = true, false, 0, now, 1, ev
		r.groups[k.stage].backwardStarted(now, k.dur)
	}
}

func (k *rank) loader() *loader {
	if k.r.loaders == nil {
		return nil
	}
	return k.r.loaders[k.node]
}

func (k *rank) wait(kind int32, mb int, now float64) {
	if k.waiting == waitNone {
		k.waiting, k.waitMB, k.waitStart = kind, int32(mb), now
	}
}

// resume ends a wait, if any, and accounts for it.
func (k *rank) resume(now float64) {
	kind := k.waiting
	if kind == waitNone {
		return
	}
	k.waiting = waitNone
	w := now - k.waitStart
	if w <= 0 {
		return
	}
	var sent float64
	switch kind {
	case waitInput:
		k.input += w
		k.r.traceWait(k, "input wait", k.waitStart, now)
		return
	case waitAct:
		sent = k.mbs[k.tasks[k.next].mb].actSent
	case waitGrad:
		sent = k.mbs[k.tasks[k.next].mb].gradSent
	}
	split := min(max(sent, k.waitStart), now)
	k.bubble += split - k.waitStart
	k.comm += now - split
	k.r.traceWait(k, "bubble", k.waitStart, split)
	k.r.traceWait(k, "transfer wait", split, now)
}

// Fire ends the rank's running task or update.
func (k *rank) Fire() {
	r := k.r
	now := float64(r.s.Now())
	if k.phase == phaseUpdate {
		k.compute += k.dur
		r.traceSpan(k, "update", k.begin, now)
		k.phase = phaseDone
		k.doneAt = now
		r.rankDone()
		return
	}
	k.compute += k.dur
	if k.slowed { // the time interference added is communication's cost
		k.comm += max(now-k.begin-k.dur, 0)
	}
	k.lastBack = false
	t := k.cur
	S := r.c.Stages
	if t.back {
		k.inflt--
		r.traceSpan(k, "backward", k.begin, now)
		if k.stage > 0 {
			r.send(k.id, k.id-1, t.mb, true)
		}
	} else {
		k.inflt++
		k.peakInf = max(k.peakInf, k.inflt)
		r.traceSpan(k, "forward", k.begin, now)
		if k.stage < S-1 {
			r.send(k.id, k.id+1, t.mb, false)
		}
	}
	k.next++
	if k.next == len(k.tasks) {
		k.bEnd = now
		k.phase = phaseComm
		r.groups[k.stage].backwardEnded(k)
		return
	}
	k.try()
}

// send starts the transfer of micro-batch mb's activations (or, back,
// their gradients) from rank src to rank dst. Transfers sent at the same
// instant across the same stage boundary (replicas in lockstep) move as
// one netsim flow group, whose streams share a rate; see flush.
func (r *run) send(src, dst, mb int, back bool) {
	k := &r.ranks[dst]
	now := float64(r.s.Now())
	if back {
		k.mbs[mb].gradSent = now
	} else {
		k.mbs[mb].actSent = now
	}
	r.sends = append(r.sends, sendReq{src: src, dst: dst, mb: mb, back: back})
	if !r.flushing {
		r.flushing = true
		r.s.AtEvent(units.Seconds(now), (*flushEvent)(r))
	}
}

type sendReq struct {
	src, dst, mb int
	back         bool
}

// batch is a flow group that flush starts: the sends of one stage
// boundary, direction and micro-batch.
type batch struct {
	src []int
	d   *delivery
}

// delivery is what a flow group of flush delivers when it is done: its
// micro-batch to each of dst. Deliveries are reused, so that a send
// allocates neither its callback nor its destinations.
type delivery struct {
	r        *run
	dst      []int
	mb, step int
	back     bool
	done     func(*netsim.Flow) // bound to arrived once
}

// arrived hands the micro-batch to every destination, unless the step
// it was sent in has ended, and frees the delivery.
func (d *delivery) arrived(*netsim.Flow) {
	r := d.r
	if r.step == d.step {
		for _, k := range d.dst {
			r.arrive(k, d.mb, d.back)
		}
	}
	r.free = append(r.free, d)
}

// newDelivery returns a free delivery for micro-batch mb sent now.
func (r *run) newDelivery(mb int, back bool) *delivery {
	var d *delivery
	if k := len(r.free); k > 0 {
		d = r.free[k-1]
		r.free = r.free[:k-1]
	} else {
		d = &delivery{r: r}
		d.done = d.arrived
	}
	d.dst, d.mb, d.step, d.back = d.dst[:0], mb, r.step, back
	return d
}

type flushEvent run

func (e *flushEvent) Fire() { (*run)(e).flush() }

// flush starts the transfers sent at this instant: one flow per stage
// boundary, direction and micro-batch, on the union of their routes.
func (r *run) flush() {
	r.flushing = false
	sends := r.sends
	r.sends, r.spare = r.spare[:0], sends
	S := r.c.Stages
	groups := r.batches[:0]
	indexed := len(sends) > 1 // a lone send (out of lockstep) needs no index
	if indexed {
		clear(r.sendIndex)
	}
	for _, a := range sends {
		b := 0
		if a.back {
			b = 1
		}
		id := [3]int{b, a.mb, a.src % S}
		i, ok := 0, false
		if indexed {
			i, ok = r.sendIndex[id]
		}
		if !ok {
			i = len(groups)
			if indexed {
				r.sendIndex[id] = i
			}
			if i < cap(groups) {
				groups = groups[:i+1]
				groups[i].src = groups[i].src[:0]
			} else {
				groups = append(groups, batch{})
			}
			groups[i].d = r.newDelivery(a.mb, a.back)
		}
		groups[i].src = append(groups[i].src, a.src)
		groups[i].d.dst = append(groups[i].d.dst, a.dst)
	}
	for i := range groups {
		r.startBatch(&groups[i])
		groups[i].d = nil
	}
	r.batches = groups
}

// startBatch starts a flow group of flush on the routes of its sends.
func (r *run) startBatch(g *batch) {
	src, d := g.src, g.d
	S := r.c.Stages
	var path *netsim.Path
	if len(src) == 1 {
		path = r.route(src[0], d.dst[0], d.back)
	} else {
		key := r.keyBuf[:0]
		if d.back {
			key = append(key, 'b')
		}
		for _, x := range src {
			key = strconv.AppendInt(append(key, ','), int64(x), 10)
		}
		r.keyBuf = key
		if path = r.groupPaths[string(key)]; path == nil {
			path = r.topo.Routes(src, d.dst)
			r.groupPaths[string(key)] = path
		}
	}
	net := r.topo.Network()
	if r.tr != nil {
		what, to := "activations", src[0]%S+1
		if d.back {
			what, to = "gradients", src[0]%S-1
		}
		net.Label = fmt.Sprintf("%s stage %d→%d, micro-batch %d", what, src[0]%S, to, d.mb)
	}
	bytes := units.Bytes(float64(r.c.Comm.Boundary) * float64(r.c.MicroBatch))
	net.Send(path, bytes, d.done)
	net.Label = ""
}

// route returns the path of a lone send from src to its neighbour dst,
// looked up once per rank and direction.
func (r *run) route(src, dst int, back bool) *netsim.Path {
	i := 2 * src
	if back {
		i++
	}
	if r.routes[i] == nil {
		r.routes[i] = r.topo.Route(src, dst)
	}
	return r.routes[i]
}

// arrive records that micro-batch mb's activations (or gradients) reached
// rank dst, and resumes it if it was waiting for them. A rank waits for a
// micro-batch only before the task that needs it (try), so its wait names
// the task: arrive reads no task.
func (r *run) arrive(dst, mb int, back bool) {
	if r.refArrive {
		r.arriveRef(dst, mb, back)
		return
	}
	k := &r.ranks[dst]
	t := float64(r.s.Now())
	want := int32(waitAct)
	if back {
		k.mbs[mb].gradAt = t
		want = waitGrad
	} else {
		k.mbs[mb].actAt = t
	}
	if k.waiting == want && k.waitMB == int32(mb) {
		k.try()
	}
}

// arriveRef is arrive as refArrive makes it, the reference of tests: the
// rank resumes if its next task is the one that needs the micro-batch and
// it waits.
func (r *run) arriveRef(dst, mb int, back bool) {
	k := &r.ranks[dst]
	t := float64(r.s.Now())
	if back {
		k.mbs[mb].gradAt = t
	} else {
		k.mbs[mb].actAt = t
	}
	if k.phase == phaseTask && k.next < len(k.tasks) {
		n := k.tasks[k.next]
		if n.mb == mb && n.back == back && (k.waiting == waitAct || k.waiting == waitGrad) {
			k.try()
		}
	}
}

// backwardStarted records the release times of a rank's gradient
// buckets: bucket i at start + dur·frac[i].
func (g *group) backwardStarted(start, dur float64) {
	for i, f := range g.frac {
		g.release[i] = max(g.release[i], start+float64(dur*f))
	}
	g.started++
	if g.started == len(g.ranks) && len(g.ranks) > 1 {
		g.next = 0
		g.scheduleBucket()
	}
}

// scheduleBucket starts bucket g.next now or at its release time.
func (g *group) scheduleBucket() {
	now := float64(g.r.s.Now())
	if t := g.releaseTime(g.next); t > now {
		g.r.s.AtEvent(units.Seconds(t), &g.startEv)
		return
	}
	g.startBucket()
}

func (g *group) startBucket() {
	r := g.r
	var ranks []int
	if !g.all {
		ranks = g.ranks
	}
	g.arStart = float64(r.s.Now())
	if s := r.c.Comm.Interference; s > 0 && !g.flying {
		g.flying = true
		g.setRate(1 - s)
	}
	net := r.topo.Network()
	if r.tr != nil {
		net.Label = r.bucketName(g, g.next)
	}
	if err := r.topo.AllReduce(r.c.Comm.Algorithm.netsim(), g.buckets[g.next], ranks, g.doneFn); err != nil {
		r.err = fmt.Errorf("%w: stage %d: %w", ErrConfig, g.stage, err)
	}
	net.Label = ""
}

// bucketName names bucket i of g's all-reduce for the links' tracks.
func (r *run) bucketName(g *group, i int) string {
	if r.c.Stages > 1 {
		return fmt.Sprintf("%v bucket %d, stage %d", r.c.Comm.Algorithm, i, g.stage)
	}
	return fmt.Sprintf("%v bucket %d", r.c.Comm.Algorithm, i)
}

func (g *group) bucketDone(*netsim.Result) {
	r := g.r
	r.traceComm(g, g.next, g.arStart, float64(r.s.Now()))
	if g.flying {
		g.flying = false
		g.setRate(1)
	}
	g.next++
	if g.next < len(g.buckets) {
		g.scheduleBucket()
		return
	}
	g.arDone = true
	g.arEnd = float64(r.s.Now())
	g.finish()
}

// backwardEnded records that a rank finished its last backward.
func (g *group) backwardEnded(k *rank) {
	g.ended++
	g.bMax = max(g.bMax, k.bEnd)
	if len(g.ranks) == 1 {
		k.update(k.bEnd)
		return
	}
	g.finish()
}

// finish starts every rank's update once all have ended their backward
// and the gradient exchange is complete.
func (g *group) finish() {
	if !g.arDone || g.ended < len(g.ranks) {
		return
	}
	r := g.r
	slow := &r.ranks[g.ranks[0]]
	for _, id := range g.ranks[1:] {
		if k := &r.ranks[id]; k.bEnd > slow.bEnd {
			slow = k
		}
	}
	for _, id := range g.ranks {
		k := &r.ranks[id]
		w := g.bMax - k.bEnd
		in := min(max(slow.input-k.input, 0), w)
		if in > w*(1-1e-9) {
			in = w // rounding: the wait is all input skew
		}
		k.input += in
		k.straggler += w - in
		k.comm += g.arEnd - g.bMax
		r.traceWait(k, "waiting for a replica's input", k.bEnd, k.bEnd+in)
		r.traceWait(k, "straggler wait", k.bEnd+in, g.bMax)
		r.traceWait(k, "all-reduce wait", g.bMax, g.arEnd)
		k.update(g.arEnd)
	}
}

// update runs the optimizer from time at, which is now.
func (k *rank) update(at float64) {
	k.phase = phaseUpdate
	k.begin, k.dur = at, k.r.upd
	k.r.s.AtEvent(units.Seconds(at+k.dur), k)
}

// rankDone ends the step when the last rank has updated.
func (r *run) rankDone() {
	r.done++
	if r.done < len(r.ranks) {
		return
	}
	now := float64(r.s.Now())
	var b Breakdown
	var cp, cm, in, bu, st float64
	for i := range r.ranks {
		k := &r.ranks[i]
		k.bubble += now - k.doneAt
		r.traceWait(k, "bubble", k.doneAt, now)
		cp += k.compute
		cm += k.comm
		in += k.input
		bu += k.bubble
		st += k.straggler
		k.busy = k.compute
	}
	n := float64(len(r.ranks))
	b = Breakdown{units.Seconds(cp / n), units.Seconds(cm / n), units.Seconds(in / n), units.Seconds(bu / n), units.Seconds(st / n)}
	r.steps = append(r.steps, Step{Start: units.Seconds(r.stepStart), End: units.Seconds(now), Breakdown: b})
	if r.onStep != nil {
		r.onStep()
	}
	if r.tr != nil {
		r.tr.stepEnded()
	}
	r.step++
	if r.step < r.c.Steps {
		r.startStep()
	}
}

// releaseTime returns when bucket i is released: when the slowest rank's
// last backward has produced it. Without interference it is the time
// backwardStarted recorded; with it, each rank's progress is followed
// from its last rate change (reach).
func (g *group) releaseTime(i int) float64 {
	if g.r.c.Comm.Interference == 0 {
		return g.release[i]
	}
	t := math.Inf(-1)
	for _, id := range g.ranks {
		t = max(t, g.r.ranks[id].reach(g.frac[i]))
	}
	return t
}

// reach returns when the rank's last backward has done fraction f of its
// work at its present rate: t0 + (f·dur − w0)/rate, at or before now if it
// has already done so, and the end of that backward if it has ended.
func (k *rank) reach(f float64) float64 {
	if !k.lastBack {
		return k.bEnd
	}
	return k.t0 + (k.dur*f-k.w0)/k.rate
}

// setRate sets the compute rate of the ranks of g that are in their last
// backward; the others wait and compute nothing.
func (g *group) setRate(rate float64) {
	for _, id := range g.ranks {
		if k := &g.r.ranks[id]; k.lastBack {
			k.setRate(rate)
		}
	}
}

// setRate makes the rank's last backward progress at rate from now: the
// work done since t0 is added to w0 and its end event is moved to
// now + (dur − w0)/rate. Progress is piecewise linear in time, so every
// time it reaches is exact, without time steps.
func (k *rank) setRate(rate float64) {
	r := k.r
	now := float64(r.s.Now())
	k.w0 = min(k.w0+(now-k.t0)*k.rate, k.dur)
	k.t0, k.rate, k.slowed = now, rate, true
	r.s.Cancel(k.ev)
	k.ev = r.s.AtEvent(units.Seconds(now+(k.dur-k.w0)/rate), k)
}
