package model

import (
	"math"

	"scaleplan/internal/units"
)

// seqOps collects a sequence model's operators: the forward operators in
// order, and the backward operators in groups, one per forward operator
// (or per recomputation), which the step runs in reverse order.
type seqOps struct {
	fwd []Op
	bwd [][]Op
	p   float64 // bytes per activation and weight value
	// castIn says the products appended next read a float32 activation
	// under autocast (the residual stream or a norm's output), which
	// autocast casts for each of them (Op.CastIn).
	castIn bool
	// biasFused says the program sums a bias's gradient in another
	// kernel: a graph compiler's fusion with the one that produces the
	// output gradient (TransformerStep.Fused), or the weight gradient's
	// product (TransformerShape.FusedBiasGrad).
	biasFused bool
}

// Per-element FLOPs of the memory-bound operators: estimates counted from
// their definitions (these operators sit outside the matrix-product
// convention of docs/models.md; their bytes, not their FLOPs, set their
// time), and the sizes of the values they keep.
const (
	seqNormFLOPs     = 5  // mean, variance, subtract, divide, scale and shift
	seqRMSFLOPs      = 4  // square, mean, divide, scale
	seqNormGradFLOPs = 4  // the scale's and shift's gradients: normalise, multiply, two sums
	seqGELUFLOPs     = 8  // tanh approximation (Hendrycks and Gimpel 2016)
	seqSwiGLUFLOPs   = 5  // sigmoid (exp, add, divide), two multiplies
	seqLossFLOPs     = 4  // max, exp, sum, log over the logits
	seqLSTMFLOPs     = 14 // per gate value: its sigmoid or tanh and its share of the cell update
	seqMaskBytes     = 1  // a dropout mask value (Korthikanti et al. 2022)
	seqIDBytes       = 8  // a token id (int64)
	seqLSEBytes      = 4  // FlashAttention's fp32 log-sum-exp per row and head
	seqAdamFLOPs     = 14 // torch.optim.Adam: m 3, v 4, bias corrections, sqrt, eps, divide, step 7
)

func (o *seqOps) bytes(values float64) units.Bytes { return units.Bytes(values * o.p) }

// push appends a forward operator and its backward group.
func (o *seqOps) push(f Op, bwd ...Op) {
	f.Pass = Forward
	o.fwd = append(o.fwd, f)
	for i := range bwd {
		bwd[i].Pass = Backward
	}
	o.bwd = append(o.bwd, bwd)
}

// linear appends y = x·W (+ b) of m rows, k inputs and n outputs (groups
// independent products of that size): forward 2·m·n·k FLOPs, and the
// gradients of the input (m×n by n×k) and of the weight (k×m by m×n). It
// keeps its input for the weight's gradient. With a bias (params beyond
// the weights' k·n·groups) the backward pass also sums the output's
// gradient over the rows into the bias's, a reduction of its own that
// reads all m×n of it: autograd's addmm backward reduces a broadcast
// input's gradient to its shape (PyTorch's aten::sum, one call a biased
// linear in our profiles, docs/validation-profiles.md; TensorFlow's
// BiasAddGrad), unless the program sums it in another kernel
// (seqOps.biasFused).
func (o *seqOps) linear(name string, rows float64, k, n, groups, params int64) {
	g := float64(groups)
	m, mf, kf, nf := seqCeil(rows), rows, float64(k), float64(n)
	fl := 2 * g * mf * nf * kf
	bwd := []Op{{Name: name + ".grad_input", Kind: MatMul, FLOPs: fl,
		Read: o.bytes(g * (mf*nf + nf*kf)), Write: o.bytes(g * mf * kf), M: m, N: k, K: n, Groups: groups},
		{Name: name + ".grad_weight", Kind: MatMul, FLOPs: fl,
			Read: o.bytes(g * (mf*kf + mf*nf)), Write: o.bytes(g * kf * nf), M: k, N: n, K: m, Groups: groups}}
	if params > k*n*groups && !o.biasFused {
		bwd = append(bwd, Op{Name: name + ".grad_bias", Kind: Elementwise, FLOPs: g * mf * nf,
			Read: o.bytes(g * mf * nf), Write: o.bytes(g * nf), Reduce: true})
	}
	f := Op{Name: name, Kind: MatMul, FLOPs: fl, Params: params,
		Read: o.bytes(g * (mf*kf + kf*nf)), Write: o.bytes(g * mf * nf), Saved: o.bytes(g * mf * kf),
		M: m, N: n, K: k, Groups: groups}
	if o.castIn {
		f.CastIn = o.bytes(g * mf * kf)
		bwd[0].CastIn = f.CastIn // the input's gradient, cast back
	}
	o.push(f, bwd...)
}

// castInputs appends ops with castIn set: products that read a float32
// activation under autocast.
func (o *seqOps) castInputs(ops func()) {
	o.castIn = true
	ops()
	o.castIn = false
}

// float32Stream marks the last forward operator and its backward ones as
// float32 operators on the float32 residual stream (Op.Float32Input): a
// norm, or a residual addition, which casts nothing before it.
func (o *seqOps) float32Stream() {
	o.markLast(func(op *Op) { op.Float32, op.Float32Input = true, true })
}

// markLast applies mark to the last forward operator and its backward
// ones.
func (o *seqOps) markLast(mark func(*Op)) {
	mark(&o.fwd[len(o.fwd)-1])
	for i := range o.bwd[len(o.bwd)-1] {
		mark(&o.bwd[len(o.bwd)-1][i])
	}
}

// pointwise appends a memory-bound operator over elems values read from
// ins tensors, flops per output value, keeping saved bytes; its backward
// operator reads the output gradient and what was kept and writes ins
// input gradients.
func (o *seqOps) pointwise(name string, kind OpKind, elems float64, ins int, flops float64, saved units.Bytes, params int64) {
	o.push(Op{Name: name, Kind: kind, FLOPs: flops * elems, Params: params,
		Read: o.bytes(float64(ins) * elems), Write: o.bytes(elems), Saved: saved},
		Op{Name: name + ".grad", Kind: kind, FLOPs: flops * elems,
			Read: o.bytes(elems) + saved, Write: o.bytes(float64(ins) * elems)})
}

// norm appends a layer norm (or RMSNorm) over elems values, flops per
// value, that keeps its input. Its backward pass runs two kernels, as
// PyTorch's native_layer_norm_backward and apex's fused layer norm do: the
// input's gradient, which reads the output's gradient and the input and
// writes the input's gradient, and where the norm has params (its scale,
// and shift) their gradients, a reduction over the rows that reads the
// output's gradient and the input once more (Op.Reduce).
func (o *seqOps) norm(name string, elems, flops float64, params int64) {
	x := o.bytes(elems)
	bwd := []Op{{Name: name + ".grad", Kind: Norm, FLOPs: flops * elems, Read: 2 * x, Write: x}}
	if params > 0 {
		bwd = append(bwd, Op{Name: name + ".grad_weight", Kind: Norm, FLOPs: seqNormGradFLOPs * elems,
			Read: 2 * x, Write: o.bytes(float64(params)), Reduce: true})
	}
	o.push(Op{Name: name, Kind: Norm, FLOPs: flops * elems, Params: params, Read: x, Write: x, Saved: x}, bwd...)
}

// dropout appends a dropout over elems values that keeps its 1-byte mask.
func (o *seqOps) dropout(name string, elems float64) {
	o.pointwise(name, Elementwise, elems, 1, 1, units.Bytes(seqMaskBytes*elems), 0)
	o.fwd[len(o.fwd)-1].Random = true
}

// embedding appends a lookup of tokens rows of width d from a table of
// params values, and its scatter-add.
func (o *seqOps) embedding(name string, tokens, d float64, params int64) {
	o.push(Op{Name: name, Kind: Embedding, Params: params,
		Read: o.bytes(tokens*d) + units.Bytes(seqIDBytes*tokens), Write: o.bytes(tokens * d), Saved: units.Bytes(seqIDBytes * tokens)},
		Op{Name: name + ".grad", Kind: Embedding, FLOPs: tokens * d,
			Read: o.bytes(2*tokens*d) + units.Bytes(seqIDBytes*tokens), Write: o.bytes(tokens * d)})
}

// loss appends the cross-entropy of tokens over a vocabulary of v: it
// reads the logits, writes one loss per token and keeps the logits for
// its gradient, which it writes.
func (o *seqOps) loss(tokens, v float64) {
	logits := tokens * v
	o.push(Op{Name: "loss", Kind: Loss, FLOPs: seqLossFLOPs * logits, Read: o.bytes(logits), Write: o.bytes(tokens), Saved: o.bytes(logits)},
		Op{Name: "loss.grad", Kind: Loss, FLOPs: 2 * logits, Read: o.bytes(logits), Write: o.bytes(logits)})
	o.float32Last()
}

// labelSmoothedLoss appends fairseq's label-smoothed cross-entropy over
// tokens rows of v logits, as DeepLearningExamples' Transformer computes
// it (PyTorch/Translation/Transformer: fairseq/ddp_trainer.py's
// F.log_softmax(logits, dtype=torch.float32), fairseq/criterions.py's
// lprobs.gather and lprobs.sum(dim=-1)). Its bytes per logit are PyTorch's
// kernels': the log-softmax reads the logits at the step's precision
// (16-bit ones through its half-to-float path, no cast kernel) and
// writes float32, which it keeps; the smoothing term reads them again.
// Backward, the gather's gradient is a float32 zero tensor with one value
// scattered per row, which autograd adds to the sum's broadcast
// gradient (read, write), and the log-softmax's backward reads that sum
// and its output and writes the logits' gradient at the step's precision:
//
//	forward  p + 4 + 4 bytes, backward 4 + 8 + 8 + p bytes per logit
//
// against 2p and 2p for the plain loss (loss).
func (o *seqOps) labelSmoothedLoss(tokens, v float64) {
	logits := tokens * v
	f32 := units.Bytes(4 * logits)
	o.push(Op{Name: "loss.log_softmax", Kind: Loss, FLOPs: seqLossFLOPs * logits, Read: o.bytes(logits), Write: f32, Saved: f32},
		Op{Name: "loss.log_softmax.grad", Kind: Loss, FLOPs: 2 * logits, Read: 2 * f32, Write: o.bytes(logits)})
	o.push(Op{Name: "loss.smoothing", Kind: Loss, FLOPs: logits, Read: f32, Write: units.Bytes(8 * tokens)},
		Op{Name: "loss.gather.grad", Kind: Loss, Write: f32},
		Op{Name: "loss.accumulate_grad", Kind: Loss, FLOPs: logits, Read: f32, Write: f32})
}

// adam returns the optimizer's update of n parameters: Adam with fp32
// weights and moments, and under 16-bit training an fp32 master copy from
// which the 16-bit weights are written again. It reads the weight, its
// gradient and two moments and writes the weight and the moments.
func (o *seqOps) adam(n int64) Op {
	v := float64(n)
	write := 12 * v
	if o.p < 4 {
		write += o.p * v
	}
	return Op{Name: "optimizer.adam", Kind: Update, Pass: UpdatePass, FLOPs: seqAdamFLOPs * v,
		Read: units.Bytes((12 + o.p) * v), Write: units.Bytes(write)}
}

// float32Last marks the last forward operator and its backward group as
// running in float32 under automatic mixed precision (Op.Float32).
func (o *seqOps) float32Last() { o.markLast(func(op *Op) { op.Float32 = true }) }

// list returns the step's operators: the forward ones, the backward groups
// in reverse order, then update.
func (o *seqOps) list(update Op) []Op { return append(o.passes(), update) }

// passes returns the forward operators in order, then the backward ones
// in reverse, with room for an update after them.
func (o *seqOps) passes() []Op {
	n := len(o.fwd) + 1
	for _, g := range o.bwd {
		n += len(g)
	}
	out := make([]Op, 0, n)
	out = append(out, o.fwd...)
	for i := len(o.bwd) - 1; i >= 0; i-- {
		out = append(out, o.bwd[i]...)
	}
	return out
}

// sumParams returns the forward operators' parameters.
func (o *seqOps) sumParams() int64 {
	var n int64
	for i := range o.fwd {
		n += o.fwd[i].Params
	}
	return n
}

// seqCeil returns ⌈x⌉ as an int64, at least 1.
func seqCeil(x float64) int64 { return max(1, int64(math.Ceil(x))) }
