package model

import "fmt"

// Sample conventions of the sequence models' generators (Shape.Batch and
// Shape.SeqLen):
//
//   - a transformer shape (gpt3-*, llama*, mixtral-8x7b, bert-*): Batch
//     sequences of SeqLen tokens (default the shape's SeqLen);
//   - transformer-base, transformer-big: Batch token pairs, the unit of
//     the shipped profiles' wmt-en-de-tokens, in sentences of SeqLen
//     tokens that attention spans (default 32), so ⌈Batch/SeqLen⌉
//     sentences per stack;
//   - gnmt: Batch sentence pairs of SeqLen source and SeqLen target
//     tokens (default 28, the profile's estimate).

// shapeOps returns the generator of the shipped transformer shape name,
// a step of Batch sequences.
func shapeOps(name string) Generator {
	return func(s Shape) ([]Op, error) {
		t, err := LookupTransformer(name)
		if err != nil {
			return nil, err
		}
		t.FusedAttention = t.FusedAttention || s.FusedAttention
		return t.Ops(TransformerStep{Batch: s.Batch, SeqLen: s.SeqLen, Precision: s.Precision, Fused: s.Fused})
	}
}

// ProgramTransformer returns the shipped transformer shape name as the
// program framework names (Shape.Framework) runs it: LookupTransformer's,
// but an encoder-decoder (transformer-base, transformer-big: fairseq's)
// as torch.nn.Transformer builds it where framework names
// engine/torchbench's program (its header names torchvision beside torch,
// as detectProgramOf reads it for Mask R-CNN): attention through
// torch.nn.MultiheadAttention (TorchMHA), fused.
func ProgramTransformer(name, framework string) (TransformerShape, error) {
	t, err := LookupTransformer(name)
	if err != nil {
		return t, err
	}
	return t.RunBy(framework), nil
}

// RunBy returns t as the program framework names (Shape.Framework) runs
// it (ProgramTransformer).
func (t TransformerShape) RunBy(framework string) TransformerShape {
	if t.Stack == EncoderDecoder && detectProgramOf(framework) == programTorchvision {
		t.TorchMHA, t.FusedAttention = true, true
	}
	return t
}

// translationOps returns the generator of the translation Transformer
// name, a step of Batch token pairs, as s.Framework's program runs it
// (ProgramTransformer).
func translationOps(name string) Generator {
	return func(s Shape) ([]Op, error) {
		t, err := ProgramTransformer(name, s.Framework)
		if err != nil {
			return nil, err
		}
		st, err := t.step(TransformerStep{Batch: s.Batch, SeqLen: s.SeqLen, Precision: s.Precision})
		if err != nil {
			return nil, err
		}
		return t.stepOps(float64(s.Batch), st.SeqLen, st.Precision, RecomputeNone), nil
	}
}

// GNMT's shape, MLPerf's rnn_translator (gnmt/pytorch/seq2seq/models):
// hidden 1024, the shared 32,320-token vocabulary, 4 encoder layers (the
// first bidirectional, residual from the third), an attention LSTM and 3
// decoder layers fed the attention context (residual from the third),
// normalized Bahdanau attention, dropout 0.2 on each layer's input.
const (
	gnmtHidden = 1024
	gnmtVocab  = 32320
	gnmtSeqLen = 28
	// gnmtMaxSeqLen bounds the time steps, each a few operators; MLPerf
	// trains on sentences of at most 65 or 75 tokens.
	gnmtMaxSeqLen = 4096
)

// gnmtOps lists a GNMT training step of s.Batch sentence pairs of s.SeqLen
// source and target tokens. Each LSTM layer runs its input product over
// the whole sequence as one matrix product and its recurrent product one
// time step after another, M = batch, N = 4·1024, K = 1024, each step's
// gates after its product (lstmRecurrence). Forward matrix-product and
// attention FLOPs per sentence pair:
//
//	2·s·(Σ 4h·(in+h) over the 8 LSTMs + 2·h² + 2·s·h + V·h)
//
// which at s = 28 is the profile's 7.141392384 GFLOP. The loss is
// labelSmoothedLoss: DeepLearningExamples' LabelSmoothing
// (PyTorch/Translation/GNMT/seq2seq/train/smoothing.py at 729963dd,
// smoothing 0.1) takes log_softmax(x, dtype=torch.float32), gathers the
// target's and takes every row's mean, the passes of fairseq's criterion
// (the MLPerf reference's rnn_translator does the same at the model's
// precision).
func gnmtOps(s Shape) ([]Op, error) {
	seq := s.SeqLen
	if seq == 0 {
		seq = gnmtSeqLen
	}
	if seq > gnmtMaxSeqLen {
		return nil, fmt.Errorf("model gnmt: sequence length %d: want at most %d (an operator per time step)", seq, gnmtMaxSeqLen)
	}
	o := &seqOps{p: s.Precision.Size()}
	b, sl := float64(s.Batch), float64(seq)
	tokens := b * sl
	const h, v = gnmtHidden, gnmtVocab
	o.embedding("encoder.embedder", tokens, h, v*h)
	gnmtLSTM(o, "encoder.rnn_layers.0", h, b, seq)
	gnmtLSTM(o, "encoder.rnn_layers.0_reverse", h, b, seq)
	gnmtLSTM(o, "encoder.rnn_layers.1", 2*h, b, seq)
	for i := 2; i < 4; i++ {
		gnmtLSTM(o, fmt.Sprintf("encoder.rnn_layers.%d", i), h, b, seq)
		o.pointwise(fmt.Sprintf("encoder.rnn_layers.%d.residual", i), Elementwise, tokens*h, 2, 1, 0, 0)
	}
	o.embedding("decoder.embedder", tokens, h, 0) // shared with the encoder
	gnmtLSTM(o, "decoder.att_rnn", h, b, seq)
	gnmtAttention(o, b, sl)
	for i := 1; i < 4; i++ {
		gnmtLSTM(o, fmt.Sprintf("decoder.rnn_layers.%d", i), 2*h, b, seq)
		if i > 1 {
			o.pointwise(fmt.Sprintf("decoder.rnn_layers.%d.residual", i), Elementwise, tokens*h, 2, 1, 0, 0)
		}
	}
	o.linear("decoder.classifier", tokens, h, v, 1, v*h+v)
	o.labelSmoothedLoss(tokens, v)
	return o.list(o.adam(o.sumParams())), nil
}

// gnmtLSTM appends one LSTM layer of in inputs over b sequences of seq
// steps, with dropout on its input: the input product (weight_ih and
// bias_ih), the recurrent product per step (weight_hh and bias_hh, owned
// by the first), and the gates. Per token it keeps its input, the
// previous hidden state, the four gates and the cell (the profile's rule).
func gnmtLSTM(o *seqOps, name string, in int64, b float64, seq int) {
	const h = gnmtHidden
	tokens := b * float64(seq)
	o.dropout(name+".dropout", tokens*float64(in))
	o.linear(name+".ih", tokens, in, 4*h, 1, 4*h*in+4*h)
	lstmRecurrence(o, name, h, b, seq)
}

// lstmRecurrence appends the recurrence of an LSTM layer of h hidden
// units over b sequences of seq steps as cuDNN's standard algorithm runs
// it, a step's work waiting for the step before: forward, each step's
// recurrent product (weight_hh and bias_hh, owned by the first) and its
// gates; backward, each step's gates and the product of its hidden
// state's gradient, then the weight's gradient as one product over every
// step (cudnnRNNBackwardWeights). Each step's gates keep the step's input,
// previous hidden state, four gates and cell (the profile's rule).
func lstmRecurrence(o *seqOps, name string, h int64, b float64, seq int) {
	tokens, hf := b*float64(seq), float64(h)
	for t := 0; t < seq; t++ {
		n := fmt.Sprintf("%s.hh.%d", name, t)
		fl := 2 * b * 4 * hf * hf
		f := Op{Name: n, Kind: MatMul, FLOPs: fl,
			Read: o.bytes(b*hf + 4*hf*hf), Write: o.bytes(4 * b * hf), Saved: o.bytes(b * hf),
			M: seqCeil(b), N: 4 * h, K: h, Groups: 1}
		g := []Op{{Name: n + ".grad_input", Kind: MatMul, FLOPs: fl,
			Read: o.bytes(4*b*hf + 4*hf*hf), Write: o.bytes(b * hf), M: seqCeil(b), N: h, K: 4 * h, Groups: 1}}
		if t == 0 {
			f.Params = 4*h*h + 4*h
			g = append(g, Op{Name: name + ".hh.grad_weight", Kind: MatMul, FLOPs: fl * float64(seq),
				Read: o.bytes(tokens*hf + 4*tokens*hf), Write: o.bytes(4 * hf * hf),
				M: h, N: 4 * h, K: seqCeil(tokens), Groups: 1})
		}
		o.push(f, g...)
		o.pointwise(fmt.Sprintf("%s.gates.%d", name, t), Elementwise, 4*b*hf, 2, seqLSTMFLOPs, o.bytes(5*b*hf), 0)
	}
}

// LSTMRecurrence returns the operators of one LSTM layer's recurrence as
// the gnmt generator lists them (lstmRecurrence), forward and backward,
// without an update: hidden units over batch sequences of steps at
// precision p, each step's recurrent product (M = batch, N = 4·hidden,
// K = hidden) and gates, and the weight's gradient over every step. It is
// the layer of cuDNN's CUDNN_SKIP_INPUT mode, whose input is added to the
// gates without a product of its own (the layers DeepBench's rnn_bench
// times).
func LSTMRecurrence(hidden int64, batch, steps int, p Precision) ([]Op, error) {
	switch {
	case hidden < 1 || batch < 1 || steps < 1:
		return nil, fmt.Errorf("LSTM of %d hidden units, batch %d, %d steps: want each at least 1", hidden, batch, steps)
	case steps > gnmtMaxSeqLen:
		return nil, fmt.Errorf("LSTM of %d steps: want at most %d (an operator per step)", steps, gnmtMaxSeqLen)
	}
	o := &seqOps{p: p.Size()}
	lstmRecurrence(o, "lstm", hidden, float64(batch), steps)
	return o.passes(), nil
}

// gnmtAttention appends the normalized Bahdanau attention of the
// attention LSTM's outputs over the encoder's: query and key projections,
// tanh(q + k + bias) for every query-key pair (which PyTorch keeps), and
// the score (the normalized linear_att, h multiply-adds per pair) and
// context (h per pair) products as one attention operator of
// 4·b·s²·h FLOPs, which owns linear_att, normalize_bias and
// normalize_scalar.
func gnmtAttention(o *seqOps, b, sl float64) {
	const h = gnmtHidden
	tokens := b * sl
	o.linear("decoder.attn.linear_q", tokens, h, h, 1, h*h)
	o.linear("decoder.attn.linear_k", tokens, h, h, 1, h*h)
	pairs := tokens * sl * h
	o.pointwise("decoder.attn.tanh", Elementwise, pairs, 2, 2, o.bytes(pairs), 0)
	fl := 4 * tokens * sl * h
	probs := o.bytes(tokens * sl)
	f := Op{Name: "decoder.attn", Kind: Attention, FLOPs: fl, Params: 2*h + 1,
		Read: o.bytes(pairs+tokens*h) + probs, Write: o.bytes(tokens*h) + 2*probs, Saved: probs,
		M: seqCeil(sl), N: h, K: seqCeil(sl), Groups: seqCeil(b)}
	g := f
	g.Name, g.FLOPs, g.Params, g.Saved = "decoder.attn.grad", 2*fl, 0, 0
	g.Read, g.Write = f.Read+o.bytes(tokens*h), o.bytes(pairs+tokens*h)
	o.push(f, g)
}
