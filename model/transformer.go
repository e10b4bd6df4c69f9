package model

import (
	"fmt"
	"strings"
)

// Stack is how a transformer's layers are arranged.
type Stack string

// The stacks.
const (
	DecoderOnly    Stack = "decoder"         // GPT, Llama: causal self-attention
	EncoderOnly    Stack = "encoder"         // BERT: bidirectional self-attention
	EncoderDecoder Stack = "encoder-decoder" // Vaswani et al. 2017: cross-attention in the decoder
)

// FFNActivation is the activation of a transformer's feed-forward block.
type FFNActivation string

// The feed-forward activations: ReLU and GELU run two matrix products
// (up, down), SwiGLU three (gate, up, down; Shazeer 2020).
const (
	FFNReLU   FFNActivation = "relu"
	FFNGELU   FFNActivation = "gelu"
	FFNSwiGLU FFNActivation = "swiglu"
)

// Positions is how a transformer encodes token positions.
type Positions string

// The position encodings; only a learned table has parameters.
const (
	LearnedPositions    Positions = "learned"    // a table of MaxPositions × Hidden
	SinusoidalPositions Positions = "sinusoidal" // Vaswani et al. 2017, no parameters
	RotaryPositions     Positions = "rotary"     // RoPE (Su et al. 2021), no parameters
)

// TransformerNorm is a transformer's normalisation.
type TransformerNorm string

// The normalisations: LayerNorm has a scale and a shift per channel,
// RMSNorm a scale only (Zhang and Sennrich 2019).
const (
	NormLayer TransformerNorm = "layernorm"
	NormRMS   TransformerNorm = "rmsnorm"
)

// Recompute is which activations a training step recomputes in the
// backward pass instead of keeping them (Korthikanti et al. 2022).
type Recompute string

// The recomputation modes.
const (
	// RecomputeNone keeps every activation.
	RecomputeNone Recompute = "none"
	// RecomputeSelective recomputes attention's score, softmax, dropout and
	// value product, the parts of size s² (Korthikanti et al. 2022,
	// Section 5).
	RecomputeSelective Recompute = "selective"
	// RecomputeFull keeps each layer's input only and runs the layer's
	// forward pass again in the backward pass.
	RecomputeFull Recompute = "full"
)

// TransformerShape is a transformer by its shape: enough to count its
// parameters in closed form and to list the operators of a training step.
// The zero values of the optional fields are the GPT-2/3 choices where one
// exists (MHA, learned positions, LayerNorm, no MoE).
type TransformerShape struct {
	// Name is the shape's key, such as "gpt3-175b".
	Name string
	// Source cites the published figures.
	Source string
	// Stack is decoder-only, encoder-only or encoder-decoder. Required.
	Stack Stack
	// Layers is the number of transformer layers; of an encoder-decoder,
	// the encoder's. Required.
	Layers int
	// DecoderLayers is an encoder-decoder's decoder layers; 0 otherwise.
	DecoderLayers int
	// Hidden is the model width d; Heads the attention heads a, of width
	// Hidden/Heads; KVHeads the key and value heads (grouped-query
	// attention, Ainslie et al. 2023; 1 is multi-query), 0 meaning Heads.
	Hidden, Heads, KVHeads int
	// FFN is the feed-forward block's inner width f. Required.
	FFN int
	// Activation is the feed-forward activation: relu, gelu or swiglu.
	// Required.
	Activation FFNActivation
	// Vocab is the vocabulary size V; SeqLen the default tokens per
	// sequence s; MaxPositions the rows of a learned position table (0:
	// SeqLen); TokenTypes the rows of BERT's segment table (0: none).
	Vocab, SeqLen, MaxPositions, TokenTypes int
	// VocabMultiple is the multiple the program pads its vocabulary's
	// table to, so that the output projection's products stay aligned
	// for the tensor cores (compute.AlignBytes): fairseq's dictionary
	// (Dictionary.finalize, padding_factor 8) and DeepLearningExamples'
	// BERT ("Padding for divisibility by 8", run_pretraining.py) pad to 8;
	// 0 or 1: the table has Vocab rows (PyTorch's nn.Embedding of the
	// tokenizer's size, GPT-2's 50,257 in Hugging Face's programs).
	VocabMultiple int
	// Positions is the position encoding; "" is learned.
	Positions Positions
	// TiedEmbeddings shares the input embedding with the output
	// projection (and, of an encoder-decoder, between the stacks).
	TiedEmbeddings bool
	// Norm is the normalisation; "" is LayerNorm. PreNorm adds a final
	// norm after each stack (pre-norm layers); EmbeddingNorm one after the
	// embeddings (BERT).
	Norm                   TransformerNorm
	PreNorm, EmbeddingNorm bool
	// Bias gives the linear layers biases.
	Bias bool
	// Pooler adds BERT's pooler, a Hidden × Hidden linear layer.
	Pooler bool
	// SpanHead replaces the language-model logits with the span head of
	// extractive question answering (Devlin et al. 2019, Section 4.2;
	// BertForQuestionAnswering's qa_outputs): a Hidden × 2 linear layer
	// over every token giving its start and end logits, and the
	// cross-entropy of each sequence's start and of its end position
	// over the sequence's tokens.
	SpanHead bool
	// Dropout applies dropout after the attention probabilities, the
	// attention output and the feed-forward output, whose 1-byte masks
	// the backward pass keeps.
	Dropout bool
	// FFNDropout applies dropout to the feed-forward block's inner
	// activations too (fairseq's relu_dropout), keeping a 1-byte mask.
	FFNDropout bool
	// ScaledEmbeddings multiplies the token embeddings by √d, adds the
	// positions and, with Dropout, drops out the sum before the first
	// layer, each its own kernel (Vaswani et al. 2017, Sections 3.4 and
	// 5.4; fairseq's TransformerEncoder and TransformerDecoder forward).
	ScaledEmbeddings bool
	// LabelSmoothing computes the loss as fairseq's label-smoothed
	// cross-entropy (Szegedy et al. 2016): a float32 log-softmax of the
	// logits, the target's log-probability gathered and all of them
	// summed; labelSmoothedLoss counts its passes over the logits.
	LabelSmoothing bool
	// SplitQKV projects the queries, keys and values with three linear
	// layers of their own (BertSelfAttention's query, key and value in
	// DeepLearningExamples' and Hugging Face's BERT) rather than one fused
	// product: the same FLOPs and parameters, three times the weight and
	// bias tensors.
	SplitQKV bool
	// ScoreKernels scales attention's scores by 1/√(d/a) and adds the
	// additive padding mask as kernels of their own, each a pass over the
	// s² scores, the scaling with a backward pass too (the mask's gradient
	// is the identity, no kernel): BertSelfAttention.forward's
	// attention_scores / math.sqrt(self.attention_head_size) and
	// attention_scores + attention_mask in DeepLearningExamples
	// (PyTorch/LanguageModeling/BERT/modeling.py at 729963dd), as in
	// Hugging Face's BERT. A step whose program fuses elementwise chains
	// (TransformerStep.Fused: torch.jit.script with nvFuser, as
	// run_pretraining.py scripts the model) does not list them.
	ScoreKernels bool
	// Float32Softmax runs unfused attention's softmax and dropout in
	// float32 under autocast (F.softmax is on autocast's float32 list),
	// as operators of their own between the two products, which take
	// 16-bit inputs again (fairseq's MultiheadAttention in
	// DeepLearningExamples); a causal mask is added to the scores in
	// place before them.
	Float32Softmax bool
	// Experts is the feed-forward experts per layer (0: a dense layer);
	// TopK the experts each token runs; CapacityFactor the tokens each
	// expert processes, as a multiple of its even share TopK·tokens/
	// Experts (0: dropless, each expert processes its even share).
	Experts, TopK  int
	CapacityFactor float64
	// FusedBiasGrad says the program's linear layers sum their biases'
	// gradients inside their weight-gradient products, with no reduction
	// of their own: Transformer Engine's (transformer_engine/pytorch/
	// module/linear.py, whose backward gemm returns grad_bias through
	// cuBLASLt's BGRADB epilogue, or in FP8 the cast of the output
	// gradient fused with its bias gradient, fp8_cast_transpose_bgrad).
	FusedBiasGrad bool
	// FusedAttention runs attention as one kernel that keeps no s² matrix
	// and recomputes it in the backward pass (FlashAttention, Dao et al.
	// 2022): the backward pass costs 2.5 times the forward instead of 2.
	FusedAttention bool
	// TorchMHA runs attention through torch.nn.MultiheadAttention, as
	// torch.nn.Transformer's layers call it (need_weights=False; F.
	// multi_head_attention_forward in torch/nn/functional.py): fused
	// (scaled_dot_product_attention), its q, k and v one packed
	// projection whose output _in_projection_packed copies into a layout
	// of three (a decoder's keys and values: two) with .contiguous(), and
	// the attention's output copied back with permute(2, 0, 1, 3)
	// .contiguous() before the output projection. Backward, each part of
	// the packed tensor gets its gradient through select_backward (a
	// zeroed tensor of the whole, the part copied into it), autograd sums
	// the parts', and the projection's backward copies the permuted sum
	// to a matrix (reshape); the attention's output gradient is copied
	// contiguous. The copies of permuted views run PyTorch's generic
	// elementwise kernel (Op.Strided).
	TorchMHA bool
	// CausalSkip halves causal self-attention's FLOPs, for a kernel that
	// skips the masked blocks (FlashAttention-2, Dao 2023, whose
	// benchmarks count causal attention as half). Unset, attention counts
	// 4·s²·d per sequence and layer forward, as Narayanan et al. 2021
	// eq. (3) and Korthikanti et al. 2022 do.
	CausalSkip bool
	// Published is the parameter count the source gives, and
	// PublishedActive the parameters a token uses (MoE), for the tests
	// and the documentation; 0 where none.
	Published, PublishedActive float64
}

// TransformerStep is one training step of a TransformerShape on one
// device.
type TransformerStep struct {
	// Batch is the sequences in the micro-batch b. Required, at least 1.
	Batch int
	// SeqLen is the tokens per sequence s; 0 takes the shape's.
	SeqLen int
	// Precision is the activations' and weights' precision; "" is FP32.
	Precision Precision
	// Recompute is the activation recomputation; "" is none.
	Recompute Recompute
	// Fused says the program fuses chains of elementwise operators (a
	// graph compiler): ScoreKernels' kernels are not listed.
	Fused bool
}

// kvHeads returns the key and value heads.
func (t TransformerShape) kvHeads() int {
	if t.KVHeads > 0 {
		return t.KVHeads
	}
	return t.Heads
}

// headDim returns Hidden/Heads.
func (t TransformerShape) headDim() int { return t.Hidden / t.Heads }

// normParams returns the parameters of one normalisation: 2·d for
// LayerNorm, d for RMSNorm.
func (t TransformerShape) normParams() int64 {
	if t.Norm == NormRMS {
		return int64(t.Hidden)
	}
	return 2 * int64(t.Hidden)
}

// bias returns n if the linear layers have biases, else 0.
func (t TransformerShape) bias(n int64) int64 {
	if t.Bias {
		return n
	}
	return 0
}

// AttentionParams returns one attention block's parameters:
//
//	d·d_q + 2·d·d_kv + d_q·d (+ d_q + 2·d_kv + d biases)
//
// with d_q = a·(d/a) and d_kv = KVHeads·(d/a).
func (t TransformerShape) AttentionParams() int64 {
	d := int64(t.Hidden)
	dq := int64(t.Heads * t.headDim())
	dkv := int64(t.kvHeads() * t.headDim())
	return 2*d*dq + 2*d*dkv + t.bias(dq+2*dkv+d)
}

// ExpertParams returns one feed-forward block's parameters (one expert's
// under MoE): 2·d·f (+ f + d) for ReLU and GELU, 3·d·f (+ 2f + d) for
// SwiGLU.
func (t TransformerShape) ExpertParams() int64 {
	d, f := int64(t.Hidden), int64(t.FFN)
	m := t.ffnMats()
	return m*d*f + t.bias((m-1)*f+d)
}

// FFNParams returns one layer's feed-forward parameters: ExpertParams,
// or Experts of them plus the router's d·Experts under MoE.
func (t TransformerShape) FFNParams() int64 {
	if t.Experts > 0 {
		return int64(t.Experts)*t.ExpertParams() + int64(t.Hidden)*int64(t.Experts)
	}
	return t.ExpertParams()
}

// LayerParams returns one encoder or decoder-only layer's parameters,
// attention, feed-forward and two norms; and one encoder-decoder decoder
// layer's, with a cross-attention and a third norm.
func (t TransformerShape) LayerParams() (layer, crossLayer int64) {
	layer = t.AttentionParams() + t.FFNParams() + 2*t.normParams()
	return layer, layer + t.AttentionParams() + t.normParams()
}

// stacks returns the number of layer stacks: 2 for an encoder-decoder.
func (t TransformerShape) stacks() int64 {
	if t.Stack == EncoderDecoder {
		return 2
	}
	return 1
}

// EmbeddingParams returns the parameters outside the layers: the token
// table V·d, a learned position table per stack, the segment table, the
// embedding norm, the output projection V·d unless tied, a final norm per
// stack under pre-norm, the pooler and the span head.
func (t TransformerShape) EmbeddingParams() int64 {
	d := int64(t.Hidden)
	p := int64(t.Vocab) * d
	if t.Positions == "" || t.Positions == LearnedPositions {
		p += t.stacks() * int64(t.maxPositions()) * d
	}
	p += int64(t.TokenTypes) * d
	if t.EmbeddingNorm {
		p += t.normParams()
	}
	if !t.TiedEmbeddings {
		p += int64(t.Vocab) * d
	}
	if t.PreNorm {
		p += t.stacks() * t.normParams()
	}
	if t.Pooler {
		p += d*d + d
	}
	if t.SpanHead {
		p += 2*d + 2
	}
	return p
}

// maxVocabMultiple bounds TransformerShape.VocabMultiple: Megatron-LM's
// default 128 per tensor-parallel rank, at up to 1,024 ranks.
const maxVocabMultiple = 128 * 1024

// TableVocab returns the output projection's outputs, the logits of a
// token: Vocab padded up to a multiple of VocabMultiple. The parameters a
// shape publishes count Vocab, the padding's rows left out; its products
// and loss, and TrainFLOPs, compute the padded outputs.
func (t TransformerShape) TableVocab() int {
	if m := t.VocabMultiple; m > 1 {
		return (t.Vocab + m - 1) / m * m
	}
	return t.Vocab
}

// PositionLimit returns the longest sequence the shape's learned position
// table holds (its MaxPositions, else its SeqLen), and 0 for positions
// that are not a table (sinusoidal, rotary), which bound no length.
func (t TransformerShape) PositionLimit() int {
	if t.Positions != LearnedPositions {
		return 0
	}
	return t.maxPositions()
}

func (t TransformerShape) maxPositions() int {
	if t.MaxPositions > 0 {
		return t.MaxPositions
	}
	return t.SeqLen
}

// Params returns the trainable parameters in closed form:
//
//	L·layer + L_dec·crossLayer + EmbeddingParams
//
// (LayerParams; for a decoder-only or encoder-only stack L_dec = 0).
func (t TransformerShape) Params() int64 {
	layer, cross := t.LayerParams()
	return int64(t.Layers)*layer + int64(t.DecoderLayers)*cross + t.EmbeddingParams()
}

// ActiveParams returns the parameters one token uses: Params with TopK
// experts per layer instead of Experts. It is Params for a dense model.
func (t TransformerShape) ActiveParams() int64 {
	if t.Experts == 0 {
		return t.Params()
	}
	idle := int64(t.Experts-t.TopK) * t.ExpertParams()
	return t.Params() - int64(t.Layers+t.DecoderLayers)*idle
}

// maxTransformerLayers bounds a stack's layers, so that a step's operator
// list stays small; published models have at most a few hundred.
const maxTransformerLayers = 10000

// Validate reports the fields that make no transformer, naming each.
func (t TransformerShape) Validate() error {
	var p []string
	bad := func(ok bool, format string, args ...any) {
		if !ok {
			p = append(p, fmt.Sprintf(format, args...))
		}
	}
	bad(t.Stack == DecoderOnly || t.Stack == EncoderOnly || t.Stack == EncoderDecoder,
		"stack %q: want decoder, encoder or encoder-decoder", t.Stack)
	bad(t.Layers >= 1 && t.Layers <= maxTransformerLayers, "layers %d: want 1 to %d", t.Layers, maxTransformerLayers)
	bad((t.Stack == EncoderDecoder) == (t.DecoderLayers >= 1) && t.DecoderLayers <= maxTransformerLayers,
		"decoder layers %d: want 1 to %d for an encoder-decoder, else 0", t.DecoderLayers, maxTransformerLayers)
	bad(t.Hidden >= 1 && t.Heads >= 1 && t.Hidden%t.Heads == 0, "hidden %d, heads %d: want positive, hidden a multiple of heads", t.Hidden, t.Heads)
	bad(t.KVHeads >= 0 && t.Heads >= 1 && t.Heads%t.kvHeads() == 0, "kv heads %d: want 0 or a divisor of heads %d", t.KVHeads, t.Heads)
	bad(t.FFN >= 1 && t.Vocab >= 1 && t.SeqLen >= 1, "ffn %d, vocab %d, sequence length %d: want positive", t.FFN, t.Vocab, t.SeqLen)
	bad(t.VocabMultiple >= 0 && t.VocabMultiple <= maxVocabMultiple, "vocab multiple %d: want 0 (no padding) to %d", t.VocabMultiple, maxVocabMultiple)
	bad(t.Activation == FFNReLU || t.Activation == FFNGELU || t.Activation == FFNSwiGLU, "activation %q: want relu, gelu or swiglu", t.Activation)
	bad(t.Positions == "" || t.Positions == LearnedPositions || t.Positions == SinusoidalPositions || t.Positions == RotaryPositions,
		"positions %q: want learned, sinusoidal or rotary", t.Positions)
	bad(t.Norm == "" || t.Norm == NormLayer || t.Norm == NormRMS, "norm %q: want layernorm or rmsnorm", t.Norm)
	bad(t.Experts == 0 && t.TopK == 0 || t.Experts >= 1 && t.TopK >= 1 && t.TopK <= t.Experts,
		"experts %d, top-k %d: want both 0, or 1 ≤ top-k ≤ experts", t.Experts, t.TopK)
	bad(t.CapacityFactor == 0 || t.CapacityFactor >= 1, "capacity factor %g: want 0 (dropless) or at least 1", t.CapacityFactor)
	bad(!t.ScaledEmbeddings || t.TokenTypes == 0 && !t.EmbeddingNorm,
		"scaled embeddings with %d token types and embedding norm %v: want neither (fairseq's embeddings have none)", t.TokenTypes, t.EmbeddingNorm)
	if len(p) > 0 {
		return fmt.Errorf("transformer %s: %s", t.Name, strings.Join(p, "; "))
	}
	return nil
}

// TrainFLOPs returns the matrix-product and attention FLOPs of one
// training step of b sequences of s tokens without recomputation, in
// closed form: 2·m·n·k per product of an m×k and a k×n matrix, forward,
// and twice that backward (2.5 times for a fused attention). Per layer
// and token, forward: 2·(2·d·d_q + 2·d·d_kv) for the projections,
// 2·mats·d·f for the feed-forward (mats 2, or 3 for SwiGLU; TopK ×
// capacity of them plus the router's 2·d·E under MoE) and 4·s·d_q for
// attention (halved for causal self-attention under CausalSkip); per
// token 2·d·V for the output projection, V its padded TableVocab (2·d·2
// for SpanHead's). For a dense decoder-only GPT shape (MHA, GELU, f = 4d)
// it is Narayanan et al. 2021 eq. (3) without recomputation:
//
//	72·b·s·L·d²·(1 + s/(6d) + V/(12·L·d))
func (t TransformerShape) TrainFLOPs(b, s int) float64 {
	tokens := float64(b) * float64(s)
	d := float64(t.Hidden)
	dq := float64(t.Heads * t.headDim())
	dkv := float64(t.kvHeads() * t.headDim())
	proj := 2 * tokens * (2*d*dq + 2*d*dkv)
	ffn := 2 * tokens * float64(t.ffnMats()) * d * float64(t.FFN)
	if t.Experts > 0 {
		ffn = float64(t.TopK)*t.capacity()*ffn + 2*tokens*d*float64(t.Experts)
	}
	bwd := 2.0
	if t.FusedAttention {
		bwd = 2.5
	}
	attn := func(causal bool) float64 { return (1 + bwd) * 4 * tokens * float64(s) * dq * t.causalFactor(causal) }
	f := float64(t.Layers) * (3*(proj+ffn) + attn(t.Stack == DecoderOnly))
	f += float64(t.DecoderLayers) * (3*(2*proj+ffn) + attn(true) + attn(false))
	if t.Pooler {
		f += 3 * 2 * float64(b) * d * d
	}
	if t.SpanHead {
		return f + 3*2*tokens*d*2
	}
	return f + 3*2*tokens*d*float64(t.TableVocab())
}

// ffnMats returns the feed-forward block's matrix products: 3 for SwiGLU,
// else 2.
func (t TransformerShape) ffnMats() int64 {
	if t.Activation == FFNSwiGLU {
		return 3
	}
	return 2
}

// capacity returns the factor by which each expert's tokens exceed their
// even share: CapacityFactor, or 1 when dropless.
func (t TransformerShape) capacity() float64 {
	if t.CapacityFactor > 0 {
		return t.CapacityFactor
	}
	return 1
}

// causalFactor returns 0.5 for causal self-attention under CausalSkip,
// else 1.
func (t TransformerShape) causalFactor(causal bool) float64 {
	if causal && t.CausalSkip {
		return 0.5
	}
	return 1
}
