package report

import (
	"fmt"
	"slices"
	"strconv"

	"scaleplan/internal/units"
	"scaleplan/plots"
	"scaleplan/predict"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// Progress counts the work of Simulate and Render: Item names what comes
// next, Add counts what is done. *progress.Bar satisfies it; a nil
// Progress counts nothing.
type Progress = plots.Progress

// item and add call p's methods unless p is nil.
func item(p Progress, s string) {
	if p != nil {
		p.Item(s)
	}
}

func add(p Progress, n int) {
	if p != nil {
		p.Add(n)
	}
}

// Run is one scenario's sweep, simulated: what the scenario charts and
// the report draw.
type Run struct {
	// R is the resolved scenario.
	R *scenarios.Resolved
	// Results holds one simulation per configuration, in the sweep's
	// order. The timeline chart draws the last one with a Trace.
	Results []*sim.Result
	// TimeToTrain holds the time to train of each result, seconds; nil
	// means predict.TimeToTarget of each (steps × step time + one-time costs).
	TimeToTrain []units.Seconds
}

// Time returns the time to train of result i.
func (s *Run) Time(i int) units.Seconds {
	if s.TimeToTrain != nil {
		return s.TimeToTrain[i]
	}
	return predict.TimeToTarget(s.R, s.Results[i])
}

// Simulate builds and simulates every configuration of r's sweep, steps
// optimizer steps each (0 means sim.DefaultSteps). With trace set it
// records the last configuration's last step (Result.Trace) for the
// timeline. p, which may be nil, counts one per configuration.
func Simulate(r *scenarios.Resolved, steps int, trace bool, p Progress) (*Run, error) {
	pts := r.Points()
	run := &Run{R: r, Results: make([]*sim.Result, len(pts))}
	for i, pt := range pts {
		item(p, fmt.Sprintf("%s, %d devices", r.Name, pt.Devices))
		cfg, err := r.Build(pt)
		if err != nil {
			return nil, fmt.Errorf("%s at %d devices, batch %d: %w", r.Name, pt.Devices, pt.BatchPerDevice, err)
		}
		if steps > 0 {
			cfg.Steps = steps
		}
		if trace && i == len(pts)-1 {
			cfg.TraceSteps = 1
		}
		if run.Results[i], err = sim.Run(cfg); err != nil {
			return nil, err // named by sim.Run after cfg.Name: "r at N devices, batch B: …"
		}
		add(p, 1)
	}
	return run, nil
}

// TraceLast simulates the run's last configuration again, steps optimizer
// steps (0 means sim.DefaultSteps), recording its last step, and puts that
// result in its place, so that the timeline chart has a step to draw. The
// simulation is deterministic: the new result equals the old one but for
// its Trace. For runs (predict's) whose results were simulated without a
// trace.
func (s *Run) TraceLast(steps int) error {
	if len(s.Results) == 0 {
		return nil
	}
	last := s.Results[len(s.Results)-1]
	for _, p := range s.R.Points() {
		if p.Devices != last.Devices || p.BatchPerDevice != last.MicroBatch {
			continue
		}
		cfg, err := s.R.Build(p)
		if err != nil {
			return err
		}
		if steps > 0 {
			cfg.Steps = steps
		}
		cfg.TraceSteps = 1
		res, err := sim.Run(cfg)
		if err != nil {
			return err
		}
		s.Results[len(s.Results)-1] = res
		return nil
	}
	return fmt.Errorf("%s: no configuration of %s, batch %d in the sweep", s.R.Name, DevicesName(last.Devices), last.MicroBatch)
}

// batchesPerDevice returns the distinct per-device batches of the run's
// results, in order of first appearance.
func (s *Run) batchesPerDevice() []int {
	var bs []int
	for _, res := range s.Results {
		if !slices.Contains(bs, res.MicroBatch) {
			bs = append(bs, res.MicroBatch)
		}
	}
	return bs
}

// deviceCounts returns the number of distinct device counts of the run's
// results.
func (s *Run) deviceCounts() int {
	seen := map[int]bool{}
	for _, res := range s.Results {
		seen[res.Devices] = true
	}
	return len(seen)
}

// DevicesName is "1 device" or "N devices".
func DevicesName(n int) string {
	if n == 1 {
		return "1 device"
	}
	return strconv.Itoa(n) + " devices"
}
