package plan

import (
	"fmt"

	"scaleplan/llm"
	"scaleplan/model"
)

// Sources of the LLM cases.
const (
	srcNarayanan   = "Narayanan et al. 2021 (SC'21, arXiv:2104.04473)"
	srcKorthikanti = "Korthikanti et al. 2022 (arXiv:2205.05198)"
	srcBLOOM       = "Le Scao et al. 2022 (BLOOM, arXiv:2211.05100), Section 3.4"
	srcLlama3      = "Llama Team 2024 (The Llama 3 Herd of Models, arXiv:2407.21783), Table 4"
)

// LLMCases returns the published LLM runs the operator model is checked
// against (docs/llm.md, "Validation of the step time"). None calibrates
// anything: no constant of compute, llm or the catalogue was fitted to
// them.
func LLMCases() ([]LLMCase, error) {
	var cs []LLMCase
	cs = append(cs, narayananCases()...)
	cs = append(cs, korthikantiCases()...)
	cs = append(cs, bloomCase())
	for _, r := range []struct {
		gpus, dp int
		mfu      float64
	}{{8192, 64, 43}, {16384, 128, 41}} {
		c, err := llama3Case(r.gpus, r.dp, r.mfu)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// narayananCases are Table 1's ten GPT runs on DGX A100 nodes (Selene),
// full recomputation, fp32 gradients, the micro-batch not given (the
// fastest of 1 to 8 that fits), and Table 2's PTD-P rows of GPT-3 175B
// (model-parallel size 96: TP 8 × PP 12; batch 1,536, micro-batch 1) on
// 384, 768 and 1,536 GPUs.
func narayananCases() []LLMCase {
	rows := []struct {
		name                          string
		heads, hidden, layers, tp, pp int
		gpus, batch                   int
		tflops                        float64
	}{
		{"1.7B", 24, 2304, 24, 1, 1, 32, 512, 137},
		{"3.6B", 32, 3072, 30, 2, 1, 64, 512, 138},
		{"7.5B", 32, 4096, 36, 4, 1, 128, 512, 142},
		{"18.4B", 48, 6144, 40, 8, 1, 256, 1024, 135},
		{"39.1B", 64, 8192, 48, 8, 2, 512, 1536, 138},
		{"76.1B", 80, 10240, 60, 8, 4, 1024, 1792, 140},
		{"145.6B", 96, 12288, 80, 8, 8, 1536, 2304, 148},
		{"310.1B", 128, 16384, 96, 8, 16, 1920, 2160, 155},
		{"529.6B", 128, 20480, 105, 8, 35, 2520, 2520, 163},
		{"1T", 160, 25600, 128, 8, 64, 3072, 3072, 163},
	}
	var cs []LLMCase
	for _, r := range rows {
		cs = append(cs, LLMCase{Name: "narayanan-t1-" + r.name, Source: srcNarayanan + ", Table 1",
			Shape: gptShape("gpt-"+r.name, r.heads, r.hidden, r.layers), System: "dgx-a100",
			Layout: llm.Layout{TP: r.tp, PP: r.pp, DP: r.gpus / (r.tp * r.pp), CP: 1, EP: 1, GlobalBatch: r.batch,
				Recompute: model.RecomputeFull, FP32Grads: true},
			MicroBatches: []int{1, 2, 4, 8}, Metric: MetricTFLOPs, Published: r.tflops})
	}
	for _, r := range []struct {
		gpus   int
		tflops float64
	}{{384, 153}, {768, 149}, {1536, 141}} {
		cs = append(cs, LLMCase{Name: fmt.Sprintf("narayanan-t2-175B-%d", r.gpus), Source: srcNarayanan + ", Table 2 (PTD-P)",
			Shape: gptShape("gpt3-175b", 96, 12288, 96), System: "dgx-a100",
			Layout: llm.Layout{TP: 8, PP: 12, DP: r.gpus / 96, CP: 1, EP: 1, MicroBatch: 1, GlobalBatch: 1536,
				Recompute: model.RecomputeFull, FP32Grads: true},
			Metric: MetricTFLOPs, Published: r.tflops})
	}
	return cs
}

// korthikantiCases are Table 4's step times of the Table 3 models
// (sequence 2,048, vocabulary 51,200, A100 80GB on DGX A100 nodes), each
// with full recomputation and with the paper's selective recomputation
// and sequence parallelism.
func korthikantiCases() []LLMCase {
	rows := []struct {
		name                  string
		heads, hidden, layers int
		tp, pp, gpus, gbs, b  int
		full, present         float64 // seconds per step
	}{
		{"22B", 64, 6144, 48, 8, 1, 8, 4, 4, 1.42, 1.10},
		{"175B", 96, 12288, 96, 8, 8, 64, 64, 1, 18.13, 13.75},
		{"530B", 128, 20480, 105, 8, 35, 280, 280, 1, 49.05, 37.83},
		{"1T", 160, 25600, 128, 8, 64, 512, 512, 1, 94.42, 71.49},
	}
	var cs []LLMCase
	for _, r := range rows {
		l := llm.Layout{TP: r.tp, PP: r.pp, DP: r.gpus / (r.tp * r.pp), CP: 1, EP: 1, MicroBatch: r.b, GlobalBatch: r.gbs,
			Recompute: model.RecomputeFull, FP32Grads: true}
		sh := gptShape("gpt-"+r.name, r.heads, r.hidden, r.layers)
		cs = append(cs, LLMCase{Name: "korthikanti-" + r.name + "-full", Source: srcKorthikanti + ", Table 4 (full recompute)",
			Shape: sh, System: "dgx-a100", Layout: l, Metric: MetricStep, Published: r.full})
		l.Recompute, l.SequenceParallel = model.RecomputeSelective, true
		cs = append(cs, LLMCase{Name: "korthikanti-" + r.name + "-selective", Source: srcKorthikanti + ", Table 4 (present work)",
			Shape: sh, System: "dgx-a100", Layout: l, Metric: MetricStep, Published: r.present})
	}
	return cs
}

// bloomCase is BLOOM-176B's training: 70 layers of width 14,336, 112
// heads, vocabulary 250,880, sequences of 2,048 (Section 3.2 and Table
// 3), on 48 nodes of 8 A100 80GB (Jean Zay) with TP 4, PP 12, DP 8,
// ZeRO stage 1, global batch 2,048 and full recomputation, at 150
// TFLOP/s per GPU. ALiBi has no parameters: the shape takes positions
// without a table. The 70 layers do not divide over 12 stages: we
// assume Megatron-DeepSpeed's partition balances them with the two
// embeddings as 72 units, 6 a stage (the first and last stage 5 layers
// and an embedding), so the step is timed with 6 layers a stage, 72 in
// all, and the FLOPs count the 70.
func bloomCase() LLMCase {
	sh := model.TransformerShape{Name: "bloom-176b", Stack: model.DecoderOnly, Layers: 72, Hidden: 14336, Heads: 112,
		FFN: 4 * 14336, Activation: model.FFNGELU, Vocab: 250880, SeqLen: 2048, Positions: model.SinusoidalPositions,
		TiedEmbeddings: true, Norm: model.NormLayer, PreNorm: true, Bias: true}
	return LLMCase{Name: "bloom-176b", Source: srcBLOOM, Shape: sh, System: "dgx-a100",
		Layout: llm.Layout{TP: 4, PP: 12, DP: 8, CP: 1, EP: 1, GlobalBatch: 2048, Recompute: model.RecomputeFull,
			Sharding: llm.ShardZeRO1, FP32Grads: true},
		MicroBatches: []int{1, 2, 4}, FLOPsLayers: 70, Metric: MetricTFLOPs, Published: 150}
}

// llama3Case is Llama 3 405B's pre-training at sequence 8,192 on gpus
// H100s (Table 4: TP 8, CP 1, PP 16, DP dp, 16 Mi tokens a step, at mfu
// percent). Its pipeline balances 126 layers by giving the first and last
// stage one fewer (Section 3.3.2): the step is timed with 8 layers a
// stage, 128 in all, and MFU counts the 126. FlashAttention; the
// micro-batch, the interleaving and the sharding (FSDP's optimizer and
// gradient sharding, Section 3.3.2) as fastest among the candidates.
func llama3Case(gpus, dp int, mfu float64) (LLMCase, error) {
	sh, err := model.LookupTransformer("llama3-405b")
	if err != nil {
		return LLMCase{}, err
	}
	sh.Layers, sh.FusedAttention = 128, true
	return LLMCase{Name: fmt.Sprintf("llama3-405b-%d", gpus), Source: srcLlama3, Shape: sh, System: "dgx-h100",
		Layout:       llm.Layout{TP: 8, SequenceParallel: true, PP: 16, DP: dp, CP: 1, EP: 1, GlobalBatch: 2048},
		MicroBatches: []int{1, 2}, Virtual: []int{1, 2, 4, 8}, Shardings: []llm.Sharding{llm.ShardZeRO1, llm.ShardZeRO2},
		FLOPsLayers: 126, Metric: MetricMFU, Published: mfu}, nil
}
