package plan

import (
	"fmt"
	"math"

	"scaleplan/hw"
	"scaleplan/llm"
	"scaleplan/model"
)

// LLMMetric is what an LLMCase's published figure measures.
type LLMMetric string

// The metrics of the LLM cases.
const (
	// MetricStep is one training step's time, seconds.
	MetricStep LLMMetric = "step time (s)"
	// MetricTFLOPs is the achieved teraFLOP/s per GPU counted as
	// Narayanan et al. 2021 eq. (3) counts them, the recomputation's
	// forward included (the runs recompute fully).
	MetricTFLOPs LLMMetric = "TFLOP/s per GPU"
	// MetricMFU is the model FLOPs utilisation, percent of the bf16 peak.
	MetricMFU LLMMetric = "MFU (%)"
)

// LLMCase is a published LLM training run: its model, system and layout
// from the paper, and the figure it reports. Where the paper leaves a
// choice open (the micro-batch, the virtual stages, the sharding), the
// case lists the candidates and the prediction takes the fastest that
// fits memory.
type LLMCase struct {
	Name, Source string
	// Shape is the transformer (attention fused or not as the run).
	Shape model.TransformerShape
	// System is the catalogue system of the run's nodes.
	System string
	// Layout fixes the degrees, batch, recomputation and precision of the
	// gradients; MicroBatches, Virtual and Shardings, when given, are the
	// candidates for the fields the paper leaves open.
	Layout       llm.Layout
	MicroBatches []int
	Virtual      []int
	Shardings    []llm.Sharding
	// Precision is the matrix products' precision: "" (bf16) or fp8
	// (Transformer Engine's FP8 linear layers: FP8GEMMs).
	Precision hw.Precision
	// FLOPsLayers, when set, counts the model FLOPs of this many layers
	// (a run whose pipeline holds fewer layers than its stages' share).
	FLOPsLayers int
	Metric      LLMMetric
	Published   float64
}

// LLMResult is one case's prediction.
type LLMResult struct {
	Case      LLMCase
	Layout    llm.Layout
	Step      llm.StepTime
	Predicted float64
	// Error is (Predicted − Published)/Published.
	Error float64
}

// gptShape is a GPT-3-style decoder of Narayanan et al. 2021 and
// Korthikanti et al. 2022: GELU, f = 4h, learned positions, pre-norm
// LayerNorm, biases, dropout, tied embeddings, vocabulary 51,200 and
// sequences of 2,048 tokens, attention unfused (Megatron-LM of 2021-22).
func gptShape(name string, heads, hidden, layers int) model.TransformerShape {
	return model.TransformerShape{Name: name, Stack: model.DecoderOnly, Layers: layers, Hidden: hidden, Heads: heads,
		FFN: 4 * hidden, Activation: model.FFNGELU, Vocab: 51200, SeqLen: 2048, Positions: model.LearnedPositions,
		TiedEmbeddings: true, Norm: model.NormLayer, PreNorm: true, Bias: true, Dropout: true}
}

// EvalLLMCase predicts c on cat's system with the operator model.
func EvalLLMCase(cat *hw.Catalog, c LLMCase) (LLMResult, error) {
	h, _, err := llmHardware(cat, c.System, c.Precision, 0, c.Shape.FusedAttention, nil)
	if err != nil {
		return LLMResult{}, fmt.Errorf("llm case %s: %w", c.Name, err)
	}
	r := LLMResult{Case: c}
	best := math.Inf(1)
	for _, b := range or(c.MicroBatches, c.Layout.MicroBatch) {
		for _, v := range or(c.Virtual, c.Layout.VirtualStages) {
			for _, z := range or(c.Shardings, c.Layout.Sharding) {
				l := c.Layout
				l.MicroBatch, l.VirtualStages, l.Sharding = b, v, z
				if l.Validate(c.Shape) != nil {
					continue
				}
				if m, err := l.Memory(c.Shape); err != nil || m.Headroom(h.Memory) < 0 {
					continue
				}
				s, err := l.StepTime(c.Shape, h)
				if err != nil {
					return r, fmt.Errorf("llm case %s: %w", c.Name, err)
				}
				if float64(s.Time) < best {
					best, r.Layout, r.Step = float64(s.Time), l, s
				}
			}
		}
	}
	if math.IsInf(best, 1) {
		return r, fmt.Errorf("llm case %s: no candidate layout fits memory", c.Name)
	}
	r.Predicted = c.metric(r.Step, float64(h.Peak))
	r.Error = (r.Predicted - c.Published) / c.Published
	return r, nil
}

// or returns xs, or the one value x when xs is empty.
func or[T any](xs []T, x T) []T {
	if len(xs) > 0 {
		return xs
	}
	return []T{x}
}

// metric returns the case's metric of step s on GPUs of peak FLOP/s.
func (c LLMCase) metric(s llm.StepTime, peak float64) float64 {
	l, sh := c.Layout, c.Shape
	if c.FLOPsLayers > 0 {
		sh.Layers = c.FLOPsLayers
	}
	gpus := float64(l.World())
	switch c.Metric {
	case MetricStep:
		return float64(s.Time)
	case MetricTFLOPs:
		b := float64(l.GlobalBatch)
		n, d, sq, v := float64(sh.Layers), float64(sh.Hidden), float64(sh.SeqLen), float64(sh.Vocab)
		return Eq3FLOPs(b, sq, n, d, v) / float64(s.Time) / gpus / 1e12
	}
	flops := s.ModelFLOPs
	if c.FLOPsLayers > 0 {
		flops = sh.TrainFLOPs(l.GlobalBatch, sh.SeqLen)
	}
	return 100 * flops / (float64(s.Time) * peak * gpus)
}

// Eq3FLOPs is Narayanan et al. 2021 eq. (3), the FLOPs of one step of a
// GPT model with full recomputation, B sequences of s tokens, l layers of
// width h, vocabulary V: 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)).
func Eq3FLOPs(b, s, l, h, v float64) float64 {
	return 96 * b * s * l * h * h * (1 + s/(6*h) + v/(16*l*h))
}

// LLMValidation is every case predicted (LLMCases, then
// MLPerfGPT3Cases), the mean absolute error over them (none calibrates)
// and over each group of cases.
type LLMValidation struct {
	Results []LLMResult
	MAE     float64
	Groups  []LLMGroup
}

// LLMGroup is a group of cases and their mean absolute error.
type LLMGroup struct {
	Name  string
	Cases int
	MAE   float64
}

// ValidateLLM predicts every case of LLMCases and MLPerfGPT3Cases on cat
// (nil takes hw.Default()).
func ValidateLLM(cat *hw.Catalog) (LLMValidation, error) {
	var v LLMValidation
	if cat == nil {
		var err error
		if cat, err = hw.Default(); err != nil {
			return v, err
		}
	}
	papers, err := LLMCases()
	if err != nil {
		return v, err
	}
	groups := []struct {
		name  string
		cases []LLMCase
	}{{"published papers' runs (bf16)", papers}, {"MLPerf GPT-3 175B on H100 and B200 (fp8)", MLPerfGPT3Cases()}}
	n := len(papers) + len(groups[1].cases)
	for _, g := range groups {
		grp := LLMGroup{Name: g.name, Cases: len(g.cases)}
		for _, c := range g.cases {
			r, err := EvalLLMCase(cat, c)
			if err != nil {
				return v, err
			}
			v.Results = append(v.Results, r)
			v.MAE += math.Abs(r.Error) / float64(n)
			grp.MAE += math.Abs(r.Error) / float64(len(g.cases))
		}
		v.Groups = append(v.Groups, grp)
	}
	return v, nil
}
