package plan

import (
	"fmt"

	"scaleplan/hw"
	"scaleplan/llm"
	"scaleplan/model"
)

// MLPerf Training's GPT-3 175B benchmark ("gpt3"), from MLCommons'
// results repositories: github.com/mlcommons/training_results_v3.0,
// training_results_v3.1, training_results_v4.0 and training_results_v4.1. Its rules (the
// submitters' README, e.g. training_results_v3.1,
// NVIDIA/benchmarks/gpt3/implementations/pytorch/README.md): training
// starts from a reference checkpoint (trained 4,000 steps at a global
// batch of 1,536) and runs until the validation log perplexity reaches
// 2.69, evaluated every 24,576 samples of 2,048 tokens; the score is the
// minutes from run_start to run_stop.
const srcMLPerf = "MLPerf Training %s, github.com/mlcommons/training_results_%s, %s"

// mlperfGPT3 is the benchmark's GPT-3 175B: 96 layers of width 12,288,
// 96 heads, sequences of 2,048 (the submissions' conf/custom.yaml:
// num_layers, hidden_size, num_attention_heads, encoder_seq_length),
// the C4 SentencePiece vocabulary of 50,257 (the reference's
// PassThroughVocabulary(size=50257)) padded, as Megatron-LM pads it, to
// a multiple of 128·TP = 512: 50,688; no dropout (hidden_dropout and
// attention_dropout 0.0); Transformer Engine's fused attention.
func mlperfGPT3() model.TransformerShape {
	sh := gptShape("gpt3-175b-mlperf", 96, 12288, 96)
	sh.Vocab, sh.Dropout, sh.FusedAttention = 50688, false, true
	sh.FusedBiasGrad = true // NeMo's layers are Transformer Engine's
	return sh
}

// mlperfRun is one submission: its results directory, system, nodes of 8
// GPUs (H100, or B200 on dgx-b200), global batch, pipeline depth, virtual stages and micro-batch
// (from the config_DGXH100_NODESx8xMINIBSxTPxPP*.sh the run names), and
// the log's gradient accumulation, and its step: the run's minutes less its evaluations, over its steps
// (trained tokens / (global batch · 2,048)), the median of the
// submission's runs, from the result logs' run_start, run_stop,
// eval_start, eval_stop and trained_samples.
type mlperfRun struct {
	version, dir, system string
	nodes, batch         int
	pp, v, b             int
	// accum is the log's gradient_accumulation_steps, which the layout
	// must reproduce: batch/(DP·b).
	accum int
	step  float64
}

// mlperfRuns are the H100 submissions of GPT-3 175B in MLPerf Training
// v3.0 to v4.1 whose logs and configs are public, and v4.1's B200
// preview. Every run uses
// TP 4 with sequence parallelism, no recomputation, Megatron's
// distributed optimizer and FP8 (config_common.sh, config_fp8.sh), and
// overlaps the tensor-parallel communication with compute
// (TP_COMM_OVERLAP=True), which the step model does not. The optimizer is
// Apex's distributed_fused_adam with overlap_grad_sync and
// overlap_param_sync and grad_sync_dtype: bf16 (training_results_v3.0,
// NVIDIA/benchmarks/gpt3/implementations/pytorch/conf/megatron_gpt_config.yaml,
// and training_results_v4.0, .../nemo/conf/optim/distributed_fused_adam.yaml;
// v3.1's conf/custom.yaml leaves optim to the same container defaults):
// the gradients are reduce-scattered in bf16, so the layout keeps 16-bit
// gradients (FP32Grads false).
var mlperfRuns = []mlperfRun{
	{"v3.0", "NVIDIA/results/dgxh100_n64_nemo/gpt3", "dgx-h100", 64, 2048, 8, 12, 1, 128, 12.121},
	{"v3.0", "NVIDIA/results/dgxh100_n96_nemo/gpt3", "dgx-h100", 96, 3072, 8, 12, 1, 128, 12.165},
	{"v3.0", "NVIDIA_CoreWeave/results/coreweave_hgxh100_n96_ngc23.04_pytorch/gpt3", "coreweave-h100", 96, 3072, 8, 12, 1, 128, 12.374},
	{"v3.0", "NVIDIA_CoreWeave/results/coreweave_hgxh100_n192_ngc23.04_pytorch/gpt3", "coreweave-h100", 192, 3072, 8, 12, 1, 64, 6.396},
	{"v3.0", "NVIDIA_CoreWeave/results/coreweave_hgxh100_n448_ngc23.04_pytorch/gpt3", "coreweave-h100", 448, 2688, 8, 12, 1, 24, 2.646},
	{"v3.1", "NVIDIA/results/eos_n64_ngc23.09_nemo/gpt3", "dgx-h100", 64, 2048, 8, 12, 1, 128, 11.077},
	{"v3.1", "NVIDIA/results/eos_n96_ngc23.09_nemo/gpt3", "dgx-h100", 96, 3072, 8, 12, 1, 128, 11.107},
	{"v3.1", "NVIDIA/results/eos-dfw_n512_ngc23.09_nemo/gpt3", "dgx-h100", 512, 2048, 8, 12, 1, 16, 1.633},
	{"v3.1", "NVIDIA/results/eos-dfw_n768_ngc23.09_nemo/gpt3", "dgx-h100", 768, 3072, 8, 12, 1, 16, 1.644},
	{"v3.1", "NVIDIA/results/eos-dfw_n1024_ngc23.09_nemo/gpt3", "dgx-h100", 1024, 4096, 8, 12, 1, 16, 1.648},
	{"v3.1", "NVIDIA/results/eos-dfw_n1280_ngc23.09_nemo/gpt3", "dgx-h100", 1280, 2560, 8, 12, 1, 8, 0.954},
	{"v3.1", "NVIDIA/results/eos-dfw_n1344_ngc23.09_nemo/gpt3", "dgx-h100", 1344, 2688, 8, 12, 1, 8, 0.959},
	// Azure's ND H100 v5 virtual machines: 8 H100 SXM and 8 400 Gb/s
	// NDR InfiniBand links each, as a DGX H100; the catalogue has no
	// system of its own for them.
	{"v3.1", "Azure+NVIDIA/results/ND_H100_v5_n1344_pytorch/gpt3", "dgx-h100", 1344, 2688, 8, 12, 1, 8, 0.984},
	{"v4.0", "NVIDIA/results/eos-dfw_n1344_ngc24.04_nemo/gpt3", "dgx-h100", 1344, 2688, 6, 8, 1, 6, 0.922},
	{"v4.0", "NVIDIA/results/eos-dfw_n1452_ngc24.04_nemo/gpt3", "dgx-h100", 1452, 2904, 6, 8, 1, 6, 0.924},
	// v4.0's run on 64 nodes of Eos (nemo/config_DGXH100_64x8x128x4x8_mbs2.sh:
	// micro-batch 2, INTERLEAVED_PIPELINE 4, FP8_PARAMS from
	// config_common.sh; the log's global batch 2,304), left out while its
	// layout did not fit the memory model, which keeps bf16 weights; it
	// fits the model of today.
	{"v4.0", "NVIDIA/results/eos_n64_ngc24.04_nemo/gpt3", "eos", 64, 2304, 8, 4, 2, 72, 10.986},
	// v4.1 (training_results_v4.1 at b87b9e3), added after the step model
	// as checks out of sample: NVIDIA's on 32 and 64 nodes of its Eos
	// (config_DGXH100_{32x8x256,64x8x128}x4x8_mbs2.sh: micro-batch 2,
	// INTERLEAVED_PIPELINE 6, the 24.09 container), and Oracle's on 192
	// and 384 BM.GPU.H100.8 (config_DGXH100_{192x8x64,384x8x32}x4x8_mbs2.sh:
	// micro-batch 2, INTERLEAVED_PIPELINE 4; the 384-node one sets
	// FP8_PARAMS, which the memory model, keeping bf16 weights, still
	// fits). Oracle's nodes are 8 H100 SXM on NVSwitch with RoCE v2 RDMA
	// (the system description: "ROCE2; ... PCIe-NIC: 500 GB/s", no rate a
	// NIC), taken as a DGX H100: the catalogue has no system of their own.
	// Left out: v4.1's eos-dfw_n1452_ngc24.04_nemo, v4.0's logs published
	// again.
	{"v4.1", "NVIDIA/results/eos_n32_ngc24.09_nemo/gpt3", "eos", 32, 2048, 8, 6, 2, 128, 18.417},
	{"v4.1", "NVIDIA/results/eos_n64_ngc24.09_nemo/gpt3", "eos", 64, 2048, 8, 6, 2, 64, 9.547},
	{"v4.1", "Oracle/results/1536xBM.GPU.H100.8/gpt3", "dgx-h100", 192, 3072, 8, 4, 2, 32, 5.237},
	{"v4.1", "Oracle/results/3072xBM.GPU.H100.8/gpt3", "dgx-h100", 384, 3072, 8, 4, 2, 16, 3.220},
	// NVIDIA's preview of 8 DGX B200 ("Nyx (8x NVIDIA DGX B200)",
	// config_DGXB200_8x8x1024x4x8_mbs2_cg.sh: micro-batch 2,
	// INTERLEAVED_PIPELINE 6), on the catalogue's dgx-b200.
	{"v4.1", "NVIDIA/results/b200_n8_preview_nemo/gpt3", "dgx-b200", 8, 2048, 8, 6, 2, 512, 36.257},
}

// MLPerfGPT3Cases returns mlperfRuns as LLM cases of the step time, in
// fp8 (FP8GEMMs). None calibrates anything.
func MLPerfGPT3Cases() []LLMCase {
	sh := mlperfGPT3()
	cs := make([]LLMCase, len(mlperfRuns))
	for i, r := range mlperfRuns {
		const tp = 4
		gpus := 8 * r.nodes
		who := submitter(r.dir)
		if r.system == "dgx-b200" {
			who += "-b200"
		}
		cs[i] = LLMCase{Name: fmt.Sprintf("mlperf-%s-gpt3-%s-%d", r.version, who, gpus),
			Source: fmt.Sprintf(srcMLPerf, r.version, r.version, r.dir),
			Shape:  sh, System: r.system, Precision: hw.FP8,
			Layout: llm.Layout{TP: tp, SequenceParallel: true, PP: r.pp, VirtualStages: r.v, DP: gpus / (tp * r.pp), CP: 1, EP: 1,
				MicroBatch: r.b, GlobalBatch: r.batch, Recompute: model.RecomputeNone, Sharding: llm.ShardDistOpt},
			Metric: MetricStep, Published: r.step}
	}
	return cs
}

// submitter returns the short name of a results directory's submitter.
func submitter(dir string) string {
	switch {
	case len(dir) >= 5 && dir[:5] == "Azure":
		return "azure"
	case len(dir) >= 16 && dir[:16] == "NVIDIA_CoreWeave":
		return "coreweave"
	case len(dir) >= 6 && dir[:6] == "Oracle":
		return "oracle"
	}
	return "nvidia"
}
