package scenarios

import (
	"math"
	"testing"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/sim"
)

// TestDeviceLocalNICs: a DGX H100 pairs each of its eight compute
// ConnectX-7 with one GPU (user guide, table 6; hw.NIC.DeviceLocal), so a
// job using d of a node's 8 GPUs gets d NICs of 400 Gbit/s (50 GB/s), not
// the node's eight merged into d. A large ring all-reduce over 2 nodes of
// 2 GPUs then runs 2 channels, one a NIC, and its NICs bound it:
//
//	T ≈ 2(p−1)/p · S/(c·β),  p = 4, c = 2, β = 50 GB/s × the transport's efficiency
//
// where the same node with NICs not local to its GPUs gives the two
// channels the bandwidth of four NICs each.
func TestDeviceLocalNICs(t *testing.T) {
	cat, err := hw.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		perNode, nics int
	}{{1, 1}, {2, 2}, {3, 3}, {4, 4}, {8, 8}} {
		p := Point{Devices: 2 * tc.perNode, Nodes: 2, DevicesPerNode: tc.perNode, Replicas: 2 * tc.perNode, BatchPerDevice: 1, GlobalBatch: 2 * tc.perNode}
		c := sim.Config{Nodes: 2, DevicesPerNode: tc.perNode}
		if _, _, err := Network(cat, "dgx-h100", "", "", &c, p); err != nil {
			t.Fatal(err)
		}
		if c.Network.NICs != tc.nics || c.Network.NIC.Bandwidth != 50e9 {
			t.Errorf("%d GPUs a node: %d NICs of %v B/s, want %d of 50e9", tc.perNode, c.Network.NICs, float64(c.Network.NIC.Bandwidth), tc.nics)
		}
	}
	const S = 8 * units.GiB
	ring := func(local bool) (float64, float64) {
		node := *cat.Nodes["dgx-h100"]
		node.NICs = append([]hw.NIC(nil), node.NICs...)
		for i := range node.NICs {
			node.NICs[i].DeviceLocal = local
		}
		cat.Nodes["dgx-h100"] = &node
		p := Point{Devices: 4, Nodes: 2, DevicesPerNode: 2, Replicas: 4, BatchPerDevice: 1, GlobalBatch: 4}
		c := sim.Config{Nodes: 2, DevicesPerNode: 2, Comm: sim.Comm{Algorithm: sim.Ring}}
		if _, _, err := Network(cat, "dgx-h100", "", "", &c, p); err != nil {
			t.Fatal(err)
		}
		got, err := sim.AllReduceTime(c, S)
		if err != nil {
			t.Fatal(err)
		}
		return float64(got), c.Network.Efficiency
	}
	got, eff := ring(true)
	if want := 1.5 * float64(S) / (2 * 50e9 * eff); math.Abs(got/want-1) > 0.01 {
		t.Errorf("2 nodes of 2 local NICs: ring all-reduce of %v %v s, want %v s (2 NICs' rate)", S, got, want)
	}
	all, _ := ring(false)
	if want := 1.5 * float64(S) / (8 * 50e9 * eff); math.Abs(all/want-1) > 0.01 {
		t.Errorf("2 nodes of 2 GPUs, every NIC: %v s, want %v s (8 NICs' rate)", all, want)
	}
}

// TestDeviceLocalNICsUneven: a placement of 1 and 2 DGX H100 GPUs gives
// each node its own devices' NICs, so one ring (the fewest ranks a node
// holds) crosses each way through one 50 GB/s NIC: 2(p−1) steps of S/p,
// p = 3, T ≈ 4S/(3β).
func TestDeviceLocalNICsUneven(t *testing.T) {
	cat, err := hw.Load()
	if err != nil {
		t.Fatal(err)
	}
	p := Point{Devices: 3, Nodes: 2, DevicesPerNode: 2, Replicas: 3, BatchPerDevice: 1, GlobalBatch: 3}
	c := sim.Config{Nodes: 2, DevicesPerNode: 2, Placement: []int{1, 2}, Comm: sim.Comm{Algorithm: sim.Ring}}
	if _, _, err := Network(cat, "dgx-h100", "", "", &c, p); err != nil {
		t.Fatal(err)
	}
	const S = 8 * units.GiB
	got, err := sim.AllReduceTime(c, S)
	if err != nil {
		t.Fatal(err)
	}
	want := 4 * float64(S) / (3 * 50e9 * c.Network.Efficiency)
	if c.Network.NICs != 2 || math.Abs(float64(got)/want-1) > 0.01 {
		t.Errorf("placement 1+2: %d NICs, ring all-reduce of %v %v s, want 2 NICs and %v s", c.Network.NICs, S, float64(got), want)
	}
}
