package sim

import (
	"fmt"
	"math"
	"strconv"

	"scaleplan/internal/units"
)

// WorkspaceFraction is the kernel scratch space (convolution algorithm
// workspaces, temporaries) a device reserves, as a fraction of one
// micro-batch's stored activations of its stage. An assumption; see
// Footprint.
const WorkspaceFraction = 0.05

// Footprint is the memory of one device by component.
type Footprint struct {
	Weights     units.Bytes // weights in the compute precision
	Gradients   units.Bytes // gradients
	Optimizer   units.Bytes // optimizer state
	Master      units.Bytes // master copy of the weights under mixed precision
	Activations units.Bytes // stored activations at the peak of the schedule
	Transient   units.Bytes // the loss gradient's buffers at the backward pass's peak
	Workspace   units.Bytes // communication buffers and kernel scratch
}

// Total returns the sum of the components.
func (f Footprint) Total() units.Bytes {
	return f.Weights + f.Gradients + f.Optimizer + f.Master + f.Activations + f.Transient + f.Workspace
}

// InFlight returns the micro-batches whose activations stage s (from 0)
// of S holds at the peak of one step of M micro-batches:
//
//	GPipe  M
//	1F1B   min(S − s, M)
func InFlight(sched Schedule, S, s, M int) int {
	if sched == GPipe {
		return M
	}
	return min(S-s, M)
}

// Footprint returns the memory of a device holding stage s (from 0) of c,
// with c's defaults filled in. With S stages, micro-batch b, n =
// InFlight(Schedule, S, s, M) micro-batches in flight and A the whole
// model's activations per sample, the stage holds 1/S of the weights,
// gradients, optimizer state and master copy and stores
//
//	activations = (A/S)·b·n                          without recomputation
//	activations = (A/S)·b·min(n, (n + 1)/sqrt(L_s))  with recomputation
//
// where L_s = max(1, Layers/S) is the stage's layer count: recomputation
// keeps a checkpoint every sqrt(L_s) layers for each micro-batch in flight
// and the activations of one segment being recomputed (Chen et al. 2016,
// "Training deep nets with sublinear memory cost"). The workspace is
//
//	workspace = 2·min(Bucket, G/S)·[replicas > 1] + WorkspaceFraction·(A/S)·b
//
// two gradient buckets of communication buffers (the bucket being reduced
// and the one being filled) and kernel scratch. The last stage, which
// computes the loss, also holds Memory.Transient·b when the backward pass
// starts: the loss's gradient buffers beside every stored activation.
func (c *Config) Footprint(s int) Footprint {
	if c.Stages < 1 || c.Accumulation < 1 { // the defaults Run fills in
		d := *c
		d.Stages, d.Accumulation = max(d.Stages, 1), max(d.Accumulation, 1)
		return d.Footprint(s)
	}
	S := float64(c.Stages)
	m := c.Memory
	b := float64(c.MicroBatch)
	f := Footprint{
		Weights:   m.Weights / units.Bytes(S),
		Gradients: m.Gradients / units.Bytes(S),
		Optimizer: m.Optimizer / units.Bytes(S),
		Master:    m.Master / units.Bytes(S),
	}
	perSample := float64(m.Activations) / S
	f.Activations = units.Bytes(float64(perSample*b) * c.activationFactor(s))
	if c.Replicas() > 1 {
		f.Workspace = 2 * min(c.Comm.Bucket, f.Gradients)
	}
	f.Workspace += units.Bytes(float64(WorkspaceFraction*perSample) * b)
	if s == c.Stages-1 {
		f.Transient = units.Bytes(float64(m.Transient) * b)
	}
	return f
}

// activationFactor is the number of micro-batches' worth of activations
// stage s stores.
func (c *Config) activationFactor(s int) float64 {
	n := float64(InFlight(c.Schedule, c.Stages, s, c.Accumulation))
	if !c.Recompute {
		return n
	}
	L := max(1, float64(c.Memory.Layers)/float64(c.Stages))
	return min(n, (n+1)/math.Sqrt(L))
}

// PeakFootprint returns the footprint of the stage that needs the most
// memory, and that stage.
func (c *Config) PeakFootprint() (Footprint, int) {
	best, stage := c.Footprint(0), 0
	for s := 1; s < c.Stages; s++ {
		if f := c.Footprint(s); f.Total() > best.Total() {
			best, stage = f, s
		}
	}
	return best, stage
}

// checkMemory returns an error wrapping ErrMemory if the busiest stage
// does not fit in Memory.Capacity, naming the largest micro-batch that
// does.
func (c *Config) checkMemory() error {
	capacity := c.Memory.Capacity
	if capacity == 0 {
		return nil
	}
	f, s := c.PeakFootprint()
	if f.Total() <= capacity {
		return nil
	}
	what := c.Memory.Model
	if what == "" {
		what = "the model"
	}
	dev := c.Memory.Device
	if dev == "" {
		dev = "the device"
	}
	stage := ""
	if c.Stages > 1 {
		stage = fmt.Sprintf(" (pipeline stage %d of %d)", s+1, c.Stages)
	}
	// The footprint depends on the device count (communication buffers
	// exist only with replicas), so a sweep's message names it.
	devices := "1 device"
	if n := c.Ranks(); n != 1 {
		devices = fmt.Sprintf("%d devices", n)
	}
	msg := fmt.Sprintf("%s at batch %d on %s needs %s per device%s; %s has %s", what, c.MicroBatch, devices, gib(f.Total()), stage, dev, gib(capacity))
	bmax, one := c.largestMicroBatch()
	if bmax <= 0 {
		return fmt.Errorf("%w: %s; even batch 1 needs %s", ErrMemory, msg, gib(one))
	}
	return fmt.Errorf("%w: %s; the largest batch that fits is %d", ErrMemory, msg, bmax)
}

// LargestMicroBatch returns the largest micro-batch whose busiest stage
// fits in Memory.Capacity with c's other settings, found from the
// footprint being affine in the micro-batch (fixed + b·per); 0 when even
// a micro-batch of 1 does not fit, and −1 when nothing bounds it: no
// capacity, or activations of no size.
func (c *Config) LargestMicroBatch() int {
	b, _ := c.largestMicroBatch()
	return b
}

// largestMicroBatch is LargestMicroBatch and the footprint of a
// micro-batch of 1 (0 without a capacity), which checkMemory's message
// names when even that does not fit.
func (c *Config) largestMicroBatch() (int, units.Bytes) {
	capacity := c.Memory.Capacity
	if capacity == 0 {
		return -1, 0
	}
	one := *c
	one.MicroBatch = 1
	f1, _ := one.PeakFootprint()
	if float64(f1.Total()) > float64(capacity) {
		return 0, f1.Total()
	}
	one.MicroBatch = 2
	f2, _ := one.PeakFootprint()
	per := float64(f2.Total() - f1.Total())
	if !(per > 0) {
		return -1, f1.Total()
	}
	fixed := float64(f1.Total()) - per
	bmax := int(math.Floor((float64(capacity) - fixed) / per))
	for bmax > 1 {
		one.MicroBatch = bmax
		if g, _ := one.PeakFootprint(); g.Total() <= capacity {
			break
		}
		bmax--
	}
	return bmax, f1.Total()
}

// gib formats a size in GiB with one decimal, or in MiB below 1 GiB.
func gib(b units.Bytes) string {
	if b >= units.GiB {
		return strconv.FormatFloat(float64(b/units.GiB), 'f', 1, 64) + " GiB"
	}
	return strconv.FormatFloat(float64(b/units.MiB), 'f', 0, 64) + " MiB"
}
