package sim

import (
	"strconv"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/netsim"
)

// loader is a node's input pipeline: it reads, decodes and copies one
// micro-batch for each of the node's consumers (first-stage devices) at a
// time, three FIFO stages in tandem, at most Prefetch micro-batches ahead
// of the consumers.
type loader struct {
	r         *run
	node      int
	consumers []int   // rank ids
	n         float64 // samples per node batch
	total     int     // node batches to deliver

	issued, taken int
	slotQ         []int  // batch held by each ring slot, -1 if free
	count         []int  // consumers that took the slot's batch
	ready         []bool // the slot's batch is on the devices

	readBusy  bool
	readNext  int
	readStart float64
	decodeEnd float64
	copyEnd   float64
	dRead     float64
	dDecode   float64
	dCopy     float64
	pending   []int // batches whose ready event is scheduled, in order

	path     *netsim.Path // shared storage
	client   *netsim.Link // this node's link to the shared storage
	flowDone func(*netsim.Flow)
	readEv   loaderReadEvent
	readyEv  loaderReadyEvent
}

type loaderReadEvent struct{ l *loader }

func (e *loaderReadEvent) Fire() { e.l.readDone() }

type loaderReadyEvent struct{ l *loader }

func (e *loaderReadyEvent) Fire() { e.l.onReady() }

// dbServer is the shared database file: one server for the whole system
// that serves read requests one at a time, first come first served.
type dbServer struct {
	r      *run
	queue  []*loader
	head   int
	busy   bool
	cur    *loader
	per    float64 // hold per sample, seconds
	start  float64
	holdEv dbHoldEvent
	doneFn func(*netsim.Flow)
}

type dbHoldEvent struct{ d *dbServer }

func (e *dbHoldEvent) Fire() { e.d.transfer() }

func (r *run) newLoaders() {
	c := r.c
	in := &c.Input
	P := in.Prefetch
	b := float64(c.MicroBatch)
	r.loaders = make([]*loader, c.Nodes)
	var agg *netsim.Link
	net := r.topo.Network()
	if in.Storage == Shared || in.Storage == SharedDB {
		agg = net.AddLink("storage", in.Shared.Aggregate, 0)
		r.storage = agg
	}
	readers := 0
	for node := range c.Nodes {
		var cons []int
		first, k := c.NodeDevices(node)
		for d := range k {
			if id := first + d; id%c.Stages == 0 {
				cons = append(cons, id)
			}
		}
		if len(cons) == 0 {
			continue
		}
		readers++
		l := &loader{r: r, node: node, consumers: cons, n: float64(len(cons)) * b, total: c.Steps * c.Accumulation,
			slotQ: make([]int, P), count: make([]int, P), ready: make([]bool, P)}
		for i := range l.slotQ {
			l.slotQ[i] = -1
		}
		l.readEv.l, l.readyEv.l = l, l
		bytes := float64(l.n * float64(in.SampleBytes))
		switch in.Storage {
		case Local:
			cold := bytes / float64(in.Local)
			l.dRead = (1 - in.CacheHit) * cold
			r.coldRead = max(r.coldRead, cold*float64(c.Accumulation))
		case Shared, SharedDB:
			l.client = net.AddLink("client["+strconv.Itoa(node)+"]", in.Shared.PerClient, 0)
			links := []*netsim.Link{agg, l.client}
			if _, nicIn := r.topo.NIC(node, 0); nicIn != nil {
				links = append(links, nicIn)
			}
			lat := in.Shared.Latency
			if in.Storage == SharedDB {
				lat = 0
			}
			l.path = net.NewPath(lat, links...)
			l.flowDone = func(*netsim.Flow) { l.readDone() }
		}
		if in.Decode > 0 {
			l.dDecode = float64(l.n*float64(in.Decode)) / in.DecodeParallelism()
		}
		if in.Copy > 0 {
			l.dCopy = float64(b*float64(in.Copy)) / float64(in.HostToDevice)
		}
		r.loaders[node] = l
	}
	if in.Storage == SharedDB {
		d := &dbServer{r: r, per: float64(in.DB.Service) + float64(float64(readers-1)*float64(in.DB.PerReader))}
		d.holdEv.d = d
		d.doneFn = d.done
		r.db = d
	}
	for _, l := range r.loaders {
		if l != nil {
			l.issue()
		}
	}
}

// issue admits batches into the pipeline while fewer than Prefetch are
// untaken.
func (l *loader) issue() {
	P := len(l.slotQ)
	for l.issued < l.total && l.issued < l.taken+P {
		q := l.issued
		l.slotQ[q%P] = q
		l.issued++
		if !l.readBusy {
			l.startRead()
		}
	}
}

func (l *loader) startRead() {
	r := l.r
	l.readBusy = true
	l.readStart = float64(r.s.Now())
	switch r.c.Input.Storage {
	case Local, Cached:
		r.s.AtEvent(units.Seconds(l.readStart+l.dRead), &l.readEv)
	case Shared:
		net := r.topo.Network()
		if r.tr != nil {
			net.Label = "input read, node " + strconv.Itoa(l.node)
		}
		net.Transfer(l.path, units.Bytes(float64(l.n*float64(r.c.Input.SampleBytes))), l.flowDone)
		net.Label = ""
	case SharedDB:
		r.db.request(l)
	}
}

// readDone passes the batch read to decoding and copying, whose FIFO
// times follow in closed form, and starts the next read.
func (l *loader) readDone() {
	r := l.r
	now := float64(r.s.Now())
	q := l.readNext
	l.readNext++
	l.readBusy = false
	r.traceInput(l, 0, "read", q, l.readStart, now)
	ds := max(l.decodeEnd, now)
	l.decodeEnd = ds + l.dDecode
	r.traceInput(l, 1, "decode", q, ds, l.decodeEnd)
	cs := max(l.copyEnd, l.decodeEnd)
	l.copyEnd = cs + l.dCopy
	r.traceInput(l, 2, "copy", q, cs, l.copyEnd)
	l.pending = append(l.pending, q)
	r.s.AtEvent(units.Seconds(l.copyEnd), &l.readyEv)
	if l.readNext < l.issued {
		l.startRead()
	}
}

func (l *loader) onReady() {
	r := l.r
	q := l.pending[0]
	l.pending = l.pending[1:]
	P := len(l.slotQ)
	l.ready[q%P] = true
	if r.onDeliver != nil {
		C := int64(r.c.Replicas())
		for _, id := range l.consumers {
			rep := id / r.c.Stages
			r.onDeliver(rep, q, (int64(q)*C+int64(rep))*int64(r.c.MicroBatch))
		}
	}
	M := r.c.Accumulation
	for _, id := range l.consumers {
		k := &r.ranks[id]
		if k.phase != phaseTask || k.waiting != waitInput || k.next >= len(k.tasks) {
			continue
		}
		if t := k.tasks[k.next]; !t.back && r.step*M+t.mb == q {
			k.try()
		}
	}
}

func (l *loader) isReady(q int) bool {
	P := len(l.slotQ)
	return l.slotQ[q%P] == q && l.ready[q%P]
}

// take records that one consumer started its forward on batch q.
func (l *loader) take(q int) {
	P := len(l.slotQ)
	i := q % P
	l.count[i]++
	if l.count[i] < len(l.consumers) {
		return
	}
	l.count[i], l.ready[i], l.slotQ[i] = 0, false, -1
	l.taken++
	l.issue()
}

func (d *dbServer) request(l *loader) {
	d.queue = append(d.queue, l)
	if !d.busy {
		d.serve()
	}
}

// serve holds the file for the head request's service time, then moves
// its bytes.
func (d *dbServer) serve() {
	l := d.queue[d.head]
	d.queue[d.head] = nil
	d.head++
	if d.head == len(d.queue) {
		d.queue, d.head = d.queue[:0], 0
	}
	d.busy, d.cur = true, l
	d.start = float64(d.r.s.Now())
	d.r.s.AtEvent(units.Seconds(d.start+float64(l.n*d.per)), &d.holdEv)
}

func (d *dbServer) transfer() {
	l := d.cur
	net := d.r.topo.Network()
	if d.r.tr != nil {
		net.Label = "database read, node " + strconv.Itoa(l.node)
	}
	net.Transfer(l.path, units.Bytes(float64(l.n*float64(d.r.c.Input.SampleBytes))), d.doneFn)
	net.Label = ""
}

func (d *dbServer) done(*netsim.Flow) {
	l := d.cur
	d.r.traceDB(l, d.start, float64(d.r.s.Now()))
	l.readDone()
	d.busy, d.cur = false, nil
	if d.head < len(d.queue) {
		d.serve()
	}
}

// stagingTime returns the one-time copy of Staging.Bytes from the shared
// file server onto every node's drives. All nodes copy at once, each at
//
//	min(Aggregate/Nodes, PerClient, NIC, Write)
//
// which is what max-min sharing gives identical flows through the server,
// their client limits, NICs and drives.
func (c *Config) stagingTime() units.Seconds {
	st := c.Input.Staging
	if st.Bytes == 0 {
		return 0
	}
	rate := min(float64(c.Input.Shared.Aggregate)/float64(c.Nodes), float64(c.Input.Shared.PerClient), float64(st.Write))
	if st.NIC > 0 {
		rate = min(rate, float64(st.NIC))
	}
	return units.Seconds(float64(st.Bytes)/rate) + c.Input.Shared.Latency
}
