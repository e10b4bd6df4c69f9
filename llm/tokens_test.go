package llm

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"scaleplan/internal/units"
)

// TestScheduleTokensByHand checks two small ramps counted by hand.
func TestScheduleTokensByHand(t *testing.T) {
	cases := []struct {
		name  string
		r     Rampup
		want  []BatchPhase
		steps int64
		seqs  int64
	}{
		// q = 20/2 = 10: batch 2 at c = 0, 2, 4, 6, 8; batch 4 at 10, 14,
		// 18; c = 22 > 20, then ⌊(60 − 22)/6⌋ = 6 steps to 58.
		{"ramp", Rampup{Start: 2, Increment: 2, Samples: 20}, []BatchPhase{{2, 5}, {4, 3}, {6, 6}}, 14, 58},
		// q = 4: batch 2 at 0, 2; batch 4 at 4; at c = 8 = Samples the
		// batch is 2 + 2·⌊8/4⌋ = 6 (still in Megatron's ramp loop), c = 14;
		// then ⌊(60 − 14)/6⌋ = 7 more: 8 steps at 6, c = 56.
		{"ends on the boundary", Rampup{Start: 2, Increment: 2, Samples: 8}, []BatchPhase{{2, 2}, {4, 1}, {6, 8}}, 11, 56},
		// no ramp: ⌊60/6⌋ = 10.
		{"none", Rampup{}, []BatchPhase{{6, 10}}, 10, 60},
		{"start at the final batch", Rampup{Start: 6, Increment: 2, Samples: 8}, []BatchPhase{{6, 10}}, 10, 60},
	}
	for _, tc := range cases {
		s, err := ScheduleTokens(600, 10, 6, tc.r) // 60 sequences of 10 tokens
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !reflect.DeepEqual(s.Phases, tc.want) || s.Steps != tc.steps || s.Samples != tc.seqs || s.Tokens != float64(10*tc.seqs) {
			t.Errorf("%s: %+v, want phases %v, %d steps, %d sequences", tc.name, s, tc.want, tc.steps, tc.seqs)
		}
	}
}

// megatronSteps replays Megatron-LM's update_train_iters and
// RampupBatchsizeNumMicroBatchesCalculator.update step by step, with the
// float division of the Python: the serial reference.
func megatronSteps(samples int64, batch int, r Rampup) map[int]int64 {
	q := float64(r.Samples) / float64((batch-r.Start)/r.Increment)
	steps := map[int]int64{}
	var c int64
	for c <= r.Samples {
		b := r.Start + int(float64(c)/q)*r.Increment
		steps[b]++
		c += int64(b)
	}
	steps[batch] += (samples - c) / int64(batch)
	return steps
}

// TestScheduleMatchesMegatron checks the closed form per level against
// Megatron-LM's loop, for GPT-3 175B's ramp (--rampup-batch-size 16 16
// 5859375, global batch 1,536, 300 B tokens of 2,048; Megatron-LM's
// examples/gpt3/train_gpt3_175b_distributed.sh; Brown et al. 2020) and
// others.
func TestScheduleMatchesMegatron(t *testing.T) {
	cases := []struct {
		tokens float64
		seq    int
		batch  int
		r      Rampup
	}{
		{300e9, 2048, 1536, Rampup{16, 16, 5859375}},
		{1e12, 4096, 1024, Rampup{256, 128, 50000000}},
		{3e9, 1024, 96, Rampup{8, 4, 1000003}},
	}
	for _, tc := range cases {
		s, err := ScheduleTokens(tc.tokens, tc.seq, tc.batch, tc.r)
		if err != nil {
			t.Fatal(err)
		}
		got := map[int]int64{}
		var consumed int64
		for _, p := range s.Phases {
			got[p.Batch] += p.Steps
			consumed += int64(p.Batch) * p.Steps
		}
		want := megatronSteps(int64(math.Ceil(tc.tokens/float64(tc.seq))), tc.batch, tc.r)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: steps by batch %v, Megatron-LM's loop %v", tc, got, want)
		}
		if consumed != s.Samples {
			t.Errorf("%+v: samples %d, phases consume %d", tc, s.Samples, consumed)
		}
	}
}

// TestGPT3Ramp checks the GPT-3 ramp's figures: the first level runs
// ⌈(5,859,375/95)/16⌉ = 3,855 steps of 32,768 tokens ("32k tokens",
// Brown et al. 2020, Appendix B), the ramp takes 96 batches (16 to 1,536)
// and ends after 12.0 billion tokens ("the first 4-12 billion tokens").
func TestGPT3Ramp(t *testing.T) {
	s, err := ScheduleTokens(300e9, 2048, 1536, Rampup{16, 16, 5859375})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Phases) != 96 || s.Phases[0] != (BatchPhase{16, 3855}) || s.Phases[95].Batch != 1536 {
		t.Fatalf("phases %d, first %+v, last %+v: want 96, {16 3855}, batch 1536", len(s.Phases), s.Phases[0], s.Phases[len(s.Phases)-1])
	}
	var ramp int64
	for _, p := range s.Phases[:95] {
		ramp += int64(p.Batch) * p.Steps
	}
	if tok := float64(ramp) * 2048; math.Abs(tok-12e9) > 1536*2048 {
		t.Errorf("ramp consumes %.4g tokens, want 12.0e9 within one batch", tok)
	}
	if s.Tokens > 300e9 || s.Tokens < 300e9-1536*2048 {
		t.Errorf("tokens %.6g: want 300e9 less a partial batch", s.Tokens)
	}
}

// TestScheduleInsideRamp checks a budget that ends inside the ramp.
func TestScheduleInsideRamp(t *testing.T) {
	s, err := ScheduleTokens(180, 10, 6, Rampup{2, 2, 40})
	if err != nil {
		t.Fatal(err)
	}
	// q = 20: batch 2 while c < 20, but the budget is 18: ⌈18/2⌉ = 9 steps.
	if want := []BatchPhase{{2, 9}}; !reflect.DeepEqual(s.Phases, want) || s.Samples != 18 {
		t.Errorf("%+v, want %v and 18 sequences", s, want)
	}
}

// TestScheduleErrors checks that each bad argument is named.
func TestScheduleErrors(t *testing.T) {
	cases := []struct {
		tokens     float64
		seq, batch int
		r          Rampup
		want       string
	}{
		{0, 2048, 16, Rampup{}, "tokens 0"},
		{math.NaN(), 2048, 16, Rampup{}, "tokens NaN"},
		{1e9, 0, 16, Rampup{}, "sequence length 0"},
		{1e9, 2048, 0, Rampup{}, "global batch 0"},
		{1e9, 2048, 16, Rampup{Start: 32, Increment: 16, Samples: 10}, "rampup start 32"},
		{1e9, 2048, 16, Rampup{Start: 4, Increment: 5, Samples: 10}, "rampup increment 5"},
		{1e9, 2048, 16, Rampup{Start: 4, Increment: 4, Samples: 0}, "rampup samples 0"},
		{1e9, 2048, 16, Rampup{Start: 4, Increment: 4, Samples: 1e18}, "rampup samples"},
	}
	for _, tc := range cases {
		_, err := ScheduleTokens(tc.tokens, tc.seq, tc.batch, tc.r)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc, err, tc.want)
		}
	}
}

// TestScheduleTime checks Σ steps × step time by hand and the errors of
// the step-time function.
func TestScheduleTime(t *testing.T) {
	s, err := ScheduleTokens(600, 10, 6, Rampup{Start: 2, Increment: 2, Samples: 20})
	if err != nil {
		t.Fatal(err)
	}
	// step time 1 + b/2 s: 5·2 + 3·3 + 6·4 = 43 s.
	total, phases, err := s.Time(func(b int) (units.Seconds, error) { return units.Seconds(1 + float64(b)/2), nil })
	if err != nil || total != 43 || len(phases) != 3 || phases[2].Step != 4 || phases[2].Time != 24 {
		t.Errorf("time %g, phases %+v, err %v: want 43 s, the last 6 × 4 s", float64(total), phases, err)
	}
	bad := errors.New("no model")
	if _, _, err := s.Time(func(int) (units.Seconds, error) { return 0, bad }); !errors.Is(err, bad) || !strings.Contains(err.Error(), "global batch 2") {
		t.Errorf("error %v: want the step-time error wrapped, naming the batch", err)
	}
	if _, _, err := s.Time(func(int) (units.Seconds, error) { return 0, nil }); err == nil || !strings.Contains(err.Error(), "positive finite") {
		t.Errorf("zero step time: error %v", err)
	}
}

// TestNarayananEndToEnd checks the schedule's time against Narayanan et
// al. 2021, Section 5.1: GPT-3 175B on 300 B tokens on 1,024 A100s at
// 140 TFLOP/s per GPU, 8·T·P/(n·X), "34 days" — with a step time of
// constant throughput, the ramp-up changes the steps, not the time.
func TestNarayananEndToEnd(t *testing.T) {
	const params = 174.6e9 // Narayanan et al. 2021, Table 1
	s, err := ScheduleTokens(300e9, 2048, 1536, Rampup{16, 16, 5859375})
	if err != nil {
		t.Fatal(err)
	}
	total, _, err := s.Time(func(b int) (units.Seconds, error) {
		return units.Seconds(8 * float64(b) * 2048 * params / (1024 * 140e12)), nil
	})
	if days := float64(total / units.Day); err != nil || math.Abs(days/34-1) > 0.015 {
		t.Errorf("%.2f days, err %v: want 34 within 1.5 %%", days, err)
	}
}
