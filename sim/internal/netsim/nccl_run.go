package netsim

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"scaleplan/internal/units"
)

// ncclRun starts op of bytes on ranks (nil means all) as NCCL runs it:
// the algorithm and protocol NCCLChoose picks, run as flows. A broadcast
// is from the first rank; a send/recv has every rank send S to the next
// in order, as nccl-tests' sendrecv does.
func (t *Topology) ncclRun(op Op, bytes units.Bytes, ranks []int, done func(*Result)) error {
	if !nonNegative(float64(bytes)) {
		return fmt.Errorf("%w: %v: bytes %v is not a non-negative finite number", ErrCollective, op, float64(bytes))
	}
	key, ranks, err := t.rankKey(ranks)
	if err != nil {
		return fmt.Errorf("%v: %w", op, err)
	}
	S := float64(bytes)
	// The choice depends only on the plan's key and the configuration,
	// so a cached plan keeps the choice it was made with.
	pk := planKey{op: op, alg: NCCL, ranks: key, bytes: S, root: -1}
	steps, ok := t.plans[pk]
	ch := t.ncclChoices[pk]
	if !ok {
		var g ncclGeom
		if ch, g, err = t.ncclChoose(op, S, ranks); err != nil {
			return err
		}
		p := &plan{t: t, key: fmt.Sprintf("nccl/%v/%v/%v/%s", op, ch.Algorithm, ch.Protocol, key)}
		if err := p.nccl(op, ch, g, ranks, S); err != nil {
			return err
		}
		steps = p.steps
		t.plans[pk], t.ncclChoices[pk] = steps, ch
	}
	res := &Result{Op: op, Algorithm: NCCL, NCCL: ch, Bytes: bytes, Ranks: len(ranks), Start: t.s.Now()}
	r := &run{t: t, steps: steps, done: done, res: res, label: t.net.Label}
	r.start()
	return nil
}

// nccl adds the steps of op by ch on ranks: the base latency once, then
// the algorithm's steps, each paying the protocol's hop latency and
// carrying the protocol's wire bytes (Protocol.wire times the payload).
func (p *plan) nccl(op Op, ch NCCLChoice, g ncclGeom, ranks []int, S float64) error {
	pr := int(ch.Protocol) - 1
	w := ch.Protocol.wire()
	if len(ranks) < 2 {
		return nil
	}
	// On one node a ring or tree call moves its bytes on the channels its
	// size fills, nc of the C: tuning.cc's bus bandwidth is the sum of its
	// channels' (busBw = nChannels·bw), so nc of them move nc/C of it.
	share := 1.0
	if C := p.t.cfg.NCCL.Channels; C > 0 && g.nodes == 1 && (ch.Algorithm == NCCLRing || ch.Algorithm == NCCLTree) {
		a := tRing
		if ch.Algorithm == NCCLTree {
			a = tTree
		}
		share = float64(ncclChannelsUsed(a, pr, g, S, C)) / float64(C)
	}
	switch {
	case op == OpAllToAll || op == OpSendRecv:
		p.ncclP2P(op, pr, g, ranks, S, w)
	case ch.Algorithm == NCCLRing:
		p.ncclRing(op, pr, g, ranks, S, w/share)
	case ch.Algorithm == NCCLTree:
		return p.ncclTree(pr, g, ranks, S, w/share)
	case ch.Algorithm == NCCLNVLS:
		return p.ncclNVLS(tNVLS, g, ranks, S)
	case ch.Algorithm == NCCLCollNet:
		return p.ncclCollNet(g, ranks, S)
	case ch.Algorithm == NCCLNVLSTree:
		return p.ncclNVLS(tNVLSTree, g, ranks, S)
	}
	return nil
}

// ncclNVLS adds NCCL's NVLS (a = tNVLS, one node) or NVLS tree
// (tNVLSTree) all-reduce: tuning.cc's latency once, then one step in
// which every rank, the head of one of its node's k channels
// (ncclNVLSChannel), moves its 1/k share of S:
//
//   - through its own port, k − 1 times (NVLS: the switch reads the
//     share of every other head from it, and multicasts the reduced
//     shares back to it);
//   - for the NVLS tree, through its NIC to the rank of its place on the
//     next node, m times: m = 1 on two nodes (each of the double binary
//     tree's two trees moves half the share up and back between the
//     pair), m = 2 on more (a node interior in one tree takes two
//     children's halves and sends its parent one, and back).
//
// Every stream moves at most the channel's algorithm bandwidth,
// b·p/(2(p−1)) with b the channel's bus bandwidth: the per-channel bound
// of NCCL's tuning model (nvlsEfficiency, and for the NVLS tree
// perChMaxNVLSTreeBw, both of which NVIDIA measured), which its kernels
// reach before the links do. On an idle network the call takes tuning.cc's
// time, L + S/(k·b·p/(2(p−1))); links shared with other flows slow it
// further.
func (p *plan) ncclNVLS(a int, g ncclGeom, ranks []int, S float64) error {
	nodes := p.t.byNode(ranks)
	if !even(nodes) {
		return fmt.Errorf("%w: NCCL %v: the nodes hold different numbers of the ranks (ring runs on such placements)", ErrCollective, ncclAlgOf(a))
	}
	p.base(ncclLatency(OpAllReduce, a, 2, g))
	k, m := len(nodes[0]), 0
	switch {
	case len(nodes) > 2:
		m = 2
	case len(nodes) == 2:
		m = 1
	}
	t := p.t
	path := p.path(fmt.Sprintf("nvls/%d", m), func() {
		for n, nd := range nodes {
			next := nodes[(n+1)%len(nodes)]
			for i, r := range nd {
				t.b.Add(0, slices.Repeat([]*Link{t.devOut[r], t.devIn[r]}, k-1)...)
				for range m {
					t.route(r, next[i])
				}
			}
		}
	})
	lim := ncclNVLSChannel(a, g) * float64(g.p) / float64(2*(g.p-1))
	p.add(p.limited(p.retimed(path, 0), lim), S/float64(k), 1)
	return nil
}

// limited returns a copy of path whose streams move at most lim bytes/s,
// cached.
func (p *plan) limited(path *Path, lim float64) *Path {
	key := fmt.Sprintf("nccl-limit/%p/%v", path, lim)
	if q, ok := p.t.paths[key]; ok {
		return q
	}
	q := &Path{net: path.net, uses: path.uses, latency: path.latency, streams: path.streams, share: min(path.share, lim), limit: min(path.limit, lim)}
	p.t.paths[key] = q
	return q
}

// base adds a step of no bytes that waits lat seconds.
func (p *plan) base(lat float64) {
	if lat > 0 {
		p.add(p.t.cached(fmt.Sprintf("nccl-base/%v", lat), func() { p.t.b.Add(units.Seconds(lat)) }), 0, 1)
	}
}

// ncclRing adds the ring's steps: for all-reduce, reduce-scatter and
// all-gather those of Ring (one ring per NIC), each paying the mean of
// tuning.cc's hop latencies over the ring's steps inside and between
// nodes; for broadcast a pipelined chain from the first rank, each tick
// paying one hop. With LL on one node the streams move at most
// tuning.cc's llMaxBw (ncclLLMaxBus) of payload: a ring step's stream
// carries a rank's share S/p, so its payload rate is the ring's bus
// bandwidth (a broadcast chain's, S at the algorithm bandwidth, which
// tuning.cc sets to the bus bandwidth), and w, the wire bytes a payload
// byte times C/nc for the channels used, makes lim = w·llMaxBw hold it to
// min(llMaxBw, nc/C·B/w_P).
func (p *plan) ncclRing(op Op, pr int, g ncclGeom, ranks []int, S, w float64) {
	f := ncclPlateau(op, tRing, pr, g, S)
	base := ncclBase[tRing][pr] * 1e-6 * f
	p.base(base)
	from := len(p.steps)
	if op == OpBroadcast {
		C, c := p.chunks(S)
		p.chain(ranks, C, c)
		p.retime(from, ncclHopLat(pr, g)*1e-6, w)
	} else {
		steps, _ := ncclRingSteps(op, g)
		p.rings([][]int{ranks}, S, "", steps)
		p.retime(from, (ncclLatency(op, tRing, pr, g)*f-base)/float64(steps), w)
	}
	if lim := ncclLLMaxBus(g); pr == 0 && !math.IsInf(lim, 1) {
		p.limit(from, lim*w)
	}
}

// limit caps the streams of the steps from index from at lim bytes/s of
// wire bytes.
func (p *plan) limit(from int, lim float64) {
	for i := from; i < len(p.steps); i++ {
		p.steps[i].path = p.limited(p.steps[i].path, lim)
	}
}

// retime puts the steps from index from on copies of their paths whose
// latency is lat, and multiplies their bytes by the wire factor w.
func (p *plan) retime(from int, lat, w float64) {
	for i := from; i < len(p.steps); i++ {
		p.steps[i].path = p.retimed(p.steps[i].path, lat)
		p.steps[i].bytes *= w
	}
}

// retimed returns a copy of path whose latency is lat, cached.
func (p *plan) retimed(path *Path, lat float64) *Path {
	key := fmt.Sprintf("nccl-lat/%p/%v", path, lat)
	if q, ok := p.t.paths[key]; ok {
		return q
	}
	q := &Path{net: path.net, uses: path.uses, latency: units.Seconds(lat), streams: path.streams, share: path.share, limit: path.limit}
	p.t.paths[key] = q
	return q
}

// ncclTree adds NCCL's tree all-reduce as one pipeline: tuning.cc's tree
// latency once, then the payload in C chunks (ncclTreeChunks: 512 KiB,
// or a step of NCCLConfig.BuffSize with Simple)
// through D = 2(k−1) + 2d stages: a chain reduce inside every node toward
// its leader (k−1 hops), the reduce up the double binary tree between the
// nodes' leaders (d = ⌊log2 N⌋ levels), the broadcast down it, and a chain
// broadcast inside every node. NCCL runs every stage at once on successive
// chunks (src/device/all_reduce.h, runTreeSplit: the reduce and the
// broadcast are separate thread groups), so in tick τ the stages s with
// 0 ≤ τ − s < C each move chunk τ − s, and the n = C + D − 1 ticks pay no
// further latency. Across nodes the tree runs on ncclTreeChannels
// channels, channel j taking each node's ranks turned by j·k/channels (so
// that its leader sends through NIC j·NICs/channels) and tree j mod 2 of
// the double binary tree; each channel carries S/channels. Each chunk
// moves w/f times its bytes, w the protocol's wire factor and f tuning.cc's
// treeCorrectionFactor at S: the share of its bandwidth NCCL measured its
// tree to reach at that size, which the tuning model applies to its
// prediction.
func (p *plan) ncclTree(pr int, g ncclGeom, ranks []int, S, w float64) error {
	nodes := p.t.byNode(ranks)
	if !even(nodes) {
		return fmt.Errorf("%w: NCCL tree: the nodes hold different numbers of the ranks (ring runs on such placements)", ErrCollective)
	}
	p.base(ncclLatency(OpAllReduce, tTree, pr, g))
	ch := ncclTreeChannels(g)
	k := len(nodes[0])
	chains := make([][]int, 0, ch*len(nodes))
	leaders := make([][]int, ch)
	for j := range ch {
		for _, nd := range nodes {
			order := append(slices.Clone(nd[j*k/ch:]), nd[:j*k/ch]...)
			chains = append(chains, order)
			leaders[j] = append(leaders[j], order[0])
		}
	}
	C, chunk := p.ncclTreeChunks(pr, S/float64(ch))
	stages := p.treeStages(chains, leaders)
	from := len(p.steps)
	for tau := range C + len(stages) - 1 {
		lo, hi := max(0, tau-C+1), min(len(stages)-1, tau)
		p.add(p.path(fmt.Sprintf("nccl-tree/%d/%d-%d", ch, lo, hi), func() {
			for _, st := range stages[lo : hi+1] {
				for _, h := range st {
					p.t.route(h[0], h[1])
				}
			}
		}), chunk, 1)
	}
	p.retime(from, 0, w/ncclTreeCorr(pr, S))
	if lim := ncclLLMaxBus(g); pr == 0 && !math.IsInf(lim, 1) {
		// The ch trees' streams move S/ch each at ch·rate·f/w of algorithm
		// bandwidth; tuning.cc's is min(busBw/3.8, llMaxBw)·f/2.
		p.limit(from, lim*w/float64(2*ch))
	}
	return nil
}

// ncclTreeChunks splits a tree channel's S into its pipeline's C chunks
// of c = S/C. With Simple and NCCLConfig.BuffSize set, C = ⌈S/b⌉ with b =
// BuffSize/NCCL_STEPS: from NCCL 2.20 a tree call with Simple moves one
// step of its buffer at a time, whatever its size (src/enqueue.cc,
// computeCollChunkInfo: chunkSize = stepSize·chunkSteps with chunkSteps 1
// off the ring, stepSize = buffSizes[proto]/NCCL_STEPS; v2.21.5 lines
// 1722–1725); NCCL's default buffer, 4 MiB, gives DefaultTreeChunk. Other
// protocols, and Simple without BuffSize, take Config.TreeChunk
// (p.chunks).
func (p *plan) ncclTreeChunks(pr int, S float64) (int, float64) {
	b := float64(p.t.cfg.NCCL.BuffSize) / ncclSteps
	if pr != 2 || b <= 0 {
		return p.chunks(S)
	}
	C := 1
	if S > 0 {
		C = int(min(max(math.Ceil(S/b), 1), MaxChunks))
	}
	return C, S / float64(C)
}

// ncclTreeChannels is the number of trees an all-reduce runs at once: one
// on a single node; across nodes one per NIC channel (g.c), rounded up to
// an even number of at least 2 so that both trees of the double binary
// tree carry as much (src/graph/connect.cc, connectTrees: channel c runs
// tree 0 of ncclGetDtree and channel c + nChannels tree 1).
func ncclTreeChannels(g ncclGeom) int {
	if g.nodes < 2 {
		return 1
	}
	return max(2, g.c+g.c%2)
}

// treeStages returns the hops of each stage of the tree's pipeline, in
// order: the chain reduce's k−1 hops toward each chain's first rank, the
// levels of the tree between the leaders from the deepest up, the same
// levels down, and the chain broadcast's k−1 hops; each stage lists the
// hops (from, to) of every chain or tree at once. Tree j mod 2 of
// leaders[j] is the heap over the leaders, or over them reversed.
func (p *plan) treeStages(chains, leaders [][]int) [][][2]int {
	k, N := len(chains[0]), len(leaders[0])
	d := bits.Len(uint(N)) - 1
	var up, down [][][2]int
	for h := range k - 1 {
		var u, dn [][2]int
		for _, c := range chains {
			u = append(u, [2]int{c[k-1-h], c[k-2-h]})
			dn = append(dn, [2]int{c[h], c[h+1]})
		}
		up, down = append(up, u), append(down, dn)
	}
	levels := make([][][2]int, d+1)
	for j, ls := range leaders {
		rank := func(i int) int {
			if j%2 == 1 {
				return ls[N-1-i]
			}
			return ls[i]
		}
		for l := 1; l <= d; l++ {
			for i := 1<<l - 1; i <= min(1<<(l+1)-2, N-1); i++ {
				levels[l] = append(levels[l], [2]int{rank(i), rank((i - 1) / 2)})
			}
		}
	}
	stages := up
	for l := d; l >= 1; l-- {
		stages = append(stages, levels[l])
	}
	for l := 1; l <= d; l++ {
		var dn [][2]int
		for _, h := range levels[l] {
			dn = append(dn, [2]int{h[1], h[0]})
		}
		stages = append(stages, dn)
	}
	return append(stages, down...)
}

// ncclCollNet adds CollNet Direct: a ring reduce-scatter inside every
// node, every rank's S/k through its NIC to the fabric's switches and
// back reduced, and a ring all-gather inside every node (Simple only).
func (p *plan) ncclCollNet(g ncclGeom, ranks []int, S float64) error {
	nodes := p.t.byNode(ranks)
	if !even(nodes) {
		return fmt.Errorf("%w: NCCL collnet: the nodes hold different numbers of the ranks (ring runs on such placements)", ErrCollective)
	}
	k := len(nodes[0])
	hc := 0.0
	if k > 1 {
		hc = (ncclHW[g.cls][tCollNet][2] + float64(k-1)*ncclCollNetArity) / float64(k-1) * 1e-6
	}
	from := len(p.steps)
	p.ringHalf(nodes, S, "intra-")
	p.retime(from, hc, 1)
	interLat := ncclInterLat(tCollNet, 2, g)
	t := p.t
	from = len(p.steps)
	p.add(p.path("collnet", func() {
		for _, r := range ranks {
			a, i := t.Node(r), t.nic(r)
			t.b.Add(0, t.nicOut[a][i], t.core, t.nicIn[a][i])
		}
	}), S/float64(k), 1)
	p.retime(from, interLat*1e-6, 1)
	from = len(p.steps)
	p.ringHalf(nodes, S, "intra-")
	p.retime(from, hc, 1)
	return nil
}

// ncclP2P adds NCCL's point-to-point operations as one step: all-to-all
// sends S/p from every rank to every other, send/recv S from every rank
// to the next in order; the step pays the ring's base latency and one hop
// of the protocol (a network hop when the ranks span nodes).
func (p *plan) ncclP2P(op Op, pr int, g ncclGeom, ranks []int, S, w float64) {
	hop := ncclHW[g.cls][tRing][pr]
	if g.nodes > 1 {
		hop = ncclHW[hwNet][tRing][pr] + g.netLat*float64(1+pr/2) // the net's latency, twice for Simple
	}
	lat := (ncclBase[tRing][pr] + hop) * 1e-6
	from := len(p.steps)
	if op == OpSendRecv {
		p.add(p.ringPath([][]int{ranks}, "p2p-"), S, 1)
	} else {
		p.add(p.path("pairs", func() {
			for _, a := range ranks {
				for _, b := range ranks {
					if a != b {
						p.t.route(a, b)
					}
				}
			}
		}), S/float64(len(ranks)), 1)
	}
	p.retime(from, lat, w)
}

// Collective starts op of a buffer of bytes among ranks (nil means all
// ranks, in order) with algorithm alg: AllReduce, ReduceScatter,
// AllGather, Broadcast from the first rank, AllToAll, or, for
// OpSendRecv, every rank sending S to the next in order at once (a ring
// shift, as nccl-tests' sendrecv times it; for two ranks a send each way).
// alg NCCL runs every op as NCCL chooses (see NCCLChoose); AllToAll and
// OpSendRecv take no other algorithm than Ring. It returns an error
// wrapping ErrCollective if the request is invalid; then nothing is
// scheduled.
func (t *Topology) Collective(op Op, alg Algorithm, bytes units.Bytes, ranks []int, done func(*Result)) error {
	if alg == NCCL {
		return t.ncclRun(op, bytes, ranks, done)
	}
	switch op {
	case OpAllReduce:
		return t.AllReduce(alg, bytes, ranks, done)
	case OpReduceScatter:
		return t.ReduceScatter(alg, bytes, ranks, done)
	case OpAllGather:
		return t.AllGather(alg, bytes, ranks, done)
	case OpBroadcast:
		root := 0
		if len(ranks) > 0 {
			root = ranks[0]
		}
		return t.Broadcast(alg, bytes, root, ranks, done)
	}
	if alg != Ring {
		return fmt.Errorf("%w: %v by %v; want ring or nccl", ErrCollective, op, alg)
	}
	switch op {
	case OpAllToAll:
		return t.AllToAll(bytes, ranks, done)
	case OpSendRecv:
		return t.collective(OpSendRecv, Ring, bytes, -2, ranks, done, func(p *plan, ranks []int, S float64) error {
			if len(ranks) > 1 {
				p.add(p.ringPath([][]int{ranks}, "shift-"), S, 1)
			}
			return nil
		})
	}
	return fmt.Errorf("%w: unknown op %d", ErrCollective, int(op))
}
