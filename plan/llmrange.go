package plan

import (
	"fmt"
	"math/bits"
	"strings"

	"scaleplan/model"
)

// BatchRange is a model's published range of tokens per step: the
// batches its authors trained at, from the first to the last.
type BatchRange struct {
	MinTokens, MaxTokens int
	Source               string
}

// llama3Batches is Llama 3's: "an initial batch size of 4M tokens ...
// double these values to a batch size of 8M ... after pre-training 252M
// tokens. We double the batch size again to 16M after pre-training on
// 2.87T tokens" (Llama Team 2024, The Llama 3 Herd of Models,
// arXiv:2407.21783, Section 3.4.1). The paper gives it for the 405B
// model; the planner applies it to the family.
var llama3Batches = BatchRange{MinTokens: 4 << 20, MaxTokens: 16 << 20,
	Source: "Llama Team 2024 (arXiv:2407.21783), Section 3.4.1: 4M to 16M tokens per step"}

// PublishedBatches returns the model's published batch range, and false
// for a model without one.
func PublishedBatches(name string) (BatchRange, bool) {
	if strings.HasPrefix(name, "llama3-") {
		return llama3Batches, true
	}
	return BatchRange{}, false
}

// batchChoices returns the global batches, in sequences of seqLen tokens,
// that a plan of model name searches when the request gives none: the
// powers of two of sequences within its published range (Mi tokens as
// the range's M), else the one of DefaultLLMBatchTokens.
func batchChoices(name string, seqLen int) []int {
	pow2 := func(tokens int) int { return 1 << max(0, bits.Len(uint(tokens/seqLen))-1) }
	r, ok := PublishedBatches(name)
	if !ok {
		return []int{pow2(DefaultLLMBatchTokens)}
	}
	var out []int
	for b := pow2(r.MinTokens); b <= pow2(r.MaxTokens); b *= 2 {
		out = append(out, b)
	}
	return out
}

// GPUChoices returns the GPU counts a plan of a transformer of layers
// layers at global batches batches searches from lo to hi GPUs on nodes
// of perNode: lo and hi, and every whole number of nodes between them
// whose GPUs' odd factor is a divisor of the layers times a divisor of a
// batch. Tensor and context degrees are powers of two, so a layout's odd
// factor is its pipeline depth's (a divisor of the layers) times its
// data-parallel degree's (a divisor of the batch): other counts have no
// valid layout. For 80 layers and batches of powers of two that is
// 1,024, 1,280, 2,048, 2,560, ..., 16,384 GPUs on 8-GPU nodes. lo and hi
// must each be whole nodes, or fewer GPUs than a node for lo = hi.
func GPUChoices(lo, hi, perNode, layers int, batches []int) ([]int, error) {
	whole := func(n int) bool { return n%perNode == 0 }
	if perNode < 1 || lo < 1 || hi < lo || lo != hi && !(whole(lo) && whole(hi)) || lo == hi && lo > perNode && !whole(lo) {
		return nil, fmt.Errorf("llm plan: gpus %d-%d: want whole nodes of %d GPUs (or fewer than one node), the first no more than the last", lo, hi, perNode)
	}
	out := []int{lo}
	for g := lo + perNode; g < hi; g += perNode {
		if layoutFactor(g, layers, batches) {
			out = append(out, g)
		}
	}
	if hi != lo {
		out = append(out, hi)
	}
	return out, nil
}

// layoutFactor reports whether gpus's odd factor is a divisor of layers
// times a divisor of one of batches.
func layoutFactor(gpus, layers int, batches []int) bool {
	odd := gpus >> bits.TrailingZeros(uint(gpus))
	for d := 1; d <= odd; d += 2 {
		if odd%d != 0 || layers%d != 0 {
			continue
		}
		for _, b := range batches {
			if b%(odd/d) == 0 {
				return true
			}
		}
	}
	return false
}

// llmShape returns the transformer a plan searches: the shipped shape
// with fused attention, as current LLM training runs.
func llmShape(name string) (model.TransformerShape, error) {
	t, err := model.LookupTransformer(name)
	t.FusedAttention = true // FlashAttention
	return t, err
}
