package plan

import (
	"fmt"
	"strings"

	"scaleplan/compute"
	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/llm"
	"scaleplan/model"
)

// LLMFramework is the framework mode the operator model assumes of an LLM
// training run: Megatron-LM issues its kernels from eager PyTorch.
const LLMFramework = compute.Eager

// OperatorTime returns compute's operator cost model as an llm.OpTime for
// dev at precision p: each operator takes the larger of its device time
// (compute.OpTime: tile and wave quantisation of its products, cuBLAS's
// and FlashAttention's fractions of the peak, the memory-bound rest at
// the achieved bandwidth) and the host's cost of issuing its kernels in
// LLMFramework's mode (compute.Mode.Launch): the host runs ahead of the
// device, so a step's stream of operators goes at the slower of the two,
// operator by operator. host, when it measured a kernel's dispatch and
// launch (its cuda_op, compute.HostCosts.Kernel), charges that in place
// of the published launch (compute.Config.Launches); nil or a table
// without it keeps the published one. fused runs attention as one
// FlashAttention kernel. At fp8 the transformer layers' linear layers run at the fp8
// rate (compute.EffGEMMFP8) after TE's casts, and the rest in bf16
// (FP8GEMMs). It wraps compute.ErrNoModel for a
// device without an SM count.
func OperatorTime(dev *hw.Device, p hw.Precision, fused bool, host *compute.HostCosts) (llm.OpTime, error) {
	if p != hw.FP8 {
		return operatorTime(dev, p, fused, host)
	}
	gemm, err := operatorTime(dev, hw.FP8, fused, host)
	if err != nil {
		return nil, err
	}
	rest, err := operatorTime(dev, hw.BF16, fused, host)
	return FP8GEMMs(gemm, rest), err
}

// operatorTime is OperatorTime at one precision for every operator.
func operatorTime(dev *hw.Device, p hw.Precision, fused bool, host *compute.HostCosts) (llm.OpTime, error) {
	c := &compute.Config{Device: dev, Precision: p, Mode: LLMFramework, FusedAttention: fused, Host: host}
	if _, err := compute.OpTime(c, &model.Op{}); err != nil {
		return nil, fmt.Errorf("llm compute: %w", err)
	}
	return func(op model.Op) units.Seconds {
		d, _ := compute.OpTime(c, &op) // c was checked above
		return max(d, c.Launches(&op))
	}, nil
}

// FP8GEMMs returns the operator time of mixed FP8 training as NVIDIA's
// Transformer Engine runs it: the matrix products of a transformer
// layer's linear layers (te.Linear, te.LayerNormLinear, te.LayerNormMLP:
// q/k/v, the attention's output, the feed-forward's two) in FP8, timed
// by gemm, each after TE's cast of its operand to FP8 (teCast), timed by
// rest; the rest in bf16, timed by rest: attention (FlashAttention in
// bf16, TE's default), the norms and activations, the embedding, the
// output projection and the MoE router, which Megatron-LM and NeMo keep
// out of TE's fp8_autocast ("Using FP8 with Transformer Engine",
// docs.nvidia.com/deeplearning/transformer-engine/user-guide/examples/fp8_primer.html;
// MLPerf's GPT-3, training_results_v3.1,
// NVIDIA/benchmarks/gpt3/implementations/pytorch/conf/custom.yaml:
// "fp8: enables fp8 in TransformerLayer forward").
//
// Not counted: the weights' casts, once a step (NeMo passes TE
// is_first_microbatch, and TE keeps the FP8 weight and its transpose for
// the step's other micro-batches), TECastBytes per weight, about 1 % of
// the MLPerf GPT-3 steps (22 GB a GPU at PP 8, 8 ms at 0.83 of 3.35 TB/s,
// against steps of 0.9 s or more); and
// the scaling's bookkeeping (delayed scaling's amax history and scale
// update, one fused kernel and one all-reduce of the amaxes a step).
func FP8GEMMs(gemm, rest llm.OpTime) llm.OpTime {
	return func(op model.Op) units.Seconds {
		if op.Kind != model.MatMul || !fp8Linear(op.Name) {
			return rest(op)
		}
		d := gemm(op)
		if c, ok := teCast(op); ok {
			d += rest(c)
		}
		return d
	}
}

// TECastBytes is the bytes Transformer Engine moves for each element of a
// tensor it quantises for an FP8 product: its fused cast-transpose kernel
// (github.com/NVIDIA/TransformerEngine,
// transformer_engine/common/transpose/cast_transpose.cu) reads the bf16
// tensor (2 bytes) and writes it in FP8 twice, as it is and transposed
// (1 byte each), taking its amax on the way. The transpose is there
// because Hopper's FP8 products take only the "TN" layout (cuBLAS
// documentation, cublasLtMatmul: FP8 requires A transposed and B not),
// so the backward's products need each operand's transpose.
const TECastBytes = 4

// teCast returns the cast kernel TE runs before the FP8 product op, on
// the operand op brings in fresh: the forward's (and recomputation's)
// input, M×K, and the input gradient's incoming gradient, the output
// gradient dY, also M×K of that product. The weight-gradient product
// takes the transposes both casts wrote, and casts nothing: ok false.
func teCast(op model.Op) (model.Op, bool) {
	if strings.HasSuffix(op.Name, ".grad_weight") || op.M <= 0 || op.K <= 0 {
		return model.Op{}, false
	}
	n := float64(op.M) * float64(op.K) * float64(max(op.Groups, 1))
	return model.Op{Name: op.Name + ".fp8_cast", Kind: model.Elementwise, Pass: op.Pass,
		Read: units.Bytes(2 * n), Write: units.Bytes((TECastBytes - 2) * n)}, true
}

// fp8Linear reports whether the operator called name belongs to a
// transformer layer's linear layer that TE runs in FP8.
func fp8Linear(name string) bool {
	if !strings.HasPrefix(name, "layers.") {
		return false
	}
	base, _, _ := strings.Cut(strings.TrimPrefix(name, "layers."), ".grad")
	base = strings.TrimSuffix(base, ".recompute")
	for _, s := range []string{".qkv", ".q", ".kv", ".out", ".fc1", ".fc2"} {
		if strings.HasSuffix(base, s) {
			return true
		}
	}
	return false
}
