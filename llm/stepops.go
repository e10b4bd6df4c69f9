package llm

import (
	"strings"

	"scaleplan/internal/units"
	"scaleplan/model"
)

// passTime is a forward and a backward time (the backward with its
// recomputation).
type passTime struct{ fwd, bwd units.Seconds }

func (p passTime) sum() units.Seconds { return p.fwd + p.bwd }

// computeCost is one GPU's compute per micro-batch: one transformer
// layer, its attention (which ring attention's exchange overlaps), the
// first stage's embedding and the last stage's final norm, output
// projection and loss; and the optimizer's update of one parameter.
type computeCost struct {
	layer, attn, first, last passTime
	adam                     model.Op // Adam's update of one parameter
}

// computeKey is what a layer's compute depends on.
type computeKey struct {
	b, s, tp, cp int
	sp           bool
	rc           model.Recompute
}

// newComputeCost lists one layer of t at micro-batch k.b and k.s/k.cp
// tokens per sequence in bf16 with recomputation k.rc
// (TransformerShape.Ops), splits each operator over the tensor- and
// context-parallel ranks (splitOp) and times it with f.
func newComputeCost(t model.TransformerShape, k computeKey, f OpTime) (computeCost, error) {
	one := t
	one.Layers = 1
	if one.VocabMultiple <= 1 && one.Vocab%8 != 0 {
		// A tokenizer's own size: Megatron-LM pads it to a multiple of
		// 128 per tensor-parallel rank (--make-vocab-size-divisible-by,
		// default 128; tokenizer.py, _vocab_size_with_padding), so that
		// each rank's share of the output projection stays aligned.
		one.VocabMultiple = 128 * k.tp
	}
	ops, err := one.Ops(model.TransformerStep{Batch: k.b, SeqLen: k.s / k.cp, Precision: model.BF16, Recompute: k.rc})
	if err != nil {
		return computeCost{}, err
	}
	var c computeCost
	for _, op := range ops {
		if op.Kind == model.Update {
			n := float64(one.Params())
			op.FLOPs /= n
			op.Read = units.Bytes(float64(op.Read) / n)
			op.Write = units.Bytes(float64(op.Write) / n)
			c.adam = op
			continue
		}
		op = splitOp(op, k.tp, k.cp, k.sp)
		d := f(op)
		var p *passTime
		switch {
		case strings.HasPrefix(op.Name, "layers."):
			p = &c.layer
			if op.Kind == model.Attention {
				c.attn.add(op.Pass, d)
			}
		case strings.HasPrefix(op.Name, "embed"):
			p = &c.first
		default: // final norm, output projection, loss
			p = &c.last
		}
		p.add(op.Pass, d)
	}
	return c, nil
}

func (p *passTime) add(pass model.Pass, d units.Seconds) {
	if pass == model.Forward {
		p.fwd += d
	} else {
		p.bwd += d
	}
}

// adamTime returns the time of Adam's update of n parameters.
func (c computeCost) adamTime(n float64, f OpTime) units.Seconds {
	if n <= 0 {
		return 0
	}
	op := c.adam
	op.FLOPs *= n
	op.Read = units.Bytes(float64(op.Read) * n)
	op.Write = units.Bytes(float64(op.Write) * n)
	return f(op)
}

// opBase splits an operator's name into its forward operator's name and
// the part ("", "grad_input", "grad_weight", "grad", "recompute").
func opBase(name string) (base, part string) {
	for _, p := range []string{"grad_input", "grad_weight", "grad", "recompute"} {
		if b, ok := strings.CutSuffix(name, "."+p); ok {
			return b, p
		}
	}
	return name, ""
}

// splitDim returns which of a linear layer's forward dimensions tensor
// parallelism splits (Shoeybi et al. 2019, Section 3): 'n', the output,
// for the column-parallel q/k/v projection, first feed-forward product
// and the vocabulary-parallel output projection; 'k', the input, for the
// row-parallel attention output and second feed-forward product; 0 for
// the replicated MoE router.
func splitDim(base string) byte {
	switch {
	case strings.HasSuffix(base, ".qkv"), strings.HasSuffix(base, ".q"), strings.HasSuffix(base, ".kv"),
		strings.HasSuffix(base, ".fc1"), base == "lm_head":
		return 'n'
	case strings.HasSuffix(base, ".out"), strings.HasSuffix(base, ".fc2"):
		return 'k'
	}
	return 0
}

// splitOp returns the share of op one GPU runs under tensor parallelism
// tp (with sequence parallelism sp) and context parallelism cp, op having
// been listed for s/cp tokens per sequence. Matrix products split their
// column- or row-parallel dimension and their FLOPs and bytes by tp;
// attention splits its heads by tp and, its s/cp queries attending over
// all s keys in ring attention, runs cp times the FLOPs of an s/cp-token
// sequence; the loss is vocabulary-parallel; the feed-forward activation
// is split by tp; the other element-wise operators (norms, dropout,
// residuals) are replicated over tp, or split by it under sequence
// parallelism (Korthikanti et al. 2022, Section 4.2.2).
func splitOp(op model.Op, tp, cp int, sp bool) model.Op {
	base, part := opBase(op.Name)
	div := func(f float64) {
		op.FLOPs /= f
		op.Read = units.Bytes(float64(op.Read) / f)
		op.Write = units.Bytes(float64(op.Write) / f)
	}
	cut := func(x *int64) { *x = max(1, (*x+int64(tp)-1)/int64(tp)) }
	switch op.Kind {
	case model.MatMul:
		d := splitDim(base)
		if d == 0 {
			return op
		}
		div(float64(tp))
		switch {
		case part == "grad_input" && d == 'n', part != "grad_input" && part != "grad_weight" && d == 'k':
			cut(&op.K)
		case part == "grad_weight" && d == 'k':
			cut(&op.M)
		default:
			cut(&op.N)
		}
	case model.Attention:
		div(float64(tp))
		op.FLOPs *= float64(cp)
		op.N *= int64(cp)
		cut(&op.Groups)
	case model.Loss:
		div(float64(tp))
	default:
		if isFFNActivation(base) || sp {
			div(float64(tp))
		}
	}
	return op
}

// isFFNActivation reports whether base is a feed-forward activation, whose
// f-wide input tensor parallelism splits.
func isFFNActivation(base string) bool {
	return strings.HasSuffix(base, ".gelu") || strings.HasSuffix(base, ".swiglu") || strings.HasSuffix(base, ".relu")
}
