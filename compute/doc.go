// Package compute predicts how long a device takes to run each operator of
// a training step (model.Op) and so a whole step, from the device's
// catalogue figures (peak rates per precision, memory bandwidth, SM count)
// and a few published efficiencies, none fitted to a validation case.
//
// An operator's time is a roofline with quantisation plus a host cost:
//
//	t(op) = max(FLOPs / (peak(class) · e(class) · q(op)), bytes / (bw · e_mem)) + launch(mode)
//
// where peak(class) is the tensor-core peak at the precision for matrix
// products and convolutions (fp16, bf16, tf32), the fp32 CUDA-core peak
// for fp32 and for grouped and depthwise convolutions and memory-bound
// operators; e(class) is the fraction of that peak a vendor library
// reaches on large problems (EffGEMM, EffFlash); q(op) is the tile and
// wave quantisation of the operator's matrix product over the device's
// SMs (Quantisation); bw·e_mem is the DRAM bandwidth a streaming kernel
// achieves (EffMemory); and launch(mode) is the host's cost of issuing one
// operator in the framework's mode (Mode).
//
// A step's time at batch b is the sum over model.Ops(b) of the forward
// and backward operators' times (Step); the optimizer's update is left to
// the caller (sim.UpdateTime), which knows the recipe's optimizer. The
// simulator's linear law b·PerSample + Fixed is taken at a micro-batch b
// from t(b) and t(2b) (LawAt):
//
//	PerSample = (t(2b) − t(b)) / b        Fixed = 2·t(b) − t(2b)
//
// exact at b and with the step's slope around it. docs/compute.md gives
// the equations, every constant's source and the validation results.
//
// A calibration replaces the published efficiencies and the launch cost
// by fitted ones (Config.Eff, Efficiencies, one per operator Class, and a
// host cost per step); Profile evaluates a step under many of them
// quickly, for the fit. Kept on another device they carry the
// calibration there, Habitat-style (calibrate.go).
package compute
