package llm

import (
	"fmt"
	"slices"
	"strings"

	"scaleplan/model"
)

// Sharding is how data-parallel ranks share the model states (weights,
// gradients, optimizer state).
type Sharding string

// The shardings. ZeRO's stages follow Rajbhandari et al. 2020 ("ZeRO:
// Memory Optimizations Toward Training Trillion Parameter Models"),
// Section 5: stage 1 partitions the optimizer state, stage 2 also the
// gradients, stage 3 also the weights.
const (
	// ShardNone replicates every state on each data-parallel rank.
	ShardNone Sharding = "none"
	// ShardZeRO1 partitions the optimizer state (ZeRO P_os).
	ShardZeRO1 Sharding = "zero1"
	// ShardZeRO2 partitions the optimizer state and gradients (P_os+g).
	ShardZeRO2 Sharding = "zero2"
	// ShardZeRO3 partitions the optimizer state, gradients and weights
	// (P_os+g+p).
	ShardZeRO3 Sharding = "zero3"
	// ShardFSDP is PyTorch FSDP's FULL_SHARD: ZeRO-3 over every
	// data-parallel rank.
	ShardFSDP Sharding = "fsdp"
	// ShardHSDP is PyTorch FSDP's HYBRID_SHARD: ZeRO-3 within a node,
	// replicated across nodes.
	ShardHSDP Sharding = "hsdp"
	// ShardDistOpt is Megatron-LM's distributed optimizer: the fp32
	// master weights and Adam moments partitioned over the data- and
	// context-parallel ranks, like ZeRO-1.
	ShardDistOpt Sharding = "distopt"
)

var shardings = []Sharding{ShardNone, ShardZeRO1, ShardZeRO2, ShardZeRO3, ShardFSDP, ShardHSDP, ShardDistOpt}

// Layout is how one training step of a transformer is spread over GPUs:
// the parallel degrees, the batch and its split into micro-batches, the
// recomputation and the sharding of the model states. The world size is
// TP·PP·DP·CP; expert parallelism runs inside the data- and
// context-parallel ranks, as Megatron-LM's expert layers do.
type Layout struct {
	// TP is the tensor-parallel degree (Megatron column and row splits;
	// Shoeybi et al. 2019); SequenceParallel splits the norms, dropouts
	// and residuals along the sequence over the same ranks (Korthikanti
	// et al. 2022, Section 4.2.2).
	TP               int
	SequenceParallel bool
	// PP is the pipeline stages; VirtualStages the model chunks each
	// stage holds under the interleaved 1F1B schedule (Narayanan et al.
	// 2021, Section 2.2.2); 0 or 1 is plain 1F1B.
	PP, VirtualStages int
	// DP is the data-parallel degree, CP the context-parallel degree
	// (each rank holds SeqLen/CP tokens of every sequence), EP the
	// expert-parallel degree (each rank holds Experts/EP experts).
	DP, CP, EP int
	// MicroBatch is the sequences per micro-batch b; GlobalBatch the
	// sequences per step, a multiple of MicroBatch·DP, whose quotient is
	// the micro-batches each pipeline runs (gradient accumulation).
	MicroBatch, GlobalBatch int
	// SeqLen is the tokens per sequence; 0 takes the shape's.
	SeqLen int
	// Recompute is the activation recomputation; "" is none.
	Recompute model.Recompute
	// Sharding is the sharding of the model states; "" is none.
	Sharding Sharding
	// NodeGPUs is the GPUs per node, which bounds hybrid sharding's
	// group (hsdp only).
	NodeGPUs int
	// FP32Grads keeps the gradients in fp32, as Megatron-LM's main-grad
	// buffer does (18 bytes per parameter under mixed-precision Adam);
	// unset, gradients are 16-bit as in the ZeRO paper (16 bytes).
	FP32Grads bool
}

// World returns the GPUs the layout occupies: TP·PP·DP·CP.
func (l Layout) World() int { return l.TP * l.PP * l.DP * l.CP }

// MicroBatches returns the micro-batches each pipeline runs per step:
// GlobalBatch/(MicroBatch·DP).
func (l Layout) MicroBatches() int { return l.GlobalBatch / (l.MicroBatch * l.DP) }

// chunks returns the model chunks per stage: VirtualStages, at least 1.
func (l Layout) chunks() int { return max(l.VirtualStages, 1) }

// seqLen returns the layout's sequence length, or t's.
func (l Layout) seqLen(t model.TransformerShape) int {
	if l.SeqLen > 0 {
		return l.SeqLen
	}
	return t.SeqLen
}

// recompute returns the recomputation, none by default.
func (l Layout) recompute() model.Recompute {
	if l.Recompute == "" {
		return model.RecomputeNone
	}
	return l.Recompute
}

// sharding returns the sharding, none by default.
func (l Layout) sharding() Sharding {
	if l.Sharding == "" {
		return ShardNone
	}
	return l.Sharding
}

// kvHeads returns t's key and value heads.
func kvHeads(t model.TransformerShape) int {
	if t.KVHeads > 0 {
		return t.KVHeads
	}
	return t.Heads
}

// Validate reports the fields of l that do not fit t, naming each and
// its valid choices.
func (l Layout) Validate(t model.TransformerShape) error {
	if err := t.Validate(); err != nil {
		return err
	}
	p := &problems{}
	if !l.check(t, p) {
		return fmt.Errorf("layout: %s", strings.Join(p.list, "; "))
	}
	if len(p.list) > 0 {
		return fmt.Errorf("layout of %s: %s", t.Name, strings.Join(p.list, "; "))
	}
	return nil
}

// check adds l's problems with t to p; false when its degrees are not
// even positive (nothing else is checked then).
func (l Layout) check(t model.TransformerShape, p *problems) bool {
	p.need(l.TP >= 1 && l.PP >= 1 && l.DP >= 1 && l.CP >= 1 && l.EP >= 1 && l.VirtualStages >= 0, func() string {
		return fmt.Sprintf("tp %d, pp %d, dp %d, cp %d, ep %d, virtual stages %d: want degrees of at least 1 (virtual stages 0 or more)",
			l.TP, l.PP, l.DP, l.CP, l.EP, l.VirtualStages)
	})
	if p.n > 0 {
		return false
	}
	l.validateSplits(t, p)
	l.validateBatch(t, p)
	l.validateSharding(p)
	return true
}

// valid reports whether l fits t, a valid shape: Validate's verdict,
// without its messages.
func (l Layout) valid(t model.TransformerShape) bool {
	p := problems{quiet: true}
	l.check(t, &p)
	return p.n == 0
}

// problems collects Validate's problems. Each message is a function,
// called only for a problem, and not at all when quiet: a search checks
// hundreds of thousands of layouts, and formatting (or boxing the values
// of) messages nobody reads would cost more than the checks.
type problems struct {
	list  []string
	n     int
	quiet bool
}

// need counts a problem, and adds msg's message unless quiet, unless ok.
func (p *problems) need(ok bool, msg func() string) {
	if ok {
		return
	}
	p.n++
	if !p.quiet {
		p.list = append(p.list, msg())
	}
}

// validateSplits checks the tensor, pipeline, context and expert splits.
func (l Layout) validateSplits(t model.TransformerShape, p *problems) {
	kv := kvHeads(t)
	p.need(t.Heads%l.TP == 0, func() string { return fmt.Sprintf("tp %d: want a divisor of the %d heads", l.TP, t.Heads) })
	p.need(kv%l.TP == 0 || l.TP%kv == 0, func() string {
		return fmt.Sprintf("tp %d: want a divisor of the %d kv heads, or a multiple of them (each kv head then replicated, as Megatron-LM does)", l.TP, kv)
	})
	p.need(t.FFN%l.TP == 0, func() string { return fmt.Sprintf("tp %d: want a divisor of the feed-forward width %d", l.TP, t.FFN) })
	p.need(t.Stack != model.EncoderDecoder, func() string {
		return fmt.Sprintf("stack %q: want decoder or encoder (a layout spreads one stack)", t.Stack)
	})
	p.need(t.Layers%(l.PP*l.chunks()) == 0, func() string {
		return fmt.Sprintf("pp %d × virtual stages %d: want a divisor of the %d layers", l.PP, l.chunks(), t.Layers)
	})
	p.need(l.chunks() == 1 || l.PP > 1, func() string {
		return fmt.Sprintf("virtual stages %d: want 0 or 1 without pipeline parallelism", l.VirtualStages)
	})
	s := l.seqLen(t)
	p.need(l.CP == 1 || s%(2*l.CP) == 0, func() string {
		return fmt.Sprintf("cp %d: want sequence length %d a multiple of 2·cp (Megatron-LM's load-balanced split)", l.CP, s)
	})
	p.need(l.CP == 1 || t.FusedAttention, func() string {
		return fmt.Sprintf("cp %d: want fused attention (context parallelism runs FlashAttention-style ring attention)", l.CP)
	})
	p.need(!l.SequenceParallel || (s/l.CP)%l.TP == 0, func() string {
		return fmt.Sprintf("sequence parallel: want the %d tokens per rank a multiple of tp %d", s/l.CP, l.TP)
	})
	p.need(l.EP == 1 || t.Experts > 0 && t.Experts%l.EP == 0, func() string { return fmt.Sprintf("ep %d: want 1, or a divisor of the %d experts", l.EP, t.Experts) })
	p.need((l.DP*l.CP)%l.EP == 0, func() string {
		return fmt.Sprintf("ep %d: want a divisor of dp·cp %d (expert parallelism runs inside the data-parallel ranks)", l.EP, l.DP*l.CP)
	})
	rc := l.recompute()
	p.need(rc == model.RecomputeNone || rc == model.RecomputeSelective || rc == model.RecomputeFull, func() string { return fmt.Sprintf("recompute %q: want none, selective or full", l.Recompute) })
}

// validateBatch checks the batch and its micro-batches.
func (l Layout) validateBatch(t model.TransformerShape, p *problems) {
	p.need(l.MicroBatch >= 1, func() string { return fmt.Sprintf("micro-batch %d: want at least 1", l.MicroBatch) })
	if l.MicroBatch < 1 {
		return
	}
	p.need(l.GlobalBatch >= 1 && l.GlobalBatch%(l.MicroBatch*l.DP) == 0, func() string {
		return fmt.Sprintf("global batch %d: want a positive multiple of micro-batch × dp = %d", l.GlobalBatch, l.MicroBatch*l.DP)
	})
	m := l.GlobalBatch / (l.MicroBatch * l.DP)
	p.need(l.chunks() == 1 || m%l.PP == 0, func() string {
		return fmt.Sprintf("global batch %d: the interleaved schedule wants its %d micro-batches a multiple of pp %d", l.GlobalBatch, m, l.PP)
	})
	p.need(l.SeqLen >= 0, func() string { return fmt.Sprintf("sequence length %d: want 0 (the shape's) or more", l.SeqLen) })
}

// validateSharding checks the sharding and its group.
func (l Layout) validateSharding(p *problems) {
	sh := l.sharding()
	p.need(slices.Contains(shardings, sh), func() string {
		names := make([]string, len(shardings))
		for i, s := range shardings {
			names[i] = string(s)
		}
		return fmt.Sprintf("sharding %q: want one of %s", l.Sharding, strings.Join(names, ", "))
	})
	if sh != ShardHSDP {
		return
	}
	p.need(l.NodeGPUs >= 1 && l.NodeGPUs%l.TP == 0, func() string {
		return fmt.Sprintf("node gpus %d: want a positive multiple of tp %d for hsdp", l.NodeGPUs, l.TP)
	})
	if l.NodeGPUs >= 1 && l.NodeGPUs%l.TP == 0 {
		g := l.shardGroup()
		p.need((l.DP*l.CP)%g == 0 && g%l.EP == 0, func() string {
			return fmt.Sprintf("node gpus %d: hsdp's shard group of %d ranks must divide dp·cp %d and be a multiple of ep %d", l.NodeGPUs, g, l.DP*l.CP, l.EP)
		})
	}
}

// shardGroup returns the ranks that share the dense model states: DP·CP,
// or for hsdp the data- and context-parallel ranks of one node,
// min(DP·CP, NodeGPUs/TP). It is 1 without sharding.
func (l Layout) shardGroup() int {
	switch l.sharding() {
	case ShardNone:
		return 1
	case ShardHSDP:
		return max(1, min(l.DP*l.CP, l.NodeGPUs/l.TP))
	}
	return l.DP * l.CP
}
