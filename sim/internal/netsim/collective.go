package netsim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"scaleplan/internal/units"
)

// ErrCollective is wrapped by the errors the collectives (AllReduce,
// ReduceScatter, AllGather, Broadcast, AllToAll, SendRecv) and AsyncPS
// return for a request the topology cannot run.
var ErrCollective = errors.New("bad collective")

// Algorithm is an all-reduce algorithm. The package documentation gives
// each one's schedule and closed form.
type Algorithm int

const (
	// Ring is ring all-reduce: a reduce-scatter and an all-gather of
	// p-1 steps of S/p each around a ring of the ranks in the order given.
	Ring Algorithm = iota
	// HalvingDoubling is Rabenseifner's recursive halving (reduce-scatter)
	// and doubling (all-gather), with the fix-up for p not a power of two.
	HalvingDoubling
	// Tree is a pipelined binary-tree reduce followed by a pipelined
	// binary-tree broadcast.
	Tree
	// DoubleTree is NCCL's double binary tree: two complementary binary
	// trees, each reducing and broadcasting half of the data.
	DoubleTree
	// Hierarchical is a reduce-scatter inside each node, an all-reduce of
	// S/k between nodes (Config.InterNode) and an all-gather inside each
	// node, for k ranks per node.
	Hierarchical
	// Torus2D is the two-dimensional ring all-reduce of IPU-PODs: a
	// reduce-scatter along the first dimension, a ring all-reduce of S/X
	// along the second and an all-gather along the first.
	Torus2D
	// ParameterServer is a synchronous parameter server with
	// Config.Servers shards: every worker pushes S/k to each shard, then
	// pulls S/k from each.
	ParameterServer
	// HostStaged reduces through host memory, for devices without
	// peer-to-peer access: copy to host, sum on the CPU, all-reduce
	// between hosts, copy back.
	HostStaged
	// NCCL runs each call as NCCL does: the algorithm and protocol its
	// tuning model picks for the size, ranks and links (Config.NCCL), run
	// as flows (see NCCLChoose and the package documentation).
	NCCL
)

var algorithmNames = [...]string{"ring", "halving-doubling", "tree", "double-tree", "hierarchical", "torus-2d", "parameter-server", "host-staged", "nccl"}

// String returns the algorithm's name as ParseAlgorithm reads it.
func (a Algorithm) String() string {
	if a < 0 || int(a) >= len(algorithmNames) {
		return fmt.Sprintf("Algorithm(%d)", int(a))
	}
	return algorithmNames[a]
}

// ParseAlgorithm returns the algorithm named s: ring, halving-doubling,
// tree, double-tree, hierarchical, torus-2d, parameter-server,
// host-staged or nccl.
func ParseAlgorithm(s string) (Algorithm, error) {
	for i, n := range algorithmNames {
		if s == n {
			return Algorithm(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown algorithm %q; want one of %q", ErrCollective, s, algorithmNames[:])
}

// MarshalText returns the algorithm's name.
func (a Algorithm) MarshalText() ([]byte, error) {
	if a < 0 || int(a) >= len(algorithmNames) {
		return nil, fmt.Errorf("%w: unknown algorithm %d", ErrCollective, int(a))
	}
	return []byte(a.String()), nil
}

// UnmarshalText parses a name as ParseAlgorithm does.
func (a *Algorithm) UnmarshalText(b []byte) error {
	x, err := ParseAlgorithm(string(b))
	if err != nil {
		return err
	}
	*a = x
	return nil
}

// Result is the outcome of one collective.
type Result struct {
	Op        Op            // the collective: OpAllReduce for AllReduce
	Algorithm Algorithm     // Ring for AllToAll and SendRecv, which have one schedule
	NCCL      NCCLChoice    // with Algorithm NCCL, what it chose; else zero
	Bytes     units.Bytes   // the message size S
	Ranks     int           // the number of ranks p
	Start     units.Seconds // when the collective was called
	End       units.Seconds // when the last rank had the result
	Steps     int           // flows simulated: synchronous rounds, each one flow group

	uses []stepBytes
}

// stepBytes is the bytes per stream a path carried during a collective.
type stepBytes struct {
	path  *Path
	bytes float64
}

// Time returns End − Start.
func (r *Result) Time() units.Seconds { return r.End - r.Start }

// Links returns the traffic the collective put on each link it used, in
// link order. Busy is the link's bytes over its bandwidth: the time it was
// busy with this collective, counting a link at half rate for 2 s as 1 s.
func (r *Result) Links() []LinkUsage {
	if len(r.uses) == 0 {
		return nil
	}
	net := r.uses[0].path.net
	bytes := make([]float64, len(net.links))
	for _, u := range r.uses {
		for _, l := range u.path.uses {
			bytes[l.Link.id] += float64(u.bytes * float64(l.Weight))
		}
	}
	var out []LinkUsage
	for i, b := range bytes {
		if b > 0 {
			l := net.links[i]
			out = append(out, LinkUsage{Link: l, Bytes: units.Bytes(b), Busy: units.Seconds(b / l.bw)})
		}
	}
	return out
}

// step is one synchronous round repeated: a flow of bytes on every stream
// of path, started when the previous round has finished.
type step struct {
	path   *Path
	bytes  float64
	repeat int
}

// plan is a collective being built.
type plan struct {
	t     *Topology
	key   string // identifies the ranks, for the path cache
	steps []step
}

func (p *plan) add(path *Path, bytes float64, repeat int) {
	if repeat <= 0 {
		return
	}
	if n := len(p.steps); n > 0 && p.steps[n-1].path == path && p.steps[n-1].bytes == bytes {
		p.steps[n-1].repeat += repeat
		return
	}
	p.steps = append(p.steps, step{path: path, bytes: bytes, repeat: repeat})
}

// path returns the cached path named by the plan's ranks and name, built by
// build.
func (p *plan) path(name string, build func()) *Path {
	return p.t.cached(p.key+"/"+name, build)
}

// AllReduce starts an all-reduce of bytes among ranks (nil means all ranks,
// in order) with algorithm alg at the scheduler's current time, and calls
// done (if not nil) with the result when the last rank has the reduced
// data. It may run alongside any other flows on the topology's network,
// sharing their links. It returns an error wrapping ErrCollective if the
// request is invalid; then nothing is scheduled.
func (t *Topology) AllReduce(alg Algorithm, bytes units.Bytes, ranks []int, done func(*Result)) error {
	if alg == NCCL {
		return t.ncclRun(OpAllReduce, bytes, ranks, done)
	}
	if !nonNegative(float64(bytes)) {
		return fmt.Errorf("%w: bytes %v is not a non-negative finite number", ErrCollective, float64(bytes))
	}
	key, ranks, err := t.rankKey(ranks)
	if err != nil {
		return err
	}
	pk := planKey{alg: alg, ranks: key, bytes: float64(bytes)}
	steps, ok := t.plans[pk]
	if !ok {
		var err error
		if steps, err = t.plan(alg, key, ranks, float64(bytes)); err != nil {
			return err
		}
		t.plans[pk] = steps
	}
	r := &run{t: t, steps: steps, done: done, res: &Result{Algorithm: alg, Bytes: bytes, Ranks: len(ranks), Start: t.s.Now()}, label: t.net.Label}
	r.start()
	return nil
}

// planKey names a plan in the topology's cache: collectives of the same
// size on the same ranks (gradient buckets, step after step) reuse it.
type planKey struct {
	op    Op
	alg   Algorithm
	ranks string
	bytes float64
	root  int // Broadcast's root, −1 for the other collectives but AllReduce's 0
}

// plan returns the steps of an all-reduce.
func (t *Topology) plan(alg Algorithm, key string, ranks []int, S float64) ([]step, error) {
	p := &plan{t: t, key: alg.String() + "/" + key}
	switch alg {
	case Ring:
		p.ring([][]int{ranks}, S, "")
	case HalvingDoubling:
		p.halvingDoubling([][]int{ranks}, S, "")
	case Tree, DoubleTree:
		p.tree([][]int{ranks}, S, alg == DoubleTree, "")
	case Hierarchical:
		nodes := t.byNode(ranks)
		if err := evenNodes(nodes, t); err != nil {
			return nil, err
		}
		p.hierarchical(nodes, S)
	case Torus2D:
		x, err := t.torusX(len(ranks))
		if err != nil {
			return nil, err
		}
		p.torus(ranks, x, S)
	case ParameterServer:
		if t.cfg.Servers == 0 {
			return nil, fmt.Errorf("%w: parameter-server needs servers; the topology has 0", ErrCollective)
		}
		p.parameterServer(ranks, S)
	case HostStaged:
		if t.hostMem == nil || t.pcieUp == nil {
			return nil, fmt.Errorf("%w: host-staged needs PCIe and host memory bandwidths", ErrCollective)
		}
		p.hostStaged(t.byNode(ranks), S)
	default:
		return nil, fmt.Errorf("%w: unknown algorithm %d", ErrCollective, int(alg))
	}
	return p.steps, nil
}

// run executes a plan's steps one after another.
type run struct {
	t     *Topology
	steps []step
	i     int // next step
	left  int // repeats left of step i-1
	done  func(*Result)
	res   *Result
	next  func(*Flow)
	label string // the network's Label when the collective started
}

func (r *run) start() {
	for _, s := range r.steps {
		r.res.uses = append(r.res.uses, stepBytes{s.path, float64(s.bytes * float64(s.repeat))})
		r.res.Steps += s.repeat
	}
	if len(r.steps) == 0 {
		r.t.s.After(0, r.finish)
		return
	}
	r.next = r.advance
	r.advance(nil)
}

func (r *run) advance(*Flow) {
	if r.left == 0 {
		if r.i == len(r.steps) {
			r.finish()
			return
		}
		r.i++
		r.left = r.steps[r.i-1].repeat
	}
	r.left--
	s := &r.steps[r.i-1]
	r.t.net.transfer(s.path, units.Bytes(s.bytes), r.label, r.next, true)
}

func (r *run) finish() {
	r.res.End = r.t.s.Now()
	if r.done != nil {
		r.done(r.res)
	}
}

// rankKey checks ranks and returns a key naming them, and the ranks (all
// of them if nil).
func (t *Topology) rankKey(ranks []int) (string, []int, error) {
	if ranks == nil || slices.Equal(ranks, t.all) {
		return "*", t.all, nil
	}
	if len(ranks) == 0 {
		return "", nil, fmt.Errorf("%w: no ranks", ErrCollective)
	}
	seen := make(map[int]bool, len(ranks))
	buf := make([]byte, 0, 2*len(ranks))
	for _, r := range ranks {
		if r < 0 || r >= t.cfg.Ranks {
			return "", nil, fmt.Errorf("%w: rank %d is outside [0, %d)", ErrCollective, r, t.cfg.Ranks)
		}
		if seen[r] {
			return "", nil, fmt.Errorf("%w: rank %d appears twice", ErrCollective, r)
		}
		seen[r] = true
		buf = binary.AppendUvarint(buf, uint64(r))
	}
	return string(buf), ranks, nil
}

// byNode groups ranks by node, nodes in order of first appearance.
func (t *Topology) byNode(ranks []int) [][]int {
	index := make(map[int]int)
	var nodes [][]int
	for _, r := range ranks {
		a := t.Node(r)
		i, ok := index[a]
		if !ok {
			i = len(nodes)
			index[a] = i
			nodes = append(nodes, nil)
		}
		nodes[i] = append(nodes[i], r)
	}
	return nodes
}

// even reports whether every group holds as many ranks.
func even(groups [][]int) bool {
	for _, g := range groups[1:] {
		if len(g) != len(groups[0]) {
			return false
		}
	}
	return true
}

// evenNodes returns an error if the nodes hold different numbers of the
// ranks: Hierarchical splits S into k pieces inside every node and
// reduces piece j among the ranks j of all nodes (the rails), which needs
// k ranks on every node. NCCL's own algorithms, ring and tree, run on
// uneven nodes; so do this package's Ring, Tree, DoubleTree and
// HalvingDoubling.
func evenNodes(nodes [][]int, t *Topology) error {
	if even(nodes) {
		return nil
	}
	i := slices.IndexFunc(nodes, func(g []int) bool { return len(g) != len(nodes[0]) })
	return fmt.Errorf("%w: hierarchical needs as many of the ranks on every node, but node %d holds %d and node %d holds %d; use ring, tree or double-tree",
		ErrCollective, t.Node(nodes[0][0]), len(nodes[0]), t.Node(nodes[i][0]), len(nodes[i]))
}

func (t *Topology) torusX(p int) (int, error) {
	x := t.cfg.TorusX
	if x == 0 {
		if k := t.cfg.RanksPerNode; k > 1 && p%k == 0 {
			return k, nil
		}
		x = 1
		for d := 1; d*d <= p; d++ {
			if p%d == 0 {
				x = d
			}
		}
		return x, nil
	}
	if p%x != 0 {
		return 0, fmt.Errorf("%w: torus x %d does not divide %d ranks", ErrCollective, x, p)
	}
	return x, nil
}

// allReduce adds an all-reduce of S on each group with algorithm alg.
func (p *plan) allReduce(alg Algorithm, groups [][]int, S float64, name string) {
	switch alg {
	case HalvingDoubling:
		p.halvingDoubling(groups, S, name)
	case Tree, DoubleTree:
		p.tree(groups, S, alg == DoubleTree, name)
	default:
		p.ring(groups, S, name)
	}
}

// ringPath is the path of one ring step on every group: each rank sends to
// the next.
func (p *plan) ringPath(groups [][]int, name string) *Path {
	return p.path(name+"ring", func() {
		for _, g := range groups {
			for i, r := range g {
				p.t.route(r, g[(i+1)%len(g)])
			}
		}
	})
}

// ring adds a ring all-reduce of S on each group: 2(q-1) steps of S/q.
// A group over several nodes with c NICs each runs c rings at once, each
// carrying S/c (NCCL's channels): ring j takes each node's k ranks in
// their order turned by j·k/c, so that it crosses from node to node on
// the NIC of another rank than every other ring does, and the c rings use
// all of the nodes' NICs.
func (p *plan) ring(groups [][]int, S float64, name string) {
	p.rings(groups, S, name, 2*(len(groups[0])-1))
}

// rings adds n steps of ring's c rings (one per NIC, as ring describes) on
// each group of q ranks: in each step every rank sends S/(q·c) to its
// successor on each ring.
func (p *plan) rings(groups [][]int, S float64, name string, n int) {
	q := len(groups[0])
	if q < 2 {
		return
	}
	c := p.channels(groups[0])
	if c == 1 {
		p.add(p.ringPath(groups, name), S/float64(q), n)
		return
	}
	path := p.path(fmt.Sprintf("%srings%d", name, c), func() {
		for _, g := range groups {
			nodes := p.t.byNode(g)
			order := make([]int, 0, len(g))
			for j := range c {
				order = order[:0]
				for _, nd := range nodes {
					k := len(nd)
					for i := range k {
						order = append(order, nd[(i+j*k/c)%k])
					}
				}
				for i, r := range order {
					p.t.route(r, order[(i+1)%len(order)])
				}
			}
		}
	})
	p.add(path, S/float64(q*c), n)
}

// channels returns the rings a ring all-reduce over the ranks of g runs:
// when g spans several nodes, as many as a node has NICs, but no more than
// the fewest of g's ranks on a node; else 1. NCCL likewise runs the
// smallest number of channels any rank found (NVIDIA/nccl src/init.cc:
// each graph's nChannels is the minimum over the ranks').
func (p *plan) channels(g []int) int {
	nodes := p.t.byNode(g)
	if len(nodes) < 2 {
		return 1
	}
	fewest := len(g)
	for _, nd := range nodes {
		fewest = min(fewest, len(nd))
	}
	return max(1, min(p.t.cfg.NICsPerNode, fewest))
}

// halvingDoubling adds Rabenseifner's all-reduce of S on each group. With
// q = q' + r ranks, q' = 2^m ≤ q < 2^(m+1), ranks 2i+1 (i < r) first send
// all of S to rank 2i, the q' remaining ranks reduce-scatter by recursive
// halving (step j exchanges S/2^(j+1) with the rank at distance 2^j) and
// all-gather by recursive doubling, and ranks 2i send the result back.
func (p *plan) halvingDoubling(groups [][]int, S float64, name string) {
	q := len(groups[0])
	if q < 2 {
		return
	}
	m := bits.Len(uint(q)) - 1
	q2 := 1 << m
	r := q - q2
	act := make([]int, 0, q2) // positions taking part in the power-of-two phase
	for i := range r {
		act = append(act, 2*i)
	}
	for i := 2 * r; i < q; i++ {
		act = append(act, i)
	}
	if r > 0 {
		p.add(p.path(name+"rhd-in", func() {
			for _, g := range groups {
				for i := range r {
					p.t.route(g[2*i+1], g[2*i])
				}
			}
		}), S, 1)
	}
	exchange := p.exchanges(groups, act, name)
	for j := range m {
		p.add(exchange[j], math.Ldexp(S, -(j+1)), 1)
	}
	for j := m - 1; j >= 0; j-- {
		p.add(exchange[j], math.Ldexp(S, -(j+1)), 1)
	}
	if r > 0 {
		p.add(p.path(name+"rhd-out", func() {
			for _, g := range groups {
				for i := range r {
					p.t.route(g[2*i], g[2*i+1])
				}
			}
		}), S, 1)
	}
}

// exchanges returns the paths of recursive halving and doubling on the
// positions act (a power of two of them) of each group: in exchange j
// every position swaps with the one at distance 2^j.
func (p *plan) exchanges(groups [][]int, act []int, name string) []*Path {
	m := bits.Len(uint(len(act))) - 1
	exchange := make([]*Path, m)
	for j := range m {
		exchange[j] = p.path(fmt.Sprintf("%srhd%d", name, j), func() {
			for _, g := range groups {
				for x := range act {
					p.t.route(g[act[x]], g[act[x^(1<<j)]])
				}
			}
		})
	}
	return exchange
}

// tree adds a pipelined tree all-reduce of S on each group: a reduce and
// then a broadcast, each in n = d + C − 1 level-synchronous ticks. The
// tree over positions 0..q-1 is a heap (the parent of position i is
// (i−1)/2, depth d = ⌊log2 q⌋); the double tree adds the heap over the
// positions mirrored (rank g[q−1−i] at position i) and gives each tree half
// of S. In reduce tick τ the positions at depth l send chunk τ − (d − l) to
// their parents; in broadcast tick τ the positions at depth l receive chunk
// τ − (l − 1) from theirs.
func (p *plan) tree(groups [][]int, S float64, double bool, name string) {
	q := len(groups[0])
	if q < 2 {
		return
	}
	trees, St := 1, S
	if double {
		trees, St = 2, S/2
	}
	C, chunk := p.chunks(St)
	d := bits.Len(uint(q)) - 1
	levels := p.treeLevels(groups, trees, name)
	for tau := range d + C - 1 {
		p.add(levels(true, max(1, d-tau), min(d, d-tau+C-1)), chunk, 1)
	}
	p.treeDown(levels, d, C, chunk)
}

// chunks splits S into the pipeline's C chunks of c = S/C, C =
// ⌈S/TreeChunk⌉ between 1 and MaxChunks.
func (p *plan) chunks(S float64) (int, float64) {
	C := 1
	if S > 0 {
		c := math.Ceil(S / float64(p.t.cfg.TreeChunk))
		C = int(min(max(c, 1), MaxChunks))
	}
	return C, S / float64(C)
}

// treeDown adds the n = d + C − 1 ticks of a pipelined tree broadcast of
// C chunks: in tick τ the positions at depth l receive chunk τ − (l − 1)
// from their parents.
func (p *plan) treeDown(levels func(up bool, lo, hi int) *Path, d, C int, chunk float64) {
	for tau := range d + C - 1 {
		p.add(levels(false, max(1, tau-C+2), min(d, tau+1)), chunk, 1)
	}
}

// treeLevels returns a function giving the path on which the positions of
// depths lo..hi of every tree over each group send to their parents (up)
// or receive from them.
func (p *plan) treeLevels(groups [][]int, trees int, name string) func(up bool, lo, hi int) *Path {
	q := len(groups[0])
	memo := make(map[[3]int]*Path)
	return func(up bool, lo, hi int) *Path {
		dir := 0
		if up {
			dir = 1
		}
		if path, ok := memo[[3]int{dir, lo, hi}]; ok {
			return path
		}
		path := p.path(fmt.Sprintf("%stree%d/%d/%d-%d", name, trees, dir, lo, hi), func() {
			for _, g := range groups {
				for k := range trees {
					rank := func(i int) int {
						if k == 1 {
							return g[q-1-i]
						}
						return g[i]
					}
					for l := lo; l <= hi; l++ {
						for i := 1<<l - 1; i <= min(1<<(l+1)-2, q-1); i++ {
							if up {
								p.t.route(rank(i), rank((i-1)/2))
							} else {
								p.t.route(rank((i-1)/2), rank(i))
							}
						}
					}
				}
			}
		})
		memo[[3]int{dir, lo, hi}] = path
		return path
	}
}

// ringHalf adds a reduce-scatter or all-gather ring on each group: q−1
// steps of S/q.
func (p *plan) ringHalf(groups [][]int, S float64, name string) {
	q := len(groups[0])
	if q < 2 {
		return
	}
	p.add(p.ringPath(groups, name), S/float64(q), q-1)
}

// transpose returns the groups formed by the j-th member of each group.
func transpose(groups [][]int) [][]int {
	k := len(groups[0])
	out := make([][]int, k)
	for j := range k {
		out[j] = make([]int, len(groups))
		for a, g := range groups {
			out[j][a] = g[j]
		}
	}
	return out
}

// hierarchical adds a reduce-scatter inside each node, an all-reduce of
// S/k between nodes among the ranks with the same place in their nodes,
// and an all-gather inside each node.
func (p *plan) hierarchical(nodes [][]int, S float64) {
	k := len(nodes[0])
	p.ringHalf(nodes, S, "intra-")
	if len(nodes) > 1 {
		p.allReduce(p.t.cfg.InterNode, transpose(nodes), S/float64(k), "inter-")
	}
	p.ringHalf(nodes, S, "intra-")
}

// torus adds the 2D ring all-reduce on an x by p/x grid of ranks, rows of
// x consecutive ranks.
func (p *plan) torus(ranks []int, x int, S float64) {
	var rows [][]int
	for i := 0; i < len(ranks); i += x {
		rows = append(rows, ranks[i:i+x])
	}
	p.ringHalf(rows, S, "row-")
	if len(rows) > 1 {
		p.ring(transpose(rows), S/float64(x), "column-")
	}
	p.ringHalf(rows, S, "row-")
}

// parameterServer adds a push of S/k from every worker to each of the k
// shards, then a pull of S/k from each shard to every worker.
func (p *plan) parameterServer(workers []int, S float64) {
	k := p.t.cfg.Servers
	push := p.path("push", func() {
		for _, w := range workers {
			for s := range k {
				p.t.toServer(w, s)
			}
		}
	})
	pull := p.path("pull", func() {
		for _, w := range workers {
			for s := range k {
				p.t.fromServer(s, w)
			}
		}
	})
	p.add(push, S/float64(k), 1)
	p.add(pull, S/float64(k), 1)
}

// hostStaged adds the host-staged all-reduce: every device copies S to
// its host; each host with k ≥ 2 devices sums them, reading k·S and
// writing S of host memory; with N ≥ 2 nodes the hosts run a ring
// all-reduce of S striped over their NICs; every device copies S back.
//
// With nodes holding different numbers k_n of the ranks, host n's sum is
// one stream per read and write of S on its host memory, k_n + 1 of them,
// which takes the (k_n + 1)·S/B_m of the even case; the step ends with the
// busiest host.
func (p *plan) hostStaged(nodes [][]int, S float64) {
	k, N := len(nodes[0]), len(nodes)
	if k*N < 2 {
		return
	}
	t := p.t
	p.add(p.path("d2h", func() {
		for _, g := range nodes {
			for _, r := range g {
				t.b.Add(0, t.pcieUp[r], t.hostMem[t.Node(r)])
			}
		}
	}), S, 1)
	if even(nodes) {
		if k > 1 {
			p.add(p.path("sum", func() {
				for _, g := range nodes {
					t.b.Add(0, t.hostMem[t.Node(g[0])])
				}
			}), float64(k+1)*S, 1)
		}
	} else {
		p.add(p.path("sum", func() {
			for _, g := range nodes {
				if len(g) > 1 {
					for range len(g) + 1 {
						t.b.Add(0, t.hostMem[t.Node(g[0])])
					}
				}
			}
		}), S, 1)
	}
	if N > 1 {
		nics := t.cfg.NICsPerNode
		ring := p.path("host-ring", func() {
			for a, g := range nodes {
				x, y := t.Node(g[0]), t.Node(nodes[(a+1)%N][0])
				for i := range nics {
					t.between(t.hostMem[x], t.nicOut[x][i], t.fabric(i, i), t.nicIn[y][i], t.hostMem[y])
				}
			}
		})
		p.add(ring, S/float64(N*nics), 2*(N-1))
	}
	p.add(p.path("h2d", func() {
		for _, g := range nodes {
			for _, r := range g {
				t.b.Add(0, t.hostMem[t.Node(r)], t.pcieDown[r])
			}
		}
	}), S, 1)
}
