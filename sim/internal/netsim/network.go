package netsim

import (
	"math"
	"slices"
	"strconv"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/event"
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
	Weight int // streams crossing Link; at least 1
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
		p.uses[i] = Use{Link: l, Weight: w}
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
	frozen bool    // progressive filling scratch
	pooled bool    // reused by the network once done returns
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
	paths  []*Path // paths that have carried a flow, for Stats
	active []*Flow // moving flows in start order

	wake   event.Handle
	wakeAt float64

	// Progressive-filling scratch, indexed by link ID.
	mark    []uint64
	epoch   uint64
	rem     []float64
	wsum    []float64
	touched []int
	doneBuf []*Flow
	pool    []*Flow
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
	n.mark = append(n.mark, 0)
	n.rem = append(n.rem, 0)
	n.wsum = append(n.wsum, 0)
}

// Links returns the network's links in the order they were added. The
// slice must not be modified.
func (n *Network) Links() []*Link { return n.links }

// Active returns the flows now moving bytes, in start order. The slice is
// valid until the next event and must not be modified.
func (n *Network) Active() []*Flow { return n.active }

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
	*f = Flow{net: n, path: p, bytes: float64(bytes), done: done, label: label, start: n.s.Now(), rem: float64(bytes), pooled: pooled}
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
	if f.bytes == 0 || len(f.path.uses) == 0 {
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
	n.settle(float64(now))
	f.moving = true
	f.last = float64(now)
	n.active = append(n.active, f)
	n.allocate()
	n.reschedule()
	if n.OnChange != nil {
		n.OnChange()
	}
}

func (n *Network) recycle(f *Flow) {
	if f.pooled {
		*f = Flow{}
		n.pool = append(n.pool, f)
	}
}

// settle brings every moving flow's progress up to time now.
func (n *Network) settle(now float64) {
	for _, f := range n.active {
		if dt := now - f.last; dt > 0 {
			x := float64(f.rate * dt)
			f.rem -= x
			f.moved += x
			f.path.moved += x
			f.last = now
		}
	}
}

// onWake finishes the flows whose last byte arrives now.
func (n *Network) onWake() {
	now := float64(n.s.Now())
	n.wake = event.Handle{}
	n.settle(now)
	done := n.doneBuf[:0]
	k := 0
	for _, f := range n.active {
		if f.finish <= now || f.rem <= 0 {
			// The flow has delivered its bytes; what settle did not count
			// (a flow shorter than the rounding of now, or the rounding of
			// its rate) is counted here, so that Stats adds up.
			f.moved += f.rem
			f.path.moved += f.rem
			f.moving, f.finished = false, true
			f.rem = 0
			f.end = units.Seconds(now)
			done = append(done, f)
			continue
		}
		n.active[k] = f
		k++
	}
	clear(n.active[k:])
	n.active = n.active[:k]
	n.allocate()
	n.reschedule()
	if n.OnChange != nil && len(done) > 0 {
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

// reschedule sets the wake-up for the earliest finishing flow.
func (n *Network) reschedule() {
	if len(n.active) == 0 {
		if n.s.Pending(n.wake) {
			n.s.Cancel(n.wake)
		}
		n.wake = event.Handle{}
		return
	}
	next := math.Inf(1)
	for _, f := range n.active {
		if f.finish < next {
			next = f.finish
		}
	}
	if n.s.Pending(n.wake) {
		if n.wakeAt == next {
			return
		}
		n.s.Cancel(n.wake)
	}
	n.wakeAt = next
	n.wake = n.s.AtEvent(units.Seconds(next), (*wakeEvent)(n))
}

// allocate sets the rate and finish time of every moving flow; their
// progress must be settled to now.
func (n *Network) allocate() {
	now := float64(n.s.Now())
	switch {
	case len(n.active) == 0:
		return
	case len(n.active) == 1:
		f := n.active[0]
		f.rate = f.path.share
	case n.Sharing == EqualShare:
		n.equalShare()
	default:
		n.maxMin()
	}
	for _, f := range n.active {
		f.finish = now + f.rem/f.rate
		if f.finish < now {
			f.finish = now
		}
	}
}

// gather sums the weights of the moving flows on each link they cross and
// resets the links' remaining capacity.
func (n *Network) gather() {
	n.epoch++
	n.touched = n.touched[:0]
	for _, f := range n.active {
		for _, u := range f.path.uses {
			id := u.Link.id
			if n.mark[id] != n.epoch {
				n.mark[id] = n.epoch
				n.rem[id] = u.Link.bw
				n.wsum[id] = 0
				n.touched = append(n.touched, id)
			}
			n.wsum[id] += float64(u.Weight)
		}
	}
}

func (n *Network) equalShare() {
	n.gather()
	for _, f := range n.active {
		r := f.path.limit
		for _, u := range f.path.uses {
			if s := u.Link.bw / n.wsum[u.Link.id]; s < r {
				r = s
			}
		}
		f.rate = r
	}
}

// saturated is the fraction of a link's bandwidth below which its remaining
// capacity counts as zero in progressive filling.
const saturated = 1e-12

func (n *Network) maxMin() {
	n.gather()
	for _, f := range n.active {
		f.rate = 0
		f.frozen = false
	}
	left := len(n.active)
	for left > 0 {
		inc := math.Inf(1)
		for _, id := range n.touched {
			if w := n.wsum[id]; w > 0 {
				if x := n.rem[id] / w; x < inc {
					inc = x
				}
			}
		}
		for _, f := range n.active {
			if !f.frozen && f.path.limit-f.rate < inc {
				inc = f.path.limit - f.rate
			}
		}
		if math.IsInf(inc, 1) {
			panic("netsim: progressive filling found no bottleneck")
		}
		for _, id := range n.touched {
			if w := n.wsum[id]; w > 0 {
				if n.rem[id]/w == inc {
					n.rem[id] = 0
				} else {
					n.rem[id] -= float64(inc * w)
					if n.rem[id] <= saturated*n.links[id].bw {
						n.rem[id] = 0
					}
				}
			}
		}
		for _, f := range n.active {
			if f.frozen {
				continue
			}
			f.rate += inc
			if f.rate >= f.path.limit*(1-saturated) {
				f.rate, f.frozen = min(f.rate, f.path.limit), true
			}
			for _, u := range f.path.uses {
				if f.frozen {
					break
				}
				f.frozen = n.rem[u.Link.id] == 0
			}
			if f.frozen {
				left--
				for _, u := range f.path.uses {
					n.wsum[u.Link.id] -= float64(u.Weight)
				}
			}
		}
	}
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
	for _, f := range n.active {
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
	for _, f := range n.active {
		for _, u := range f.path.uses {
			if u.Link == l {
				x += float64(f.rate * float64(u.Weight))
			}
		}
	}
	return units.BytesPerSec(x)
}
