package netsim

import (
	"testing"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/event"
)

// dgx is 128 nodes of 8 GPUs with NVLink inside the node and 4 NICs of
// 100 Gbit/s per node on a non-blocking fabric.
func dgx() Config {
	return Config{
		Ranks: 1024, RanksPerNode: 8, NICsPerNode: 4,
		Intra:         LinkSpec{Bandwidth: 150 * units.GBps, Latency: 1 * units.Microsecond},
		NIC:           LinkSpec{Bandwidth: units.BytesPerSec((100 * units.Gbps).Bytes()), Latency: 1.5 * units.Microsecond},
		FabricLatency: 0.5 * units.Microsecond, Efficiency: 0.9, Overhead: 2 * units.Microsecond,
	}
}

// BenchmarkAllReduce times one all-reduce of a 25 MiB gradient bucket on
// 1024 ranks. "warm" reuses a topology whose paths are cached, as a
// training simulation does from its second bucket on; "cold" builds the
// topology (4,600 links) and the paths each time.
func BenchmarkAllReduce(b *testing.B) {
	const S = 25 * units.MiB
	for _, c := range []struct {
		name string
		alg  Algorithm
		cfg  Config
	}{
		{"hierarchical", Hierarchical, dgx()},
		{"ring", Ring, dgx()},
		{"halving-doubling", HalvingDoubling, dgx()},
		{"double-tree", DoubleTree, dgx()},
	} {
		b.Run(c.name+"/warm", func(b *testing.B) {
			var s event.Scheduler
			topo, err := NewTopology(&s, c.cfg)
			if err != nil {
				b.Fatal(err)
			}
			var steps int
			run := func() {
				if err := topo.AllReduce(c.alg, S, nil, func(r *Result) { steps = r.Steps }); err != nil {
					b.Fatal(err)
				}
				s.Run()
			}
			benchWarm(b, &s, run)
			b.ReportMetric(float64(steps), "flows/op")
		})
	}
	b.Run("hierarchical/cold", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var s event.Scheduler
			topo, err := NewTopology(&s, dgx())
			if err != nil {
				b.Fatal(err)
			}
			if err := topo.AllReduce(Hierarchical, S, nil, nil); err != nil {
				b.Fatal(err)
			}
			s.Run()
		}
	})
}

// BenchmarkContended times the general sharing path: 64 flows on random
// multi-link paths over 16 links, under max-min fairness.
func BenchmarkContended(b *testing.B) {
	sp := genSpec(9, 64, 16, false)
	b.ReportAllocs()
	for range b.N {
		var s event.Scheduler
		n := NewNetwork(&s)
		links := make([]*Link, len(sp.bw))
		for i := range links {
			links[i] = n.AddLink("", sp.bw[i], sp.lat[i])
		}
		for _, f := range sp.flows {
			pb := n.NewPathBuilder()
			for _, r := range f.routes {
				var ls []*Link
				for _, j := range r {
					ls = append(ls, links[j])
				}
				pb.Add(f.extra, ls...)
			}
			p := pb.Path()
			s.At(f.start, func() { n.Transfer(p, f.bytes, nil) })
		}
		s.Run()
	}
}

// BenchmarkAsyncPS times an asynchronous parameter-server run of 1024
// workers (256 nodes of 4) pulling from and pushing to 16 shards, 2
// updates per worker, 100 MiB of gradients, the workers' compute times
// spread over ±20 % so that their transfers drift apart.
func BenchmarkAsyncPS(b *testing.B) {
	const workers, shards = 1024, 16
	cfg := Config{
		Ranks: workers, RanksPerNode: 4,
		Intra:         LinkSpec{Bandwidth: 80 * units.GBps, Latency: 2 * units.Microsecond},
		NIC:           LinkSpec{Bandwidth: units.BytesPerSec((100 * units.Gbps).Bytes()), Latency: 1 * units.Microsecond},
		FabricLatency: 1 * units.Microsecond, Efficiency: 0.35, Overhead: 10 * units.Microsecond,
		Servers: shards, ServerNIC: units.BytesPerSec((100 * units.Gbps).Bytes()),
	}
	compute := make([]units.Seconds, workers)
	for i := range compute {
		compute[i] = units.Seconds(0.2 * (0.8 + 0.4*float64(i%97)/96))
	}
	b.ReportAllocs()
	for range b.N {
		var s event.Scheduler
		topo, err := NewTopology(&s, cfg)
		if err != nil {
			b.Fatal(err)
		}
		if err := topo.AsyncPS(AsyncConfig{Compute: compute, Bytes: 100 * units.MiB, Updates: 2 * workers}, nil); err != nil {
			b.Fatal(err)
		}
		s.Run()
	}
}

// BenchmarkCollectives times the other collectives on 1024 ranks with
// their plans and paths cached (warm), as BenchmarkAllReduce's "warm".
func BenchmarkCollectives(b *testing.B) {
	const S = 25 * units.MiB
	for _, c := range []struct {
		name  string
		start func(*Topology) error
	}{
		{"reduce-scatter/ring", func(t *Topology) error { return t.ReduceScatter(Ring, S, nil, nil) }},
		{"all-gather/halving-doubling", func(t *Topology) error { return t.AllGather(HalvingDoubling, S, nil, nil) }},
		{"broadcast/ring", func(t *Topology) error { return t.Broadcast(Ring, S, 0, nil, nil) }},
		{"broadcast/tree", func(t *Topology) error { return t.Broadcast(Tree, S, 0, nil, nil) }},
		{"all-to-all", func(t *Topology) error { return t.AllToAll(S, nil, nil) }},
		{"send-recv", func(t *Topology) error { return t.SendRecv(S, 0, 1023, nil) }},
	} {
		b.Run(c.name+"/warm", func(b *testing.B) {
			var s event.Scheduler
			topo, err := NewTopology(&s, dgx())
			if err != nil {
				b.Fatal(err)
			}
			run := func() {
				if err := c.start(topo); err != nil {
					b.Fatal(err)
				}
				s.Run()
			}
			benchWarm(b, &s, run)
		})
	}
}

// benchWarm runs run once to fill the caches, then times b.N runs and
// reports the events each run took on s.
func benchWarm(b *testing.B, s *event.Scheduler, run func()) {
	run()
	b.ReportAllocs()
	b.ResetTimer()
	ev := s.Events()
	for range b.N {
		run()
	}
	b.ReportMetric(float64(s.Events()-ev)/float64(b.N), "events/op")
}
