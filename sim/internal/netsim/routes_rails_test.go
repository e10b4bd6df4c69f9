package netsim

import (
	"testing"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/event"
)

// TestRails: 2 nodes of 2 ranks with 2 NICs each (rank j of a node on NIC
// j) run 2 rings of S/2. In the order 0,1,3,2 every hop between nodes
// joins NICs of the same index (1→3 and 2→0, and in the turned ring 0→2
// and 3→1), so on a rail-optimised fabric it never touches the spine and
// takes, whatever the spine's oversubscription o,
//
//	T = 2(p−1)·(alpha_n + S/(2·p·beta_n))
//
// In the order 0,1,2,3 every hop between nodes changes rail, the four
// streams share the spine of 4·beta_n/o, and beta becomes beta_n/o: the
// ring is slowed by the ratio. A single core (no rails) slows both.
func TestRails(t *testing.T) {
	const S = 64 * units.MiB
	x, a, b := float64(S), alphaNet(), betaNet()
	for _, o := range []float64{1, 2, 4} {
		for _, c := range []struct {
			name  string
			rails bool
			ranks []int
			beta  float64
		}{
			{"rails, on rails", true, []int{0, 1, 3, 2}, b},
			{"rails, across", true, []int{0, 1, 2, 3}, b / o},
			{"core, 0,1,3,2", false, []int{0, 1, 3, 2}, b / o},
		} {
			cfg := twoLevel(4, 2, 2, o)
			cfg.Rails = c.rails
			res := runAllReduce(t, cfg, Ring, S, c.ranks)
			if want := ringForm(4, x/2, a, c.beta); !near(float64(res.Time()), want, 1e-9) {
				t.Errorf("oversubscription %v, %s: %v s, want %v s", o, c.name, float64(res.Time()), want)
			}
		}
	}
}

// TestRailLinks: a rail-optimised fabric has a leaf per rail, of the
// rail's NICs together, and a spine of all NICs over the
// oversubscription; a transfer on one rail crosses its leaf only.
func TestRailLinks(t *testing.T) {
	cfg := twoLevel(8, 4, 2, 2)
	cfg.Rails = true
	var s event.Scheduler
	topo, err := NewTopology(&s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	nic := float64(nicBW) * eff
	if l := topo.Rail(1); l == nil || !near(float64(l.Bandwidth()), 2*nic, 1e-12) || l.Latency() != fabricLat {
		t.Errorf("rail 1 leaf %v, want %v B/s and %v latency", l, 2*nic, fabricLat)
	}
	if l := topo.Core(); !near(float64(l.Bandwidth()), 4*nic/2, 1e-12) || l.Name() != "spine" {
		t.Errorf("spine %s %v B/s, want %v", l.Name(), l.Bandwidth(), 4*nic/2)
	}
	// Rank 2 of node 0 and rank 6 of node 1 are both on NIC 1.
	for _, u := range topo.Route(2, 6).Uses() {
		if u.Link == topo.Core() {
			t.Errorf("a transfer on rail 1 crosses the spine")
		}
	}
	if topo.Rail(0) == nil || topo.Rail(0) == topo.Rail(1) {
		t.Errorf("rails 0 and 1 share a leaf")
	}
	plain, _ := NewTopology(&s, twoLevel(8, 4, 2, 2))
	if plain.Rail(0) != nil {
		t.Errorf("a fabric without rails has a rail leaf")
	}
}
