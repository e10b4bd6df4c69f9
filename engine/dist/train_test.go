package dist

import (
	"context"
	"strings"
	"testing"

	"scaleplan/internal/benchlog"
)

// A training evaluates every epoch: 2000 samples in batches of 8 are 250
// steps an epoch, and 0.1 epoch is 25 steps, evaluated once at the end.
func TestTraining(t *testing.T) {
	c := tiny()
	c.Steps, c.Epochs = 0, 0.1
	tr, err := NewTraining(c, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if tr.StepsPerEpoch != 250 || tr.Steps != 25 || tr.Config.Eval != (Eval{Every: 250, Target: 0.5}) || tr.Epoch(125) != 0.5 {
		t.Fatalf("training %+v", tr)
	}
	res, err := Run(context.Background(), tr.Config)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 25 || len(res.Evals) != 1 || res.Evals[0].Step != 25 {
		t.Errorf("%d steps, evaluations %+v; want 25 steps, one evaluation at the last", len(res.Steps), res.Evals)
	}
	for _, target := range []float64{-0.1, 1.5} {
		if _, err := NewTraining(c, target); err == nil || !strings.Contains(err.Error(), "not a fraction in [0, 1]") {
			t.Errorf("target %g: %v", target, err)
		}
	}
	c.Batch = 4096
	if _, err := NewTraining(c, 0.5); err == nil {
		t.Error("a batch above the data set gave no error")
	}
}

// The convergence record of a training: the final accuracy, and the
// step of the first evaluation at the target, or all the steps run.
func TestTrainingRecord(t *testing.T) {
	c := tiny()
	c.Workers, c.Accumulate = 2, 3
	tr := &Training{Config: c, Target: 0.75, StepsPerEpoch: 10, Steps: 40}
	res := &Result{Config: c.WithDefaults(), Steps: make([]StepStats, 40), Evals: []EvalResult{{Step: 20, Accuracy: 0.8}, {Step: 40, Accuracy: 0.7}}}
	for _, c := range []struct {
		target, steps int
		reached       bool
	}{{0, 40, false}, {20, 20, true}} {
		res.StepsToTarget = c.target
		r := tr.Record("r", res)
		if r.Kind != benchlog.KindConvergence || r.Run != "r" || r.Model != "mlp-784-32-10" || r.Workers != 2 || r.Batch != 8 || r.Accumulate != 3 ||
			r.GlobalBatch != 48 || r.Target != 0.75 || r.Accuracy != 0.7 || r.Reached != c.reached || r.StepsToTarget != c.steps ||
			r.LearningRate != 0.02 || r.Transport != "inproc" {
			t.Errorf("steps to target %d: record %+v", c.target, r)
		}
		if err := r.Validate(); err != nil {
			t.Errorf("record: %v", err)
		}
	}
}
