package llm

import (
	"fmt"

	"scaleplan/internal/units"
	"scaleplan/model"
)

// StepTime is the time of one training step of a layout, with its parts.
// The parts add up to Time.
type StepTime struct {
	// Time is the step's time.
	Time units.Seconds
	// Compute is the slowest stage's compute of its M micro-batches,
	// forward, backward and recomputation.
	Compute units.Seconds
	// TP is the tensor-parallel all-reduces (or, under sequence
	// parallelism, reduce-scatters and all-gathers) of those M
	// micro-batches, exposed.
	TP units.Seconds
	// CP is ring attention's key and value exchange not hidden by the
	// attention it overlaps; EP the expert-parallel all-to-alls.
	CP, EP units.Seconds
	// Bubble is the pipeline's fill and drain, (PP − 1)/v stage times;
	// P2P the send/recv of hidden states between stages.
	Bubble, P2P units.Seconds
	// DP is the data-parallel communication left exposed: the gradient
	// reduction and parameter all-gather past what overlaps them, and
	// under ZeRO-3 and FSDP the per-layer gathers past their prefetch.
	DP units.Seconds
	// Optimizer is Adam's update of the GPU's share of the parameters.
	Optimizer units.Seconds
	// Tokens is the tokens one step trains: GlobalBatch·SeqLen.
	Tokens float64
	// ModelFLOPs is the step's model FLOPs without recomputation
	// (TransformerShape.TrainFLOPs; Narayanan et al. 2021 eq. (3) for a
	// GPT shape without the recomputation's extra forward).
	ModelFLOPs float64
}

// TokensPerSecond returns Tokens/Time.
func (s StepTime) TokensPerSecond() float64 { return s.Tokens / float64(s.Time) }

// MFU returns the model FLOPs utilisation on gpus GPUs of peak FLOP/s
// each: ModelFLOPs / (Time·peak·gpus).
func (s StepTime) MFU(peak units.FLOPsPerSec, gpus int) float64 {
	return s.ModelFLOPs / (float64(s.Time) * float64(peak) * float64(gpus))
}

// Parts returns the parts of the step by name, in a fixed order.
func (s StepTime) Parts() []Part {
	return []Part{{"compute", s.Compute}, {"tensor-parallel comm", s.TP}, {"pipeline bubble", s.Bubble},
		{"pipeline send/recv", s.P2P}, {"data-parallel comm", s.DP}, {"context-parallel comm", s.CP},
		{"expert-parallel all-to-all", s.EP}, {"optimizer", s.Optimizer}}
}

// Part is one named part of a step.
type Part struct {
	Name string
	Time units.Seconds
}

// Bottleneck returns the largest part but compute, or "compute" when
// compute is more than half the step.
func (s StepTime) Bottleneck() string {
	if s.Compute > s.Time/2 {
		return "compute"
	}
	best := Part{}
	for _, p := range s.Parts()[1:] {
		if p.Time > best.Time {
			best = p
		}
	}
	if best.Time <= s.Compute {
		return "compute"
	}
	return best.Name
}

// StepTime returns the time of one training step of t with l on h: an
// analytic model of Megatron-LM's schedule (docs/llm.md has it with its
// sources). The layout must fit t (Validate) and its tensor groups a
// node.
func (l Layout) StepTime(t model.TransformerShape, h Hardware) (StepTime, error) {
	if err := h.validate(); err != nil {
		return StepTime{}, err
	}
	if err := l.Validate(t); err != nil {
		return StepTime{}, err
	}
	return newStepper(t, h).step(l)
}

// stepper times layouts of one shape on one system, caching the compute
// of each layer shape and the collectives.
type stepper struct {
	t       model.TransformerShape
	h       Hardware
	compute map[computeKey]computeCost
	comm    map[commKey]units.Seconds
}

type commKey struct {
	c    Collective
	g    Group
	size units.Bytes
}

func newStepper(t model.TransformerShape, h Hardware) *stepper {
	return &stepper{t: t, h: h, compute: map[computeKey]computeCost{}, comm: map[commKey]units.Seconds{}}
}

// cost returns the cached compute of a layer shape.
func (st *stepper) cost(k computeKey) (computeCost, error) {
	if c, ok := st.compute[k]; ok {
		return c, nil
	}
	c, err := newComputeCost(st.t, k, st.h.Compute)
	if err != nil {
		return c, err
	}
	st.compute[k] = c
	return c, nil
}

// coll returns the cached time of a collective; 0 on a group of one rank.
func (st *stepper) coll(c Collective, g Group, size units.Bytes) (units.Seconds, error) {
	if g.Size() <= 1 || size <= 0 {
		return 0, nil
	}
	k := commKey{c, g, size}
	if d, ok := st.comm[k]; ok {
		return d, nil
	}
	d, err := st.h.Comm(c, g, size)
	if err != nil {
		return 0, fmt.Errorf("%v of %v on %d×%d ranks: %w", c, size, g.Nodes, g.PerNode, err)
	}
	st.comm[k] = d
	return d, nil
}

// place returns the group of size ranks at stride stride in Megatron-LM's
// rank order (tensor innermost, then context, data, pipeline): on one node
// while stride·size fits it, else PerNode = GPUsPerNode/stride ranks (1
// when stride ≥ GPUsPerNode) on each of size/PerNode nodes.
func (st *stepper) place(stride, size int) Group {
	g := st.h.GPUsPerNode
	per := max(1, min(size, g/stride))
	return Group{Nodes: (size + per - 1) / per, PerNode: per}
}
