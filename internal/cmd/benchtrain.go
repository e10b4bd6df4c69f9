package cmd

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/engine/dist"
	"scaleplan/engine/optim"
	"scaleplan/engine/recipe"
	"scaleplan/engine/tensor"
	"scaleplan/internal/benchlog"
	"scaleplan/internal/config"
	"scaleplan/internal/tables"
)

func benchTrainCommand() *cli.Command {
	return &cli.Command{
		Name:      "train",
		Usage:     "train to a recipe's accuracy target and report the test accuracy",
		ArgsUsage: " ",
		Description: "Trains the network with a recipe of the model profiles (default engine-MODEL:\n" +
			"optimizer, per-worker batch, workers, learning rate and schedule, epochs and the\n" +
			"accuracy target); the flags override the recipe's values. The test set is\n" +
			"evaluated at the end of every epoch. Prints the accuracy per epoch and the\n" +
			"final test accuracy and wall time, and records a convergence record (accuracy:\n" +
			"the final test accuracy; steps_to_target: the step of the first evaluation at\n" +
			"or above the target, or all steps if none).\n\n" +
			"Examples:\n" +
			"   OPENBLAS_CORETYPE=SkylakeX scaleplan bench train --model mlp\n" +
			"   OPENBLAS_CORETYPE=SkylakeX scaleplan bench train --model cnn --epochs 5 --schedule cosine",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "recipe", Usage: "recipe `NAME` of the model profiles; default engine-MODEL"},
			&cli.IntFlag{Name: "workers", Usage: "data-parallel workers"},
			&cli.IntFlag{Name: "batch", Usage: "per-worker batch"},
			&cli.Float64Flag{Name: "epochs", Usage: "training length in epochs"},
			&cli.Float64Flag{Name: "lr", Usage: "base learning rate"},
			&cli.StringFlag{Name: "optimizer", Usage: "optimizer: " + strings.Join(optim.Kinds, ", ")},
			&cli.Float64Flag{Name: "momentum", Usage: "momentum of sgd and lars"},
			&cli.Float64Flag{Name: "weight-decay", Usage: "L2 weight decay"},
			&cli.StringFlag{Name: "schedule", Usage: "learning-rate schedule: " + strings.Join(optim.ScheduleKinds, ", ")},
			&cli.Float64Flag{Name: "warmup-epochs", Usage: "linear learning-rate warm-up, in epochs"},
			&cli.Float64Flag{Name: "smoothing", Usage: "label smoothing"},
			&cli.Float64Flag{Name: "target", Usage: "target test accuracy, a fraction; default the recipe's"},
		}, engineFlags()...),
		Action: runBenchTrain,
	}
}

// trainRun is the configuration the header of a train log records.
type trainRun struct {
	Command string      `json:"command"`
	Recipe  string      `json:"recipe"`
	Target  float64     `json:"target"`
	Engine  dist.Config `json:"engine"`
}

func runBenchTrain(c *cli.Context) error {
	format, err := checkBenchArgs(c, "bench train")
	if err != nil {
		return err
	}
	name, cfg, target, err := trainFlags(c)
	if err != nil {
		return err
	}
	tr, err := dist.NewTraining(cfg, target)
	if err != nil {
		return err
	}
	stderr := c.App.ErrWriter
	warnBackend(stderr)
	ctx, cancel := benchContext(c)
	defer cancel()
	total := tr.Steps
	bar := newCountdown(c, "bench train", "trained", "steps", &total)
	defer bar.Done()
	tr.Config.Progress = func(dist.StepStats) { bar.Add(1) }
	tr.Config.EvalProgress = func(e dist.EvalResult) {
		bar.Printf("bench: %s epoch %.4g (step %d): test accuracy %.4f, loss %.4f (%.0f s)",
			cfg.ModelName(), tr.Epoch(e.Step), e.Step, e.Accuracy, e.Loss, e.Time.Seconds())
	}
	res, err := dist.Run(ctx, tr.Config)
	if err != nil {
		return fmt.Errorf("bench train: %w", err)
	}
	run := runName(c, "train")
	hdr, err := benchlog.Header(run, benchTool, benchMachine(), trainRun{Command: "bench train", Recipe: name, Target: target, Engine: res.Config})
	if err != nil {
		return err
	}
	log, err := benchlog.Encode([]benchlog.Record{hdr, tr.Record(run, res)})
	if err != nil {
		return err
	}
	if _, err := writeLog(c, log); err != nil {
		return err
	}
	t, line := tables.BenchTrain(name, tensor.Backend(), tr, res)
	if err := t.Write(c.App.Writer, format); err != nil {
		return err
	}
	if format == "text" || format == "md" {
		fmt.Fprintf(c.App.Writer, "\n%s\n", line)
	}
	return nil
}

// trainFlags returns the recipe's name and the engine configuration and
// target the recipe and the flags of bench train describe, or an error.
func trainFlags(c *cli.Context) (string, dist.Config, float64, error) {
	prof, err := loadProfiles(c)
	if err != nil {
		return "", dist.Config{}, 0, err
	}
	name := c.String("recipe")
	if name == "" {
		m := c.String("model")
		if !slices.Contains(dist.Models, m) {
			return name, dist.Config{}, 0, usagef("bench train: --model: %s", config.Unknown("model", m, dist.Models))
		}
		name = "engine-" + m
	}
	r, err := prof.Recipe(name)
	if err != nil {
		return name, dist.Config{}, 0, err
	}
	cfg, target, err := recipe.Config(r)
	if err != nil {
		return name, cfg, target, err
	}
	if c.IsSet("model") && c.String("model") != cfg.Model {
		return name, cfg, target, usagef("--model %s, but recipe %s trains %s", c.String("model"), name, cfg.Model)
	}
	eng, err := engineConfig(c, "train")
	if err != nil {
		return name, cfg, target, err
	}
	if cfg.Model == "mlp" {
		cfg.Hidden = eng.Hidden
	}
	cfg.Data, cfg.Seed, cfg.Transport, cfg.Overlap, cfg.BucketBytes = eng.Data, eng.Seed, eng.Transport, eng.Overlap, eng.BucketBytes
	cfg.Threads, cfg.Prefetch, cfg.Timeout, cfg.Spawn, cfg.Chunk = eng.Threads, eng.Prefetch, eng.Timeout, eng.Spawn, eng.Chunk
	if err := trainOverrides(c, &cfg, &target); err != nil {
		return name, cfg, target, err
	}
	return name, cfg, target, checkConfig("bench train", cfg)
}

// trainOverrides sets what the flags of bench train give over the
// recipe's values in cfg and target, or returns a usage error.
func trainOverrides(c *cli.Context, cfg *dist.Config, target *float64) error {
	if c.IsSet("optimizer") {
		o, err := optim.Defaults(c.String("optimizer"))
		if err != nil {
			return usagef("--optimizer: %v", err)
		}
		cfg.Optimizer = o
	}
	setInt := func(flag string, dst *int) {
		if c.IsSet(flag) {
			*dst = c.Int(flag)
		}
	}
	setFloat := func(flag string, dst *float64) {
		if c.IsSet(flag) {
			*dst = c.Float64(flag)
		}
	}
	// The engine reads a worker count or learning rate of 0 as its
	// default; on the command line it is a mistake.
	if c.IsSet("workers") && c.Int("workers") < 1 {
		return usagef("bench train: --workers %d: want 1 or more", c.Int("workers"))
	}
	if lr := c.Float64("lr"); c.IsSet("lr") && !(lr > 0) {
		return usagef("bench train: --lr %g: want a positive learning rate", lr)
	}
	setInt("workers", &cfg.Workers)
	setInt("batch", &cfg.Batch)
	if c.IsSet("epochs") {
		// Checked here, before the schedule would be built from it.
		if e := c.Float64("epochs"); !(e > 0) || math.IsInf(e, 0) {
			return usagef("bench train: --epochs %g: want a positive number of epochs", e)
		}
		cfg.Epochs, cfg.Steps = c.Float64("epochs"), 0
		cfg.Schedule.Epochs = cfg.Epochs
	}
	setFloat("lr", &cfg.Schedule.Base)
	setFloat("momentum", &cfg.Optimizer.Momentum)
	setFloat("weight-decay", &cfg.Optimizer.WeightDecay)
	setFloat("warmup-epochs", &cfg.Schedule.WarmupEpochs)
	setFloat("smoothing", &cfg.Smoothing)
	setFloat("target", target)
	if c.IsSet("schedule") {
		cfg.Schedule.Kind = c.String("schedule")
	}
	if !(*target >= 0 && *target <= 1) {
		return usagef("--target %g is not a fraction in [0, 1]", *target)
	}
	return nil
}
