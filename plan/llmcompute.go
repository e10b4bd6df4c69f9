package plan

import (
	"fmt"

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
// operator by operator. fused runs attention as one FlashAttention
// kernel. It wraps compute.ErrNoModel for a device without an SM count.
func OperatorTime(dev *hw.Device, p hw.Precision, fused bool) (llm.OpTime, error) {
	c := &compute.Config{Device: dev, Precision: p, Mode: LLMFramework, FusedAttention: fused}
	if _, err := compute.OpTime(c, &model.Op{}); err != nil {
		return nil, fmt.Errorf("llm compute: %w", err)
	}
	launch := c.Mode.Launch()
	return func(op model.Op) units.Seconds {
		d, _ := compute.OpTime(c, &op) // c was checked above
		return max(d, units.Seconds(c.Kernels(&op))*launch)
	}, nil
}
