package dist

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// stepsSearch is a small sweep over global batches 16, 32 and 64: rates
// from 0.01 at batch 16, at half and once the rule, capped at 0.015.
func stepsSearch() StepsSearch {
	return StepsSearch{Batches: []int{16, 32, 64}, MaxEpochs: 0.5, LR: 0.01, LRBatch: 16, LRFactors: []float64{0.5, 1}, LRMax: 0.015}
}

func TestStepsSearchValidate(t *testing.T) {
	if err := stepsSearch().Validate(2); err != nil {
		t.Fatalf("valid search: %v", err)
	}
	for _, c := range []struct {
		edit func(*StepsSearch)
		w    int
		want string
	}{
		{func(s *StepsSearch) {}, 3, "global batch 16 is not a positive multiple of 3 workers"},
		{func(s *StepsSearch) { s.Batches = nil }, 1, "no global batch to search"},
		{func(s *StepsSearch) { s.Batches = []int{16, -16} }, 1, "global batch -16 is not a positive multiple of 1 workers"},
		{func(s *StepsSearch) { s.Batches = []int{16, 32, 16} }, 1, "global batch 16 is given twice"},
		{func(s *StepsSearch) { s.MaxEpochs = math.NaN() }, 1, "max epochs NaN not in (0, 10000]"},
		{func(s *StepsSearch) { s.MaxEpochs = 2e4 }, 1, "max epochs 20000 not in (0, 10000]"},
		{func(s *StepsSearch) { s.LRFactors = nil }, 1, "no learning-rate factor"},
		{func(s *StepsSearch) { s.LRFactors = []float64{1, 2, 1} }, 1, "learning-rate factor 1 is given twice"},
		{func(s *StepsSearch) { s.LR = math.Inf(1) }, 1, "learning rate or factor +Inf not positive and finite"},
		{func(s *StepsSearch) { s.LRMax = 0 }, 1, "learning rate or factor 0 not positive and finite"},
		{func(s *StepsSearch) { s.LRBatch = 0 }, 1, "reference batch 0 is not positive"},
	} {
		s := stepsSearch()
		c.edit(&s)
		if err := s.Validate(c.w); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v with %d workers: error %v, want %q", s, c.w, err, c.want)
		}
	}
	s := stepsSearch()
	s.LRBatch, s.MaxEpochs = 0, 0
	if err := s.Validate(1); err == nil || strings.Count(err.Error(), "\n") != 1 {
		t.Errorf("two problems reported as %v, want both", err)
	}
}

// Plan caps each batch's trials at MaxEpochs of its epoch and tries the
// linear-scaling grid of LRGrid.
func TestStepsPlan(t *testing.T) {
	c := tiny()
	c.Workers, c.Eval = 2, Eval{Every: 5, Target: 0.95}
	p, err := stepsSearch().Plan(c)
	if err != nil {
		t.Fatal(err)
	}
	// 2000 samples: 125, 62 and 31 steps an epoch; half of each, rounded.
	wantSteps, wantBatch := []int{63, 31, 16}, []int{8, 16, 32}
	// 0.01·B/16 = 0.01, 0.02, 0.04, capped at 0.015, at half and once.
	wantGrid := [][]float64{{0.005, 0.01}, {0.0075, 0.015}, {0.0075, 0.015}}
	for i, cfg := range p.Configs {
		if cfg.Steps != wantSteps[i] || cfg.Epochs != 0 || cfg.Batch != wantBatch[i] || cfg.Workers != 2 {
			t.Errorf("batch %d: steps %d, epochs %g, batch %d of %d workers; want %d steps, batch %d of 2", p.Search.Batches[i], cfg.Steps, cfg.Epochs,
				cfg.Batch, cfg.Workers, wantSteps[i], wantBatch[i])
		}
		if !slices.EqualFunc(p.Grids[i], wantGrid[i], func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }) {
			t.Errorf("batch %d: rates %v, want %v", p.Search.Batches[i], p.Grids[i], wantGrid[i])
		}
	}
	if n := p.Trials(); n != 6 {
		t.Errorf("%d trials, want 6", n)
	}
	c.Eval.Every = 0
	if _, err := stepsSearch().Plan(c); err == nil || !strings.Contains(err.Error(), "evaluation period (0 steps)") {
		t.Errorf("no evaluation period: %v", err)
	}
	c = tiny()
	c.Eval = Eval{Every: 5, Target: 0.95}
	s := stepsSearch()
	s.Batches = []int{4096}
	if _, err := s.Plan(c); err == nil || !strings.Contains(err.Error(), "4096") {
		t.Errorf("a batch above the data set: %v", err)
	}
}

// Run searches every batch in order, tells the hooks, and stops at the
// first error Done returns, naming its batch.
func TestStepsPlanRun(t *testing.T) {
	c := tiny()
	c.Eval = Eval{Every: 5, Target: 0.95}
	s := stepsSearch()
	s.Batches, s.MaxEpochs = []int{16, 32}, 0.1
	p, err := s.Plan(c)
	if err != nil {
		t.Fatal(err)
	}
	var started []int
	trials := map[int]int{}
	done := map[int]*Convergence{}
	convs, err := p.Run(context.Background(), StepsHooks{
		Start: func(b int) { started = append(started, b) },
		Trial: func(b int, tr Trial) { trials[b]++ },
		Done:  func(b int, cv *Convergence) error { done[b] = cv; return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(started, []int{16, 32}) || len(convs) != 2 {
		t.Fatalf("started %v, %d outcomes; want batches 16 and 32", started, len(convs))
	}
	for i, cv := range convs {
		b := s.Batches[i]
		if done[b] != cv || trials[b] != len(cv.Trials) || len(cv.Trials) < 1 || len(cv.Trials) > 2 || cv.Target != 0.95 {
			t.Errorf("batch %d: outcome %+v, %d trials told", b, cv, trials[b])
		}
		if r := cv.Record("r"); r.GlobalBatch != b || r.Validate() != nil {
			t.Errorf("batch %d: record %+v", b, r)
		}
	}
	full := errors.New("disk full")
	convs, err = p.Run(context.Background(), StepsHooks{Done: func(b int, cv *Convergence) error {
		if b == 32 {
			return full
		}
		return nil
	}})
	if !errors.Is(err, full) || !strings.HasPrefix(err.Error(), "batch 32: ") || len(convs) != 1 {
		t.Errorf("a failing hook at batch 32: %v, %d outcomes", err, len(convs))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Run(ctx, StepsHooks{}); err == nil || !strings.HasPrefix(err.Error(), "batch 16: ") {
		t.Errorf("cancelled: %v", err)
	}
}
