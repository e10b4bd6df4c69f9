package sim

import (
	"fmt"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/event"
	"scaleplan/sim/internal/netsim"
)

// AllReduceTime returns the time one all-reduce of size bytes takes over
// every rank of c, alone on c's network, with c.Comm.Algorithm (and
// c.Comm.InterNode between nodes): from the call until the last rank has
// the sum, as a collective benchmark such as nccl-tests' all_reduce_perf
// times it. Only the placement (Nodes, DevicesPerNode or Placement), Network and Comm
// of c are used; its compute, memory and steps are not, and need not be
// set. The parameter servers are not an all-reduce: their algorithms are
// refused.
func AllReduceTime(c Config, size units.Bytes) (units.Seconds, error) {
	if c.Comm.Algorithm == ParameterServer || c.Comm.Algorithm == AsyncParameterServer {
		return 0, fmt.Errorf("%w: %v is not an all-reduce", ErrConfig, c.Comm.Algorithm)
	}
	if !positive(float64(size)) {
		return 0, fmt.Errorf("%w: all-reduce of %v bytes", ErrConfig, float64(size))
	}
	// Compute, memory and steps are not simulated: neutral values pass
	// validate.
	c.MicroBatch, c.Accumulation, c.Stages, c.Steps, c.TraceSteps = 1, 1, 1, 1, 0
	c.Compute = Compute{PerSample: 1}
	c.Memory = Memory{}
	c.Comm.Layers = nil
	c.Input = Input{}
	if err := c.validate(); err != nil {
		return 0, err
	}
	var s event.Scheduler
	topo, err := netsim.NewTopology(&s, c.topology())
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	ranks := make([]int, c.Ranks())
	for i := range ranks {
		ranks[i] = i
	}
	var t units.Seconds
	done := false
	if err := topo.AllReduce(c.Comm.Algorithm.netsim(), size, ranks, func(r *netsim.Result) { t, done = r.Time(), true }); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	s.Run()
	if !done {
		return 0, fmt.Errorf("%w: the all-reduce of %v over %d ranks did not finish", ErrConfig, size, len(ranks))
	}
	return t, nil
}
