package llm

import "scaleplan/model"

// Bytes of the stored activations: 16-bit values, 1-byte dropout masks,
// fp32 log-sum-exp and logits (Korthikanti et al. 2022, Section 4.1).
const (
	actBytes  = 2
	maskBytes = 1
	fp32Bytes = 4
)

// LayerActivations returns the bytes one transformer layer keeps on one
// GPU for the backward pass of one micro-batch under l's tensor, sequence
// and context parallelism and recomputation. With T = b·s/CP tokens, the
// parts every tensor-parallel rank keeps whole (split over TP only under
// sequence parallelism) are the two norms' inputs, the inputs of the
// q/k/v and first feed-forward projections (2 bytes each) and the two
// dropout masks (1 byte):
//
//	R = T·d·(2·4 + 2·[dropout])
//
// and the parts split over TP are Q, K and V, the output projection's
// input, the attention scores (softmax output, and with dropout its mask
// and output: 5·a·s per token; fused attention keeps an fp32 log-sum-exp
// per head instead) and the feed-forward inputs (the activation's and the
// second projection's: 2·f per token, 3·f for SwiGLU, times TopK ×
// capacity routed copies under MoE):
//
//	S = T·(2·(2·d_q + 2·d_kv) + 5·a·s + 2·mats·f)
//
// For a GPT layer (d_q = d_kv = d, f = 4d, dropout) R = 10·s·b·d and
// S = s·b·d·(24 + 5·a·s/d): Korthikanti et al. 2022, Table 2,
//
//	tensor parallel                  sbh·(10 + 24/t + 5as/(ht))
//	tensor + sequence parallel       sbh/t·(34 + 5as/h)
//	selective recompute              drops the 5as/(ht) term
//	full recompute                   2·sbh (2·sbh/t under sequence parallelism)
func (l Layout) LayerActivations(t model.TransformerShape) float64 {
	return l.layerActivations(t, l.recompute())
}

// layerActivations returns LayerActivations under recomputation rc.
func (l Layout) layerActivations(t model.TransformerShape, rc model.Recompute) float64 {
	tp := float64(l.TP)
	tokens := float64(l.MicroBatch) * float64(l.seqLen(t)) / float64(l.CP)
	d := float64(t.Hidden)
	rep := 1.0 // the divisor of the replicated part
	if l.SequenceParallel {
		rep = tp
	}
	if rc == model.RecomputeFull {
		return actBytes * tokens * d / rep
	}
	r := tokens * d * actBytes * 4
	if t.Dropout {
		r += 2 * maskBytes * tokens * d
	}
	heads := float64(t.Heads) / tp
	dq := heads * float64(t.Hidden/t.Heads)
	qkvo := actBytes * tokens * (2*dq + 2*float64(kvWidth(t, l.TP)))
	routed := 1.0
	if t.Experts > 0 {
		routed = float64(t.TopK) * capacity(t)
		// The experts keep their routed inputs, and the router its
		// probabilities.
		r += actBytes * tokens * (d*(routed-1) + float64(t.Experts))
	}
	mats := 2.0
	if t.Activation == model.FFNSwiGLU {
		mats = 3
	}
	ffn := actBytes * tokens * routed * mats * float64(t.FFN) / tp
	return r/rep + qkvo + ffn + l.scores(t, rc, tokens, heads)
}

// scores returns the attention's s² part on one GPU: per token and head,
// the softmax output (2·s bytes) and, with dropout, its mask (s) and
// output (2·s); none under selective recomputation; an fp32 log-sum-exp
// per token and head under fused attention (FlashAttention, Dao et al.
// 2022, Section 3.1), which recomputes the scores itself.
func (l Layout) scores(t model.TransformerShape, rc model.Recompute, tokens, heads float64) float64 {
	if t.FusedAttention {
		return fp32Bytes * tokens * heads
	}
	if rc == model.RecomputeSelective {
		return 0
	}
	per := float64(actBytes)
	if t.Dropout {
		per += maskBytes + actBytes
	}
	return per * tokens * heads * float64(l.seqLen(t))
}

// capacity returns t's capacity factor, 1 when dropless.
func capacity(t model.TransformerShape) float64 {
	if t.CapacityFactor > 0 {
		return t.CapacityFactor
	}
	return 1
}

// inFlight returns the layer-micro-batches whose activations stage
// `stage` (from 0) keeps at the peak of a step of M micro-batches: under
// 1F1B min(PP − stage, M) micro-batches of its L/PP layers; under the
// interleaved schedule with v chunks, Megatron-LM's warm-up forward
// passes plus one, min(2·(PP − stage − 1) + (v − 1)·PP + 1, M·v), chunks
// of L/(PP·v) layers (megatron/core/pipeline_parallel/schedules.py,
// num_warmup_microbatches). On the first stage that is
// L·(1 + (PP − 1)/(PP·v)) layers, Korthikanti et al. 2022, Section 4.2.3.
func (l Layout) inFlight(t model.TransformerShape, stage int) float64 {
	m, v := l.MicroBatches(), l.chunks()
	if v == 1 {
		return float64(t.Layers/l.PP) * float64(min(l.PP-stage, m))
	}
	chunks := min(2*(l.PP-stage-1)+(v-1)*l.PP+1, m*v)
	return float64(t.Layers/(l.PP*v)) * float64(chunks)
}

// edgeActivations returns the activations outside the layers on stage
// `stage` (Korthikanti et al. 2022, Section 4.3): on the first stage the
// embedding dropout's mask, s·b·h/t bytes under sequence parallelism, for
// each of min(PP, M) micro-batches in flight; on the last, for the one
// micro-batch in flight, the final norm's and the output projection's
// inputs (2·s·b·h/t each) and the fp32 logits, 4·s·b·V/t.
func (l Layout) edgeActivations(t model.TransformerShape, stage int) float64 {
	tokens := float64(l.MicroBatch) * float64(l.seqLen(t)) / float64(l.CP)
	d, tp := float64(t.Hidden), float64(l.TP)
	rep := 1.0
	if l.SequenceParallel {
		rep = tp
	}
	var a float64
	if stage == 0 && t.Dropout {
		a += maskBytes * tokens * d / rep * float64(min(l.PP, l.MicroBatches()))
	}
	if stage == l.PP-1 {
		if t.PreNorm {
			a += actBytes * tokens * d / rep
		}
		a += actBytes*tokens*d/rep + fp32Bytes*tokens*float64(t.Vocab)/tp
	}
	return a
}
