package llm

import "scaleplan/model"

// stageParams is the parameters one GPU of a pipeline stage holds before
// data-parallel sharding: dense (replicated over the data-parallel ranks)
// and expert (replicated over the expert-data-parallel ranks).
type stageParams struct {
	dense, expert int64
	layer         int64 // one layer's dense and expert parameters on this GPU
}

// bias returns n if t's linear layers have biases, else 0.
func bias(t model.TransformerShape, n int64) int64 {
	if t.Bias {
		return n
	}
	return 0
}

// normParams returns one norm's parameters: 2·d for LayerNorm, d for
// RMSNorm.
func normParams(t model.TransformerShape) int64 {
	if t.Norm == model.NormRMS {
		return int64(t.Hidden)
	}
	return 2 * int64(t.Hidden)
}

// kvWidth returns the key (or value) width one tensor-parallel rank holds:
// d_kv/TP, or one head's width when the kv heads are fewer than TP and
// replicated (Megatron-LM).
func kvWidth(t model.TransformerShape, tp int) int64 {
	hd := int64(t.Hidden / t.Heads)
	return int64(max(kvHeads(t)/tp, 1)) * hd
}

// layerParams returns one layer's parameters on one GPU: the column- and
// row-parallel weights split over TP (Shoeybi et al. 2019, Section 3),
// the row-parallel output biases, norms and MoE router replicated, and
// Experts/EP experts each split over TP.
func layerParams(t model.TransformerShape, tp, ep int) (dense, expert int64) {
	d, f := int64(t.Hidden), int64(t.FFN)
	dq := int64(t.Heads/tp) * int64(t.Hidden/t.Heads)
	kv := kvWidth(t, tp)
	dense = 2*d*dq + 2*d*kv + bias(t, dq+2*kv+d) + 2*normParams(t)
	mats := int64(2)
	if t.Activation == model.FFNSwiGLU {
		mats = 3
	}
	ffn := (mats*d*f+bias(t, (mats-1)*f))/int64(tp) + bias(t, d)
	if t.Experts == 0 {
		return dense + ffn, 0
	}
	return dense + d*int64(t.Experts), int64(t.Experts/ep) * ffn
}

// embeddingParams returns the parameters outside the layers that pipeline
// stage `stage` of pp holds on one GPU: the first stage the token table
// split over TP by vocabulary (Megatron-LM's VocabParallelEmbedding), the
// learned position and segment tables and the embedding norm; the last
// the final norm, the pooler and the output projection split over TP (a
// span head's 2d + 2 instead, not split) —
// under tied embeddings a second copy of the token table when pp > 1, as
// Megatron-LM keeps the word embeddings on both the first and the last
// stage and all-reduces their gradients.
func embeddingParams(t model.TransformerShape, tp, pp, stage int) int64 {
	d := int64(t.Hidden)
	table := int64(t.Vocab) * d / int64(tp)
	var p int64
	if stage == 0 {
		p += table + int64(t.TokenTypes)*d
		if t.Positions == "" || t.Positions == model.LearnedPositions {
			p += int64(maxPositions(t)) * d
		}
		if t.EmbeddingNorm {
			p += normParams(t)
		}
	}
	if stage == pp-1 {
		switch {
		case t.SpanHead:
			p += 2*d + 2
		case !t.TiedEmbeddings || pp > 1:
			p += table
		}
		if t.PreNorm {
			p += normParams(t)
		}
		if t.Pooler {
			p += d*d + d
		}
	}
	return p
}

func maxPositions(t model.TransformerShape) int {
	if t.MaxPositions > 0 {
		return t.MaxPositions
	}
	return t.SeqLen
}

// params returns what one GPU of stage `stage` holds.
func (l Layout) params(t model.TransformerShape, stage int) stageParams {
	dense, expert := layerParams(t, l.TP, l.EP)
	n := int64(t.Layers / l.PP)
	return stageParams{
		dense:  n*dense + embeddingParams(t, l.TP, l.PP, stage),
		expert: n * expert,
		layer:  dense + expert,
	}
}
