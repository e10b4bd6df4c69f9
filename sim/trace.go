package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// MaxTracedDevices is the number of devices above which a trace samples
// devices: the first node's, the slowest and the last.
const MaxTracedDevices = 16

// Trace is a recording of simulated steps as Chrome trace events, which
// Perfetto (ui.perfetto.dev) and chrome://tracing load: one track per
// traced device, one per gradient exchange stream (a pipeline stage's
// replicas), one per input-pipeline stage of the first node, one for
// the shared database file, and one per traced link that carried bytes
// (see the package documentation, "Traces").
type Trace struct {
	Events []TraceEvent
}

// TraceEvent is one Chrome trace event: a complete event ("X") of a
// duration, or a metadata event ("M") naming a track.
type TraceEvent struct {
	Name string            `json:"name"`
	Cat  string            `json:"cat,omitempty"`
	Ph   string            `json:"ph"`
	Ts   float64           `json:"ts"`  // start, microseconds of simulated time
	Dur  float64           `json:"dur"` // microseconds; 0 for metadata
	Pid  int               `json:"pid"`
	Tid  int               `json:"tid"`
	Args map[string]string `json:"args,omitempty"`
}

// WriteJSON writes t in the Chrome trace-event JSON object format.
func (t *Trace) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	return enc.Encode(struct {
		DisplayTimeUnit string       `json:"displayTimeUnit"`
		TraceEvents     []TraceEvent `json:"traceEvents"`
	}{"ms", t.Events})
}

// Trace processes.
const (
	pidDevices = 1
	pidComm    = 2
	pidInput   = 3
	pidLinks   = 4
)

type span struct {
	tid        int
	name, cat  string
	start, end float64
	args       map[string]string
}

type tracer struct {
	r          *run
	from       int // first traced step
	dev        []span
	comm       []span
	input      []span
	busy       []float64 // compute per rank over the traced steps
	start, end float64
	started    bool
	links      linkRecorder
}

func newTracer(r *run) *tracer {
	return &tracer{r: r, from: max(0, r.c.Steps-r.c.TraceSteps), busy: make([]float64, len(r.ranks))}
}

// watchLinks starts recording the links' flows; every link must have been
// added. The asynchronous parameter server, which has no steps to trace,
// records none.
func (t *tracer) watchLinks() {
	if t.r.c.Comm.Algorithm == AsyncParameterServer {
		return
	}
	t.links.init(t.r)
	t.r.topo.Network().OnChange = t.observe
}

func (t *tracer) on() bool { return t.r.step >= t.from }

// observe records the links' flows when the traced steps are running.
func (t *tracer) observe() {
	if t.on() && !t.links.stopped {
		t.links.observe(t.r.topo.Network(), float64(t.r.s.Now()))
	}
}

func (r *run) traceSpan(k *rank, name string, start, end float64) {
	if r.tr == nil || !r.tr.on() {
		return
	}
	r.tr.dev = append(r.tr.dev, span{tid: k.id, name: name, cat: "compute", start: start, end: end})
}

func (r *run) traceWait(k *rank, name string, start, end float64) {
	if r.tr == nil || !r.tr.on() || !(end > start) {
		return
	}
	r.tr.dev = append(r.tr.dev, span{tid: k.id, name: name, cat: "wait", start: start, end: end})
}

func (r *run) traceComm(g *group, bucket int, start, end float64) {
	if r.tr == nil || !r.tr.on() {
		return
	}
	r.tr.comm = append(r.tr.comm, span{tid: g.stage, name: fmt.Sprintf("%v bucket %d", r.c.Comm.Algorithm, bucket), cat: "comm", start: start, end: end,
		args: map[string]string{"bytes": g.buckets[bucket].String()}})
}

func (r *run) traceInput(l *loader, stage int, name string, q int, start, end float64) {
	if r.tr == nil || l.node != 0 || !(end > start) {
		return
	}
	r.tr.input = append(r.tr.input, span{tid: stage, name: name, cat: "input", start: start, end: end,
		args: map[string]string{"micro-batch": fmt.Sprint(q)}})
}

func (r *run) traceDB(l *loader, start, end float64) {
	if r.tr == nil {
		return
	}
	r.tr.input = append(r.tr.input, span{tid: 3, name: fmt.Sprintf("node %d", l.node), cat: "input", start: start, end: end})
}

func (t *tracer) stepEnded() {
	r := t.r
	if !t.on() {
		return
	}
	s := r.steps[len(r.steps)-1]
	if !t.started {
		t.start, t.started = float64(s.Start), true
	}
	t.end = float64(s.End)
	for i := range r.ranks {
		t.busy[i] += r.ranks[i].busy
	}
	if r.step == r.c.Steps-1 {
		t.links.stop(t.end)
	}
}

// finish returns the trace of the traced steps.
func (t *tracer) finish() *Trace {
	r := t.r
	R := len(r.ranks)
	keep := make([]bool, R)
	slow := -1
	if R <= MaxTracedDevices {
		for i := range keep {
			keep[i] = true
		}
	} else {
		for i := range min(r.c.DevicesPerNode, MaxTracedDevices) {
			keep[i] = true
		}
		slow = 0
		for i, b := range t.busy {
			if b > t.busy[slow] {
				slow = i
			}
		}
		keep[slow], keep[R-1] = true, true
	}
	tr := &Trace{}
	meta := func(pid, tid int, name string, process bool) {
		ev := TraceEvent{Name: "thread_name", Ph: "M", Pid: pid, Tid: tid, Args: map[string]string{"name": name}}
		if process {
			ev.Name = "process_name"
		}
		tr.Events = append(tr.Events, ev)
	}
	meta(pidDevices, 0, "devices", true)
	for i, k := range keep {
		if k {
			rk := &r.ranks[i]
			name := fmt.Sprintf("device %d (node %d", i, rk.node)
			if r.c.Stages > 1 {
				name += fmt.Sprintf(", stage %d", rk.stage)
			}
			if i == slow {
				name += ", slowest"
			}
			meta(pidDevices, i, name+")", false)
		}
	}
	meta(pidComm, 0, "gradient exchange", true)
	for s := range r.c.Stages {
		meta(pidComm, s, fmt.Sprintf("stage %d replicas", s), false)
	}
	if r.loaders != nil {
		meta(pidInput, 0, "input pipeline", true)
		for i, n := range []string{"node 0 read", "node 0 decode", "node 0 copy to devices"} {
			meta(pidInput, i, n, false)
		}
		if r.db != nil {
			meta(pidInput, 3, "shared database file", false)
		}
	}
	add := func(pid int, spans []span, filter bool) {
		for _, s := range spans {
			if filter && (s.end <= t.start || s.start >= t.end) {
				continue
			}
			if pid == pidDevices && !keep[s.tid] {
				continue
			}
			tr.Events = append(tr.Events, TraceEvent{Name: s.name, Cat: s.cat, Ph: "X", Ts: s.start * 1e6, Dur: (s.end - s.start) * 1e6, Pid: pid, Tid: s.tid, Args: s.args})
		}
	}
	add(pidDevices, t.dev, false)
	add(pidComm, t.comm, false)
	add(pidInput, t.input, true)
	t.links.events(tr)
	slices.SortStableFunc(tr.Events[:], func(a, b TraceEvent) int {
		if a.Ph != b.Ph {
			if a.Ph == "M" {
				return -1
			}
			return 1
		}
		return 0
	})
	return tr
}
