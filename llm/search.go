package llm

import (
	"cmp"
	"fmt"
	"slices"

	"scaleplan/model"
)

// Search is a search of the layouts of one transformer on GPUs GPUs of
// one system, for the fastest step at a fixed global batch.
type Search struct {
	// Shape is the transformer; GPUs the GPUs to use, all of them;
	// GlobalBatch the sequences per step.
	Shape       model.TransformerShape
	GPUs        int
	GlobalBatch int
	// Hardware is the system.
	Hardware Hardware
	// MicroBatches is the micro-batches to try; default 1, 2, 4, 8.
	MicroBatches []int
	// Recomputes is the recomputations to try; default none, selective,
	// full.
	Recomputes []model.Recompute
	// Shardings is the shardings to try; default none, zero1 (Megatron-LM's
	// distributed optimizer), zero2 and zero3.
	Shardings []Sharding
	// MaxCP is the largest context-parallel degree, MaxVirtual the most
	// virtual stages; default 8 each. Degrees are powers of two; tensor
	// parallelism goes up to a node's GPUs, sequence parallel with it.
	MaxCP, MaxVirtual int
	// Top is the candidates to return; default (0 or less) 10.
	Top int
}

// Candidate is one layout that fits, with its step time and memory.
type Candidate struct {
	Layout Layout
	Step   StepTime
	Memory Memory
}

// SearchResult is a search's best candidates, fastest first, and its
// counts.
type SearchResult struct {
	Best []Candidate
	// Layouts is the valid layouts enumerated; Fit those that fit memory
	// (each timed); TooLarge the rest.
	Layouts, Fit, TooLarge int
}

// Run enumerates TP × PP × virtual stages × DP × CP × EP × micro-batch ×
// recomputation × sharding with TP·PP·DP·CP = GPUs, keeps the valid
// layouts that fit a GPU's memory (Layout.Memory) and returns the Top
// fastest by StepTime, the one needing less memory first among equals.
// It fails when none fits.
func (s Search) Run() (SearchResult, error) {
	s = s.defaults()
	if err := s.Hardware.validate(); err != nil {
		return SearchResult{}, err
	}
	if err := s.Shape.Validate(); err != nil {
		return SearchResult{}, err
	}
	if s.GPUs < 1 || s.GlobalBatch < 1 {
		return SearchResult{}, fmt.Errorf("llm search: gpus %d, global batch %d: want both at least 1", s.GPUs, s.GlobalBatch)
	}
	st := newStepper(s.Shape, s.Hardware)
	var res SearchResult
	var all []Candidate
	for _, l := range s.layouts() {
		if l.Validate(s.Shape) != nil {
			continue
		}
		res.Layouts++
		m, err := l.Memory(s.Shape)
		if err != nil {
			continue
		}
		if m.Headroom(s.Hardware.Memory) < 0 {
			res.TooLarge++
			continue
		}
		step, err := st.step(l)
		if err != nil {
			return SearchResult{}, err
		}
		res.Fit++
		all = append(all, Candidate{Layout: l, Step: step, Memory: m})
	}
	if len(all) == 0 {
		return res, fmt.Errorf("llm search: no layout of %s on %d GPUs with global batch %d fits %v per GPU (%d valid layouts tried)",
			s.Shape.Name, s.GPUs, s.GlobalBatch, s.Hardware.Memory, res.Layouts)
	}
	slices.SortStableFunc(all, func(a, b Candidate) int {
		return cmp.Or(cmp.Compare(a.Step.Time, b.Step.Time), cmp.Compare(a.Memory.Peak.Total(), b.Memory.Peak.Total()))
	})
	res.Best = all[:min(s.Top, len(all))]
	return res, nil
}

// defaults fills s's unset fields.
func (s Search) defaults() Search {
	if len(s.MicroBatches) == 0 {
		s.MicroBatches = []int{1, 2, 4, 8}
	}
	if len(s.Recomputes) == 0 {
		s.Recomputes = []model.Recompute{model.RecomputeNone, model.RecomputeSelective, model.RecomputeFull}
	}
	if len(s.Shardings) == 0 {
		s.Shardings = []Sharding{ShardNone, ShardZeRO1, ShardZeRO2, ShardZeRO3}
	}
	s.MaxCP = cmp.Or(s.MaxCP, 8)
	s.MaxVirtual = cmp.Or(s.MaxVirtual, 8)
	if s.Top < 1 {
		s.Top = 10
	}
	return s
}

// layouts lists the candidate layouts, valid or not.
func (s Search) layouts() []Layout {
	t := s.Shape
	var out []Layout
	for tp := 1; tp <= s.Hardware.GPUsPerNode && tp <= t.Heads; tp *= 2 {
		for cp := 1; cp <= s.MaxCP; cp *= 2 {
			for _, pp := range divisors(t.Layers) {
				if s.GPUs%(tp*cp*pp) != 0 {
					continue
				}
				dp := s.GPUs / (tp * cp * pp)
				for v := 1; v <= s.MaxVirtual && (v == 1 || pp > 1); v *= 2 {
					for _, ep := range expertDegrees(t, dp*cp) {
						base := Layout{TP: tp, SequenceParallel: tp > 1, PP: pp, VirtualStages: v, DP: dp, CP: cp, EP: ep,
							GlobalBatch: s.GlobalBatch, FP32Grads: true}
						out = s.inner(out, base)
					}
				}
			}
		}
	}
	return out
}

// inner appends base with each micro-batch, recomputation and sharding.
func (s Search) inner(out []Layout, base Layout) []Layout {
	for _, b := range s.MicroBatches {
		for _, rc := range s.Recomputes {
			if rc == model.RecomputeSelective && s.Shape.FusedAttention {
				// Selective recomputation recomputes what fused
				// attention already does: the same layout as none.
				continue
			}
			for _, sh := range s.Shardings {
				l := base
				l.MicroBatch, l.Recompute, l.Sharding = b, rc, sh
				out = append(out, l)
			}
		}
	}
	return out
}

// expertDegrees returns the expert-parallel degrees to try: 1 for a
// dense model, else the divisors of the experts that divide dpcp.
func expertDegrees(t model.TransformerShape, dpcp int) []int {
	if t.Experts == 0 {
		return []int{1}
	}
	var out []int
	for _, e := range divisors(t.Experts) {
		if dpcp%e == 0 {
			out = append(out, e)
		}
	}
	return out
}
