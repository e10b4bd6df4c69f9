package dist

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"scaleplan/engine/optim"
)

// StepsSearch is a steps-to-target sweep: for every global batch, a
// learning-rate search (SearchLR) over the grid LRGrid gives at that batch,
//
//	rule = min(LRMax, LR · B / LRBatch)
//	lr_i = min(LRMax, f_i · rule)   for f_i in LRFactors,
//
// each trial capped at MaxEpochs epochs. It gives one Convergence per batch,
// the points from which fit draws S(B) = S_min (1 + B_noise/B).
type StepsSearch struct {
	// Batches are the global batches B, in the order searched; each a
	// multiple of the configuration's workers, no value twice.
	Batches []int
	// MaxEpochs is the step cap of a trial, in epochs, in (0, 10000].
	MaxEpochs float64
	// LR is the learning rate at the reference batch LRBatch.
	LR float64
	// LRBatch is the reference batch of LR, in samples.
	LRBatch int
	// LRFactors are the factors of the linear-scaling rate, in the order
	// tried, no value twice.
	LRFactors []float64
	// LRMax is the largest learning rate tried.
	LRMax float64
}

// Validate reports every problem of s, for a configuration of w workers,
// at once, or nil.
func (s StepsSearch) Validate(w int) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(s.Batches) == 0 {
		bad("no global batch to search")
	}
	for i, b := range s.Batches {
		if b < 1 || w < 1 || b%w != 0 {
			bad("global batch %d is not a positive multiple of %d workers", b, w)
		} else if slices.Index(s.Batches, b) < i {
			bad("global batch %d is given twice", b)
		}
	}
	if !(s.MaxEpochs > 0 && s.MaxEpochs <= 1e4) {
		bad("max epochs %g not in (0, 10000]", s.MaxEpochs)
	}
	if len(s.LRFactors) == 0 {
		bad("no learning-rate factor")
	}
	for i, f := range s.LRFactors {
		if slices.Index(s.LRFactors, f) < i {
			bad("learning-rate factor %g is given twice", f)
		}
	}
	for _, f := range append([]float64{s.LR, s.LRMax}, s.LRFactors...) {
		if !(f > 0) || math.IsInf(f, 0) {
			bad("learning rate or factor %g not positive and finite", f)
		}
	}
	if s.LRBatch < 1 {
		bad("reference batch %d is not positive", s.LRBatch)
	}
	return errors.Join(errs...)
}

// Trial returns c set up for the trials at global batch b: per-worker
// batch b / c.Workers, trained for at most s.MaxEpochs epochs. Plan turns
// the epochs into a step cap.
func (s StepsSearch) Trial(c Config, b int) Config {
	c.Batch = b / max(1, c.Workers)
	c.Epochs = s.MaxEpochs
	return c
}

// StepsPlan is a steps search made ready to run: the configuration and
// the learning rates of every batch.
type StepsPlan struct {
	// Search is the sweep planned.
	Search StepsSearch
	// Configs are the trial configurations, one per batch of
	// Search.Batches: Search.Trial's with the step cap in Steps (at least
	// 1) and Epochs 0.
	Configs []Config
	// Grids are the learning rates tried at each batch (LRGrid).
	Grids [][]float64
}

// Plan checks s and c, whose Eval must give the evaluation period and the
// target, and returns the plan of the sweep. It loads c's data set to count
// the steps of an epoch.
func (s StepsSearch) Plan(c Config) (*StepsPlan, error) {
	if err := s.Validate(c.WithDefaults().Workers); err != nil {
		return nil, fmt.Errorf("dist: steps search: %w", err)
	}
	if err := c.Eval.checkSearch("steps search"); err != nil {
		return nil, err
	}
	p := &StepsPlan{Search: s, Configs: make([]Config, len(s.Batches)), Grids: make([][]float64, len(s.Batches))}
	for i, b := range s.Batches {
		cfg := s.Trial(c, b)
		per, err := cfg.StepsPerEpoch()
		if err != nil {
			return nil, err
		}
		cfg.Steps, cfg.Epochs = max(1, optim.EpochsToSteps(s.MaxEpochs, per)), 0
		p.Configs[i] = cfg
		p.Grids[i] = LRGrid(s.LR, s.LRBatch, b, s.LRFactors, s.LRMax)
	}
	return p, nil
}

// Trials returns the number of trials the plan runs at most: the sum of
// its grids' lengths.
func (p *StepsPlan) Trials() int {
	n := 0
	for _, g := range p.Grids {
		n += len(g)
	}
	return n
}

// StepsHooks are the callbacks of StepsPlan.Run, each given the global
// batch; nil ones are skipped.
type StepsHooks struct {
	// Start is called before the first trial of a batch.
	Start func(batch int)
	// Trial is called after each trial.
	Trial func(batch int, tr Trial)
	// Done is called with each batch's outcome, as soon as it is known,
	// for instance to write its record (Convergence.Record); an error
	// stops the sweep.
	Done func(batch int, cv *Convergence) error
}

// Run searches the learning rate at every batch of the plan, in order,
// and returns the outcome of each. An error names the batch it stopped
// at; the outcomes of the batches before it have gone to h.Done.
func (p *StepsPlan) Run(ctx context.Context, h StepsHooks) ([]*Convergence, error) {
	convs := make([]*Convergence, 0, len(p.Configs))
	for i, cfg := range p.Configs {
		b := p.Search.Batches[i]
		if h.Start != nil {
			h.Start(b)
		}
		var trial func(Trial)
		if h.Trial != nil {
			trial = func(tr Trial) { h.Trial(b, tr) }
		}
		conv, err := SearchLR(ctx, cfg, p.Grids[i], trial)
		if err == nil && h.Done != nil {
			err = h.Done(b, conv)
		}
		if err != nil {
			return convs, fmt.Errorf("batch %d: %w", b, err)
		}
		convs = append(convs, conv)
	}
	return convs, nil
}
