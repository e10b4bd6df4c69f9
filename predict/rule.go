package predict

import (
	"fmt"
	"strconv"

	"scaleplan/model"
)

// Rule is how a recipe's learning rate follows the global batch when the
// cluster grows with a fixed per-device batch.
type Rule int

// The scaling rules.
const (
	// Fixed keeps the recipe's learning rate at every global batch: a
	// momentum-SGD recipe without warm-up (seed 001's Caffe2 runs), or an
	// optimizer with no established rule (Adam).
	Fixed Rule = iota
	// Linear scales the learning rate with the global batch and keeps the
	// recipe's warm-up (Goyal et al. 2017):
	//
	//	lr(B) = lr_ref · B / B_ref
	Linear
	// LARS keeps the base learning rate and warm-up: the per-layer trust
	// ratio ‖w‖/‖∇w‖ · eta sets each layer's rate (You et al. 2017).
	LARS
)

// RuleOf returns the rule of a recipe: LARS for a LARS optimizer, Linear
// for SGD, momentum and Nesterov recipes with a warm-up, Fixed otherwise.
func RuleOf(rc *model.Recipe) Rule {
	switch rc.Optimizer {
	case model.LARS:
		return LARS
	case model.SGD, model.Momentum, model.Nesterov:
		if rc.Warmup.Epochs > 0 || rc.Warmup.Steps > 0 {
			return Linear
		}
	}
	return Fixed
}

// String returns "fixed", "linear" or "lars".
func (r Rule) String() string {
	switch r {
	case Fixed:
		return "fixed"
	case Linear:
		return "linear"
	case LARS:
		return "lars"
	}
	return "Rule(" + strconv.Itoa(int(r)) + ")"
}

// LearningRate returns the peak learning rate of rc at global batch b, or
// 0 when the recipe does not give its base rate.
func (r Rule) LearningRate(rc *model.Recipe, b int) float64 {
	if rc.IsUnknown("base_lr") || rc.BaseLR == 0 {
		return 0
	}
	if r == Linear && rc.GlobalBatch > 0 {
		return rc.BaseLR * float64(b) / float64(rc.GlobalBatch)
	}
	return rc.BaseLR
}

// Describe says in words what the rule does for rc, such as "linear
// learning-rate scaling with warm-up: lr = 0.1 × B / 256, 5 warm-up
// epochs".
func (r Rule) Describe(rc *model.Recipe) string {
	lr := strconv.FormatFloat(rc.BaseLR, 'g', -1, 64)
	if rc.IsUnknown("base_lr") {
		lr = "(not given)"
	}
	warm := "no warm-up"
	switch {
	case rc.Warmup.Epochs > 0:
		warm = strconv.FormatFloat(rc.Warmup.Epochs, 'g', -1, 64) + " warm-up epochs"
	case rc.Warmup.Steps > 0:
		warm = Group(rc.Warmup.Steps) + " warm-up steps"
	}
	switch r {
	case Linear:
		return fmt.Sprintf("linear learning-rate scaling with warm-up: lr = %s × B / %s, %s", lr, Group(rc.GlobalBatch), warm)
	case LARS:
		return fmt.Sprintf("LARS: per-layer rates from the weight-to-gradient norm ratio, base lr %s kept, %s", lr, warm)
	}
	return fmt.Sprintf("fixed learning rate %s at every global batch (%s, %s)", lr, rc.Optimizer, warm)
}

// Risk says whether a global batch is past the largest one a recipe is
// known to reach its target with.
type Risk struct {
	// GlobalBatch is the configuration's global batch, samples.
	GlobalBatch int
	// Limit is the largest global batch known to reach the target; 0
	// when unknown.
	Limit int
	// Target is the recipe's primary target.
	Target model.Target
	// Shortfall is the recipe's known loss of quality past Limit; nil when
	// none is known.
	Shortfall *model.Shortfall
	// TrainSamples is the size of the training set, in the batch's unit;
	// 0 when unknown. A global batch larger than it is at risk whatever
	// the limit: an epoch would be less than one step.
	TrainSamples int64
}

// RiskOf returns the risk of training rc at global batch b with the
// given limit (0: unknown).
func RiskOf(rc *model.Recipe, limit, b int) Risk {
	return Risk{GlobalBatch: b, Limit: limit, Target: rc.Target(), Shortfall: rc.Shortfall, TrainSamples: rc.TrainSamples()}
}

// PastDataSet reports whether the global batch is larger than the
// training set.
func (k Risk) PastDataSet() bool { return k.TrainSamples > 0 && int64(k.GlobalBatch) > k.TrainSamples }

// AtRisk reports whether the global batch is past the known limit, or
// past the training set.
func (k Risk) AtRisk() bool { return k.Limit > 0 && k.GlobalBatch > k.Limit || k.PastDataSet() }

// Unknown reports whether no limit is known.
func (k Risk) Unknown() bool { return k.Limit <= 0 }

// Factor returns GlobalBatch / Limit, or 0 when the limit is unknown.
func (k Risk) Factor() float64 {
	if k.Limit <= 0 {
		return 0
	}
	return float64(k.GlobalBatch) / float64(k.Limit)
}

// Short returns "ok", "limit unknown" or "at risk (4.0× 1,024)" for a
// table cell.
func (k Risk) Short() string {
	switch {
	case k.PastDataSet():
		return fmt.Sprintf("at risk (batch > the %s-sample training set)", Group(k.TrainSamples))
	case k.Unknown():
		return "limit unknown"
	case !k.AtRisk():
		return "ok"
	}
	s := fmt.Sprintf("at risk (%s× %s", strconv.FormatFloat(k.Factor(), 'f', 1, 64), Group(int64(k.Limit)))
	if sf := k.Shortfall; sf != nil && int64(k.GlobalBatch) >= sf.GlobalBatch {
		s += fmt.Sprintf("; ≥%s ended %g lower", Group(sf.GlobalBatch), sf.Drop)
	}
	return s + ")"
}

// String says the risk in a sentence, such as "at risk: global batch
// 16,384 is 16.0× the largest known to reach top1 0.7 (1,024); at 4,096
// the recipe ended 0.05 below 1,024's".
func (k Risk) String() string {
	switch {
	case k.PastDataSet():
		return fmt.Sprintf("at risk: global batch %s is larger than the training set of %s samples, so an epoch is less than one step", Group(int64(k.GlobalBatch)), Group(k.TrainSamples))
	case k.Unknown():
		return fmt.Sprintf("global batch %s: the recipe gives no largest batch known to reach its target", Group(int64(k.GlobalBatch)))
	case !k.AtRisk():
		return fmt.Sprintf("global batch %s is within the %s known to reach %s", Group(int64(k.GlobalBatch)), Group(int64(k.Limit)), k.TargetText())
	}
	s := fmt.Sprintf("at risk: global batch %s is %s× the largest known to reach %s (%s)",
		Group(int64(k.GlobalBatch)), strconv.FormatFloat(k.Factor(), 'f', 1, 64), k.TargetText(), Group(int64(k.Limit)))
	if sf := k.Shortfall; sf != nil {
		s += fmt.Sprintf("; at %s the recipe ended %g below %s's", Group(sf.GlobalBatch), sf.Drop, Group(sf.ComparedTo))
		if int64(k.GlobalBatch) > sf.GlobalBatch {
			s += ", and this batch is larger still"
		}
	}
	return s
}

// TargetText names the recipe's primary target, its metric and value
// ("top1 0.759"), or "the target" when the recipe gives none.
func (k Risk) TargetText() string {
	if k.Target.Metric == "" {
		return "the target"
	}
	return fmt.Sprintf("%s %g", k.Target.Metric, k.Target.Value)
}
