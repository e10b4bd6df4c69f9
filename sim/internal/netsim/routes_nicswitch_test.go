package netsim

import (
	"errors"
	"strings"
	"testing"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/event"
)

// copyEnd runs one transfer of S bytes along each pair's route, all
// started together, and returns when the last one ends.
func copyEnd(t *testing.T, cfg Config, S units.Bytes, pairs ...[2]int) float64 {
	t.Helper()
	var s event.Scheduler
	topo, err := NewTopology(&s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var end units.Seconds
	for _, p := range pairs {
		topo.Network().Transfer(topo.Route(p[0], p[1]), S, func(*Flow) { end = s.Now() })
	}
	s.Run()
	return float64(end)
}

// treeNodes is 2 nodes of 4 devices behind 2 PCIe switches of 2 each, with
// nics NICs per node, nicsPerSwitch of them under each switch (0: on the
// root complex).
func treeNodes(nics, nicsPerSwitch int) Config {
	c := twoLevel(8, 4, nics, 1)
	c.DevicesPerSwitch, c.SwitchUplink = 2, LinkSpec{uplinkBW, uplinkLat}
	c.NICsPerSwitch = nicsPerSwitch
	return c
}

// TestSwitchSharedUplink: devices 0 and 1, under one switch of node 0,
// each send S to their peer of node 1 (devices 4 and 5, under one switch
// there) at once, each through its own NIC (4 NICs a node). By hand:
//
//   - NICs on the root complex: both transfers go up the one uplink U and
//     down the receivers' one uplink, below the NICs (U/2 = 8 GB/s <
//     beta_n = 11.25 GB/s), so T = alpha_u + S/(U/2), alpha_u = port +
//     2·uplink latency + alpha_n;
//   - two NICs under each switch (the DGX A100's layout): each device
//     reaches its own NIC without the uplink (GPUDirect RDMA):
//     T = alpha_n + S/beta_n;
//   - one NIC under each switch, 2 a node (the DGX-1's layout): both use
//     NIC 0 under their switch and share it: T = alpha_n + 2S/beta_n.
func TestSwitchSharedUplink(t *testing.T) {
	const S = 64 * units.MiB
	x, U := float64(S), float64(uplinkBW)
	alphaU := float64(intraLat+2*uplinkLat) + alphaNet()
	for _, c := range []struct {
		name      string
		nics, nps int
		want      float64
	}{
		{"NICs on the root complex", 4, 0, alphaU + x/(U/2)},
		{"2 NICs under each switch", 4, 2, alphaNet() + x/betaNet()},
		{"1 NIC under each switch", 2, 1, alphaNet() + 2*x/betaNet()},
	} {
		got := copyEnd(t, treeNodes(c.nics, c.nps), S, [2]int{0, 4}, [2]int{1, 5})
		if !near(got, c.want, 1e-9) {
			t.Errorf("%s: %v s, want %v s", c.name, got, c.want)
		}
	}
}

// TestNICUnderOtherSwitch: with one NIC a node under switch 0 (a socket
// transport binding one port), device 2 under switch 1 reaches it up its
// own uplink, through host memory and down switch 0's, and device 6 of
// node 1 likewise from its NIC: four uplink crossings, the NIC the
// slowest link (beta_n < U): T = port + 4·uplink latency + alpha_n +
// S/beta_n. Device 0, under the NIC's switch, sends without the uplinks.
func TestNICUnderOtherSwitch(t *testing.T) {
	const S = 64 * units.MiB
	cfg := treeNodes(1, 1)
	want := float64(intraLat+4*uplinkLat) + alphaNet() + float64(S)/betaNet()
	if got := copyEnd(t, cfg, S, [2]int{2, 6}); !near(got, want, 1e-9) {
		t.Errorf("device 2 to 6: %v s, want %v s", got, want)
	}
	if got, want := copyEnd(t, cfg, S, [2]int{0, 4}), alphaNet()+float64(S)/betaNet(); !near(got, want, 1e-9) {
		t.Errorf("device 0 to 4: %v s, want %v s", got, want)
	}
}

// TestIntraBypassesTree: on an NVLink node with a PCIe tree, devices under
// different switches talk over their NVLink ports (T = port latency +
// S/B_i), not through the uplinks (T = port + 2·uplink latency + S/U
// without IntraBypassesTree).
func TestIntraBypassesTree(t *testing.T) {
	const S = 64 * units.MiB
	cfg := treeNodes(2, 1)
	pcie := float64(intraLat+2*uplinkLat) + float64(S)/float64(uplinkBW)
	if got := copyEnd(t, cfg, S, [2]int{0, 2}); !near(got, pcie, 1e-9) {
		t.Errorf("over PCIe: %v s, want %v s", got, pcie)
	}
	cfg.IntraBypassesTree = true
	nvl := float64(intraLat) + float64(S)/float64(intraBW)
	if got := copyEnd(t, cfg, S, [2]int{0, 2}); !near(got, nvl, 1e-9) {
		t.Errorf("over NVLink: %v s, want %v s", got, nvl)
	}
}

// TestNICsPerSwitchError: a negative count is refused with its value.
func TestNICsPerSwitchError(t *testing.T) {
	cfg := treeNodes(2, -1)
	var s event.Scheduler
	_, err := NewTopology(&s, cfg)
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "NICs per switch -1 is not in [0,") {
		t.Errorf("error %v, want one wrapping ErrConfig naming NICs per switch -1", err)
	}
}
