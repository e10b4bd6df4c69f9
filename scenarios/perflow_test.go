package scenarios

import (
	"slices"
	"testing"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/sim"
)

// TestNetworkPerFlow: a transport's per-flow limit and streams reach the
// simulator's network in bytes/s, and without them the network has none.
func TestNetworkPerFlow(t *testing.T) {
	cat, err := hw.Default()
	if err != nil {
		t.Fatal(err)
	}
	sys := *cat.Systems["tsubame3"]
	sys.Transports = map[string]hw.Transport{"tcp": {Efficiency: 0.94, PerFlow: 10 * units.Gbps, Streams: 4}, "nccl": {Efficiency: 0.8, Scope: hw.ScopeNode}}
	cat.Systems["tcp-cluster"] = &sys
	p := Point{Devices: 8, Nodes: 2, DevicesPerNode: 4}
	var c sim.Config
	if _, _, err := Network(cat, "tcp-cluster", Parallelism{Transport: "tcp"}, &c, p); err != nil {
		t.Fatal(err)
	}
	if c.Network.PerFlow != 10e9/8 || c.Network.Streams != 4 {
		t.Errorf("per flow %v, streams %d; want 1.25 GB/s, 4", c.Network.PerFlow, c.Network.Streams)
	}
	c = sim.Config{}
	if _, _, err := Network(cat, "tsubame3", Parallelism{Transport: "verbs"}, &c, p); err != nil {
		t.Fatal(err)
	}
	if c.Network.PerFlow != 0 || c.Network.Streams != 0 {
		t.Errorf("verbs: per flow %v, streams %d; want none", c.Network.PerFlow, c.Network.Streams)
	}
}

// TestNetworkPCIeTree: a node's PCIe tree reaches the simulator scaled by
// the intra transport's efficiency, with the node's sockets, and a
// simulation of it runs.
func TestNetworkPCIeTree(t *testing.T) {
	cat, err := hw.Default()
	if err != nil {
		t.Fatal(err)
	}
	sys := *cat.Systems["tsubame3"]
	node := *cat.Nodes[sys.Node]
	node.PCIeTree = &hw.PCIeTree{DevicesPerSwitch: 2, Uplink: 16 * units.GBps, InterSocket: 20 * units.GBps}
	cat.Nodes["switched"], sys.Node = &node, "switched"
	cat.Systems["switched"] = &sys
	var c sim.Config
	if _, _, err := Network(cat, "switched", Parallelism{Transport: "verbs", IntraTransport: "nccl"}, &c, Point{Devices: 4, Nodes: 1, DevicesPerNode: 4}); err != nil {
		t.Fatal(err)
	}
	eff := sys.Transports["nccl"].Efficiency
	n := c.Network
	if n.DevicesPerSwitch != 2 || n.Sockets != node.CPU.Sockets || n.SwitchUplink.Bandwidth != units.BytesPerSec(16e9*eff) || n.InterSocket.Bandwidth != units.BytesPerSec(20e9*eff) {
		t.Errorf("tree %d per switch, %d sockets, uplink %v, inter-socket %v", n.DevicesPerSwitch, n.Sockets, n.SwitchUplink.Bandwidth, n.InterSocket.Bandwidth)
	}
	c.Nodes, c.DevicesPerNode = 1, 4
	if _, err := sim.AllReduceTime(c, units.MB); err != nil {
		t.Errorf("all-reduce on the tree: %v", err)
	}
}

// TestNetworkRails: a rail-optimised fabric and its spine's
// oversubscription reach the simulator.
func TestNetworkRails(t *testing.T) {
	cat, err := hw.Default()
	if err != nil {
		t.Fatal(err)
	}
	sys := *cat.Systems["dgx-a100"]
	sys.Fabric.RailOptimized, sys.Fabric.Oversubscription = true, 4
	cat.Systems["railed"] = &sys
	var c sim.Config
	if _, _, err := Network(cat, "railed", Parallelism{Transport: "verbs"}, &c, Point{Devices: 16, Nodes: 2, DevicesPerNode: 8}); err != nil {
		t.Fatal(err)
	}
	if !c.Network.Rails || c.Network.Oversubscription != 4 {
		t.Errorf("rails %v, oversubscription %v; want true, 4", c.Network.Rails, c.Network.Oversubscription)
	}
}

// TestNetworkNCCLProtocols: the protocols a transport lets NCCL run between
// nodes reach the simulator's network (aws-p4de's EFA: Simple only, as
// aws-ofi-nccl sets it), and a transport without them leaves none.
func TestNetworkNCCLProtocols(t *testing.T) {
	cat, err := hw.Default()
	if err != nil {
		t.Fatal(err)
	}
	p := Point{Devices: 16, Nodes: 2, DevicesPerNode: 8}
	for _, c := range []struct {
		sys  string
		want []string
	}{{"aws-p4de", []string{"simple"}}, {"aws-p5", nil}} {
		var cfg sim.Config
		if _, _, err := Network(cat, c.sys, Parallelism{Transport: "verbs"}, &cfg, p); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(cfg.Network.NetProtocols, c.want) {
			t.Errorf("%s: NCCL protocols %q, want %q", c.sys, cfg.Network.NetProtocols, c.want)
		}
	}
}

// TestNetworkNCCLChannels: a device's NCCL channels reach the simulator's
// network on an NVLink node (dgx-a100's A100: 24), and not on a PCIe node,
// for which the catalogue's count does not hold.
func TestNetworkNCCLChannels(t *testing.T) {
	cat, err := hw.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sys  string
		k    int
		want int
	}{{"dgx-a100", 8, 24}, {"aws-g4dn", 4, 0}} {
		var cfg sim.Config
		if _, _, err := Network(cat, c.sys, Parallelism{}, &cfg, Point{Devices: c.k, Nodes: 1, DevicesPerNode: c.k}); err != nil {
			t.Fatal(err)
		}
		if cfg.Network.NCCLChannels != c.want {
			t.Errorf("%s: %d NCCL channels, want %d", c.sys, cfg.Network.NCCLChannels, c.want)
		}
	}
}
