package predict

import (
	"fmt"

	"scaleplan/internal/units"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// timedCosts returns the evaluation and start-up time of a run of steps
// updates at globalBatch on cfg's devices. A positive overheads.evaluation
// or overheads.startup of the scenario replaces the modelled figure;
// otherwise they come from the recipe's timed_region (none without one):
//
//	evaluation = evaluations(E) · (pass time + checkpoint) + eval setup,  E = steps / ⌈N/B⌉
//
// (eval setup only when there is an evaluation)
// with N the training set (epochs of whole steps, as model.Recipe.Steps
// counts them), evaluations from model.TimedRegion.Evaluations
// and the pass from sim.EvalPassTime over the data set's eval_samples at
// the recipe's eval_batch (else the training micro-batch).
func timedCosts(r *scenarios.Resolved, cfg sim.Config, steps, globalBatch int) (eval, startup units.Seconds, err error) {
	eval, startup = r.Overheads.Evaluation, r.Overheads.Startup
	t := r.Rcp.TimedRegion
	if t == nil {
		return eval, startup, nil
	}
	if startup == 0 {
		startup = t.Startup
	}
	if eval > 0 || r.Data.EvalSamples <= 0 || r.Data.TrainSamples <= 0 {
		return eval, startup, nil
	}
	n64, b64 := r.Data.TrainSamples, int64(max(globalBatch, 1))
	epochs := float64(steps) / float64((n64+b64-1)/b64)
	n := t.Evaluations(epochs, r.Data.TrainSamples, globalBatch)
	if n == 0 {
		return 0, startup, nil
	}
	batch := int(r.Rcp.EvalBatch)
	if batch == 0 {
		batch = cfg.MicroBatch
	}
	pass, err := sim.EvalPassTime(cfg, sim.Evaluation{Samples: r.Data.EvalSamples, Batch: batch, Scoring: t.EvalScoring, HostPerSample: t.EvalHostPerSample})
	if err != nil {
		return 0, 0, fmt.Errorf("evaluation of %s: %w", r.Name, err)
	}
	return units.Seconds(float64(n)*float64(pass+t.Checkpoint)) + t.EvalSetup, startup, nil
}
