package compute

import (
	"scaleplan/internal/units"
	"scaleplan/model"
)

// CastKind is the key under which KindTimes counts autocast's casts: the
// weights' casts of both passes (weightCasts) and the casts before the
// operators autocast runs in float32 (model.Op.Float32), which are not an
// operator of the model's.
const CastKind model.OpKind = "cast"

// KindTimes returns the device time of a step's forward and backward
// operators under c, summed per operator kind (model.OpKind), with the
// kernel time a calibration adds per kernel: where a step's device time
// goes, to compare two devices or precisions kind by kind. Autocast's
// casts count under CastKind, an operator autocast runs in float32 under
// its own kind without its cast. The optimizer's operators are left out,
// as Step leaves them out of the passes. Over a step without operators
// the host computes (model.Op.HostCPU) the times add up to Step's
// DeviceForward + DeviceBackward.
func KindTimes(c *Config, ops []model.Op) (map[model.OpKind]units.Seconds, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	kt := c.kernelTime()
	bw := float64(c.Device.MemoryBandwidth) * c.eff(MemoryBound)
	out := map[model.OpKind]units.Seconds{}
	for i := range ops {
		o := &ops[i]
		if o.Pass == model.UpdatePass {
			continue
		}
		t := opTime(c, o) + units.Seconds(c.Kernels(o))*kt
		if cb := c.castBytes(o); cb > 0 {
			// opTime includes the cast of the operator's input: move it
			// to CastKind, with its kernel.
			cast := units.Seconds(float64(cb)/bw) + kt
			t -= cast
			out[CastKind] += cast
		}
		out[o.Kind] += t
	}
	if c.autocasts() {
		k, b := weightCasts(ops)
		out[CastKind] += 2 * (units.Seconds(float64(b)/bw) + units.Seconds(k)*kt)
	}
	return out, nil
}
