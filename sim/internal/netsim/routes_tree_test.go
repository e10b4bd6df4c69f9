package netsim

import (
	"errors"
	"math"
	"strings"
	"testing"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/event"
)

const (
	uplinkBW  = 16 * units.GBps // a PCIe 4.0 x16 switch uplink, below the intra-node ports
	uplinkLat = 0.5 * units.Microsecond
	qpiBW     = 10 * units.GBps
	qpiLat    = 0.3 * units.Microsecond
)

// switched is one node of 4 devices behind 2 PCIe switches of 2, on
// sockets sockets.
func switched(sockets int) Config {
	c := twoLevel(4, 4, 1, 1)
	c.DevicesPerSwitch, c.SwitchUplink, c.Sockets = 2, LinkSpec{uplinkBW, uplinkLat}, sockets
	c.InterSocket = LinkSpec{qpiBW, qpiLat}
	return c
}

// TestPCIeTreeRing: on a 4-GPU node with 2 switches of 2, by hand:
//
//   - ring 0,1,2,3 crosses between switches on hops 1→2 and 3→0, one
//     stream on each uplink each way, so every step moves at
//     min(B_i, U) = U and waits the crossing's latency alpha =
//     intra + 2·uplink: T = 2(p−1)·(alpha + S/(p·U));
//   - ring 0,2,1,3 crosses on all four hops, two streams on each uplink
//     each way: T = 2(p−1)·(alpha + S/(p·U/2));
//   - with the switches on 2 sockets, ring 0,1,2,3's two crossings also
//     cross the inter-socket link, one each way, slower than the uplink:
//     T = 2(p−1)·(alpha + qpi latency + S/(p·Q)).
func TestPCIeTreeRing(t *testing.T) {
	const S = 64 * units.MiB
	const p = 4
	x := float64(S)
	alpha := float64(intraLat + 2*uplinkLat)
	U, Q := float64(uplinkBW), float64(qpiBW)
	for _, c := range []struct {
		name    string
		sockets int
		ranks   []int
		want    float64
	}{
		{"0,1,2,3", 1, []int{0, 1, 2, 3}, ringForm(p, x, alpha, U)},
		{"0,2,1,3", 1, []int{0, 2, 1, 3}, ringForm(p, x, alpha, U/2)},
		{"0,1,2,3 on 2 sockets", 2, []int{0, 1, 2, 3}, ringForm(p, x, alpha+float64(qpiLat), Q)},
		{"0,2,1,3 on 2 sockets", 2, []int{0, 2, 1, 3}, ringForm(p, x, alpha+float64(qpiLat), math.Min(U/2, Q/2))},
	} {
		res := runAllReduce(t, switched(c.sockets), Ring, S, c.ranks)
		if got := float64(res.Time()); !near(got, c.want, 1e-9) {
			t.Errorf("ring %s: %v s, want %v s", c.name, got, c.want)
		}
	}
	// Two devices under one switch talk peer-to-peer, uplinks untouched.
	res := runAllReduce(t, switched(2), Ring, S, []int{0, 1})
	if want := ringForm(2, x, float64(intraLat), float64(intraBW)); !near(float64(res.Time()), want, 1e-9) {
		t.Errorf("under one switch: %v s, want %v s", float64(res.Time()), want)
	}
}

// TestPCIeTreeNIC: between 2 nodes of 4 on 2 switches, the ring's two
// hops between nodes (3→4, 7→0) and two between switches (1→2, 5→6) each
// cross one uplink each way, staged through host memory: with host memory
// H, each node's is crossed twice by each of its three staged routes
// (two of them between nodes, one inside), so every step moves at
// min(U, beta_n, H/6), and waits the hop between nodes:
//
//	alpha = intra + 2·uplink + NIC + fabric + overhead
func TestPCIeTreeNIC(t *testing.T) {
	const S = 64 * units.MiB
	c := twoLevel(8, 4, 1, 1)
	c.DevicesPerSwitch, c.SwitchUplink = 2, LinkSpec{uplinkBW, uplinkLat}
	for _, host := range []units.BytesPerSec{0, 60 * units.GBps} {
		c.HostMemory = host
		beta := math.Min(float64(uplinkBW), betaNet())
		if host > 0 {
			beta = math.Min(beta, float64(host)/6)
		}
		alpha := float64(intraLat+2*uplinkLat) + alphaNet()
		res := runAllReduce(t, c, Ring, S, nil)
		if want := ringForm(8, float64(S), alpha, beta); !near(float64(res.Time()), want, 1e-9) {
			t.Errorf("host memory %v: %v s, want %v s", host, float64(res.Time()), want)
		}
	}
}

// TestPCIeTreeErrors: the tree's fields are checked and named.
func TestPCIeTreeErrors(t *testing.T) {
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.SwitchUplink.Bandwidth = 0 }, "devices per switch 2 needs a switch uplink bandwidth"},
		{func(c *Config) { c.InterSocket.Bandwidth = 0 }, "2 sockets need an inter-socket bandwidth"},
		{func(c *Config) { c.Sockets = MaxSockets + 1 }, "sockets 9 is not in [1, 8]"},
		{func(c *Config) { c.DevicesPerSwitch = -1 }, "devices per switch -1 is not in [0,"},
		{func(c *Config) { c.NoPeerToPeer, c.PCIe, c.HostMemory = true, LinkSpec{Bandwidth: 1e9}, 1e9 }, "needs peer-to-peer access"},
	} {
		cfg := switched(2)
		c.edit(&cfg)
		var s event.Scheduler
		_, err := NewTopology(&s, cfg)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one wrapping ErrConfig with %q", err, c.want)
		}
	}
}
