package compute

import (
	"scaleplan/internal/units"
	"scaleplan/model"
)

// zeroGradKernels is the kernels Config.ZeroGrad adds per parameter
// tensor: AccumulateGrad's in-place addition in the backward pass and
// zero_grad's zero_ after the optimizer.
const zeroGradKernels = 2

// zeroGradBytes returns the bytes Config.ZeroGrad moves per parameter of
// gradients g bytes a value: the backward pass's in-place addition reads
// the zeroed gradient and the new one and writes the sum (PyTorch's
// torch/csrc/autograd/functions/accumulate_grad.h: where the gradient is
// defined and no graph of the backward pass is built, "variable_grad +=
// new_grad"; where it is not, the new gradient is kept as it is, no
// kernel), 3·g; zero_ writes the gradient again, g.
func zeroGradBytes(g float64) float64 { return 4 * g }

// gradBytes returns the bytes of one gradient value under c: 4 under
// autocast (the parameters, and so their gradients, stay float32) and at
// fp32 or tf32; 2 for a fp16 or bf16 model (apex amp's O2 casts the model
// to fp16, and its gradients with it).
func (c *Config) gradBytes() float64 {
	if c.autocasts() {
		return 4
	}
	return float64(storage(c.Precision).Size())
}

// addZeroGrad adds Config.ZeroGrad's work over the parameter tensors of
// sizes to s: per tensor an in-place addition in the backward pass and a
// zero_ after the optimizer, each a kernel (their device time in the last
// segment's backward pass: the step waits for the device at its end, as
// run_squad.py's loss.item() does after zero_grad), their launches the
// backward pass's and the optimizer's host time, with zero_grad's
// detach_ (an eager dispatch, no kernel) per tensor (torch/optim/
// optimizer.py's zero_grad; apex/amp/_process_optimizer.py's
// new_zero_grad, "param.grad.detach_(); param.grad.zero_()").
func (c *Config) addZeroGrad(s *StepTime, sizes []int64, segs []segment) {
	if !c.ZeroGrad || len(sizes) == 0 {
		return
	}
	var n int64
	for _, v := range sizes {
		n += v
	}
	tensors := units.Seconds(len(sizes))
	bytes := zeroGradBytes(c.gradBytes()) * float64(n)
	dev := units.Seconds(bytes/(float64(c.Device.MemoryBandwidth)*c.eff(MemoryBound))) + zeroGradKernels*tensors*c.kernelTime()
	s.DeviceBackward += dev
	s.Host.Backward += tensors * c.launch()
	s.Host.Optimizer += tensors * (c.dispatch() + c.launch())
	s.Launch += zeroGradKernels * tensors * c.launch()
	segs[len(segs)-1].add(model.Backward, tensors*c.launch(), dev)
}
