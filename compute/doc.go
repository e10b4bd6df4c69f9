// Package compute predicts how long a device takes to run each operator of
// a training step (model.Op) and so a whole step, from the device's
// catalogue figures (peak rates per precision, memory bandwidth, SM count)
// and a few published efficiencies, none fitted to a validation case.
//
// An operator's device time is a roofline with quantisation:
//
//	t(op) = max(FLOPs / (peak(class) · e(class) · q(op)), bytes / (bw · e_mem))
//
// where peak(class) is the tensor-core peak at the precision for matrix
// products and convolutions (fp16, bf16, tf32), the fp32 CUDA-core peak
// for fp32 and for grouped and depthwise convolutions and memory-bound
// operators; e(class) is the fraction of that peak a vendor library
// reaches on large problems (EffGEMM, at fp8 EffGEMMFP8, EffFlash; a dense
// convolution's scaled by its device's measured convolution efficiency over
// EffGEMM where the catalogue gives one, hw.Device.ConvEfficiency); q(op) is the tile and
// wave quantisation of the operator's matrix product over the device's
// SMs (Quantisation); and bw·e_mem is the DRAM bandwidth a streaming
// kernel achieves (EffMemory), a grouped or depthwise convolution less
// (EffDepthwise); the weight gradient of a depthwise convolution that
// PyTorch runs with its own kernel (NCHW; ownDepthwise) reads its data
// once per filter tap through the L2 cache, at EffL2 of the device's
// L2Bandwidth where it is slower (depthwiseL2; docs/compute-depthwise.md).
// A dense 3×3 stride-1 convolution at fp32 that cuDNN
// runs by Winograd's minimal filtering runs instead at its device's
// measured Winograd rate for its pass and channels, in direct FLOPs and
// without q (hw.Device.Winograd, winogradRate). On a device that gives
// them, a tensor-core matrix product with a leading dimension that is not
// a multiple of AlignBytes takes hw.Device.MisalignedGEMM times its
// compute term (hw.Device.OddGEMM where the dimension is an odd number of
// 16-bit values), and a batch norm in NCHW (Config.NCHW) takes at least its
// values at hw.Device.NCHWBatchNorm times the fp32 peak. Under autocast (Config.Autocast) the
// operators PyTorch runs in float32 move twice their 16-bit bytes after
// a cast, and each weight is cast once a pass.
//
// The host issues the kernels: launch(mode) each (Mode; a framework's
// default mode is FrameworkMode's, which a scenario's or a measured row's
// stated mode overrides), and in eager
// PyTorch a module call and an autograd record per forward operator, the
// optimizer's foreach calls and the gradient scaler's kernels, and their
// bookkeeping per parameter tensor (HostTime; HostCosts, by default
// MeasuredHost, scripts/torchhost.py's measurement; a host's own table,
// ReadHostTable, may also give its CUDA operator's dispatch and launch,
// HostCosts.Kernel, in place of DispatchEager + LaunchKernel, and its
// synchronisation, HostCosts.Sync). Host and device overlap, so a
// step takes max(host, device), plus the optimizer's host time after the
// gradient scaler's or a norm clip's synchronisation where there is one
// (Step; Config.ClipNorm). A program that zeroes its gradients rather than
// freeing them (Config.ZeroGrad: zero_grad before PyTorch 2.0, apex amp's
// under O2) adds each new gradient into the zeroed one in the backward
// pass and zeroes it again after the optimizer (addZeroGrad). BertAdam's step (model.BertAdam) is a loop of
// single kernels per parameter tensor instead of foreach calls. In eager
// mode an operator whose result the host reads (model.Op.Sync: a
// torch.nonzero, an .item(), a copy; with Config.LossSync the loss read
// before the backward pass) closes a segment of the step, which
// takes max(host, device) + SyncLatency on its own: the host cannot run
// ahead across it. An operator the host computes (model.Op.HostCPU) is a
// segment of its own between two such waits, in every mode. An input
// loader in the training process (Config.LoaderHost, DeepLearningExamples'
// PyTorch Mask R-CNN hybrid loader: its decode and its counted calls,
// HostCallsTime) joins the optimizer's host time after the step's last
// launch. The optimizer's device time is left to the caller (sim.UpdateTime), which
// knows the recipe's optimizer. The simulator's linear law b·PerSample +
// Fixed is taken at a micro-batch b from the step's t(b) and t(2b)
// (LawAt):
//
//	PerSample = (t(2b) − t(b)) / b        Fixed = 2·t(b) − t(2b)
//
// exact at b and with the step's slope around it. KindTimes splits a
// step's device time by operator kind, autocast's casts apart, to see
// where two devices or precisions differ
// (docs/validation-efficientnet.md). docs/compute.md gives
// the equations, every constant's source and the validation results.
//
// A calibration replaces the published efficiencies (EffDepthwise as the
// Grouped class's share of the bandwidth) and the launch cost per kernel
// by fitted ones (Config.Eff, Efficiencies, one per operator Class; the
// kernels a library launches inside a dispatched operator, cuDNN's NCHW
// transposes, then cost a bare LaunchKernel), adds a host cost per step
// to the host's time (HostTime.Step), which overlaps the device like the
// rest, and its own device time per kernel (Efficiencies.KernelTime, in
// place of the published KernelTime of eager mode) to the device's;
// Profile evaluates a step under many of them quickly, for the fit. Kept
// on another device they carry the calibration there, Habitat-style
// (calibrate.go).
package compute
