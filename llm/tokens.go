package llm

import (
	"fmt"
	"math"

	"scaleplan/internal/units"
)

// Rampup is a global-batch ramp-up, Megatron-LM's --rampup-batch-size
// START INCREMENT SAMPLES: the global batch starts at Start sequences and
// grows by Increment every Samples/n sequences consumed, where
// n = (final − Start)/Increment, until it reaches the final batch
// (megatron/core/num_microbatches_calculator.py,
// RampupBatchsizeNumMicroBatchesCalculator). GPT-3 ramped "linearly from
// a small value (32k tokens) to the full value over the first 4-12 billion
// tokens" (Brown et al. 2020, Appendix B); Megatron-LM's GPT-3 175B
// example (examples/gpt3/train_gpt3_175b_distributed.sh) writes it as
// --rampup-batch-size 16 16 5859375 with a global batch of 1,536 sequences
// of 2,048 tokens: 32,768 tokens at first, full after 12.0 billion. The
// zero Rampup is none.
type Rampup struct {
	Start, Increment int
	Samples          int64
}

// BatchPhase is the steps a run takes at one global batch.
type BatchPhase struct {
	// Batch is the global batch, sequences; Steps the steps taken at it.
	Batch int
	Steps int64
}

// TokenSchedule is the steps that train to a token budget, by global
// batch.
type TokenSchedule struct {
	// Phases lists the batches in the order the run takes them.
	Phases []BatchPhase
	// Steps is their sum, Samples the sequences and Tokens the tokens
	// they consume (Samples × the sequence length).
	Steps, Samples int64
	Tokens         float64
}

// ScheduleTokens returns the steps that train on tokens tokens in
// sequences of seqLen with a final global batch of batch sequences, after
// the ramp-up r (the zero Rampup for none). As Megatron-LM's
// update_train_iters does, the ramp-up runs while the consumed sequences
// are at most r.Samples, each step at the batch the consumed sequences
// give, and the run then takes ⌊(budget − consumed)/batch⌋ steps at the
// final batch, throwing away a partial last batch; the budget is
// ⌈tokens/seqLen⌉ sequences. A budget that ends inside the ramp-up ends
// with the step that reaches it.
func ScheduleTokens(tokens float64, seqLen, batch int, r Rampup) (TokenSchedule, error) {
	if err := checkSchedule(tokens, seqLen, batch, r); err != nil {
		return TokenSchedule{}, err
	}
	budget := int64(math.Ceil(tokens / float64(seqLen)))
	var s TokenSchedule
	var consumed int64
	if r != (Rampup{}) && r.Start < batch {
		consumed = s.ramp(budget, batch, r)
	}
	if n := (budget - consumed) / int64(batch); n > 0 {
		s.add(batch, n)
		consumed += n * int64(batch)
	}
	s.Samples = consumed
	s.Tokens = float64(consumed) * float64(seqLen)
	return s, nil
}

// ramp adds the ramp-up's phases and returns the sequences they consume.
// Level k (batch Start + k·Increment) runs while the consumed sequences c
// satisfy k·q ≤ c < (k+1)·q with q = Samples/n, compared exactly as
// c·n < (k+1)·Samples; the step at c = Samples, if one falls there, runs
// at the final batch.
func (s *TokenSchedule) ramp(budget int64, batch int, r Rampup) int64 {
	n := int64((batch - r.Start) / r.Increment)
	var c int64
	for k := int64(0); k < n && c < budget; k++ {
		b := int64(r.Start) + k*int64(r.Increment)
		end := (k + 1) * r.Samples // the level ends where c·n reaches this
		if c*n >= end {
			continue
		}
		m := ceilDiv(end-c*n, n*b)
		m = min(m, ceilDiv(budget-c, b))
		s.add(int(b), m)
		c += m * b
	}
	if c == r.Samples && c < budget {
		s.add(batch, 1)
		c += int64(batch)
	}
	return c
}

// add appends m steps at batch b, merging with the last phase when it has
// the same batch.
func (s *TokenSchedule) add(b int, m int64) {
	s.Steps += m
	if k := len(s.Phases) - 1; k >= 0 && s.Phases[k].Batch == b {
		s.Phases[k].Steps += m
		return
	}
	s.Phases = append(s.Phases, BatchPhase{Batch: b, Steps: m})
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// checkSchedule checks ScheduleTokens's arguments.
func checkSchedule(tokens float64, seqLen, batch int, r Rampup) error {
	switch {
	case !(tokens > 0) || tokens > 1e18:
		return fmt.Errorf("tokens %g: want more than 0 and at most 1e18", tokens)
	case seqLen < 1:
		return fmt.Errorf("sequence length %d: want at least 1", seqLen)
	case batch < 1:
		return fmt.Errorf("global batch %d: want at least 1", batch)
	case r == Rampup{}:
		return nil
	case r.Start < 1 || r.Start > batch:
		return fmt.Errorf("rampup start %d: want 1 to the global batch %d", r.Start, batch)
	case r.Increment < 1 || (batch-r.Start)%r.Increment != 0:
		return fmt.Errorf("rampup increment %d: want a positive divisor of global batch − start = %d", r.Increment, batch-r.Start)
	case r.Samples < 1 || float64(r.Samples)*float64((batch-r.Start)/r.Increment) > 1e18:
		return fmt.Errorf("rampup samples %d: want at least 1, and at most 1e18 in all over the %d increments", r.Samples, (batch-r.Start)/r.Increment)
	}
	return nil
}

// PhaseTime is the time of one batch phase.
type PhaseTime struct {
	BatchPhase
	// Step is the time of one step at the phase's batch; Time is
	// Steps × Step.
	Step, Time units.Seconds
}

// Time returns the failure-free time of the schedule, Σ steps × step
// time, phase by phase, where stepTime gives the time of one step at a
// global batch (a step-time model's, or a measurement's).
func (s TokenSchedule) Time(stepTime func(batch int) (units.Seconds, error)) (units.Seconds, []PhaseTime, error) {
	var total units.Seconds
	out := make([]PhaseTime, len(s.Phases))
	for i, p := range s.Phases {
		t, err := stepTime(p.Batch)
		if err != nil {
			return 0, nil, fmt.Errorf("step time at global batch %d: %w", p.Batch, err)
		}
		if !(t > 0) || math.IsInf(float64(t), 0) {
			return 0, nil, fmt.Errorf("step time at global batch %d is %g s: want a positive finite time", p.Batch, float64(t))
		}
		out[i] = PhaseTime{BatchPhase: p, Step: t, Time: t * units.Seconds(p.Steps)}
		total += out[i].Time
	}
	return total, out, nil
}
