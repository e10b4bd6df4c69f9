package cmd

import (
	"fmt"
	"runtime"
	"scaleplan/engine/dist"
	"scaleplan/engine/measure"
	"scaleplan/engine/optim"
	"scaleplan/engine/tensor"
	"scaleplan/internal/benchlog"
	"scaleplan/internal/tables"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

func benchThroughputCommand() *cli.Command {
	return &cli.Command{
		Name:      "throughput",
		Usage:     "measure step time and samples/s for each worker count and per-worker batch",
		ArgsUsage: " ",
		Description: "For every worker count of --workers and per-worker batch of --batch (and\n" +
			"--repeat times over), trains --warmup untimed and then --steps timed steps of\n" +
			"momentum SGD and records one measurement: the mean and standard deviation of the\n" +
			"step time, samples/s over all workers, and the mean phases of a step (data\n" +
			"wait, forward, backward, all-reduce, update; with --overlap the all-reduce runs\n" +
			"during backward, so phases add up to more than the step). A line per\n" +
			"configuration goes to stderr, the table to stdout, the log to --out.\n\n" +
			"Every worker of the sweep computes on --threads goroutines, by default the\n" +
			"cores' share at the largest worker count (one core of two for --workers 1,2),\n" +
			"so that a worker is the same device at every count and fit can split the\n" +
			"fixed time between the counts (docs/bench.md).\n\n" +
			"With --rounds N every configuration is measured in N rounds, each of which runs\n" +
			"the whole sweep (warm-up and timed steps), and its measurement is taken over the\n" +
			"timed steps of all N: on a shared machine whose speed drifts, every\n" +
			"configuration then sees the same spells of load. Before them, --warm-rounds\n" +
			"(default 1) sweeps are measured and set aside: a fresh process's first\n" +
			"measurements run slow (docs/validation.md, \"Rounds, and cores apart\").\n\n" +
			"With --core-guard (by default on with two CPUs) every measurement is made\n" +
			"while the first two CPUs share a cache: a probe of the time a cache line takes\n" +
			"from one to the other, before and after it, waits for them or has it repeated\n" +
			"when that time is above 3 times the run's best (a virtual machine's host may\n" +
			"run its vCPUs on different core complexes for a while; docs/validation.md,\n" +
			"\"Cores apart\"); after the rounds, those made above 3 times the final best\n" +
			"are made again. What it did is reported on stderr.\n\n" +
			"With --transport tcp, workers 1 to W-1 are processes of this program started\n" +
			"on 127.0.0.1 (environment passed on, killed with this process); worker 0 runs\n" +
			"here. `scaleplan fit LOG` fits v = b / (b/v0 + t) per worker count.\n\n" +
			"With --framework torch, PyTorch's DistributedDataParallel is measured instead\n" +
			"(engine/torchbench), --workers workers on this machine; across machines every\n" +
			"node runs the same command with its own --node-rank, --nodes N and the\n" +
			"--master-addr of node rank 0, which writes the log (docs/torchbench.md).\n\n" +
			"Examples:\n" +
			"   scaleplan bench throughput --workers 1,2 --batch 16,32,64,128,256,512,1024 --out mlp.jsonl\n" +
			"   OPENBLAS_CORETYPE=SkylakeX scaleplan bench throughput --model cnn --transport tcp --workers 2\n" +
			"   scaleplan bench --framework torch --workers 8 --nodes 2 --node-rank 0 --master-addr 10.0.0.1 --model resnet50 --out r50-2x8.jsonl",
		Flags: append([]cli.Flag{
			&cli.IntSliceFlag{Name: "workers", Value: cli.NewIntSlice(1), Usage: "worker counts `W,...` to sweep"},
			&cli.IntSliceFlag{Name: "batch", Value: cli.NewIntSlice(16, 32, 64, 128, 256, 512, 1024), Usage: "per-worker batches `b,...` to sweep"},
			&cli.IntFlag{Name: "accumulate", Value: 1, Usage: "micro-batches per step per worker (gradient accumulation)"},
			&cli.IntFlag{Name: "steps", Value: 20, Usage: "timed steps per configuration"},
			&cli.IntFlag{Name: "warmup", Value: 5, Usage: "untimed steps before them"},
			&cli.IntFlag{Name: "repeat", Value: 1, Usage: "measure the whole sweep `N` times (one record each)"},
			&cli.IntFlag{Name: "rounds", Value: 1, Usage: "measure every configuration in `N` rounds over the sweep, one record over all their timed steps"},
			warmRoundsFlag("warm-rounds"),
			&cli.Float64Flag{Name: "lr", Value: 0.01, Usage: "learning rate of the momentum SGD trained with"},
			&cli.BoolFlag{Name: "step-records", Usage: "also log one record per timed step"},
			coreGuardFlag("core-guard"),
			plotFlag(),
			&cli.StringFlag{Name: "framework", Value: "engine", Usage: "what to measure: engine (scaleplan's engine) or torch (PyTorch, engine/torchbench)"},
		}, append(engineFlags(), torchFlags()...)...),
		Action: runBenchThroughput,
	}
}

func runBenchThroughput(c *cli.Context) error {
	format, err := checkBenchArgs(c, "bench throughput")
	if err != nil {
		return err
	}
	switch f := c.String("framework"); {
	case f == "torch":
		return runBenchTorch(c)
	case !slices.Contains(benchFrameworks, f):
		return usagef("--framework %q is not supported (valid: %s)", f, strings.Join(benchFrameworks, ", "))
	}
	sw, err := throughputFlags(c)
	if err != nil {
		return err
	}
	stderr := c.App.ErrWriter
	warnBackend(stderr)
	if alone := runtime.NumCPU() / slices.Min(sw.Workers); !c.IsSet("threads") && alone > sw.Base.Threads {
		fmt.Fprintf(stderr, "bench: every worker computes on %d of the %d cores, as at %d workers, so that a worker is the same device at every count (--threads N to change)\n",
			sw.Base.Threads, runtime.NumCPU(), slices.Max(sw.Workers))
	}
	ctx, cancel := benchContext(c)
	defer cancel()

	sw.Name = runName(c, "throughput")
	total := sw.Measurements()
	bar := newCountdown(c, "bench throughput", "made", "measurements", &total)
	defer bar.Done()
	sw.Guard = newBarGuard(c, "core-guard", "bench", bar.Bar, &total)
	hdr, err := benchlog.Header(sw.Name, benchTool, benchMachine(), sw.Header("bench throughput", c.String("framework"), sweepTemplate(sw.Base)))
	if err != nil {
		return err
	}
	stream, err := benchlog.NewStream(c.String("out"), sw.Name, "bench throughput")
	if err != nil {
		return err
	}
	defer stream.Discard()
	if err := stream.Add(hdr); err != nil {
		return err
	}
	sw.Measuring = func(r int, cfg dist.Config) {
		bar.Item(fmt.Sprintf("%sworkers %d batch %d", measure.RoundPrefix(r, sw.Rounds), cfg.Workers, cfg.Batch))
	}
	sw.Measured = func(r int, cfg dist.Config, m *dist.Measurement) {
		bar.Printf("bench: %s%s workers %d batch %d%s: %.0f samples/s, %.2f ms/step",
			measure.RoundPrefix(r, sw.Rounds), m.Config.ModelName(), cfg.Workers, cfg.Batch, tables.ChunkNote(cfg), m.SamplesPerSec, m.StepTime*1e3)
		bar.Add(1)
	}
	sw.Log = stream.Add
	meas, recs, err := sw.Run(ctx)
	if err != nil {
		return stream.Abort(ctx, stderr, fmt.Errorf("bench throughput: %w", err))
	}
	if sw.Guard != nil {
		bar.Printf("bench: cores: %s", sw.Guard)
	}
	log, err := benchlog.Encode(append([]benchlog.Record{hdr}, recs...))
	if err != nil {
		return err
	}
	stream.Discard() // the whole log, as the core guard left it, replaces it
	return finish(c, log, tables.BenchThroughput(sw.Base, tensor.Backend(), meas), format)
}

// throughputFlags returns the sweep bench throughput's flags ask for, or a
// usage error.
func throughputFlags(c *cli.Context) (*measure.Sweep, error) {
	if err := checkFrameworkFlags(c, "engine"); err != nil {
		return nil, err
	}
	sw := &measure.Sweep{Workers: c.IntSlice("workers"), Batches: c.IntSlice("batch"), Warmup: c.Int("warmup"), Steps: c.Int("steps"),
		Repeat: c.Int("repeat"), Rounds: c.Int("rounds"), StepRecords: c.Bool("step-records")}
	if err := positive("workers", sw.Workers); err != nil {
		return nil, err
	}
	if err := positive("batch", sw.Batches); err != nil {
		return nil, err
	}
	for _, f := range []string{"steps", "repeat", "rounds", "accumulate"} {
		if err := positive(f, []int{c.Int(f)}); err != nil {
			return nil, err
		}
	}
	if sw.Warmup < 0 {
		return nil, usagef("--warmup %d is negative", sw.Warmup)
	}
	base, err := engineConfig(c, "throughput")
	if err != nil {
		return nil, err
	}
	base.Accumulate = c.Int("accumulate")
	if lr := c.Float64("lr"); !(lr > 0) { // 0 would be the engine's default
		return nil, usagef("bench throughput: --lr %g: want a positive learning rate", lr)
	}
	base.Schedule = optim.ScheduleSettings{Kind: "constant", Base: c.Float64("lr")}
	if !c.IsSet("threads") {
		base.Threads = measure.SweepThreads(sw.Workers)
	}
	sw.Base = base
	if err := sw.Validate(); err != nil {
		return nil, usagef("bench throughput: %v", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	sw.Warm, err = warmRounds(c, "warm-rounds")
	return sw, err
}
