package netsim

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/event"
)

// NCCL v2.30.7's constants, copied here from src/graph/tuning.cc so that
// the closed forms below do not read the code under test: microseconds,
// indexed LL, LL128, Simple.
var (
	refBaseRing  = [3]float64{6.6, 14.0, 8.4}
	refBaseTree  = [3]float64{6.8, 14.0, 8.4}
	refNVRing    = [3]float64{0.6, 1.9, 3.4} // hwLatencies NVLINK ring
	refNVTree    = [3]float64{0.6, 1.25, 4.0}
	refNetTree   = [3]float64{5.0, 8.5, 14}
	refNetRing   = [3]float64{2.7, 4.0, 14.0}
	refWire      = [3]float64{2, 128.0 / 120, 1} // bytes on the wire per payload byte
	refProtocols = [3]Protocol{LL, LL128, Simple}
)

// ncclCfg is cfg with the NCCL algorithm and protocol fixed.
func ncclCfg(cfg Config, a NCCLAlgorithm, pr Protocol) Config {
	cfg.NCCL.Algorithm, cfg.NCCL.Protocol = a, pr
	return cfg
}

func runNCCL(t testing.TB, cfg Config, op Op, S units.Bytes) *Result {
	t.Helper()
	return runOp(t, cfg, func(tp *Topology, done func(*Result)) error { return tp.Collective(op, NCCL, S, nil, done) })
}

func checkForm(t *testing.T, name string, got, want float64) {
	t.Helper()
	if d := math.Abs(got-want) / want; !(d <= 1e-9) {
		t.Errorf("%s: simulated %.12g s, closed form %.12g s (relative error %.2g)", name, got, want, d)
	}
}

var ncclSizes = []units.Bytes{8, 4 * units.KiB, 3 * units.MiB, 1 * units.GiB}

// TestNCCLRingClosedForms: NCCL's ring on an idle network, each protocol:
// the base latency once, every step a hop latency, the payload times the
// protocol's wire factor at the link's bandwidth. One node of 8 ranks on
// NVLink (hop latency NVLink's), and 8 nodes of one rank (every hop
// between nodes: the tree's network latency, tuning.cc's "ppn = 1" rule,
// and the plateau factor 1.4 of the Simple all-reduce once S/(c·p) ≥ 64).
func TestNCCLRingClosedForms(t *testing.T) {
	node := twoLevel(8, 8, 1, 1)
	nodes := flat(8)
	nodes.Servers = 0
	for i, pr := range refProtocols {
		for _, S := range ncclSizes {
			s := float64(S)
			for _, op := range []Op{OpAllReduce, OpReduceScatter, OpAllGather} {
				steps := 7.0
				if op == OpAllReduce {
					steps = 14
				}
				got := runNCCL(t, ncclCfg(node, NCCLRing, pr), op, S)
				want := (refBaseRing[i]+steps*refNVRing[i])*1e-6 + steps/8*s*refWire[i]/float64(intraBW)
				checkForm(t, fmt.Sprintf("one node %v %v %v", op, pr, S), float64(got.Time()), want)

				f := 1.0
				if op == OpAllReduce && pr == Simple && s/8 >= 64 {
					f = 1.4
				}
				got = runNCCL(t, ncclCfg(nodes, NCCLRing, pr), op, S)
				want = f*(refBaseRing[i]+steps*refNetTree[i])*1e-6 + steps/8*s*refWire[i]/betaNet()
				checkForm(t, fmt.Sprintf("8 nodes %v %v %v", op, pr, S), float64(got.Time()), want)
			}
			// Broadcast: a chain of C+p−2 ticks of one hop each.
			C := math.Max(1, math.Ceil(s/float64(DefaultTreeChunk)))
			got := runNCCL(t, ncclCfg(node, NCCLRing, pr), OpBroadcast, S)
			want := refBaseRing[i]*1e-6 + (C+6)*(refNVRing[i]*1e-6+s/C*refWire[i]/float64(intraBW))
			checkForm(t, fmt.Sprintf("broadcast %v %v", pr, S), float64(got.Time()), want)
		}
	}
}

// TestNCCLTreeClosedForms: NCCL's tree all-reduce: on one node a
// pipelined chain reduce and broadcast, 2(C+k−2) ticks of the NVLink tree
// hop; on 8 nodes of one rank the double binary tree (treeForm) with the
// network's tree hop as alpha.
func TestNCCLTreeClosedForms(t *testing.T) {
	node := twoLevel(8, 8, 1, 1)
	nodes := flat(8)
	nodes.Servers = 0
	chunk := float64(DefaultTreeChunk)
	for i, pr := range refProtocols {
		for _, S := range ncclSizes {
			s := float64(S)
			C := math.Max(1, math.Ceil(s/chunk))
			got := runNCCL(t, ncclCfg(node, NCCLTree, pr), OpAllReduce, S)
			want := refBaseTree[i]*1e-6 + 2*(C+6)*(refNVTree[i]*1e-6+s/C*refWire[i]/float64(intraBW))
			checkForm(t, fmt.Sprintf("one node %v %v", pr, S), float64(got.Time()), want)

			got = runNCCL(t, ncclCfg(nodes, NCCLTree, pr), OpAllReduce, S)
			want = refBaseTree[i]*1e-6 + treeForm(8, s*refWire[i], refNetTree[i]*1e-6, betaNet(), true, chunk*refWire[i])
			checkForm(t, fmt.Sprintf("8 nodes %v %v", pr, S), float64(got.Time()), want)
		}
	}
}

// TestNCCLInNetworkClosedForms: NVLS on one node of 8 (25 µs, each port
// moving 7/8 of S at 85 % of NVLink) and CollNet Direct on 4 nodes of 4
// ranks with 2 NICs (a ring reduce-scatter and all-gather in the node
// paying 3.7 µs + 0.4 µs per further local rank each way, the fabric's
// reduction 31 µs and S over the node's two NICs).
func TestNCCLInNetworkClosedForms(t *testing.T) {
	node := twoLevel(8, 8, 1, 1)
	node.NCCL.NVLS = true
	multi := twoLevel(16, 4, 2, 1)
	multi.NCCL.CollNet = true
	for _, S := range ncclSizes {
		s := float64(S)
		got := runNCCL(t, ncclCfg(node, NCCLNVLS, ProtoAuto), OpAllReduce, S)
		checkForm(t, fmt.Sprintf("nvls %v", S), float64(got.Time()), 25e-6+7.0/8*s/(0.85*float64(intraBW)))

		got = runNCCL(t, ncclCfg(multi, NCCLCollNet, ProtoAuto), OpAllReduce, S)
		want := 2*(3.7+3*0.4)*1e-6 + 2*3.0/4*s/float64(intraBW) + 31e-6 + s/(2*betaNet())
		checkForm(t, fmt.Sprintf("collnet %v", S), float64(got.Time()), want)
	}
}

// TestNCCLPointToPointClosedForms: all-to-all and send/recv as one step
// paying the ring's base latency and one network hop, LL up to 16 KiB per
// peer and Simple above (enqueue.cc's NCCL_P2P_LL_THRESHOLD).
func TestNCCLPointToPointClosedForms(t *testing.T) {
	nodes := flat(8)
	nodes.Servers = 0
	for _, S := range ncclSizes {
		s := float64(S)
		i := 2
		if s/8 <= 16384 {
			i = 0
		}
		got := runNCCL(t, nodes, OpAllToAll, S)
		want := (refBaseRing[i]+refNetRing[i])*1e-6 + 7.0/8*s*refWire[i]/betaNet()
		checkForm(t, fmt.Sprintf("all-to-all %v", S), float64(got.Time()), want)
		if got.NCCL.Protocol != refProtocols[i] {
			t.Errorf("all-to-all %v: protocol %v, want %v", S, got.NCCL.Protocol, refProtocols[i])
		}
		i = 2
		if s <= 16384 {
			i = 0
		}
		got = runNCCL(t, nodes, OpSendRecv, S)
		want = (refBaseRing[i]+refNetRing[i])*1e-6 + s*refWire[i]/betaNet()
		checkForm(t, fmt.Sprintf("send/recv %v", S), float64(got.Time()), want)
	}
}

// TestNCCLProtocolCrossover: NCCL's ring all-reduce on one node of 8
// ranks at bandwidth B = 150 GB/s switches LL → LL128 → Simple where the
// predicted times cross. By hand from tuning.cc: latencies LL 6.6 + 14·0.6
// = 15.0 µs, LL128 14 + 14·1.9 = 40.6 µs, Simple 8.4 + 14·3.4 = 56.0 µs;
// algorithm bandwidths a·0.5, a·0.92 and a with a = B·8/14. So LL gives
// way to LL128 at S1 = 25.6 µs / (2/a − 1/(0.92a)) ≈ 2.40 MB and LL128 to
// Simple at S2 = 15.4 µs / (1/(0.92a) − 1/a) ≈ 15.2 MB.
func TestNCCLProtocolCrossover(t *testing.T) {
	var s event.Scheduler
	topo, err := NewTopology(&s, ncclCfg(twoLevel(8, 8, 1, 1), NCCLRing, ProtoAuto))
	if err != nil {
		t.Fatal(err)
	}
	a := float64(intraBW) * 8 / 14
	s1 := 25.6e-6 / (2/a - 1/(0.92*a))
	s2 := 15.4e-6 / (1/(0.92*a) - 1/a)
	if math.Abs(s1-2.403e6) > 0.01e6 || math.Abs(s2-15.18e6) > 0.05e6 {
		t.Fatalf("hand crossovers %.4g and %.4g B, want about 2.40 MB and 15.2 MB", s1, s2)
	}
	for _, c := range []struct {
		S    float64
		want Protocol
	}{{8, LL}, {0.99 * s1, LL}, {1.01 * s1, LL128}, {0.99 * s2, LL128}, {1.01 * s2, Simple}, {1 << 30, Simple}} {
		ch, err := topo.NCCLChoose(OpAllReduce, units.Bytes(c.S), nil)
		if err != nil || ch.Protocol != c.want || ch.Algorithm != NCCLRing {
			t.Errorf("%.0f B: chose %v/%v (%v), want ring/%v", c.S, ch.Algorithm, ch.Protocol, err, c.want)
		}
	}
}

// TestNCCLChoiceByTopology: with no override, small all-reduces over 16
// nodes take the tree (its latency grows with log2 of the nodes, the
// ring's with the ranks) and large ones the ring (the tree's bandwidth is
// 0.92/2 of the bus's, the ring's p/(2(p−1)) of it); a single node of
// NVLink with NVLS takes NVLS for large messages.
func TestNCCLChoiceByTopology(t *testing.T) {
	var s event.Scheduler
	topo, err := NewTopology(&s, twoLevel(128, 8, 8, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		S    units.Bytes
		want NCCLAlgorithm
	}{{8, NCCLTree}, {1 * units.GiB, NCCLRing}} {
		ch, err := topo.NCCLChoose(OpAllReduce, c.S, nil)
		if err != nil || ch.Algorithm != c.want {
			t.Errorf("16 nodes, %v: chose %v/%v (%v), want %v", c.S, ch.Algorithm, ch.Protocol, err, c.want)
		}
	}
	cfg := twoLevel(8, 8, 1, 1)
	cfg.NCCL.NVLS = true
	topo, _ = NewTopology(&s, cfg)
	if ch, _ := topo.NCCLChoose(OpAllReduce, 1*units.GiB, nil); ch.Algorithm != NCCLNVLS || ch.Protocol != Simple {
		t.Errorf("NVLS node, 1 GiB: chose %v/%v, want nvls/simple", ch.Algorithm, ch.Protocol)
	}
	if ch, _ := topo.NCCLChoose(OpReduceScatter, 1*units.GiB, nil); ch.Algorithm != NCCLRing {
		t.Errorf("reduce-scatter: chose %v, want ring", ch.Algorithm)
	}
}

// TestNCCLOverrides: a fixed algorithm and protocol are what runs, and an
// override the fabric cannot run is an error naming it.
func TestNCCLOverrides(t *testing.T) {
	cfg := twoLevel(32, 8, 4, 1)
	for _, a := range []NCCLAlgorithm{NCCLRing, NCCLTree} {
		for _, pr := range refProtocols {
			res := runNCCL(t, ncclCfg(cfg, a, pr), OpAllReduce, 1*units.GiB)
			if res.NCCL.Algorithm != a || res.NCCL.Protocol != pr || res.Algorithm != NCCL {
				t.Errorf("override %v/%v ran %v/%v", a, pr, res.NCCL.Algorithm, res.NCCL.Protocol)
			}
		}
	}
	var s event.Scheduler
	for _, c := range []struct {
		a  NCCLAlgorithm
		pr Protocol
		op Op
	}{{NCCLNVLS, ProtoAuto, OpAllReduce}, {NCCLCollNet, ProtoAuto, OpAllReduce}, {NCCLTree, ProtoAuto, OpAllGather},
		{NCCLRing, LL128, OpAllToAll}, {NCCLTree, ProtoAuto, OpSendRecv}} {
		topo, err := NewTopology(&s, ncclCfg(cfg, c.a, c.pr))
		if err != nil {
			t.Fatal(err)
		}
		err = topo.Collective(c.op, NCCL, units.MiB, nil, nil)
		if !errors.Is(err, ErrCollective) {
			t.Errorf("%v/%v %v: error %v, want ErrCollective", c.a, c.pr, c.op, err)
		}
	}
	if _, err := NewTopology(&s, ncclCfg(cfg, 9, 0)); !errors.Is(err, ErrConfig) {
		t.Errorf("algorithm 9: error %v", err)
	}
	for _, n := range []string{"ring", "tree", "nvls", "collnet", "auto", ""} {
		if _, err := ParseNCCLAlgorithm(n); err != nil {
			t.Error(err)
		}
	}
	for _, n := range []string{"ll", "ll128", "simple", "auto", ""} {
		if _, err := ParseProtocol(n); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseProtocol("LL"); !errors.Is(err, ErrCollective) {
		t.Errorf("ParseProtocol(LL): %v", err)
	}
}

// TestNCCLContention: two NCCL all-reduces whose rings cross the same
// NICs (ranks 0 and 2, and 1 and 3, of two nodes of two ranks with one
// NIC) take longer together than one alone.
func TestNCCLContention(t *testing.T) {
	cfg := twoLevel(4, 2, 1, 1)
	S := 256 * units.MiB
	one := runOp(t, cfg, func(tp *Topology, done func(*Result)) error { return tp.AllReduce(NCCL, S, []int{0, 2}, done) })
	var s event.Scheduler
	topo, err := NewTopology(&s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var ends []units.Seconds
	for _, ranks := range [][]int{{0, 2}, {1, 3}} {
		if err := topo.AllReduce(NCCL, S, ranks, func(r *Result) { ends = append(ends, r.End) }); err != nil {
			t.Fatal(err)
		}
	}
	s.Run()
	if len(ends) != 2 || !(ends[0] > 1.5*one.End) || !(ends[1] > 1.5*one.End) {
		t.Errorf("alone %v, together %v: want each well above alone", one.End, ends)
	}
}

// TestNCCLTreeChannels: over nodes with several NICs, NCCL's tree runs one
// tree per NIC, so a large all-reduce between 4 nodes of 4 ranks, bound by
// the NICs, takes under half as long with 4 NICs as with 1 (the double
// tree between leaders: about 2·S/(c·beta) on c NICs).
func TestNCCLTreeChannels(t *testing.T) {
	S := 1 * units.GiB
	one := runNCCL(t, ncclCfg(twoLevel(16, 4, 1, 1), NCCLTree, Simple), OpAllReduce, S)
	four := runNCCL(t, ncclCfg(twoLevel(16, 4, 4, 1), NCCLTree, Simple), OpAllReduce, S)
	if !(four.Time() < one.Time()/2) {
		t.Errorf("1 NIC %v, 4 NICs %v: want under half", one.Time(), four.Time())
	}
	bound := 2 * float64(S) / (4 * betaNet())
	if got := float64(four.Time()); got < bound {
		t.Errorf("4 NICs: %v s, under the bound 2·S/(4·beta) = %v s", got, bound)
	}
}

// TestNCCLUnevenNodes: ranks spread unevenly over nodes (3 on one, 1 on
// another) leave NCCL the ring: the tree is refused when fixed, and the
// choice never takes it.
func TestNCCLUnevenNodes(t *testing.T) {
	cfg := twoLevel(8, 4, 1, 1)
	ranks := []int{0, 1, 2, 4}
	var s event.Scheduler
	topo, err := NewTopology(&s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, S := range ncclSizes {
		if ch, err := topo.NCCLChoose(OpAllReduce, S, ranks); err != nil || ch.Algorithm != NCCLRing {
			t.Errorf("%v: chose %v (%v), want ring", S, ch.Algorithm, err)
		}
	}
	topo, _ = NewTopology(&s, ncclCfg(cfg, NCCLTree, ProtoAuto))
	if err := topo.AllReduce(NCCL, units.MiB, ranks, nil); !errors.Is(err, ErrCollective) {
		t.Errorf("tree on uneven nodes: %v, want ErrCollective", err)
	}
}

// TestNCCLPredicted checks the tuning model's prediction by hand on two
// nodes of 8 ranks with 8 NICs, ring and Simple fixed, 1 GiB: tuning.cc
// takes the NVLink port's bandwidth up to two nodes (bwIntra), so B_alg =
// 150 GB/s · 16/30; the latency is the 8.4 µs base, 28 hops inside the
// nodes at max(3.4, 3·1) µs (the network post overhead, tripled for
// Simple) and 2 network hops of 14 µs, all × 1.4 (the ring's plateau).
// On 4 such nodes the bandwidth is the 8 NICs' instead: 8·12.5 GB/s·0.9.
func TestNCCLPredicted(t *testing.T) {
	S := 1 * units.GiB
	for _, c := range []struct {
		p    int
		want float64
	}{
		{16, 1.4*(8.4+28*3.4+2*14)*1e-6 + float64(S)/(float64(intraBW)*16/30)},
		{32, 1.4*(8.4+56*3.4+6*14)*1e-6 + float64(S)/(8*betaNet()*32/62)},
	} {
		var s event.Scheduler
		topo, err := NewTopology(&s, ncclCfg(twoLevel(c.p, 8, 8, 1), NCCLRing, Simple))
		if err != nil {
			t.Fatal(err)
		}
		ch, err := topo.NCCLChoose(OpAllReduce, S, nil)
		if err != nil || math.Abs(float64(ch.Predicted)/c.want-1) > 1e-9 {
			t.Errorf("%d ranks: predicted %v (%v), want %v", c.p, float64(ch.Predicted), err, c.want)
		}
	}
}
