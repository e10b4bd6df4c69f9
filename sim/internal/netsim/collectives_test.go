package netsim

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/event"
)

// The closed forms below are written from the schedules in the doc
// comments, not from the simulator's code.

func rsRingForm(p int, S, alpha, beta float64) float64 {
	return float64(p-1) * (alpha + S/float64(p)/beta)
}

func rsHDForm(p int, S, alpha, beta float64) float64 {
	return float64(log2(p))*alpha + float64(p-1)/float64(p)*S/beta
}

func bcastRingForm(p int, S, alpha, beta, chunk float64) float64 {
	C := math.Min(math.Max(1, math.Ceil(S/chunk)), MaxChunks)
	return (C + float64(p) - 2) * (alpha + S/C/beta)
}

func allToAllForm(p int, S, alpha, beta float64) float64 {
	return alpha + float64(p-1)/float64(p)*S/beta
}

// runOp runs one collective started by start on a new topology of cfg,
// alone, and returns its result.
func runOp(t testing.TB, cfg Config, start func(*Topology, func(*Result)) error) *Result {
	t.Helper()
	var s event.Scheduler
	topo, err := NewTopology(&s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var res *Result
	if err := start(topo, func(r *Result) { res = r }); err != nil {
		t.Fatal(err)
	}
	s.Run()
	if res == nil {
		t.Fatal("done was not called")
	}
	return res
}

// TestCollectivesClosedForms checks reduce-scatter, all-gather, broadcast,
// all-to-all and send/recv on a flat fabric against their closed forms to
// 1e-9 relative.
func TestCollectivesClosedForms(t *testing.T) {
	a, b := alphaNet(), betaNet()
	chunk := float64(DefaultTreeChunk)
	n := 0
	for _, p := range []int{2, 3, 4, 5, 7, 8} {
		for _, S := range []units.Bytes{0, 1 * units.KiB, 3 * units.MiB, 25 * units.MB, 256 * units.MiB} {
			x := float64(S)
			type tc struct {
				name  string
				op    Op
				want  float64
				start func(*Topology, func(*Result)) error
			}
			cases := []tc{
				{"reduce-scatter/ring", OpReduceScatter, rsRingForm(p, x, a, b), func(tp *Topology, d func(*Result)) error { return tp.ReduceScatter(Ring, S, nil, d) }},
				{"all-gather/ring", OpAllGather, rsRingForm(p, x, a, b), func(tp *Topology, d func(*Result)) error { return tp.AllGather(Ring, S, nil, d) }},
				{"broadcast/ring", OpBroadcast, bcastRingForm(p, x, a, b, chunk), func(tp *Topology, d func(*Result)) error { return tp.Broadcast(Ring, S, 1, nil, d) }},
				{"broadcast/tree", OpBroadcast, treeForm(p, x, a, b, false, chunk) / 2, func(tp *Topology, d func(*Result)) error { return tp.Broadcast(Tree, S, p-1, nil, d) }},
				{"all-to-all", OpAllToAll, allToAllForm(p, x, a, b), func(tp *Topology, d func(*Result)) error { return tp.AllToAll(S, nil, d) }},
				{"send-recv", OpSendRecv, a + x/b, func(tp *Topology, d func(*Result)) error { return tp.SendRecv(S, p-1, 0, d) }},
			}
			if p&(p-1) == 0 {
				cases = append(cases,
					tc{"reduce-scatter/halving-doubling", OpReduceScatter, rsHDForm(p, x, a, b), func(tp *Topology, d func(*Result)) error { return tp.ReduceScatter(HalvingDoubling, S, nil, d) }},
					tc{"all-gather/halving-doubling", OpAllGather, rsHDForm(p, x, a, b), func(tp *Topology, d func(*Result)) error { return tp.AllGather(HalvingDoubling, S, nil, d) }})
			}
			for _, c := range cases {
				res := runOp(t, flat(p), c.start)
				if got := float64(res.Time()); !near(got, c.want, 1e-9) {
					t.Errorf("%s/p=%d/S=%v: simulated %.12g s, closed form %.12g s", c.name, p, S, got, c.want)
				}
				ranks := p
				if c.op == OpSendRecv {
					ranks = 2
				}
				if res.Op != c.op || res.Ranks != ranks || res.Bytes != S {
					t.Errorf("%s: result says %v on %d ranks of %v", c.name, res.Op, res.Ranks, res.Bytes)
				}
				n++
			}
		}
	}
	t.Logf("%d cases", n)
}

// TestCollectivesSubset: on a flat fabric a subset of the ranks in a
// scrambled order, with the root inside it, costs what as many ranks in
// order do.
func TestCollectivesSubset(t *testing.T) {
	ranks := []int{9, 3, 14, 0, 7}
	S := 4 * units.MiB
	a, b := alphaNet(), betaNet()
	x := float64(S)
	for _, c := range []struct {
		name  string
		want  float64
		start func(*Topology, func(*Result)) error
	}{
		{"reduce-scatter", rsRingForm(5, x, a, b), func(tp *Topology, d func(*Result)) error { return tp.ReduceScatter(Ring, S, ranks, d) }},
		{"broadcast ring", bcastRingForm(5, x, a, b, float64(DefaultTreeChunk)), func(tp *Topology, d func(*Result)) error { return tp.Broadcast(Ring, S, 0, ranks, d) }},
		{"broadcast tree", treeForm(5, x, a, b, false, float64(DefaultTreeChunk)) / 2, func(tp *Topology, d func(*Result)) error { return tp.Broadcast(Tree, S, 7, ranks, d) }},
		{"all-to-all", allToAllForm(5, x, a, b), func(tp *Topology, d func(*Result)) error { return tp.AllToAll(S, ranks, d) }},
	} {
		if got := float64(runOp(t, flat(16), c.start).Time()); !near(got, c.want, 1e-9) {
			t.Errorf("%s on %v: %.12g s, want %.12g s", c.name, ranks, got, c.want)
		}
	}
}

// TestReduceScatterAllGatherIsAllReduce: a ring reduce-scatter followed by
// a ring all-gather takes what a ring all-reduce takes, in closed form
// and in the simulator, on one rank per node and on nodes of 4 ranks with
// 1, 2 and 4 NICs (one ring per NIC).
func TestReduceScatterAllGatherIsAllReduce(t *testing.T) {
	S := 48 * units.MiB
	for _, p := range []int{2, 5, 8} {
		if got, want := 2*rsRingForm(p, float64(S), alphaNet(), betaNet()), ringForm(p, float64(S), alphaNet(), betaNet()); !near(got, want, 1e-12) {
			t.Errorf("p=%d: closed forms %v and %v", p, got, want)
		}
	}
	cfgs := []Config{flat(2), flat(5), flat(8), twoLevel(8, 4, 1, 1), twoLevel(8, 4, 2, 1), twoLevel(8, 4, 4, 1)}
	for _, cfg := range cfgs {
		var s event.Scheduler
		topo, err := NewTopology(&s, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var end units.Seconds
		if err := topo.ReduceScatter(Ring, S, nil, func(*Result) {
			if err := topo.AllGather(Ring, S, nil, func(r *Result) { end = r.End }); err != nil {
				t.Error(err)
			}
		}); err != nil {
			t.Fatal(err)
		}
		s.Run()
		ar := runAllReduce(t, cfg, Ring, S, nil)
		name := fmt.Sprintf("p=%d k=%d nics=%d", cfg.Ranks, cfg.RanksPerNode, cfg.NICsPerNode)
		if !near(float64(end), float64(ar.Time()), 1e-9) {
			t.Errorf("%s: reduce-scatter + all-gather %v s, all-reduce %v s", name, end, ar.Time())
		}
	}
}

// TestSharedNICContention: ranks that share a NIC share its bandwidth.
// Two send/recvs from the two ranks of node 0 to those of node 1 at once
// each take alpha + 2S/beta, not the one-link alpha + S/beta; an
// all-to-all on 4 nodes of 2 ranks with one NIC each takes
// alpha + 12·(S/8)/beta, against the single-switch alpha + 7/8·S/beta.
func TestSharedNICContention(t *testing.T) {
	S := 16 * units.MiB
	a, b, x := alphaNet(), betaNet(), float64(S)
	var s event.Scheduler
	topo, err := NewTopology(&s, twoLevel(4, 2, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	for _, pair := range [][2]int{{0, 2}, {1, 3}} {
		if err := topo.SendRecv(S, pair[0], pair[1], func(r *Result) { got = append(got, float64(r.Time())) }); err != nil {
			t.Fatal(err)
		}
	}
	s.Run()
	one := a + x/b
	if len(got) != 2 {
		t.Fatalf("%d transfers finished, want 2", len(got))
	}
	for _, g := range got {
		if want := a + 2*x/b; !near(g, want, 1e-9) || !(g > one) {
			t.Errorf("shared NIC: %v s, want %v s (one link alone: %v s)", g, want, one)
		}
	}
	shared := runOp(t, twoLevel(8, 2, 1, 1), func(tp *Topology, d func(*Result)) error { return tp.AllToAll(S, nil, d) })
	// Each NIC carries k(p−k) = 12 streams of S/p, not p−1 = 7: the
	// flow group moves at beta/12.
	want := a + 12*(x/8)/b
	if form := allToAllForm(8, x, a, b); !near(float64(shared.Time()), want, 1e-9) || !(want > 1.5*form) {
		t.Errorf("all-to-all with 2 ranks per NIC took %v s, want %v s; one NIC per rank would take %v s", shared.Time(), want, form)
	}
}

func TestCollectivesErrors(t *testing.T) {
	var s event.Scheduler
	topo, err := NewTopology(&s, flat(6))
	if err != nil {
		t.Fatal(err)
	}
	nan := units.Bytes(math.NaN())
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"reduce-scatter unknown rank", func() error { return topo.ReduceScatter(Ring, 1, []int{0, 6}, nil) }},
		{"reduce-scatter duplicate rank", func() error { return topo.ReduceScatter(Ring, 1, []int{1, 2, 1}, nil) }},
		{"reduce-scatter negative bytes", func() error { return topo.ReduceScatter(Ring, -1, nil, nil) }},
		{"reduce-scatter halving-doubling on 6", func() error { return topo.ReduceScatter(HalvingDoubling, 1, nil, nil) }},
		{"reduce-scatter tree", func() error { return topo.ReduceScatter(Tree, 1, nil, nil) }},
		{"all-gather NaN bytes", func() error { return topo.AllGather(Ring, nan, nil, nil) }},
		{"all-gather halving-doubling on 3", func() error { return topo.AllGather(HalvingDoubling, 1, []int{0, 1, 2}, nil) }},
		{"all-gather hierarchical", func() error { return topo.AllGather(Hierarchical, 1, nil, nil) }},
		{"broadcast root not among ranks", func() error { return topo.Broadcast(Ring, 1, 5, []int{0, 1, 2}, nil) }},
		{"broadcast root out of range", func() error { return topo.Broadcast(Tree, 1, -1, nil, nil) }},
		{"broadcast double-tree", func() error { return topo.Broadcast(DoubleTree, 1, 0, nil, nil) }},
		{"broadcast NaN bytes", func() error { return topo.Broadcast(Ring, nan, 0, nil, nil) }},
		{"broadcast duplicate rank", func() error { return topo.Broadcast(Ring, 1, 0, []int{0, 0}, nil) }},
		{"all-to-all unknown rank", func() error { return topo.AllToAll(1, []int{-1, 2}, nil) }},
		{"all-to-all negative bytes", func() error { return topo.AllToAll(-1, nil, nil) }},
		{"all-to-all no ranks", func() error { return topo.AllToAll(1, []int{}, nil) }},
		{"send-recv unknown rank", func() error { return topo.SendRecv(1, 0, 9, nil) }},
		{"send-recv to itself", func() error { return topo.SendRecv(1, 2, 2, nil) }},
		{"send-recv NaN bytes", func() error { return topo.SendRecv(nan, 0, 1, nil) }},
	} {
		if err := c.call(); !errors.Is(err, ErrCollective) {
			t.Errorf("%s: error %v, want one wrapping ErrCollective", c.name, err)
		}
	}
	if s.Len() != 0 {
		t.Errorf("failed requests scheduled %d events", s.Len())
	}
	// The same broadcast with a valid root then runs: the failure cached
	// nothing.
	if err := topo.Broadcast(Ring, 1, 2, []int{0, 1, 2}, nil); err != nil {
		t.Errorf("broadcast from rank 2: %v", err)
	}
}

// TestCollectivesOneRank: on one rank nothing moves.
func TestCollectivesOneRank(t *testing.T) {
	one := []int{3}
	for _, start := range []func(*Topology, func(*Result)) error{
		func(tp *Topology, d func(*Result)) error { return tp.ReduceScatter(Ring, units.MiB, one, d) },
		func(tp *Topology, d func(*Result)) error { return tp.AllGather(HalvingDoubling, units.MiB, one, d) },
		func(tp *Topology, d func(*Result)) error { return tp.Broadcast(Tree, units.MiB, 3, one, d) },
		func(tp *Topology, d func(*Result)) error { return tp.AllToAll(units.MiB, one, d) },
	} {
		if r := runOp(t, flat(4), start); r.Time() != 0 || r.Steps != 0 {
			t.Errorf("%v on one rank took %v in %d steps", r.Op, r.Time(), r.Steps)
		}
	}
}

func TestOpString(t *testing.T) {
	want := []string{"all-reduce", "reduce-scatter", "all-gather", "broadcast", "all-to-all", "send-recv"}
	for i, w := range want {
		if got := Op(i).String(); got != w {
			t.Errorf("Op(%d) = %q, want %q", i, got, w)
		}
	}
	if got := Op(99).String(); got != "Op(99)" {
		t.Errorf("Op(99) = %q", got)
	}
	if r := runAllReduce(t, flat(2), Ring, 1, nil); r.Op != OpAllReduce {
		t.Errorf("AllReduce result says %v", r.Op)
	}
}

// fuzzTopologies are the topologies FuzzCollectives runs on: two-level;
// uneven nodes 1+3+4 with a per-flow limit; 4 nodes of 2 behind PCIe
// switches of 1 on 2 sockets, with host memory; rails with a 2:1 spine.
func fuzzTopologies() []Config {
	plain := twoLevel(8, 2, 2, 1)
	uneven := twoLevel(8, 0, 2, 1)
	uneven.NodeRanks, uneven.PerFlow, uneven.Streams = []int{1, 3, 4}, 1e9, 2
	tree := twoLevel(8, 2, 2, 1)
	tree.DevicesPerSwitch, tree.SwitchUplink, tree.Sockets, tree.InterSocket = 1, LinkSpec{uplinkBW, uplinkLat}, 2, LinkSpec{qpiBW, qpiLat}
	tree.HostMemory = hostBW
	rails := twoLevel(8, 2, 2, 2)
	rails.Rails = true
	return []Config{plain, uneven, tree, rails}
}

// FuzzCollectives starts any collective with any algorithm, size, root
// and ranks on small topologies (fuzzTopologies): each call either returns an
// error wrapping ErrCollective and schedules nothing, or runs to its done
// callback with a finite, non-negative time. No input panics.
func FuzzCollectives(f *testing.F) {
	f.Add(uint8(0), uint8(0), 1e6, 0, []byte{0, 1, 2, 3})
	f.Add(uint8(1), uint8(1), 3e5, 2, []byte{5, 2, 7})
	f.Add(uint8(2), uint8(2), 0.0, 3, []byte{})
	f.Add(uint8(3), uint8(1), -1.0, 9, []byte{1, 1})
	f.Add(uint8(4), uint8(7), 7e7, 1, []byte{0, 4})
	f.Add(uint8(11), uint8(5), 5e6, 0, []byte{})
	f.Add(uint8(17), uint8(8), 5e6, 0, []byte{})
	f.Add(uint8(23), uint8(1), 5e6, 0, []byte{7, 0, 3})
	f.Fuzz(func(t *testing.T, op, alg uint8, bytes float64, root int, rs []byte) {
		var s event.Scheduler
		cfgs := fuzzTopologies()
		topo, err := NewTopology(&s, cfgs[int(op/6)%len(cfgs)])
		if err != nil {
			t.Fatal(err)
		}
		var ranks []int
		if len(rs) > 0 {
			ranks = make([]int, 0, len(rs))
			for _, r := range rs {
				ranks = append(ranks, int(int8(r))%10)
			}
		}
		S, a := units.Bytes(bytes), Algorithm(int(alg)%10-1)
		var res *Result
		done := func(r *Result) { res = r }
		switch op % 6 {
		case 0:
			err = topo.ReduceScatter(a, S, ranks, done)
		case 1:
			err = topo.AllGather(a, S, ranks, done)
		case 2:
			err = topo.Broadcast(a, S, root, ranks, done)
		case 3:
			err = topo.AllToAll(S, ranks, done)
		case 4:
			err = topo.SendRecv(S, root, int(int8(op)), done)
		default:
			err = topo.AllReduce(a, S, ranks, done)
		}
		if err != nil {
			if !errors.Is(err, ErrCollective) || s.Len() != 0 {
				t.Fatalf("error %v (wraps ErrCollective: %v), %d events scheduled", err, errors.Is(err, ErrCollective), s.Len())
			}
			return
		}
		s.Run()
		if res == nil || !(res.Time() >= 0) || math.IsInf(float64(res.Time()), 1) {
			t.Fatalf("result %+v", res)
		}
	})
}
