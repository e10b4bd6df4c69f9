package netsim_test

import (
	"fmt"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/event"
	"scaleplan/sim/internal/netsim"
)

// A ring all-reduce of 100 MB on 8 nodes with one 100 Gbit/s NIC each:
//
//	2(p-1)·alpha + 2(p-1)/p · S/beta = 14·5 us + 1.75 · 100 MB / 12.5 GB/s = 14.07 ms
func Example() {
	var s event.Scheduler
	topo, err := netsim.NewTopology(&s, netsim.Config{
		Ranks: 8,
		NIC:   netsim.LinkSpec{Bandwidth: units.BytesPerSec((100 * units.Gbps).Bytes()), Latency: 5 * units.Microsecond},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	err = topo.AllReduce(netsim.Ring, 100*units.MB, nil, func(r *netsim.Result) {
		fmt.Printf("%v on %d ranks: %v in %d steps\n", r.Algorithm, r.Ranks, r.Time(), r.Steps)
		out, _ := topo.NIC(0, 0)
		for _, u := range r.Links() {
			if u.Link == out {
				fmt.Printf("%s carried %v, busy %v\n", u.Link.Name(), u.Bytes, u.Busy)
			}
		}
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	s.Run()
	// Output:
	// ring on 8 ranks: 14.07 ms in 14 steps
	// nic-out[0,0] carried 175 MB, busy 14 ms
}

// Two gradient buckets of a data-parallel step: the second bucket's
// all-reduce starts when backward releases it, 1 ms after the first, while
// the first is still on the wire. Alone each takes 3.426 ms; sharing the
// NICs, the first ends at 5.566 ms and the second 1 ms later, when the NICs
// have carried both buckets' inter-node bytes.
func ExampleTopology_AllReduce() {
	var s event.Scheduler
	topo, err := netsim.NewTopology(&s, netsim.Config{
		Ranks: 16, RanksPerNode: 4,
		Intra: netsim.LinkSpec{Bandwidth: 150 * units.GBps, Latency: 1 * units.Microsecond},
		NIC:   netsim.LinkSpec{Bandwidth: 12.5 * units.GBps, Latency: 2 * units.Microsecond},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	report := func(r *netsim.Result) { fmt.Printf("bucket of %v: %v to %v\n", r.Bytes, r.Start, r.End) }
	for i, at := range []units.Seconds{0, 1 * units.Millisecond} {
		s.At(at, func() {
			if err := topo.AllReduce(netsim.Hierarchical, 25*units.MiB, nil, report); err != nil {
				fmt.Println(i, err)
			}
		})
	}
	s.Run()
	// Output:
	// bucket of 25 MiB: 0 s to 5.566 ms
	// bucket of 25 MiB: 1 ms to 6.566 ms
}

// A ring reduce-scatter of 100 MB on Example's 8 nodes, then a ring
// all-gather: each is 7 steps of 12.5 MB,
//
//	(p−1)·(alpha + S/(p·beta)) = 7·(5 us + 12.5 MB / 12.5 GB/s) = 7.035 ms
//
// and together they take the ring all-reduce's 14.07 ms.
func ExampleTopology_ReduceScatter() {
	var s event.Scheduler
	topo, err := netsim.NewTopology(&s, netsim.Config{
		Ranks: 8,
		NIC:   netsim.LinkSpec{Bandwidth: units.BytesPerSec((100 * units.Gbps).Bytes()), Latency: 5 * units.Microsecond},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	report := func(r *netsim.Result) {
		fmt.Printf("%v by %v: %v to %v in %d steps\n", r.Op, r.Algorithm, r.Start, r.End, r.Steps)
	}
	err = topo.ReduceScatter(netsim.Ring, 100*units.MB, nil, func(r *netsim.Result) {
		report(r)
		if err := topo.AllGather(netsim.Ring, 100*units.MB, nil, report); err != nil {
			fmt.Println(err)
		}
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	s.Run()
	// Output:
	// reduce-scatter by ring: 0 s to 7.035 ms in 7 steps
	// all-gather by ring: 7.035 ms to 14.07 ms in 7 steps
}
