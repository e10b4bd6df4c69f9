package recipe

import (
	"fmt"
	"slices"
	"strings"

	"scaleplan/engine/dist"
	"scaleplan/engine/optim"
	"scaleplan/model"
)

// Config returns the engine configuration of recipe r and its target
// accuracy (0 when its target is not an accuracy): the model, per-device
// batch, devices as workers, gradient accumulation, epochs or iterations,
// label smoothing, optimizer with its settings, and learning-rate schedule
// with its linear warm-up in epochs. It returns an error for a recipe the
// engine cannot train: another network, an optimizer or schedule it lacks,
// or a schedule or warm-up given in steps.
func Config(r *model.Recipe) (dist.Config, float64, error) {
	var cfg dist.Config
	if !slices.Contains(dist.Models, r.Model) {
		return cfg, 0, fmt.Errorf("recipe %s trains %s; the engine trains %s", r.Name, r.Model, strings.Join(dist.Models, " or "))
	}
	cfg.Model = r.Model
	cfg.Batch, cfg.Workers, cfg.Accumulate = int(r.PerDeviceBatch), r.Devices, max(1, r.GradientAccumulation)
	cfg.Epochs, cfg.Steps = r.Epochs, int(r.Iterations)
	cfg.Smoothing = r.LabelSmoothing
	o, err := optimizer(r)
	if err != nil {
		return cfg, 0, err
	}
	cfg.Optimizer = o
	s, err := schedule(r)
	if err != nil {
		return cfg, 0, err
	}
	cfg.Schedule = s
	target := 0.0
	if t := r.Target(); t.Metric == "accuracy" {
		target = t.Value
	}
	return cfg, target, nil
}

// optimizer returns the engine's settings of r's optimizer.
func optimizer(r *model.Recipe) (optim.Settings, error) {
	var o optim.Settings
	switch r.Optimizer {
	case model.SGD, model.Momentum, model.Nesterov:
		o, _ = optim.Defaults("sgd")
		o.Momentum, o.Nesterov = r.Momentum, r.Optimizer == model.Nesterov
	case model.LARS:
		o, _ = optim.Defaults("lars")
		o.Momentum, o.Eta = r.Momentum, r.LARSEta
	case model.Adam, model.FusedAdam, model.AdamW, model.BertAdam:
		kind := "adam"
		if r.Optimizer == model.AdamW || r.Optimizer == model.BertAdam {
			kind = "adamw"
		}
		o, _ = optim.Defaults(kind)
		if r.Adam != nil {
			o.Beta1, o.Beta2, o.Eps = r.Adam.Beta1, r.Adam.Beta2, r.Adam.Epsilon
		}
	default:
		return o, fmt.Errorf("recipe %s: the engine has no optimizer %s", r.Name, r.Optimizer)
	}
	o.WeightDecay = r.WeightDecay
	return o, nil
}

// schedule returns the engine's settings of r's learning-rate schedule.
func schedule(r *model.Recipe) (optim.ScheduleSettings, error) {
	s := optim.ScheduleSettings{Base: r.BaseLR, Epochs: r.Epochs, End: r.Schedule.EndLR, StartFactor: r.Warmup.StartFactor,
		WarmupEpochs: r.Warmup.Epochs}
	sch := r.Schedule
	if sch.EverySteps != 0 || len(sch.MilestoneSteps) > 0 || sch.StartStep != 0 || sch.MaxDecays != 0 || r.Warmup.Steps != 0 ||
		(r.Warmup.Method != "" && r.Warmup.Method != "linear") {
		return s, fmt.Errorf("recipe %s: the engine's schedules are given in epochs with a linear warm-up", r.Name)
	}
	switch sch.Kind {
	case model.Constant:
		s.Kind = "constant"
	case model.Cosine:
		s.Kind = "cosine"
	case model.Polynomial:
		s.Kind, s.Power = "poly", sch.Power
	case model.Step, model.Exponential:
		s.Kind, s.Gamma, s.DecayEpochs = "step", sch.Factor, sch.EveryEpochs
		if sch.Kind == model.Exponential {
			s.Kind = "exponential"
		}
	case model.MultiStep:
		s.Kind, s.Gamma, s.MilestoneEpochs = "multistep", sch.Factor, sch.MilestoneEpochs
	default:
		return s, fmt.Errorf("recipe %s: the engine has no %s schedule", r.Name, sch.Kind)
	}
	return s, nil
}
