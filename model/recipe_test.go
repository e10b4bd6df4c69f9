package model

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"scaleplan/internal/units"
)

func defaultRecipe(t *testing.T, name string) *Recipe {
	t.Helper()
	p, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Recipe(name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRecipesMatchSeeds compares the shipped recipes with the figures of
// /work/shared/SEEDS.md (seeds 000, 001 and 002), column by column.
func TestRecipesMatchSeeds(t *testing.T) {
	type want struct {
		recipe     string
		optimizer  Optimizer
		perDevice  int64
		devices    int
		global     int64
		lr         float64
		kind       ScheduleKind
		power      float64
		warmEpochs float64
		warmSteps  int64
		wd, eta    float64
		smoothing  float64
		epochs     float64
		iterations int64
		targets    []Target
		maxBatch   int64
		time       units.Seconds // first published time to train; 0 if none
	}
	top1 := func(v float64) []Target { return []Target{{Metric: Top1, Value: v}} }
	cases := []want{
		// Seed 000, Table 1, v0.6 column.
		{recipe: "mlperf-v0.6-resnet50", optimizer: LARS, perDevice: 208, devices: 8, global: 1664,
			lr: 5, kind: Polynomial, power: 2, warmEpochs: 5, wd: 2e-4, eta: 1e-3, smoothing: 0.1,
			epochs: 72, targets: top1(0.759), maxBatch: 1664, time: 115.22 * units.Minute},
		// Seed 000, Tables 1 and 2, v0.7 column.
		{recipe: "mlperf-v0.7-resnet50", optimizer: LARS, perDevice: 208, devices: 8, global: 1664,
			lr: 7.4, kind: Polynomial, power: 2, warmEpochs: 2, wd: 1e-4, eta: 1e-3, smoothing: 0.1,
			epochs: 37, targets: top1(0.759), maxBatch: 1664, time: 71.28 * units.Minute},
		// Seed 000, Tables 3 to 6; the largest batches are the MLPerf v0.7
		// runs' (docs/validation.md), not the seed's.
		// Seed 000, Table 3.
		{recipe: "mlperf-v0.7-ssd", optimizer: Momentum, perDevice: 120, devices: 8, global: 960,
			lr: 2.92e-3, kind: MultiStep, warmSteps: 650, wd: 1.6e-4, epochs: 80,
			targets: []Target{{Metric: MAP, Value: 0.23}}, maxBatch: 960},
		// Seed 000, Table 4.
		{recipe: "mlperf-v0.7-maskrcnn", optimizer: Momentum, perDevice: 6, devices: 8, global: 48,
			lr: 0.06, kind: MultiStep, warmSteps: 625, wd: 6e-5, iterations: 80000,
			targets: []Target{{Metric: BoxMAP, Value: 0.377}, {Metric: MaskMAP, Value: 0.339}}, maxBatch: 48},
		// Seed 000, Table 5.
		{recipe: "mlperf-v0.7-transformer", optimizer: Adam, perDevice: 10240, devices: 8, global: 81920,
			lr: 1.25e-3, kind: InvSqrt, warmSteps: 1000, smoothing: 0.1, epochs: 30,
			targets: []Target{{Metric: BLEU, Value: 25}}, maxBatch: 81920},
		// Seed 000, Table 6.
		{recipe: "mlperf-v0.7-gnmt", optimizer: FusedAdam, perDevice: 256, devices: 8, global: 2048,
			lr: 2.8e-3, kind: Step, warmSteps: 200, smoothing: 0.1, epochs: 8,
			targets: []Target{{Metric: BLEU, Value: 24}}, maxBatch: 2048},
		// Seed 001: batch 32 per GPU, momentum SGD, lr 0.1 × 0.1 every 30
		// epochs, 90 epochs; 32 GPUs (1024) is the largest on target.
		{recipe: "tsubame3-resnet50", optimizer: Momentum, perDevice: 32, devices: 32, global: 1024,
			lr: 0.1, kind: Step, wd: 1e-4, epochs: 90, targets: top1(0.70), maxBatch: 1024,
			time: 604987 * units.Second},
		// Seed 002: LARS, polynomial decay, 350 epochs, local batch 3, 2
		// pipeline stages on POD256, global 6144, 82.54 ± 0.13 %.
		{recipe: "graphcore-efficientnet-b4", optimizer: LARS, perDevice: 3, devices: 256, global: 6144,
			lr: 8.4853, kind: Polynomial, power: 2, warmEpochs: 70, wd: 2.5e-6, smoothing: 0.1, epochs: 350,
			targets: []Target{{Metric: Top1, Value: 0.8254, Spread: 0.0013}}, maxBatch: 6144,
			time: 2 * units.Hour},
	}
	for _, w := range cases {
		r := defaultRecipe(t, w.recipe)
		got := want{
			recipe: r.Name, optimizer: r.Optimizer, perDevice: r.PerDeviceBatch, devices: r.Devices,
			global: r.GlobalBatch, lr: r.BaseLR, kind: r.Schedule.Kind, power: r.Schedule.Power,
			warmEpochs: r.Warmup.Epochs, warmSteps: r.Warmup.Steps, wd: r.WeightDecay, eta: r.LARSEta,
			smoothing: r.LabelSmoothing, epochs: r.Epochs, iterations: r.Iterations, targets: r.Targets,
			maxBatch: r.MaxGlobalBatch,
		}
		if len(r.TimeToTrain) > 0 {
			got.time = r.TimeToTrain[0].Time
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s:\n got %+v\nwant %+v", w.recipe, got, w)
		}
	}
}

func TestRecipeDetails(t *testing.T) {
	mr := defaultRecipe(t, "mlperf-v0.7-maskrcnn")
	if !reflect.DeepEqual(mr.Schedule.MilestoneSteps, []int64{24000, 32000}) ||
		mr.Warmup.StartFactor != 9.6e-5 || mr.Warmup.Method != "mlperf_linear" {
		t.Errorf("mask r-cnn: steps %v, warm-up factor %v method %q; seed 000: (24000, 32000), 9.6e-5, mlperf_linear",
			mr.Schedule.MilestoneSteps, mr.Warmup.StartFactor, mr.Warmup.Method)
	}
	if ssd := defaultRecipe(t, "mlperf-v0.7-ssd"); ssd.EvalBatch != 160 || !ssd.IsUnknown("schedule.milestones") {
		t.Errorf("ssd: eval batch %d, milestones unknown %v; seed 000: 160, step points not given", ssd.EvalBatch, ssd.IsUnknown("schedule.milestones"))
	}
	tr := defaultRecipe(t, "mlperf-v0.7-transformer")
	if tr.BatchUnit != Token || tr.Adam != nil || !tr.IsUnknown("adam") {
		t.Errorf("transformer: batch unit %q, adam %v; want tokens and betas/eps unknown (seed 000's cells are garbled)", tr.BatchUnit, tr.Adam)
	}
	g := defaultRecipe(t, "mlperf-v0.7-gnmt")
	if g.Schedule.StartStep != 6053 || g.Schedule.EverySteps != 859 {
		t.Errorf("gnmt: decay from step %d every %d; seed 000: remain steps 6053, interval 859", g.Schedule.StartStep, g.Schedule.EverySteps)
	}
	ts := defaultRecipe(t, "tsubame3-resnet50")
	if ts.Schedule.Factor != 0.1 || ts.Schedule.EveryEpochs != 30 {
		t.Errorf("tsubame: ×%v every %v epochs; seed 001: ×0.1 every 30", ts.Schedule.Factor, ts.Schedule.EveryEpochs)
	}
	if s := ts.Shortfall; s == nil || *s != (Shortfall{GlobalBatch: 4096, ComparedTo: 1024, Drop: 0.05}) {
		t.Errorf("tsubame shortfall %+v; seed 001: 128 GPUs (4096) about 0.05 below 32 GPUs (1024)", s)
	}
	gc := defaultRecipe(t, "graphcore-efficientnet-b4")
	if gc.PipelineStages != 2 || gc.GradientAccumulation != 16 || gc.Precision != FP16 || gc.MasterWeights != FP16 ||
		gc.Model != "efficientnet-b4-g16" || !gc.TimeToTrain[0].UpperBound {
		t.Errorf("graphcore: stages %d, accumulation %d, precision %s/%s, model %s; seed 002: 2 stages, FP16 master weights, G16, under 2 h",
			gc.PipelineStages, gc.GradientAccumulation, gc.Precision, gc.MasterWeights, gc.Model)
	}
	// 2^-9.5 × 6144, Graphcore's base_learning_rate_exponent convention.
	if lr := math.Pow(2, -9.5) * 6144; math.Abs(gc.BaseLR-lr) > 1e-4 {
		t.Errorf("graphcore base lr %v, want 2^-9.5 × 6144 = %v", gc.BaseLR, lr)
	}
	for _, name := range []string{"engine-mlp", "engine-cnn"} {
		r := defaultRecipe(t, name)
		if r.Optimizer != Momentum || r.Dataset != "fashion-mnist" {
			t.Errorf("%s: optimizer %s on %s, want momentum SGD on fashion-mnist", name, r.Optimizer, r.Dataset)
		}
	}
	if v := defaultRecipe(t, "engine-mlp").Target().Value; v != 0.88 {
		t.Errorf("engine-mlp target %v, want 0.88", v)
	}
	if v := defaultRecipe(t, "engine-cnn").Target().Value; v != 0.90 {
		t.Errorf("engine-cnn target %v, want 0.90", v)
	}
}

// TestTSUBAMETimes compares the recipe's published times with seed 001,
// Table 2 (Caffe2, seconds to 90 epochs).
func TestTSUBAMETimes(t *testing.T) {
	table := map[string][4]float64{ // 1, 4, 32, 128 GPUs
		"a-default":      {604987, 154931, 44862, 135905},
		"b-staged":       {593992, 88185, 21111, 10089},
		"c-staged-verbs": {608629, 152852, 21774, 5989},
	}
	gpus := [4]int{1, 4, 32, 128}
	r := defaultRecipe(t, "tsubame3-resnet50")
	seen := 0
	for _, m := range r.TimeToTrain {
		row, ok := table[m.Setup]
		if !ok {
			t.Errorf("unexpected setup %q", m.Setup)
			continue
		}
		for i, g := range gpus {
			if m.Devices == g {
				seen++
				if float64(m.Time) != row[i] || m.GlobalBatch != int64(32*g) || m.System != "tsubame3" {
					t.Errorf("%s at %d GPUs: %v, batch %d on %s; seed 001: %v s, batch %d", m.Setup, g, m.Time, m.GlobalBatch, m.System, row[i], 32*g)
				}
			}
		}
	}
	if seen != 12 {
		t.Errorf("%d of seed 001's 12 times listed", seen)
	}
}

func TestStepsPerEpoch(t *testing.T) {
	cases := []struct{ batch, samples, want int }{
		{1664, 1281167, 770},  // 769.93 rounded up
		{1024, 1281167, 1252}, // 1251.14
		{100, 1000, 10},       // exact
		{2000, 1000, 1},       // one partial batch
		{1, 7, 7},
	}
	var r Recipe
	for _, c := range cases {
		if got := r.StepsPerEpoch(c.batch, c.samples); got != c.want {
			t.Errorf("StepsPerEpoch(%d, %d) = %d, want %d", c.batch, c.samples, got, c.want)
		}
	}
	mustPanic(t, badGlobalBatch, func() { r.StepsPerEpoch(0, 10) })
	mustPanic(t, badTrainSamples, func() { r.StepsPerEpoch(10, 0) })
}

func TestSteps(t *testing.T) {
	cases := []struct {
		recipe  string
		batch   int
		want    int
		maximum bool // count the recipe's own length, without Reached
	}{
		{"mlperf-v0.7-resnet50", 1664, 37 * 770, false},   // 28,490
		{"mlperf-v0.7-resnet50", 3328, 37 * 385, false},   // ⌈1281167/3328⌉ = 385
		{"mlperf-v0.6-resnet50", 1664, 72 * 770, false},   // 55,440
		{"tsubame3-resnet50", 1024, 90 * 1252, false},     // 112,680
		{"tsubame3-resnet50", 4096, 90 * 313, false},      // ⌈1281167/4096⌉ = 313
		{"engine-mlp", 64, 10 * 938, false},               // ⌈60000/64⌉ = 938
		{"mlperf-v0.7-maskrcnn", 48, 80000, true},         // iterations at the reference batch
		{"mlperf-v0.7-maskrcnn", 96, 40000, true},         // same images seen
		{"mlperf-v0.7-maskrcnn", 100, 38400, true},        // 80000·48/100
		{"mlperf-v0.7-maskrcnn", 7, 548572, true},         // ⌈3,840,000/7⌉
		{"graphcore-efficientnet-b4", 6144, 73150, false}, // 350 × ⌈1281167/6144⌉ = 350 × 209
		// Reached: where NVIDIA's MLPerf v0.7 runs met the targets.
		{"mlperf-v0.7-maskrcnn", 48, 14 * 2444, false},      // ⌈117266/48⌉ = 2444
		{"mlperf-v0.7-transformer", 81920, 3 * 1648, false}, // ⌈135,000,000/81920⌉ = 1648
		{"mlperf-v0.7-transformer", 81920, 30 * 1648, true},
		{"mlperf-v0.7-gnmt", 2048, 4 * 1885, false},      // ⌈3,860,480/2048⌉ = 1885
		{"mlperf-v0.7-gnmt-dgx1", 2048, 4 * 1938, false}, // ⌈3,969,024/2048⌉ = 1938
		{"mlperf-v0.7-ssd", 960, 50 * 123, false},        // ⌈117266/960⌉ = 123
	}
	for _, c := range cases {
		r := defaultRecipe(t, c.recipe)
		if c.maximum {
			r.Reached = nil
		}
		if got := r.Steps(c.batch); got != c.want {
			t.Errorf("%s.Steps(%d) = %d, want %d (maximum %v)", c.recipe, c.batch, got, c.want, c.maximum)
		}
	}

	// Against epochs × dataset / batch: rounding up each epoch adds less
	// than one step per epoch.
	p, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range p.RecipeNames() {
		r := p.Recipes[name]
		epochs, _ := r.Length()
		if epochs == 0 {
			continue
		}
		n := float64(p.Datasets[r.Dataset].TrainSamples)
		for _, b := range []int{1, 32, 1000, 4096, 65536} {
			exact := epochs * n / float64(b)
			got := float64(r.Steps(b))
			if got < exact || got >= exact+math.Ceil(epochs)+1 {
				t.Errorf("%s.Steps(%d) = %v, epochs × dataset / batch = %v", name, b, got, exact)
			}
		}
	}

	// A fractional epoch runs its share of a full epoch's steps, rounded up.
	q, err := Parse(strings.NewReader(fractionalEpochs))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := q.Recipe("half")
	// 1000 samples at 300: 4 steps per epoch; 2.5 epochs = 8 + 2.
	if got := r.Steps(300); got != 10 {
		t.Errorf("2.5 epochs of 1000 at 300: Steps = %d, want 10", got)
	}
	mustPanic(t, badGlobalBatch, func() { r.Steps(0) })
	mustPanic(t, unlinkedRecipe, func() { (&Recipe{Epochs: 1}).Steps(10) })
}

const fractionalEpochs = `
datasets:
  tiny: {train_samples: 1000, bytes_per_sample: 1 kB, input_shape: [4]}
models:
  lin: {task: regression, dataset: tiny, params: 5, forward_flops: 10 FLOP, activations: {fp32: 16 B}, class: mlp}
recipes:
  half:
    model: lin
    source: test
    optimizer: sgd
    per_device_batch: 300
    devices: 1
    base_lr: 0.1
    schedule: {kind: constant}
    epochs: 2.5
    targets: [{metric: accuracy, value: 0.5}]
`

func TestTarget(t *testing.T) {
	r := defaultRecipe(t, "mlperf-v0.7-maskrcnn")
	if got := r.Target(); got != (Target{Metric: BoxMAP, Value: 0.377}) {
		t.Errorf("primary target %+v, want box mAP 0.377", got)
	}
	if got := (&Recipe{}).Target(); got != (Target{}) {
		t.Errorf("target of an empty recipe %+v", got)
	}
	for o, n := range map[Optimizer]int{SGD: 0, Momentum: 1, Nesterov: 1, LARS: 1, RMSProp: 2, Adam: 2, FusedAdam: 2, AdamW: 2, LAMB: 2, "novograd": 0} {
		if got := o.StateValues(); got != n {
			t.Errorf("%s.StateValues() = %d, want %d", o, got, n)
		}
	}
}
