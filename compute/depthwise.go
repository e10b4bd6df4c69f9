package compute

import (
	"scaleplan/hw"
	"scaleplan/model"
)

// EffL2 is the fraction of its L2 cache's peak read bandwidth
// (hw.Device.L2Bandwidth) that a kernel reading from the L2 reaches: Jia
// et al. 2018, "Dissecting the NVIDIA Volta GPU Architecture via
// Microbenchmarking" (arXiv:1804.06826), Section 3, measure 2,155.88 GB/s
// of L2 load throughput on a V100, whose peak is 2,048 bytes a clock at
// 1,530 MHz, 3,133.44 GB/s: 0.688.
const EffL2 = 2155.88 / 3133.44

// ownDepthwise says PyTorch runs the depthwise convolution op with its own
// kernels (aten/src/ATen/native/cuda/DepthwiseConv2d.cu) rather than
// cuDNN's, as ConvParams::use_cudnn_depthwise in
// aten/src/ATen/native/Convolution.cpp chooses (PyTorch 1.8 to 2.x):
// channels_last always runs cuDNN; NCHW runs cuDNN only for 16-bit values
// (cuDNN 8.2 or later) where check_cudnn_depthwise_workload_with_filter
// says so: every stride-1 convolution of a 1×1, 3×3 or 5×5 filter on an
// input at least 7 wide. Its stride-2 rules (by batch and channels) are not
// modelled: a stride-2 depthwise convolution in NCHW at 16 bits counts as
// PyTorch's own. fp32 and tf32 in NCHW always run PyTorch's own.
func (c *Config) ownDepthwise(op *model.Op) bool {
	if !c.NCHW || !depthwise(op) {
		return false
	}
	if c.Precision != hw.FP16 && c.Precision != hw.BF16 {
		return true
	}
	switch op.Kernel {
	case 1, 3, 5:
		return op.Stride != 1 || op.OutW < 7
	}
	return true
}

// depthwise says op is a pass of a depthwise convolution: a grouped one of
// one input and one output channel per group (model/ops_layers.go's conv:
// forward N = 1, K = k²; grad_input N = 1; grad_weight M = 1, N = k²).
func depthwise(op *model.Op) bool {
	if op.Kind != model.GroupedConv || op.Groups <= 1 || op.Kernel <= 0 {
		return false
	}
	kk := int64(op.Kernel * op.Kernel)
	if op.GradWeight {
		return op.M == 1 && op.N == kk
	}
	return op.N == 1 && (op.Pass == model.Backward || op.K == kk)
}

// depthwiseL2 returns the time the L2 cache takes to serve the weight
// gradient of a depthwise convolution that PyTorch runs with its own
// kernel, 0 for every other operator or a device without an L2 bandwidth.
// conv_depthwise2d_grad_weight_kernel runs one thread block per channel
// and filter tap (blockIdx over channels × kH × kW), each reducing dy·x
// over the batch and output pixels: every block reads the channel's dy
// and, at its tap's offset, x (every 32-byte sector of x at stride 1 or
// 2), so the L2 serves the operator's reads k² times. The k² blocks of a
// channel are consecutive and run together, so DRAM serves them once (the
// bytes term of opTime). A calibration's grouped-conv efficiency scales
// the L2's as it does DRAM's:
//
//	t_L2 = k² · read / (L2Bandwidth · EffL2 · e(grouped) / EffDepthwise)
func (c *Config) depthwiseL2(op *model.Op) float64 {
	l2 := float64(c.Device.L2Bandwidth)
	if !op.GradWeight || l2 <= 0 || !c.ownDepthwise(op) {
		return 0
	}
	kk := float64(op.Kernel * op.Kernel)
	return kk * float64(op.Read) / (l2 * EffL2 * c.eff(Grouped) / EffDepthwise)
}
