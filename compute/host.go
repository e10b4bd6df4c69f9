package compute

import (
	"cmp"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
)

// HostCosts is eager PyTorch's host cost beyond each kernel's dispatch
// and launch (Mode.Launch): per forward operator a module call and an
// autograd record, and per parameter tensor the Python bookkeeping of the
// optimizer's step and of the gradient scaler's unscale_ beyond their
// foreach calls.
type HostCosts struct {
	// ModuleCall is the cost of calling an nn.Module rather than its
	// function.
	ModuleCall units.Seconds
	// AutogradRecord is the cost of recording an operator in autograd's
	// graph.
	AutogradRecord units.Seconds
	// SGDTensor and AdamTensor are torch.optim's foreach step's cost per
	// parameter tensor, momentum SGD's and Adam's (AdamW's), beyond its
	// foreach calls: the loop that gathers the tensors, their state and
	// (Adam) their step counts.
	SGDTensor, AdamTensor units.Seconds
	// ScalerTensor is GradScaler.unscale_'s cost per parameter tensor
	// beyond its foreach call: the loop that groups the gradients by
	// device and type.
	ScalerTensor units.Seconds
	// Kernel is one small operator's call on a CUDA tensor on the host
	// that ran the step, its dispatch and its kernel's launch: what
	// DispatchEager + LaunchKernel stand for, measured (a host table's
	// cuda_op, ReadHostTable). 0: those published figures.
	Kernel units.Seconds
	// Sync is what a synchronisation adds on that host beyond the work it
	// waits for (a host table's cuda_sync). 0: SyncLatency.
	Sync units.Seconds
	// CPUOp is one small operator's call on a CPU tensor on that host (a
	// host table's dispatch). 0: CPUDispatch.
	CPUOp units.Seconds
	// Event is a CUDA timing event made and recorded on the stream on
	// that host (a host table's cuda_event), what a program that times
	// its steps with events pays per event (Config.TimerEvents). 0: not
	// measured, and not charged.
	Event units.Seconds
}

// CallsTime returns the host's time of calls in eager PyTorch on h: each
// operator on a CPU tensor at h's CPUOp, each CUDA kernel at its Kernel
// and each synchronisation at its Sync, the published figures
// (HostCallsTime's) where h measures none or is nil.
func (h *HostCosts) CallsTime(calls model.HostCalls) units.Seconds {
	return units.Seconds(calls.CPU)*h.cpuOp() + units.Seconds(calls.Kernels)*h.kernel() + units.Seconds(calls.Syncs)*h.sync()
}

// cpuOp, kernel and sync return h's measured costs of a CPU operator, a
// CUDA operator's dispatch and launch and a synchronisation, each the
// published figure (CPUDispatch, DispatchEager + LaunchKernel,
// SyncLatency) where h measures none or is nil.
func (h *HostCosts) cpuOp() units.Seconds { return cmp.Or(h.value().CPUOp, CPUDispatch) }
func (h *HostCosts) kernel() units.Seconds {
	return cmp.Or(h.value().Kernel, DispatchEager+LaunchKernel)
}
func (h *HostCosts) sync() units.Seconds { return cmp.Or(h.value().Sync, SyncLatency) }

// value returns *h, the zero HostCosts (nothing measured) for nil.
func (h *HostCosts) value() HostCosts {
	if h == nil {
		return HostCosts{}
	}
	return *h
}

// PublishedHost holds the published figures, of PyTorch 1.x in 2020–2021
// on desktop CPUs: pytorch/pytorch#50431 (2021) measures nn.Linear at
// 9.7 µs per call against 4.7 µs for F.linear, "~5 microseconds extra
// per module call"; pytorch/pytorch#41383 (2020) 6.8 µs per small
// operator on a tensor that requires a gradient against 5.0 µs on one
// that does not. Neither measures the optimizer's or the scaler's cost
// per tensor (0 here).
var PublishedHost = HostCosts{ModuleCall: 5 * units.Microsecond, AutogradRecord: 1.8 * units.Microsecond}

// MeasuredHost is the default: scripts/torchhost.py's measurement on
// CPU tensors of one element, the table compute/testdata/torch-host.csv
// (PyTorch 1.13.1, the last release before 2.0, whose eager mode 2.0
// keeps, "torch.compile is a fully additive (and optional) feature":
// pytorch.org/get-started/pytorch-2.0), on a shared, loaded 2-core AMD
// EPYC virtual machine at 2.6 GHz, each figure the least of nine medians
// of 31 timings (TestMeasuredHost reads the table).
var MeasuredHost = HostCosts{
	ModuleCall:     1.118 * units.Microsecond,
	AutogradRecord: 0.418 * units.Microsecond,
	SGDTensor:      1.815 * units.Microsecond,
	AdamTensor:     6.842 * units.Microsecond,
	ScalerTensor:   1.465 * units.Microsecond,
}

// dispatch returns c's host cost of dispatching one CUDA operator in
// eager mode, without its kernel's launch: its host's Kernel less
// LaunchKernel where the host measures one (at least 0), else
// DispatchEager.
func (c *Config) dispatch() units.Seconds {
	if k := c.host().Kernel; k > 0 {
		return max(k-LaunchKernel, 0)
	}
	return DispatchEager
}

// eagerLaunch returns c's host cost of one dispatched operator's kernel
// in eager mode: its host's (HostCosts.kernel; Eager.Launch() unless the
// host measures its own), at least a bare launch.
func (c *Config) eagerLaunch() units.Seconds {
	return max(c.host().kernel(), LaunchKernel)
}

// syncLatency returns what a synchronisation adds under c: its host's
// Sync, else SyncLatency.
func (c *Config) syncLatency() units.Seconds {
	return c.host().sync()
}

// optimizerTensor returns h's cost per parameter tensor of optimizer o's
// step: Adam's for the Adam family, momentum SGD's for the rest.
func (h *HostCosts) optimizerTensor(o model.Optimizer) units.Seconds {
	switch o {
	case model.Adam, model.FusedAdam, model.AdamW:
		return h.AdamTensor
	}
	return h.SGDTensor
}

// Multi-tensor apply, the kernels of torch.optim's foreach implementations
// and of the gradient scaler's unscaling: PyTorch's
// aten/src/ATen/native/cuda/MultiTensorApply.cuh launches a kernel when
// its argument block holds depth_to_max_tensors[depth−1] = {110, 64, 48,
// 36, 30} tensors or depth_to_max_blocks = 320 chunks of kChunkSize =
// 65,536 values (CUDA before 13; 13 raises the limits sevenfold).
var foreachMaxTensors = [5]int{110, 64, 48, 36, 30}

const (
	foreachMaxChunks = 320
	foreachChunk     = 65536
)

// foreachLaunches returns the kernels one foreach call of depth tensor
// lists (1 to 5) launches over parameter tensors of sizes: enough for the
// tensors, foreachMaxTensors[depth−1] a launch, and for their chunks,
// foreachMaxChunks a launch; 0 for no tensors.
func foreachLaunches(depth int, sizes []int64) int {
	if len(sizes) == 0 {
		return 0
	}
	depth = min(max(depth, 1), len(foreachMaxTensors))
	var chunks int64
	for _, n := range sizes {
		chunks += ceilDiv(max(n, 1), foreachChunk)
	}
	byTensors := ceilDiv(int64(len(sizes)), int64(foreachMaxTensors[depth-1]))
	return int(max(byTensors, ceilDiv(chunks, foreachMaxChunks)))
}

// foreachCall is one foreach call of an optimizer step: its tensor lists,
// and whether it writes a list of its own (out of place) rather than the
// first it reads.
type foreachCall struct {
	depth      int
	outOfPlace bool
}

// optimizerCalls lists the foreach calls of one optimizer step, from
// torch/optim's _multi_tensor_* functions (PyTorch 2.x, the default on
// CUDA): momentum SGD with weight decay (sgd.py: grads + wd·params out of
// place, bufs ·= μ, bufs += grads, params −= lr·bufs); plain SGD (params
// −= lr·grads); Adam (adam.py: lerp of the first moment, the second's
// scale and addcmul, its square root out of place, division by the bias
// correction, + ε, and the addcdiv into the parameters; the step counters
// are host tensors); AdamW adds the decoupled decay (params ·= 1 − lr·wd).
func optimizerCalls(o model.Optimizer) []foreachCall {
	adam := []foreachCall{{2, false}, {1, false}, {3, false}, {2, true}, {1, false}, {1, false}, {3, false}}
	switch o {
	case model.SGD:
		return []foreachCall{{2, false}}
	case model.Adam, model.FusedAdam:
		return adam
	case model.AdamW:
		return append([]foreachCall{{1, false}}, adam...)
	}
	return []foreachCall{{3, true}, {1, false}, {2, false}, {2, false}} // momentum and the others
}

// optimizerDepths lists the foreach calls of one optimizer step by their
// depth (optimizerCalls).
func optimizerDepths(o model.Optimizer) []int {
	var ds []int
	for _, c := range optimizerCalls(o) {
		ds = append(ds, c.depth)
	}
	return ds
}

// OptimizerPasses returns the values per parameter that one step of
// torch.optim's optimizer o reads and writes, kernel by kernel (its
// _multi_tensor_* functions, whose foreach calls optimizerCalls lists,
// and its _single_tensor_* ones, which run the same operations tensor by
// tensor): an in-place call of d tensor lists reads d values and writes
// one; an out-of-place one reads d − 1 and writes one. Momentum SGD with
// weight decay 11, SGD 3, Adam 19, AdamW 21; 0 for an optimizer that is
// not torch.optim's (apex's fused Adam, BertAdam, LAMB, LARS).
func OptimizerPasses(o model.Optimizer) int {
	switch o {
	case model.SGD, model.Momentum, model.Adam, model.AdamW:
		n := 0
		for _, c := range optimizerCalls(o) {
			n += c.depth + 1
			if c.outOfPlace {
				n--
			}
		}
		return n
	}
	return 0
}

// scalerKernels are the single kernels of torch.amp.GradScaler's step
// besides its foreach unscaling (torch/amp/grad_scaler.py): the loss's
// scaling, the inverse scale and the found-inf flag in unscale_, and
// _amp_update_scale_ in update.
const scalerKernels = 4

// paramSizes returns the sizes of the parameter tensors the forward
// operators of ops own (eachParamTensor).
func paramSizes(ops []model.Op) []int64 {
	var out []int64
	eachParamTensor(ops, func(n int64, _ bool) { out = append(out, n) })
	return out
}

// eachParamTensor calls f with the size of each parameter tensor the
// forward operators of ops own (model.Op.ParamTensors: a weight and its
// bias, a norm's scale and shift), and whether it is a weight (a matrix or
// a table) rather than a bias or a norm's.
func eachParamTensor(ops []model.Op, f func(size int64, weight bool)) {
	for i := range ops {
		o := &ops[i]
		if o.Pass != model.Forward {
			continue
		}
		switch n := o.ParamTensors(); {
		case n == 2 && o.Kind == model.Norm:
			f(o.Params/2, false)
			f(o.Params-o.Params/2, false)
		case n == 2:
			w := o.K * o.N * max(o.Groups, 1)
			f(w, true)
			f(o.Params-w, false)
		case n == 1:
			f(o.Params, o.Kind != model.Norm)
		}
	}
}

// HostTime is the host's time of a step by phase.
type HostTime struct {
	// Step is a calibration's host cost per step beyond the phases below
	// (Efficiencies.StepHost) and the measuring program's timer events
	// (Config.TimerEvents, unless the calibration's StepHost holds them:
	// Efficiencies.EventsInStepHost), before the forward pass's kernels.
	Step units.Seconds
	// Forward and Backward are the host's time issuing the passes'
	// kernels: each kernel's launch(mode) (with a calibrated launch, a
	// bare LaunchKernel for those a library launches inside an operator),
	// and in eager mode a module call and an autograd record per forward
	// operator.
	Forward, Backward units.Seconds
	// Scaler is the gradient scaler's host time before its
	// synchronisation (the loss's scaling and unscale_).
	Scaler units.Seconds
	// Optimizer is the optimizer step's and the scaler's update's host
	// time: what follows the synchronisation when there is one.
	Optimizer units.Seconds
	// Loader is the host's input loading after the step's last launch
	// (Config.LoaderHost times the batch).
	Loader units.Seconds
}

// Total returns the host's time of the whole step.
func (h HostTime) Total() units.Seconds {
	return h.Step + h.Forward + h.Backward + h.Scaler + h.Optimizer + h.Loader
}

// optimizerHost returns the host's time of c's optimizer step over the
// parameter tensors of sizes: each foreach call's dispatch and launches,
// and the step's bookkeeping per tensor.
func (c *Config) optimizerHost(sizes []int64) units.Seconds {
	t := units.Seconds(len(sizes)) * c.host().optimizerTensor(c.Optimizer)
	for _, d := range optimizerDepths(c.Optimizer) {
		t += c.dispatch() + units.Seconds(foreachLaunches(d, sizes))*LaunchKernel
	}
	return t
}

// bertAdamHost returns the host's time of model.BertAdam's step of
// kernels kernels (bertAdamKernels), at an eager operator's dispatch and
// launch each (eagerLaunch).
func (c *Config) bertAdamHost(kernels int) units.Seconds {
	return units.Seconds(kernels) * c.eagerLaunch()
}

// bertAdamKernels returns model.BertAdam's kernels over the parameter
// tensors the forward operators of ops own: model.BertAdamKernels a
// tensor in the weight-decay group, BertAdamKernelsNoDecay for biases
// and norms, as run_squad.py's no_decay list groups them.
func bertAdamKernels(ops []model.Op) int {
	var k int
	eachParamTensor(ops, func(_ int64, weight bool) {
		if weight {
			k += model.BertAdamKernels
		} else {
			k += model.BertAdamKernelsNoDecay
		}
	})
	return k
}

// clipKernels is GradientClipper's kernels around its host read besides
// the multi-tensor ones: multi_tensor_l2norm's final reduction over its
// per-chunk norms (apex csrc/multi_tensor_l2norm_kernel.cu, cleanup).
const clipKernels = 1

// clipHost returns ClipNorm's host time before and after its read of the
// norm: multi_tensor_l2norm (depth 1) and its reduction before,
// multi_tensor_scale (depth 2) after. apex's multi_tensor_apply
// (csrc/multi_tensor_apply.cuh) has PyTorch's limits per launch
// (foreachLaunches).
func (c *Config) clipHost(sizes []int64) (before, after units.Seconds) {
	before = c.dispatch() + units.Seconds(foreachLaunches(1, sizes)+clipKernels)*LaunchKernel
	after = c.dispatch() + units.Seconds(foreachLaunches(2, sizes))*LaunchKernel
	return before, after
}

// scalerHost returns the gradient scaler's host time before and after its
// synchronisation: the scaling of the loss, the inverse scale, the flag,
// unscale_'s bookkeeping per tensor and its foreach call before;
// _amp_update_scale_ after.
func (c *Config) scalerHost(sizes []int64) (before, after units.Seconds) {
	l := c.eagerLaunch()
	before = (scalerKernels-1)*l + c.dispatch() + units.Seconds(foreachLaunches(1, sizes))*LaunchKernel +
		units.Seconds(len(sizes))*c.host().ScalerTensor
	return before, l
}

// host returns c's host costs: c.Host, or MeasuredHost where nil.
func (c *Config) host() *HostCosts {
	if c.Host != nil {
		return c.Host
	}
	return &MeasuredHost
}

// autocasts reports whether c runs under autocast at a 16-bit precision.
func (c *Config) autocasts() bool {
	return c.Autocast && (c.Precision == hw.FP16 || c.Precision == hw.BF16)
}

// weightCasts returns the casts autocast runs in each pass and their
// bytes: every parameter tensor of a forward product or convolution cast
// to 16 bits once per forward pass (autocast caches it within the pass;
// read at 4 bytes a value, written at 2), a tied weight
// (model.Op.TiedParams) too, and its gradient cast back to float32 in the
// backward pass (as many kernels and bytes).
func weightCasts(ops []model.Op) (kernels int, bytes units.Bytes) {
	for i := range ops {
		o := &ops[i]
		if o.Pass != model.Forward || (o.Kind != model.MatMul && o.Kind != model.Conv && o.Kind != model.GroupedConv) {
			continue
		}
		if n := o.ParamTensors(); n > 0 {
			kernels += n
			bytes += units.Bytes(6 * o.Params)
		}
		if o.TiedParams > 0 { // a tied weight, cast for this product too
			kernels++
			bytes += units.Bytes(6 * o.TiedParams)
		}
	}
	return kernels, bytes
}

// casts reports whether autocast adds a cast before op by the Float32
// rule: an operator it runs in float32 (model.Op.Float32) under c's
// autocast, but not one whose inputs are float32 already
// (model.Op.Float32Input).
func (c *Config) casts(op *model.Op) bool {
	return op.Float32 && c.autocasts() && !op.Float32Input
}

// castBytes returns the bytes autocast's casts for op move under c, each
// value read at 2 bytes and written at 4 or the other way, three times its
// 16-bit bytes: the activation the generator names (model.Op.CastIn), and
// by the Float32 rule (Config.casts) the operator's own Write; 0 without
// autocast.
func (c *Config) castBytes(op *model.Op) units.Bytes {
	if !c.autocasts() {
		return 0
	}
	b := 3 * op.CastIn
	if c.casts(op) {
		b += 3 * op.Write
	}
	return b
}
