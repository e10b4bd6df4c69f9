package netsim

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/event"
	"scaleplan/sim/internal/timeq"
)

const (
	badBandwidth = "netsim: link bandwidth is not a positive finite number"
	badLatency   = "netsim: latency is negative or not finite"
	badBytes     = "netsim: bytes is negative or not finite"
	badWeight    = "netsim: weight is not positive"
	foreignLink  = "netsim: link belongs to another network"
	foreignPath  = "netsim: path belongs to another network"
)

// Sharing selects how links divide their bandwidth among the flows that
// cross them.
type Sharing int

const (
	// MaxMin is max-min fair sharing, found by progressive filling: every
	// flow's rate rises together until a link is full; the flows crossing
	// it are frozen at that rate and the rest keep rising. No flow can go
	// faster without slowing one that is no faster than it.
	MaxMin Sharing = iota
	// EqualShare gives each flow the minimum over its links of the link's
	// bandwidth divided by the weight of all flows on it, whether or not
	// they are limited elsewhere. Capacity a flow cannot use is left idle.
	EqualShare
)

// String returns "max-min" or "equal-share".
func (s Sharing) String() string {
	switch s {
	case MaxMin:
		return "max-min"
	case EqualShare:
		return "equal-share"
	}
	return "Sharing(?)"
}

// Link is one direction of a network or memory channel with a bandwidth
// and a per-message latency.
type Link struct {
	name string
	kind string // with i and j, names a topology link lazily: kind[i] or kind[i,j]
	i, j int
	bw   float64
	lat  units.Seconds
	id   int
	slot int32 // index in the network's linkState
	net  *Network
}

// Name returns the name given to AddLink, or for a topology's link its
// kind and index, such as "nic-out[3,0]".
func (l *Link) Name() string {
	switch {
	case l.kind == "":
		return l.name
	case l.j < 0:
		return l.kind + "[" + strconv.Itoa(l.i) + "]"
	}
	return l.kind + "[" + strconv.Itoa(l.i) + "," + strconv.Itoa(l.j) + "]"
}

// Bandwidth returns the link's capacity in bytes per second.
func (l *Link) Bandwidth() units.BytesPerSec { return units.BytesPerSec(l.bw) }

// Latency returns the latency a message pays for crossing the link.
func (l *Link) Latency() units.Seconds { return l.lat }

// ID returns the link's index in the order links were added, from 0.
func (l *Link) ID() int { return l.id }

// Use is a link on a path and the number of streams of the path that
// cross it.
type Use struct {
	Link   *Link
	Weight int   // streams crossing Link; at least 1
	slot   int32 // Link's slot in the network's link state
}

// Path is the set of links a flow crosses, each with a weight: the number
// of the flow's streams that cross it. A path built from one route has one
// stream; a path built from many routes (a flow group) has one stream per
// route, all of which move the flow's bytes at the flow's common rate.
//
// A Path's latency is the largest over its routes of the route's extra
// latency plus the latencies of the links it crosses. Paths are immutable
// and may be reused by any number of flows; build each path once, because
// the network keeps every path that has carried a flow, for Stats.
type Path struct {
	net     *Network
	uses    []Use // sorted by link ID
	latency units.Seconds
	streams int
	share   float64 // min over uses of bandwidth / weight, and limit; +Inf without links
	limit   float64 // the most each stream moves, bytes/s (AddLimited); +Inf without a limit

	moved      float64 // stream bytes moved by this path's flows, for Stats
	registered bool
	claim      *claim // how its flows are listed, for a path of claimMin links or more
	unclaimed  bool   // a path of claimMin links or more found mostly shared
}

// Uses returns the path's links with their weights, in link order. The
// slice must not be modified.
func (p *Path) Uses() []Use { return p.uses }

// Latency returns the time from a flow's start to its first byte.
func (p *Path) Latency() units.Seconds { return p.latency }

// Streams returns the number of routes added to the path.
func (p *Path) Streams() int { return p.streams }

// Rate returns the rate of each stream of a flow on the path when it is the
// only flow in the network:
//
//	min(Limit, min over links l of bandwidth(l) / weight(l))
//
// It is +Inf for a path without links or limit.
func (p *Path) Rate() units.BytesPerSec { return units.BytesPerSec(p.share) }

// Limit returns the most a stream of the path moves per second, whatever
// the links leave it: the smallest limit of the routes added with
// AddLimited, +Inf if none.
func (p *Path) Limit() units.BytesPerSec { return units.BytesPerSec(p.limit) }

// PathBuilder accumulates routes into a Path.
type PathBuilder struct {
	net     *Network
	weight  []int32 // by link ID
	touched []int
	latency units.Seconds
	streams int
	limit   float64 // smallest route limit so far; 0 means none yet
}

// NewPathBuilder returns an empty builder for paths on n.
func (n *Network) NewPathBuilder() *PathBuilder {
	return &PathBuilder{net: n, weight: make([]int32, len(n.links))}
}

// Add adds one route: a stream crossing links in order, whose latency is
// extra plus the sum of the links' latencies. A link listed twice (host
// memory written and then read) carries two streams. A route without links
// adds only latency.
func (b *PathBuilder) Add(extra units.Seconds, links ...*Link) {
	if extra < 0 || math.IsInf(float64(extra), 0) || math.IsNaN(float64(extra)) {
		panic(badLatency)
	}
	lat := extra
	for _, l := range links {
		if l.net != b.net {
			panic(foreignLink)
		}
		if l.id >= len(b.weight) {
			b.weight = append(b.weight, make([]int32, len(b.net.links)-len(b.weight))...)
		}
		if b.weight[l.id] == 0 {
			b.touched = append(b.touched, l.id)
		}
		b.weight[l.id]++
		lat += l.lat
	}
	if lat > b.latency {
		b.latency = lat
	}
	b.streams++
}

// AddLimited adds a route as Add does whose stream moves at most limit
// bytes/s however idle its links are: one TCP connection that one CPU
// core serves, a cloud network's cap on one flow. The flow group of the
// path moves at the smallest limit of its routes (gang semantics, see
// the package documentation). A limit that is not positive panics.
func (b *PathBuilder) AddLimited(extra units.Seconds, limit units.BytesPerSec, links ...*Link) {
	if !(limit > 0) {
		panic(badLimit)
	}
	b.Add(extra, links...)
	if b.limit == 0 || float64(limit) < b.limit {
		b.limit = float64(limit)
	}
}

const badLimit = "netsim: stream limit not positive"

// Path returns the path of the routes added so far and resets the builder.
func (b *PathBuilder) Path() *Path {
	slices.Sort(b.touched)
	limit := math.Inf(1)
	if b.limit > 0 {
		limit = b.limit
	}
	p := &Path{net: b.net, uses: make([]Use, len(b.touched)), latency: b.latency, streams: b.streams, share: limit, limit: limit}
	for i, id := range b.touched {
		l := b.net.links[id]
		w := int(b.weight[id])
		p.uses[i] = Use{Link: l, Weight: w, slot: l.slot}
		if s := l.bw / float64(w); s < p.share {
			p.share = s
		}
		b.weight[id] = 0
	}
	b.touched = b.touched[:0]
	b.latency, b.streams, b.limit = 0, 0, 0
	return p
}

// NewPath returns the path of a single route; see PathBuilder.Add.
func (n *Network) NewPath(extra units.Seconds, links ...*Link) *Path {
	b := PathBuilder{net: n, weight: make([]int32, len(n.links))}
	b.Add(extra, links...)
	return b.Path()
}

// Flow is a transfer of the same number of bytes on every stream of a path.
// It waits the path's latency, then moves its bytes at the rate the
// network's sharing gives it, which changes whenever another flow starts or
// finishes moving bytes.
type Flow struct {
	net   *Network
	path  *Path
	bytes float64
	done  func(*Flow)
	label string

	start, begin, end units.Seconds
	moving, finished  bool

	rem    float64 // bytes left per stream
	moved  float64 // bytes moved per stream, integrated from the rates
	rate   float64 // bytes/s per stream
	last   float64 // time rem and moved were brought up to date
	finish float64 // time rem reaches 0 at the current rate
	pooled bool    // reused by the network once done returns
	listed bool    // on its links' lists (see Network.unsolo)

	seq    uint64       // start order among the flows that moved
	aidx   int32        // index in the network's active list
	queued bool         // in the finish queue, at finish
	qid    int32        // while queued: its index in the network's fids
	qh     timeq.Handle // while queued: its entry in the finish queue
	pos    []int32      // index in each link's list of flows, by entry of eff
	pos4   [4]int32     // storage of pos for a path of up to 4 links
	mark   uint64       // epoch at which the flow joined a recomputation
	nrate  float64      // recomputation: the new rate
	frozen bool         // progressive filling: rate set
}

// Path returns the flow's path.
func (f *Flow) Path() *Path { return f.path }

// Label returns the network's Label when the flow was started (for a
// collective's flows, when the collective was started).
func (f *Flow) Label() string { return f.label }

// Bytes returns the bytes each stream moves.
func (f *Flow) Bytes() units.Bytes { return units.Bytes(f.bytes) }

// Start returns the time Transfer was called.
func (f *Flow) Start() units.Seconds { return f.start }

// Begin returns the time the flow's first byte moved: Start plus the path's
// latency.
func (f *Flow) Begin() units.Seconds { return f.begin }

// End returns the time the flow's last byte arrived, or 0 before then.
func (f *Flow) End() units.Seconds { return f.end }

// Done reports whether the flow has finished.
func (f *Flow) Done() bool { return f.finished }

// Rate returns the flow's current rate per stream in bytes per second: 0
// while it waits for its latency or after it has finished.
func (f *Flow) Rate() units.BytesPerSec {
	if !f.moving {
		return 0
	}
	return units.BytesPerSec(f.rate)
}

// Network is a set of links shared by flows, driven by a scheduler.
type Network struct {
	s *event.Scheduler

	// Sharing is the bandwidth-sharing policy; default MaxMin. Change it
	// only while no flow is moving.
	Sharing Sharing

	// Label names the flows that Transfer, Topology.AllReduce and
	// Topology.AsyncPS start from now on, for an observer (see OnChange)
	// to tell them apart; Flow.Label returns it. Default "".
	Label string

	// OnChange, if not nil, is called after every change of the moving
	// flows' rates: when a flow starts moving bytes (its latency has
	// passed) and when flows finish (before their done functions run,
	// with the finished flows already gone from Active). Active and each
	// flow's Rate give the new state, which holds until the next call. It
	// must not start or change flows. Default nil; it costs nothing then.
	OnChange func()

	links  []*Link
	paths  []*Path     // paths that have carried a flow, for Stats
	active []*Flow     // moving flows in start order; nil where one finished
	dead   int         // nils in active
	seq    uint64      // start order of the next flow to move
	finq   timeq.Queue // moving flows by finish time, then start order
	fids   []*Flow     // the flows of finq's entries, by index
	freeID []int32     // indices of fids not in use
	solo   *Flow       // the only moving flow, not on its links' lists

	wake   event.Handle
	wakeAt float64

	ls linkState

	// Recomputation scratch.
	epoch     uint64  // marks of a recomputation's component
	depoch    uint64  // marks of an overload check
	comp      []*Flow // flows whose rates are recomputed
	capped    []*Flow // filling: flows of comp with a limit, by limit
	compLinks []int32 // binding links of comp
	lheap     []int32 // compLinks by filling level
	seeds     []int32 // links whose flows' rates a change can reach
	touched   []int32 // links an overload check looks at
	dirty     []int32 // links whose filling level changed
	doneBuf   []*Flow
	pool      []*Flow
}

// linkState is what the network keeps per link, indexed by link slot:
// a record per link, and the scratch of overloads.
type linkState struct {
	l     []linkRec
	dmark []uint64  // epoch of dl
	dl    []float64 // tentative change of load
}

// linkRec is the state of one link, real or virtual, in two cache lines:
// what a start or finish reads, then what filling reads.
type linkRec struct {
	flows []flowRef // moving flows listed on the link
	wsum  float64   // sum of the weights of the moving flows (exact: integers)
	load  float64   // sum of rate·weight of the moving flows
	bw    float64   // bandwidth
	nfree int32     // listed flows of paths not claimed
	fresh int32     // updates of load since it was last summed exactly
	mark  uint32    // low 32 bits of the epoch at which the link joined the component (see nextEpoch)
	bind  bool      // may limit a rate: in the binding set (see maxMinFrom)
	dirty bool      // filling: in Network.dirty
	ncl   uint8     // len(claims), 2 for two or more: read with nfree, in the first cache line

	claims []claimRef // claimed paths crossing the link
	hpos   int32      // filling: position in lheap, or -1
	sat    uint64     // epoch at which filling found it full
	fill   float64    // filling: rate·weight of the frozen flows
	wun    float64    // filling: weight of the flows not yet frozen
	lvl    float64    // filling: the level at which the link is full
}

// flowRef is a flow on a link's list, the index of the link in the
// flow's path and its weight there.
type flowRef struct {
	f *Flow
	u int32
	w int32 // the flow's weight on the link
}

// NewNetwork returns an empty network whose flows run on s.
func NewNetwork(s *event.Scheduler) *Network {
	return &Network{s: s}
}

// Scheduler returns the scheduler the network runs on.
func (n *Network) Scheduler() *event.Scheduler { return n.s }

// AddLink adds a link with the given bandwidth and per-message latency.
// It panics if the bandwidth is not positive and finite or the latency is
// negative or not finite.
func (n *Network) AddLink(name string, bw units.BytesPerSec, latency units.Seconds) *Link {
	if !(bw > 0) || math.IsInf(float64(bw), 0) {
		panic(badBandwidth)
	}
	if latency < 0 || math.IsInf(float64(latency), 0) || math.IsNaN(float64(latency)) {
		panic(badLatency)
	}
	l := &Link{name: name, bw: float64(bw), lat: latency, id: len(n.links), net: n}
	n.addLink(l)
	return l
}

// addIndexed adds a link named kind[i], or kind[i,j] if j ≥ 0.
func (n *Network) addIndexed(kind string, i, j int, bw units.BytesPerSec, latency units.Seconds) *Link {
	l := n.AddLink("", bw, latency)
	l.kind, l.i, l.j = kind, i, j
	return l
}

func (n *Network) addLink(l *Link) {
	n.links = append(n.links, l)
	n.addSlot(l)
}

// addSlot gives a link, real or virtual (see claim), its state.
func (n *Network) addSlot(l *Link) {
	s := &n.ls
	l.slot = int32(len(s.l))
	s.l = append(s.l, linkRec{bw: l.bw, hpos: -1})
	s.dmark = append(s.dmark, 0)
	s.dl = append(s.dl, 0)
}

// Links returns the network's links in the order they were added. The
// slice must not be modified.
func (n *Network) Links() []*Link { return n.links }

// Active returns the flows now moving bytes, in start order. The slice is
// valid until the next event and must not be modified.
func (n *Network) Active() []*Flow {
	n.compact()
	return n.active
}

// compact removes the finished flows from active, keeping the order.
func (n *Network) compact() {
	if n.dead == 0 {
		return
	}
	k := 0
	for _, f := range n.active {
		if f != nil {
			f.aidx = int32(k)
			n.active[k] = f
			k++
		}
	}
	clear(n.active[k:])
	n.active = n.active[:k]
	n.dead = 0
}

// Transfer starts a flow of bytes on every stream of p. After p's latency
// the flow moves its bytes; when the last byte arrives, done (if not nil)
// is called with the flow. A flow of 0 bytes, or on a path without links,
// finishes when its latency has passed.
func (n *Network) Transfer(p *Path, bytes units.Bytes, done func(*Flow)) *Flow {
	if p.net != n {
		panic(foreignPath)
	}
	if !(bytes >= 0) || math.IsInf(float64(bytes), 0) {
		panic(badBytes)
	}
	return n.transfer(p, bytes, n.Label, done, false)
}

// Send starts a flow as Transfer does, for a caller that keeps no
// reference to it: the network reuses the flow once done returns, so done
// must not keep it either. It spares an allocation per flow.
func (n *Network) Send(p *Path, bytes units.Bytes, done func(*Flow)) {
	if p.net != n {
		panic(foreignPath)
	}
	if !(bytes >= 0) || math.IsInf(float64(bytes), 0) {
		panic(badBytes)
	}
	n.transfer(p, bytes, n.Label, done, true)
}

// transfer is Transfer; a pooled flow is reused once done returns, so
// nothing may keep it.
func (n *Network) transfer(p *Path, bytes units.Bytes, label string, done func(*Flow), pooled bool) *Flow {
	var f *Flow
	if k := len(n.pool); pooled && k > 0 {
		f = n.pool[k-1]
		n.pool = n.pool[:k-1]
	} else {
		f = new(Flow)
	}
	*f = Flow{net: n, path: p, bytes: float64(bytes), done: done, label: label, start: n.s.Now(), rem: float64(bytes), pooled: pooled,
		pos: f.pos[:0]}
	if !p.registered {
		p.registered = true
		n.paths = append(n.paths, p)
	}
	n.s.AfterEvent(p.latency, (*beginEvent)(f))
	return f
}

// beginEvent fires when a flow's latency has passed.
type beginEvent Flow

func (e *beginEvent) Fire() { (*Flow)(e).beginMoving() }

// wakeEvent fires when the earliest moving flow finishes.
type wakeEvent Network

func (e *wakeEvent) Fire() { (*Network)(e).onWake() }

func (f *Flow) beginMoving() {
	n := f.net
	now := n.s.Now()
	f.begin = now
	if f.bytes == 0 || len(f.eff()) == 0 {
		f.moved = f.bytes
		f.path.moved += f.bytes
		f.rem = 0
		f.end = now
		f.finished = true
		if f.done != nil {
			f.done(f)
		}
		n.recycle(f)
		return
	}
	f.moving = true
	f.last = float64(now)
	f.seq = n.seq
	n.seq++
	f.aidx = int32(len(n.active))
	n.active = append(n.active, f)
	switch {
	case n.finq.Len() == 0:
		// Alone on the network, the flow moves at its path's rate under
		// either policy; it goes on its links' lists only once another
		// flow moves, so that a lone flow costs nothing per link.
		n.solo = f
		f.rate = f.path.share
		n.setFinish(f, float64(now))
	case n.Sharing == EqualShare:
		n.unsolo()
		n.enlist(f, false)
		n.equalShareFrom(f.eff())
	default:
		n.unsolo()
		n.nextEpoch()
		n.comp, n.compLinks = n.comp[:0], n.compLinks[:0]
		n.enlist(f, true)
		if len(n.compLinks) == 0 {
			// Held by its limit, the flow may bring no link near its
			// bandwidth: it starts the component alone.
			f.mark = n.epoch
			n.comp = append(n.comp, f)
		}
		n.maxMinComponent()
	}
	n.reschedule()
	if n.OnChange != nil {
		n.OnChange()
	}
}

func (n *Network) recycle(f *Flow) {
	if f.pooled {
		*f = Flow{pos: f.pos[:0]}
		n.pool = append(n.pool, f)
	}
}

// unsolo puts the flow that moved alone, if any, on its links' lists.
func (n *Network) unsolo() {
	if n.solo != nil {
		n.enlist(n.solo, false)
		n.solo = nil
	}
}

// enlist puts a moving flow on its links' lists, adding its weight and
// its load at its rate, and adds to the binding set the links on which
// the flow could bring the load within bindMargin of the bandwidth if it
// ran at its rate alone: at least the link that limits it alone. With
// seed, the flow's binding links start the component to recompute.
func (n *Network) enlist(f *Flow, seed bool) {
	s := &n.ls
	p := f.path
	if p.claim == nil && !p.unclaimed && len(p.uses) >= claimMin {
		n.claimOrNot(p)
	}
	free := p.claim == nil
	share := p.share
	f.listed = true
	eff := f.eff()
	if f.pos == nil && len(eff) <= len(f.pos4) {
		f.pos = f.pos4[:0]
	}
	for i, u := range eff {
		id := u.slot
		if free {
			n.freeJoins(id)
		}
		f.pos = append(f.pos, int32(len(s.l[id].flows)))
		s.l[id].flows = append(s.l[id].flows, flowRef{f, int32(i), int32(u.Weight)})
		w := float64(u.Weight)
		if s.l[id].load+float64(w*share) > float64(s.l[id].bw*(1-bindMargin)) {
			s.l[id].bind = true
		}
		if seed {
			n.addCompLink(id)
		}
		s.l[id].wsum += w
		s.l[id].load += float64(w * f.rate)
	}
}

// setFinish sets the time a moving flow finishes at its rate and puts it
// in the finish queue.
func (n *Network) setFinish(f *Flow, now float64) {
	if f.queued {
		n.finq.Remove(f.qh)
	} else if n.finq.Len() == 0 && n.s.SortedQueue() && !n.finq.Sorted() {
		n.finq.UseSorted() // the scheduler's reference, for its tests
	}
	f.finish = now + f.rem/f.rate
	if f.finish < now {
		f.finish = now
	}
	if !f.queued {
		f.queued = true
		if k := len(n.freeID); k > 0 {
			f.qid = n.freeID[k-1]
			n.freeID = n.freeID[:k-1]
		} else {
			f.qid = int32(len(n.fids))
			n.fids = append(n.fids, nil)
		}
		n.fids[f.qid] = f
	}
	f.qh = n.finq.Push(f.finish, f.seq, f.qid)
}

// detach takes a finished flow off its links' lists and adds to seeds
// those whose flows' rates may change: under MaxMin the binding links
// left with flows, under EqualShare all links left with flows. A link left
// without flows leaves the binding set.
func (n *Network) detach(f *Flow) {
	s := &n.ls
	all := n.Sharing == EqualShare
	free := f.path.claim == nil
	for i, u := range f.eff() {
		id := u.slot
		list := s.l[id].flows
		k, last := f.pos[i], len(list)-1
		if int(k) != last {
			m := list[last]
			list[k] = m
			m.f.pos[m.u] = k
		}
		list[last] = flowRef{}
		s.l[id].flows = list[:last]
		if last == 0 {
			s.l[id].wsum, s.l[id].load, s.l[id].fresh, s.l[id].bind = 0, 0, 0, false
		} else {
			s.l[id].wsum -= float64(u.Weight)
			s.l[id].load -= float64(float64(u.Weight) * f.rate)
			if all || s.l[id].bind {
				n.seeds = append(n.seeds, id)
			}
		}
		if free {
			n.freeLeaves(id)
		}
	}
}

// settleFlow brings a moving flow's progress up to time now.
func (f *Flow) settleFlow(now float64) {
	if dt := now - f.last; dt > 0 {
		x := float64(f.rate * dt)
		f.rem -= x
		f.moved += x
		f.path.moved += x
		f.last = now
	}
}

// onWake finishes the flows whose last byte arrives now.
func (n *Network) onWake() {
	now := float64(n.s.Now())
	n.wake = event.Handle{}
	done := n.doneBuf[:0]
	for n.finq.Len() > 0 {
		m, _ := n.finq.Min()
		f := n.fids[m.V]
		if f.finish > now && f.rem-float64(f.rate*(now-f.last)) > 0 {
			break
		}
		n.finq.Pop()
		f.queued = false
		n.fids[f.qid] = nil
		n.freeID = append(n.freeID, f.qid)
		done = append(done, f)
	}
	slices.SortFunc(done, func(a, b *Flow) int { return cmp.Compare(a.seq, b.seq) })
	n.seeds = n.seeds[:0]
	for _, f := range done {
		// The flow has delivered its bytes, including what the rounding
		// of its rate or of now leaves uncounted, so that Stats adds up.
		f.moved += f.rem
		f.path.moved += f.rem
		f.moving, f.finished = false, true
		f.rem = 0
		f.end = units.Seconds(now)
		n.active[f.aidx] = nil
		n.dead++
		if !f.listed {
			n.solo = nil
			continue
		}
		n.detach(f)
	}
	if n.dead > len(n.active)/2 {
		n.compact()
	}
	n.recomputeAfter()
	n.reschedule()
	if n.OnChange != nil && len(done) > 0 {
		n.compact()
		n.OnChange()
	}
	for _, f := range done {
		if f.done != nil {
			f.done(f)
		}
		n.recycle(f)
	}
	clear(done)
	n.doneBuf = done[:0]
}

// recomputeAfter recomputes the rates that the finished flows' links,
// listed in seeds, can change.
func (n *Network) recomputeAfter() {
	if len(n.seeds) == 0 {
		return
	}
	if n.Sharing == EqualShare {
		n.equalShareIDs(n.seeds)
	} else {
		n.maxMinIDs(n.seeds)
	}
}

// reschedule sets the wake-up for the earliest finishing flow.
func (n *Network) reschedule() {
	if n.finq.Len() == 0 {
		if n.s.Pending(n.wake) {
			n.s.Cancel(n.wake)
		}
		n.wake = event.Handle{}
		return
	}
	m, _ := n.finq.Min()
	next := m.T
	if n.s.Pending(n.wake) {
		if n.wakeAt == next {
			return
		}
		n.s.Cancel(n.wake)
	}
	n.wakeAt = next
	n.wake = n.s.AtEvent(units.Seconds(next), (*wakeEvent)(n))
}

// Rates are recomputed only where a change can reach them. Under
// EqualShare a flow's rate depends on the total weight on its own links,
// so a flow starting or finishing changes the rates of the flows that
// share a link with it and no others.
//
// Under MaxMin the network keeps a binding set of links, those that may
// limit a rate: every link that filling found full, and every link whose
// load comes within bindMargin of its bandwidth. A link outside the set is
// not full, so leaving it out of progressive filling changes no rate (a
// flow's bottleneck is a full link; a max-min allocation of a relaxed
// problem that the left-out links can carry is the allocation of the
// whole). Rates are then recomputed for the component of the change: the
// flows reachable from the changed flow's links through binding links.
// Components that share no binding link with it keep their rates and their
// finish times. When the new rates would bring a link outside the set
// within bindMargin of its bandwidth, the link joins the set and the
// enlarged component is filled again. A flow is listed on the links of
// Flow.eff: its path's, or for a claimed path those of the claim.

const (
	// saturated is the fraction of a link's bandwidth below which its
	// remaining capacity counts as zero in progressive filling.
	saturated = 1e-12
	// bindMargin is the fraction of a link's bandwidth within which its
	// load makes it a binding link; far above saturated and the rounding
	// of the loads kept incrementally (see commit).
	bindMargin = 1e-9
	// unbindMargin is the fraction below which a link filling did not
	// find full leaves the binding set.
	unbindMargin = 1e-6
)

// equalShareFrom recomputes the rates of the flows sharing a link with
// uses, under EqualShare.
func (n *Network) equalShareFrom(uses []Use) {
	n.seeds = n.seeds[:0]
	for _, u := range uses {
		n.seeds = append(n.seeds, int32(u.slot))
	}
	n.equalShareIDs(n.seeds)
}

// equalShareIDs recomputes the rates of the flows on the given links:
// each the minimum over its links of bandwidth over total weight, and its
// path's limit.
func (n *Network) equalShareIDs(ids []int32) {
	s := &n.ls
	n.nextEpoch()
	n.comp = n.comp[:0]
	for _, id := range ids {
		for _, r := range s.l[id].flows {
			if f := r.f; f.mark != n.epoch {
				f.mark = n.epoch
				n.comp = append(n.comp, f)
			}
		}
	}
	for _, f := range n.comp {
		r := f.path.limit
		for _, u := range f.eff() {
			if x := s.l[u.slot].bw / s.l[u.slot].wsum; x < r {
				r = x
			}
		}
		f.nrate = r
	}
	n.commit()
}

// nextEpoch starts the marks of a new recomputation. A link keeps only
// the low 32 bits of its epoch (linkRec.mark), in the cache line that a
// start or finish reads anyway; when they wrap around to 0, every link's
// mark is cleared and that epoch skipped, so that no stale mark matches.
func (n *Network) nextEpoch() {
	n.epoch++
	if uint32(n.epoch) == 0 {
		for i := range n.ls.l {
			n.ls.l[i].mark = 0
		}
		n.epoch++
	}
}

// maxMinIDs recomputes, under MaxMin, the rates of the component of the
// binding links among ids.
func (n *Network) maxMinIDs(ids []int32) {
	n.nextEpoch()
	n.comp, n.compLinks = n.comp[:0], n.compLinks[:0]
	for _, id := range ids {
		n.addCompLink(id)
	}
	n.maxMinComponent()
}

// addCompLink adds a binding link to the component, once.
func (n *Network) addCompLink(id int32) {
	s := &n.ls
	if e := uint32(n.epoch); s.l[id].bind && s.l[id].mark != e {
		s.l[id].mark = e
		n.compLinks = append(n.compLinks, id)
	}
}

// maxMinComponent closes the component over the binding links from
// compLinks, fills it until no link outside the binding set would be
// overloaded, and commits the rates.
func (n *Network) maxMinComponent() {
	single := false
	for from := 0; ; {
		n.expand(from)
		if single = len(n.comp) == 1; single {
			// A flow alone on its binding links moves at its path's rate,
			// as progressive filling would give it.
			n.comp[0].nrate = n.comp[0].path.share
		} else {
			n.fill()
		}
		from = len(n.compLinks)
		if !n.overloads() {
			break
		}
	}
	n.commit()
	if single {
		return
	}
	s := &n.ls
	for _, id := range n.compLinks {
		if s.l[id].sat != n.epoch && s.l[id].load <= float64(s.l[id].bw*(1-unbindMargin)) {
			s.l[id].bind = false
		}
	}
}

// expand adds to comp every flow on the component's links from index
// from on, and their binding links, until the component is closed.
func (n *Network) expand(from int) {
	s := &n.ls
	for i := from; i < len(n.compLinks); i++ {
		for _, r := range s.l[n.compLinks[i]].flows {
			f := r.f
			if f.mark == n.epoch {
				continue
			}
			f.mark = n.epoch
			n.comp = append(n.comp, f)
			for _, u := range f.eff() {
				n.addCompLink(int32(u.slot))
			}
		}
	}
}

// fill sets nrate for every flow of the component by progressive filling
// over its binding links: all rates rise together; the link that fills
// first (a heap by level) freezes its flows at that level, with every
// link left within saturated of its bandwidth; the rest keep rising. A
// flow whose path has a limit freezes at it when the level reaches it
// first (within saturated), leaving its links' remaining capacity to the
// others, as a private link of bandwidth limit would.
func (n *Network) fill() {
	s := &n.ls
	n.capped = n.capped[:0]
	for _, f := range n.comp {
		f.frozen = false
		if !math.IsInf(f.path.limit, 1) {
			n.capped = append(n.capped, f)
		}
	}
	slices.SortFunc(n.capped, func(a, b *Flow) int { return cmp.Compare(a.path.limit, b.path.limit) })
	n.lheap = n.lheap[:0]
	for _, id := range n.compLinks {
		s.l[id].fill, s.l[id].wun = 0, s.l[id].wsum
		s.l[id].lvl = s.l[id].bw / s.l[id].wun
		s.l[id].hpos = int32(len(n.lheap))
		n.lheap = append(n.lheap, id)
	}
	for i := len(n.lheap)/2 - 1; i >= 0; i-- {
		n.ldown(i)
	}
	level, next := 0.0, 0
	for {
		for next < len(n.capped) && n.capped[next].frozen {
			next++
		}
		capLevel := math.Inf(1)
		if next < len(n.capped) {
			capLevel = n.capped[next].path.limit
		}
		switch {
		case len(n.lheap) > 0 && s.l[n.lheap[0]].lvl < capLevel:
			id := n.lpop()
			level = max(level, s.l[id].lvl)
			n.freezeOn(id, level)
		case next < len(n.capped):
			level = max(level, capLevel)
			n.freezeCapped(next, level)
		default:
			return
		}
		n.freezeFull(level)
	}
}

// freezeCapped freezes at their limits the flows of capped from index
// next on whose limits the level reaches, within saturated.
func (n *Network) freezeCapped(next int, level float64) {
	for _, f := range n.capped[next:] {
		if f.path.limit*(1-saturated) > level {
			break
		}
		if !f.frozen {
			n.freeze(f, f.path.limit)
		}
	}
	n.relevel()
}

// freezeFull freezes the flows of every link in the heap left within
// saturated of its bandwidth at the level.
func (n *Network) freezeFull(level float64) {
	s := &n.ls
	for len(n.lheap) > 0 {
		top := n.lheap[0]
		bw := s.l[top].bw
		if float64(bw-s.l[top].fill)-float64(s.l[top].wun*level) > float64(saturated*bw) {
			return
		}
		n.lpop()
		n.freezeOn(top, level)
	}
}

// freezeOn marks link id full and freezes its moving flows at rate level,
// updating the levels of their other binding links.
func (n *Network) freezeOn(id int32, level float64) {
	s := &n.ls
	s.l[id].sat = n.epoch
	for _, r := range s.l[id].flows {
		if f := r.f; !f.frozen {
			n.freeze(f, min(level, f.path.limit))
		}
	}
	n.relevel()
}

// freeze sets a flow's new rate and takes it off the filling of its
// binding links, which join Network.dirty.
func (n *Network) freeze(f *Flow, rate float64) {
	s := &n.ls
	f.frozen, f.nrate = true, rate
	for _, u := range f.eff() {
		j := int32(u.slot)
		if s.l[j].hpos < 0 {
			continue
		}
		w := float64(u.Weight)
		s.l[j].fill += float64(w * rate)
		s.l[j].wun -= w
		if !s.l[j].dirty {
			s.l[j].dirty = true
			n.dirty = append(n.dirty, j)
		}
	}
}

// relevel updates the filling level and heap place of each dirty link,
// once however many of its flows froze.
func (n *Network) relevel() {
	s := &n.ls
	for _, j := range n.dirty {
		s.l[j].dirty = false
		switch {
		case s.l[j].hpos < 0:
		case s.l[j].wun <= 0:
			n.lremove(j)
		default:
			s.l[j].lvl = (s.l[j].bw - s.l[j].fill) / s.l[j].wun
			n.lfix(j)
		}
	}
	n.dirty = n.dirty[:0]
}

// overloads reports whether the new rates bring a link outside the
// binding set within bindMargin of its bandwidth; such links join the set
// and the component.
func (n *Network) overloads() bool {
	s := &n.ls
	n.depoch++
	n.touched = n.touched[:0]
	for _, f := range n.comp {
		if f.nrate <= f.rate {
			continue // it unloads its links: leaving it out only overstates loads
		}
		for _, u := range f.eff() {
			id := int32(u.slot)
			if s.l[id].bind {
				continue
			}
			if s.dmark[id] != n.depoch {
				s.dmark[id], s.dl[id] = n.depoch, 0
				n.touched = append(n.touched, id)
			}
			s.dl[id] += float64(float64(u.Weight) * (f.nrate - f.rate))
		}
	}
	grew := false
	for _, id := range n.touched {
		bw := s.l[id].bw
		if s.l[id].load+s.dl[id] <= float64(bw*(1-bindMargin)) {
			continue
		}
		x := 0.0 // the load at the new rates, summed exactly
		for _, r := range s.l[id].flows {
			rate := r.f.rate
			if r.f.mark == n.epoch {
				rate = r.f.nrate
			}
			x += float64(float64(r.w) * rate)
		}
		if x > float64(bw*(1-bindMargin)) {
			s.l[id].bind = true
			n.addCompLink(id)
			grew = true
		}
	}
	return grew
}

// commit sets the component's new rates: each flow whose rate changes is
// settled to now and gets a new finish time; the others keep theirs. The
// links' loads follow the rates, and are summed afresh once they have been
// updated more often than they have flows, which bounds their rounding.
func (n *Network) commit() {
	s := &n.ls
	now := float64(n.s.Now())
	for _, f := range n.comp {
		if f.nrate == f.rate {
			continue
		}
		f.settleFlow(now)
		old := f.rate
		f.rate = f.nrate
		for _, u := range f.eff() {
			id := u.slot
			if s.l[id].fresh++; int(s.l[id].fresh) > 4*len(s.l[id].flows)+64 {
				n.sumLoad(id)
				continue
			}
			s.l[id].load += float64(float64(u.Weight) * (f.rate - old))
		}
		n.setFinish(f, now)
	}
}

// sumLoad sets a link's load to the sum over its flows of rate·weight.
func (n *Network) sumLoad(id int32) {
	s := &n.ls
	x := 0.0
	for _, r := range s.l[id].flows {
		x += float64(float64(r.w) * r.f.rate)
	}
	s.l[id].load, s.l[id].fresh = x, 0
}

// The filling heap: compLinks by level, then ID.

func (n *Network) lless(a, b int32) bool {
	la, lb := n.ls.l[a].lvl, n.ls.l[b].lvl
	return la < lb || la == lb && a < b
}

func (n *Network) lswap(i, j int) {
	h := n.lheap
	h[i], h[j] = h[j], h[i]
	n.ls.l[h[i]].hpos, n.ls.l[h[j]].hpos = int32(i), int32(j)
}

func (n *Network) lup(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !n.lless(n.lheap[i], n.lheap[p]) {
			return
		}
		n.lswap(i, p)
		i = p
	}
}

func (n *Network) ldown(i int) {
	for h := n.lheap; ; {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && n.lless(h[c+1], h[c]) {
			c++
		}
		if !n.lless(h[c], h[i]) {
			return
		}
		n.lswap(i, c)
		i = c
	}
}

func (n *Network) lpop() int32 {
	id := n.lheap[0]
	n.lremove(id)
	return id
}

func (n *Network) lremove(id int32) {
	i, last := int(n.ls.l[id].hpos), len(n.lheap)-1
	if i != last {
		n.lswap(i, last)
	}
	n.lheap = n.lheap[:last]
	n.ls.l[id].hpos = -1
	if i != last {
		n.ldown(i)
		n.lup(i)
	}
}

func (n *Network) lfix(id int32) {
	i := int(n.ls.l[id].hpos)
	n.ldown(i)
	n.lup(i)
}

// LinkUsage is the traffic a link carried.
type LinkUsage struct {
	Link  *Link
	Bytes units.Bytes   // bytes carried
	Busy  units.Seconds // Bytes / Bandwidth: the integral of the link's utilization over time
}

// Stats returns the traffic every link has carried up to now, in link
// order, including the part moved so far by flows still moving. A link
// carrying half its bandwidth for 2 s is busy 1 s.
func (n *Network) Stats() []LinkUsage {
	now := float64(n.s.Now())
	moving := make(map[*Path]float64)
	for _, f := range n.Active() {
		moving[f.path] += float64(f.rate * (now - f.last))
	}
	bytes := make([]float64, len(n.links))
	for _, p := range n.paths {
		m := p.moved + moving[p]
		for _, u := range p.uses {
			bytes[u.Link.id] += float64(float64(u.Weight) * m)
		}
	}
	out := make([]LinkUsage, len(n.links))
	for i, l := range n.links {
		out[i] = LinkUsage{Link: l, Bytes: units.Bytes(bytes[i]), Busy: units.Seconds(bytes[i] / l.bw)}
	}
	return out
}

// Load returns the rate at which link l carries bytes now: the sum over
// moving flows of their rate times their weight on l. Under either sharing
// policy it never exceeds l's bandwidth (up to rounding).
func (n *Network) Load(l *Link) units.BytesPerSec {
	var x float64
	if l.net != n {
		return 0
	}
	for _, r := range n.ls.l[l.slot].flows {
		x += float64(r.f.rate * float64(r.w))
	}
	return units.BytesPerSec(x + n.coldLoad(l))
}
