package netsim

import (
	"testing"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/event"
)

// TestRoutes: a flow group of point-to-point transfers on symmetric routes
// ends when the same transfers as separate flows do, whether they share a
// NIC or not, and a link crossed by k routes has weight k.
func TestRoutes(t *testing.T) {
	const S = 32 * units.MiB
	src, dst := []int{0, 1, 2, 3}, []int{4, 5, 6, 7}
	for _, nics := range []int{1, 2, 4} {
		end := func(group bool) units.Seconds {
			var s event.Scheduler
			topo, err := NewTopology(&s, twoLevel(8, 4, nics, 1))
			if err != nil {
				t.Fatal(err)
			}
			var e units.Seconds
			if group {
				p := topo.Routes(src, dst)
				for _, u := range p.Uses() {
					if u.Link == topo.Core() && u.Weight != 4 {
						t.Errorf("core weight %d, want 4", u.Weight)
					}
				}
				topo.Network().Transfer(p, S, func(*Flow) { e = s.Now() })
			} else {
				for i := range src {
					topo.Network().Transfer(topo.Route(src[i], dst[i]), S, func(*Flow) { e = s.Now() })
				}
			}
			s.Run()
			return e
		}
		if g, f := end(true), end(false); !near(float64(g), float64(f), 1e-12) {
			t.Errorf("%d NICs: the group ends at %v, separate flows at %v", nics, g, f)
		}
	}
	var s event.Scheduler
	topo, _ := NewTopology(&s, twoLevel(8, 4, 1, 1))
	defer func() {
		if r := recover(); r != badPairs {
			t.Errorf("Routes with 2 sources and 1 destination: panic %v, want %q", r, badPairs)
		}
	}()
	topo.Routes([]int{0, 1}, []int{2})
}
