package sim

import (
	"fmt"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/netsim"
)

// runAsync simulates an asynchronous parameter server: every device loops
// pull, compute, push without a barrier (netsim.Topology.AsyncPS). A
// device's compute per iteration is its micro-batches' forwards and
// backwards, times a jitter factor drawn once per device (a persistent
// speed difference); the servers apply the updates. The input pipeline is
// not simulated in this mode.
func (r *run) runAsync() (*Result, error) {
	c := r.c
	R := len(r.ranks)
	M := float64(c.Accumulation)
	compute := make([]units.Seconds, R)
	mean := 0.0
	for i := range compute {
		x := float64(float64(r.fwd+r.bwd)*M) * r.jitter()
		compute[i] = units.Seconds(x)
		mean += x
	}
	mean /= float64(R)
	var grad units.Bytes
	for _, b := range r.groups[0].buckets {
		grad += b
	}
	var ar *netsim.AsyncResult
	err := r.topo.AsyncPS(netsim.AsyncConfig{Compute: compute, Bytes: grad, Updates: c.Steps * R}, func(a *netsim.AsyncResult) { ar = a })
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	for r.s.Step() {
		if r.onEvent != nil {
			r.onEvent(r.s.Now())
		}
	}
	if ar == nil || ar.Throughput <= 0 {
		return nil, fmt.Errorf("%w: the asynchronous parameter server made no progress", ErrConfig)
	}
	res := r.result()
	res.StepTime = units.Seconds(float64(R) / ar.Throughput)
	comm := max(0, float64(res.StepTime)-mean)
	res.Breakdown = Breakdown{Compute: res.StepTime - units.Seconds(comm), Comm: units.Seconds(comm)}
	res.SamplesPerSec = float64(res.GlobalBatch) / float64(res.StepTime)
	res.Utilisation = min(1, max(0, float64(res.Breakdown.Compute/res.StepTime)))
	res.MeanStaleness = ar.MeanStaleness
	res.Events = r.s.Events()
	return res, nil
}
