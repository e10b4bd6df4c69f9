package logs

import (
	"fmt"
	"math"

	"scaleplan/internal/benchlog"
)

// Bounds of what a record may say: a log that gives a figure outside them
// (1e308 samples/s, a step of a picosecond) holds a typing or unit error,
// not a measurement, and its line is refused as malformed, with the value.
const (
	// MaxDeviceThroughput is the most samples per second per device a
	// measurement may give, 1e9: a million times what a GPU trains on
	// ImageNet, far above any token rate.
	MaxDeviceThroughput = 1e9
	// MinStepTime is the shortest step a measurement may give, 1 ns.
	MinStepTime = 1e-9
	// MaxStepTime is the longest, 1e6 s (11.6 days).
	MaxStepTime = 1e6
	// MaxBatch is the largest batch, per device or global, in samples:
	// 2^30.
	MaxBatch = 1 << 30
	// MaxDevices is the most devices a record may count: 10^7.
	MaxDevices = 10_000_000
)

// checkBounds returns an error naming the first figure of r outside the
// bounds above (after benchlog.Record.Validate, which refuses negative
// and non-finite numbers): throughput, not over MaxDeviceThroughput per
// device, above 0 and finite for measurements and steps; step time in
// [MinStepTime, MaxStepTime]; batches up to MaxBatch; devices up to
// MaxDevices.
func checkBounds(r *benchlog.Record) error {
	if r.Workers > MaxDevices {
		return fmt.Errorf("devices %d: want at most %d", r.Workers, MaxDevices)
	}
	for _, b := range []struct {
		name string
		v    int
	}{{"batch", r.Batch}, {"global_batch", r.GlobalBatch}, {"effective global batch", r.EffectiveGlobalBatch()}} {
		if b.v > MaxBatch || b.v < 0 {
			return fmt.Errorf("%s %d: want at most %d samples", b.name, b.v, MaxBatch)
		}
	}
	if r.Kind != benchlog.KindMeasurement && r.Kind != benchlog.KindStep {
		return nil
	}
	if t := r.StepTime; t != 0 && !(t >= MinStepTime && t <= MaxStepTime) {
		return fmt.Errorf("step time %g s: want a time from %g s to %g s", t, MinStepTime, MaxStepTime)
	}
	v := r.Throughput()
	if !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("throughput %g samples/s: want a finite speed > 0", v)
	}
	if per := v / float64(max(r.Workers, 1)); per > MaxDeviceThroughput {
		return fmt.Errorf("throughput %g samples/s (%g per device): want at most %g samples/s per device", v, per, MaxDeviceThroughput)
	}
	return nil
}
