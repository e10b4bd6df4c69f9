package netsim

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"scaleplan/internal/units"
)

// Op is a collective operation: what a Result measured.
type Op int

const (
	// OpAllReduce is Topology.AllReduce.
	OpAllReduce Op = iota
	// OpReduceScatter is Topology.ReduceScatter.
	OpReduceScatter
	// OpAllGather is Topology.AllGather.
	OpAllGather
	// OpBroadcast is Topology.Broadcast.
	OpBroadcast
	// OpAllToAll is Topology.AllToAll.
	OpAllToAll
	// OpSendRecv is Topology.SendRecv.
	OpSendRecv
)

var opNames = [...]string{"all-reduce", "reduce-scatter", "all-gather", "broadcast", "all-to-all", "send-recv"}

// String returns the operation's name: all-reduce, reduce-scatter,
// all-gather, broadcast, all-to-all or send-recv.
func (o Op) String() string {
	if o < 0 || int(o) >= len(opNames) {
		return fmt.Sprintf("Op(%d)", int(o))
	}
	return opNames[o]
}

// ReduceScatter starts a reduce-scatter of a buffer of bytes S among ranks
// (nil means all ranks, in order) with algorithm alg at the scheduler's
// current time: every rank ends with its S/p of the reduced buffer. It
// calls done (if not nil) with the result when the last rank has its part.
// alg is Ring (p−1 steps of S/p around the ranks in the order given, one
// ring per NIC as AllReduce's ring) or HalvingDoubling (recursive halving,
// p a power of two: step j = 0..log2 p − 1 exchanges S/2^(j+1) with the
// rank at distance 2^j). On an idle network of one rank per node (alpha
// the latency of a message between nodes, beta the NIC bandwidth times the
// efficiency):
//
//	ring:              T = (p−1)·(alpha + S/(p·beta))
//	halving-doubling:  T = log2(p)·alpha + (p−1)/p · S/beta
//
// A ring reduce-scatter followed by a ring all-gather is AllReduce's ring,
// step for step. It returns an error wrapping ErrCollective if the request
// is invalid; then nothing is scheduled.
func (t *Topology) ReduceScatter(alg Algorithm, bytes units.Bytes, ranks []int, done func(*Result)) error {
	return t.half(OpReduceScatter, alg, bytes, ranks, done)
}

// AllGather starts an all-gather of a buffer of bytes S among ranks (nil
// means all ranks, in order) with algorithm alg at the scheduler's current
// time: every rank starts with its S/p and ends with all of S. It calls
// done (if not nil) with the result when the last rank has S. alg is Ring
// (p−1 steps of S/p) or HalvingDoubling (recursive doubling, p a power of
// two: ReduceScatter's exchanges in reverse order), with ReduceScatter's
// closed forms:
//
//	ring:              T = (p−1)·(alpha + S/(p·beta))
//	halving-doubling:  T = log2(p)·alpha + (p−1)/p · S/beta
//
// It returns an error wrapping ErrCollective if the request is invalid;
// then nothing is scheduled.
func (t *Topology) AllGather(alg Algorithm, bytes units.Bytes, ranks []int, done func(*Result)) error {
	return t.half(OpAllGather, alg, bytes, ranks, done)
}

// half starts a reduce-scatter or an all-gather.
func (t *Topology) half(op Op, alg Algorithm, bytes units.Bytes, ranks []int, done func(*Result)) error {
	if alg == NCCL {
		return t.ncclRun(op, bytes, ranks, done)
	}
	if alg != Ring && alg != HalvingDoubling {
		return fmt.Errorf("%w: %v by %v; want ring, halving-doubling or nccl", ErrCollective, op, alg)
	}
	return t.collective(op, alg, bytes, -1, ranks, done, func(p *plan, ranks []int, S float64) error {
		q := len(ranks)
		if alg == Ring {
			p.rings([][]int{ranks}, S, "", q-1)
			return nil
		}
		if q&(q-1) != 0 {
			return fmt.Errorf("%w: %v by halving-doubling needs a power of two of ranks, not %d; use ring", ErrCollective, op, q)
		}
		exchange := p.exchanges([][]int{ranks}, p.t.all[:q], "")
		m := len(exchange)
		for i := range m {
			j := i
			if op == OpAllGather {
				j = m - 1 - i
			}
			p.add(exchange[j], math.Ldexp(S, -(j+1)), 1)
		}
		return nil
	})
}

// Broadcast starts a broadcast of bytes S from rank root to the other
// ranks (nil means all ranks, in order; root must be among them) with
// algorithm alg at the scheduler's current time, and calls done (if not
// nil) with the result when the last rank has S. The data are pipelined
// in C = ⌈S/TreeChunk⌉ chunks of c = S/C (at most MaxChunks, at least 1).
// alg is Ring, a chain from the root through the ranks in the order given
// (wrapping around), as NCCL's ring broadcast: in tick τ = 0..C+p−3 the
// rank at place h of the chain sends chunk τ − h to the next; or Tree, the
// binary heap over the ranks in that order (root at its top, depth d =
// ⌊log2 p⌋), the broadcast phase of AllReduce's Tree: in tick τ =
// 0..d+C−2 the ranks at depth l receive chunk τ − (l − 1). A parent
// sending to two children carries two streams, so a tree tick costs
// alpha + 2c/beta except in δ ticks:
//
//	ring:  T = (C+p−2)·(alpha + c/beta)
//	tree:  T = n·alpha + (2n − δ)·c/beta,  n = d + C − 1,
//	       δ = n if p = 2, 1 if p = 2^d ≥ 4, else 0
//
// It returns an error wrapping ErrCollective if the request is invalid;
// then nothing is scheduled.
func (t *Topology) Broadcast(alg Algorithm, bytes units.Bytes, root int, ranks []int, done func(*Result)) error {
	if alg == NCCL {
		if ranks == nil {
			ranks = t.all
		}
		i := slices.Index(ranks, root)
		if i < 0 {
			return fmt.Errorf("%w: broadcast root %d is not among the ranks", ErrCollective, root)
		}
		return t.ncclRun(OpBroadcast, bytes, append(slices.Clone(ranks[i:]), ranks[:i]...), done)
	}
	if alg != Ring && alg != Tree {
		return fmt.Errorf("%w: broadcast by %v; want ring, tree or nccl", ErrCollective, alg)
	}
	return t.collective(OpBroadcast, alg, bytes, root, ranks, done, func(p *plan, ranks []int, S float64) error {
		i := slices.Index(ranks, root)
		if i < 0 {
			return fmt.Errorf("%w: broadcast root %d is not among the ranks %v", ErrCollective, root, ranks)
		}
		order := append(slices.Clone(ranks[i:]), ranks[:i]...)
		if len(order) < 2 {
			return nil
		}
		C, c := p.chunks(S)
		if alg == Ring {
			p.chain(order, C, c)
			return nil
		}
		d := bits.Len(uint(len(order))) - 1
		p.treeDown(p.treeLevels([][]int{order}, 1, ""), d, C, c)
		return nil
	})
}

// chain adds a broadcast of C chunks of c along order: in tick τ the rank
// at place h sends chunk τ − h to the one at place h + 1.
func (p *plan) chain(order []int, C int, c float64) {
	hops := len(order) - 1
	memo := make(map[[2]int]*Path)
	for tau := range C + hops - 1 {
		lo, hi := max(0, tau-C+1), min(hops-1, tau)
		path, ok := memo[[2]int{lo, hi}]
		if !ok {
			path = p.path(fmt.Sprintf("chain/%d-%d", lo, hi), func() {
				for h := lo; h <= hi; h++ {
					p.t.route(order[h], order[h+1])
				}
			})
			memo[[2]int{lo, hi}] = path
		}
		p.add(path, c, 1)
	}
}

// AllToAll starts an all-to-all of a buffer of bytes S on each of ranks
// (nil means all ranks) at the scheduler's current time: every rank sends
// S/p to every other rank, all p(p−1) messages at once as one flow group
// (NCCL's grouped send/recv), so ranks sharing a NIC share its bandwidth.
// It calls done (if not nil) with the result when the last message has
// arrived. On a single switch with one rank per NIC each NIC carries p−1
// streams, and with one latency term
//
//	T = alpha + (p−1)/p · S/beta
//
// It returns an error wrapping ErrCollective if the request is invalid;
// then nothing is scheduled.
func (t *Topology) AllToAll(bytes units.Bytes, ranks []int, done func(*Result)) error {
	return t.collective(OpAllToAll, Ring, bytes, -1, ranks, done, func(p *plan, ranks []int, S float64) error {
		q := len(ranks)
		if q < 2 {
			return nil
		}
		p.add(p.path("pairs", func() {
			for _, a := range ranks {
				for _, b := range ranks {
					if a != b {
						p.t.route(a, b)
					}
				}
			}
		}), S/float64(q), 1)
		return nil
	})
}

// SendRecv starts a transfer of bytes S from rank src to rank dst at the
// scheduler's current time, one flow on Route(src, dst), and calls done
// (if not nil) with the result when dst has S. Alone on the network
//
//	T = alpha + S/beta
//
// with alpha and beta those of the route. It returns an error wrapping
// ErrCollective if a rank is out of range or src equals dst; then nothing
// is scheduled.
func (t *Topology) SendRecv(bytes units.Bytes, src, dst int, done func(*Result)) error {
	return t.collective(OpSendRecv, Ring, bytes, -1, []int{src, dst}, done, func(p *plan, _ []int, S float64) error {
		p.add(p.t.Route(src, dst), S, 1)
		return nil
	})
}

// collective checks a request, builds its plan with build unless the
// topology has it cached, and starts it.
func (t *Topology) collective(op Op, alg Algorithm, bytes units.Bytes, root int, ranks []int, done func(*Result),
	build func(p *plan, ranks []int, S float64) error) error {
	if !nonNegative(float64(bytes)) {
		return fmt.Errorf("%w: %v: bytes %v is not a non-negative finite number", ErrCollective, op, float64(bytes))
	}
	key, ranks, err := t.rankKey(ranks)
	if err != nil {
		return fmt.Errorf("%v: %w", op, err)
	}
	pk := planKey{op: op, alg: alg, ranks: key, bytes: float64(bytes), root: root}
	steps, ok := t.plans[pk]
	if !ok {
		p := &plan{t: t, key: fmt.Sprintf("%v/%v/%d/%s", op, alg, root, key)}
		if err := build(p, ranks, float64(bytes)); err != nil {
			return err
		}
		steps = p.steps
		t.plans[pk] = steps
	}
	res := &Result{Op: op, Algorithm: alg, Bytes: bytes, Ranks: len(ranks), Start: t.s.Now()}
	r := &run{t: t, steps: steps, done: done, res: res, label: t.net.Label}
	r.start()
	return nil
}
