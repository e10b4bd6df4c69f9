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
//
// A device that applied u_i of the U updates, each after c_i of compute,
// was busy u_i·c_i of the run's span T, so
//
//	Utilisation = Σ u_i·c_i / (R·T),  StepTime = R·T/U
//	Breakdown.Compute = Utilisation·StepTime = Σ u_i·c_i / U
//
// and the rest of StepTime is communication: waiting for pushes and pulls.
func (r *run) runAsync() (*Result, error) {
	c := r.c
	R := len(r.ranks)
	M := float64(c.Accumulation)
	compute := make([]units.Seconds, R)
	for i := range compute {
		x := float64(float64(r.fwd+r.bwd)*M) * r.jitter()
		compute[i] = units.Seconds(x)
	}
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
	busy := 0.0 // Σ u_i·c_i
	for i, u := range ar.PerWorker {
		busy += float64(u) * float64(compute[i])
	}
	cp := busy / float64(ar.Updates)
	res.Breakdown = Breakdown{Compute: units.Seconds(cp), Comm: res.StepTime - units.Seconds(cp)}
	res.SamplesPerSec = float64(res.GlobalBatch) / float64(res.StepTime)
	// The clamp only absorbs rounding: the compute intervals of a device
	// are disjoint and inside the span.
	res.Utilisation = min(1, max(0, busy/(float64(R)*float64(ar.End-ar.Start))))
	res.MeanStaleness = ar.MeanStaleness
	res.Events = r.s.Events()
	return res, nil
}
