package netsim

import (
	"errors"
	"fmt"
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
		for _, k := range []int{1, 4, 16} {
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

// TestAsyncFlowGroups checks AsyncPS, which moves a worker's k shard
// transfers as one flow group, against a reference that moves them as k
// separate flows, each with its own max-min rate: workers of different
// compute times (so that they drift apart and their transfers overlap at
// random), a shared oversubscribed core, and without peer-to-peer (the
// routes cross the host memory twice). The shards are alike, so the k
// flows of a worker get equal rates and the two must agree.
func TestAsyncFlowGroups(t *testing.T) {
	const U = 60
	compute := []units.Seconds{1.0e-3, 2.3e-3, 1.7e-3, 0.4e-3, 3.1e-3, 1.1e-3, 2.0e-3, 0.9e-3}
	for _, c := range []struct {
		name   string
		k      int
		bytes  units.Bytes
		noP2P  bool
		ranks  int
		perNod int
	}{
		{"flat, 3 shards", 3, 4 * units.MiB, false, 8, 1},
		{"2 per node, 5 shards, host-staged", 5, 1 * units.MiB, true, 8, 2},
		{"4 per node, 16 shards", 16, 16 * units.MiB, false, 8, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := flat(c.ranks)
			cfg.Servers, cfg.RanksPerNode, cfg.NoPeerToPeer = c.k, c.perNod, c.noP2P
			cfg.Oversubscription = 2
			if c.perNod > 1 {
				cfg.Intra = LinkSpec{intraBW, intraLat}
			}
			if c.noP2P {
				cfg.PCIe, cfg.HostMemory = LinkSpec{12e9, 1e-6}, 40e9
			}
			got := runAsync(t, cfg, AsyncConfig{Compute: compute, Bytes: c.bytes, Updates: U})
			want := asyncPerShard(t, cfg, compute, c.bytes, U)
			if !near(float64(got.End), float64(want.End), 1e-9) || got.MaxStaleness != want.MaxStaleness ||
				!near(got.MeanStaleness, want.MeanStaleness, 1e-12) {
				t.Errorf("end %.12g s, staleness mean %v max %d; per-shard flows give %.12g s, %v, %d",
					float64(got.End), got.MeanStaleness, got.MaxStaleness, float64(want.End), want.MeanStaleness, want.MaxStaleness)
			}
			for i := range compute {
				if got.PerWorker[i] != want.PerWorker[i] {
					t.Errorf("worker %d applied %d updates, per-shard flows %d", i, got.PerWorker[i], want.PerWorker[i])
				}
			}
		})
	}
}

// asyncPerShard is AsyncPS with every shard transfer its own flow on its
// own one-route path, the reference of TestAsyncFlowGroups.
func asyncPerShard(t *testing.T, cfg Config, compute []units.Seconds, bytes units.Bytes, updates int) *AsyncResult {
	t.Helper()
	var s event.Scheduler
	topo, err := NewTopology(&s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	k := cfg.Servers
	per := units.Bytes(float64(bytes) / float64(k))
	res := &AsyncResult{PerWorker: make([]int, len(compute))}
	issued, version, stale := 0, 0, 0
	read := make([]int, len(compute))
	var iterate func(w int)
	push := func(w int) {
		pending := k
		for srv := range k {
			p := topo.cached(fmt.Sprintf("ref-to/%d/%d", w, srv), func() { topo.toServer(w, srv) })
			topo.net.Transfer(p, per, func(*Flow) {
				if pending--; pending > 0 {
					return
				}
				st := version - read[w]
				version++
				stale += st
				res.MaxStaleness = max(res.MaxStaleness, st)
				res.PerWorker[w]++
				res.Updates++
				if res.Updates == updates {
					res.End = s.Now()
					res.MeanStaleness = float64(stale) / float64(updates)
					return
				}
				iterate(w)
			})
		}
	}
	iterate = func(w int) {
		if issued >= updates {
			return
		}
		issued++
		read[w] = version
		pending := k
		for srv := range k {
			p := topo.cached(fmt.Sprintf("ref-from/%d/%d", srv, w), func() { topo.fromServer(srv, w) })
			topo.net.Transfer(p, per, func(*Flow) {
				if pending--; pending == 0 {
					s.After(compute[w], func() { push(w) })
				}
			})
		}
	}
	for w := range compute {
		iterate(w)
	}
	s.Run()
	if res.Updates != updates {
		t.Fatalf("reference applied %d of %d updates", res.Updates, updates)
	}
	return res
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
