package netsim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/event"
)

// refRates is the serial reference for the rates of the moving flows: the
// whole network's sharing computed from scratch, as the network did before
// it recomputed rates incrementally. Under MaxMin it is progressive
// filling in rounds over every link (all rates rise by the smallest
// remaining capacity over weight, or by what takes a flow to its path's
// limit; flows crossing a full link or at their limit freeze); under
// EqualShare each flow gets the minimum over its links of bandwidth over
// total weight, and its limit.
func refRates(links []*Link, flows []*Flow, sharing Sharing) []float64 {
	rem := make([]float64, len(links))
	wsum := make([]float64, len(links))
	for _, l := range links {
		rem[l.id] = l.bw
	}
	for _, f := range flows {
		for _, u := range f.path.uses {
			wsum[u.Link.id] += float64(u.Weight)
		}
	}
	rate := make([]float64, len(flows))
	if sharing == EqualShare {
		for i, f := range flows {
			rate[i] = f.path.limit
			for _, u := range f.path.uses {
				rate[i] = min(rate[i], u.Link.bw/wsum[u.Link.id])
			}
		}
		return rate
	}
	frozen := make([]bool, len(flows))
	for left := len(flows); left > 0; {
		inc := math.Inf(1)
		for id, w := range wsum {
			if w > 0 {
				inc = min(inc, rem[id]/w)
			}
		}
		for i, f := range flows {
			if !frozen[i] {
				inc = min(inc, f.path.limit-rate[i])
			}
		}
		for id, w := range wsum {
			if w > 0 {
				if rem[id]/w == inc {
					rem[id] = 0
				} else if rem[id] -= float64(inc * w); rem[id] <= saturated*links[id].bw {
					rem[id] = 0
				}
			}
		}
		for i, f := range flows {
			if frozen[i] {
				continue
			}
			rate[i] += inc
			if rate[i] >= f.path.limit*(1-saturated) {
				rate[i], frozen[i] = min(rate[i], f.path.limit), true
			}
			for _, u := range f.path.uses {
				frozen[i] = frozen[i] || rem[u.Link.id] == 0
			}
			if frozen[i] {
				left--
				for _, u := range f.path.uses {
					wsum[u.Link.id] -= float64(u.Weight)
				}
			}
		}
	}
	return rate
}

// clusteredNetwork builds nc clusters of 4 links of 1 to 100 GB/s joined
// by a core whose bandwidth is the sum of the clusters' first links times
// scale, and starts nflows flows over 1 ms: most inside one cluster, one
// in eight through the core to another cluster, most of them groups of up
// to 4 routes, one in six of 12 routes each through two links of its own
// (a path of claimMin links or more, claimed). One path in four has a
// stream limit, of 0.2 to 20 GB/s, on one of its routes, so that some
// flows freeze below what their links leave them and others take up the
// rest. The core binds or not depending on scale, so components merge
// through it and split again.
func clusteredNetwork(s *event.Scheduler, rng *rand.Rand, nc, nflows int, scale float64) *Network {
	n := NewNetwork(s)
	var cl [][]*Link
	total := 0.0
	for i := range nc {
		var c []*Link
		for j := range 4 {
			c = append(c, n.AddLink(fmt.Sprintf("c%d.%d", i, j), units.BytesPerSec(1e9*(1+99*rng.Float64())), units.Seconds(1e-6*rng.Float64())))
		}
		total += c[0].bw
		cl = append(cl, c)
	}
	core := n.AddLink("core", units.BytesPerSec(total*scale), 1e-6)
	for i := range nflows {
		b := n.NewPathBuilder()
		routes, lanes := 1+rng.IntN(4), 0
		if rng.IntN(6) == 0 {
			// A flow group over many clusters, each route through two
			// links of its own as a ring step through its ranks' ports:
			// claimed, its shared links turning hot and cold.
			routes, lanes = 12, 2
		}
		limited := rng.IntN(4) == 0
		for r := range routes {
			a := cl[rng.IntN(nc)]
			route := []*Link{a[rng.IntN(4)], a[rng.IntN(4)]}
			if rng.IntN(8) == 0 {
				route = append(route, a[0], core, cl[rng.IntN(nc)][1+rng.IntN(3)])
			}
			for j := range lanes {
				route = append(route, n.AddLink(fmt.Sprintf("lane%d.%d.%d", i, r, j), units.BytesPerSec(1e9*(1+99*rng.Float64())), 0))
			}
			extra := units.Seconds(1e-6 * rng.Float64())
			if limited && r == 0 {
				b.AddLimited(extra, units.BytesPerSec(2e8*math.Pow(100, rng.Float64())), route...)
				continue
			}
			b.Add(extra, route...)
		}
		p := b.Path()
		bytes := units.Bytes(math.Pow(10, 3+5*rng.Float64()))
		s.At(units.Seconds(1e-3*rng.Float64()), func() { n.Transfer(p, bytes, nil) })
	}
	return n
}

// TestIncrementalSharing checks, at every change of the moving flows on
// random clustered networks (seeded), that the rates the network keeps
// incrementally are those the serial reference computes from scratch for
// all the moving flows, to 1e-12 relative, under both policies, and that
// no link carries more than its bandwidth. Some flows must be held at
// their path's limit, some paths claimed; each link's count of claims in
// its first cache line (ncl) must match its list of claims.
func TestIncrementalSharing(t *testing.T) {
	for _, sharing := range []Sharing{MaxMin, EqualShare} {
		for seed := range uint64(12) {
			scale := []float64{0.05, 0.3, 1, 4}[seed%4]
			t.Run(fmt.Sprintf("%v/seed=%d", sharing, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 46))
				var s event.Scheduler
				n := clusteredNetwork(&s, rng, 4+int(seed%5)*4, 300, scale)
				n.Sharing = sharing
				changes, bad, worst, claimed, atLimit := 0, 0, 0.0, 0, 0
				n.OnChange = func() {
					changes++
					act := n.Active()
					want := refRates(n.links, act, sharing)
					for i, f := range act {
						if lim := f.path.limit; math.Abs(want[i]-lim) <= 1e-12*lim {
							atLimit++
						}
						worst = max(worst, math.Abs(float64(f.Rate())-want[i])/want[i])
						if got := float64(f.Rate()); math.Abs(got-want[i]) > 1e-12*want[i] && bad < 5 {
							bad++
							t.Errorf("change %d at %v: flow %d rate %v, reference %v", changes, s.Now(), i, got, want[i])
						}
					}
					for _, l := range n.links {
						if load := float64(n.Load(l)); load > l.bw*(1+1e-12) && bad < 5 {
							bad++
							t.Errorf("change %d: link %s carries %v > %v", changes, l.Name(), load, l.bw)
						}
					}
				}
				s.Run()
				for _, p := range n.paths {
					if p.claim != nil {
						claimed++
					}
				}
				for id := range n.ls.l {
					if r := &n.ls.l[id]; int(r.ncl) != min(len(r.claims), 2) {
						t.Errorf("link slot %d: ncl %d for %d claims", id, r.ncl, len(r.claims))
					}
				}
				t.Logf("%d changes, %d claimed paths, %d rates at a limit, largest relative difference %.3g", changes, claimed, atLimit, worst)
				if claimed == 0 {
					t.Error("no path claimed")
				}
				if atLimit == 0 {
					t.Error("no flow at its path's limit")
				}
				if changes < 300 {
					t.Errorf("%d changes, want at least one per flow", changes)
				}
			})
		}
	}
}

// TestComponentsKeepFinish checks that a flow sharing no link with a
// change keeps its rate, progress and finish time untouched, and that the
// flows sharing a link are recomputed: A on X (1 GB/s) and B on Y
// (2 GB/s) from 0, C on X from 1 ms. A (2 MB) moves 1 MB by 1 ms, then
// shares X with C (0.5 MB), which ends at 2 ms; A moves its last 0.5 MB
// alone and ends at 2.5 ms. B (8 MB) is alone on Y: 4 ms.
func TestComponentsKeepFinish(t *testing.T) {
	var s event.Scheduler
	n := NewNetwork(&s)
	X := n.AddLink("X", 1*units.GBps, 0)
	Y := n.AddLink("Y", 2*units.GBps, 0)
	var fa, fb, fc *Flow
	fa = n.Transfer(n.NewPath(0, X), 2*units.MB, nil)
	fb = n.Transfer(n.NewPath(0, Y), 8*units.MB, nil)
	var bFinish, bLast float64
	s.At(0.5e-3, func() { bFinish, bLast = fb.finish, fb.last })
	s.At(1e-3, func() { fc = n.Transfer(n.NewPath(0, X), 0.5*units.MB, nil) })
	s.At(1.2e-3, func() {
		if fb.finish != bFinish || fb.last != bLast {
			t.Errorf("B recomputed: finish %v → %v, settled at %v → %v", bFinish, fb.finish, bLast, fb.last)
		}
		if fa.Rate() != 0.5*units.GBps || fc.Rate() != 0.5*units.GBps {
			t.Errorf("A and C at %v and %v, want 0.5 GB/s each", fa.Rate(), fc.Rate())
		}
	})
	s.Run()
	for _, c := range []struct {
		f    *Flow
		want float64
	}{{fa, 2.5e-3}, {fb, 4e-3}, {fc, 2e-3}} {
		if got := float64(c.f.End()); math.Abs(got-c.want) > 1e-12*c.want {
			t.Errorf("flow of %v on %s ends at %v, want %v", c.f.Bytes(), c.f.path.uses[0].Link.Name(), got, c.want)
		}
	}
}

// TestSharingAllocs checks that recomputing rates allocates nothing once
// the network's scratch has grown: pooled flows (as collectives start
// them) on overlapping paths of a warm network, under both policies.
func TestSharingAllocs(t *testing.T) {
	for _, sharing := range []Sharing{MaxMin, EqualShare} {
		var s event.Scheduler
		n := NewNetwork(&s)
		n.Sharing = sharing
		var ls []*Link
		for i := range 6 {
			ls = append(ls, n.AddLink("", units.BytesPerSec(1e9*float64(i+1)), 1e-6))
		}
		b := n.NewPathBuilder()
		b.Add(0, ls[0], ls[1])
		b.Add(0, ls[2])
		paths := []*Path{b.Path(), n.NewPath(0, ls[1], ls[3]), n.NewPath(0, ls[4]), n.NewPath(0, ls[3], ls[5], ls[0])}
		round := func() {
			for i, p := range paths {
				n.Send(p, units.Bytes(1e5*float64(i+1)), nil)
			}
			s.Run()
		}
		round()
		if a := testing.AllocsPerRun(20, round); a != 0 {
			t.Errorf("%v: %v allocations per round of %d flows", sharing, a, len(paths))
		}
	}
}

// TestClaimedPath checks a flow group on a claimed path (claimMin links
// of 1 GB/s, one stream each) sharing one link with a single flow: both
// move at 0.5 GB/s until the single flow's 0.5 MB are through at 1 ms;
// the group's 2 MB then finish alone at 1 GB/s, at 2.5 ms. A second run
// starts the single flow first, so that the link is hot before the path
// is claimed.
func TestClaimedPath(t *testing.T) {
	for _, freeFirst := range []bool{false, true} {
		var s event.Scheduler
		n := NewNetwork(&s)
		b := n.NewPathBuilder()
		var ls []*Link
		for range claimMin {
			l := n.AddLink("", 1*units.GBps, 0)
			ls = append(ls, l)
			b.Add(0, l)
		}
		group, single := b.Path(), n.NewPath(0, ls[claimMin/2])
		var fg, fs *Flow
		if freeFirst {
			fs = n.Transfer(single, 0.5*units.MB, nil)
			fg = n.Transfer(group, 2*units.MB, nil)
		} else {
			fg = n.Transfer(group, 2*units.MB, nil)
			fs = n.Transfer(single, 0.5*units.MB, nil)
		}
		s.At(0.5e-3, func() {
			if fg.Rate() != 0.5*units.GBps || fs.Rate() != 0.5*units.GBps {
				t.Errorf("rates %v and %v, want 0.5 GB/s each", fg.Rate(), fs.Rate())
			}
		})
		s.At(1.5e-3, func() {
			if fg.Rate() != 1*units.GBps {
				t.Errorf("group alone at %v, want 1 GB/s", fg.Rate())
			}
		})
		s.Run()
		if group.claim == nil {
			t.Fatal("path of claimMin links not claimed")
		}
		if got := float64(fg.End()); math.Abs(got-2.5e-3) > 1e-12*2.5e-3 {
			t.Errorf("group ends at %v, want 2.5 ms", got)
		}
		if got := float64(fs.End()); math.Abs(got-1e-3) > 1e-12*1e-3 {
			t.Errorf("single flow ends at %v, want 1 ms", got)
		}
	}
}

// TestSharedPathNotClaimed checks that a path of claimMin links, more
// than half of which already carry a flow when its own first flow moves,
// is not claimed, and that the rates are those of TestClaimedPath: a
// single flow on 9 of the claimMin links of 1 GB/s (0.5 MB) and the group
// over all of them (2 MB) move at 0.5 GB/s each; the single flow ends at
// 1 ms, the group at 2.5 ms.
func TestSharedPathNotClaimed(t *testing.T) {
	var s event.Scheduler
	n := NewNetwork(&s)
	gb, sb := n.NewPathBuilder(), n.NewPathBuilder()
	for i := range claimMin {
		l := n.AddLink("", 1*units.GBps, 0)
		gb.Add(0, l)
		if i < 9 {
			sb.Add(0, l)
		}
	}
	single, group := sb.Path(), gb.Path()
	fs := n.Transfer(single, 0.5*units.MB, nil)
	fg := n.Transfer(group, 2*units.MB, nil)
	s.At(0.5e-3, func() {
		if fg.Rate() != 0.5*units.GBps || fs.Rate() != 0.5*units.GBps {
			t.Errorf("rates %v and %v, want 0.5 GB/s each", fg.Rate(), fs.Rate())
		}
	})
	s.Run()
	if group.claim != nil || !group.unclaimed {
		t.Errorf("mostly shared path claimed (%v) or not marked (%v)", group.claim != nil, group.unclaimed)
	}
	for _, c := range []struct {
		f    *Flow
		want float64
	}{{fs, 1e-3}, {fg, 2.5e-3}} {
		if got := float64(c.f.End()); math.Abs(got-c.want) > 1e-12*c.want {
			t.Errorf("flow of %v ends at %v, want %v", c.f.Bytes(), got, c.want)
		}
	}
}

// TestEpochWrap checks that the links' marks, which keep the low 32 bits
// of the network's epoch, give the same rates at every change, bit for
// bit, when the epoch starts just below a wrap of those bits as when it
// starts at 0: the wrap skips the epoch whose low bits are 0, the mark of
// a link never marked.
func TestEpochWrap(t *testing.T) {
	for seed := range uint64(4) {
		var runs [2][]float64
		for k, start := range []uint64{0, 1<<32 - 40} {
			rng := rand.New(rand.NewPCG(seed, 47))
			var s event.Scheduler
			n := clusteredNetwork(&s, rng, 4+int(seed)*4, 300, []float64{0.05, 0.3, 1, 4}[seed])
			n.epoch = start
			n.OnChange = func() {
				runs[k] = append(runs[k], float64(s.Now()))
				for _, f := range n.Active() {
					runs[k] = append(runs[k], float64(f.Rate()))
				}
			}
			s.Run()
			if k == 1 && n.epoch < 1<<32 {
				t.Fatalf("seed %d: epoch %d did not wrap: the test needs more changes", seed, n.epoch)
			}
		}
		if !slices.Equal(runs[0], runs[1]) {
			t.Errorf("seed %d: times and rates differ when the epoch wraps (%d and %d values)", seed, len(runs[0]), len(runs[1]))
		}
	}
}

// TestNextEpochClearsMarks checks that when the low 32 bits of the epoch
// wrap around, nextEpoch clears the marks that links keep from the round
// before (any of which a later epoch would match) and skips epoch 0.
func TestNextEpochClearsMarks(t *testing.T) {
	var s event.Scheduler
	n := clusteredNetwork(&s, rand.New(rand.NewPCG(1, 48)), 4, 10, 1)
	for i := range n.ls.l {
		n.ls.l[i].mark = uint32(1 + i)
	}
	n.epoch = 3<<32 - 1
	n.nextEpoch()
	if n.epoch != 3<<32+1 {
		t.Errorf("epoch %#x after the wrap, want %#x", n.epoch, uint64(3<<32+1))
	}
	for i := range n.ls.l {
		if m := n.ls.l[i].mark; m != 0 {
			t.Errorf("link slot %d keeps mark %d", i, m)
		}
	}
	n.ls.l[0].mark = 7
	n.nextEpoch()
	if n.epoch != 3<<32+2 || n.ls.l[0].mark != 7 {
		t.Errorf("without a wrap: epoch %#x, mark %d; want %#x, 7", n.epoch, n.ls.l[0].mark, uint64(3<<32+2))
	}
}
