package llm

import (
	"fmt"

	"scaleplan/internal/units"
	"scaleplan/model"
)

// Allowance is the memory a GPU loses to what the model does not count:
// the CUDA context, library workspaces and communication buffers (Fixed)
// and the caching allocator's fragmentation (Fraction of the rest).
type Allowance struct {
	Fixed    units.Bytes
	Fraction float64
}

// DefaultAllowance is 1 GiB fixed and 5 % of the counted memory. Both are
// assumptions, not measurements: PyTorch's CUDA context and the cuBLAS and
// NCCL workspaces take some hundreds of MiB per GPU, and the caching
// allocator's fragmentation depends on the run.
var DefaultAllowance = Allowance{Fixed: units.GiB, Fraction: 0.05}

// StageMemory is the memory of one GPU of a pipeline stage, by component.
type StageMemory struct {
	// Stage is the pipeline stage, from 0.
	Stage int
	// Params is the parameters the GPU holds before data-parallel
	// sharding; Group the ranks its dense states are sharded over.
	Params int64
	Group  int
	// Weights, Gradients and Optimizer are the model states (ModelStates).
	Weights, Gradients, Optimizer units.Bytes
	// Gathered is, under ZeRO-3 and FSDP, the unsharded 16-bit weights of
	// two layers (the one running and the one prefetched: FSDP's
	// limit_all_gathers keeps at most two in flight) and the unsharded
	// gradients of one before their reduce-scatter.
	Gathered units.Bytes
	// Activations is what the stage keeps for the backward pass at the
	// peak of the schedule (Korthikanti et al. 2022, Sections 4.2.3 and
	// 4.3); Recomputed the extra activations of the one layer being
	// recomputed for one micro-batch under selective or full
	// recomputation.
	Activations, Recomputed units.Bytes
	// Allowance is the workspace and fragmentation allowance.
	Allowance units.Bytes
}

// Counted returns the sum of the components but the allowance.
func (m StageMemory) Counted() units.Bytes {
	return m.Weights + m.Gradients + m.Optimizer + m.Gathered + m.Activations + m.Recomputed
}

// Total returns Counted plus the allowance.
func (m StageMemory) Total() units.Bytes { return m.Counted() + m.Allowance }

// Memory is a layout's memory per GPU: its first and last pipeline stages
// (the first keeps the most micro-batches in flight and the embedding;
// the last the output projection and the logits) and the larger of them.
type Memory struct {
	First, Last StageMemory
	Peak        StageMemory
}

// Headroom returns capacity less the peak stage's total: negative when
// the layout does not fit.
func (m Memory) Headroom(capacity units.Bytes) units.Bytes { return capacity - m.Peak.Total() }

// Memory returns the memory per GPU of training t with l, with the
// default allowance.
func (l Layout) Memory(t model.TransformerShape) (Memory, error) {
	return l.MemoryWith(t, DefaultAllowance)
}

// MemoryWith returns the memory per GPU of training t with l and the
// allowance a.
func (l Layout) MemoryWith(t model.TransformerShape, a Allowance) (Memory, error) {
	if err := l.Validate(t); err != nil {
		return Memory{}, err
	}
	if a.Fixed < 0 || a.Fraction < 0 || a.Fraction >= 1 {
		return Memory{}, fmt.Errorf("allowance: fixed %v, fraction %g: want fixed ≥ 0 and 0 ≤ fraction < 1", a.Fixed, a.Fraction)
	}
	return l.memory(t, a), nil
}

// memory is MemoryWith for a valid l and allowance a.
func (l Layout) memory(t model.TransformerShape, a Allowance) Memory {
	m := Memory{First: l.stage(t, 0, a), Last: l.stage(t, l.PP-1, a)}
	m.Peak = m.First
	if m.Last.Total() > m.First.Total() {
		m.Peak = m.Last
	}
	return m
}

// stage returns the memory of one GPU of stage s.
func (l Layout) stage(t model.TransformerShape, s int, a Allowance) StageMemory {
	p := l.params(t, s)
	sh, g := l.sharding(), l.shardGroup()
	dense := ModelStates(float64(p.dense), g, sh, l.gradBytes())
	expert := ModelStates(float64(p.expert), g/l.EP, sh, l.gradBytes())
	m := StageMemory{Stage: s, Params: p.dense + p.expert, Group: g,
		Weights:   units.Bytes(dense.Weights + expert.Weights),
		Gradients: units.Bytes(dense.Gradients + expert.Gradients),
		Optimizer: units.Bytes(dense.Optimizer + expert.Optimizer),
	}
	if sharded(sh) && g > 1 {
		m.Gathered = units.Bytes((2*weightBytes + l.gradBytes()) * float64(p.layer))
	}
	rc := l.recompute()
	m.Activations = units.Bytes(l.inFlight(t, s)*l.layerActivations(t, rc) + l.edgeActivations(t, s))
	if rc != model.RecomputeNone {
		m.Recomputed = units.Bytes(l.layerActivations(t, model.RecomputeNone) - l.layerActivations(t, rc))
	}
	m.Allowance = a.Fixed + units.Bytes(a.Fraction)*m.Counted()
	return m
}

// MaxMicroBatch returns the largest micro-batch b, among the divisors of
// GlobalBatch/DP, with which l (its MicroBatch replaced by b) fits a GPU of
// capacity bytes with the default allowance, and that layout's memory.
// It fails when not even b = 1 fits.
func (l Layout) MaxMicroBatch(t model.TransformerShape, capacity units.Bytes) (int, Memory, error) {
	if l.DP < 1 || l.GlobalBatch < l.DP || l.GlobalBatch%l.DP != 0 {
		return 0, Memory{}, fmt.Errorf("layout: global batch %d: want a positive multiple of dp %d", l.GlobalBatch, l.DP)
	}
	// A micro-batch of 1 is valid whenever any is: the interleaved
	// schedule's condition, pp dividing GlobalBatch/(b·DP), holds for
	// some b only if it holds for b = 1.
	l.MicroBatch = 1
	m, err := l.Memory(t)
	if err != nil {
		return 0, Memory{}, err
	}
	if m.Headroom(capacity) < 0 {
		return 0, m, fmt.Errorf("layout of %s: no micro-batch fits %v: micro-batch 1 needs %v per GPU", t.Name, capacity, m.Peak.Total())
	}
	best, bestMem := 1, m
	for _, b := range divisors(l.GlobalBatch / l.DP)[1:] {
		l.MicroBatch = b
		m, err := l.Memory(t)
		if err != nil {
			continue
		}
		if m.Headroom(capacity) < 0 {
			break // memory grows with b
		}
		best, bestMem = b, m
	}
	return best, bestMem, nil
}

// divisors returns n's divisors in increasing order.
func divisors(n int) []int {
	var lo, hi []int
	for d := 1; d*d <= n; d++ {
		if n%d == 0 {
			lo = append(lo, d)
			if d*d != n {
				hi = append(hi, n/d)
			}
		}
	}
	for i := len(hi) - 1; i >= 0; i-- {
		lo = append(lo, hi[i])
	}
	return lo
}
