package cmd

import (
	"fmt"
	"math"

	"github.com/urfave/cli/v2"

	"scaleplan/engine/dist"
	"scaleplan/engine/optim"
	"scaleplan/internal/benchlog"
	"scaleplan/internal/tables"
)

func benchStepsCommand() *cli.Command {
	return &cli.Command{
		Name:      "steps",
		Usage:     "measure steps to a target accuracy for each global batch, learning rate searched",
		ArgsUsage: " ",
		Description: "For every global batch B of --batch, trains momentum SGD at each learning rate of\n" +
			"a small grid around the linear-scaling rule,\n\n" +
			"   rule = min(--lr-max, --lr * B / --lr-batch)\n" +
			"   lr   = min(--lr-max, f * rule)   for f in --lr-factors, in that order\n\n" +
			"evaluating on --validation samples held out of the training set, first every\n" +
			"--eval-every steps and then every --eval-growth fraction of the steps done (so the\n" +
			"step count is known to about that precision at any batch), until the accuracy\n" +
			"reaches --target or --max-epochs have passed. The rate that reaches the target\n" +
			"in the fewest steps is kept (Shallue et al. 2019); once one has, later rates\n" +
			"stop at its count. Each batch gives one convergence record (global_batch,\n" +
			"target, accuracy, reached, steps_to_target, learning_rate) from which\n" +
			"`scaleplan fit` draws S(B) = S_min (1 + B_noise/B) and its three regimes.\n\n" +
			"The defaults (MLP, Fashion-MNIST, target 0.85, batches 16 to 4096) run in\n" +
			"minutes with an OpenBLAS build on two cores; see docs/bench.md.\n\n" +
			"Example:\n" +
			"   OPENBLAS_CORETYPE=SkylakeX scaleplan bench steps --out steps.jsonl",
		Flags: append([]cli.Flag{
			&cli.IntSliceFlag{Name: "batch", Value: cli.NewIntSlice(16, 32, 64, 128, 256, 512, 1024, 2048, 4096), Usage: "global batches `B,...` to sweep"},
			&cli.IntFlag{Name: "workers", Value: 1, Usage: "data-parallel workers (each global batch must be a multiple)"},
			&cli.Float64Flag{Name: "target", Value: 0.85, Usage: "target validation accuracy, a fraction"},
			&cli.Float64Flag{Name: "max-epochs", Value: 30, Usage: "step cap of a trial, in epochs"},
			&cli.Float64Flag{Name: "lr", Value: 0.025, Usage: "learning rate at the reference batch"},
			&cli.IntFlag{Name: "lr-batch", Value: 64, Usage: "reference batch of --lr"},
			&cli.Float64SliceFlag{Name: "lr-factors", Value: cli.NewFloat64Slice(1, 0.5, 2), Usage: "factors `f,...` of the linear-scaling rate, in the order tried"},
			&cli.Float64Flag{Name: "lr-max", Value: 0.2, Usage: "largest learning rate tried"},
			&cli.Float64Flag{Name: "momentum", Value: 0.9, Usage: "momentum of the SGD"},
			&cli.Float64Flag{Name: "warmup-epochs", Value: 0, Usage: "linear learning-rate warm-up, in epochs"},
			&cli.IntFlag{Name: "validation", Value: 5000, Usage: "training samples held out for evaluation"},
			&cli.IntFlag{Name: "eval-every", Value: 5, Usage: "shortest evaluation period, in steps"},
			&cli.Float64Flag{Name: "eval-growth", Value: 0.05, Usage: "evaluation period as a fraction of the steps done"},
			plotFlag(),
		}, engineFlags()...),
		Action: runBenchSteps,
	}
}

// stepsSweep is the configuration the header of a steps log records.
type stepsSweep struct {
	Command   string      `json:"command"`
	Batches   []int       `json:"global_batches"`
	Target    float64     `json:"target"`
	MaxEpochs float64     `json:"max_epochs"`
	LR        float64     `json:"lr"`
	LRBatch   int         `json:"lr_batch"`
	LRFactors []float64   `json:"lr_factors"`
	LRMax     float64     `json:"lr_max"`
	Engine    dist.Config `json:"engine"`
}

func runBenchSteps(c *cli.Context) error {
	format, err := checkBenchArgs(c, "bench steps")
	if err != nil {
		return err
	}
	search, base, err := stepsFlags(c)
	if err != nil {
		return err
	}
	for _, b := range search.Batches {
		if err := checkConfig("bench steps", search.Trial(base, b)); err != nil {
			return err
		}
	}
	plan, err := search.Plan(base)
	if err != nil {
		return err
	}
	stderr := c.App.ErrWriter
	warnBackend(stderr)
	ctx, cancel := benchContext(c)
	defer cancel()

	run := runName(c, "steps")
	hdr, err := benchlog.Header(run, benchTool, benchMachine(), stepsSweep{Command: "bench steps", Batches: search.Batches, Target: base.Eval.Target, MaxEpochs: search.MaxEpochs,
		LR: search.LR, LRBatch: search.LRBatch, LRFactors: search.LRFactors, LRMax: search.LRMax, Engine: sweepTemplate(base)})
	if err != nil {
		return err
	}
	stream, err := benchlog.NewStream(c.String("out"), run, "bench steps")
	if err != nil {
		return err
	}
	defer stream.Discard()
	if err := stream.Add(hdr); err != nil {
		return err
	}
	trials := plan.Trials()
	bar := newCountdown(c, "bench steps", "ran", "trials", &trials)
	defer bar.Done()
	recs := []benchlog.Record{hdr}
	convs, err := plan.Run(ctx, dist.StepsHooks{
		Start: func(b int) { bar.Item(fmt.Sprintf("batch %d", b)) },
		Trial: func(b int, tr dist.Trial) {
			bar.Printf("bench: %s batch %d lr %.4g: %s", base.ModelName(), b, tr.LR, tables.Trial(tr))
			bar.Add(1)
		},
		Done: func(_ int, cv *dist.Convergence) error {
			rec := cv.Record(run)
			recs = append(recs, rec) // Run adds cv to convs after Done, in order
			return stream.Add(rec)
		},
	})
	if err != nil {
		return stream.Abort(ctx, stderr, fmt.Errorf("bench steps: %w", err))
	}
	log, err := benchlog.Encode(recs)
	if err != nil {
		return err
	}
	stream.Discard() // replaced by the whole log
	return finish(c, log, tables.BenchSteps(base, search.Batches, convs), format)
}

// stepsFlags returns the search and the engine configuration the flags
// of bench steps describe, or a usage error.
func stepsFlags(c *cli.Context) (dist.StepsSearch, dist.Config, error) {
	s := dist.StepsSearch{Batches: c.IntSlice("batch"), MaxEpochs: c.Float64("max-epochs"), LR: c.Float64("lr"), LRBatch: c.Int("lr-batch"),
		LRFactors: c.Float64Slice("lr-factors"), LRMax: c.Float64("lr-max")}
	if err := positive("batch", s.Batches); err != nil {
		return s, dist.Config{}, err
	}
	w := c.Int("workers")
	for _, b := range s.Batches {
		if w < 1 || b%w != 0 {
			return s, dist.Config{}, usagef("--batch %d is not a multiple of --workers %d", b, w)
		}
	}
	target := c.Float64("target")
	if !(target > 0 && target <= 1) {
		return s, dist.Config{}, usagef("--target %g is not a fraction in (0, 1]", target)
	}
	if !(s.MaxEpochs > 0 && s.MaxEpochs <= 1e4) {
		return s, dist.Config{}, usagef("--max-epochs %g not in (0, 10000]", s.MaxEpochs)
	}
	if len(s.LRFactors) == 0 {
		return s, dist.Config{}, usagef("--lr-factors: no value")
	}
	if err := distinct("lr-factors", s.LRFactors); err != nil {
		return s, dist.Config{}, err
	}
	for _, f := range append([]float64{s.LR, s.LRMax}, s.LRFactors...) {
		if !(f > 0) || math.IsInf(f, 0) {
			return s, dist.Config{}, usagef("learning rates and factors must be positive and finite, got %g", f)
		}
	}
	if s.LRBatch < 1 {
		return s, dist.Config{}, usagef("--lr-batch %d is not positive", s.LRBatch)
	}
	base, err := engineConfig(c, "steps")
	if err != nil {
		return s, base, err
	}
	base.Workers = w
	base.Optimizer, _ = optim.Defaults("sgd")
	base.Optimizer.Momentum = c.Float64("momentum")
	base.Schedule = optim.ScheduleSettings{Kind: "constant", Base: s.LR, WarmupEpochs: c.Float64("warmup-epochs")}
	base.Data.Validation = c.Int("validation")
	base.Eval = dist.Eval{Every: c.Int("eval-every"), Growth: c.Float64("eval-growth"), Target: target}
	if base.Eval.Every < 1 {
		return s, base, usagef("--eval-every %d is not positive", base.Eval.Every)
	}
	return s, base, nil
}
