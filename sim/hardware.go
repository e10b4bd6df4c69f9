package sim

import (
	"fmt"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
)

// StoragePrecision returns the precision weights, gradients and
// activations are stored in when computing at p: fp32 for fp32 and tf32
// (TF32 rounds inside the matrix units only), fp16 and bf16 as themselves.
func StoragePrecision(p hw.Precision) (model.Precision, error) {
	switch p {
	case hw.FP32, hw.TF32:
		return model.FP32, nil
	case hw.FP16:
		return model.FP16, nil
	case hw.BF16:
		return model.BF16, nil
	}
	return "", fmt.Errorf("%w: precision %q is not fp32, tf32, fp16 or bf16", ErrConfig, p)
}

// Roofline returns the time one training sample of m takes on d computing
// at precision p, the larger of the compute and memory terms:
//
//	max(3·F / (peak(p)·e), 4·A(p) / B)
//
// with F the forward FLOPs per sample, e the model's efficiency (its
// class default when unset), A(p) the stored activation bytes per sample
// and B the device's memory bandwidth (model.TrainMemoryTraffic). The
// memory term decides for memory-bound classes such as depthwise
// convolutions; for dense ones the compute term is far larger. It returns
// an error if d has no peak at p or m no efficiency.
func Roofline(m *model.Model, d *hw.Device, p hw.Precision) (units.Seconds, error) {
	sp, err := StoragePrecision(p)
	if err != nil {
		return 0, err
	}
	peak := d.PeakFLOPs(p)
	if !(peak > 0) {
		return 0, fmt.Errorf("%w: device %q has no %s peak", ErrConfig, d.Name, p)
	}
	e := m.EffectiveEfficiency()
	if !(e > 0 && e <= 1) {
		return 0, fmt.Errorf("%w: model %q has efficiency %v, not in (0, 1]", ErrConfig, m.Name, e)
	}
	t := float64(m.TrainFLOPsPerSample()) / float64(float64(peak)*e)
	if bw := float64(d.MemoryBandwidth); bw > 0 {
		t = max(t, float64(m.TrainMemoryTraffic(sp))/bw)
	}
	if !positive(t) {
		return 0, fmt.Errorf("%w: model %q has %v forward FLOPs per sample", ErrConfig, m.Name, m.ForwardFLOPs)
	}
	return units.Seconds(t), nil
}

// UpdateBytesPerParam returns the device-memory bytes the optimizer moves
// per parameter in one update, with gradients of g bytes, master weights
// and optimizer state of w bytes, and a low-precision working copy of c
// bytes rewritten under mixed precision (c = 0 otherwise):
//
//	g + 2w + 2·k·w + [lars, lamb](w + g) + c
//
// that is: read the gradient, read and write the weight, read and write
// each of the k state values (model.Optimizer.StateValues: sgd 0,
// momentum, nesterov and lars 1, adam, rmsprop and lamb 2), LARS reads the
// weight and the gradient once more for the layer norms (LAMB the weight
// and its update, counted alike: You et al. 2020, Algorithm 2), and mixed
// precision writes the working copy. Plain fp32 momentum SGD moves 20
// bytes, Adam 28. BertAdam's loop of single kernels (model.BertAdam, its
// weight-decay group) moves 27w + 6g + c instead, 132 bytes in fp32:
// the clip's norm (g) and scale (2g); the moments' mul_ (2w each),
// add_ (2w + g) and addcmul_ (2w + 2g); sqrt, + ε (2w each) and the
// division (3w); decay · p (2w) and update += (3w); lr · update and its
// negation (2w each) and p.add_ (3w).
func UpdateBytesPerParam(o model.Optimizer, g, w, c float64) float64 {
	if o == model.BertAdam {
		return 27*w + 6*g + c
	}
	k := float64(o.StateValues())
	b := g + 2*w + float64(2*k*w) + c
	if o == model.LARS || o == model.LAMB {
		b += w + g
	}
	return b
}

// UpdateBytes returns UpdateBytesPerParam of optimizer o with gradients
// in sp and master weights and state in master, the working copy in sp
// rewritten when the two differ (mixed precision).
func UpdateBytes(o model.Optimizer, sp, master model.Precision) float64 {
	c := 0.0
	if master != sp {
		c = sp.Size()
	}
	return UpdateBytesPerParam(o, sp.Size(), master.Size(), c)
}

// UpdateTime returns the optimizer update of m on d: the trainable
// parameters times UpdateBytes over the device's memory bandwidth, with
// gradients in sp and master weights and state in master.
func UpdateTime(m *model.Model, d *hw.Device, o model.Optimizer, sp, master model.Precision) units.Seconds {
	if !(d.MemoryBandwidth > 0) {
		return 0
	}
	return units.Seconds(float64(m.Params) * UpdateBytes(o, sp, master) / float64(d.MemoryBandwidth))
}

// ModelMemory returns the memory of m trained with optimizer o, weights,
// gradients and activations in sp and master weights and optimizer state
// in master:
//
//	weights     (Params + FrozenParams)·size(sp)
//	gradients   Params·size(sp)
//	optimizer   Params·StateValues·size(master)
//	master      Params·size(master) when master ≠ sp, else 0
//	activations ActivationBytes(sp) per sample
//	transient   Activations.Transient per sample
//
// with Layers the length of the model's gradient layout. Capacity, Model
// and Device are d's.
func ModelMemory(m *model.Model, d *hw.Device, o model.Optimizer, sp, master model.Precision) Memory {
	mem := Memory{
		Capacity:    d.Memory,
		Model:       m.Name,
		Device:      d.Name,
		Weights:     m.WeightBytes(sp),
		Gradients:   m.GradientBytes(sp),
		Optimizer:   units.Bytes(float64(float64(m.Params)*float64(o.StateValues())) * master.Size()),
		Activations: m.ActivationBytes(sp),
		Transient:   m.Activations.Transient,
		Layers:      max(len(m.Layers), 1),
	}
	if master != sp {
		mem.Master = m.GradientBytes(master)
	}
	return mem
}

// GradientLayers returns the gradient bytes of each layer of m in
// backward order, bytesPerParam bytes per value (one layer of all
// parameters when m gives no layout).
func GradientLayers(m *model.Model, bytesPerParam float64) []units.Bytes {
	if len(m.Layers) == 0 {
		return []units.Bytes{units.Bytes(float64(m.Params) * bytesPerParam)}
	}
	out := make([]units.Bytes, len(m.Layers))
	for i, l := range m.Layers {
		out[i] = units.Bytes(float64(l.Params) * bytesPerParam)
	}
	return out
}
