package sim_test

import (
	"math"
	"testing"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// shipped returns the simulator's network for two nodes of k devices of
// the catalogue's system under transport verbs and NCCL inside nodes.
func shipped(t *testing.T, system string, k int) sim.Config {
	t.Helper()
	cat, err := hw.Default()
	if err != nil {
		t.Fatal(err)
	}
	var c sim.Config
	c.Comm.Algorithm = sim.Ring
	if _, _, err := scenarios.Network(cat, system, scenarios.Parallelism{Transport: "verbs", IntraTransport: "nccl"}, &c, scenarios.Point{Devices: 2 * k, Nodes: 2, DevicesPerNode: k}); err != nil {
		t.Fatal(err)
	}
	c.Nodes, c.DevicesPerNode = 2, k
	return c
}

// TestShippedTreeRoutes: the shipped PCIe trees route as their sources
// describe, by closed forms for transfers of S started together, with
// alpha_n the NIC, fabric and verbs latencies and beta_n a NIC's rate
// under verbs:
//
//   - DGX-1 (two V100s and one EDR NIC under each switch): devices 0 and 1
//     share NIC 0 to node 1, T = alpha_n + 2S/beta_n; devices 0 and 2 use
//     NICs 0 and 1, T = alpha_n + S/beta_n; devices 0 and 2 of one node,
//     under different switches, talk over NVLink, not through the switch
//     uplinks: T = latency_i + S/B_i;
//   - DGX A100 (two A100s and two HDR NICs under each switch): devices 0
//     and 1 each reach their own NIC, T = alpha_n + S/beta_n;
//   - nodes using fewer devices use the NICs under their devices'
//     switches, as NCCL takes each GPU's nearest NIC: two devices of a
//     DGX-1 (under switch 0) share its one NIC, T = alpha_n + 2S/beta_n;
//     two of a DGX A100 have a NIC each, T = alpha_n + S/beta_n; one
//     device of a DGX A100 has both NICs of its switch, beta_n twice a
//     port's rate.
func TestShippedTreeRoutes(t *testing.T) {
	const S = 256 * units.MiB
	x := float64(S)
	for _, c := range []struct {
		system string
		k      int
		pairs  [][2]int
		nicSh  float64 // transfers sharing one NIC
		intra  bool
		ports  float64 // fabric ports merged into each device's NIC
		port   float64 // bits/s of one: the DGX-1's EDR, the DGX A100's HDR (datasheets)
	}{
		{"dgx1", 8, [][2]int{{0, 8}, {1, 9}}, 2, false, 1, 100e9},
		{"dgx1", 8, [][2]int{{0, 8}, {2, 10}}, 1, false, 1, 100e9},
		{"dgx1", 8, [][2]int{{0, 2}}, 0, true, 1, 100e9},
		{"dgx-a100", 8, [][2]int{{0, 8}, {1, 9}}, 1, false, 1, 200e9},
		{"dgx1", 2, [][2]int{{0, 2}, {1, 3}}, 2, false, 1, 100e9},
		{"dgx-a100", 2, [][2]int{{0, 2}, {1, 3}}, 1, false, 1, 200e9},
		{"dgx-a100", 1, [][2]int{{0, 1}}, 1, false, 2, 200e9},
	} {
		cfg := shipped(t, c.system, c.k)
		n := cfg.Network
		if n.DevicesPerSwitch != 2 || !n.IntraBypassesTree {
			t.Fatalf("%s: %d devices per switch, intra beside the tree %v; want 2 and true", c.system, n.DevicesPerSwitch, n.IntraBypassesTree)
		}
		var want float64
		if c.intra {
			want = float64(n.Intra.Latency) + x/float64(n.Intra.Bandwidth)
		} else {
			alpha := float64(n.NIC.Latency + n.FabricLatency + n.Overhead)
			beta := float64(n.NIC.Bandwidth) * n.Efficiency
			if w := c.ports * c.port / 8 * n.Efficiency; math.Abs(beta-w) > 1e-9*w {
				t.Errorf("%s with %d devices a node: NIC rate %v B/s, want %v ports' %v", c.system, c.k, beta, c.ports, w)
			}
			want = alpha + c.nicSh*x/beta
		}
		got, err := sim.TransferTime(cfg, S, c.pairs...)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(float64(got)-want) > 1e-9*want {
			t.Errorf("%s %v: %v s, want %v s", c.system, c.pairs, float64(got), want)
		}
	}
}
