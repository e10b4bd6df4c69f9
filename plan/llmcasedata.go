package plan

import (
	"fmt"

	"scaleplan/llm"
	"scaleplan/model"
)

// Sources of the LLM cases. Each figure of the case data below names the
// table, row and column it was read from; the comments say which were
// checked against what.
const (
	srcNarayanan   = "Narayanan et al. 2021 (SC'21, arXiv:2104.04473)"
	srcKorthikanti = "Korthikanti et al. 2022 (arXiv:2205.05198)"
	srcBLOOM       = "Le Scao et al. 2022 (BLOOM, arXiv:2211.05100); step time from bigscience-workshop/bigscience, " +
		"train/tr11-176B-ml/README.md, \"Important checkpoints\""
	srcLlama3 = "Llama Team 2024 (The Llama 3 Herd of Models, arXiv:2407.21783), Table 4"
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

// table1 is Narayanan et al. 2021, Table 1, row by row: the model (its
// "Number of parameters", "Attention heads", "Hidden size", "Number of
// layers"), the tensor- and pipeline-parallel sizes, "Number of GPUs",
// "Batch size" and "Achieved teraFLOP/s per GPU". Every figure was
// checked against the table as NVIDIA/Megatron-LM published it
// (images/cases_april2021.png, README.md before commit 2e90a342f5: the
// same rows but the heads, with the model-parallel size TP·PP, "TP=8 for
// sizes above 8" in the README of 2d767f4886) and against the authors' script for
// the table (examples/academic_paper_scripts/sc21/run_table_1.sh: TP,
// PP, heads NAH, hidden HS, layers NLS, batch GBS, GPUs 8·NNODES). The
// table does not give the micro-batch nor the interleaving; the script
// does: mbs its MBS, vl its --num-layers-per-virtual-pipeline-stage (0:
// not interleaved).
var table1 = []struct {
	name                          string
	heads, hidden, layers, tp, pp int
	gpus, batch, mbs, vl          int
	tflops                        float64
}{
	{"1.7B", 24, 2304, 24, 1, 1, 32, 512, 16, 0, 137},
	{"3.6B", 32, 3072, 30, 2, 1, 64, 512, 16, 0, 138},
	{"7.5B", 32, 4096, 36, 4, 1, 128, 512, 16, 0, 142},
	{"18.4B", 48, 6144, 40, 8, 1, 256, 1024, 8, 0, 135},
	{"39.1B", 64, 8192, 48, 8, 2, 512, 1536, 4, 0, 138},
	{"76.1B", 80, 10240, 60, 8, 4, 1024, 1792, 2, 5, 140},
	{"145.6B", 96, 12288, 80, 8, 8, 1536, 2304, 2, 5, 148},
	{"310.1B", 128, 16384, 96, 8, 16, 1920, 2160, 1, 3, 155},
	{"529.6B", 128, 20480, 105, 8, 35, 2520, 2520, 1, 1, 163},
	{"1T", 160, 25600, 128, 8, 64, 3072, 3072, 1, 0, 163},
}

// table2 is Narayanan et al. 2021, Table 2, its "PTD Parallelism" rows:
// "Number of parameters (billion)" 174.6 (GPT-3: 96 heads, h 12,288, 96
// layers) and 529.6 (Table 1's 530B), "Model-parallel size" 96 and 280,
// "Batch size" 1,536 and 2,240, "Number of GPUs", "Microbatch size" 1
// and "Achieved teraFLOP/s per GPU"; checked against the table as
// cli99/llm-analysis reproduces it (figures/megatron-lm-2nd-table-2.png).
// The table gives the model-parallel size only: 96 is TP 8 × PP 12 as in
// the authors' 175B script of Figure 12 (sc21/run_figure_12.sh: TP=8,
// PP=12, NLS=96), 280 is TP 8 × PP 35 as in Table 1's 530B row. The
// interleaving is not given: the cases run without it.
var table2 = []struct {
	name                  string
	heads, hidden, layers int
	pp, gpus, batch       int
	tflops                float64
}{
	{"175B", 96, 12288, 96, 12, 384, 1536, 153},
	{"175B", 96, 12288, 96, 12, 768, 1536, 149},
	{"175B", 96, 12288, 96, 12, 1536, 1536, 141},
	{"530B", 128, 20480, 105, 35, 560, 2240, 171},
	{"530B", 128, 20480, 105, 35, 1120, 2240, 167},
	{"530B", 128, 20480, 105, 35, 2240, 2240, 159},
}

// narayananCases are Table 1's ten GPT runs and Table 2's six PTD-P runs
// on DGX A100 nodes (Selene, A100 80GB), full recomputation (the
// script's --activations-checkpoint-method uniform) and, as the cases
// model Megatron-LM's mixed precision of 2021, 16-bit weights with fp32
// main gradients (the scripts train in fp16: sc21/CONFIG.sh --fp16; its
// peak is bf16's).
func narayananCases() []LLMCase {
	var cs []LLMCase
	for _, r := range table1 {
		l := llm.Layout{TP: r.tp, PP: r.pp, DP: r.gpus / (r.tp * r.pp), CP: 1, EP: 1, MicroBatch: r.mbs, GlobalBatch: r.batch,
			Recompute: model.RecomputeFull, FP32Grads: true}
		if r.vl > 0 {
			l.VirtualStages = r.layers / (r.pp * r.vl)
		}
		cs = append(cs, LLMCase{Name: "narayanan-t1-" + r.name, Source: srcNarayanan + ", Table 1",
			Shape: gptShape("gpt-"+r.name, r.heads, r.hidden, r.layers), System: "dgx-a100",
			Layout: l, Metric: MetricTFLOPs, Published: r.tflops})
	}
	for _, r := range table2 {
		cs = append(cs, LLMCase{Name: fmt.Sprintf("narayanan-t2-%s-%d", r.name, r.gpus), Source: srcNarayanan + ", Table 2 (PTD-P)",
			Shape: gptShape("gpt-"+r.name, r.heads, r.hidden, r.layers), System: "dgx-a100",
			Layout: llm.Layout{TP: 8, PP: r.pp, DP: r.gpus / (8 * r.pp), CP: 1, EP: 1, MicroBatch: 1, GlobalBatch: r.batch,
				Recompute: model.RecomputeFull, FP32Grads: true},
			Metric: MetricTFLOPs, Published: r.tflops})
	}
	return cs
}

// table5 is Korthikanti et al. 2022's end-to-end iteration times,
// seconds, of its Table 3 models (sequence 2,048, vocabulary 51,200,
// A100 80GB on DGX A100 nodes, data-parallel size 1): "Full Recompute"
// and "Present Work" (selective recomputation with sequence
// parallelism), in the paper's Table 5 (Table 4 is one 22B layer's
// forward and backward times). The configurations are Table 3's
// (heads, hidden, layers, TP, PP, GPUs, global batch, micro-batch). The
// "Present Work" column was checked against the model FLOPs utilisation
// the authors publish for the same runs (NVIDIA/Megatron-LM README.md at
// 841f789f48, "data parallel size of one": 41.5, 51.4, 56.0 and 56.3 %):
// TestKorthikantiMFU derives it from these times with the paper's eq. for
// model FLOPs. The "Full Recompute" column, and the table's number, were
// checked only against two readers' transcriptions of Table 5 (public
// paper notes, which also give Table 4 as one 22B layer's times: 39 %
// overhead for full recomputation, 4 % for the present work); its ratio
// to "Present Work", 1.29 to 1.32, is the table's "Throughput Increase"
// column (29.0, 31.8, 29.7, 32.1 %).
var table5 = []struct {
	name                  string
	heads, hidden, layers int
	tp, pp, gpus, gbs, b  int
	full, present         float64
}{
	{"22B", 64, 6144, 48, 8, 1, 8, 4, 4, 1.42, 1.10},
	{"175B", 96, 12288, 96, 8, 8, 64, 64, 1, 18.13, 13.75},
	{"530B", 128, 20480, 105, 8, 35, 280, 280, 1, 49.05, 37.83},
	{"1T", 160, 25600, 128, 8, 64, 512, 512, 1, 94.42, 71.49},
}

// korthikantiCases are table5's step times, each with full recomputation
// and with the paper's selective recomputation and sequence parallelism.
func korthikantiCases() []LLMCase {
	var cs []LLMCase
	for _, r := range table5 {
		l := llm.Layout{TP: r.tp, PP: r.pp, DP: r.gpus / (r.tp * r.pp), CP: 1, EP: 1, MicroBatch: r.b, GlobalBatch: r.gbs,
			Recompute: model.RecomputeFull, FP32Grads: true}
		sh := gptShape("gpt-"+r.name, r.heads, r.hidden, r.layers)
		cs = append(cs, LLMCase{Name: "korthikanti-" + r.name + "-full", Source: srcKorthikanti + ", Table 5 (full recompute)",
			Shape: sh, System: "dgx-a100", Layout: l, Metric: MetricStep, Published: r.full})
		l.Recompute, l.SequenceParallel = model.RecomputeSelective, true
		cs = append(cs, LLMCase{Name: "korthikanti-" + r.name + "-selective", Source: srcKorthikanti + ", Table 5 (present work)",
			Shape: sh, System: "dgx-a100", Layout: l, Metric: MetricStep, Published: r.present})
	}
	return cs
}

// bloomCase is BLOOM-176B's training, every figure from BigScience's
// run: the shape (70 layers of width 14,336, 112 heads, sequences of
// 2,048, vocabulary padded to 250,880; paper Section 3.2 and Table 3) and
// the layout from the launch script (bigscience-workshop/bigscience,
// train/tr11-176B-ml/tr11-176B-ml.slurm: TP_SIZE=4, PP_SIZE=12,
// MICRO_BATCH_SIZE=2, GLOBAL_BATCH_SIZE=2048, --bf16,
// --checkpoint-activations, DeepSpeed's BF16_Optimizer, which implements
// ZeRO stage 1 and accumulates gradients in fp32, README.md of the same
// directory) on 48 nodes of 8 A100 80GB (Jean Zay), DP 8. The published
// figure is the step time the README quotes from the log at the end of
// the first epoch: 104.70 s an iteration at global batch 2,048 ("TFLOPs:
// 149.77" in BigScience's own count, 8·N·tokens). ALiBi has no
// parameters: the shape takes positions without a table. The pipeline is
// partitioned with --pp-partition-method 'type:transformer|embedding',
// which the README shows as [embed | 5 layers], 6 layers on each of the
// 10 middle stages, [5 layers | embed]: the step is timed with 6 layers a
// stage, 72 in all.
func bloomCase() LLMCase {
	sh := model.TransformerShape{Name: "bloom-176b", Stack: model.DecoderOnly, Layers: 72, Hidden: 14336, Heads: 112,
		FFN: 4 * 14336, Activation: model.FFNGELU, Vocab: 250880, SeqLen: 2048, Positions: model.SinusoidalPositions,
		TiedEmbeddings: true, Norm: model.NormLayer, PreNorm: true, Bias: true}
	return LLMCase{Name: "bloom-176b", Source: srcBLOOM, Shape: sh, System: "dgx-a100",
		Layout: llm.Layout{TP: 4, PP: 12, DP: 8, CP: 1, EP: 1, MicroBatch: 2, GlobalBatch: 2048, Recompute: model.RecomputeFull,
			Sharding: llm.ShardZeRO1, FP32Grads: true},
		Metric: MetricStep, Published: 104.70}
}

// llama3Case is Llama 3 405B's pre-training at sequence 8,192 on gpus
// H100s: Table 4's rows of 8,192 and 16,384 GPUs ("TP" 8, "CP" 1, "PP"
// 16, "DP" dp, "Seq. Len." 8,192, "Batch size/DP" 2,048/dp, "Tokens/
// Batch" 16M, "BF16 MFU" mfu percent), checked against transcriptions of
// the table (paper page 10) in public notes and, for TP, CP, PP, tokens
// and TFLOPs/GPU (430, 400), Meta's SC'24 slide as
// glennklockwood.com/garden/llama-3.1 quotes it.
// Its pipeline balances 126 layers by giving the first and last stage
// one fewer (Section 3.3.2): the step is timed with 8 layers a stage, 128
// in all, and MFU counts the 126. FlashAttention; the micro-batch, the
// interleaving and the sharding (FSDP's optimizer and gradient sharding,
// Section 3.3.2) as fastest among the candidates.
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
