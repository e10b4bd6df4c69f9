package netsim

import (
	"math"
	"strings"
	"testing"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/event"
)

func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Abs(want)
}

// TestTwoFlowsHalve: two flows on one link each get half its bandwidth,
// and when the first finishes the second gets all of it.
func TestTwoFlowsHalve(t *testing.T) {
	for _, sharing := range []Sharing{MaxMin, EqualShare} {
		var s event.Scheduler
		n := NewNetwork(&s)
		n.Sharing = sharing
		const B = 1e9
		l := n.AddLink("l", B, 0)
		p := n.NewPath(0, l)
		var ends [3]units.Seconds
		var rates [3]units.BytesPerSec
		f0 := n.Transfer(p, 1e9, func(f *Flow) { ends[0] = s.Now() })
		f1 := n.Transfer(p, 2e9, func(f *Flow) { ends[1] = s.Now() })
		s.At(0.5, func() { rates[0], rates[1] = f0.Rate(), f1.Rate() })
		s.At(2.5, func() { rates[2] = f1.Rate() })
		s.Run()
		// Both at B/2 until f0 has moved 1e9 (t = 2), then f1 alone: its
		// remaining 1e9 at B takes 1 s.
		if rates[0] != B/2 || rates[1] != B/2 || rates[2] != B {
			t.Errorf("%v: rates %v, want B/2, B/2 then B", sharing, rates)
		}
		if !near(float64(ends[0]), 2, 1e-12) || !near(float64(ends[1]), 3, 1e-12) {
			t.Errorf("%v: flows ended at %v, want 2 and 3", sharing, ends[:2])
		}
		if f0.Begin() != 0 || f0.End() != ends[0] || !f0.Done() || f0.Bytes() != 1e9 {
			t.Errorf("%v: flow record begin %v end %v done %v", sharing, f0.Begin(), f0.End(), f0.Done())
		}
	}
}

// TestGroupWeights: a path built from w routes over one link is w streams
// there, so it moves bytes at B/w per stream, like w separate flows.
func TestGroupWeights(t *testing.T) {
	var s event.Scheduler
	n := NewNetwork(&s)
	const B = 8e9
	l := n.AddLink("l", B, 1e-6)
	b := n.NewPathBuilder()
	for range 4 {
		b.Add(2e-6, l)
	}
	g := b.Path()
	if g.Streams() != 4 || g.Uses()[0].Weight != 4 || g.Latency() != 3e-6 || g.Rate() != B/4 {
		t.Fatalf("group path: streams %d, uses %v, latency %v, rate %v", g.Streams(), g.Uses(), g.Latency(), g.Rate())
	}
	var groupEnd units.Seconds
	n.Transfer(g, 1e6, func(*Flow) { groupEnd = s.Now() })
	s.Run()

	var s2 event.Scheduler
	n2 := NewNetwork(&s2)
	l2 := n2.AddLink("l", B, 1e-6)
	p := n2.NewPath(2e-6, l2)
	var last units.Seconds
	for range 4 {
		n2.Transfer(p, 1e6, func(*Flow) { last = s2.Now() })
	}
	s2.Run()
	want := 3e-6 + 4*1e6/B
	if !near(float64(groupEnd), want, 1e-12) || !near(float64(last), want, 1e-12) {
		t.Errorf("group ended %v, four flows %v; want %v", groupEnd, last, want)
	}
}

// TestGangBound: when one member of a flow group shares its link with
// another flow, the group moves at that member's rate; the group ends when
// the slowest of the separate flows would, and the other flow is unchanged.
func TestGangBound(t *testing.T) {
	const B = 1e9
	// Separate flows: a on link 0 alongside x, b alone on link 1.
	var s event.Scheduler
	n := NewNetwork(&s)
	l0, l1 := n.AddLink("0", B, 0), n.AddLink("1", B, 0)
	var endA, endB, endX units.Seconds
	n.Transfer(n.NewPath(0, l0), 1e9, func(*Flow) { endA = s.Now() })
	n.Transfer(n.NewPath(0, l1), 1e9, func(*Flow) { endB = s.Now() })
	n.Transfer(n.NewPath(0, l0), 3e9, func(*Flow) { endX = s.Now() })
	s.Run()

	// The same with a and b as one group.
	var s2 event.Scheduler
	n2 := NewNetwork(&s2)
	m0, m1 := n2.AddLink("0", B, 0), n2.AddLink("1", B, 0)
	b := n2.NewPathBuilder()
	b.Add(0, m0)
	b.Add(0, m1)
	var endG, endX2 units.Seconds
	n2.Transfer(b.Path(), 1e9, func(*Flow) { endG = s2.Now() })
	n2.Transfer(n2.NewPath(0, m0), 3e9, func(*Flow) { endX2 = s2.Now() })
	s2.Run()

	if endB != 1 || endA != 2 || endG != max(endA, endB) || endX != endX2 || endX != 4 {
		t.Errorf("separate: a %v b %v x %v; group %v x %v", endA, endB, endX, endG, endX2)
	}
}

// TestMaxMin checks progressive filling against a hand-computed allocation:
// links X (cap 3) and Y (cap 1); flow a crosses X and Y, flows b and c
// cross X. a is held to 1 by Y, and b and c share the remaining 2 of X.
// Equal sharing gives every flow 1 on X and leaves nothing idle here, but
// with cap X = 6 it gives b and c 2 each and leaves 1 idle where max-min
// gives them 2.5.
func TestMaxMin(t *testing.T) {
	for _, c := range []struct {
		sharing Sharing
		capX    float64
		want    [3]units.BytesPerSec
	}{
		{MaxMin, 3, [3]units.BytesPerSec{1, 1, 1}},
		{MaxMin, 6, [3]units.BytesPerSec{1, 2.5, 2.5}},
		{EqualShare, 6, [3]units.BytesPerSec{1, 2, 2}},
		{MaxMin, 0.5, [3]units.BytesPerSec{0.5 / 3, 0.5 / 3, 0.5 / 3}},
	} {
		var s event.Scheduler
		n := NewNetwork(&s)
		n.Sharing = c.sharing
		X, Y := n.AddLink("X", units.BytesPerSec(c.capX), 0), n.AddLink("Y", 1, 0)
		fs := []*Flow{
			n.Transfer(n.NewPath(0, X, Y), 100, nil),
			n.Transfer(n.NewPath(0, X), 100, nil),
			n.Transfer(n.NewPath(0, X), 100, nil),
		}
		s.RunUntil(1e-9)
		for i, f := range fs {
			if !near(float64(f.Rate()), float64(c.want[i]), 1e-12) {
				t.Errorf("%v cap X %v: flow %d rate %v, want %v", c.sharing, c.capX, i, f.Rate(), c.want[i])
			}
		}
		if load := n.Load(X); float64(load) > c.capX*(1+1e-12) {
			t.Errorf("%v: load on X %v exceeds %v", c.sharing, load, c.capX)
		}
	}
}

// TestMaxMinNotMonotone documents why the monotonicity check in
// FuzzNetwork is limited to equal sharing and single-link flows: under
// max-min fairness lowering a link's bandwidth can finish the whole flow
// set earlier. Flow a (1 byte) crosses X (cap 2) and Y; flow b (10 bytes)
// crosses X and W (cap 1.5). With Y = 2, a and b share X at 1 each; a ends
// at 1, b then runs at 1.5 and ends at 1 + 9/1.5 = 7. With Y = 0.5, a runs
// at 0.5 and b takes 1.5 from the start: b ends at 10/1.5 = 6.67, a at 2.
func TestMaxMinNotMonotone(t *testing.T) {
	run := func(capY units.BytesPerSec) (a, b units.Seconds) {
		var s event.Scheduler
		n := NewNetwork(&s)
		X, Y, W := n.AddLink("X", 2, 0), n.AddLink("Y", capY, 0), n.AddLink("W", 1.5, 0)
		n.Transfer(n.NewPath(0, X, Y), 1, func(*Flow) { a = s.Now() })
		n.Transfer(n.NewPath(0, X, W), 10, func(*Flow) { b = s.Now() })
		s.Run()
		return a, b
	}
	a1, b1 := run(2)
	a2, b2 := run(0.5)
	if !near(float64(a1), 1, 1e-12) || !near(float64(b1), 7, 1e-12) || !near(float64(a2), 2, 1e-12) || !near(float64(b2), 10/1.5, 1e-12) {
		t.Errorf("Y = 2: a %v b %v (want 1, 7); Y = 0.5: a %v b %v (want 2, 6.667)", a1, b1, a2, b2)
	}
}

// TestLatencyAndZeroBytes: a flow waits its path's latency before moving;
// a flow of zero bytes ends when the latency has passed, and so does a
// flow on a path without links.
func TestLatencyAndZeroBytes(t *testing.T) {
	var s event.Scheduler
	n := NewNetwork(&s)
	l := n.AddLink("l", 1e9, 1e-6)
	fs := []*Flow{
		n.Transfer(n.NewPath(2e-6, l), 0, nil),
		n.Transfer(n.NewPath(5e-6), 1e6, nil),
		n.Transfer(n.NewPath(0, l, l), 1e3, nil), // two streams on l, latency paid twice
	}
	s.Run()
	want := []float64{3e-6, 5e-6, 2e-6 + 2e3/1e9}
	for i, w := range want {
		if !near(float64(fs[i].End()), w, 1e-12) {
			t.Errorf("flow %d ended at %v, want %v", i, fs[i].End(), w)
		}
	}
}

// TestNICSharing: four devices of a node sharing one NIC each see a quarter
// of it, so the transfer part of a node-to-node copy takes 4 times as long;
// with a NIC per device there is no slowdown.
func TestNICSharing(t *testing.T) {
	const S = 64 * units.MiB
	copyTime := func(nics, senders int) units.Seconds {
		var s event.Scheduler
		cfg := twoLevel(8, 4, nics, 1)
		topo, err := NewTopology(&s, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var end units.Seconds
		for d := range senders {
			topo.Network().Transfer(topo.Route(d, 4+d), S, func(*Flow) { end = s.Now() })
		}
		s.Run()
		return end
	}
	alpha := alphaNet()
	one := float64(copyTime(1, 1)) - alpha
	four := float64(copyTime(1, 4)) - alpha
	if !near(one, float64(S)/betaNet(), 1e-12) {
		t.Errorf("one copy moves in %v s, want S/beta = %v s", one, float64(S)/betaNet())
	}
	if !near(four/one, 4, 1e-12) {
		t.Errorf("four devices on one NIC: transfer %v s, %v times one device's; want 4", four, four/one)
	}
	if own := float64(copyTime(4, 4)) - alpha; !near(own, one, 1e-12) {
		t.Errorf("four devices with a NIC each: transfer %v s, want %v s", own, one)
	}

	// The inter-node phase of a hierarchical all-reduce on 2 nodes of 4
	// ranks with one NIC: 4 rails share it, so it costs what one rail would
	// at a quarter of the bandwidth.
	S2 := float64(S)
	res := runAllReduce(t, twoLevel(8, 4, 1, 1), Hierarchical, S, nil)
	intra := 2 * 3 * (float64(intraLat) + S2/4/float64(intraBW))
	inter := float64(res.Time()) - intra
	shared := ringForm(2, S2/4, alpha, betaNet()/4)
	if !near(inter, shared, 1e-9) {
		t.Errorf("inter-node phase %v s, want %v s", inter, shared)
	}
	alone := ringForm(2, S2/4, alpha, betaNet())
	t.Logf("inter-node phase: %.4g s with 4 rails on one NIC, %.4g s for one rail alone (bandwidth part %.3gx)",
		inter, alone, (inter-2*alpha)/(alone-2*alpha))
}

// TestOversubscription: with a 4:1 core, all nodes sending at once get a
// quarter of their NIC, while a single pair still gets all of it.
func TestOversubscription(t *testing.T) {
	const S = 16 * units.MiB
	run := func(pairs int) float64 {
		var s event.Scheduler
		cfg := flat(16)
		cfg.Servers, cfg.Oversubscription = 0, 4
		topo, err := NewTopology(&s, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var end units.Seconds
		for i := range pairs {
			topo.Network().Transfer(topo.Route(i, (i+1)%16), S, func(*Flow) { end = s.Now() })
		}
		s.Run()
		return float64(end) - alphaNet()
	}
	if got, want := run(1), float64(S)/betaNet(); !near(got, want, 1e-12) {
		t.Errorf("one pair: %v s, want %v s", got, want)
	}
	if got, want := run(16), 4*float64(S)/betaNet(); !near(got, want, 1e-12) {
		t.Errorf("all 16 sending: %v s, want %v s", got, want)
	}
}

// TestStatsInProgress: Stats counts the bytes a moving flow has moved so
// far, and does not change the simulation.
func TestStatsInProgress(t *testing.T) {
	var s event.Scheduler
	n := NewNetwork(&s)
	l := n.AddLink("l", 1e9, 0)
	var end units.Seconds
	n.Transfer(n.NewPath(0, l, l), 1e9, func(*Flow) { end = s.Now() })
	s.RunUntil(0.5)
	st := n.Stats()
	if !near(float64(st[0].Bytes), 0.5e9, 1e-12) || !near(float64(st[0].Busy), 0.5, 1e-12) {
		t.Errorf("at 0.5 s: %v bytes, busy %v", st[0].Bytes, st[0].Busy)
	}
	s.Run()
	if end != 2 {
		t.Errorf("ended at %v, want 2", end)
	}
	if st := n.Stats(); !near(float64(st[0].Bytes), 2e9, 1e-12) {
		t.Errorf("at the end: %v bytes, want 2e9", st[0].Bytes)
	}
}

// TestStatsTinyFlow: a flow whose transfer is shorter than the rounding
// of the current time ends at the instant it starts moving; it has still
// moved its bytes, and Stats counts them.
func TestStatsTinyFlow(t *testing.T) {
	var s event.Scheduler
	n := NewNetwork(&s)
	l := n.AddLink("l", 1e9, 0)
	var f *Flow
	s.At(1e6, func() { // the spacing of float64 at 1e6 s is 1.2e-10 s
		f = n.Transfer(n.NewPath(0, l), 1e-3, nil) // 1e-12 s
	})
	s.Run()
	if f.End() != 1e6 || f.moved != 1e-3 {
		t.Errorf("tiny flow ended at %v having moved %v bytes; want 1e6 s and 1e-3", f.End(), f.moved)
	}
	if got := float64(n.Stats()[0].Bytes); got != 1e-3 {
		t.Errorf("link carried %v bytes, want 1e-3", got)
	}
}

func TestNetworkPanics(t *testing.T) {
	var s event.Scheduler
	n := NewNetwork(&s)
	other := NewNetwork(&s)
	l := n.AddLink("l", 1, 0)
	ol := other.AddLink("o", 1, 0)
	for _, c := range []struct {
		name string
		fn   func()
		msg  string
	}{
		{"zero bandwidth", func() { n.AddLink("x", 0, 0) }, badBandwidth},
		{"NaN bandwidth", func() { n.AddLink("x", units.BytesPerSec(math.NaN()), 0) }, badBandwidth},
		{"Inf bandwidth", func() { n.AddLink("x", units.BytesPerSec(math.Inf(1)), 0) }, badBandwidth},
		{"negative latency", func() { n.AddLink("x", 1, -1) }, badLatency},
		{"negative extra", func() { n.NewPath(-1, l) }, badLatency},
		{"foreign link", func() { n.NewPath(0, ol) }, foreignLink},
		{"foreign path", func() { n.Transfer(other.NewPath(0, ol), 1, nil) }, foreignPath},
		{"negative bytes", func() { n.Transfer(n.NewPath(0, l), -1, nil) }, badBytes},
		{"NaN bytes", func() { n.Transfer(n.NewPath(0, l), units.Bytes(math.NaN()), nil) }, badBytes},
	} {
		func() {
			defer func() {
				if r := recover(); r != c.msg {
					t.Errorf("%s: panic %v, want %q", c.name, r, c.msg)
				}
			}()
			c.fn()
		}()
	}
}

// TestNoPeerToPeer checks the staged routes of devices without peer-to-peer
// access against their closed forms: every hop through host memory crosses
// it twice (written, then read).
func TestNoPeerToPeer(t *testing.T) {
	staged := func(p, k int) Config {
		c := flat(p)
		c.RanksPerNode, c.NoPeerToPeer = k, true
		c.PCIe, c.HostMemory = LinkSpec{pcieBW, pcieLat}, hostBW
		return c
	}
	S := float64(8 * units.MiB)

	// Ring inside one node of 4: each step's 4 streams cross host memory
	// twice each.
	res := runAllReduce(t, staged(4, 4), Ring, units.Bytes(S), nil)
	want := ringForm(4, S, 2*float64(pcieLat), math.Min(float64(pcieBW), float64(hostBW)/8))
	if !near(float64(res.Time()), want, 1e-9) {
		t.Errorf("staged ring in a node: %v s, want %v s", float64(res.Time()), want)
	}

	// A route between nodes.
	var s event.Scheduler
	topo, err := NewTopology(&s, staged(4, 2))
	if err != nil {
		t.Fatal(err)
	}
	p := topo.Route(1, 2)
	up, _ := topo.PCIe(1)
	_, down := topo.PCIe(2)
	out, _ := topo.NIC(0, 0)
	_, in := topo.NIC(1, 0)
	wantUses := map[*Link]int{up: 1, topo.HostMemory(0): 2, out: 1, topo.Core(): 1, in: 1, topo.HostMemory(1): 2, down: 1}
	if len(p.Uses()) != len(wantUses) {
		t.Errorf("route 1→2 uses %d links, want %d", len(p.Uses()), len(wantUses))
	}
	for _, u := range p.Uses() {
		if wantUses[u.Link] != u.Weight {
			t.Errorf("route 1→2: %s weight %d, want %d", u.Link.Name(), u.Weight, wantUses[u.Link])
		}
	}
	if lat := float64(p.Latency()); !near(lat, 2*float64(pcieLat)+alphaNet(), 1e-12) {
		t.Errorf("route 1→2 latency %v, want %v", lat, 2*float64(pcieLat)+alphaNet())
	}
	if topo.Route(1, 2) != p {
		t.Error("Route does not reuse its path")
	}
	if q := topo.Route(3, 3); len(q.Uses()) != 0 || q.Latency() != 0 {
		t.Errorf("route to itself: %v, latency %v", q.Uses(), q.Latency())
	}

	// Parameter server through host memory: each worker's 4 shard streams
	// cross its PCIe link once and its host memory twice.
	const k = 4
	res = runAllReduce(t, staged(8, 1), ParameterServer, units.Bytes(S), nil)
	rate := math.Min(math.Min(float64(pcieBW)/k, float64(hostBW)/(2*k)), math.Min(betaNet()/k, betaNet()/8))
	want = 2 * (float64(pcieLat) + alphaNet() + S/k/rate)
	if !near(float64(res.Time()), want, 1e-9) {
		t.Errorf("staged parameter server: %v s, want %v s", float64(res.Time()), want)
	}
}

func TestTopologyAccessors(t *testing.T) {
	var s event.Scheduler
	topo, err := NewTopology(&s, Config{Ranks: 4, RanksPerNode: 4, Intra: LinkSpec{Bandwidth: 1e9}})
	if err != nil {
		t.Fatal(err)
	}
	if topo.Scheduler() != &s || topo.Nodes() != 1 || topo.Node(3) != 0 || topo.Config().NICsPerNode != 1 || topo.Config().Efficiency != 1 {
		t.Errorf("accessors: nodes %d, config %+v", topo.Nodes(), topo.Config())
	}
	if o, i := topo.NIC(0, 0); o != nil || i != nil {
		t.Error("a single node without servers has NICs")
	}
	if u, d := topo.PCIe(0); u != nil || d != nil || topo.HostMemory(0) != nil || topo.Core() != nil {
		t.Error("links that were not configured exist")
	}
	if n := len(topo.Network().Links()); n != 8 {
		t.Errorf("%d links, want 8 device ports", n)
	}
	func() {
		defer func() {
			if r := recover(); r != badRank {
				t.Errorf("Route(0, 4): panic %v, want %q", r, badRank)
			}
		}()
		topo.Route(0, 4)
	}()
}

// TestOnChange: the observer sees every change of the moving flows with
// their labels and rates: two flows of 1e9 and 2e9 bytes on a link of
// 1e9 bytes/s, the second starting 0.5 s after the first, run at
//
//	[0, 0.5)   a alone at B
//	[0.5, 1.5) a and b at B/2 (a has 0.5e9 left, done at 1.5)
//	[1.5, 3)   b alone at B (1.5e9 left)
//
// and a collective's flows carry the label the network had when it
// started.
func TestOnChange(t *testing.T) {
	type state struct {
		at     units.Seconds
		labels string
		rates  []units.BytesPerSec
	}
	var s event.Scheduler
	n := NewNetwork(&s)
	const B = 1e9
	l := n.AddLink("l", B, 0)
	p := n.NewPath(0, l)
	var got []state
	n.OnChange = func() {
		st := state{at: s.Now()}
		for _, f := range n.Active() {
			st.labels += f.Label() + ";"
			st.rates = append(st.rates, f.Rate())
		}
		got = append(got, st)
	}
	n.Label = "a"
	n.Transfer(p, 1e9, nil)
	n.Label = ""
	s.At(0.5, func() {
		n.Label = "b"
		n.Transfer(p, 2e9, nil)
		n.Label = ""
	})
	s.Run()
	want := []state{{0, "a;", []units.BytesPerSec{B}}, {0.5, "a;b;", []units.BytesPerSec{B / 2, B / 2}},
		{1.5, "b;", []units.BytesPerSec{B}}, {3, "", nil}}
	if len(got) != len(want) {
		t.Fatalf("observer saw %+v, want %+v", got, want)
	}
	for i, w := range want {
		g := got[i]
		ok := near(float64(g.at), float64(w.at), 1e-12) && g.labels == w.labels && len(g.rates) == len(w.rates)
		for j := range w.rates {
			ok = ok && near(float64(g.rates[j]), float64(w.rates[j]), 1e-12)
		}
		if !ok {
			t.Errorf("change %d: %+v, want %+v", i, g, w)
		}
	}

	// A ring all-reduce on 2 ranks is 2 flows, started one after the other
	// by the collective, after the label was reset.
	var s2 event.Scheduler
	topo, err := NewTopology(&s2, Config{Ranks: 2, RanksPerNode: 2, Intra: LinkSpec{Bandwidth: 1e9}})
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	topo.Network().OnChange = func() {
		for _, f := range topo.Network().Active() {
			labels = append(labels, f.Label())
		}
	}
	topo.Network().Label = "bucket 0"
	if err := topo.AllReduce(Ring, 1e6, nil, nil); err != nil {
		t.Fatal(err)
	}
	topo.Network().Label = ""
	s2.Run()
	if len(labels) != 2 || labels[0] != "bucket 0" || labels[1] != "bucket 0" {
		t.Errorf("all-reduce flows labelled %q, want 2 × \"bucket 0\"", labels)
	}
}

// TestSharedMemoryRate checks Config.SHM: without peer-to-peer, a ring
// inside one node moves at the shared-memory rate where it is below the
// PCIe links' and host memory's share, as the closed form of a ring of
// links of that rate gives, while a route to another node's device, whose
// copies to host memory are the NIC's, takes no shared-memory link.
func TestSharedMemoryRate(t *testing.T) {
	const shm = units.BytesPerSec(1e9)
	c := flat(4)
	c.RanksPerNode, c.NoPeerToPeer = 4, true
	c.PCIe, c.HostMemory, c.SHM = LinkSpec{pcieBW, pcieLat}, hostBW, shm
	S := float64(8 * units.MiB)
	res := runAllReduce(t, c, Ring, units.Bytes(S), nil)
	if want := ringForm(4, S, 2*float64(pcieLat), float64(shm)); !near(float64(res.Time()), want, 1e-9) {
		t.Errorf("ring in a node at the shared-memory rate: %v s, want %v s", float64(res.Time()), want)
	}

	c.RanksPerNode = 2
	var s event.Scheduler
	topo, err := NewTopology(&s, c)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range topo.Route(1, 2).Uses() {
		if n := u.Link.Name(); strings.HasPrefix(n, "shm-") {
			t.Errorf("route 1→2 between nodes crosses %s", n)
		}
	}
	var shmLinks int
	for _, u := range topo.Route(0, 1).Uses() {
		if strings.HasPrefix(u.Link.Name(), "shm-") {
			shmLinks++
		}
	}
	if shmLinks != 2 {
		t.Errorf("route 0→1 inside a node crosses %d shared-memory links, want 2 (out and in)", shmLinks)
	}

	c.SHM = -1
	if _, err := NewTopology(&s, c); err == nil || !strings.Contains(err.Error(), "shared-memory bandwidth") {
		t.Errorf("negative shared-memory rate: %v, want an error naming it", err)
	}
}

// TestSharedMemorySockets checks Config.SHMSocketDevices: a ring of eight
// devices of one node, four a socket, crosses from one socket to the
// other twice, each crossing through the way out of one socket and the
// way into the other, links of SHMCrossSocket·SHM, so it moves at that
// rate, the closed form of a ring of links of it; four devices of one
// socket keep the whole rate; only the crossing routes take shm-cross
// links, two; a share outside (0, 1] is an error that names it.
func TestSharedMemorySockets(t *testing.T) {
	const shm, share = units.BytesPerSec(1e9), 0.36
	c := flat(8)
	c.RanksPerNode, c.NoPeerToPeer = 8, true
	c.PCIe, c.HostMemory, c.SHM = LinkSpec{pcieBW, pcieLat}, hostBW, shm
	c.SHMSocketDevices, c.SHMCrossSocket = 4, share
	S := float64(8 * units.MiB)
	res := runAllReduce(t, c, Ring, units.Bytes(S), nil)
	if want := ringForm(8, S, 2*float64(pcieLat), share*float64(shm)); !near(float64(res.Time()), want, 1e-9) {
		t.Errorf("ring across two sockets: %v s, want %v s", float64(res.Time()), want)
	}

	one := c
	one.Ranks, one.RanksPerNode = 4, 4
	res = runAllReduce(t, one, Ring, units.Bytes(S), nil)
	if want := ringForm(4, S, 2*float64(pcieLat), float64(shm)); !near(float64(res.Time()), want, 1e-9) {
		t.Errorf("ring on one socket: %v s, want %v s", float64(res.Time()), want)
	}

	var s event.Scheduler
	topo, err := NewTopology(&s, c)
	if err != nil {
		t.Fatal(err)
	}
	cross := func(a, b int) (n int) {
		for _, u := range topo.Route(a, b).Uses() {
			if strings.HasPrefix(u.Link.Name(), "shm-cross") {
				n++
			}
		}
		return n
	}
	if n := cross(0, 3); n != 0 {
		t.Errorf("route 0→3 on one socket crosses %d shm-cross links, want 0", n)
	}
	if n := cross(3, 4); n != 2 {
		t.Errorf("route 3→4 between sockets crosses %d shm-cross links, want 2 (out and in)", n)
	}

	for _, bad := range []float64{0, -0.5, 1.5, math.NaN()} {
		c.SHMCrossSocket = bad
		if _, err := NewTopology(&s, c); err == nil || !strings.Contains(err.Error(), "between sockets") {
			t.Errorf("share %v between sockets: %v, want an error naming it", bad, err)
		}
	}
}
