package dist

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"scaleplan/internal/benchlog"
)

// Device is the device name bench records carry: the hardware
// catalogue's entry for this machine.
const Device = "localhost"

// ModelName returns the name c's network has in the model profiles and in
// bench records: "mlp" for the reference MLP, "cnn", or "mlp-784-H1-...-10"
// for another MLP.
func (c Config) ModelName() string {
	c = c.WithDefaults()
	if c.Model != "mlp" || slices.Equal(c.Hidden, []int{1024, 1024}) {
		return c.Model
	}
	s := "mlp-784"
	for _, h := range c.Hidden {
		s += fmt.Sprintf("-%d", h)
	}
	return s + "-10"
}

// StepsPerEpoch returns the number of global batches in one epoch of c's
// training set (the partial last batch dropped), loading the data set.
func (c Config) StepsPerEpoch() (int, error) {
	if err := c.Validate(); err != nil {
		return 0, fmt.Errorf("dist: %w", err)
	}
	c = c.WithDefaults()
	ds, err := loadData(c.Data)
	if err != nil {
		return 0, fmt.Errorf("dist: %w", err)
	}
	p, err := makePlan(&c, ds)
	if err != nil {
		return 0, fmt.Errorf("dist: %w", err)
	}
	return p.perEpoch, nil
}

// Measurement summarises the timed steps of a run at one configuration.
type Measurement struct {
	// Config is the run's configuration, defaults filled in.
	Config Config
	// Warmup is the number of untimed steps before the timed ones.
	Warmup int
	// Steps is the number of timed steps.
	Steps int
	// StepTime is the mean wall time of a timed step, in seconds.
	StepTime float64
	// StepTimeStd is the sample standard deviation of the timed steps'
	// times, in seconds (0 for a single step).
	StepTimeStd float64
	// SamplesPerSec is the training throughput over all workers,
	// GlobalBatch / StepTime.
	SamplesPerSec float64
	// Phases is the mean of the timed steps' phases.
	Phases Phases
	// StepStats are the timed steps.
	StepStats []StepStats
}

// Measure runs c for warmup + steps optimizer steps (c.Steps and
// c.Epochs are ignored) and summarises the last steps:
//
//	StepTime      = (1/n) Σ t_i
//	StepTimeStd   = √( Σ (t_i − StepTime)² / (n − 1) )
//	SamplesPerSec = B / StepTime,   B = W·M·b
//
// over the n = steps timed steps of worker 0. Warm-up steps let buffers
// grow, the loader fill its queue and the caches warm.
func Measure(ctx context.Context, c Config, warmup, steps int) (*Measurement, error) {
	if warmup < 0 || steps < 1 || warmup+steps > maxSteps {
		return nil, fmt.Errorf("dist: %d warm-up and %d timed steps: want warm-up >= 0, timed >= 1", warmup, steps)
	}
	c.Steps, c.Epochs = warmup+steps, 0
	res, err := Run(ctx, c)
	if err != nil {
		return nil, err
	}
	m := &Measurement{Config: res.Config, Warmup: warmup, Steps: steps, StepStats: res.Steps[warmup:]}
	m.summarize()
	return m, nil
}

// summarize computes the statistics of a new m from its StepStats.
func (m *Measurement) summarize() {
	var sum float64
	for _, s := range m.StepStats {
		sum += s.Time.Seconds()
		m.Phases.add(s.Phases)
	}
	n := float64(len(m.StepStats))
	m.StepTime = sum / n
	var ss float64
	for _, s := range m.StepStats {
		d := s.Time.Seconds() - m.StepTime
		ss += d * d
	}
	if len(m.StepStats) > 1 {
		m.StepTimeStd = math.Sqrt(ss / (n - 1))
	}
	m.SamplesPerSec = float64(m.Config.GlobalBatch()) / m.StepTime
	p := &m.Phases
	for _, d := range []*time.Duration{&p.DataWait, &p.Forward, &p.Backward, &p.AllReduce, &p.Wait, &p.Update} {
		*d = time.Duration(float64(*d) / n)
	}
}

// Combine returns one measurement of the timed steps of several runs of
// the same configuration, such as rounds measured at different times: its
// StepStats are theirs in order (each run's step indices as they were),
// Warmup and Steps their sums, and its statistics those of Measure over
// all the steps, so that
//
//	StepTime = Σ t_i / n   over the n = Σ Steps timed steps.
//
// It returns an error for no measurements and for measurements of
// different configurations (model, transport, independence, being in step, workers, batch,
// accumulation or chunks).
func Combine(ms []*Measurement) (*Measurement, error) {
	if len(ms) == 0 {
		return nil, errors.New("dist: combining no measurements")
	}
	c := ms[0].Config
	m := &Measurement{Config: c}
	for _, x := range ms {
		if d := x.Config; d.ModelName() != c.ModelName() || d.Transport != c.Transport || d.Independent != c.Independent || d.InStep != c.InStep || d.Workers != c.Workers ||
			d.Batch != c.Batch || d.Accumulate != c.Accumulate {
			return nil, fmt.Errorf("dist: combining a measurement of %s, %d workers %s, batch %d×%d with one of %s, %d workers %s, batch %d×%d",
				d.ModelName(), d.Workers, d.Transport, d.Batch, d.Accumulate, c.ModelName(), c.Workers, c.Transport, c.Batch, c.Accumulate)
		} else if d.Chunk != c.Chunk { // the same Chunk, model and batch give the same chunks
			if dn, cn := d.Chunks(), c.Chunks(); dn != cn {
				return nil, fmt.Errorf("dist: combining a measurement of batch %d in %d chunks with one in %d", c.Batch, dn, cn)
			}
		}
		m.Warmup += x.Warmup
		m.Steps += x.Steps
		m.StepStats = append(m.StepStats, x.StepStats...)
	}
	if len(m.StepStats) == 0 {
		return nil, errors.New("dist: combining measurements without timed steps")
	}
	m.summarize()
	return m, nil
}

// logPhases converts phases to the bench log's.
func logPhases(p Phases) *benchlog.Phases {
	return &benchlog.Phases{DataWait: p.DataWait.Seconds(), Forward: p.Forward.Seconds(), Backward: p.Backward.Seconds(),
		AllReduce: p.AllReduce.Seconds(), AllReduceWait: p.Wait.Seconds(), Update: p.Update.Seconds()}
}

// baseRecord returns a record of kind with c's description filled in.
func baseRecord(kind, run string, c Config) benchlog.Record {
	c = c.WithDefaults()
	r := benchlog.Record{Kind: kind, Run: run, Model: c.ModelName(), Device: Device, Precision: "fp32",
		Transport: c.Transport, Workers: c.Workers, Batch: c.Batch, GlobalBatch: c.GlobalBatch()}
	if c.Independent {
		r.Transport = "none" // the workers exchanged nothing
	}
	if c.InStep {
		r.Labels = map[string]string{benchlog.InStep: c.Transport} // but met over it
	}
	if c.Accumulate > 1 {
		r.Accumulate = c.Accumulate
	}
	return r
}

// Record returns m as a bench log measurement record of run. Its phases
// are means per step; AllReduce is the time the all-reduces were in
// flight, which overlaps Backward when Config.Overlap is set, and
// AllReduceWait the part of it after Backward (Phases.Wait).
func (m *Measurement) Record(run string) benchlog.Record {
	r := baseRecord(benchlog.KindMeasurement, run, m.Config)
	r.Steps = m.Steps
	r.StepTime = m.StepTime
	r.StepTimeStd = m.StepTimeStd
	r.SamplesPerSec = m.SamplesPerSec
	r.Phases = logPhases(m.Phases)
	return r
}

// StepRecords returns one bench log step record per timed step of m.
func (m *Measurement) StepRecords(run string) []benchlog.Record {
	recs := make([]benchlog.Record, len(m.StepStats))
	for i, s := range m.StepStats {
		r := baseRecord(benchlog.KindStep, run, m.Config)
		r.Step = s.Step
		r.StepTime = s.Time.Seconds()
		r.Phases = logPhases(s.Phases)
		recs[i] = r
	}
	return recs
}

// Trial is one training run of a learning-rate search.
type Trial struct {
	// LR is the base learning rate tried.
	LR float64
	// Steps is the step count at which the target was first reached, or
	// the steps run if it was not.
	Steps int
	// MaxSteps is the step cap the trial ran under: the search's cap, or
	// the best step count found so far (a trial that cannot beat it
	// stops there).
	MaxSteps int
	// Reached reports whether the target was reached.
	Reached bool
	// Diverged reports that the training loss became non-finite.
	Diverged bool
	// Accuracy is the best evaluation accuracy of the trial.
	Accuracy float64
	// Time is the trial's wall time.
	Time time.Duration
}

// Convergence is the outcome of a learning-rate search at one global
// batch: the trial that reached the target in the fewest steps.
type Convergence struct {
	// Config is the configuration of the chosen trial (its rate in
	// Schedule.Base), defaults filled in.
	Config Config
	// Target is the target accuracy.
	Target float64
	// LR is the chosen rate; if no trial reached the target, that of the
	// most accurate trial.
	LR float64
	// Reached reports whether any trial reached the target.
	Reached bool
	// StepsToTarget is the chosen trial's steps to the target, or the step
	// cap if no trial reached it.
	StepsToTarget int
	// Accuracy is the chosen trial's best evaluation accuracy.
	Accuracy float64
	// Trials are every trial, in the order run.
	Trials []Trial
}

// SearchLR trains c at each base learning rate of lrs (replacing
// c.Schedule.Base), evaluating every c.Eval.Every steps up to c.Steps
// steps, and picks the rate that reaches c.Eval.Target in the fewest
// steps (ties: the rate tried first), as Shallue et al. (2019) do per
// batch size. A trial stops at the target or on divergence; once a rate
// has reached the target in S steps, later trials are capped at S steps,
// since they can no longer win. c.Eval.Every and c.Eval.Target must be
// positive and c.Steps set.
func SearchLR(ctx context.Context, c Config, lrs []float64, progress func(Trial)) (*Convergence, error) {
	if len(lrs) == 0 {
		return nil, fmt.Errorf("dist: no learning rates to search")
	}
	if err := c.Eval.checkSearch("search"); err != nil {
		return nil, err
	}
	switch {
	case c.Steps < 1:
		return nil, fmt.Errorf("dist: search needs a step cap, got %d", c.Steps)
	}
	for _, lr := range lrs {
		if !(lr > 0) || math.IsInf(lr, 0) {
			return nil, fmt.Errorf("dist: learning rate %g not positive and finite", lr)
		}
	}
	c.Eval.Stop = true
	conv := &Convergence{Target: c.Eval.Target, StepsToTarget: c.Steps}
	best := -1
	for i, lr := range lrs {
		tc := c
		tc.Schedule.Base = lr
		if best >= 0 {
			tc.Steps = conv.StepsToTarget
		}
		t0 := time.Now()
		res, err := Run(ctx, tc)
		if err != nil {
			return nil, fmt.Errorf("dist: learning rate %g: %w", lr, err)
		}
		tr := Trial{LR: lr, MaxSteps: tc.Steps, Steps: len(res.Steps), Diverged: res.Diverged, Time: time.Since(t0)}
		for _, e := range res.Evals {
			tr.Accuracy = max(tr.Accuracy, e.Accuracy)
		}
		if res.StepsToTarget > 0 {
			tr.Reached, tr.Steps = true, res.StepsToTarget
		}
		conv.Trials = append(conv.Trials, tr)
		if progress != nil {
			progress(tr)
		}
		better := tr.Reached && (best < 0 || tr.Steps < conv.StepsToTarget)
		if best < 0 && !tr.Reached && (i == 0 || tr.Accuracy > conv.Accuracy) {
			better = true // none reached yet: keep the most accurate
		}
		if better {
			if tr.Reached {
				best = i
				conv.StepsToTarget = tr.Steps
			}
			conv.Config, conv.LR, conv.Reached, conv.Accuracy = res.Config, lr, tr.Reached, tr.Accuracy
		}
	}
	return conv, nil
}

// Record returns the bench log convergence record of run for cv.
func (cv *Convergence) Record(run string) benchlog.Record {
	r := baseRecord(benchlog.KindConvergence, run, cv.Config)
	r.Target = cv.Target
	r.Accuracy = cv.Accuracy
	r.Reached = cv.Reached
	r.StepsToTarget = cv.StepsToTarget
	r.LearningRate = cv.LR
	return r
}

// LRGrid returns the learning rates SearchLR tries at global batch B: a
// grid around the linear-scaling rule (Goyal et al. 2017) from a rate
// base at a reference batch ref, capped at maxLR before and after the
// factors are applied, with duplicates removed,
//
//	η   = min(maxLR, base · B/ref)
//	η_i = min(maxLR, f_i · η)
//
// in the order of factors, so that past the cap the factors below 1
// still try smaller rates. maxLR <= 0 means no cap.
func LRGrid(base float64, ref, batch int, factors []float64, maxLR float64) []float64 {
	rule := base * float64(batch) / float64(ref)
	if maxLR > 0 {
		rule = math.Min(rule, maxLR)
	}
	var lrs []float64
	for _, f := range factors {
		lr := f * rule
		if maxLR > 0 {
			lr = math.Min(lr, maxLR)
		}
		if !slices.Contains(lrs, lr) {
			lrs = append(lrs, lr)
		}
	}
	return lrs
}
