package sim

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"scaleplan/internal/units"
)

// uneven is data parallelism on nodes of 1, 2, 3 and 4 devices: PCIe-class
// peer-to-peer links inside a node, one 50 Gbit/s NIC per node.
func uneven() Config {
	const grad = 100 * units.MB
	return Config{Placement: []int{1, 2, 3, 4}, MicroBatch: 32, Compute: Compute{PerSample: 5e-3},
		Memory: Memory{Gradients: grad}, Comm: Comm{Algorithm: Ring, NoOverlap: true},
		Network: Network{Intra: Link{Bandwidth: 12 * units.GBps, Latency: 2e-6},
			NIC: Link{Bandwidth: 50e9 / 8, Latency: 5e-6}, Efficiency: 0.9, Overhead: 20e-6}}
}

// TestPlacementRing: a ring all-reduce over the 10 devices of nodes
// 1+2+3+4 is limited on every step by its four hops between nodes, one
// per NIC each way (by hand: the intra-node hops are faster), so
//
//	T = 2(p−1)·(alpha_n + S/(p·beta_n)),  p = 10,
//
// alpha_n = NIC latency + overhead, beta_n = NIC bandwidth × efficiency.
// AllReduceTime gives it, and Run exposes it whole after the backward
// pass without overlap.
func TestPlacementRing(t *testing.T) {
	c := uneven()
	const p = 10
	alpha, beta := 5e-6+20e-6, 50e9/8*0.9
	S := float64(c.Memory.Gradients)
	want := 2 * (p - 1) * (alpha + S/p/beta)
	got, err := AllReduceTime(c, c.Memory.Gradients)
	if err != nil {
		t.Fatal(err)
	}
	if !near(float64(got), want, 1e-9) {
		t.Errorf("AllReduceTime on 1+2+3+4: %v s, want %v s", float64(got), want)
	}
	res := runChecked(t, c)
	if res.Devices != p || res.Nodes != 4 || !slices.Equal(res.Placement, []int{1, 2, 3, 4}) {
		t.Errorf("result: %d devices on %d nodes, placement %v; want 10 on 4, [1 2 3 4]", res.Devices, res.Nodes, res.Placement)
	}
	if !near(float64(res.Breakdown.Comm), want, 1e-9) {
		t.Errorf("exposed communication %v s, want the all-reduce's %v s", float64(res.Breakdown.Comm), want)
	}
}

// TestPlacementEven: a placement of equal counts is Nodes ×
// DevicesPerNode, bit for bit, and reports no placement.
func TestPlacementEven(t *testing.T) {
	a := uneven()
	a.Placement = []int{4, 4}
	b := uneven()
	b.Placement, b.Nodes, b.DevicesPerNode = nil, 2, 4
	ra, rb := runChecked(t, a), runChecked(t, b)
	if ra.StepTime != rb.StepTime || ra.Placement != nil || ra.Nodes != 2 {
		t.Errorf("placement [4 4]: step %v, nodes %d, placement %v; 2 nodes of 4: step %v", ra.StepTime, ra.Nodes, ra.Placement, rb.StepTime)
	}
}

// TestPlacementPipeline: pipeline stages on consecutive devices over
// uneven nodes: with 2 stages on nodes 1+3, devices 0 and 1 (nodes 0
// and 1) form one replica, so its boundary crosses the NIC.
func TestPlacementPipeline(t *testing.T) {
	c := uneven()
	c.Placement, c.Stages, c.Accumulation, c.Comm.Boundary = []int{1, 3}, 2, 4, units.MB
	c.Comm.NoOverlap = false
	res := runChecked(t, c)
	if res.Replicas != 2 || res.Devices != 4 {
		t.Errorf("%d replicas of %d devices, want 2 of 4", res.Replicas, res.Devices)
	}
}

// TestPlacementErrors: a bad placement is named with its index and the
// valid range, and hierarchical refuses uneven nodes.
func TestPlacementErrors(t *testing.T) {
	c := uneven()
	c.Placement = []int{2, 0, 3}
	if _, err := Run(c); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "placement[1] 0 devices is not in [1,") {
		t.Errorf("placement with a 0: %v", err)
	}
	c = uneven()
	c.Comm.Algorithm = Hierarchical
	if _, err := AllReduceTime(c, units.MB); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "hierarchical needs as many") {
		t.Errorf("hierarchical on 1+2+3+4: %v", err)
	}
}

// TestPerFlow: with one 10 Gbit/s stream per transfer between nodes, the
// ring over 1+2+3+4 moves at that stream's rate instead of the NIC's
// (45 Gbit/s after efficiency): T = 2(p−1)·(alpha_n + S/(p·perFlow)); with
// 8 streams the NIC bounds it again. Streams outside [1, 64] are refused.
func TestPerFlow(t *testing.T) {
	c := uneven()
	const p = 10
	alpha := 5e-6 + 20e-6
	S := float64(c.Memory.Gradients)
	for _, tc := range []struct {
		streams int
		beta    float64
	}{{1, 10e9 / 8}, {8, 50e9 / 8 * 0.9}} {
		c.Network.PerFlow, c.Network.Streams = 10e9/8, tc.streams
		got, err := AllReduceTime(c, c.Memory.Gradients)
		if err != nil {
			t.Fatal(err)
		}
		if want := 2 * (p - 1) * (alpha + S/p/tc.beta); !near(float64(got), want, 1e-9) {
			t.Errorf("%d streams: %v s, want %v s", tc.streams, float64(got), want)
		}
	}
	c.Network.Streams = 65
	if _, err := AllReduceTime(c, units.MB); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "streams 65 is not in [1, 64]") {
		t.Errorf("65 streams: %v", err)
	}
}

// TestNetProtocols: the NCCL exchange over 2 nodes of 2 devices whose
// transport lets NCCL run Simple only between nodes takes, at 8 B, the
// Simple tree's tuning.cc latency, by hand 8.4 µs + 2·(1 hop of 4.0 µs in
// the node + one network hop of 14 µs + 2·25 µs, the NIC's latency and the
// transport's overhead, twice for Simple) = 144.4 µs (the Simple ring's
// 8.4 + 4·3.4 + 2·64 = 150 µs is slower); without the restriction the LL
// ring's 6.6 + 4·1.0 + 2·(2.7 + 25) = 66 µs. A name that is not a protocol
// and a channel count beyond NCCL's 64 are refused.
func TestNetProtocols(t *testing.T) {
	c := uneven()
	c.Placement, c.Nodes, c.DevicesPerNode = nil, 2, 2
	c.Comm.Algorithm = NCCL
	for _, tc := range []struct {
		protos []string
		want   float64
	}{{[]string{"simple"}, 144.4e-6}, {nil, 66e-6}} {
		c.Network.NetProtocols = tc.protos
		got, err := CollectiveTime(c, OpAllReduce, 8)
		if err != nil {
			t.Fatal(err)
		}
		if !near(float64(got), tc.want, 1e-4) {
			t.Errorf("protocols %q: %v s, want %v s", tc.protos, float64(got), tc.want)
		}
	}
	c.Network.NetProtocols, c.Network.NCCLChannels = nil, 65
	if _, err := CollectiveTime(c, OpAllReduce, 8); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "NCCL channels 65 is not in [0, 64]") {
		t.Errorf("65 channels: %v", err)
	}
	c.Network.NCCLChannels, c.Network.NCCLBuffSize = 0, -1
	if _, err := CollectiveTime(c, OpAllReduce, 8); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "NCCL buffer size -1 is not in [0, 1 GiB]") {
		t.Errorf("buffer -1 B: %v", err)
	}
	c.Network.NCCLBuffSize = 0
	c.Network.NetProtocols, c.Network.NCCLArch = nil, "kepler"
	if _, err := CollectiveTime(c, OpAllReduce, 8); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), `NCCL architecture "kepler": want volta, ampere, hopper, blackwell`) {
		t.Errorf("architecture kepler: %v", err)
	}
	c.Network.NCCLArch = ""
	c.Network.NetProtocols, c.Network.NCCLChannels = []string{"fast"}, 0
	if _, err := CollectiveTime(c, OpAllReduce, 8); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), `NCCL net protocol 0 "fast"`) {
		t.Errorf("protocol fast: %v", err)
	}
}
