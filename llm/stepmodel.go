package llm

import (
	"fmt"

	"scaleplan/internal/units"
	"scaleplan/model"
)

// step returns l's step time; l is valid for st.t.
func (st *stepper) step(l Layout) (StepTime, error) {
	t, h := st.t, st.h
	if l.TP > h.GPUsPerNode {
		return StepTime{}, fmt.Errorf("layout of %s: tp %d: want at most the %d GPUs of a node (tensor groups stay inside an NVLink domain)", t.Name, l.TP, h.GPUsPerNode)
	}
	s, b := l.seqLen(t), l.MicroBatch
	c, err := st.cost(computeKey{b: b, s: s, tp: l.TP, cp: l.CP, sp: l.SequenceParallel && l.TP > 1, rc: l.recompute()})
	if err != nil {
		return StepTime{}, err
	}
	var lc layerComm
	if err := st.layerComm(l, c, &lc); err != nil {
		return StepTime{}, err
	}
	layers := units.Seconds(t.Layers / l.PP)
	perLayer := c.layer.sum() + lc.tp + lc.cp + lc.ep + lc.zero3
	body := layers * perLayer
	first, last := body+c.first.sum(), body+c.last.sum()
	if l.PP == 1 {
		first += c.last.sum()
		last = first
	}
	slow, slowEdge := first, c.first
	if last > first {
		slow, slowEdge = last, c.last
	}
	m := units.Seconds(l.MicroBatches())
	out := StepTime{
		Compute: m * (layers*c.layer.sum() + slow - body),
		TP:      m * layers * lc.tp, CP: m * layers * lc.cp, EP: m * layers * lc.ep,
		DP:     m * layers * lc.zero3,
		Tokens: float64(l.GlobalBatch) * float64(s), ModelFLOPs: t.TrainFLOPs(l.GlobalBatch, s),
	}
	if l.PP == 1 {
		out.Compute = m * (layers*c.layer.sum() + c.first.sum() + c.last.sum())
	}
	if l.PP > 1 {
		pp := units.Seconds(l.PP)
		mean := (first + last + (pp-2)*body) / pp
		out.Bubble = (pp - 1) / units.Seconds(l.chunks()) * mean
		if out.P2P, err = st.p2p(l); err != nil {
			return StepTime{}, err
		}
	}
	stageFwd := layers*c.layer.fwd + slowEdge.fwd
	stageBwd := layers*c.layer.bwd + slowEdge.bwd
	dp, err := st.gradSync(l, stageFwd, stageBwd)
	if err != nil {
		return StepTime{}, err
	}
	out.DP += dp
	out.Optimizer = max(c.adamTime(l.optimizerShard(t, 0), h.Compute), c.adamTime(l.optimizerShard(t, l.PP-1), h.Compute))
	out.Time = out.Compute + out.TP + out.CP + out.EP + out.Bubble + out.P2P + out.DP + out.Optimizer
	return out, nil
}

// layerComm is one layer's exposed communication per micro-batch.
type layerComm struct{ tp, cp, ep, zero3 units.Seconds }

// layerComm fills lc for l, whose layer computes c.
func (st *stepper) layerComm(l Layout, c computeCost, lc *layerComm) error {
	t := st.t
	s, b := l.seqLen(t), l.MicroBatch
	tokens := float64(b) * float64(s/l.CP)
	hidden := units.Bytes(tokens * float64(t.Hidden) * actBytes) // b·(s/CP)·d in bf16
	var err error
	if lc.tp, err = st.tensorComm(l, hidden); err != nil {
		return err
	}
	if l.CP > 1 {
		// Ring attention: CP − 1 steps, each a send/recv of the K and V
		// blocks (2·b·(s/CP)·d_kv values) forward, and of them and their
		// gradients backward, overlapped with the attention of the block
		// in hand (Liu et al. 2023, "Ring Attention with Blockwise
		// Transformers", Section 3; Megatron-LM's context parallelism).
		kv := units.Bytes(2 * tokens * float64(kvWidth(t, l.TP)) * actBytes)
		g := st.place(l.TP, l.CP)
		fwd, err := st.coll(SendRecv, g, kv)
		if err != nil {
			return err
		}
		bwd, err := st.coll(SendRecv, g, 2*kv)
		if err != nil {
			return err
		}
		steps := units.Seconds(l.CP - 1)
		lc.cp = max(0, steps*fwd-c.attn.fwd) + max(0, steps*bwd-c.attn.bwd)
	}
	if t.Experts > 0 && l.EP > 1 {
		// Two all-to-alls forward (dispatch, combine) and two backward of
		// each rank's routed tokens, TopK copies of b·(s/CP)·d values
		// (Lepikhin et al. 2021, "GShard", Section 2.2), exposed.
		routed := units.Bytes(float64(hidden) * float64(t.TopK) * capacity(t))
		if l.SequenceParallel {
			routed /= units.Bytes(l.TP)
		}
		a2a, err := st.coll(AllToAll, st.place(l.TP, l.EP), routed)
		if err != nil {
			return err
		}
		lc.ep = 4 * a2a
	}
	if sharded(l.sharding()) {
		lc.zero3, err = st.zero3Layer(l, c.layer)
	}
	return err
}

// tensorComm returns one layer's tensor-parallel communication per
// micro-batch, exposed as Megatron-LM runs it by default: two all-reduces
// of the b·(s/CP)·d hidden state forward (after the attention's and the
// feed-forward's row-parallel products) and two backward (Shoeybi et al.
// 2019, Figure 4), two more for full recomputation's second forward;
// under sequence parallelism each all-reduce becomes an all-gather before
// and a reduce-scatter after the block, of the same bytes (Korthikanti et
// al. 2022, Section 4.2.2).
func (st *stepper) tensorComm(l Layout, hidden units.Bytes) (units.Seconds, error) {
	if l.TP == 1 {
		return 0, nil
	}
	n := units.Seconds(4)
	if l.recompute() == model.RecomputeFull {
		n = 6
	}
	g := st.place(1, l.TP)
	if !l.SequenceParallel {
		ar, err := st.coll(AllReduce, g, hidden)
		return n * ar, err
	}
	ag, err := st.coll(AllGather, g, hidden)
	if err != nil {
		return 0, err
	}
	rs, err := st.coll(ReduceScatter, g, hidden)
	return n * (ag + rs), err
}

// p2p returns the pipeline's send/recv time per step: each micro-batch
// sends one hidden state forward and its gradient backward across each
// chunk boundary, b·(s/CP)·d/TP values per GPU (Megatron-LM's
// scatter/gather optimisation, Narayanan et al. 2021, Section 4.1; the
// same bytes as sequence parallelism's split), blocking in 1F1B: the
// critical path carries 2·(v·M + PP − 1) of them (v·M per stage in the
// steady state, PP − 1 to fill and drain).
func (st *stepper) p2p(l Layout) (units.Seconds, error) {
	t := st.t
	size := units.Bytes(float64(l.MicroBatch) * float64(l.seqLen(t)/l.CP) * float64(t.Hidden) * actBytes / float64(l.TP))
	g := Group{Nodes: 1, PerNode: 2}
	if l.TP*l.CP*l.DP >= st.h.GPUsPerNode {
		g = Group{Nodes: 2, PerNode: 1}
	}
	d, err := st.coll(SendRecv, g, size)
	return 2 * units.Seconds(l.chunks()*l.MicroBatches()+l.PP-1) * d, err
}

// zero3Layer returns one layer's exposed ZeRO-3/FSDP communication per
// micro-batch: an all-gather of its 16-bit weights before the forward
// and again before the backward, and a reduce-scatter of its gradients
// after it, each prefetched during the layer before (Rajbhandari et al.
// 2020, Section 5.3; FSDP's forward and backward prefetch), so exposed
// only past that layer's compute.
func (st *stepper) zero3Layer(l Layout, c passTime) (units.Seconds, error) {
	n := l.shardGroup()
	if n <= 1 {
		return 0, nil
	}
	p := l.params(st.t, 0)
	g := st.place(l.TP, n)
	ag, err := st.coll(AllGather, g, units.Bytes(weightBytes*float64(p.layer)))
	if err != nil {
		return 0, err
	}
	rs, err := st.coll(ReduceScatter, g, units.Bytes(l.gradBytes()*float64(p.layer)))
	return max(0, ag-c.fwd) + max(0, ag+rs-c.bwd), err
}

// gradSync returns the exposed data-parallel gradient reduction and
// parameter all-gather of a step whose slowest stage computes fwd and bwd
// per micro-batch, over the DP·CP ranks holding the same parameters
// (the experts' over DP·CP/EP). Without sharding: an all-reduce of the
// gradients; ZeRO-1 and the distributed optimizer: a reduce-scatter of
// the gradients and an all-gather of the updated 16-bit weights, once per
// step; ZeRO-2: the reduce-scatter after every micro-batch's backward
// (its gradients are sharded, so accumulation happens in the shards);
// ZeRO-3 and FSDP: their per-layer traffic is in zero3Layer, and HSDP
// adds an all-reduce of the shards across nodes. Megatron-LM's
// --overlap-grad-reduce and --overlap-param-gather run the reduction
// during the backward pass and the gather during the next forward, so
// each is exposed only past that pass (unless Hardware.ExposeGradReduce).
func (st *stepper) gradSync(l Layout, fwd, bwd units.Seconds) (units.Seconds, error) {
	if l.DP*l.CP == 1 {
		return 0, nil
	}
	p := l.params(st.t, 0)
	if q := l.params(st.t, l.PP-1); q.dense+q.expert > p.dense+p.expert {
		p = q
	}
	hide := func(comm, pass units.Seconds) units.Seconds {
		if st.h.ExposeGradReduce {
			return comm
		}
		return max(0, comm-pass)
	}
	var total units.Seconds
	for _, part := range []struct {
		n      float64
		stride int
		ranks  int
	}{{float64(p.dense), l.TP, l.DP * l.CP}, {float64(p.expert), l.TP * l.EP, l.DP * l.CP / l.EP}} {
		if part.n == 0 || part.ranks <= 1 {
			continue
		}
		g := st.place(part.stride, part.ranks)
		grads := units.Bytes(l.gradBytes() * part.n)
		d, err := st.syncGroup(l, g, grads, units.Bytes(weightBytes*part.n), fwd, bwd, hide)
		if err != nil {
			return 0, err
		}
		total += d
	}
	return total, nil
}

// syncGroup returns gradSync's exposed time on one group g of gradients
// grads and weights w.
func (st *stepper) syncGroup(l Layout, g Group, grads, w units.Bytes, fwd, bwd units.Seconds,
	hide func(comm, pass units.Seconds) units.Seconds) (units.Seconds, error) {
	switch l.sharding() {
	case ShardNone:
		ar, err := st.coll(AllReduce, g, grads)
		return hide(ar, bwd), err
	case ShardZeRO1, ShardDistOpt, ShardZeRO2:
		rs, err := st.coll(ReduceScatter, g, grads)
		if err != nil {
			return 0, err
		}
		ag, err := st.coll(AllGather, g, w)
		if l.sharding() == ShardZeRO2 {
			return units.Seconds(l.MicroBatches())*hide(rs, bwd) + hide(ag, fwd), err
		}
		return hide(rs, bwd) + hide(ag, fwd), err
	case ShardHSDP:
		n := l.shardGroup()
		if g.Size() <= n {
			return 0, nil
		}
		replicas := Group{Nodes: max(1, g.Size()/n), PerNode: 1}
		if g.Nodes == 1 {
			replicas = Group{Nodes: 1, PerNode: g.Size() / n}
		}
		ar, err := st.coll(AllReduce, replicas, grads/units.Bytes(n))
		return hide(ar, bwd), err
	}
	return 0, nil // ZeRO-3 and FSDP: zero3Layer
}

// optimizerShard returns the parameters whose Adam update one GPU of
// stage runs: its share of the optimizer state (ModelStates).
func (l Layout) optimizerShard(t model.TransformerShape, stage int) float64 {
	p := l.params(t, stage)
	if l.sharding() == ShardNone {
		return float64(p.dense + p.expert)
	}
	g := l.shardGroup()
	return float64(p.dense)/float64(g) + float64(p.expert)/float64(max(1, g/l.EP))
}
