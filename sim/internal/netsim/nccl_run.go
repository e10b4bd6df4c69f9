package netsim

import (
	"fmt"
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
	ch, g, err := t.ncclChoose(op, S, ranks)
	if err != nil {
		return err
	}
	pk := planKey{op: op, alg: NCCL, ranks: key, bytes: S, root: -1}
	steps, ok := t.plans[pk]
	if !ok {
		p := &plan{t: t, key: fmt.Sprintf("nccl/%v/%v/%v/%s", op, ch.Algorithm, ch.Protocol, key)}
		if err := p.nccl(op, ch, g, ranks, S); err != nil {
			return err
		}
		steps = p.steps
		t.plans[pk] = steps
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
	switch {
	case op == OpAllToAll || op == OpSendRecv:
		p.ncclP2P(op, pr, g, ranks, S, w)
	case ch.Algorithm == NCCLRing:
		p.ncclRing(op, pr, g, ranks, S, w)
	case ch.Algorithm == NCCLTree:
		return p.ncclTree(pr, g, ranks, S, w)
	case ch.Algorithm == NCCLNVLS:
		// Each rank's port carries (k−1)/k of S each way at NVLS's
		// efficiency, the reduce and the multicast pipelined.
		k := float64(g.k)
		from := len(p.steps)
		p.add(p.path("nvls", func() {
			for _, r := range ranks {
				p.t.b.Add(0, p.t.devOut[r], p.t.devIn[r])
			}
		}), (k-1)/k/ncclNVLSEff*S, 1)
		p.retime(from, ncclLatency(op, tNVLS, 2, g), 1)
	case ch.Algorithm == NCCLCollNet:
		return p.ncclCollNet(g, ranks, S)
	}
	return nil
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
// paying one hop.
func (p *plan) ncclRing(op Op, pr int, g ncclGeom, ranks []int, S, w float64) {
	f := ncclPlateau(op, tRing, pr, g, S)
	base := ncclBase[tRing][pr] * 1e-6 * f
	p.base(base)
	from := len(p.steps)
	if op == OpBroadcast {
		C, c := p.chunks(S)
		p.chain(ranks, C, c)
		cls := g.cls
		if g.nodes > 1 {
			cls = hwNet
		}
		p.retime(from, ncclHW[cls][tRing][pr]*1e-6, w)
		return
	}
	steps, _ := ncclRingSteps(op, g)
	p.rings([][]int{ranks}, S, "", steps)
	p.retime(from, (ncclLatency(op, tRing, pr, g)*f-base)/float64(steps), w)
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

// ncclTree adds NCCL's tree all-reduce: a pipelined chain reduce inside
// every node toward a leader, a double binary tree all-reduce between the
// nodes' leaders, and a pipelined chain broadcast back; hops inside a node
// pay tuning.cc's tree latency of the node's link class, hops between
// nodes its network latency. Over several nodes with c channels (one per
// NIC, as the ring's) c trees run at once, each with S/c: tree j takes
// each node's ranks in their order turned by j·k/c, so that its leader
// sends through NIC j.
func (p *plan) ncclTree(pr int, g ncclGeom, ranks []int, S, w float64) error {
	nodes := p.t.byNode(ranks)
	if !even(nodes) {
		return fmt.Errorf("%w: NCCL tree: the nodes hold different numbers of the ranks (ring runs on such placements)", ErrCollective)
	}
	p.base(ncclBase[tTree][pr] * 1e-6)
	hi, hn := ncclHW[g.cls][tTree][pr]*1e-6, ncclHW[hwNet][tTree][pr]*1e-6
	c := max(1, g.c)
	k := len(nodes[0])
	chains := make([][]int, 0, c*len(nodes))
	leaders := make([][]int, c)
	for j := range c {
		for _, nd := range nodes {
			order := append(slices.Clone(nd[j*k/c:]), nd[:j*k/c]...)
			chains = append(chains, order)
			leaders[j] = append(leaders[j], order[0])
		}
	}
	Sc := S / float64(c)
	C, chunk := p.chunks(Sc)
	from := len(p.steps)
	p.chains(chains, C, chunk, true)
	p.retime(from, hi, w)
	if len(nodes) > 1 {
		from = len(p.steps)
		p.tree(leaders, Sc, true, "nccl-")
		p.retime(from, hn, w)
	}
	from = len(p.steps)
	p.chains(chains, C, chunk, false)
	p.retime(from, hi, w)
	return nil
}

// chains adds a pipelined chain of C chunks of c along every group at
// once: toward the group's first rank (up, a reduce) or from it. In tick
// τ the hop h (from place h+1 to h going up, from h to h+1 going down,
// counted from the far end going up) carries chunk τ − h.
func (p *plan) chains(groups [][]int, C int, c float64, up bool) {
	hops := len(groups[0]) - 1
	if hops < 1 {
		return
	}
	for tau := range C + hops - 1 {
		lo, hi := max(0, tau-C+1), min(hops-1, tau)
		p.add(p.path(fmt.Sprintf("chains/%v/%d-%d", up, lo, hi), func() {
			for _, gr := range groups {
				for h := lo; h <= hi; h++ {
					if up {
						p.t.route(gr[hops-h], gr[hops-h-1])
					} else {
						p.t.route(gr[h], gr[h+1])
					}
				}
			}
		}), c, 1)
	}
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
	interLat := ncclHW[hwNet][tCollNet][2]
	if k == 1 {
		interLat = ncclHW[hwNet][tTree][2]
	}
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
	cls := g.cls
	if g.nodes > 1 {
		cls = hwNet
	}
	lat := (ncclBase[tRing][pr] + ncclHW[cls][tRing][pr]) * 1e-6
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
