package sim

import "scaleplan/internal/units"

// Breakdown splits a step's time by what a device is doing or waiting
// for, averaged over the devices; the parts sum to the step time. See the
// package documentation for how each is measured.
type Breakdown struct {
	Compute   units.Seconds // forward, backward and update, including the device's own jitter
	Comm      units.Seconds // exposed communication: all-reduce after the slowest replica's backward, and transfers between stages in flight
	Input     units.Seconds // waiting for the input pipeline
	Bubble    units.Seconds // pipeline fill and drain: waiting for another stage's compute
	Straggler units.Seconds // waiting for the slowest replica of the stage to finish its backward
}

// Total returns the sum of the parts.
func (b Breakdown) Total() units.Seconds {
	return b.Compute + b.Comm + b.Input + b.Bubble + b.Straggler
}

// Step is one simulated step.
type Step struct {
	Start, End units.Seconds // when the step began and when its last device finished its update
	Breakdown  Breakdown     // mean over devices
}

// Time returns End − Start.
func (s Step) Time() units.Seconds { return s.End - s.Start }

// Result is the outcome of simulating one configuration.
type Result struct {
	Devices      int // Nodes·DevicesPerNode, or the sum of Placement
	Nodes        int
	Placement    []int // devices on each node when they differ (Config.Placement); nil when every node holds as many
	Stages       int
	Replicas     int
	MicroBatch   int // samples per micro-batch per replica
	Accumulation int // micro-batches per step
	GlobalBatch  int // samples per step

	// StepTime is the steady-state step time: the mean of the steps after
	// the first (the first fills the prefetch queue), or the only step.
	// For the asynchronous parameter server it is Devices over the updates
	// per second: the mean time between one device's updates.
	StepTime units.Seconds
	// Breakdown is the steady-state breakdown, averaged like StepTime; its
	// parts sum to StepTime.
	Breakdown Breakdown
	// SamplesPerSec is GlobalBatch/StepTime.
	SamplesPerSec float64
	// Utilisation is the mean over devices of busy compute time over step
	// time, in [0, 1].
	Utilisation float64
	// Memory is the footprint of the device that needs the most memory.
	Memory Footprint
	// Steps lists every simulated step; nil for the asynchronous
	// parameter server, which has no synchronous steps.
	Steps []Step
	// Staging is the one-time copy of the data set onto the nodes' drives;
	// 0 without staging.
	Staging units.Seconds
	// CacheWarmup is the one-time extra time of the first epoch when
	// Input.CacheHit > 0: its reads all come from the drives, so a step
	// takes at least a node's cold read of its samples,
	//
	//	CacheWarmup = ⌈Samples/GlobalBatch⌉ · max(0, cold read − StepTime)
	//
	// (the reads overlap compute through the prefetch queue as in the
	// steady state). 0 without a page cache or an epoch size.
	CacheWarmup units.Seconds
	// MeanStaleness is the asynchronous parameter server's mean staleness,
	// in updates; 0 otherwise.
	MeanStaleness float64
	// Events is the number of events simulated.
	Events int64
	// Trace holds the traced steps when Config.TraceSteps > 0; nil
	// otherwise.
	Trace *Trace `json:"-"`
}
