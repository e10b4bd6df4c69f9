package dist

import (
	"fmt"

	"scaleplan/engine/optim"
	"scaleplan/internal/benchlog"
)

// Training is a run that trains a configuration to its end (Steps, or
// Epochs) and evaluates the test set at the end of every epoch, to see
// whether and when it reaches a target accuracy.
type Training struct {
	// Config is the configuration trained, its Eval set to every epoch
	// with Target.
	Config Config
	// Target is the target accuracy, a fraction in [0, 1]; 0: none.
	Target float64
	// StepsPerEpoch is the number of global batches in an epoch.
	StepsPerEpoch int
	// Steps is the number of steps the run trains: Config.Steps, or
	// Config.Epochs epochs' worth.
	Steps int
}

// NewTraining checks c and target and returns the training of c to
// target. It loads c's data set to count the steps of an epoch.
func NewTraining(c Config, target float64) (*Training, error) {
	if !(target >= 0 && target <= 1) {
		return nil, fmt.Errorf("dist: target accuracy %g is not a fraction in [0, 1]", target)
	}
	per, err := c.StepsPerEpoch()
	if err != nil {
		return nil, err
	}
	c.Eval = Eval{Every: per, Target: target}
	t := &Training{Config: c, Target: target, StepsPerEpoch: per, Steps: c.Steps}
	if t.Steps == 0 {
		t.Steps = optim.EpochsToSteps(c.Epochs, per)
	}
	return t, nil
}

// Epoch returns the epochs trained after step, step / StepsPerEpoch.
func (t *Training) Epoch(step int) float64 {
	return float64(step) / float64(t.StepsPerEpoch)
}

// Record returns the bench log convergence record of run for res, the
// result of training t.Config: its accuracy is the final test accuracy,
// and its steps to target the step of the first evaluation at or above
// t.Target, or all the steps run if none was.
func (t *Training) Record(run string, res *Result) benchlog.Record {
	cv := Convergence{Config: res.Config, Target: t.Target, LR: res.Config.Schedule.Base,
		Reached: res.StepsToTarget > 0, StepsToTarget: len(res.Steps), Accuracy: res.FinalAccuracy()}
	if cv.Reached {
		cv.StepsToTarget = res.StepsToTarget
	}
	return cv.Record(run)
}
