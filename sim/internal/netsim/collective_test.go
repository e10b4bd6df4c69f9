package netsim

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"testing"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/event"
)

// The closed forms below are the alpha-beta costs of DESIGN.md, written
// from the formulas, not from the simulator's code: alpha is the latency of
// one message and beta the bandwidth one stream gets.

var (
	testPs   = []int{2, 3, 4, 5, 7, 8, 12, 16, 31, 32, 100, 128, 255, 256, 512, 1000, 1024}
	fewSizes = []units.Bytes{1 * units.KiB, 3 * units.MiB, 1 * units.GiB}
	// allSizes is every power of 4 from 1 KiB to 1 GiB and two sizes that
	// are not powers of two: 3 MiB and a 25 MB gradient bucket.
	allSizes  = append(sizes(1*units.KiB, 1*units.GiB), 3*units.MiB, 25*units.MB)
	allSizePs = []int{2, 7, 8, 100} // where the slower asynchronous sweep uses allSizes
)

// sizes returns every power of 4 times lo up to hi, and hi.
func sizes(lo, hi units.Bytes) []units.Bytes {
	var out []units.Bytes
	for s := lo; s < hi; s *= 4 {
		out = append(out, s)
	}
	return append(out, hi)
}

const (
	nicBW     = 100e9 / 8 * units.BytesPerSec(1) // 100 Gbit/s
	nicLat    = 1.5 * units.Microsecond
	fabricLat = 0.5 * units.Microsecond
	overhead  = 2 * units.Microsecond
	eff       = 0.9
	intraBW   = 150 * units.GBps
	intraLat  = 0.7 * units.Microsecond
	pcieBW    = 12 * units.GBps
	pcieLat   = 1 * units.Microsecond
	hostBW    = 60 * units.GBps
)

// flat is one rank per node on a non-blocking fabric.
func flat(p int) Config {
	return Config{Ranks: p, NIC: LinkSpec{nicBW, nicLat}, FabricLatency: fabricLat, Efficiency: eff, Overhead: overhead, Servers: 4}
}

// twoLevel is k ranks per node with peer-to-peer links inside the node.
func twoLevel(p, k, nics int, oversub float64) Config {
	c := flat(p)
	c.RanksPerNode, c.NICsPerNode, c.Oversubscription = k, nics, oversub
	c.Servers = 0 // the core's capacity counts server NICs
	c.Intra = LinkSpec{intraBW, intraLat}
	return c
}

// divisor returns the largest of 8, 4, 2, 1 that divides p.
func divisor(p int) int {
	for _, k := range []int{8, 4, 2} {
		if p%k == 0 {
			return k
		}
	}
	return 1
}

func alphaNet() float64 { return float64(nicLat + fabricLat + overhead) }
func betaNet() float64  { return float64(nicBW) * eff }

func log2(p int) int { return bits.Len(uint(p)) - 1 }

func ringForm(p int, S, alpha, beta float64) float64 {
	return 2 * float64(p-1) * (alpha + S/float64(p)/beta)
}

func rhdForm(p int, S, alpha, beta float64) float64 {
	q := 1 << log2(p)
	t := 2*float64(log2(q))*alpha + 2*float64(q-1)/float64(q)*S/beta
	if q < p {
		t += 2 * (alpha + S/beta)
	}
	return t
}

// treeForm is the pipelined (double) binary tree: reduce and broadcast in
// n = d + C − 1 ticks each of alpha + m·c/beta, m = 2 (a parent receives
// from, or sends to, two children) except in δ ticks:
//
//	T = 2·(n·alpha + (2n − δ)·c/beta),  δ = n (p = 2), 1 (p = 2^d ≥ 4), else 0.
func treeForm(p int, S, alpha, beta float64, double bool, chunk float64) float64 {
	St := S
	if double {
		St = S / 2
	}
	C := math.Max(1, math.Ceil(St/chunk))
	c := St / C
	d := float64(log2(p))
	n := d + C - 1
	delta := 0.0
	switch {
	case p == 2:
		delta = n
	case p&(p-1) == 0:
		delta = 1
	}
	return 2 * (n*alpha + (2*n-delta)*c/beta)
}

func psForm(p, k int, S, alpha, workerBW, serverBW float64) float64 {
	rate := math.Min(workerBW/float64(k), serverBW/float64(p))
	return 2 * (alpha + S/float64(k)/rate)
}

func torusX(p int) int {
	x := 1
	for d := 1; d*d <= p; d++ {
		if p%d == 0 {
			x = d
		}
	}
	return x
}

type formCase struct {
	name string
	cfg  Config
	alg  Algorithm
	S    units.Bytes
	want float64
	tol  float64
}

func closedFormCases(t *testing.T) []formCase {
	var cases []formCase
	add := func(name string, cfg Config, alg Algorithm, S units.Bytes, want float64) {
		cases = append(cases, formCase{fmt.Sprintf("%s/p=%d/S=%v", name, cfg.Ranks, S), cfg, alg, S, want, 1e-9})
	}
	a, b := alphaNet(), betaNet()
	chunk := float64(DefaultTreeChunk)
	for _, p := range testPs {
		k := divisor(p)
		for _, s := range allSizes {
			x := float64(s)
			add("ring", flat(p), Ring, s, ringForm(p, x, a, b))
			add("halving-doubling", flat(p), HalvingDoubling, s, rhdForm(p, x, a, b))
			add("tree", flat(p), Tree, s, treeForm(p, x, a, b, false, chunk))
			add("double-tree", flat(p), DoubleTree, s, treeForm(p, x, a, b, true, chunk))
			X := torusX(p)
			add("torus-2d", flat(p), Torus2D, s, ringForm(X, x, a, b)+ringForm(p/X, x/float64(X), a, b))
			if p%2 == 0 && p > 2 {
				// An explicit x: rows of 2, and 2 rows of p/2.
				for _, X := range []int{2, p / 2} {
					cfg := flat(p)
					cfg.TorusX = X
					add(fmt.Sprintf("torus-2d-x=%d", X), cfg, Torus2D, s, ringForm(X, x, a, b)+ringForm(p/X, x/float64(X), a, b))
				}
			}
			add("parameter-server", flat(p), ParameterServer, s, psForm(p, 4, x, a, b, b))
			// k shards from 1 to more than p, servers with a faster NIC
			// than the workers', and a gRPC-sized per-message overhead.
			for _, ps := range []struct {
				k        int
				server   units.BytesPerSec
				overhead units.Seconds
			}{{1, nicBW, overhead}, {3, 4 * nicBW, overhead}, {16, nicBW, 50 * units.Microsecond}, {2 * p, 2 * nicBW, 50 * units.Microsecond}} {
				cfg := flat(p)
				cfg.Servers, cfg.ServerNIC, cfg.Overhead = ps.k, ps.server, ps.overhead
				alpha := float64(nicLat + fabricLat + ps.overhead)
				add(fmt.Sprintf("parameter-server-k=%d-server=%v-rpc=%v", ps.k, ps.server, ps.overhead), cfg, ParameterServer, s,
					psForm(p, ps.k, x, alpha, b, float64(ps.server)*eff))
			}

			// Hierarchical: k ranks per node share 2 NICs (or 1), so each
			// inter-node stream gets nics·B·e/k, or less through a 2:1 core.
			N := p / k
			nics := min(2, k)
			for _, oversub := range []float64{1, 2} {
				cfg := twoLevel(p, k, nics, oversub)
				beta := float64(nics) * b / float64(k) / oversub
				intra := 0.0
				if k > 1 {
					intra = 2 * float64(k-1) * (float64(intraLat) + x/float64(k)/float64(intraBW))
				}
				add(fmt.Sprintf("hierarchical-k=%d-oversub=%v", k, oversub), cfg, Hierarchical, s, intra+ringForm(N, x/float64(k), a, beta))
				if oversub == 1 && N > 1 {
					for _, inter := range []Algorithm{HalvingDoubling, DoubleTree} {
						c := cfg
						c.InterNode = inter
						var tInter float64
						if inter == HalvingDoubling {
							tInter = rhdForm(N, x/float64(k), a, beta)
						} else {
							tInter = treeForm(N, x/float64(k), a, beta, true, chunk)
						}
						add(fmt.Sprintf("hierarchical-k=%d-inter=%v", k, inter), c, Hierarchical, s, intra+tInter)
					}
				}
			}

			// Host-staged: nodes of k devices without peer-to-peer access.
			hk := k
			if p <= 8 {
				hk = p
			}
			hN := p / hk
			cfg := flat(p)
			cfg.RanksPerNode, cfg.NoPeerToPeer = hk, true
			cfg.PCIe, cfg.HostMemory = LinkSpec{pcieBW, pcieLat}, hostBW
			copyT := float64(pcieLat) + x/math.Min(float64(pcieBW), float64(hostBW)/float64(hk))
			want := 2 * copyT
			if hk > 1 {
				want += float64(hk+1) * x / float64(hostBW)
			}
			if hN > 1 {
				want += ringForm(hN, x, a, math.Min(b, float64(hostBW)/2))
			}
			add(fmt.Sprintf("host-staged-k=%d", hk), cfg, HostStaged, s, want)
		}
	}
	return cases
}

func runAllReduce(t testing.TB, cfg Config, alg Algorithm, S units.Bytes, ranks []int) *Result {
	t.Helper()
	return runOp(t, cfg, func(tp *Topology, done func(*Result)) error { return tp.AllReduce(alg, S, ranks, done) })
}

// TestClosedForms checks every collective on an idle network against its
// closed form to 1e-9 relative, for p from 2 to 1024 and sizes from 1 KiB
// to 1 GiB.
func TestClosedForms(t *testing.T) {
	cases := closedFormCases(t)
	for _, c := range cases {
		res := runAllReduce(t, c.cfg, c.alg, c.S, nil)
		got := float64(res.Time())
		if d := math.Abs(got-c.want) / c.want; !(d <= c.tol) {
			t.Errorf("%s: simulated %.12g s, closed form %.12g s (relative error %.2g)", c.name, got, c.want, d)
		}
	}
	t.Logf("%d cases", len(cases))
}

// TestRanksSubset runs ring and halving-doubling on a subset of the ranks
// in a scrambled order, which on a flat fabric must cost the same as on p
// ranks in order.
func TestRanksSubset(t *testing.T) {
	ranks := []int{9, 3, 14, 0, 7, 12, 5}
	S := 4 * units.MiB
	for _, c := range []struct {
		alg  Algorithm
		want float64
	}{
		{Ring, ringForm(7, float64(S), alphaNet(), betaNet())},
		{HalvingDoubling, rhdForm(7, float64(S), alphaNet(), betaNet())},
		{DoubleTree, treeForm(7, float64(S), alphaNet(), betaNet(), true, float64(DefaultTreeChunk))},
	} {
		res := runAllReduce(t, flat(16), c.alg, S, ranks)
		if got := float64(res.Time()); math.Abs(got-c.want) > 1e-9*c.want {
			t.Errorf("%v on %v: %.12g s, want %.12g s", c.alg, ranks, got, c.want)
		}
		if res.Ranks != len(ranks) {
			t.Errorf("%v: Ranks = %d, want %d", c.alg, res.Ranks, len(ranks))
		}
	}
}

// TestResultLinks checks the per-link traffic of a ring all-reduce: every
// NIC sends and receives 2(p−1)/p·S, and the core carries p times that.
func TestResultLinks(t *testing.T) {
	const p = 8
	S := 64 * units.MiB
	var s event.Scheduler
	topo, err := NewTopology(&s, flat(p))
	if err != nil {
		t.Fatal(err)
	}
	var res *Result
	if err := topo.AllReduce(Ring, S, nil, func(r *Result) { res = r }); err != nil {
		t.Fatal(err)
	}
	s.Run()
	want := 2 * float64(p-1) / p * float64(S)
	links := res.Links()
	if len(links) != 2*p+1 {
		t.Fatalf("ring used %d links, want %d", len(links), 2*p+1)
	}
	stats := topo.Network().Stats()
	for _, u := range links {
		w := want
		if u.Link == topo.Core() {
			w *= p
		}
		if math.Abs(float64(u.Bytes)-w) > 1e-9*w {
			t.Errorf("%s carried %v, want %v", u.Link.Name(), float64(u.Bytes), w)
		}
		if busy := w / float64(u.Link.Bandwidth()); math.Abs(float64(u.Busy)-busy) > 1e-9*busy {
			t.Errorf("%s busy %v, want %v", u.Link.Name(), u.Busy, busy)
		}
		// Only this collective ran, so the network's totals agree.
		if g := float64(stats[u.Link.ID()].Bytes); math.Abs(g-w) > 1e-9*w {
			t.Errorf("network stats: %s carried %v, want %v", u.Link.Name(), g, w)
		}
	}
	// A NIC's busy time is below the collective's time: latency is idle.
	if out, _ := topo.NIC(0, 0); float64(out.Bandwidth())*float64(res.Time()) < want {
		t.Errorf("NIC busy longer than the collective")
	}
}

// TestOverlap starts an all-reduce at an arbitrary time on a scheduler with
// other activity and checks it is delayed by exactly its start time.
func TestOverlap(t *testing.T) {
	var s event.Scheduler
	topo, err := NewTopology(&s, twoLevel(32, 8, 2, 1))
	if err != nil {
		t.Fatal(err)
	}
	const start = 0.0123
	var ends []units.Seconds
	s.At(0.001, func() {}) // unrelated activity
	s.At(start, func() {
		if err := topo.AllReduce(Hierarchical, 25*units.MiB, nil, func(r *Result) {
			if r.Start != start {
				t.Errorf("Start = %v, want %v", r.Start, start)
			}
			ends = append(ends, r.End)
		}); err != nil {
			t.Error(err)
		}
	})
	s.Run()
	alone := runAllReduce(t, twoLevel(32, 8, 2, 1), Hierarchical, 25*units.MiB, nil)
	if len(ends) != 1 || math.Abs(float64(ends[0]-start-alone.Time())) > 1e-12 {
		t.Errorf("started at %v ended at %v; alone it takes %v", start, ends, alone.Time())
	}
}

// TestConcurrentCollectives runs two ring all-reduces on disjoint halves of
// a node's ranks at once: they share the node's NIC, so the bandwidth term
// doubles while latency does not.
func TestConcurrentCollectives(t *testing.T) {
	var s event.Scheduler
	cfg := twoLevel(8, 2, 1, 1) // 4 nodes of 2 ranks, one NIC each
	topo, err := NewTopology(&s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	S := 16 * units.MiB
	var got []units.Seconds
	for _, ranks := range [][]int{{0, 2, 4, 6}, {1, 3, 5, 7}} {
		if err := topo.AllReduce(Ring, S, ranks, func(r *Result) { got = append(got, r.Time()) }); err != nil {
			t.Fatal(err)
		}
	}
	s.Run()
	want := ringForm(4, float64(S), alphaNet(), betaNet()/2)
	for _, g := range got {
		if math.Abs(float64(g)-want) > 1e-9*want {
			t.Errorf("concurrent ring took %.12g s, want %.12g s", float64(g), want)
		}
	}
	if len(got) != 2 {
		t.Errorf("%d collectives finished, want 2", len(got))
	}
}

func TestAllReduceErrors(t *testing.T) {
	var s event.Scheduler
	topo, err := NewTopology(&s, twoLevel(16, 4, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	torus := twoLevel(16, 4, 1, 1)
	torus.TorusX = 2
	topo2, err := NewTopology(&s, torus)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		topo  *Topology
		alg   Algorithm
		bytes units.Bytes
		ranks []int
	}{
		{"negative bytes", topo, Ring, -1, nil},
		{"NaN bytes", topo, Ring, units.Bytes(math.NaN()), nil},
		{"Inf bytes", topo, Ring, units.Bytes(math.Inf(1)), nil},
		{"rank out of range", topo, Ring, 1, []int{0, 16}},
		{"negative rank", topo, Ring, 1, []int{-1, 2}},
		{"duplicate rank", topo, Ring, 1, []int{1, 2, 1}},
		{"empty ranks", topo, Ring, 1, []int{}},
		{"unequal nodes", topo, Hierarchical, 1, []int{0, 1, 4}},
		{"torus x", topo2, Torus2D, 1, []int{0, 1, 2, 3, 4}},
		{"no servers", topo2, ParameterServer, 1, nil},
		{"no host memory", topo, HostStaged, 1, nil},
		{"unknown algorithm", topo, Algorithm(99), 1, nil},
	} {
		err := c.topo.AllReduce(c.alg, c.bytes, c.ranks, nil)
		if !errors.Is(err, ErrCollective) {
			t.Errorf("%s: error %v, want one wrapping ErrCollective", c.name, err)
		}
	}
	if s.Len() != 0 {
		t.Errorf("failed requests scheduled %d events", s.Len())
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
		want int // problems reported
	}{
		{"zero ranks", Config{}, 1},
		{"too many ranks", Config{Ranks: MaxRanks + 1, NIC: LinkSpec{Bandwidth: 1}}, 1},
		{"ranks per node", Config{Ranks: 10, RanksPerNode: 4, Intra: LinkSpec{Bandwidth: 1}, NIC: LinkSpec{Bandwidth: 1}}, 1},
		{"missing NIC", Config{Ranks: 4}, 1},
		{"missing intra", Config{Ranks: 4, RanksPerNode: 4}, 1},
		{"no p2p without PCIe", Config{Ranks: 2, RanksPerNode: 2, NoPeerToPeer: true}, 1},
		{"many", Config{Ranks: 4, NIC: LinkSpec{Bandwidth: -1, Latency: units.Seconds(math.NaN())}, Efficiency: 2, Oversubscription: 0.5, Servers: -1, TreeChunk: -3, TorusX: -1, InterNode: Hierarchical}, 8},
		{"too many NICs", Config{Ranks: 4, RanksPerNode: 2, NICsPerNode: 4, Intra: LinkSpec{Bandwidth: 1}, NIC: LinkSpec{Bandwidth: 1}}, 1},
	} {
		var s event.Scheduler
		_, err := NewTopology(&s, c.cfg)
		if !errors.Is(err, ErrConfig) {
			t.Errorf("%s: error %v, want one wrapping ErrConfig", c.name, err)
			continue
		}
		if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n != c.want {
			t.Errorf("%s: %d problems, want %d: %v", c.name, n, c.want, err)
		}
	}
}

func TestParseAlgorithm(t *testing.T) {
	for a := Ring; a <= NCCL; a++ {
		b, err := ParseAlgorithm(a.String())
		if err != nil || b != a {
			t.Errorf("ParseAlgorithm(%q) = %v, %v", a.String(), b, err)
		}
		var c Algorithm
		text, _ := a.MarshalText()
		if err := c.UnmarshalText(text); err != nil || c != a {
			t.Errorf("text round trip of %v gave %v, %v", a, c, err)
		}
	}
	if _, err := ParseAlgorithm("rings"); !errors.Is(err, ErrCollective) {
		t.Errorf("ParseAlgorithm(rings) error %v", err)
	}
}

// TestDeterminism runs the same collectives twice and requires bit-equal
// times.
func TestDeterminism(t *testing.T) {
	for _, alg := range []Algorithm{Ring, HalvingDoubling, DoubleTree, Hierarchical} {
		a := runAllReduce(t, twoLevel(96, 8, 2, 2), alg, 7*units.MiB, nil)
		b := runAllReduce(t, twoLevel(96, 8, 2, 2), alg, 7*units.MiB, nil)
		if a.End != b.End || a.Steps != b.Steps {
			t.Errorf("%v: %v then %v", alg, a.End, b.End)
		}
	}
}

// TestSingleRank: an all-reduce on one rank costs nothing, except for the
// parameter server, which still pushes and pulls (TensorFlow runs its
// distributed machinery even on one GPU).
func TestSingleRank(t *testing.T) {
	for _, alg := range []Algorithm{Ring, HalvingDoubling, Tree, DoubleTree, Hierarchical, Torus2D} {
		if r := runAllReduce(t, flat(4), alg, units.MiB, []int{2}); r.Time() != 0 || r.Steps != 0 {
			t.Errorf("%v on one rank took %v in %d steps", alg, r.Time(), r.Steps)
		}
	}
	r := runAllReduce(t, flat(1), ParameterServer, units.MiB, nil)
	want := psForm(1, 4, float64(units.MiB), alphaNet(), betaNet(), betaNet())
	if math.Abs(float64(r.Time())-want) > 1e-9*want {
		t.Errorf("parameter server on one rank took %v, want %v", r.Time(), want)
	}
}

// TestCollectiveMonotone: on an idle network every collective is a
// sequence of single flow groups, so a lower bandwidth anywhere never
// makes it finish earlier.
func TestCollectiveMonotone(t *testing.T) {
	base := twoLevel(64, 8, 2, 1)
	base.Servers, base.PCIe, base.HostMemory = 4, LinkSpec{pcieBW, pcieLat}, hostBW
	lower := []struct {
		name string
		fn   func(*Config)
	}{
		{"intra", func(c *Config) { c.Intra.Bandwidth /= 3 }},
		{"NIC", func(c *Config) { c.NIC.Bandwidth /= 3 }},
		{"PCIe", func(c *Config) { c.PCIe.Bandwidth /= 3 }},
		{"host memory", func(c *Config) { c.HostMemory /= 3 }},
		{"server NIC", func(c *Config) { c.ServerNIC = c.NIC.Bandwidth / 3 }},
		{"oversubscription", func(c *Config) { c.Oversubscription = 3 }},
		{"efficiency", func(c *Config) { c.Efficiency /= 3 }},
	}
	for alg := Ring; alg <= HostStaged; alg++ {
		for _, S := range []units.Bytes{4 * units.KiB, 25 * units.MiB} {
			t0 := runAllReduce(t, base, alg, S, nil).Time()
			for _, l := range lower {
				cfg := base
				l.fn(&cfg)
				if t1 := runAllReduce(t, cfg, alg, S, nil).Time(); t1 < t0 {
					t.Errorf("%v, %v: lower %s bandwidth took %v, less than %v", alg, S, l.name, t1, t0)
				}
			}
		}
	}
}

// TestRingChannels: a ring over 2 nodes of 4 ranks runs as many rings as a
// node has NICs, each with S/c, each crossing between the nodes on
// another NIC; the NICs are the bottleneck (their 11.25 GB/s against 150
// GB/s inside the node, shared by at most c − 1 rings), so the time is a
// ring of S/c over the fabric, 2(q−1)(α + S/(c·q·β)).
func TestRingChannels(t *testing.T) {
	const S = 64 * units.MiB
	for _, nics := range []int{1, 2, 4} {
		res := runAllReduce(t, twoLevel(8, 4, nics, 1), Ring, S, nil)
		want := ringForm(8, float64(S)/float64(nics), alphaNet(), betaNet())
		if got := float64(res.Time()); !near(got, want, 1e-9) {
			t.Errorf("%d NICs: %v s, want %v s", nics, got, want)
		}
	}
	// The ranks of one node a ring: the NICs take no part, one ring.
	res := runAllReduce(t, twoLevel(8, 4, 4, 1), Ring, S, []int{0, 1, 2, 3})
	if want := ringForm(4, float64(S), float64(intraLat), float64(intraBW)); !near(float64(res.Time()), want, 1e-9) {
		t.Errorf("one node: %v s, want %v s", float64(res.Time()), want)
	}
}
