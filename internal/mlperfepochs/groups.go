package mlperfepochs

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"scaleplan/fit"
)

// Subject is what a benchmark trains, to what quality, on how many
// samples per epoch.
type Subject struct {
	Model  string  // the catalogue's name (model/profiles), or the benchmark's where the catalogue has none
	Target float64 // MLPerf Training's quality target, fraction
	// N is the training samples of an epoch; 1 for BERT, whose table
	// counts samples. ImageNet-1k 1,281,167 and COCO 2017's 117,266
	// annotated images (fit/logs mlperfTrainSamples, model/profiles
	// datasets.yaml); MLPerf's OpenImages subset for RetinaNet 1,170,301
	// images (mlcommons/training single_stage_detector README, "Dataset").
	N float64
}

// Unit is what the benchmark's table counts: "samples" for BERT (N = 1),
// "epochs" for the others.
func (s Subject) Unit() string {
	if s.N == 1 {
		return "samples"
	}
	return "epochs"
}

// Subjects are the MLPerf Training targets by benchmark (training rules,
// "Benchmarks" table: ResNet-50 75.90 % top-1, BERT 0.720 masked-LM
// accuracy, SSD 23.0 mAP, RetinaNet 34.0 mAP, Mask R-CNN 0.377 box mAP).
var Subjects = map[string]Subject{
	"resnet":    {Model: "resnet50", Target: 0.759, N: 1281167},
	"bert":      {Model: "bert-large", Target: 0.720, N: 1},
	"ssd":       {Model: "ssd-resnet34", Target: 0.23, N: 117266},
	"retinanet": {Model: "retinanet-resnext50", Target: 0.34, N: 1170301},
	"maskrcnn":  {Model: "maskrcnn-r50-fpn", Target: 0.377, N: 117266},
}

// MinBatches is the fewest distinct global batches a group needs to be
// fitted: two parameters and at least one degree of freedom.
const MinBatches = 3

// Group is the closed-division submissions of one benchmark and optimizer
// family, fitted when they span MinBatches distinct batches.
type Group struct {
	Bench, Optimizer string
	Subject          Subject
	Rows             []Row
	Fit              *fit.EpochsFit // nil: fewer than MinBatches batches
	Power            *fit.PowerFit
	Holdouts         []fit.Holdout // the law's, per round
	PowerHoldouts    []fit.Holdout // the power law's, per round
}

// Analyse groups a benchmark's rows by optimizer family (open division
// left out: other models and hyperparameters), sorted by family, and fits
// E(B) = E_min·(1 + B/B_noise) and a power law to each group with enough
// distinct batches, with a leave-one-round-out evaluation of both.
func Analyse(bench string, rows []Row) ([]*Group, error) {
	sub, ok := Subjects[bench]
	if !ok {
		return nil, fmt.Errorf("benchmark %q: want one of %s", bench, strings.Join(slices.Sorted(maps.Keys(Subjects)), ", "))
	}
	byOpt := map[string][]Row{}
	for _, r := range rows {
		if r.Division == "open" {
			continue
		}
		fam := OptimizerFamily(r.Optimizer)
		byOpt[fam] = append(byOpt[fam], r)
	}
	var out []*Group
	for _, opt := range slices.Sorted(maps.Keys(byOpt)) {
		g := &Group{Bench: bench, Optimizer: opt, Subject: sub, Rows: byOpt[opt]}
		out = append(out, g)
		b, e, rounds := g.Points()
		if len(Distinct(b)) < MinBatches {
			continue // listed, not fitted
		}
		var err error
		if g.Fit, err = fit.Epochs(b, e, sub.N, nil); err != nil {
			return nil, fmt.Errorf("%s %s: %w", bench, opt, err)
		}
		if g.Power, err = fit.Power(b, e); err != nil {
			return nil, fmt.Errorf("%s %s: %w", bench, opt, err)
		}
		g.Holdouts, _ = fit.LeaveOneGroupOut(b, e, rounds, LawFitter(sub.N))
		g.PowerHoldouts, _ = fit.LeaveOneGroupOut(b, e, rounds, PowerFitter)
	}
	return out, nil
}

// LawFitter fits E(B) = E_min·(1 + B/B_noise) with n samples per epoch,
// refusing fewer than MinBatches distinct batches.
func LawFitter(n float64) fit.Fitter {
	return func(b, e []float64) (func(float64) float64, error) {
		if err := enoughBatches(b); err != nil {
			return nil, err
		}
		f, err := fit.Epochs(b, e, n, nil)
		if err != nil {
			return nil, err
		}
		return f.Predict, nil
	}
}

// PowerFitter fits E(B) = A·B^k, refusing fewer than MinBatches distinct
// batches.
func PowerFitter(b, e []float64) (func(float64) float64, error) {
	if err := enoughBatches(b); err != nil {
		return nil, err
	}
	f, err := fit.Power(b, e)
	if err != nil {
		return nil, err
	}
	return f.Predict, nil
}

func enoughBatches(b []float64) error {
	if n := len(Distinct(b)); n < MinBatches {
		return fmt.Errorf("%d distinct batches: want %d", n, MinBatches)
	}
	return nil
}

// Points are the group's global batch, mean epochs and round per
// submission, in the order of Rows.
func (g *Group) Points() (b, e []float64, rounds []string) {
	for _, r := range g.Rows {
		b, e, rounds = append(b, r.GlobalBatch), append(e, r.Mean), append(rounds, r.Round)
	}
	return b, e, rounds
}

// Batches are the group's global batches, one per submission.
func (g *Group) Batches() []float64 { b, _, _ := g.Points(); return b }

// Distinct returns the distinct values of x, sorted.
func Distinct(x []float64) []float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return slices.Compact(s)
}
