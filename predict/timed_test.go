package predict

import (
	"math"
	"testing"

	"scaleplan/sim"
)

// timedScenario is a one-device-calibrated DGX A100 scenario of the MLPerf
// v0.7 ResNet-50 recipe at batch 100 on the given devices, with extra
// fields appended to its flow mapping.
func timedScenario(devices, extra string) string {
	return "{name: timed, system: dgx-a100, recipe: mlperf-v0.7-resnet50, input: {storage: synthetic}, " +
		"sweep: {devices: " + devices + ", batch: [100]}, calibration: {v0: 1000, t: 10 ms, devices: 1}" + extra + "}"
}

// TestTimedRegionClosedForm checks the evaluations and start-up a
// prediction counts for an MLPerf recipe against the closed form: 37
// epochs evaluated every 4 is ⌈37/4⌉ = 10 passes, each ⌈50,000/(N·100)⌉
// forward steps of a third of (100·PerSample + Fixed) at the training
// micro-batch of 100 (the recipe gives no eval_batch), plus on two devices
// the metric's all-reduce; start-up is the recipe's 0.85 s.
func TestTimedRegionClosedForm(t *testing.T) {
	r := parse(t, timedScenario("[1, 2]", ""))
	p, err := Predict(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, devices := range []int{1, 2} {
		row := p.Rows[i]
		if !row.OK() {
			t.Fatal(row.Err)
		}
		cfg, err := r.Build(row.Point)
		if err != nil {
			t.Fatal(err)
		}
		cm := cfg.Compute
		steps := math.Ceil(50000 / float64(100*devices))
		want := 10 * steps * (100*float64(cm.PerSample) + float64(cm.Fixed)) / 3
		got := float64(row.Evaluation)
		switch {
		case devices == 1 && math.Abs(got-want) > 1e-9*want:
			t.Errorf("1 device: evaluation %v s, want %v s", got, want)
		case devices == 2:
			ar, err := sim.AllReduceTime(cfg, sim.EvalMetricBytes)
			if err != nil {
				t.Fatal(err)
			}
			if w := want + 10*float64(ar); math.Abs(got-w) > 1e-9*w {
				t.Errorf("2 devices: evaluation %v s, want %v s", got, w)
			}
		}
		if row.Startup != 0.85 {
			t.Errorf("%d devices: start-up %v, want the recipe's 0.85 s", devices, row.Startup)
		}
		if tt := TimeToTarget(r, row.Result); tt != row.Time {
			t.Errorf("%d devices: TimeToTarget %v, Predict %v", devices, tt, row.Time)
		}
	}
}

// TestTimedRegionCheckpoint checks that a checkpoint per evaluation and a
// one-time evaluation setup add n·checkpoint + setup to the evaluation
// time: 37 epochs evaluated every 4 are 10 evaluations, so 2 s a
// checkpoint and 30 s of setup add 10·2 + 30 = 50 s.
func TestTimedRegionCheckpoint(t *testing.T) {
	r := parse(t, timedScenario("[2]", ""))
	p, err := Predict(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	base := float64(p.Rows[0].Evaluation)
	rcp := *r.Rcp
	tr := *rcp.TimedRegion
	tr.Checkpoint, tr.EvalSetup = 2, 30
	rcp.TimedRegion = &tr
	r.Rcp = &rcp
	if p, err = Predict(r, Options{}); err != nil {
		t.Fatal(err)
	}
	if got, want := float64(p.Rows[0].Evaluation), base+10*2+30; math.Abs(got-want) > 1e-9*want {
		t.Errorf("evaluation %v s, want %v s (%v s without checkpoints and setup)", got, want, base)
	}
}

// TestTimedRegionOverride checks that the scenario's positive overheads
// replace the modelled ones and that a recipe without a timed region
// counts none.
func TestTimedRegionOverride(t *testing.T) {
	r := parse(t, timedScenario("[2]", ", overheads: {startup: 5 s, evaluation: 7 s}"))
	p, err := Predict(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if row := p.Rows[0]; row.Evaluation != 7 || row.Startup != 5 {
		t.Errorf("evaluation %v, start-up %v; want the scenario's 7 s and 5 s", row.Evaluation, row.Startup)
	}
	r.Overheads.Startup, r.Overheads.Evaluation = 0, 0
	rcp := *r.Rcp
	rcp.TimedRegion = nil
	r.Rcp = &rcp
	p, err = Predict(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if row := p.Rows[0]; row.Evaluation != 0 || row.Startup != 0 {
		t.Errorf("no timed region: evaluation %v, start-up %v; want 0", row.Evaluation, row.Startup)
	}
}

// TestScenarioTimedRegion checks a scenario's own timed_region replacing
// the recipe's: evaluated every 5 epochs, 37 epochs are ⌈37/5⌉ = 8 passes
// (the recipe's every 4 gives 10), each adding its rank's ⌈50,000/2⌉ =
// 25,000 images at 1 ms of host time and 3 s of scoring to the forward
// passes; start-up is the scenario's 2 s.
func TestScenarioTimedRegion(t *testing.T) {
	base := parse(t, timedScenario("[2]", ""))
	p, err := Predict(base, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pass := float64(p.Rows[0].Evaluation) / 10 // the recipe's 10 forward-only passes
	own := parse(t, timedScenario("[2]", ", timed_region: {eval_every_epochs: 5, eval_host_per_sample: 1 ms, "+
		"eval_scoring: 3 s, startup: 2 s, source: a test}"))
	if p, err = Predict(own, Options{}); err != nil {
		t.Fatal(err)
	}
	row := p.Rows[0]
	if want := 8 * (pass + 25000*1e-3 + 3); math.Abs(float64(row.Evaluation)-want) > 1e-9*want {
		t.Errorf("evaluation %v s, want %v s", float64(row.Evaluation), want)
	}
	if row.Startup != 2 {
		t.Errorf("start-up %v, want the scenario's 2 s", row.Startup)
	}
	if base.Rcp.TimedRegion.EvalEveryEpochs != 4 {
		t.Errorf("the recipe's region changed: every %v epochs", base.Rcp.TimedRegion.EvalEveryEpochs)
	}
}
