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

// refTreeCorr is tuning.cc's treeCorrectionFactor (v2.30.7) for protocol
// i at the sizes of ncclSizes: index ⌊log2(S/64)⌋ = 6 for 4 KiB and 15 for
// 3 MiB; none below 64 B or beyond the table (1 GiB).
func refTreeCorr(i int, S units.Bytes) float64 {
	switch S {
	case 4 * units.KiB:
		return [3]float64{.7, .8, .9}[i]
	case 3 * units.MiB:
		return [3]float64{.6, .6, .6}[i]
	}
	return 1
}

// refNetLat is the network's own latency NCCL adds to a hop between nodes
// (tuning.cc: graph latencyInter, once more for Simple), µs: the NIC's,
// the fabric's and the transport's per-message latency of twoLevel/flat.
func refNetLat(i int) float64 {
	l := alphaNet() * 1e6
	if i == 2 {
		return 2 * l
	}
	return l
}

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
				want = f*(refBaseRing[i]+steps*(refNetTree[i]+refNetLat(i)))*1e-6 + steps/8*s*refWire[i]/betaNet()
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

// TestNCCLTreeClosedForms: NCCL's tree all-reduce pays tuning.cc's tree
// latency L = base + 2·((k−1)·h_intra + ⌊log2 N⌋·h_net) once, then moves
// C chunks of c through its D pipeline stages in C + D − 1 ticks, every
// stage at once, each tick taking its busiest link's load of chunks at
// that link's bandwidth, each chunk's bytes times w/f (f tuning.cc's
// treeCorrectionFactor at S):
//   - one node of k = 8: a chain reduce and broadcast (D = 2(k−1)); the
//     busiest port's load in each tick is counted by chainLoads, a serial
//     walk over the ranks (place q sends up in stage k−1−q and down in
//     stage k−1+q, receives in stages k−2−q and k−2+q);
//   - two nodes of one rank: two channels of S/2, one per tree of the
//     double binary tree; each rank sends up one tree and down the other,
//     so its NIC carries 2 streams in the C − 1 ticks where both stages
//     move and 1 in the first and last: T = L + 2C·c·w/β = L + S·w/β;
//   - two nodes of 4 ranks with 4 NICs and a port 10^6 times the NIC: 4
//     channels of S/4, each NIC one stream each way in the C + 1 ticks
//     with a stage between the nodes: T → L + (C+1)·c·w/β.
func TestNCCLTreeClosedForms(t *testing.T) {
	node := twoLevel(8, 8, 1, 1)
	pair := flat(2)
	pair.Servers = 0
	wide := twoLevel(8, 4, 4, 1)
	wide.Intra.Bandwidth = intraBW * 1e6
	chunk := float64(DefaultTreeChunk)
	for i, pr := range refProtocols {
		for _, S := range ncclSizes {
			s := float64(S)
			C := math.Max(1, math.Ceil(s/chunk))
			got := runNCCL(t, ncclCfg(node, NCCLTree, pr), OpAllReduce, S)
			want := (refBaseTree[i]+2*7*refNVTree[i])*1e-6 + chainLoads(8, int(C))*s/C*refWire[i]/refTreeCorr(i, S)/float64(intraBW)
			checkForm(t, fmt.Sprintf("one node %v %v", pr, S), float64(got.Time()), want)

			got = runNCCL(t, ncclCfg(pair, NCCLTree, pr), OpAllReduce, S)
			want = (refBaseTree[i]+2*(refNetTree[i]+refNetLat(i)))*1e-6 + s*refWire[i]/refTreeCorr(i, S)/betaNet()
			checkForm(t, fmt.Sprintf("2 nodes of 1 %v %v", pr, S), float64(got.Time()), want)

			C4 := math.Max(1, math.Ceil(s/4/chunk))
			got = runNCCL(t, ncclCfg(wide, NCCLTree, pr), OpAllReduce, S)
			want = (refBaseTree[i]+2*(3*refNVTree[i]+refNetTree[i]+refNetLat(i)))*1e-6 + (C4+1)*s/4/C4*refWire[i]/refTreeCorr(i, S)/betaNet()
			if d := math.Abs(float64(got.Time())-want) / want; !(d < 1e-5) {
				t.Errorf("2 nodes of 4 %v %v: simulated %v s, form %v s (relative error %.2g)", pr, S, float64(got.Time()), want, d)
			}
		}
	}
}

// chainLoads returns the sum over the C + 2(k−1) − 1 ticks of a chain
// reduce and broadcast over k ranks of the most chunks one port sends or
// receives in the tick.
func chainLoads(k, C int) float64 {
	active := func(tau, stage int) int {
		if stage >= 0 && stage < 2*(k-1) && tau-stage >= 0 && tau-stage < C {
			return 1
		}
		return 0
	}
	total := 0
	for tau := range C + 2*(k-1) - 1 {
		most := 0
		for q := range k {
			var out, in int
			if q >= 1 {
				out += active(tau, k-1-q)
				in += active(tau, k-2+q)
			}
			if q <= k-2 {
				out += active(tau, k-1+q)
				in += active(tau, k-2-q)
			}
			most = max(most, out, in)
		}
		total += most
	}
	return float64(total)
}

// TestNCCLInNetworkClosedForms: NVLS on one node and CollNet Direct on 4
// nodes of 4 ranks with 2 NICs (a ring reduce-scatter and all-gather in
// the node paying 3.7 µs + 0.4 µs per further local rank each way, the
// fabric's reduction 31 µs and S over the node's two NICs).
//
// NVLS takes 25 µs (hwLatencies, NVLink) + S/B, B = k·b·k/(2(k−1)) with
// b tuning.cc's bus bandwidth of one of the NVLS graph's k channels, by
// hand from NCCL v2.30.7: bwIntra the fastest sm90 intra speed (60, 50,
// 40, 30, 24, 20, 15, ... GB/s) not above port/(k+1), bwInter the slowest
// of at least 2·bwIntra (else 60), b = min(2·0.85·bwIntra·(k−1)/k, bwInter):
//
//   - 8 ranks, port 150 GB/s: 16.7 → 15, bwInter 30, b = min(22.3125, 30);
//   - 8 ranks, port 360 GB/s (H100's 450 GB/s at 80 %): 40 → 40, bwInter
//     60, b = min(59.5, 60), a bus bandwidth of 8·59.5 = 476 GB/s;
//   - 8 ranks, port 540 GB/s: 60 → 60, bwInter 60, b = min(89.25, 60);
//   - 4 ranks, port 200 GB/s: 40 → 40, bwInter 60, b = min(51, 60).
func TestNCCLInNetworkClosedForms(t *testing.T) {
	multi := twoLevel(16, 4, 2, 1)
	multi.NCCL.CollNet = true
	nvls := []struct {
		k    int
		port units.BytesPerSec
		b    float64 // bytes/s
	}{{8, intraBW, 22.3125e9}, {8, 360 * units.GBps, 59.5e9}, {8, 540 * units.GBps, 60e9}, {4, 200 * units.GBps, 51e9}}
	for _, S := range ncclSizes {
		s := float64(S)
		for _, c := range nvls {
			node := twoLevel(c.k, c.k, 1, 1)
			node.Intra.Bandwidth = c.port
			node.NCCL.NVLS = true
			got := runNCCL(t, ncclCfg(node, NCCLNVLS, ProtoAuto), OpAllReduce, S)
			B := float64(c.k) * c.b * float64(c.k) / float64(2*(c.k-1))
			checkForm(t, fmt.Sprintf("nvls %d ranks at %v, %v", c.k, c.port, S), float64(got.Time()), 25e-6+s/B)
		}

		got := runNCCL(t, ncclCfg(multi, NCCLCollNet, ProtoAuto), OpAllReduce, S)
		want := 2*(3.7+3*0.4)*1e-6 + 2*3.0/4*s/float64(intraBW) + (31+refNetLat(2))*1e-6 + s/(2*betaNet())
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
		want := (refBaseRing[i]+refNetRing[i]+refNetLat(i))*1e-6 + 7.0/8*s*refWire[i]/betaNet()
		checkForm(t, fmt.Sprintf("all-to-all %v", S), float64(got.Time()), want)
		if got.NCCL.Protocol != refProtocols[i] {
			t.Errorf("all-to-all %v: protocol %v, want %v", S, got.NCCL.Protocol, refProtocols[i])
		}
		i = 2
		if s <= 16384 {
			i = 0
		}
		got = runNCCL(t, nodes, OpSendRecv, S)
		want = (refBaseRing[i]+refNetRing[i]+refNetLat(i))*1e-6 + s*refWire[i]/betaNet()
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
	// Two such nodes: the tree's bus bandwidth may reach twice the NICs'
	// (ncclBus), so a large all-reduce takes the tree.
	topo, _ = NewTopology(&s, twoLevel(16, 8, 8, 1))
	if ch, _ := topo.NCCLChoose(OpAllReduce, 1*units.GiB, nil); ch.Algorithm != NCCLTree {
		t.Errorf("2 nodes, 1 GiB: chose %v/%v, want tree", ch.Algorithm, ch.Protocol)
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
// and four nodes of 8 ranks with 8 NICs, 1 GiB. The ring (Simple fixed):
// NCCL's graph search gives a ring graph bwIntra = bwInter, so its bus
// bandwidth is the 8 NICs' (8·12.5 GB/s·0.9 = 90 GB/s, under the 150 GB/s
// port) at any node count, B_alg = 90 GB/s·p/(2(p−1)); the latency is the
// 8.4 µs base, the hops inside the nodes at max(3.4, 3·1) µs (the network
// post overhead, tripled for Simple) and the network hops at 14 µs, all ×
// 1.4 (the ring's plateau). The tree on two nodes (Simple fixed): its
// graph's bwIntra may reach twice bwInter, so its bus bandwidth is
// min(150, 2·90) GB/s and B_alg = 0.92·150/2 GB/s (no size correction
// beyond 256 MiB); the latency is 8.4 µs + 2·(7·4 + 14 + l) µs. Every
// network hop adds l, the network's own latency (refNetLat).
func TestNCCLPredicted(t *testing.T) {
	S := 1 * units.GiB
	for _, c := range []struct {
		p    int
		a    NCCLAlgorithm
		want float64
	}{
		{16, NCCLRing, 1.4*(8.4+28*3.4+2*(14+refNetLat(2)))*1e-6 + float64(S)/(8*betaNet()*16/30)},
		{32, NCCLRing, 1.4*(8.4+56*3.4+6*(14+refNetLat(2)))*1e-6 + float64(S)/(8*betaNet()*32/62)},
		{16, NCCLTree, (8.4+2*(7*4+14+refNetLat(2)))*1e-6 + float64(S)/(0.92*float64(intraBW)/2)},
	} {
		var s event.Scheduler
		topo, err := NewTopology(&s, ncclCfg(twoLevel(c.p, 8, 8, 1), c.a, Simple))
		if err != nil {
			t.Fatal(err)
		}
		ch, err := topo.NCCLChoose(OpAllReduce, S, nil)
		if err != nil || math.Abs(float64(ch.Predicted)/c.want-1) > 1e-9 {
			t.Errorf("%d ranks, %v: predicted %v (%v), want %v", c.p, c.a, float64(ch.Predicted), err, c.want)
		}
	}
}

// TestNCCLNVLSTreeClosedForm: NCCL's NVLS tree over nodes of 8 ranks with
// NVLS and 8 NICs, on an idle network, takes tuning.cc's time L + S/B. By
// hand: NCCL's NVLS graph has one channel a GPU (8); a port of 150 GB/s
// carries a channel 8 + 1 times, so bwIntra is the fastest of search.cc's
// sm90 intra speeds (60, 50, 40, 30, 24, 20, 15, ... GB/s) not above
// 150/9 = 16.7 GB/s: 15 GB/s; a NIC moves 12.5·0.9 = 11.25 GB/s, so
// bwInter is the fastest sm90 inter speed (..., 15, 12, 6, ... GB/s) not
// above it: 6 GB/s. A channel's bus bandwidth is min(2·0.85·15·7/8, m·6,
// cap) GB/s: m = 2 and cap 57.7 on two nodes (12 GB/s), m = 1 and cap 45.5
// on four (6 GB/s); B = 8 channels × that × p/(2(p−1)). The latency is
// 25 µs (NVLink) + 2·log2(N)·(20.9 + 2l) µs, l the network's own
// latency (refNetLat, twice for Simple).
func TestNCCLNVLSTreeClosedForm(t *testing.T) {
	for _, c := range []struct {
		p, levels int
		bus       float64 // per channel, bytes/s
	}{{16, 1, 12e9}, {32, 2, 6e9}} {
		cfg := twoLevel(c.p, 8, 8, 1)
		cfg.NCCL.NVLS = true
		B := 8 * c.bus * float64(c.p) / float64(2*(c.p-1))
		L := (25 + 2*float64(c.levels)*(20.9+refNetLat(2))) * 1e-6
		for _, S := range ncclSizes {
			got := runNCCL(t, ncclCfg(cfg, NCCLNVLSTree, ProtoAuto), OpAllReduce, S)
			checkForm(t, fmt.Sprintf("%d ranks %v", c.p, S), float64(got.Time()), L+float64(S)/B)
			if got.NCCL.Algorithm != NCCLNVLSTree || got.NCCL.Protocol != Simple {
				t.Errorf("%d ranks %v: ran %v/%v, want nvlstree/simple", c.p, S, got.NCCL.Algorithm, got.NCCL.Protocol)
			}
		}
	}
}

// TestNCCLNVLSTreeChoice: which of NCCL's algorithms two NVLS nodes of 8
// ranks take, by hand from tuning.cc. At 1 GiB on NICs of 11.25 GB/s the
// NVLS tree takes 82.8 µs + S/(8·12·16/30 GB/s = 51.2 GB/s) = 21.0 ms
// (TestNCCLNVLSTreeClosedForm) and the Simple tree 108.4 µs +
// S/(0.92·150/2 GB/s) = 15.7 ms: the tree wins. On NICs 8 times faster
// (90 GB/s: bwInter 48 GB/s, a channel's bus min(22.3, 96, 57.7) = 22.3
// GB/s, B = 95.2 GB/s) the NVLS tree takes 11.4 ms and wins over the tree
// (15.7 ms) and the ring (S/(150·16/30 GB/s) = 13.4 ms); at 8 B the LL tree
// (6.8 + 2·(7·0.6 + 5 + 4) = 33.2 µs) wins. Without NVLS on the nodes the
// NVLS tree is never a candidate, and fixing it is an error.
func TestNCCLNVLSTreeChoice(t *testing.T) {
	var s event.Scheduler
	cfg := twoLevel(16, 8, 8, 1)
	cfg.NCCL.NVLS = true
	for _, c := range []struct {
		nic  units.BytesPerSec
		S    units.Bytes
		want NCCLAlgorithm
	}{{nicBW, units.GiB, NCCLTree}, {8 * nicBW, units.GiB, NCCLNVLSTree}, {8 * nicBW, 8, NCCLTree}} {
		cfg.NIC.Bandwidth = c.nic
		topo, err := NewTopology(&s, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if ch, err := topo.NCCLChoose(OpAllReduce, c.S, nil); err != nil || ch.Algorithm != c.want {
			t.Errorf("NIC %v, %v: chose %v/%v (%v), want %v", c.nic, c.S, ch.Algorithm, ch.Protocol, err, c.want)
		}
	}
	cfg.NCCL.NVLS = false
	topo, _ := NewTopology(&s, cfg)
	if ch, _ := topo.NCCLChoose(OpAllReduce, units.GiB, nil); ch.Algorithm == NCCLNVLSTree {
		t.Errorf("no NVLS: chose %v", ch.Algorithm)
	}
	topo, _ = NewTopology(&s, ncclCfg(cfg, NCCLNVLSTree, ProtoAuto))
	if err := topo.AllReduce(NCCL, units.MiB, nil, nil); !errors.Is(err, ErrCollective) {
		t.Errorf("nvlstree without NVLS: %v, want ErrCollective", err)
	}
}

// TestNCCLNetProtocols: a transport that lets NCCL run Simple only between
// nodes (aws-ofi-nccl's NCCL_PROTO=simple on EFA) leaves an all-reduce
// across two nodes of 8 ranks Simple at every size; at 8 B the tree, by
// hand from tuning.cc: 8.4 µs base + 2·(7 hops of 4.0 µs in the node + one
// network hop of 14 µs + 2l) with l = 4 µs the network's own latency
// (1.5 NIC + 0.5 fabric + 2 transport), 8.4 + 2·(28 + 14 + 8) = 108.4 µs;
// the ring would take 8.4 + 28·3.4 + 2·(14 + 8) = 147.6 µs. Inside one node
// the transport does not bind; a fixed protocol (the user's NCCL_PROTO)
// overrides it, as the plugin leaves a set NCCL_PROTO alone; a send/recv
// of 8 B across the nodes runs Simple. A listed LL128 runs between PCIe
// nodes too, where NCCL leaves it off by default: a listed protocol is
// enabled, as NCCL_PROTO enables it.
func TestNCCLNetProtocols(t *testing.T) {
	cfg := twoLevel(16, 8, 8, 1)
	cfg.NCCL.NetProtocols = []Protocol{Simple}
	got := runNCCL(t, cfg, OpAllReduce, 8)
	if d := float64(got.Time())/108.4e-6 - 1; !(math.Abs(d) < 1e-5) {
		t.Errorf("8 B: %v s, want 108.4 µs (its 8 bytes take under a nanosecond)", float64(got.Time()))
	}
	if got.NCCL.Algorithm != NCCLTree || got.NCCL.Protocol != Simple {
		t.Errorf("8 B: ran %v/%v, want tree/simple", got.NCCL.Algorithm, got.NCCL.Protocol)
	}
	for _, S := range ncclSizes {
		if r := runNCCL(t, cfg, OpAllReduce, S); r.NCCL.Protocol != Simple {
			t.Errorf("%v: ran %v/%v, want simple", S, r.NCCL.Algorithm, r.NCCL.Protocol)
		}
	}
	if r := runNCCL(t, ncclCfg(cfg, NCCLRing, Simple), OpAllReduce, 8); math.Abs(float64(r.Time())-147.6e-6) > 0.1e-6 {
		t.Errorf("ring 8 B: %v s, want 147.6 µs", float64(r.Time()))
	}
	if r := runNCCL(t, ncclCfg(cfg, NCCLAuto, LL), OpAllReduce, 8); r.NCCL.Protocol != LL {
		t.Errorf("NCCL_PROTO=ll: ran %v", r.NCCL.Protocol)
	}
	if r := runNCCL(t, cfg, OpSendRecv, 8); r.NCCL.Protocol != Simple {
		t.Errorf("send/recv 8 B: ran %v, want simple", r.NCCL.Protocol)
	}
	pci := twoLevel(16, 8, 8, 1)
	pci.NCCL.IntraPCI, pci.NCCL.NetProtocols = true, []Protocol{LL128}
	if r := runNCCL(t, pci, OpAllReduce, units.MiB); r.NCCL.Protocol != LL128 {
		t.Errorf("PCIe nodes, ll128 listed: ran %v, want ll128", r.NCCL.Protocol)
	}
	node := twoLevel(8, 8, 1, 1)
	node.NCCL.NetProtocols = []Protocol{Simple}
	if r := runNCCL(t, node, OpAllReduce, 8); r.NCCL.Protocol != LL {
		t.Errorf("one node 8 B: ran %v, want ll", r.NCCL.Protocol)
	}
	var s event.Scheduler
	cfg.NCCL.NetProtocols = []Protocol{ProtoAuto}
	if _, err := NewTopology(&s, cfg); !errors.Is(err, ErrConfig) {
		t.Errorf("net protocol auto: %v, want ErrConfig", err)
	}
}

// TestNCCLChannelRamp: on one node of 8 ranks with 12 channels, NCCL runs
// a call on nc = min(12, max(1, ⌊S/(nt·threshold)⌋)) of them (enqueue.cc),
// nt·threshold by hand from device.h and comm.h: 512·8·8 = 32 KiB for the
// ring's LL (its threshold × the 8 ranks), 640·8 = 5 KiB for LL128, 512·64
// = 32 KiB for Simple, 512·8 = 4 KiB for the tree's LL; the payload then
// moves at nc/12 of the bandwidth. Across nodes the count does not bind.
func TestNCCLChannelRamp(t *testing.T) {
	node := twoLevel(8, 8, 1, 1)
	node.NCCL.Channels = 12
	for _, c := range []struct {
		pr Protocol
		i  int
		S  units.Bytes
		nc float64
	}{{LL, 0, 8, 1}, {LL, 0, 64 * units.KiB, 2}, {LL128, 1, 4 * units.KiB, 1}, {Simple, 2, 256 * units.KiB, 8}, {Simple, 2, 3 * units.MiB, 12}} {
		s := float64(c.S)
		got := runNCCL(t, ncclCfg(node, NCCLRing, c.pr), OpAllReduce, c.S)
		want := (refBaseRing[c.i]+14*refNVRing[c.i])*1e-6 + 14.0/8*s*refWire[c.i]*12/c.nc/float64(intraBW)
		checkForm(t, fmt.Sprintf("ring %v %v", c.pr, c.S), float64(got.Time()), want)
	}
	S := 4 * units.KiB
	got := runNCCL(t, ncclCfg(node, NCCLTree, LL), OpAllReduce, S)
	want := (refBaseTree[0]+2*7*refNVTree[0])*1e-6 + chainLoads(8, 1)*float64(S)*refWire[0]*12/refTreeCorr(0, S)/float64(intraBW)
	checkForm(t, "tree LL 4 KiB", float64(got.Time()), want)

	two := twoLevel(16, 8, 8, 1)
	ramp := two
	ramp.NCCL.Channels = 12
	for _, S := range ncclSizes {
		a, b := runNCCL(t, two, OpAllReduce, S), runNCCL(t, ramp, OpAllReduce, S)
		if a.Time() != b.Time() {
			t.Errorf("2 nodes %v: %v s with 12 channels, %v s without", S, b.Time(), a.Time())
		}
	}
	var s event.Scheduler
	node.NCCL.Channels = 65
	if _, err := NewTopology(&s, node); !errors.Is(err, ErrConfig) {
		t.Errorf("65 channels: %v, want ErrConfig", err)
	}
}

// TestNCCLTreeBuffSize: with NCCL_BUFFSIZE b set, a tree call with Simple
// moves chunks of b/NCCL_STEPS, NCCL_STEPS = 8 (NVIDIA/nccl
// src/include/device.h; src/enqueue.cc computeCollChunkInfo, v2.21.5):
// two nodes of 4 ranks with 4 NICs and a port 10^6 times the NIC, 4
// channels of S/4 in C = ⌈S/4/(b/8)⌉ chunks, T → L + (C+1)·(S/4/C)·w/(f·β)
// as in TestNCCLTreeClosedForms. b = 8 MiB (GPUDirect-TCPXO's profile)
// gives 1 MiB chunks: 3 MiB in one chunk (two ticks of 768 KiB) where
// NCCL's default 4 MiB gives two of 384 KiB (three ticks); LL keeps the
// default chunks whatever b.
func TestNCCLTreeBuffSize(t *testing.T) {
	wide := twoLevel(8, 4, 4, 1)
	wide.Intra.Bandwidth = intraBW * 1e6
	for _, tc := range []struct {
		buff  units.Bytes
		i     int // protocol index: 0 LL, 2 Simple
		chunk float64
	}{
		{0, 2, 512 * 1024},
		{8 * units.MiB, 2, 1024 * 1024},
		{32 * units.MiB, 2, 4 * 1024 * 1024},
		{8 * units.MiB, 0, 512 * 1024},
	} {
		cfg := ncclCfg(wide, NCCLTree, refProtocols[tc.i])
		cfg.NCCL.BuffSize = tc.buff
		for _, S := range []units.Bytes{3 * units.MiB, 1 * units.GiB} {
			s := float64(S)
			C := math.Max(1, math.Ceil(s/4/tc.chunk))
			want := (refBaseTree[tc.i]+2*(3*refNVTree[tc.i]+refNetTree[tc.i]+refNetLat(tc.i)))*1e-6 + (C+1)*s/4/C*refWire[tc.i]/refTreeCorr(tc.i, S)/betaNet()
			got := float64(runNCCL(t, cfg, OpAllReduce, S).Time())
			if d := math.Abs(got-want) / want; !(d < 1e-5) {
				t.Errorf("buffer %v, %v, %v: simulated %v s, form %v s (relative error %.2g)", tc.buff, refProtocols[tc.i], S, got, want, d)
			}
		}
	}
	bad := wide
	bad.NCCL.BuffSize = 2 * units.GiB
	var sch event.Scheduler
	if _, err := NewTopology(&sch, bad); !errors.Is(err, ErrConfig) {
		t.Errorf("NCCL buffer size 2 GiB: got %v, want an error wrapping ErrConfig", err)
	}
}

// TestNCCLLLMax: on one node NCCL's tuning model caps the LL protocol's
// bus bandwidth at llMaxBw by architecture (tuning.cc, llMaxBws' first
// column: Volta 39, Ampere 87.7, Hopper 141, Blackwell 282 GB/s), and the
// simulated streams move no faster. One node of 8 ranks, ports of 150
// GB/s (75 GB/s of LL payload):
//   - Volta, ring all-reduce of S = 3 MiB on all 12 channels:
//     T = (6.6 + 14·0.6) µs + 14/8·S/39 GB/s = 15 + 141.2 = 156.2 µs;
//   - Volta, S = 64 KiB: 2 of the 12 channels (64 KiB / (512 threads ·
//     8 B · 8 ranks)), 2/12 of 75 GB/s = 12.5 GB/s, under the cap:
//     T = 15 µs + 14/8·65536/12.5e9 s = 15 + 9.2 = 24.2 µs, uncapped;
//   - Ampere: 87.7 GB/s is above 75, T = 15 µs + 14/8·S/75 GB/s;
//   - Volta, broadcast of 3 MiB: a chain of C = 6 chunks of 512 KiB over
//     7 hops, C + 6 ticks of 0.6 µs + 512 KiB/39 GB/s each, after the base
//     6.6 µs: 6.6 + 12·(0.6 + 13.44) = 175.1 µs;
//   - Volta, tree all-reduce of 3 MiB with ports 10^6 times faster, so
//     that only the cap binds: every stream moves at 39 GB/s of wire
//     bytes, 19.5 of payload, and the C + D − 1 = 6 + 14 − 1 = 19 ticks
//     each move a 512 KiB chunk times w/f = 2/0.6: T = (6.8 + 2·7·0.6) µs
//     plus 19·524288·2/0.6/39e9 s, 15.2 + 851.4 µs; the tuning model's own
//     time is L + S/(min(0.92·B/3.8, 39 GB/s)/2 · 0.6) = 15.2 + 268.9 µs.
func TestNCCLLLMax(t *testing.T) {
	node := twoLevel(8, 8, 1, 1)
	node.NCCL.Channels = 12
	node.NCCL.Arch = Volta
	lat := (refBaseRing[0] + 14*refNVRing[0]) * 1e-6
	for _, c := range []struct {
		arch Arch
		S    units.Bytes
		bus  float64
	}{{Volta, 3 * units.MiB, 39e9}, {Volta, 64 * units.KiB, 12.5e9}, {Ampere, 3 * units.MiB, 75e9}, {ArchUnknown, 3 * units.MiB, 75e9}} {
		cfg := node
		cfg.NCCL.Arch = c.arch
		got := runNCCL(t, ncclCfg(cfg, NCCLRing, LL), OpAllReduce, c.S)
		checkForm(t, fmt.Sprintf("%v ring LL %v", c.arch, c.S), float64(got.Time()), lat+14.0/8*float64(c.S)/c.bus)
	}
	got := runNCCL(t, ncclCfg(node, NCCLRing, LL), OpBroadcast, 3*units.MiB)
	checkForm(t, "Volta broadcast LL 3 MiB", float64(got.Time()), refBaseRing[0]*1e-6+12*(refNVRing[0]*1e-6+524288/39e9))

	fast := node
	fast.NCCL.Channels = 0
	fast.Intra.Bandwidth *= 1e6
	S := 3 * units.MiB
	L := (refBaseTree[0] + 2*7*refNVTree[0]) * 1e-6
	got = runNCCL(t, ncclCfg(fast, NCCLTree, LL), OpAllReduce, S)
	checkForm(t, "Volta tree LL 3 MiB", float64(got.Time()), L+19*524288*2/refTreeCorr(0, S)/39e9)
	var s event.Scheduler
	tp, err := NewTopology(&s, ncclCfg(fast, NCCLTree, LL))
	if err != nil {
		t.Fatal(err)
	}
	ch, err := tp.NCCLChoose(OpAllReduce, S, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkForm(t, "Volta tree LL 3 MiB, tuning model", float64(ch.Predicted), L+float64(S)/(39e9/2*refTreeCorr(0, S)))

	node.NCCL.Arch = Blackwell + 1
	if _, err := NewTopology(&s, node); !errors.Is(err, ErrConfig) {
		t.Errorf("architecture %d: %v, want ErrConfig", int(node.NCCL.Arch), err)
	}
}

// TestParseArch: the architectures' names read back, "" is unknown, and
// any other name is an error naming the choices.
func TestParseArch(t *testing.T) {
	for _, a := range []Arch{ArchUnknown, Volta, Ampere, Hopper, Blackwell} {
		if got, err := ParseArch(a.String()); err != nil || got != a {
			t.Errorf("ParseArch(%q) = %v, %v; want %v", a.String(), got, err, a)
		}
	}
	if _, err := ParseArch("kepler"); err == nil || !errors.Is(err, ErrConfig) {
		t.Errorf("ParseArch(kepler) = %v, want ErrConfig", err)
	}
}
