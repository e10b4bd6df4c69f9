package netsim

import (
	"math"
	"math/rand/v2"
	"testing"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/event"
)

// flowSpec is a random flow: when it starts, its routes and its bytes.
type flowSpec struct {
	start  units.Seconds
	bytes  units.Bytes
	extra  units.Seconds
	limit  units.BytesPerSec // the first route's stream limit (AddLimited); 0 for none
	routes [][]int           // link indices per route
}

type netSpec struct {
	bw    []units.BytesPerSec
	lat   []units.Seconds
	flows []flowSpec
}

// genSpec draws a valid flow set from seed. With singleLink every flow has
// one route over one link.
func genSpec(seed uint64, nflows, nlinks int, singleLink bool) netSpec {
	rng := rand.New(rand.NewPCG(seed, 0x5ca1e))
	var sp netSpec
	for range nlinks {
		sp.bw = append(sp.bw, units.BytesPerSec(math.Pow(10, 6+4*rng.Float64())))
		sp.lat = append(sp.lat, units.Seconds(rng.Float64()*1e-5))
	}
	for range nflows {
		f := flowSpec{
			start: units.Seconds(rng.Float64() * 1e-3),
			extra: units.Seconds(rng.Float64() * 1e-5),
		}
		switch rng.IntN(8) {
		case 0:
			f.bytes = 0
		case 1:
			f.bytes = units.Bytes(rng.IntN(4096))
		default:
			f.bytes = units.Bytes(math.Pow(10, 3+6*rng.Float64()))
		}
		if rng.IntN(3) == 0 {
			f.limit = units.BytesPerSec(math.Pow(10, 6+4*rng.Float64()))
		}
		routes, hops := 1+rng.IntN(3), 1+rng.IntN(3)
		if singleLink {
			routes, hops = 1, 1
		}
		for range routes {
			var r []int
			for range hops {
				r = append(r, rng.IntN(nlinks))
			}
			f.routes = append(f.routes, r)
		}
		sp.flows = append(sp.flows, f)
	}
	return sp
}

type outcome struct {
	ends  []units.Seconds
	moved []float64
	stats []LinkUsage
	paths []*Path
}

// simulate runs sp; with check it asserts after every event that time has
// not decreased and that no link carries more than its bandwidth.
func simulate(t *testing.T, sp netSpec, sharing Sharing, check bool) outcome {
	var s event.Scheduler
	n := NewNetwork(&s)
	n.Sharing = sharing
	links := make([]*Link, len(sp.bw))
	for i := range links {
		links[i] = n.AddLink("", sp.bw[i], sp.lat[i])
	}
	out := outcome{ends: make([]units.Seconds, len(sp.flows)), paths: make([]*Path, len(sp.flows))}
	flows := make([]*Flow, len(sp.flows))
	for i, f := range sp.flows {
		b := n.NewPathBuilder()
		for k, r := range f.routes {
			var ls []*Link
			for _, j := range r {
				ls = append(ls, links[j])
			}
			if k == 0 && f.limit > 0 {
				b.AddLimited(f.extra, f.limit, ls...)
				continue
			}
			b.Add(f.extra, ls...)
		}
		p := b.Path()
		out.paths[i] = p
		s.At(f.start, func() {
			flows[i] = n.Transfer(p, f.bytes, func(fl *Flow) { out.ends[i] = s.Now() })
		})
	}
	prev := s.Now()
	for s.Step() {
		if !check {
			continue
		}
		if s.Now() < prev {
			t.Fatalf("time went back from %v to %v", prev, s.Now())
		}
		prev = s.Now()
		for _, l := range links {
			if load := n.Load(l); load > l.Bandwidth()*(1+1e-9) || load < 0 {
				t.Fatalf("at %v link %d carries %v, bandwidth %v (utilization %v)", s.Now(), l.ID(), load, l.Bandwidth(), load/l.Bandwidth())
			}
		}
		for _, fl := range n.Active() {
			if fl.Rate() > fl.Path().Limit()*(1+1e-12) {
				t.Fatalf("at %v a flow moves at %v, over its limit %v", s.Now(), fl.Rate(), fl.Path().Limit())
			}
		}
	}
	for i, f := range flows {
		if f == nil || !f.Done() {
			t.Fatalf("flow %d did not finish", i)
		}
		out.moved = append(out.moved, f.moved)
	}
	out.stats = n.Stats()
	return out
}

// FuzzNetwork runs random valid flow sets, a third of them with a stream
// limit, and checks the invariants: time never decreases, every flow
// moves exactly its bytes (integrating its rates over time), no link
// carries more than its bandwidth and no flow moves over its limit, no flow ends
// before its latency plus its bytes at its idle-network rate, the same seed
// gives bit-identical results, and a lower bandwidth never ends a flow
// earlier (under equal sharing, and under max-min for single-link flows;
// TestMaxMinNotMonotone shows why not in general).
func FuzzNetwork(f *testing.F) {
	f.Add(uint64(1), uint8(10), uint8(4), uint8(0))
	f.Add(uint64(2), uint8(40), uint8(3), uint8(1))
	f.Add(uint64(3), uint8(25), uint8(5), uint8(2))
	f.Add(uint64(4), uint8(47), uint8(8), uint8(3))
	f.Fuzz(func(t *testing.T, seed uint64, nflows, nlinks, mode uint8) {
		sharing := MaxMin
		if mode&1 != 0 {
			sharing = EqualShare
		}
		single := mode&2 != 0
		sp := genSpec(seed, int(nflows)%48+1, int(nlinks)%8+1, single)
		a := simulate(t, sp, sharing, true)

		linkBytes := make([]float64, len(sp.bw))
		for i, fs := range sp.flows {
			want := float64(fs.bytes)
			if math.Abs(a.moved[i]-want) > 1e-9*want {
				t.Errorf("flow %d moved %v bytes, want %v", i, a.moved[i], want)
			}
			low := float64(fs.start+a.paths[i].Latency()) + want/float64(a.paths[i].Rate())
			if float64(a.ends[i]) < low*(1-1e-12) {
				t.Errorf("flow %d ended at %v, before its idle-network time %v", i, a.ends[i], low)
			}
			for _, u := range a.paths[i].Uses() {
				linkBytes[u.Link.ID()] += want * float64(u.Weight)
			}
		}
		for i, st := range a.stats {
			if math.Abs(float64(st.Bytes)-linkBytes[i]) > 1e-9*linkBytes[i] {
				t.Errorf("link %d carried %v bytes, flows put %v on it", i, st.Bytes, linkBytes[i])
			}
		}

		b := simulate(t, sp, sharing, false)
		for i := range a.ends {
			if a.ends[i] != b.ends[i] {
				t.Fatalf("same seed, flow %d ended at %v then %v", i, a.ends[i], b.ends[i])
			}
		}

		if sharing == EqualShare || single {
			slow := sp
			slow.bw = append([]units.BytesPerSec(nil), sp.bw...)
			k := int(seed % uint64(len(slow.bw)))
			slow.bw[k] *= 0.5
			c := simulate(t, slow, sharing, false)
			for i := range a.ends {
				if c.ends[i] < a.ends[i]*(1-1e-9) {
					t.Errorf("halving link %d: flow %d ends at %v, earlier than %v", k, i, c.ends[i], a.ends[i])
				}
			}
		}
	})
}
