package sim

import (
	"scaleplan/internal/units"
	"scaleplan/sim/internal/event"
	"scaleplan/sim/internal/netsim"
)

// TransferTime runs one transfer of size bytes between each pair of
// ranks of c's network, all started together and alone on it, and
// returns when the last one ends: the test hook for checking routes.
func TransferTime(c Config, size units.Bytes, pairs ...[2]int) (units.Seconds, error) {
	c.MicroBatch, c.Accumulation, c.Stages, c.Steps, c.TraceSteps = 1, 1, 1, 1, 0
	c.Compute = Compute{PerSample: 1}
	c.Memory, c.Input = Memory{}, Input{}
	c.Comm.Layers = nil
	if err := c.validate(); err != nil {
		return 0, err
	}
	var s event.Scheduler
	topo, err := netsim.NewTopology(&s, c.topology())
	if err != nil {
		return 0, err
	}
	var end units.Seconds
	for _, p := range pairs {
		topo.Network().Transfer(topo.Route(p[0], p[1]), size, func(*netsim.Flow) { end = s.Now() })
	}
	s.Run()
	return end, nil
}
