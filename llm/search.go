package llm

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"scaleplan/internal/units"
	"scaleplan/model"
)

// Search is a search of the layouts of one transformer on one system for
// the fastest step, or, with a token budget and a deadline or a budget of
// GPU-hours, for the cheapest or fastest training that meets them. It
// searches one GPU count and global batch, or several of each.
type Search struct {
	// Shape is the transformer; GPUs the GPUs to use, all of them;
	// GlobalBatch the sequences per step. GPUChoices and GlobalBatches,
	// when set, are the GPU counts and global batches searched instead.
	Shape         model.TransformerShape
	GPUs          int
	GlobalBatch   int
	GPUChoices    []int
	GlobalBatches []int
	// Hardware is the system.
	Hardware Hardware
	// MicroBatches is the micro-batches to try; default 1, 2, 4, 8.
	MicroBatches []int
	// Recomputes is the recomputations to try; default none, selective,
	// full.
	Recomputes []model.Recompute
	// Shardings is the shardings to try; default none, zero1 (Megatron-LM's
	// distributed optimizer), zero2, zero3 and hsdp (shards within a node).
	Shardings []Sharding
	// SequenceParallel is the sequence-parallel settings tried with tensor
	// parallelism; default on and off.
	SequenceParallel []bool
	// MaxCP is the largest context-parallel degree, MaxVirtual the most
	// virtual stages; default 8 each. Degrees are powers of two; tensor
	// parallelism goes up to a node's GPUs.
	MaxCP, MaxVirtual int
	// Top is the candidates to return; default (0 or less) 10.
	Top int
	// Tokens is the token budget to train, 0 for none. With it, Deadline
	// (0: none) bounds the time to train it and MaxGPUHours (0: none) its
	// GPU-hours: a search with a deadline ranks the layouts that meet
	// both by GPU-hours, cheapest first; without one, by the time to
	// train, fastest first.
	Tokens      float64
	Deadline    units.Seconds
	MaxGPUHours float64
}

// Candidate is one layout that fits, with its step time and memory and,
// with a token budget, the steps, time and GPU-hours to train it.
type Candidate struct {
	Layout    Layout
	Step      StepTime
	Memory    Memory
	Steps     int
	TrainTime units.Seconds
	GPUHours  float64
}

// SearchResult is a search's best candidates, best first, and its counts.
type SearchResult struct {
	Best []Candidate
	// Layouts is the valid layouts enumerated; Fit those that fit memory
	// (each timed); TooLarge the rest; Missed those that fit but miss
	// the deadline or the budget.
	Layouts, Fit, TooLarge, Missed int
	// Fastest and Cheapest are the shortest time and the fewest
	// GPU-hours to train the token budget of any layout that fits.
	Fastest  units.Seconds
	Cheapest float64
}

// Run enumerates GPU count × global batch × TP × sequence parallel × PP ×
// virtual stages × DP × CP × EP × micro-batch × recomputation × sharding
// with TP·PP·DP·CP = GPUs, keeps the valid layouts that fit a GPU's
// memory (Layout.Memory), times each with the same step model (one
// cache of operator and collective times for all) and returns the Top
// best: with a token budget, see Search.Tokens; without, the highest
// tokens per second (at one batch, the shortest step), then the fewest
// GPUs, then the least memory; among equals the first enumerated. It
// fails when none fits or meets the deadline and budget.
func (s Search) Run() (SearchResult, error) {
	s = s.defaults()
	if err := s.check(); err != nil {
		return SearchResult{}, err
	}
	st := newStepper(s.Shape, s.Hardware)
	res := SearchResult{Fastest: units.Seconds(math.Inf(1)), Cheapest: math.Inf(1)}
	var err error
	for _, gpus := range s.GPUChoices {
		for _, batch := range s.GlobalBatches {
			if !s.layouts(gpus, batch, func(l Layout) bool {
				err = s.consider(st, l, &res)
				return err == nil
			}) {
				return SearchResult{}, err
			}
		}
	}
	return res, s.none(res)
}

// check reports what s lacks.
func (s Search) check() error {
	if err := s.Hardware.validate(); err != nil {
		return err
	}
	if err := s.Shape.Validate(); err != nil {
		return err
	}
	if slices.ContainsFunc(s.GPUChoices, func(n int) bool { return n < 1 }) ||
		slices.ContainsFunc(s.GlobalBatches, func(n int) bool { return n < 1 }) {
		return fmt.Errorf("llm search: gpus %v, global batches %v: want each at least 1", s.GPUChoices, s.GlobalBatches)
	}
	bad := func(x float64) bool { return x < 0 || math.IsNaN(x) || math.IsInf(x, 0) }
	if bad(s.Tokens) || bad(float64(s.Deadline)) || bad(s.MaxGPUHours) {
		return fmt.Errorf("llm search: tokens %g, deadline %v, gpu-hours %g: want each 0 or positive", s.Tokens, s.Deadline, s.MaxGPUHours)
	}
	if s.Tokens == 0 && (s.Deadline > 0 || s.MaxGPUHours > 0) {
		return fmt.Errorf("llm search: a deadline or a budget of gpu-hours wants a token budget (tokens)")
	}
	return nil
}

// none returns the error of a search none of whose layouts qualified.
func (s Search) none(res SearchResult) error {
	switch {
	case len(res.Best) > 0:
		return nil
	case res.Fit == 0:
		return fmt.Errorf("llm search: no layout of %s on %v GPUs with global batch %v fits %v per GPU (%d valid layouts tried)",
			s.Shape.Name, s.GPUChoices, s.GlobalBatches, s.Hardware.Memory, res.Layouts)
	}
	var bounds []string
	if s.Deadline > 0 {
		bounds = append(bounds, fmt.Sprintf("the deadline of %.4g h", float64(s.Deadline)/3600))
	}
	if s.MaxGPUHours > 0 {
		bounds = append(bounds, fmt.Sprintf("the budget of %.4g gpu-hours", s.MaxGPUHours))
	}
	return fmt.Errorf("llm search: none of the %d layouts of %s that fit meets %s: the fastest trains %.4g tokens in %.4g h, the cheapest in %.4g gpu-hours",
		res.Fit, s.Shape.Name, strings.Join(bounds, " and "), s.Tokens, float64(res.Fastest)/3600, res.Cheapest)
}

// consider counts l, times it if it fits and keeps it among res.Best if
// it qualifies.
func (s Search) consider(st *stepper, l Layout, res *SearchResult) error {
	res.Layouts++
	m := l.memory(s.Shape, DefaultAllowance)
	if m.Headroom(s.Hardware.Memory) < 0 {
		res.TooLarge++
		return nil
	}
	step, err := st.step(l)
	if err != nil {
		return err
	}
	res.Fit++
	c := Candidate{Layout: l, Step: step, Memory: m}
	if s.Tokens > 0 {
		c.Steps = int(math.Ceil(s.Tokens / step.Tokens))
		c.TrainTime = units.Seconds(c.Steps) * step.Time
		c.GPUHours = float64(l.World()) * float64(c.TrainTime) / 3600
		res.Fastest = min(res.Fastest, c.TrainTime)
		res.Cheapest = min(res.Cheapest, c.GPUHours)
		if s.Deadline > 0 && c.TrainTime > s.Deadline || s.MaxGPUHours > 0 && c.GPUHours > s.MaxGPUHours {
			res.Missed++
			return nil
		}
	}
	res.Best = s.insert(res.Best, c)
	return nil
}

// insert puts c into best, kept sorted by s.compare and at most s.Top
// long, after its equals.
func (s Search) insert(best []Candidate, c Candidate) []Candidate {
	i, _ := slices.BinarySearchFunc(best, c, func(a, b Candidate) int { return cmp.Or(s.compare(a, b), -1) })
	if i >= s.Top {
		return best
	}
	best = slices.Insert(best, i, c)
	return best[:min(len(best), s.Top)]
}

// compare orders candidates best first (see Run).
func (s Search) compare(a, b Candidate) int {
	perToken := func(c Candidate) float64 { return float64(c.Step.Time) / c.Step.Tokens }
	main := cmp.Compare(perToken(a), perToken(b))
	if s.Tokens > 0 {
		main = cmp.Compare(a.TrainTime, b.TrainTime)
		if s.Deadline > 0 {
			main = cmp.Or(cmp.Compare(a.GPUHours, b.GPUHours), main)
		}
	}
	return cmp.Or(main, cmp.Compare(a.Layout.World(), b.Layout.World()),
		cmp.Compare(a.Memory.Peak.Total(), b.Memory.Peak.Total()))
}

// defaults fills s's unset fields.
func (s Search) defaults() Search {
	if len(s.GPUChoices) == 0 {
		s.GPUChoices = []int{s.GPUs}
	}
	if len(s.GlobalBatches) == 0 {
		s.GlobalBatches = []int{s.GlobalBatch}
	}
	if len(s.MicroBatches) == 0 {
		s.MicroBatches = []int{1, 2, 4, 8}
	}
	if len(s.Recomputes) == 0 {
		s.Recomputes = []model.Recompute{model.RecomputeNone, model.RecomputeSelective, model.RecomputeFull}
	}
	if len(s.Shardings) == 0 {
		s.Shardings = []Sharding{ShardNone, ShardZeRO1, ShardZeRO2, ShardZeRO3, ShardHSDP}
	}
	if len(s.SequenceParallel) == 0 {
		s.SequenceParallel = []bool{true, false}
	}
	s.MaxCP = cmp.Or(s.MaxCP, 8)
	s.MaxVirtual = cmp.Or(s.MaxVirtual, 8)
	if s.Top < 1 {
		s.Top = 10
	}
	return s
}

// layouts calls yield with each valid layout of gpus GPUs and global
// batch batch, until it returns false; it reports whether yield always
// returned true. Sequence parallelism is tried only with tensor
// parallelism, which it splits along.
func (s Search) layouts(gpus, batch int, yield func(Layout) bool) bool {
	t := s.Shape
	for tp := 1; tp <= s.Hardware.GPUsPerNode && tp <= t.Heads; tp *= 2 {
		sps := s.SequenceParallel
		if tp == 1 {
			sps = []bool{false}
		}
		for _, sp := range sps {
			for cp := 1; cp <= s.MaxCP; cp *= 2 {
				base := Layout{TP: tp, SequenceParallel: sp, CP: cp, GlobalBatch: batch, FP32Grads: true, NodeGPUs: s.Hardware.GPUsPerNode}
				if !s.pipelines(gpus, base, yield) {
					return false
				}
			}
		}
	}
	return true
}

// pipelines calls yield with base's layouts of each pipeline depth,
// virtual stages and expert-parallel degree on gpus GPUs.
func (s Search) pipelines(gpus int, base Layout, yield func(Layout) bool) bool {
	t := s.Shape
	for _, pp := range divisors(t.Layers) {
		if gpus%(base.TP*base.CP*pp) != 0 {
			continue
		}
		dp := gpus / (base.TP * base.CP * pp)
		for v := 1; v <= s.MaxVirtual && (v == 1 || pp > 1); v *= 2 {
			for _, ep := range expertDegrees(t, dp*base.CP) {
				l := base
				l.PP, l.VirtualStages, l.DP, l.EP = pp, v, dp, ep
				if !s.inner(l, yield) {
					return false
				}
			}
		}
	}
	return true
}

// inner calls yield with base at each micro-batch, recomputation and
// sharding that makes a valid layout.
func (s Search) inner(base Layout, yield func(Layout) bool) bool {
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
				if l.valid(s.Shape) && !yield(l) {
					return false
				}
			}
		}
	}
	return true
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
