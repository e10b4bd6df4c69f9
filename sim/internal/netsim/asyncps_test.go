package netsim

import (
	"errors"
	"math"
	"testing"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/event"
)

func runAsync(t *testing.T, cfg Config, ac AsyncConfig) *AsyncResult {
	t.Helper()
	var s event.Scheduler
	topo, err := NewTopology(&s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var res *AsyncResult
	if err := topo.AsyncPS(ac, func(r *AsyncResult) { res = r }); err != nil {
		t.Fatal(err)
	}
	s.Run()
	if res == nil {
		t.Fatal("done was not called")
	}
	return res
}

// TestAsyncLockstep: N identical workers started together stay in
// lockstep. Each round costs the compute time plus a synchronous push and
// pull; within a round the updates are applied in worker order, so in the
// first round worker i sees i stale updates and afterwards every worker
// sees the N−1 others.
func TestAsyncLockstep(t *testing.T) {
	const (
		N, k, R = 6, 2, 5
		c       = 10 * units.Millisecond
		S       = 8 * units.MiB
	)
	cfg := flat(N)
	cfg.Servers = k
	res := runAsync(t, cfg, AsyncConfig{Compute: []units.Seconds{c}, Bytes: S, Updates: N * R})
	round := float64(c) + psForm(N, k, float64(S), alphaNet(), betaNet(), betaNet())
	wantEnd := R * round
	wantStale := (float64(N-1)/2 + (R-1)*float64(N-1)) / R
	if !near(float64(res.End), wantEnd, 1e-9) {
		t.Errorf("end %v, want %v", float64(res.End), wantEnd)
	}
	if !near(res.MeanStaleness, wantStale, 1e-12) || res.MaxStaleness != N-1 {
		t.Errorf("staleness mean %v max %d, want %v and %d", res.MeanStaleness, res.MaxStaleness, wantStale, N-1)
	}
	if !near(res.Throughput, N/round, 1e-9) {
		t.Errorf("throughput %v updates/s, want %v", res.Throughput, N/round)
	}
	for i, u := range res.PerWorker {
		if u != R {
			t.Errorf("worker %d applied %d updates, want %d", i, u, R)
		}
	}
}

// TestAsyncClosedForm sweeps the lockstep closed form of TestAsyncLockstep
// over p = 2..1024 workers, including non-powers of two, message sizes
// from 1 KiB to 1 GiB and 1 to 16 shards: R rounds of the compute time
// plus a synchronous push and pull, to 1e-9 relative, with the staleness
// and throughput that follow.
func TestAsyncClosedForm(t *testing.T) {
	const (
		R = 2
		c = 3 * units.Millisecond
	)
	n := 0
	for _, p := range testPs {
		S := fewSizes
		for _, q := range allSizePs {
			if p == q {
				S = allSizes
			}
		}
		// Every push and pull is its own flow, and max-min sharing
		// recomputes the rates of all active flows at every change, so
		// p·k flows cost about (p·k)²: many shards only on fewer workers.
		shards := []int{1}
		switch {
		case p <= 32:
			shards = []int{1, 4, 16}
		case p <= 256:
			shards = []int{1, 4}
		}
		for _, k := range shards {
			for _, s := range S {
				cfg := flat(p)
				cfg.Servers = k
				res := runAsync(t, cfg, AsyncConfig{Compute: []units.Seconds{c}, Bytes: s, Updates: p * R})
				round := float64(c) + psForm(p, k, float64(s), alphaNet(), betaNet(), betaNet())
				wantStale := (float64(p-1)/2 + (R-1)*float64(p-1)) / R
				if !near(float64(res.End), R*round, 1e-9) || !near(res.Throughput, float64(p)/round, 1e-9) {
					t.Errorf("p=%d k=%d S=%v: end %.12g s, throughput %.12g/s; want %.12g s, %.12g/s", p, k, s, float64(res.End), res.Throughput, R*round, float64(p)/round)
				}
				if !near(res.MeanStaleness, wantStale, 1e-12) || res.MaxStaleness != p-1 {
					t.Errorf("p=%d k=%d S=%v: staleness mean %v max %d, want %v and %d", p, k, s, res.MeanStaleness, res.MaxStaleness, wantStale, p-1)
				}
				n++
			}
		}
	}
	t.Logf("%d cases", n)
}

// TestAsyncHeterogeneous: with a free network (no latency, no bytes) an
// update of a worker with compute time c is applied c after its pull, so
// its staleness is the number of other workers' updates in between. The
// reference is a direct merge of the workers' update times.
func TestAsyncHeterogeneous(t *testing.T) {
	compute := []units.Seconds{1e-3, 2.7e-3, 1.9e-3}
	const U = 30
	cfg := Config{Ranks: 3, NIC: LinkSpec{Bandwidth: 1e9}, Servers: 2}
	res := runAsync(t, cfg, AsyncConfig{Compute: compute, Updates: U})

	// Reference.
	next := make([]units.Seconds, len(compute))
	read := make([]int, len(compute))
	per := make([]int, len(compute))
	copy(next, compute)
	issued, version, stale, maxStale := len(compute), 0, 0, 0
	var end units.Seconds
	for version < U {
		w := 0
		for i := range next {
			if next[i] < next[w] {
				w = i
			}
		}
		st := version - read[w]
		stale += st
		maxStale = max(maxStale, st)
		version++
		per[w]++
		end = next[w]
		if issued < U {
			issued++
			read[w] = version
			next[w] += compute[w]
		} else {
			next[w] = units.Seconds(math.Inf(1))
		}
	}
	if res.End != end || res.MeanStaleness != float64(stale)/U || res.MaxStaleness != maxStale {
		t.Errorf("end %v mean staleness %v max %d; want %v, %v, %d", res.End, res.MeanStaleness, res.MaxStaleness, end, float64(stale)/U, maxStale)
	}
	for i := range per {
		if res.PerWorker[i] != per[i] {
			t.Errorf("worker %d applied %d updates, want %d", i, res.PerWorker[i], per[i])
		}
	}
	if res.MeanStaleness <= 0 {
		t.Errorf("mean staleness %v; asynchronous workers must see stale parameters", res.MeanStaleness)
	}
}

func TestAsyncErrors(t *testing.T) {
	var s event.Scheduler
	topo, err := NewTopology(&s, flat(4))
	if err != nil {
		t.Fatal(err)
	}
	noSrv := flat(4)
	noSrv.Servers = 0
	topo0, err := NewTopology(&s, noSrv)
	if err != nil {
		t.Fatal(err)
	}
	one := []units.Seconds{1}
	for _, c := range []struct {
		name string
		topo *Topology
		cfg  AsyncConfig
	}{
		{"no servers", topo0, AsyncConfig{Compute: one, Updates: 1}},
		{"no updates", topo, AsyncConfig{Compute: one}},
		{"compute count", topo, AsyncConfig{Compute: []units.Seconds{1, 2}, Updates: 1}},
		{"negative compute", topo, AsyncConfig{Compute: []units.Seconds{-1}, Updates: 1}},
		{"NaN bytes", topo, AsyncConfig{Compute: one, Updates: 1, Bytes: units.Bytes(math.NaN())}},
		{"bad worker", topo, AsyncConfig{Workers: []int{7}, Compute: one, Updates: 1}},
	} {
		if err := c.topo.AsyncPS(c.cfg, nil); !errors.Is(err, ErrCollective) {
			t.Errorf("%s: error %v, want one wrapping ErrCollective", c.name, err)
		}
	}
	if s.Len() != 0 {
		t.Errorf("failed requests scheduled %d events", s.Len())
	}
}
