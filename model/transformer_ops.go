package model

import (
	"fmt"

	"scaleplan/internal/units"
)

// step checks st against t and fills its defaults.
func (t TransformerShape) step(st TransformerStep) (TransformerStep, error) {
	if err := t.Validate(); err != nil {
		return st, err
	}
	if st.SeqLen == 0 {
		st.SeqLen = t.SeqLen
	}
	if st.Precision == "" {
		st.Precision = FP32
	}
	if st.Recompute == "" {
		st.Recompute = RecomputeNone
	}
	switch {
	case st.Batch < 1:
		return st, fmt.Errorf("transformer %s: batch %d: want at least 1", t.Name, st.Batch)
	case st.SeqLen < 1:
		return st, fmt.Errorf("transformer %s: sequence length %d: want 0 (the default) or more", t.Name, st.SeqLen)
	case !st.Precision.valid():
		return st, fmt.Errorf("transformer %s: unknown precision %q (valid: fp32, fp16, bf16)", t.Name, st.Precision)
	case st.Recompute != RecomputeNone && st.Recompute != RecomputeSelective && st.Recompute != RecomputeFull:
		return st, fmt.Errorf("transformer %s: recompute %q: want none, selective or full", t.Name, st.Recompute)
	}
	return st, nil
}

// Ops returns the operators of one training step of st.Batch sequences
// of st.SeqLen tokens: forward, backward (with the recomputation st asks
// for) and Adam's update.
func (t TransformerShape) Ops(st TransformerStep) ([]Op, error) {
	st, err := t.step(st)
	if err != nil {
		return nil, err
	}
	return t.fusedStepOps(float64(st.Batch)*float64(st.SeqLen), st.SeqLen, st.Precision, st.Recompute, st.Fused), nil
}

// ActivationBytesPerLayer returns the bytes one layer (the first; of an
// encoder-decoder, the encoder's) keeps for the backward pass at st: the
// sum of its forward operators' Saved. For a GPT shape (MHA, GELU,
// f = 4d, LayerNorm, dropout, unfused attention) in 16-bit it is
// Korthikanti et al. 2022, Section 4.1 and Table 2 without parallelism:
//
//	none       s·b·d·(34 + 5·a·s/d)
//	selective  34·s·b·d
//	full       2·s·b·d
func (t TransformerShape) ActivationBytesPerLayer(st TransformerStep) (units.Bytes, error) {
	st, err := t.step(st)
	if err != nil {
		return 0, err
	}
	c := t.newCtx(float64(st.Batch)*float64(st.SeqLen), st.SeqLen, st.Precision, st.Recompute)
	c.layer("layers.0", t.Stack == DecoderOnly, false)
	var b units.Bytes
	for i := range c.o.fwd {
		b += c.o.fwd[i].Saved
	}
	return b, nil
}

// tfCtx is the state of one transformer step's generation.
type tfCtx struct {
	t      *TransformerShape
	o      *seqOps
	tokens float64 // tokens per stack
	s      int     // tokens each one attends over
	rc     Recompute
	fused  bool // TransformerStep.Fused
}

func (t TransformerShape) newCtx(tokens float64, s int, p Precision, rc Recompute) *tfCtx {
	return &tfCtx{t: &t, o: &seqOps{p: p.Size()}, tokens: tokens, s: s, rc: rc}
}

// stepOps lists a step over tokens tokens per stack (sequences of s).
func (t TransformerShape) stepOps(tokens float64, s int, p Precision, rc Recompute) []Op {
	return t.fusedStepOps(tokens, s, p, rc, false)
}

// fusedStepOps is stepOps of a program that fuses elementwise chains or
// not (TransformerStep.Fused).
func (t TransformerShape) fusedStepOps(tokens float64, s int, p Precision, rc Recompute, fused bool) []Op {
	c := t.newCtx(tokens, s, p, rc)
	c.fused, c.o.biasFused = fused, fused || t.FusedBiasGrad
	d := float64(t.Hidden)
	enc := ""
	if t.Stack == EncoderDecoder {
		enc = "encoder."
	}
	c.embeddings(enc, true)
	for i := 0; i < t.Layers; i++ {
		c.layer(fmt.Sprintf("%slayers.%d", enc, i), t.Stack == DecoderOnly, false)
	}
	c.finalNorm(enc)
	if t.Stack == EncoderDecoder {
		c.embeddings("decoder.", false)
		for i := 0; i < t.DecoderLayers; i++ {
			c.layer(fmt.Sprintf("decoder.layers.%d", i), true, true)
		}
		c.finalNorm("decoder.")
	}
	if t.Pooler {
		seqs := c.tokens / float64(s)
		c.o.castInputs(func() {
			c.o.linear("pooler.dense", seqs, int64(t.Hidden), int64(t.Hidden), 1, int64(t.Hidden)*int64(t.Hidden)+int64(t.Hidden))
		})
		c.o.pointwise("pooler.tanh", Elementwise, seqs*d, 1, 1, c.o.bytes(seqs*d), 0)
	}
	if t.SpanHead {
		c.spanHead()
		return c.o.list(c.o.adam(c.o.sumParams()))
	}
	var head int64
	if !t.TiedEmbeddings {
		head = int64(t.Vocab) * int64(t.Hidden)
	}
	c.o.castInputs(func() {
		c.o.linear("lm_head", tokens, int64(t.Hidden), int64(t.TableVocab()), 1, head)
	})
	if t.TiedEmbeddings {
		c.o.fwd[len(c.o.fwd)-1].TiedParams = int64(t.TableVocab()) * int64(t.Hidden)
	}
	if t.LabelSmoothing {
		c.o.labelSmoothedLoss(tokens, float64(t.TableVocab()))
	} else {
		c.o.loss(tokens, float64(t.TableVocab()))
	}
	return c.o.list(c.o.adam(c.o.sumParams()))
}

// spanHead appends SpanHead's operators: the start and end logits of
// every token, and two cross-entropies per sequence, each over its s
// tokens' logits.
func (c *tfCtx) spanHead() {
	d := int64(c.t.Hidden)
	c.o.castInputs(func() {
		c.o.linear("qa_outputs", c.tokens, d, 2, 1, 2*d+2)
	})
	c.o.loss(2*c.tokens/float64(c.s), float64(c.s))
}

// embeddings appends the token lookup (whose table the first stack owns),
// the position and segment lookups and the embedding norm.
func (c *tfCtx) embeddings(prefix string, first bool) {
	t, d := c.t, int64(c.t.Hidden)
	var table int64
	if first {
		table = int64(t.Vocab) * d
	}
	c.o.embedding(prefix+"embed_tokens", c.tokens, float64(d), table)
	if t.ScaledEmbeddings {
		c.scaledEmbeddings(prefix)
		return
	}
	tables := 1
	if t.Positions == "" || t.Positions == LearnedPositions {
		c.o.embedding(prefix+"embed_positions", c.tokens, float64(d), int64(t.maxPositions())*d)
		tables++
	}
	if t.TokenTypes > 0 && first {
		c.o.embedding(prefix+"embed_token_types", c.tokens, float64(d), int64(t.TokenTypes)*d)
		tables++
	}
	if tables > 1 {
		c.o.pointwise(prefix+"embed_sum", Elementwise, c.tokens*float64(d), tables, float64(tables-1), 0, 0)
	}
	if t.EmbeddingNorm && first {
		c.norm(prefix + "embed_norm")
	}
}

// scaledEmbeddings appends what follows the token lookup under
// ScaledEmbeddings, as fairseq's encoder and decoder run it: the scaling
// by √d, the positions (a lookup in a table without gradient, added in
// place: no backward operators) and the dropout.
func (c *tfCtx) scaledEmbeddings(prefix string) {
	t, e := c.t, c.tokens*float64(c.t.Hidden)
	c.o.pointwise(prefix+"embed_scale", Elementwise, e, 1, 1, 0, 0)
	if t.Positions == "" || t.Positions == LearnedPositions || t.Positions == SinusoidalPositions {
		var params int64
		if t.Positions != SinusoidalPositions {
			params = int64(t.maxPositions()) * int64(t.Hidden)
		}
		c.o.push(Op{Name: prefix + "embed_positions", Kind: Embedding, Params: params,
			Read: c.o.bytes(e) + units.Bytes(seqIDBytes*c.tokens), Write: c.o.bytes(e)})
		c.o.push(Op{Name: prefix + "embed_sum", Kind: Elementwise, FLOPs: e, Read: c.o.bytes(2 * e), Write: c.o.bytes(e)})
	}
	if t.Dropout {
		c.o.dropout(prefix+"embed_dropout", e)
	}
}

// finalNorm appends a pre-norm stack's final norm.
func (c *tfCtx) finalNorm(prefix string) {
	if c.t.PreNorm {
		c.norm(prefix + "final_norm")
	}
}

// norm appends a LayerNorm or RMSNorm over the tokens, which keeps its
// input.
func (c *tfCtx) norm(name string) {
	fl := float64(seqNormFLOPs)
	if c.t.Norm == NormRMS {
		fl = seqRMSFLOPs
	}
	e := c.tokens * float64(c.t.Hidden)
	c.o.norm(name, e, fl, c.t.normParams())
	c.o.float32Stream() // autocast: layer_norm is a float32 op, on the float32 stream
}

// layer appends one transformer layer: self-attention, cross-attention
// for an encoder-decoder's decoder, and the feed-forward block, each a
// residual branch with its norm before (pre-norm) or after it.
func (c *tfCtx) layer(name string, causal, cross bool) {
	start := len(c.o.fwd)
	c.branch(name+".self_attn", func() { c.selfAttention(name+".self_attn", causal) })
	if cross {
		c.branch(name+".encoder_attn", func() { c.crossAttention(name + ".encoder_attn") })
	}
	c.branch(name+".ffn", func() { c.ffn(name + ".ffn") })
	if c.rc == RecomputeFull {
		c.recomputeAll(start)
	}
}

// branch appends a residual branch body with its norm, dropout and
// residual addition.
func (c *tfCtx) branch(name string, body func()) {
	if c.t.PreNorm {
		c.norm(name + "_norm")
	}
	body()
	e := c.tokens * float64(c.t.Hidden)
	if c.t.Dropout {
		c.o.dropout(name+".dropout", e)
	}
	c.o.pointwise(name+".residual", Elementwise, e, 2, 1, 0, 0)
	c.o.float32Stream() // the residual stream carries the norms' float32 outputs
	// Autograd casts the float32 sum's gradient to the 16-bit branch.
	c.o.bwd[len(c.o.bwd)-1][0].CastIn = c.o.bytes(e)
	if !c.t.PreNorm {
		c.norm(name + "_norm")
	}
}

// recomputeAll makes a layer whose forward operators start at start keep
// its input only, and run its forward again before its backward pass.
func (c *tfCtx) recomputeAll(start int) {
	fwd := c.o.fwd[start:]
	again := make([]Op, len(fwd))
	for i := range fwd {
		again[i] = fwd[i]
		again[i].Name += ".recompute"
		again[i].Pass, again[i].Params, again[i].Saved = Backward, 0, 0
		fwd[i].Saved = 0
	}
	fwd[0].Saved = c.o.bytes(c.tokens * float64(c.t.Hidden))
	// The backward groups run in reverse: the recomputation goes after
	// the layer's groups so that it runs before them.
	c.o.bwd = append(c.o.bwd, again)
}

// selfAttention appends the fused q, k, v projection (three under
// SplitQKV), attention and the output projection.
func (c *tfCtx) selfAttention(name string, causal bool) {
	t := c.t
	d, dq, dkv := int64(t.Hidden), int64(t.Heads*t.headDim()), int64(t.kvHeads()*t.headDim())
	c.o.castInputs(func() {
		if t.SplitQKV {
			c.o.linear(name+".q", c.tokens, d, dq, 1, d*dq+t.bias(dq))
			c.o.linear(name+".k", c.tokens, d, dkv, 1, d*dkv+t.bias(dkv))
			c.o.linear(name+".v", c.tokens, d, dkv, 1, d*dkv+t.bias(dkv))
		} else {
			c.o.linear(name+".qkv", c.tokens, d, dq+2*dkv, 1, d*(dq+2*dkv)+t.bias(dq+2*dkv))
		}
	})
	c.packedCopy(name+".qkv", float64(dq), 3)
	c.attention(name+".attention", causal)
	c.outputCopy(name + ".attention")
	c.o.linear(name+".out", c.tokens, dq, d, 1, dq*d+t.bias(d))
}

// crossAttention appends the query projection of the decoder's tokens,
// the key and value projection of the encoder's output, attention and the
// output projection.
func (c *tfCtx) crossAttention(name string) {
	t := c.t
	d, dq, dkv := int64(t.Hidden), int64(t.Heads*t.headDim()), int64(t.kvHeads()*t.headDim())
	c.o.castInputs(func() {
		c.o.linear(name+".q", c.tokens, d, dq, 1, d*dq+t.bias(dq))
		c.o.linear(name+".kv", c.tokens, d, 2*dkv, 1, d*2*dkv+t.bias(2*dkv))
	})
	c.packedCopy(name+".kv", float64(dkv), 2)
	c.attention(name+".attention", false)
	c.outputCopy(name + ".attention")
	c.o.linear(name+".out", c.tokens, dq, d, 1, dq*d+t.bias(d))
}

// packedCopy appends, under TorchMHA, _in_projection_packed's copy of a
// packed projection of parts parts of width values per token into their
// own layout, and its backward: per part a zeroed tensor of the whole
// (select_backward) with the part's gradient copied into it, the sums of
// the parts' gradients, and the copy of their permuted sum to a matrix
// for the projection's backward. The copies of permuted views are
// Strided.
func (c *tfCtx) packedCopy(name string, width float64, parts int) {
	if !c.t.TorchMHA {
		return
	}
	o := c.o
	whole, part := o.bytes(c.tokens*width*float64(parts)), o.bytes(c.tokens*width)
	back := make([]Op, 0, 2*parts)
	for range parts {
		back = append(back, Op{Name: name + ".select.grad", Kind: Elementwise, Read: part, Write: whole + part, Kernels: 2})
	}
	for range parts - 1 {
		back = append(back, Op{Name: name + ".accumulate", Kind: Elementwise, FLOPs: c.tokens * width * float64(parts), Read: 2 * whole, Write: whole})
	}
	back = append(back, Op{Name: name + ".reshape.grad", Kind: Elementwise, Read: whole, Write: whole, Strided: true})
	o.push(Op{Name: name + ".contiguous", Kind: Elementwise, Read: whole, Write: whole, Strided: true}, back...)
}

// outputCopy appends, under TorchMHA, the copy of the attention's output
// to the output projection's layout and, backward, its gradient's copy
// back to the attention's: each Strided.
func (c *tfCtx) outputCopy(name string) {
	if !c.t.TorchMHA {
		return
	}
	o := c.o
	b := o.bytes(c.tokens * float64(c.t.Heads*c.t.headDim()))
	f := Op{Name: name + ".contiguous", Kind: Elementwise, Read: b, Write: b, Strided: true}
	g := f
	g.Name = name + ".contiguous.grad"
	o.push(f, g)
}

// attention appends scaled dot-product attention over the tokens, each
// attending over s keys: forward 4·tokens·s·d_q FLOPs (the score and
// value products; halved when causal under CausalSkip), as M = N = s,
// K = d/a products over tokens/s × a groups. Unfused, it keeps Q, K, V,
// the softmax output and, with dropout, its mask and output (Korthikanti
// et al. 2022: 6·s·b·d + 5·a·s²·b bytes in 16-bit); fused, Q, K, V and
// the fp32 log-sum-exp per row and head. Selective recomputation keeps
// Q, K and V only and runs the forward again before the backward.
// Where the program runs the softmax and the dropout as PyTorch's kernels
// of their own (Float32Softmax, or ScoreKernels in an eager step) they
// are operators of their own (splitAttention), which the operator model
// times at their kernels' shares of the bandwidth.
func (c *tfCtx) attention(name string, causal bool) {
	t, o := c.t, c.o
	eager := t.ScoreKernels && !c.fused
	if (t.Float32Softmax || eager) && !t.FusedAttention && c.rc != RecomputeSelective {
		c.splitAttention(name, causal)
		if eager && !t.Float32Softmax {
			c.scoreKernels(name, c.tokens*float64(c.s)*float64(t.Heads))
		}
		return
	}
	a, dh := float64(t.Heads), int64(t.headDim())
	dq, dkv := float64(t.Heads*t.headDim()), float64(t.kvHeads()*t.headDim())
	s := float64(c.s)
	fl := 4 * c.tokens * s * dq * t.causalFactor(causal)
	scores := c.tokens * s * a // score values, a·s² per sequence
	qkv := o.bytes(c.tokens * (dq + 2*dkv))
	out := o.bytes(c.tokens * dq)
	var saved, traffic units.Bytes // the s² part kept; the s² bytes moved each way
	bwd := 2.0
	if t.FusedAttention {
		saved, bwd = units.Bytes(seqLSEBytes*c.tokens*a), 2.5
	} else {
		saved, traffic = o.bytes(scores), 2*o.bytes(scores) // softmax output; scores and probabilities
		if t.Dropout {
			saved += units.Bytes(seqMaskBytes*scores) + o.bytes(scores)
			traffic += o.bytes(scores)
		}
	}
	if c.rc == RecomputeSelective && !t.FusedAttention {
		saved = 0
	}
	f := Op{Name: name, Kind: Attention, FLOPs: fl, Read: qkv + traffic, Write: out + traffic, Saved: qkv + saved,
		M: int64(c.s), N: int64(c.s), K: dh, Groups: seqCeil(c.tokens/s) * int64(t.Heads)}
	g := f
	g.Name, g.FLOPs, g.Params, g.Saved = name+".grad", bwd*fl, 0, 0
	g.Read, g.Write = qkv+2*out+saved+traffic, qkv+traffic
	if c.rc == RecomputeSelective && !t.FusedAttention {
		r := f
		r.Name, r.Pass, r.Saved = name+".recompute", Backward, 0
		o.push(f, r, g)
		return
	}
	o.push(f, g)
	if t.ScoreKernels && !t.FusedAttention && !c.fused {
		c.scoreKernels(name, scores)
	}
}

// scoreKernels appends ScoreKernels' scaling of the scores (forward and
// backward, each a read and a write of them) and the mask's addition
// (forward only), whose mask of one row a sequence is broadcast over the
// heads and the query positions (Op.Broadcast).
func (c *tfCtx) scoreKernels(name string, scores float64) {
	o := c.o
	o.pointwise(name+".scale", Elementwise, scores, 1, 1, 0, 0)
	o.push(Op{Name: name + ".mask", Kind: Elementwise, FLOPs: scores, Read: o.bytes(scores), Write: o.bytes(scores), Broadcast: true})
}

// splitAttention appends unfused attention with its softmax and dropout
// as operators of their own. Under Float32Softmax, in the order of
// fairseq's MultiheadAttention.forward in DeepLearningExamples
// (PyTorch/Translation/Transformer/fairseq/modules/
// multihead_attention.py): the score product; for causal attention the
// mask added to the scores in place (its backward is the identity); the
// softmax and the dropout, autocast's float32 operators (model.Op.Float32:
// the softmax's input cast up, the dropout's output cast back down to
// 16 bits by the value product's custom_fwd(cast_inputs=torch.half)); and
// the value product. Under ScoreKernels (BERT's modeling.py) the same
// kernels at the step's precision, the scaling and the mask after them
// (scoreKernels). The products' operator moves the scores it writes
// and the probabilities it reads, and keeps Q, K, V and the 16-bit
// probabilities; the softmax keeps its output, the dropout its mask.
func (c *tfCtx) splitAttention(name string, causal bool) {
	t, o := c.t, c.o
	dq, dkv := float64(t.Heads*t.headDim()), float64(t.kvHeads()*t.headDim())
	s := float64(c.s)
	fl := 4 * c.tokens * s * dq * t.causalFactor(causal)
	scores := c.tokens * s * float64(t.Heads)
	qkv, out, sc := o.bytes(c.tokens*(dq+2*dkv)), o.bytes(c.tokens*dq), o.bytes(scores)
	f := Op{Name: name, Kind: Attention, FLOPs: fl, Read: qkv + sc, Write: out + sc, Saved: qkv + sc,
		M: int64(c.s), N: int64(c.s), K: int64(t.headDim()), Groups: seqCeil(c.tokens/s) * int64(t.Heads)}
	g := f
	g.Name, g.FLOPs, g.Saved = name+".grad", 2*fl, 0
	g.Read, g.Write = qkv+out+2*sc, qkv+sc
	o.push(f, g)
	if causal {
		// fairseq's buffered_mask(...).unsqueeze(0): one s×s mask
		// broadcast over the sequences and heads (Op.Broadcast).
		o.push(Op{Name: name + ".mask", Kind: Elementwise, FLOPs: scores, Read: sc, Write: sc, Broadcast: true})
	}
	o.pointwise(name+".softmax", Softmax, scores, 1, seqLossFLOPs, sc, 0)
	if t.Float32Softmax {
		o.float32Last()
	}
	if t.Dropout {
		o.dropout(name+".dropout", scores)
		if t.Float32Softmax {
			o.float32Last()
		}
	}
}

// ffn appends the feed-forward block, dense or mixture of experts.
func (c *tfCtx) ffn(name string) {
	t := c.t
	if t.Experts == 0 {
		c.mlp(name, c.tokens, 1)
		return
	}
	d, e := int64(t.Hidden), int64(t.Experts)
	c.o.castInputs(func() { c.o.linear(name+".router", c.tokens, d, e, 1, d*e) })
	c.o.pointwise(name+".router_softmax", Softmax, c.tokens*float64(e), 1, seqLossFLOPs, c.o.bytes(c.tokens*float64(e)), 0)
	c.o.float32Last() // autocast: softmax is a float32 op

	routed := c.tokens * float64(t.TopK) * t.capacity() // token copies the experts process
	c.o.pointwise(name+".dispatch", Elementwise, routed*float64(d), 1, 0, 0, 0)
	c.mlp(name+".experts", routed/float64(e), e)
	c.o.pointwise(name+".combine", Elementwise, routed*float64(d), 1, 2, c.o.bytes(c.tokens*float64(t.TopK)), 0)
}

// mlp appends groups feed-forward blocks of rows tokens each: up (gate
// and up for SwiGLU), the activation, down.
func (c *tfCtx) mlp(name string, rows float64, groups int64) {
	t := c.t
	d, f, g := int64(t.Hidden), int64(t.FFN), float64(groups)
	up := (t.ffnMats() - 1) * f
	c.o.castInputs(func() { c.o.linear(name+".fc1", rows, d, up, groups, groups*(d*up+t.bias(up))) })
	act, fl := "gelu", float64(seqGELUFLOPs)
	switch t.Activation {
	case FFNSwiGLU:
		act, fl = "swiglu", seqSwiGLUFLOPs
	case FFNReLU:
		act, fl = "relu", 1
	}
	// The activation keeps its input (both halves for SwiGLU).
	c.o.pointwise(name+"."+act, Elementwise, g*rows*float64(f), int(t.ffnMats()-1), fl, c.o.bytes(g*rows*float64(up)), 0)
	if t.FFNDropout {
		c.o.dropout(name+"."+act+"_dropout", g*rows*float64(f))
	}
	c.o.linear(name+".fc2", rows, f, d, groups, groups*(f*d+t.bias(d)))
}
