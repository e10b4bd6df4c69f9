package model

import (
	"fmt"
	"math"
	"strings"

	"scaleplan/internal/units"
)

// TimedRegion is what MLPerf's timing rules count in a run's time besides
// the training steps: the evaluations at the benchmark's cadence and the
// start-up after run_start. MLPerf Training rules (mlcommons/
// training_policies, training_rules.adoc, "Quality measure" and
// "Deprecated benchmarks quality measure" tables): ResNet-50 "every 4
// epochs with offset 0 or 1 or 2 or 3"; SSD in v0.7 "fixed at epochs=40,
// 50, 55, 60, 65, 70, 75, 80" (commit e382b31), later "every 1 epoch";
// Mask R-CNN, GNMT ("NMT") and Transformer "every 1 epoch"; BERT
// eval_interval_samples = FLOOR(0.05·(230.23·GBS + 3,000,000), 25,000).
// The clock starts at run_start, after at most 20 minutes (v0.7; 30 in
// later rounds) of model initialisation ("Run results").
type TimedRegion struct {
	// EvalEveryEpochs is the epochs between evaluations. Default 0; at most
	// one of EvalEveryEpochs, EvalEpochs, EvalEverySamples and
	// EvalSamplesRule.
	EvalEveryEpochs float64 `yaml:"eval_every_epochs"`
	// EvalEpochs are fixed epochs at which the run evaluates, ascending.
	EvalEpochs []float64 `yaml:"eval_epochs"`
	// EvalEverySamples is the training samples between evaluations.
	EvalEverySamples int64 `yaml:"eval_every_samples"`
	// EvalSamplesRule is the training samples between evaluations as a
	// function of the global batch, MLPerf BERT's rule. Default nil.
	EvalSamplesRule *EvalSamplesRule `yaml:"eval_samples_rule"`
	// EvalScoring is the host's time to score one evaluation after the
	// forward passes (COCO's mAP, BLEU's detokenised scoring), seconds.
	// Default 0.
	EvalScoring units.Seconds `yaml:"eval_scoring"`
	// EvalHostPerSample is the host's time per evaluation sample on each
	// rank, after its forward passes and before training resumes: the
	// conversion of the predictions to the metric's format where the code
	// does it on the critical path (Mask R-CNN's masks pasted into the
	// image and RLE-encoded on the CPU before the scoring is handed to a
	// background process). A rank's share is ⌈samples/replicas⌉. Seconds;
	// default 0.
	EvalHostPerSample units.Seconds `yaml:"eval_host_per_sample"`
	// Checkpoint is the time to save the weights for each evaluation,
	// seconds, where the code evaluates saved weights rather than the live
	// ones (Graphcore's ResNet-50 saves them every evaluation's epochs and
	// evaluates after training). Counted once per evaluation. Default 0.
	Checkpoint units.Seconds `yaml:"checkpoint"`
	// EvalSetup is a one-time cost of the evaluations inside the timed
	// region, seconds: leaving the training loop, loading and compiling
	// the evaluation program where the evaluations run after training.
	// Counted once when the run evaluates. Default 0.
	EvalSetup units.Seconds `yaml:"eval_setup"`
	// Startup is the time between run_start and the first training step
	// (data loader start, first compilation inside the timed region),
	// seconds. Default 0.
	Startup units.Seconds `yaml:"startup"`
	// Source cites the cadence, the scoring and the start-up. Required.
	Source string `yaml:"source"`
}

// EvalSamplesRule is a cadence in training samples that grows with the
// global batch B:
//
//	interval(B) = ⌊Fraction·(PerBatch·B + Offset) / Multiple⌋·Multiple
//
// at least Multiple (MLPerf BERT: eval_interval_samples =
// FLOOR(0.05·(230.23·GBS + 3,000,000), 25,000), skipping 0).
type EvalSamplesRule struct {
	Fraction float64 `yaml:"fraction"`  // required, > 0
	PerBatch float64 `yaml:"per_batch"` // samples per sample of global batch; ≥ 0
	Offset   float64 `yaml:"offset"`    // samples; ≥ 0
	Multiple float64 `yaml:"multiple"`  // the interval's rounding down; required, > 0
}

// Interval returns the samples between evaluations at global batch b.
func (r *EvalSamplesRule) Interval(b int) float64 {
	v := math.Floor(r.Fraction*(r.PerBatch*float64(b)+r.Offset)/r.Multiple) * r.Multiple
	return max(v, r.Multiple)
}

// Evaluations returns how many evaluations a run of epochs epochs over
// trainSamples samples at globalBatch makes. MLPerf's runs stop at the first evaluation
// that meets the target, so the run's last epoch is an evaluation; with a
// cadence of k epochs the evaluations are the run's end and every k epochs
// before it, whatever the offset (0 to k−1) the rules allow:
//
//	⌈E/k⌉                          every k epochs
//	#{e ∈ EvalEpochs : e ≤ E} (+1 if E is past them or between them)
//	⌈E·N/s⌉                         every s samples
//	⌈E·N/interval(B)⌉               EvalSamplesRule at global batch B
//
// with E = epochs and N = trainSamples. It returns 0 for a nil region or
// one without a cadence, and for epochs not positive.
func (t *TimedRegion) Evaluations(epochs float64, trainSamples int64, globalBatch int) int {
	if t == nil || !(epochs > 0) || math.IsInf(epochs, 0) {
		return 0
	}
	const tol = 1e-9 // an epoch count that is a whole number of cadences up to rounding
	switch {
	case t.EvalEveryEpochs > 0:
		return int(math.Ceil(epochs/t.EvalEveryEpochs - tol))
	case len(t.EvalEpochs) > 0:
		n := 0
		for _, e := range t.EvalEpochs {
			if e <= epochs+tol {
				n++
			}
		}
		if n == 0 || math.Abs(t.EvalEpochs[n-1]-epochs) > tol {
			n++ // the evaluation that ends the run, off the list's epochs
		}
		return n
	case t.EvalEverySamples > 0 && trainSamples > 0:
		return int(math.Ceil(epochs*float64(trainSamples)/float64(t.EvalEverySamples) - tol))
	case t.EvalSamplesRule != nil && trainSamples > 0 && globalBatch > 0:
		return int(math.Ceil(epochs*float64(trainSamples)/t.EvalSamplesRule.Interval(globalBatch) - tol))
	}
	return 0
}

// RegionProblem is one problem of a timed region checked on its own: the
// field's path inside the region ("eval_every_epochs", "eval_epochs[1]";
// "" for the region as a whole) and the message.
type RegionProblem struct {
	Field, Msg string
}

// Problems checks a timed region on its own (one given outside a recipe,
// as a scenario's) and returns its problems; none for a good region.
func (t *TimedRegion) Problems() []RegionProblem {
	c := &checker{}
	c.timedRegion(t)
	out := make([]RegionProblem, len(c.issues))
	for i, is := range c.issues {
		f := strings.TrimPrefix(is.rest, "timed_region")
		out[i] = RegionProblem{Field: strings.TrimPrefix(f, "."), Msg: is.msg}
	}
	return out
}

// maxEvalEpochs bounds the cadence in epochs [1 to 80 in the shipped profiles].
const maxEvalEpochs = 1e4

// timedRegion checks a recipe's timed_region.
func (c *checker) timedRegion(t *TimedRegion) {
	if t == nil {
		return
	}
	if strings.TrimSpace(t.Source) == "" {
		c.addf("timed_region.source", "missing source: cite the rules and logs the cadence and start-up come from")
	}
	set := 0
	if t.EvalEveryEpochs != 0 {
		set++
		if !(t.EvalEveryEpochs > 0 && t.EvalEveryEpochs <= maxEvalEpochs) {
			c.addf("timed_region.eval_every_epochs", "must be in (0, %g], got %v", float64(maxEvalEpochs), t.EvalEveryEpochs)
		}
	}
	if len(t.EvalEpochs) > 0 {
		set++
		for i, e := range t.EvalEpochs {
			if !(e > 0 && e <= maxEvalEpochs) || (i > 0 && e <= t.EvalEpochs[i-1]) {
				c.addf(fmt.Sprintf("timed_region.eval_epochs[%d]", i), "must be ascending, each in (0, %g], got %v", float64(maxEvalEpochs), e)
				break
			}
		}
	}
	if t.EvalEverySamples != 0 {
		set++
		c.positiveInt("timed_region.eval_every_samples", t.EvalEverySamples, maxSamples)
	}
	if r := t.EvalSamplesRule; r != nil {
		set++
		if !(r.Fraction > 0 && r.Fraction <= 1) || !(r.PerBatch >= 0 && r.PerBatch <= maxSamples) ||
			!(r.Offset >= 0 && r.Offset <= maxSamples) || !(r.Multiple > 0 && r.Multiple <= maxSamples) {
			c.addf("timed_region.eval_samples_rule", "fraction in (0, 1], per_batch and offset in [0, %g], multiple in (0, %g]; got %+v", float64(maxSamples), float64(maxSamples), *r)
		}
	}
	if set > 1 {
		c.addf("timed_region", "give one of eval_every_epochs, eval_epochs, eval_every_samples and eval_samples_rule, not %d", set)
	}
	c.within("timed_region.eval_scoring", float64(t.EvalScoring), timedSpan, true)
	c.within("timed_region.eval_host_per_sample", float64(t.EvalHostPerSample), timedSpan, true)
	c.within("timed_region.startup", float64(t.Startup), timedSpan, true)
	c.within("timed_region.checkpoint", float64(t.Checkpoint), timedSpan, true)
	c.within("timed_region.eval_setup", float64(t.EvalSetup), timedSpan, true)
}

// timedSpan bounds eval_scoring, startup, checkpoint and eval_setup: MLPerf's 20-minute
// initialisation allowance is far above the 0 to 40 s the logs show.
var timedSpan = span{1e-6, 3600, "1 us to 1 h", showSeconds}
