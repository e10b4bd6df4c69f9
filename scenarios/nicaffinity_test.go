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
		if _, _, err := Network(cat, "dgx-h100", Parallelism{}, &c, p); err != nil {
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
		if _, _, err := Network(cat, "dgx-h100", Parallelism{}, &c, p); err != nil {
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
	if _, _, err := Network(cat, "dgx-h100", Parallelism{}, &c, p); err != nil {
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

// TestDeviceLocalNICsCatalogue checks, for each catalogue node whose NICs
// are marked device-local, the NICs a job on 1, 2, 4 and 8 of its GPUs
// uses against the pairing its source states (cited in hw/catalog/
// nodes.yaml):
//   - dgx-h100, dgx-h200: one 400 Gbit/s ConnectX-7 a GPU (DGX H100/H200
//     user guide, table 6): k GPUs, k NICs of 50 GB/s;
//   - aws-p5: four 100 Gbit/s EFA NICs under each GPU's PCIe switch
//     (aws-ofi-nccl topology/p5.48xl-topo.xml): k GPUs, 4k ports, merged
//     into k NICs of 4 × 12.5 GB/s;
//   - aws-p4de: one 100 Gbit/s EFA NIC under each PCIe switch of two GPUs
//     (aws-ofi-nccl topology/p4de-24xl-topo.xml): GPUs 0 and 1 share NIC
//     0, so 1 or 2 GPUs use 1 NIC, 4 use 2 and 8 use 4, of 12.5 GB/s;
//   - azure-nd-a100-v4: one 200 Gbit/s HDR InfiniBand connection a GPU
//     (Azure NDm A100 v4 series page): k GPUs, k NICs of 25 GB/s.
func TestDeviceLocalNICsCatalogue(t *testing.T) {
	cat, err := hw.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		system string
		nics   [4]int // for 1, 2, 4, 8 GPUs a node
		rate   float64
	}{
		{"dgx-h100", [4]int{1, 2, 4, 8}, 50e9},
		{"dgx-h200", [4]int{1, 2, 4, 8}, 50e9},
		{"aws-p5", [4]int{1, 2, 4, 8}, 4 * 12.5e9},
		{"aws-p4de", [4]int{1, 1, 2, 4}, 12.5e9},
		{"azure-nd-a100-v4", [4]int{1, 2, 4, 8}, 25e9},
	} {
		for i, k := range []int{1, 2, 4, 8} {
			p := Point{Devices: 2 * k, Nodes: 2, DevicesPerNode: k, Replicas: 2 * k, BatchPerDevice: 1, GlobalBatch: 2 * k}
			c := sim.Config{Nodes: 2, DevicesPerNode: k}
			if _, _, err := Network(cat, tc.system, Parallelism{}, &c, p); err != nil {
				t.Fatalf("%s: %v", tc.system, err)
			}
			if got := float64(c.Network.NIC.Bandwidth); c.Network.NICs != tc.nics[i] || math.Abs(got/tc.rate-1) > 1e-9 {
				t.Errorf("%s, %d GPUs a node: %d NICs of %v B/s, want %d of %v", tc.system, k, c.Network.NICs, got, tc.nics[i], tc.rate)
			}
		}
	}
}
