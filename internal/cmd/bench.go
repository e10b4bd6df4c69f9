package cmd

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"scaleplan/engine/dist"
	"scaleplan/engine/optim"
	"scaleplan/engine/tensor"
	"scaleplan/internal/benchlog"
)

// Frameworks `bench throughput --framework` accepts: scaleplan's engine
// and PyTorch (engine/torchbench).
var benchFrameworks = []string{"engine", "torch"}

// benchTool is the bench log's Tool for engine runs.
const benchTool = "scaleplan-engine"

// benchCommand is `scaleplan bench`.
func benchCommand() *cli.Command {
	tp := benchThroughputCommand()
	return &cli.Command{
		Name:  "bench",
		Usage: "run the reference training engine and write a bench log",
		Description: "Trains scaleplan's own engine (engine/dist: data-parallel workers with a ring\n" +
			"all-reduce) on Fashion-MNIST, or synthetic data when it is not installed, and\n" +
			"writes what it measured as a bench log (JSON lines) for `scaleplan fit`:\n\n" +
			"   throughput  step time and samples/s per worker count and batch\n" +
			"   steps       steps to a target accuracy per global batch, learning rate searched\n" +
			"   train       train to a recipe's accuracy target and report the test accuracy\n\n" +
			"With no subcommand, bench is bench throughput and takes its flags. With\n" +
			"--framework torch it measures PyTorch instead (engine/torchbench: ResNet-50,\n" +
			"EfficientNet-B4, Transformer, Mask R-CNN, the MLP and CNN; on CUDA or the CPU)\n" +
			"with the python3 on PATH, or /usr/bin/python3, that can import torch.\n\n" +
			"Every log starts with a header record holding the run's full configuration and\n" +
			"the machine (CPU model, cores, BLAS backend, Go version). Builds with -tags\n" +
			"openblas are an order of magnitude faster; run them with OPENBLAS_CORETYPE set\n" +
			"(SkylakeX on AVX-512 Xeons). docs/engine.md has the details.\n\n" +
			"Examples:\n" +
			"   scaleplan bench throughput --workers 1,2 --batch 16,64,256,1024 --out mlp.jsonl\n" +
			"   scaleplan bench throughput --workers 2 --transport tcp --model cnn --batch 64\n" +
			"   scaleplan bench steps --target 0.85 --out steps.jsonl\n" +
			"   scaleplan bench train --model cnn\n" +
			"   scaleplan bench --framework torch --model cnn --batch 16,32,64 --steps 5 --out torch.jsonl",
		Flags:       tp.Flags,
		Action:      runBenchThroughput,
		Subcommands: []*cli.Command{tp, benchStepsCommand(), benchTrainCommand(), benchWorkerCommand()},
	}
}

// sweepTemplate returns the engine configuration shared by a sweep's
// runs for its header: defaults filled in, with the fields that vary
// (workers, batch, steps and the threads that follow from the workers)
// as the flags gave them.
func sweepTemplate(base dist.Config) dist.Config {
	e := base.WithDefaults()
	e.Workers, e.Batch, e.Steps, e.Threads = base.Workers, base.Batch, base.Steps, base.Threads
	return e
}

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
			"fixed time between the counts (docs/engine.md).\n\n" +
			"With --rounds N every configuration is measured in N rounds, each of which runs\n" +
			"the whole sweep (warm-up and timed steps), and its measurement is taken over the\n" +
			"timed steps of all N: on a shared machine whose speed drifts, every\n" +
			"configuration then sees the same spells of load. Before them, --warm-rounds\n" +
			"(default 1) sweeps are measured and set aside: a fresh process's first\n" +
			"measurements run slow (docs/validation.md, \"A warm-up round\").\n\n" +
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
			"Examples:\n" +
			"   scaleplan bench throughput --workers 1,2 --batch 16,32,64,128,256,512,1024 --out mlp.jsonl\n" +
			"   OPENBLAS_CORETYPE=SkylakeX scaleplan bench throughput --model cnn --transport tcp --workers 2",
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

// throughputSweep is the configuration the header of a throughput log
// records.
type throughputSweep struct {
	Command   string      `json:"command"`
	Framework string      `json:"framework"`
	Workers   []int       `json:"workers"`
	Batches   []int       `json:"batches"`
	Steps     int         `json:"steps"`
	Warmup    int         `json:"warmup"`
	Repeat    int         `json:"repeat"`
	Rounds    int         `json:"rounds"`
	Warm      int         `json:"warm_rounds"`
	CoreGuard bool        `json:"core_guard,omitempty"`
	Engine    dist.Config `json:"engine"`
}

func runBenchThroughput(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("bench throughput takes no argument, got %q", c.Args().First())
	}
	if err := checkOutputs("bench throughput", flagPaths(c.String, "out", "plot"), commandInputs(c, "", nil)); err != nil {
		return err
	}
	format := c.String("format")
	if err := checkFormat(format); err != nil {
		return err
	}
	switch f := c.String("framework"); {
	case f == "torch":
		return runBenchTorch(c)
	case !slices.Contains(benchFrameworks, f):
		return usagef("--framework %q is not supported (valid: %s)", f, strings.Join(benchFrameworks, ", "))
	}
	if err := checkFrameworkFlags(c, "engine"); err != nil {
		return err
	}
	workers, batches := c.IntSlice("workers"), c.IntSlice("batch")
	if err := positive("workers", workers); err != nil {
		return err
	}
	if err := positive("batch", batches); err != nil {
		return err
	}
	for _, f := range []string{"steps", "repeat", "rounds", "accumulate"} {
		if err := positive(f, []int{c.Int(f)}); err != nil {
			return err
		}
	}
	if c.Int("warmup") < 0 {
		return usagef("--warmup %d is negative", c.Int("warmup"))
	}
	base, err := engineConfig(c, "throughput")
	if err != nil {
		return err
	}
	base.Accumulate = c.Int("accumulate")
	if lr := c.Float64("lr"); !(lr > 0) { // 0 would be the engine's default
		return usagef("bench throughput: --lr %g: want a positive learning rate", lr)
	}
	base.Schedule = optim.ScheduleSettings{Kind: "constant", Base: c.Float64("lr")}
	if !c.IsSet("threads") {
		base.Threads = sweepThreads(workers)
	}
	for _, w := range workers {
		cfg := base
		cfg.Workers, cfg.Batch, cfg.Steps = w, batches[0], c.Int("warmup")+c.Int("steps")
		if err := checkConfig("bench throughput", cfg); err != nil {
			return err
		}
	}
	for _, b := range batches {
		cfg := base
		cfg.Workers, cfg.Batch, cfg.Steps = workers[0], b, 1
		if err := checkConfig("bench throughput", cfg); err != nil {
			return err
		}
	}
	warm, err := warmRounds(c, "warm-rounds")
	if err != nil {
		return err
	}
	stderr := c.App.ErrWriter
	warnBackend(stderr)
	if alone := runtime.NumCPU() / slices.Min(workers); !c.IsSet("threads") && alone > base.Threads {
		fmt.Fprintf(stderr, "bench: every worker computes on %d of the %d cores, as at %d workers, so that a worker is the same device at every count (--threads N to change)\n",
			base.Threads, runtime.NumCPU(), slices.Max(workers))
	}
	ctx, cancel := benchContext(c)
	defer cancel()

	run := runName(c, "throughput")
	t := &table{Title: fmt.Sprintf("%s throughput, %s", base.ModelName(), tensor.Backend()),
		Header: []string{"workers", "batch", "global_batch", "steps", "step_ms", "std_ms", "samples_per_s", "data_ms", "forward_ms", "backward_ms", "allreduce_ms", "wait_ms", "update_ms"}}
	rounds := c.Int("rounds")
	var cfgs []dist.Config
	for _, w := range workers {
		for _, b := range batches {
			cfg := base
			cfg.Workers, cfg.Batch = w, b
			cfgs = append(cfgs, cfg)
		}
	}
	total := (c.Int("repeat")*rounds + warm) * len(cfgs)
	bar := newCountdown(c, "bench throughput", "made", "measurements", &total)
	defer bar.Done()
	guard := newBarGuard(c, "core-guard", "bench", bar.Bar, &total)
	hdr, err := header(run, throughputSweep{Command: "bench throughput", Framework: c.String("framework"), Workers: workers, Batches: batches,
		Steps: c.Int("steps"), Warmup: c.Int("warmup"), Repeat: c.Int("repeat"), Rounds: c.Int("rounds"), Warm: warm, CoreGuard: guard != nil,
		Engine: sweepTemplate(base)})
	if err != nil {
		return err
	}
	recs := []benchlog.Record{hdr}
	stream, err := startLog(c.String("out"), run, "bench throughput")
	if err != nil {
		return err
	}
	defer stream.discard()
	if err := stream.add(hdr); err != nil {
		return err
	}
	notes := make([]string, len(cfgs))
	for i, cfg := range cfgs {
		notes[i] = chunkNote(cfg)
	}
	measure := func(r, i int) (*dist.Measurement, error) {
		w, b := cfgs[i].Workers, cfgs[i].Batch
		bar.Item(fmt.Sprintf("%sworkers %d batch %d", roundPrefix(r, rounds), w, b))
		m, err := dist.Measure(ctx, cfgs[i], c.Int("warmup"), c.Int("steps"))
		if err != nil {
			return nil, fmt.Errorf("workers %d, batch %d: %w", w, b, err)
		}
		bar.Printf("bench: %s%s workers %d batch %d%s: %.0f samples/s, %.2f ms/step",
			roundPrefix(r, rounds), m.Config.ModelName(), w, b, notes[i], m.SamplesPerSec, m.StepTime*1e3)
		bar.Add(1)
		return m, nil
	}
	records := func(m *dist.Measurement) []benchlog.Record {
		rs := []benchlog.Record{m.Record(run)}
		if c.Bool("step-records") {
			rs = append(rs, m.StepRecords(run)...)
		}
		return rs
	}
	for rep := range c.Int("repeat") {
		if rep > 0 {
			warm = 0 // the process is warm after the first sweep
		}
		written := make([]bool, len(cfgs))
		final := func(i int, m *dist.Measurement) error {
			written[i] = true
			return stream.add(records(m)...)
		}
		meas, all, err := measureRoundsTo(len(cfgs), warm, rounds, measure, nil, guard, roundHooks{final: final})
		if err != nil {
			// Keep what was measured: each configuration not yet
			// logged over the rounds it has.
			for i, ms := range all {
				if m, cerr := dist.Combine(ms); !written[i] && len(ms) > 0 && cerr == nil {
					stream.add(records(m)...)
				}
			}
			return stream.abort(ctx, stderr, fmt.Errorf("bench throughput: %w", err))
		}
		for i, cfg := range cfgs {
			w, b, m := cfg.Workers, cfg.Batch, meas[i]
			recs = append(recs, records(m)...)
			p := m.Phases
			t.Rows = append(t.Rows, []string{strconv.Itoa(w), strconv.Itoa(b), strconv.Itoa(m.Config.GlobalBatch()), strconv.Itoa(m.Steps),
				strconv.FormatFloat(m.StepTime*1e3, 'f', 2, 64), strconv.FormatFloat(m.StepTimeStd*1e3, 'f', 2, 64),
				strconv.FormatFloat(m.SamplesPerSec, 'f', 0, 64),
				ms(p.DataWait), ms(p.Forward), ms(p.Backward), ms(p.AllReduce), ms(p.Wait), ms(p.Update)})
		}
	}
	if guard != nil {
		bar.Printf("bench: cores: %s", guard)
	}
	log, err := encodeLog(recs)
	if err != nil {
		return err
	}
	stream.discard() // the whole log, as the core guard left it, replaces it
	return finish(c, log, t, format)
}

// sweepThreads returns the goroutines that every worker of a sweep over
// the worker counts workers computes on when --threads is not given: the
// cores' share at the largest count, and at least one,
//
//	threads = max(1, NumCPU / max(workers))
//
// for every count alike. A worker is then the same device at every count
// of the sweep, as one GPU is in a sweep of 1 to 8 GPUs: one core of two in
// a sweep of 1 and 2 workers, not both cores at one worker and one core
// each at two. fit's split of the fixed time across device counts,
// t(p) = t_fixed + 2(p−1)/p · t_comm, compares the counts' t and holds
// only for the same device (docs/engine.md, "Throughput and the fitted
// law"). A sweep of one count gets dist's default, NumCPU/W.
func sweepThreads(workers []int) int {
	return workerThreads(runtime.NumCPU(), slices.Max(workers))
}

// maxWarmRounds bounds --warm-rounds and --engine-warm-rounds.
const maxWarmRounds = 9

// warmRoundsFlag is the flag name of the warm rounds measureRounds makes
// before its rounds, one by default.
func warmRoundsFlag(name string) cli.Flag {
	return &cli.IntFlag{Name: name, Value: 1, Usage: fmt.Sprintf("first measure every configuration `N` times (0 to %d) and set those aside, while the process warms up", maxWarmRounds)}
}

// warmRounds returns the value of the warm-rounds flag name, or a usage
// error outside 0 to maxWarmRounds.
func warmRounds(c *cli.Context, name string) (int, error) {
	warm := c.Int(name)
	if warm < 0 || warm > maxWarmRounds {
		return 0, usagef("--%s %d: want 0 to %d", name, warm, maxWarmRounds)
	}
	return warm, nil
}

// measureRounds measures n configurations in rounds, each round all of
// them in order with measure(round, i) and then afterRound(round) if it is
// not nil, so that the spells of load on a shared machine fall on all of
// them alike; it returns each configuration's measurement over the timed
// steps of all its rounds (dist.Combine), and the measurements kept, by
// configuration and round. With a guard (nil: none), each measurement is
// made between its probes and as often as it decides (coreGuard), and
// after the rounds up to n of those it finds were made apart are made
// again. Errors are returned as they are, with the measurements kept so
// far.
//
// Before the rounds, warm rounds measure every configuration once each,
// as measure(-1, i), and set the results aside: a fresh process's first
// measurements run slow while its memory is new to it (docs/validation.md,
// "A warm-up round"), and the first configurations of a sweep would carry
// that into every later figure. They are made without the guard and
// without afterRound.
func measureRounds(n, warm, rounds int, measure func(r, i int) (*dist.Measurement, error), afterRound func(r int) error, guard *coreGuard) ([]*dist.Measurement, [][]*dist.Measurement, error) {
	return measureRoundsTo(n, warm, rounds, measure, afterRound, guard, roundHooks{})
}

// roundHooks receive measureRoundsTo's measurements as it makes them, for
// a log written as the run goes. Either may be nil; an error of either
// ends the run.
type roundHooks struct {
	// kept receives each measurement of a round that the guard keeps
	// (not those it has made again), round r of configuration i, as
	// soon as it is made; not the revisits after the rounds.
	kept func(r, i int, m *dist.Measurement) error
	// final receives each configuration's measurement over its rounds
	// as soon as it is final: without a guard right after the
	// configuration's last round, with one (whose revisits may replace
	// any) at the end, in order.
	final func(i int, m *dist.Measurement) error
}

// measureRoundsTo is measureRounds telling hooks of its measurements.
func measureRoundsTo(n, warm, rounds int, measure func(r, i int) (*dist.Measurement, error), afterRound func(r int) error,
	guard *coreGuard, hooks roundHooks) ([]*dist.Measurement, [][]*dist.Measurement, error) {
	for range warm {
		for i := range n {
			if _, err := measure(-1, i); err != nil {
				return nil, nil, err
			}
		}
	}
	guard.start()
	all := make([][]*dist.Measurement, n)
	levels := make([][]time.Duration, n) // each measurement's probe level
	finals := make([]bool, n)            // given to hooks.final
	for r := range rounds {
		for i := range n {
			m, level, err := guard.measure(func() (*dist.Measurement, error) { return measure(r, i) })
			if err != nil {
				return nil, all, err
			}
			all[i] = append(all[i], m)
			levels[i] = append(levels[i], level)
			if hooks.kept != nil {
				if err := hooks.kept(r, i, m); err != nil {
					return nil, all, err
				}
			}
			if hooks.final != nil && guard == nil && r == rounds-1 {
				if err := finalize(all[i], func(m *dist.Measurement) error { return hooks.final(i, m) }); err != nil {
					return nil, all, err
				}
				finals[i] = true
			}
		}
		if afterRound != nil {
			if err := afterRound(r); err != nil {
				return nil, all, err
			}
		}
	}
	if err := revisitStale(n, rounds, all, levels, measure, guard); err != nil {
		return nil, all, err
	}
	meas := make([]*dist.Measurement, n)
	for i, ms := range all {
		m, err := dist.Combine(ms)
		if err != nil {
			return nil, all, err
		}
		meas[i] = m
		if hooks.final != nil && !finals[i] {
			if err := hooks.final(i, m); err != nil {
				return nil, all, err
			}
		}
	}
	return meas, all, nil
}

// finalize passes the combination of ms to final.
func finalize(ms []*dist.Measurement, final func(*dist.Measurement) error) error {
	m, err := dist.Combine(ms)
	if err != nil {
		return err
	}
	return final(m)
}

// revisitStale makes again the measurements of all (by configuration and
// round, of probe levels levels) made while the cores were apart, in a
// spell the run started in and so took for their best, now that the run
// knows better (coreGuard): the most apart first, at most a round's
// worth (n), and none once the guard has spent its budget.
func revisitStale(n, rounds int, all [][]*dist.Measurement, levels [][]time.Duration, measure func(r, i int) (*dist.Measurement, error), guard *coreGuard) error {
	type made struct{ i, r int }
	var stale []made
	for r := range rounds {
		for i := range n {
			if guard.stale(levels[i][r]) {
				stale = append(stale, made{i, r})
			}
		}
	}
	slices.SortStableFunc(stale, func(a, b made) int { return cmp.Compare(levels[b.i][b.r], levels[a.i][a.r]) })
	for k, x := range stale {
		if k == n || guard.spent() {
			guard.Unrevisited = len(stale) - k
			break
		}
		m, level, replace, err := guard.revisit(levels[x.i][x.r], func() (*dist.Measurement, error) { return measure(x.r, x.i) })
		if err != nil {
			return err
		}
		if replace {
			all[x.i][x.r], levels[x.i][x.r] = m, level
		}
	}
	return nil
}

// roundPrefix is "round r: " for a measurement of a sweep in rounds,
// "warm-up: " for one of a warm round (r < 0), "" for one in a single
// round.
func roundPrefix(r, rounds int) string {
	switch {
	case r < 0:
		return "warm-up: "
	case rounds == 1:
		return ""
	}
	return fmt.Sprintf("round %d: ", r+1)
}

func benchWorkerCommand() *cli.Command {
	return &cli.Command{
		Name:   "worker",
		Usage:  "run one worker process of a --transport tcp bench (started by bench itself)",
		Hidden: true,
		Action: func(c *cli.Context) error {
			if !dist.IsWorker() {
				return usagef("bench worker is started by `bench --transport tcp`; it needs %s, %s and %s", dist.EnvCoordinator, dist.EnvRank, dist.EnvToken)
			}
			ctx, cancel := benchContext(c)
			defer cancel()
			return dist.RunWorker(ctx, c.App.ErrWriter)
		},
	}
}
