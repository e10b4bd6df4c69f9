package optim

import (
	"fmt"
	"strings"
)

// Kinds lists the optimizer names Defaults and New accept.
var Kinds = []string{"sgd", "lars", "adam", "adamw"}

// Settings describes an optimizer by name and hyperparameters, in the form
// a command line or configuration file gives them. Start from Defaults and
// override fields; New checks the result.
type Settings struct {
	// Kind is one of Kinds.
	Kind string
	// Momentum is μ for sgd and lars; default 0.9 for both.
	Momentum float64
	// Dampening is τ for sgd; default 0.
	Dampening float64
	// Nesterov selects Nesterov momentum for sgd; default false.
	Nesterov bool
	// WeightDecay is λ: sgd 1e-4, lars 1e-4, adam 0, adamw 0.01.
	WeightDecay float64
	// Eta is the LARS trust coefficient η; default 1e-3.
	Eta float64
	// Eps is ε: lars 0, adam and adamw 1e-8.
	Eps float64
	// Beta1 and Beta2 are Adam's moment decays; default 0.9 and 0.999.
	Beta1, Beta2 float64
	// MomentumCorrection selects NVIDIA's momentum correction for lars;
	// default true.
	MomentumCorrection bool
}

// Defaults returns the default settings for kind:
//
//	sgd    momentum SGD of the ImageNet ResNet recipe (seed 001): μ = 0.9, λ = 1e-4
//	lars   MLPerf v0.7 ResNet-50 (seed 000): μ = 0.9, λ = 1e-4, η = 1e-3, ε = 0, momentum correction
//	adam   torch.optim.Adam: β = (0.9, 0.999), ε = 1e-8, λ = 0
//	adamw  torch.optim.AdamW: β = (0.9, 0.999), ε = 1e-8, λ = 0.01
func Defaults(kind string) (Settings, error) {
	switch kind {
	case "sgd":
		return Settings{Kind: kind, Momentum: 0.9, WeightDecay: 1e-4}, nil
	case "lars":
		return Settings{Kind: kind, Momentum: 0.9, WeightDecay: 1e-4, Eta: 1e-3, MomentumCorrection: true}, nil
	case "adam":
		return Settings{Kind: kind, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}, nil
	case "adamw":
		return Settings{Kind: kind, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01}, nil
	}
	return Settings{}, unknown("optimizer", kind, Kinds)
}

// New returns the optimizer s describes, or an error wrapping ErrSettings
// if a value is out of range.
func New(s Settings) (Optimizer, error) {
	var o interface {
		Optimizer
		Validate() error
	}
	switch s.Kind {
	case "sgd":
		o = &SGD{Momentum: s.Momentum, Dampening: s.Dampening, Nesterov: s.Nesterov, WeightDecay: s.WeightDecay}
	case "lars":
		o = &LARS{Momentum: s.Momentum, WeightDecay: s.WeightDecay, Eta: s.Eta, Eps: s.Eps, MomentumCorrection: s.MomentumCorrection}
	case "adam", "adamw":
		o = &Adam{Beta1: s.Beta1, Beta2: s.Beta2, Eps: s.Eps, WeightDecay: s.WeightDecay, Decoupled: s.Kind == "adamw"}
	default:
		return nil, unknown("optimizer", s.Kind, Kinds)
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return o, nil
}

func unknown(what, name string, valid []string) error {
	return fmt.Errorf("%w: unknown %s %q (valid: %s)", ErrSettings, what, name, strings.Join(valid, ", "))
}

// ScheduleKinds lists the schedule names NewSchedule accepts.
var ScheduleKinds = []string{"constant", "step", "multistep", "exponential", "cosine", "poly"}

// ScheduleSettings describes a schedule in epochs, the unit a training
// recipe gives (seed 000: "warm-up 2 epochs, 37 epochs"). NewSchedule
// converts to steps; pass stepsPerEpoch = 1 to give every length in steps.
type ScheduleSettings struct {
	// Kind is one of ScheduleKinds.
	Kind string
	// Base is the learning rate after warm-up; no default.
	Base float64
	// Epochs is the training length, used by cosine and poly; no default.
	Epochs float64
	// WarmupEpochs is the linear warm-up length; default 0.
	WarmupEpochs float64
	// StartFactor is the warm-up's starting fraction f0; default 0.
	StartFactor float64
	// Gamma is the decay factor of step, multistep and exponential; no
	// default.
	Gamma float64
	// DecayEpochs is the decay period of step and exponential; no default.
	DecayEpochs float64
	// MilestoneEpochs are the decay points of multistep; default none.
	MilestoneEpochs []float64
	// End is the final rate of cosine and poly; default 0.
	End float64
	// Power is the exponent of poly; no default (MLPerf 2).
	Power float64
}

// NewSchedule returns the schedule s describes, lengths converted with
// EpochsToSteps, or an error wrapping ErrSettings.
func NewSchedule(s ScheduleSettings, stepsPerEpoch int) (Schedule, error) {
	if stepsPerEpoch < 1 {
		return nil, invalid("steps per epoch %d below 1", stepsPerEpoch)
	}
	steps := func(e float64) int { return EpochsToSteps(e, stepsPerEpoch) }
	if !(s.WarmupEpochs >= 0) {
		return nil, invalid("warm-up epochs %g negative", s.WarmupEpochs)
	}
	w := Warmup{Steps: steps(s.WarmupEpochs), StartFactor: s.StartFactor}
	var d interface {
		Schedule
		Validate() error
	}
	switch s.Kind {
	case "constant":
		d = Constant{Base: s.Base, Warmup: w}
	case "step":
		d = StepDecay{Base: s.Base, Warmup: w, Every: steps(s.DecayEpochs), Gamma: s.Gamma}
	case "multistep":
		m := make([]int, len(s.MilestoneEpochs))
		for i, e := range s.MilestoneEpochs {
			m[i] = steps(e)
		}
		d = MultiStep{Base: s.Base, Warmup: w, Milestones: m, Gamma: s.Gamma}
	case "exponential":
		d = Exponential{Base: s.Base, Warmup: w, Every: steps(s.DecayEpochs), Gamma: s.Gamma}
	case "cosine":
		d = Cosine{Base: s.Base, Warmup: w, Total: steps(s.Epochs), End: s.End}
	case "poly":
		d = Polynomial{Base: s.Base, Warmup: w, Total: steps(s.Epochs), End: s.End, Power: s.Power}
	default:
		return nil, unknown("schedule", s.Kind, ScheduleKinds)
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return d, nil
}
