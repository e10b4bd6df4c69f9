package netsim

import (
	"errors"
	"math"
	"strings"
	"testing"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/event"
)

// uneven is the nodes of 1, 2, 3 and 4 ranks of the PCIe cluster,
// with peer-to-peer links inside each node and nics NICs per node.
func uneven(nics int) Config {
	c := twoLevel(10, 0, nics, 1)
	c.NodeRanks = []int{1, 2, 3, 4}
	return c
}

// TestUnevenNodes: ranks map to nodes 1+2+3+4 in rank order, and a node's
// devices spread over its NICs as j·nics/k.
func TestUnevenNodes(t *testing.T) {
	var s event.Scheduler
	topo, err := NewTopology(&s, uneven(2))
	if err != nil {
		t.Fatal(err)
	}
	wantNode := []int{0, 1, 1, 2, 2, 2, 3, 3, 3, 3}
	wantNIC := []int{0, 0, 1, 0, 0, 1, 0, 0, 1, 1}
	for r := range 10 {
		if got := topo.Node(r); got != wantNode[r] {
			t.Errorf("rank %d on node %d, want %d", r, got, wantNode[r])
		}
		if got := topo.nic(r); got != wantNIC[r] {
			t.Errorf("rank %d on NIC %d, want %d", r, got, wantNIC[r])
		}
	}
	if topo.Nodes() != 4 {
		t.Errorf("%d nodes, want 4", topo.Nodes())
	}
	if first, k := topo.NodeRanks(2); first != 3 || k != 3 {
		t.Errorf("node 2: first rank %d of %d, want 3 of 3", first, k)
	}
	// Equal counts are RanksPerNode: the same topology as twoLevel's.
	c := twoLevel(8, 0, 1, 1)
	c.NodeRanks = []int{4, 4}
	topo, err = NewTopology(&s, c)
	if err != nil {
		t.Fatal(err)
	}
	if got := topo.Config(); got.RanksPerNode != 4 || got.NodeRanks != nil {
		t.Errorf("node ranks [4 4]: ranks per node %d, node ranks %v; want 4, nil", got.RanksPerNode, got.NodeRanks)
	}
}

// TestUnevenRing: a ring over the 10 ranks of nodes 1+2+3+4 crosses
// between nodes on four hops (0→1, 2→3, 5→6, 9→0), one stream out of and
// into every NIC, and inside nodes on the other six, each on its own
// ports. By hand, the slowest hop of every step is a NIC one: alpha_n =
// NIC latency + fabric latency + overhead, beta_n = NIC bandwidth ×
// efficiency (below the intra-node ports), so
//
//	T = 2(p−1)·(alpha_n + S/(p·beta_n)),  p = 10
//
// with one NIC per node, and with 4, where the single-rank node's one
// device caps the channels at 1 (NCCL runs the fewest channels any rank
// has).
func TestUnevenRing(t *testing.T) {
	const p = 10
	alpha := float64(nicLat + fabricLat + overhead)
	beta := float64(nicBW) * eff
	for _, nics := range []int{1, 4} {
		for _, S := range []units.Bytes{1 * units.KiB, 64 * units.MiB} {
			res := runAllReduce(t, uneven(nics), Ring, S, nil)
			want := 2 * (p - 1) * (alpha + float64(S)/p/beta)
			if got := float64(res.Time()); !near(got, want, 1e-9) {
				t.Errorf("%d NICs, %v: ring %v s, want %v s", nics, S, got, want)
			}
		}
	}
	// Reduce-scatter is half of it.
	const S = 64 * units.MiB
	res := runOp(t, uneven(1), func(tp *Topology, done func(*Result)) error { return tp.ReduceScatter(Ring, S, nil, done) })
	if want := (p - 1) * (alpha + float64(S)/p/beta); !near(float64(res.Time()), want, 1e-9) {
		t.Errorf("reduce-scatter %v s, want %v s", float64(res.Time()), want)
	}
}

// TestUnevenHostStaged: without peer-to-peer access, host-staged on nodes
// of 1, 2, 3 and 4 devices takes, by hand, the copies of the busiest host
// (4 devices sharing host memory B_m), its sum ((4+1)·S of host memory)
// and the host ring over the 4 nodes, whose streams cross each host's
// memory twice:
//
//	T = 2·(alpha_p + S/min(B_p, B_m/4)) + 5·S/B_m + 2·3·(alpha_n + S/(4·min(beta_n, B_m/2)))
func TestUnevenHostStaged(t *testing.T) {
	c := uneven(1)
	c.NoPeerToPeer, c.Intra = true, LinkSpec{}
	c.PCIe, c.HostMemory = LinkSpec{pcieBW, pcieLat}, hostBW
	const S = 256 * units.MiB
	x, bm := float64(S), float64(hostBW)
	alpha := float64(nicLat + fabricLat + overhead)
	beta := math.Min(float64(nicBW)*eff, bm/2)
	want := 2*(float64(pcieLat)+x/math.Min(float64(pcieBW), bm/4)) + 5*x/bm + 6*(alpha+x/4/beta)
	res := runAllReduce(t, c, HostStaged, S, nil)
	if got := float64(res.Time()); !near(got, want, 1e-9) {
		t.Errorf("host-staged on 1+2+3+4: %v s, want %v s", got, want)
	}
}

// TestUnevenHierarchical: hierarchical needs k ranks on every node and
// says so, naming two nodes that differ and the algorithms that run.
func TestUnevenHierarchical(t *testing.T) {
	var s event.Scheduler
	topo, err := NewTopology(&s, uneven(1))
	if err != nil {
		t.Fatal(err)
	}
	err = topo.AllReduce(Hierarchical, units.MiB, nil, nil)
	if !errors.Is(err, ErrCollective) || !strings.Contains(err.Error(), "node 0 holds 1 and node 1 holds 2") || !strings.Contains(err.Error(), "use ring") {
		t.Errorf("hierarchical on 1+2+3+4: error %v", err)
	}
	if s.Len() != 0 {
		t.Errorf("the refused request scheduled %d events", s.Len())
	}
}

// TestNodeRanksErrors: every problem with NodeRanks is named.
func TestNodeRanksErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		ranks int
		per   int
		nodes []int
		want  string
	}{
		{"both", 4, 2, []int{1, 3}, "exclusive"},
		{"zero", 4, 0, []int{0, 4}, "node ranks[0] 0 is not in [1,"},
		{"sum", 5, 0, []int{1, 3}, "sum to 4, not ranks 5"},
		{"NICs", 4, 0, []int{1, 3}, "NICs per node 4 exceeds ranks per node 3"},
	} {
		cfg := twoLevel(c.ranks, c.per, 1, 1)
		cfg.NodeRanks = c.nodes
		if c.name == "NICs" {
			cfg.NICsPerNode = 4
		}
		var s event.Scheduler
		_, err := NewTopology(&s, cfg)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one wrapping ErrConfig with %q", c.name, err, c.want)
		}
	}
}
