package optim

import (
	"math"
	"slices"
)

// Schedule gives the learning rate for each step.
type Schedule interface {
	// LR returns the learning rate for step s, the 0-based index of the
	// update about to be applied (s updates have been applied before it).
	// It panics if s is negative.
	LR(s int) float64
}

// Warmup is a linear warm-up: it multiplies a schedule's rate by
//
//	f(s) = f0 + (1 − f0)·(s + 1)/w   for s < w
//	f(s) = 1                         for s ≥ w
//
// so the first update uses f0 + (1 − f0)/w of the rate and update w (step
// s = w − 1) the full rate, as in the MLPerf ResNet-50 schedule (lr·i/w at
// its 1-based iteration i = s + 1). The zero value is no warm-up.
type Warmup struct {
	// Steps is the ramp length w ≥ 0 in steps; EpochsToSteps converts
	// epochs. Default 0 (no warm-up).
	Steps int
	// StartFactor is f0 in [0, 1], the fraction of the rate the ramp
	// starts from (at s = −1). Default 0.
	StartFactor float64
}

// Factor returns the warm-up multiplier f(s).
func (w Warmup) Factor(s int) float64 {
	if s >= w.Steps {
		return 1
	}
	return w.StartFactor + (1-w.StartFactor)*float64(s+1)/float64(w.Steps)
}

func (w Warmup) validate() error {
	if w.Steps < 0 {
		return invalid("warm-up steps %d negative", w.Steps)
	}
	if !(w.StartFactor >= 0 && w.StartFactor <= 1) {
		return invalid("warm-up start factor %g not in [0, 1]", w.StartFactor)
	}
	return nil
}

// EpochsToSteps converts a length in epochs to steps,
//
//	round(epochs · stepsPerEpoch).
func EpochsToSteps(epochs float64, stepsPerEpoch int) int {
	return int(math.Round(epochs * float64(stepsPerEpoch)))
}

// progress returns the fraction of the decay phase done at step s,
//
//	p = clamp((s + 1 − w)/(T − w), 0, 1),
//
// so p = 0 up to the end of warm-up and p = 1 at the last step s = T − 1.
func progress(s, w, total int) float64 {
	p := float64(s+1-w) / float64(total-w)
	return math.Min(math.Max(p, 0), 1)
}

func checkStep(s int) {
	if s < 0 {
		panic(errStep)
	}
}

func validBase(base float64) error {
	if !(base > 0) || math.IsInf(base, 1) {
		return invalid("base learning rate %g not positive and finite", base)
	}
	return nil
}

func validGamma(gamma float64) error {
	if !(gamma > 0 && gamma <= 1) {
		return invalid("decay factor gamma %g not in (0, 1]", gamma)
	}
	return nil
}

func validEnd(end, base float64) error {
	if !(end >= 0 && end <= base) {
		return invalid("end learning rate %g not in [0, base %g]", end, base)
	}
	return nil
}

func validTotal(total int, w Warmup) error {
	if total <= w.Steps {
		return invalid("total steps %d not above warm-up steps %d", total, w.Steps)
	}
	return nil
}

// Constant is a constant rate after warm-up:
//
//	lr(s) = f(s)·base
type Constant struct {
	Base   float64 // base learning rate; no default
	Warmup Warmup  // linear warm-up; default none
}

// LR returns the rate for step s.
func (c Constant) LR(s int) float64 {
	checkStep(s)
	return c.Warmup.Factor(s) * c.Base
}

// Validate reports invalid settings, wrapping ErrSettings.
func (c Constant) Validate() error {
	return first(validBase(c.Base), c.Warmup.validate())
}

// StepDecay multiplies the rate by γ every k steps (torch.optim.lr_scheduler
// StepLR; with k the steps of one epoch and γ per epoch it is also
// ExponentialLR stepped once per epoch):
//
//	lr(s) = f(s)·base·γ^⌊s/k⌋
type StepDecay struct {
	Base   float64 // base learning rate; no default
	Warmup Warmup  // linear warm-up; default none
	Every  int     // decay period k ≥ 1 in steps; no default
	Gamma  float64 // factor γ in (0, 1]; no default
}

// LR returns the rate for step s.
func (d StepDecay) LR(s int) float64 {
	checkStep(s)
	return d.Warmup.Factor(s) * d.Base * math.Pow(d.Gamma, float64(s/d.Every))
}

// Validate reports invalid settings, wrapping ErrSettings.
func (d StepDecay) Validate() error {
	var err error
	if d.Every < 1 {
		err = invalid("step decay period %d steps below 1", d.Every)
	}
	return first(validBase(d.Base), d.Warmup.validate(), err, validGamma(d.Gamma))
}

// MultiStep multiplies the rate by γ at each milestone (MultiStepLR; MXNet's
// MultiFactorScheduler; the Mask R-CNN and SSD decay of seed 000):
//
//	lr(s) = f(s)·base·γ^|{m ∈ milestones : m ≤ s}|
//
// Milestones count steps from the start of training, warm-up included.
type MultiStep struct {
	Base       float64 // base learning rate; no default
	Warmup     Warmup  // linear warm-up; default none
	Milestones []int   // strictly increasing steps ≥ 1; default none
	Gamma      float64 // factor γ in (0, 1]; no default
}

// LR returns the rate for step s.
func (d MultiStep) LR(s int) float64 {
	checkStep(s)
	n, found := slices.BinarySearch(d.Milestones, s)
	if found {
		n++
	}
	return d.Warmup.Factor(s) * d.Base * math.Pow(d.Gamma, float64(n))
}

// Validate reports invalid settings, wrapping ErrSettings.
func (d MultiStep) Validate() error {
	var err error
	for i, m := range d.Milestones {
		if m < 1 || (i > 0 && m <= d.Milestones[i-1]) {
			err = invalid("milestones %v not strictly increasing from 1", d.Milestones)
			break
		}
	}
	return first(validBase(d.Base), d.Warmup.validate(), err, validGamma(d.Gamma))
}

// Exponential decays the rate continuously by γ every k steps
// (tf.train.exponential_decay without staircase):
//
//	lr(s) = f(s)·base·γ^(s/k)
type Exponential struct {
	Base   float64 // base learning rate; no default
	Warmup Warmup  // linear warm-up; default none
	Every  int     // steps k ≥ 1 over which the rate falls by γ; no default
	Gamma  float64 // factor γ in (0, 1]; no default
}

// LR returns the rate for step s.
func (d Exponential) LR(s int) float64 {
	checkStep(s)
	return d.Warmup.Factor(s) * d.Base * math.Pow(d.Gamma, float64(s)/float64(d.Every))
}

// Validate reports invalid settings, wrapping ErrSettings.
func (d Exponential) Validate() error {
	var err error
	if d.Every < 1 {
		err = invalid("exponential decay period %d steps below 1", d.Every)
	}
	return first(validBase(d.Base), d.Warmup.validate(), err, validGamma(d.Gamma))
}

// Cosine anneals the rate from base to end over the steps after warm-up
// (CosineAnnealingLR without restarts):
//
//	lr(s) = f(s)·(end + (base − end)·(1 + cos(π·p))/2),   p = clamp((s + 1 − w)/(T − w), 0, 1)
//
// so the last step s = T − 1 uses end.
type Cosine struct {
	Base   float64 // base learning rate; no default
	Warmup Warmup  // linear warm-up over w steps; default none
	Total  int     // training length T > w in steps; no default
	End    float64 // final rate in [0, base]; default 0
}

// LR returns the rate for step s; steps at or past T get end.
func (d Cosine) LR(s int) float64 {
	checkStep(s)
	p := progress(s, d.Warmup.Steps, d.Total)
	return d.Warmup.Factor(s) * (d.End + (d.Base-d.End)*(1+math.Cos(math.Pi*p))/2)
}

// Validate reports invalid settings, wrapping ErrSettings.
func (d Cosine) Validate() error {
	return first(validBase(d.Base), d.Warmup.validate(), validTotal(d.Total, d.Warmup), validEnd(d.End, d.Base))
}

// Polynomial decays the rate from base to end over the steps after warm-up:
//
//	lr(s) = f(s)·(end + (base − end)·(1 − p)^power),   p = clamp((s + 1 − w)/(T − w), 0, 1)
//
// MLPerf ResNet-50 uses power 2 and end 1e-4 (MLPerfPolynomial).
type Polynomial struct {
	Base   float64 // base learning rate; no default
	Warmup Warmup  // linear warm-up over w steps; default none
	Total  int     // training length T > w in steps; no default
	End    float64 // final rate in [0, base]; default 0 (MLPerf 1e-4)
	Power  float64 // exponent > 0; no default (MLPerf 2)
}

// MLPerfPolynomial returns the MLPerf ResNet-50 schedule: linear warm-up
// from 0 over warmup steps, then polynomial decay of power 2 to 1e-4 at
// step total − 1. This is NVIDIA's PolySchedule of the v0.7 MXNet
// submissions; the TensorFlow reference decays to the same end rate, the
// default of tf.train.polynomial_decay.
func MLPerfPolynomial(base float64, total, warmup int) Polynomial {
	return Polynomial{Base: base, Warmup: Warmup{Steps: warmup}, Total: total, End: 1e-4, Power: 2}
}

// LR returns the rate for step s; steps at or past T get end.
func (d Polynomial) LR(s int) float64 {
	checkStep(s)
	p := progress(s, d.Warmup.Steps, d.Total)
	return d.Warmup.Factor(s) * (d.End + (d.Base-d.End)*math.Pow(1-p, d.Power))
}

// Validate reports invalid settings, wrapping ErrSettings.
func (d Polynomial) Validate() error {
	var err error
	if !(d.Power > 0) || math.IsInf(d.Power, 1) {
		err = invalid("polynomial power %g not positive and finite", d.Power)
	}
	return first(validBase(d.Base), d.Warmup.validate(), validTotal(d.Total, d.Warmup), validEnd(d.End, d.Base), err)
}

// first returns the first non-nil error.
func first(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
