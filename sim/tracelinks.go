package sim

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/netsim"
)

// linkEntry is the streams on a link of the flows with one label moving at
// one rate.
type linkEntry struct {
	label   string
	streams int
	rate    float64 // bytes/s per stream
}

func compareEntries(a, b linkEntry) int {
	return cmp.Or(strings.Compare(a.label, b.label), cmp.Compare(a.rate, b.rate), cmp.Compare(a.streams, b.streams))
}

// linkSlice is an interval during which a link carried one set of
// entries.
type linkSlice struct {
	start, end float64
	entries    []linkEntry
}

// linkTrack is what one link did over the traced steps.
type linkTrack struct {
	open    bool        // cur holds the entries since start
	start   float64     // start of the current interval
	cur     []linkEntry // the current interval's entries, sorted
	pending linkSlice   // the last closed interval, which the next may extend
	slices  []linkSlice // closed intervals before pending
}

// close ends the current interval at now. An interval that continues the
// pending one with the same entries extends it; one of zero length is
// dropped.
func (k *linkTrack) close(now float64) {
	if !k.open {
		return
	}
	k.open = false
	if !(now > k.start) {
		return
	}
	if p := &k.pending; p.entries != nil && p.end == k.start && slices.Equal(p.entries, k.cur) {
		p.end = now
		return
	}
	if k.pending.entries != nil {
		k.slices = append(k.slices, k.pending)
	}
	k.pending = linkSlice{start: k.start, end: now, entries: slices.Clone(k.cur)}
}

// linkRecorder records, for every traced link, the intervals between
// changes of the flows it carries (their labels, streams and rates).
type linkRecorder struct {
	names   []string  // by link ID: the track's name, "" if the link is not traced
	bw      []float64 // by link ID: bandwidth, bytes/s
	tracks  []linkTrack
	next    [][]linkEntry // scratch by link ID
	mark    []uint64      // by link ID: epoch in which next was filled
	epoch   uint64
	touched []int // links with flows in this epoch
	open    []int // links with an open interval
	stopped bool
}

// init names the links to trace: all of them up to MaxTracedDevices
// devices; beyond, those of the devices whose tracks may be kept (the
// first node's, up to MaxTracedDevices, and the last), of the first and
// the last node, and the links no device or node owns (fabric core,
// parameter servers, shared storage).
func (lr *linkRecorder) init(r *run) {
	topo := r.topo
	links := topo.Network().Links()
	n := len(links)
	lr.names = make([]string, n)
	lr.bw = make([]float64, n)
	for i, l := range links {
		lr.bw[i] = float64(l.Bandwidth())
	}
	lr.tracks = make([]linkTrack, n)
	lr.next = make([][]linkEntry, n)
	lr.mark = make([]uint64, n)
	R, per, N := len(r.ranks), r.c.DevicesPerNode, topo.Nodes()
	sample := R > MaxTracedDevices
	owned := make([]bool, n) // links of a device or a node
	name := func(l *netsim.Link, keep bool, format string, args ...any) {
		if l == nil {
			return
		}
		owned[l.ID()] = true
		if keep || !sample {
			lr.names[l.ID()] = fmt.Sprintf(format, args...) + " (" + l.Bandwidth().String() + ")"
		}
	}
	for k := range R {
		keep := k < min(per, MaxTracedDevices) || k == R-1
		out, in := topo.Intra(k)
		name(out, keep, "device %d intra-node out", k)
		name(in, keep, "device %d intra-node in", k)
		up, down := topo.PCIe(k)
		name(up, keep, "device %d PCIe to host", k)
		name(down, keep, "device %d PCIe from host", k)
	}
	nics := topo.Config().NICsPerNode
	for a := range N {
		keep := a == 0 || a == N-1
		name(topo.HostMemory(a), keep, "node %d host memory", a)
		for i := range nics {
			out, in := topo.NIC(a, i)
			if nics == 1 {
				name(out, keep, "node %d NIC out", a)
				name(in, keep, "node %d NIC in", a)
			} else {
				name(out, keep, "node %d NIC %d out", a, i)
				name(in, keep, "node %d NIC %d in", a, i)
			}
		}
		for sw := range topo.Switches(a) {
			up, down := topo.Switch(a, sw)
			name(up, keep, "node %d PCIe switch %d up", a, sw)
			name(down, keep, "node %d PCIe switch %d down", a, sw)
		}
		for x := range topo.Config().Sockets {
			for y := range topo.Config().Sockets {
				name(topo.Socket(a, x, y), keep, "node %d socket %d to %d", a, x, y)
			}
		}
		if a < len(r.loaders) && r.loaders[a] != nil {
			name(r.loaders[a].client, keep, "node %d storage client", a)
		}
	}
	if topo.Rail(0) != nil {
		name(topo.Core(), true, "fabric spine")
		for j := range nics {
			name(topo.Rail(j), true, "rail %d leaf", j)
		}
	} else {
		name(topo.Core(), true, "fabric core")
	}
	if topo.Core() != nil {
		for s := range topo.Config().Servers {
			out, in := topo.Server(s)
			name(out, true, "server %d NIC out", s)
			name(in, true, "server %d NIC in", s)
		}
	}
	name(r.storage, true, "shared storage")
	for i, l := range links {
		if !owned[i] {
			lr.names[i] = l.Name() + " (" + l.Bandwidth().String() + ")"
		}
	}
}

// observe records the flows on every traced link at time now, closing the
// interval of each link whose flows changed.
func (lr *linkRecorder) observe(net *netsim.Network, now float64) {
	lr.epoch++
	lr.touched = lr.touched[:0]
	for _, f := range net.Active() {
		rate, label := float64(f.Rate()), f.Label()
		for _, u := range f.Path().Uses() {
			id := u.Link.ID()
			if id >= len(lr.names) || lr.names[id] == "" {
				continue
			}
			if lr.mark[id] != lr.epoch {
				lr.mark[id] = lr.epoch
				lr.next[id] = lr.next[id][:0]
				lr.touched = append(lr.touched, id)
			}
			es := lr.next[id]
			i := 0
			for i < len(es) && (es[i].label != label || es[i].rate != rate) {
				i++
			}
			if i < len(es) {
				es[i].streams += u.Weight
			} else {
				lr.next[id] = append(es, linkEntry{label: label, streams: u.Weight, rate: rate})
			}
		}
	}
	for _, id := range lr.open {
		if lr.mark[id] != lr.epoch {
			lr.tracks[id].close(now)
		}
	}
	lr.open = lr.open[:0]
	for _, id := range lr.touched {
		es := lr.next[id]
		if len(es) > 1 {
			slices.SortFunc(es, compareEntries)
		}
		k := &lr.tracks[id]
		if !k.open || !slices.Equal(k.cur, es) {
			k.close(now)
			k.open, k.start = true, now
			k.cur, lr.next[id] = es, k.cur // swap buffers
		}
		lr.open = append(lr.open, id)
	}
}

// stop closes every link's interval at now and ends the recording.
func (lr *linkRecorder) stop(now float64) {
	if lr.stopped {
		return
	}
	for _, id := range lr.open {
		lr.tracks[id].close(now)
	}
	lr.open = lr.open[:0]
	lr.stopped = true
}

// events adds the links' tracks to tr: a process "links" with one named
// thread per link that carried bytes (tid its link ID), and a slice per
// interval between changes of its flows.
func (lr *linkRecorder) events(tr *Trace) {
	used := false
	for id := range lr.tracks {
		k := &lr.tracks[id]
		if k.pending.entries != nil {
			k.slices = append(k.slices, k.pending)
			k.pending = linkSlice{}
		}
		if len(k.slices) == 0 {
			continue
		}
		if !used {
			tr.Events = append(tr.Events, TraceEvent{Name: "process_name", Ph: "M", Pid: pidLinks, Args: map[string]string{"name": "links"}})
			used = true
		}
		tr.Events = append(tr.Events, TraceEvent{Name: "thread_name", Ph: "M", Pid: pidLinks, Tid: id, Args: map[string]string{"name": lr.names[id]}})
	}
	for id := range lr.tracks {
		for _, s := range lr.tracks[id].slices {
			name, args := describe(s.entries, lr.bw[id])
			a, b := s.start*1e6, s.end*1e6
			tr.Events = append(tr.Events, TraceEvent{Name: name, Cat: "link", Ph: "X", Ts: a, Dur: b - a, Pid: pidLinks, Tid: id, Args: args})
		}
	}
}

// describe returns the name and arguments of a slice of a link of
// bandwidth bw: the labels of its flows ("×k" for k streams of one label),
// the number of streams, the rate of each, their sum and its fraction of
// bw.
func describe(es []linkEntry, bw float64) (string, map[string]string) {
	var name, share strings.Builder
	streams, load := 0, 0.0
	same := true
	for i, e := range es {
		streams += e.streams
		load += float64(float64(e.streams) * e.rate)
		same = same && e.rate == es[0].rate
		if i == 0 || e.label != es[i-1].label {
			if i > 0 {
				name.WriteString(" + ")
			}
			name.WriteString(e.name())
			n := 0
			for _, f := range es[i:] {
				if f.label != e.label {
					break
				}
				n += f.streams
			}
			if n > 1 {
				name.WriteString(" ×" + strconv.Itoa(n))
			}
		}
	}
	if same {
		share.WriteString(units.BytesPerSec(es[0].rate).String() + " each")
	} else {
		for i, e := range es {
			if i > 0 {
				share.WriteString("; ")
			}
			fmt.Fprintf(&share, "%s ×%d at %v", e.name(), e.streams, units.BytesPerSec(e.rate))
		}
	}
	return name.String(), map[string]string{"flows": strconv.Itoa(streams), "share": share.String(),
		"load": units.BytesPerSec(load).String(), "utilisation": strconv.FormatFloat(load/bw, 'g', 4, 64)}
}

// name returns the entry's label, or "transfer" for a flow without one.
func (e linkEntry) name() string {
	if e.label == "" {
		return "transfer"
	}
	return e.label
}
