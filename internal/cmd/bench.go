package cmd

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"scaleplan/engine/data"
	"scaleplan/engine/dist"
	"scaleplan/engine/optim"
	"scaleplan/engine/tensor"
	"scaleplan/engine/torchbench"
	"scaleplan/fit"
	"scaleplan/fit/logs"
	"scaleplan/hw"
	"scaleplan/internal/atomicfile"
	"scaleplan/internal/benchlog"
	"scaleplan/internal/config"
	"scaleplan/internal/units"
	"scaleplan/model"
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

// engineFlags are the flags every bench subcommand that trains has.
func engineFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "model", Value: "mlp", Usage: "network: mlp (784-1024-1024-10) or cnn (conv 3x3x32, conv 3x3x64, max-pool, dense 128, dense 10); with --framework torch also " + strings.Join(slices.DeleteFunc(torchbench.Models(), func(m string) bool { return m == "mlp" || m == "cnn" }), ", ")},
		&cli.IntSliceFlag{Name: "hidden", Value: cli.NewIntSlice(1024, 1024), Usage: "hidden layer widths `H,...` of the mlp"},
		&cli.StringFlag{Name: "data", Usage: "`DIR` of an MNIST-shaped IDX data set, or 'synthetic'; default Fashion-MNIST at " + data.FashionMNISTDir + " if installed, else synthetic"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "`SEED` of the initial weights and the shuffling"},
		&cli.StringFlag{Name: "transport", Value: "inproc", Usage: "how workers exchange gradients: inproc (goroutines), tcp (worker processes on 127.0.0.1), or none (bench throughput only: independent workers, each training its own replica on its shard, the compute of W workers without their all-reduce; logged as transport none)"},
		&cli.BoolFlag{Name: "in-step", Usage: "bench throughput only: independent workers, as with --transport none, that meet once a step over --transport (inproc or tcp) where they would all-reduce, so that they compute in step as exchanging workers do; logged as transport none with the label in_step"},
		&cli.BoolFlag{Name: "overlap", Value: true, Usage: "start each bucket's all-reduce during backward"},
		&cli.StringFlag{Name: "bucket", Value: "1 MiB", Usage: "gradient bucket `SIZE` of the all-reduce"},
		&cli.IntFlag{Name: "threads", Usage: "goroutines per worker for tensor operations (`N`); default cores/workers (bench throughput: cores over the largest of --workers, for every count)"},
		&cli.IntFlag{Name: "chunk", Usage: "most samples a worker runs forward and backward at once (`N`); 0: for the cnn 32 (a power of two whose activations fit in 16 MiB), the mlp whole; -1: whole micro-batches"},
		&cli.IntFlag{Name: "prefetch", Value: 2, Usage: "batches each worker's loader prepares ahead"},
		&cli.DurationFlag{Name: "timeout", Value: dist.DefaultTimeout, Usage: "longest wait for another worker"},
		&cli.StringFlag{Name: "out", Usage: "write the bench log to `FILE`; bench throughput and steps write it record by record, and a run cut short (interrupted, or failing) leaves the records made so far, ending with one that marks the log incomplete"},
		&cli.StringFlag{Name: "run", Usage: "run `NAME` in the records; default bench-SUBCOMMAND-MODEL"},
		formatFlag(),
	}
}

// chunkNote returns " in N chunks" for a configuration whose workers run
// each micro-batch in N > 1 chunks (dist.Config.Chunk), else "".
func chunkNote(cfg dist.Config) string {
	if n := cfg.Chunks(); n > 1 {
		return fmt.Sprintf(" in %d chunks", n)
	}
	return ""
}

// engineConfig returns the dist configuration the common flags describe
// for bench subcommand name. --transport none, independent workers, is
// for bench throughput alone: the workers of the others must train one
// model together.
func engineConfig(c *cli.Context, name string) (dist.Config, error) {
	cfg := dist.Config{
		Model: c.String("model"), Hidden: c.IntSlice("hidden"), Seed: c.Uint64("seed"), Transport: c.String("transport"), Overlap: c.Bool("overlap"),
		Threads: c.Int("threads"), Prefetch: c.Int("prefetch"), Timeout: c.Duration("timeout"), Chunk: c.Int("chunk"),
	}
	if cfg.Timeout <= 0 {
		// dist.Config reads 0 as its default; a command line that says
		// 0 means something else.
		return cfg, usagef("--timeout %v: want a positive duration, such as 30s", cfg.Timeout)
	}
	bucket, err := units.ParseBytes(c.String("bucket"))
	if err != nil {
		return cfg, usagef("--bucket: %v", err)
	}
	if bucket < 4 || bucket > units.GiB {
		return cfg, usagef("--bucket %v not between 4 B and 1 GiB", bucket)
	}
	cfg.BucketBytes = int(bucket)
	switch d := c.String("data"); d {
	case "":
		if dir := data.DefaultDir(); dir != "" {
			cfg.Data.Dir = dir
		} else {
			fmt.Fprintf(c.App.ErrWriter, "bench: Fashion-MNIST is not installed at %s; using synthetic data\n", data.FashionMNISTDir)
		}
	case "synthetic":
	default:
		cfg.Data.Dir = d
	}
	if c.Bool("in-step") {
		if name != "throughput" || cfg.Transport == "none" {
			return cfg, usagef("bench %s --in-step --transport %s: independent workers in step meet over inproc or tcp; only bench throughput measures them", name, cfg.Transport)
		}
		cfg.Independent, cfg.InStep = true, true
	}
	switch cfg.Transport {
	case "tcp":
		cfg.Spawn = &dist.Spawn{Args: []string{"bench", "worker"}, Stderr: c.App.ErrWriter}
		cfg.Log = c.App.ErrWriter
	case "none":
		if name != "throughput" {
			return cfg, usagef("bench %s --transport none: independent workers train replicas of their own; only bench throughput measures them (valid here: %s)", name, strings.Join(dist.Transports, ", "))
		}
		cfg.Transport, cfg.Independent = "inproc", true
	default:
		if name == "throughput" && !slices.Contains(dist.Transports, cfg.Transport) {
			return cfg, usagef("bench throughput: unknown transport %q (valid: %s, none)", cfg.Transport, strings.Join(dist.Transports, ", "))
		}
	}
	return cfg, nil
}

// checkConfig returns a usage error for a configuration the flags of
// command name made invalid.
func checkConfig(name string, cfg dist.Config) error {
	if err := cfg.Validate(); err != nil {
		return usagef("%s: %v", name, strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return nil
}

// positive returns a usage error unless every value of the flag is >= 1.
func positive(flag string, vs []int) error {
	if len(vs) == 0 {
		return usagef("--%s: no value", flag)
	}
	for _, v := range vs {
		if v < 1 {
			return usagef("--%s: %d is not a positive integer", flag, v)
		}
	}
	return distinct(flag, vs)
}

// distinct returns a usage error for the first value of the list flag
// given twice: measuring a configuration twice over is --repeat's or
// --rounds' work, and a value given twice is more likely a slip.
func distinct[T comparable](flag string, vs []T) error {
	for i, v := range vs {
		if slices.Index(vs, v) < i {
			return usagef("--%s: %v is given twice", flag, v)
		}
	}
	return nil
}

// runName returns the --run flag or bench-SUB-MODEL.
func runName(c *cli.Context, sub string) string {
	if r := c.String("run"); r != "" {
		return r
	}
	return "bench-" + sub + "-" + c.String("model")
}

// benchContext returns the command's context, cancelled on an interrupt
// (SIGINT) or SIGTERM, so that workers are stopped and the log written so
// far is put in place, marked incomplete (logStream).
func benchContext(c *cli.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
}

// logStream is a bench log written record by record to --out as the
// records are made (benchlog.File), so that a run interrupted or failing
// half-way keeps what it measured; without --out it writes nothing.
type logStream struct {
	f   *benchlog.File
	run string
	who string // the command, for messages
	n   int    // records written
}

// startLog starts the log of run at path for command who, or none if
// path is "".
func startLog(path, run, who string) (*logStream, error) {
	s := &logStream{run: run, who: who}
	if path == "" {
		return s, nil
	}
	f, err := benchlog.Create(path)
	if err != nil {
		return nil, err
	}
	s.f = f
	return s, nil
}

// add writes recs.
func (s *logStream) add(recs ...benchlog.Record) error {
	if s.f == nil {
		return nil
	}
	for _, r := range recs {
		if err := s.f.Write(r); err != nil {
			return err
		}
		s.n++
	}
	return nil
}

// abort ends the log with an end record that marks it incomplete, puts it
// in place, says so on w and returns cause, the error that stopped the
// run: the reason is "interrupted" when ctx is done, else the error.
func (s *logStream) abort(ctx context.Context, w io.Writer, cause error) error {
	if s.f == nil {
		return cause
	}
	reason := "interrupted"
	if ctx.Err() == nil {
		reason = "error: " + cutLine(cause.Error(), 300)
	}
	if err := s.f.CloseIncomplete(s.run, reason); err != nil {
		return errors.Join(cause, err)
	}
	fmt.Fprintf(w, "%s: %s holds the %d %s written before it stopped, marked incomplete (%s)\n", s.who, s.f.Path(), s.n, plural(s.n, "record", "records"), reason)
	return cause
}

// discard deletes the log written so far, for the whole log to be written
// in its place; it does nothing after abort.
func (s *logStream) discard() {
	if s.f != nil {
		s.f.Remove()
	}
}

// cutLine returns the first line of s, cut to n bytes.
func cutLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}

// warnBackend warns when an OpenBLAS build runs without
// OPENBLAS_CORETYPE, which OpenBLAS reads before the program starts.
func warnBackend(w io.Writer) {
	if tensor.Backend() == "openblas" && os.Getenv("OPENBLAS_CORETYPE") == "" {
		fmt.Fprintf(w, "bench: warning: OPENBLAS_CORETYPE is not set, and OpenBLAS chose core %q at start-up;\n"+
			"bench: a wrong choice costs up to 10-20x: rerun with OPENBLAS_CORETYPE=SkylakeX on AVX-512 Xeons\n", tensor.CoreName())
	}
}

// benchMachine describes this machine for the header record.
func benchMachine() *benchlog.Machine {
	host, _ := os.Hostname()
	m := &benchlog.Machine{Host: host, OS: runtime.GOOS, Arch: runtime.GOARCH, Cores: runtime.NumCPU(),
		Framework: "scaleplan engine " + runtime.Version(), Backend: tensor.BackendDetail()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		if info, err := hw.ParseCPUInfo(f); err == nil {
			m.CPU = info.Model
		}
		f.Close()
	}
	return m
}

// header returns the header record of run with its configuration.
func header(run string, config any) (benchlog.Record, error) {
	b, err := json.Marshal(config)
	if err != nil {
		return benchlog.Record{}, err
	}
	// UseNumber keeps integers beyond 2^53 (a 64-bit seed) digit for
	// digit; benchlog writes json.Number as it is.
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return benchlog.Record{}, err
	}
	return benchlog.Record{Kind: benchlog.KindHeader, Run: run, Tool: benchTool, Machine: benchMachine(), Config: m}, nil
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

// encodeLog returns the records as a bench log.
func encodeLog(recs []benchlog.Record) ([]byte, error) {
	var b bytes.Buffer
	bw := benchlog.NewWriter(&b)
	for _, r := range recs {
		if err := bw.Write(r); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// writeLog writes the log to --out atomically, if set, and returns the
// name to call it by.
func writeLog(c *cli.Context, b []byte) (string, error) {
	out := c.String("out")
	if out == "" {
		return "the bench log", nil
	}
	return out, atomicfile.WriteBytes(out, b)
}

// finish writes the log to --out, the table to stdout and, with --plot,
// the charts of the log's fit, in that order, so that a failure later
// loses nothing written before it.
func finish(c *cli.Context, log []byte, t *table, format string) error {
	name, err := writeLog(c, log)
	if err != nil {
		return err
	}
	if err := t.write(c.App.Writer, format); err != nil {
		return err
	}
	dir := c.String("plot")
	if dir == "" {
		return nil
	}
	lg, err := logs.Read(bytes.NewReader(log), name)
	if err != nil {
		return fmt.Errorf("bench: --plot: %w", err)
	}
	rep, err := fit.Fit([]*logs.Log{lg}, &fit.Options{})
	if err != nil {
		return fmt.Errorf("bench: --plot: %w", err)
	}
	return writeFitCharts(c, "bench", dir, rep, []*logs.Log{lg})
}

// plotFlag is bench's --plot.
func plotFlag() cli.Flag {
	return &cli.StringFlag{Name: "plot", Usage: "fit the log and write its charts (throughput law, or steps to target) as PNG and SVG into `DIR`"}
}

// ms formats a duration in milliseconds.
func ms(d time.Duration) string { return strconv.FormatFloat(d.Seconds()*1e3, 'f', 2, 64) }

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
			"minutes with an OpenBLAS build on two cores; see docs/engine.md.\n\n" +
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
	if c.NArg() > 0 {
		return usagef("bench steps takes no argument, got %q", c.Args().First())
	}
	if err := checkOutputs("bench steps", flagPaths(c.String, "out", "plot"), commandInputs(c, "", nil)); err != nil {
		return err
	}
	format := c.String("format")
	if err := checkFormat(format); err != nil {
		return err
	}
	batches := c.IntSlice("batch")
	if err := positive("batch", batches); err != nil {
		return err
	}
	w := c.Int("workers")
	for _, b := range batches {
		if w < 1 || b%w != 0 {
			return usagef("--batch %d is not a multiple of --workers %d", b, w)
		}
	}
	target, maxEpochs := c.Float64("target"), c.Float64("max-epochs")
	if !(target > 0 && target <= 1) {
		return usagef("--target %g is not a fraction in (0, 1]", target)
	}
	if !(maxEpochs > 0 && maxEpochs <= 1e4) {
		return usagef("--max-epochs %g not in (0, 10000]", maxEpochs)
	}
	factors := c.Float64Slice("lr-factors")
	if len(factors) == 0 {
		return usagef("--lr-factors: no value")
	}
	if err := distinct("lr-factors", factors); err != nil {
		return err
	}
	for _, f := range append([]float64{c.Float64("lr"), c.Float64("lr-max")}, factors...) {
		if !(f > 0) || math.IsInf(f, 0) {
			return usagef("learning rates and factors must be positive and finite, got %g", f)
		}
	}
	if c.Int("lr-batch") < 1 {
		return usagef("--lr-batch %d is not positive", c.Int("lr-batch"))
	}
	base, err := engineConfig(c, "steps")
	if err != nil {
		return err
	}
	base.Workers = w
	base.Optimizer, _ = optim.Defaults("sgd")
	base.Optimizer.Momentum = c.Float64("momentum")
	base.Schedule = optim.ScheduleSettings{Kind: "constant", Base: c.Float64("lr"), WarmupEpochs: c.Float64("warmup-epochs")}
	base.Data.Validation = c.Int("validation")
	base.Eval = dist.Eval{Every: c.Int("eval-every"), Growth: c.Float64("eval-growth"), Target: target}
	if base.Eval.Every < 1 {
		return usagef("--eval-every %d is not positive", base.Eval.Every)
	}
	cfgs := make([]dist.Config, len(batches))
	for i, b := range batches {
		cfg := base
		cfg.Batch = b / w
		cfg.Epochs = maxEpochs
		if err := checkConfig("bench steps", cfg); err != nil {
			return err
		}
		per, err := cfg.StepsPerEpoch()
		if err != nil {
			return err
		}
		cfg.Steps, cfg.Epochs = max(1, optim.EpochsToSteps(maxEpochs, per)), 0
		cfgs[i] = cfg
	}
	stderr := c.App.ErrWriter
	warnBackend(stderr)
	ctx, cancel := benchContext(c)
	defer cancel()

	run := runName(c, "steps")
	hdr, err := header(run, stepsSweep{Command: "bench steps", Batches: batches, Target: target, MaxEpochs: maxEpochs,
		LR: c.Float64("lr"), LRBatch: c.Int("lr-batch"), LRFactors: factors, LRMax: c.Float64("lr-max"), Engine: sweepTemplate(base)})
	if err != nil {
		return err
	}
	recs := []benchlog.Record{hdr}
	stream, err := startLog(c.String("out"), run, "bench steps")
	if err != nil {
		return err
	}
	defer stream.discard()
	if err := stream.add(hdr); err != nil {
		return err
	}
	t := &table{Title: fmt.Sprintf("%s steps to %.4g validation accuracy", base.ModelName(), target),
		Header: []string{"global_batch", "learning_rate", "reached", "steps_to_target", "accuracy", "trials", "seconds"}}
	grids := make([][]float64, len(cfgs))
	trials := 0
	for i, b := range batches {
		grids[i] = dist.LRGrid(c.Float64("lr"), c.Int("lr-batch"), b, factors, c.Float64("lr-max"))
		trials += len(grids[i])
	}
	bar := newCountdown(c, "bench steps", "ran", "trials", &trials)
	defer bar.Done()
	for i, cfg := range cfgs {
		b, lrs := batches[i], grids[i]
		bar.Item(fmt.Sprintf("batch %d", b))
		var secs float64
		conv, err := dist.SearchLR(ctx, cfg, lrs, func(tr dist.Trial) {
			secs += tr.Time.Seconds()
			bar.Printf("bench: %s batch %d lr %.4g: %s", cfg.ModelName(), b, tr.LR, trialText(tr))
			bar.Add(1)
		})
		if err == nil {
			err = stream.add(conv.Record(run))
		}
		if err != nil {
			return stream.abort(ctx, stderr, fmt.Errorf("bench steps: batch %d: %w", b, err))
		}
		recs = append(recs, conv.Record(run))
		var trials []string
		for _, tr := range conv.Trials {
			trials = append(trials, fmt.Sprintf("%.4g:%s", tr.LR, trialShort(tr)))
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(b), strconv.FormatFloat(conv.LR, 'g', 4, 64), yesNo(conv.Reached),
			strconv.Itoa(conv.StepsToTarget), strconv.FormatFloat(conv.Accuracy, 'f', 4, 64), strings.Join(trials, " "),
			strconv.FormatFloat(secs, 'f', 1, 64)})
	}
	log, err := encodeLog(recs)
	if err != nil {
		return err
	}
	stream.discard() // replaced by the whole log
	return finish(c, log, t, format)
}

// trialText describes a trial for the progress line.
func trialText(tr dist.Trial) string {
	switch {
	case tr.Reached:
		return fmt.Sprintf("target at step %d (%.1f s)", tr.Steps, tr.Time.Seconds())
	case tr.Diverged:
		return fmt.Sprintf("diverged by step %d", tr.Steps)
	}
	return fmt.Sprintf("not reached in %d steps, best accuracy %.4f (%.1f s)", tr.Steps, tr.Accuracy, tr.Time.Seconds())
}

// trialShort describes a trial in a table cell: the steps to the target,
// "div" or ">cap".
func trialShort(tr dist.Trial) string {
	switch {
	case tr.Reached:
		return strconv.Itoa(tr.Steps)
	case tr.Diverged:
		return "div"
	}
	return ">" + strconv.Itoa(tr.MaxSteps)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

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

// recipeConfig turns a model-profile recipe into engine settings.
func recipeConfig(r *model.Recipe) (dist.Config, float64, error) {
	var cfg dist.Config
	if !slices.Contains(dist.Models, r.Model) {
		return cfg, 0, fmt.Errorf("recipe %s trains %s; the engine trains %s", r.Name, r.Model, strings.Join(dist.Models, " or "))
	}
	cfg.Model = r.Model
	cfg.Batch, cfg.Workers, cfg.Accumulate = int(r.PerDeviceBatch), r.Devices, max(1, r.GradientAccumulation)
	cfg.Epochs, cfg.Steps = r.Epochs, int(r.Iterations)
	cfg.Smoothing = r.LabelSmoothing
	var o optim.Settings
	switch r.Optimizer {
	case model.SGD, model.Momentum, model.Nesterov:
		o, _ = optim.Defaults("sgd")
		o.Momentum, o.Nesterov = r.Momentum, r.Optimizer == model.Nesterov
	case model.LARS:
		o, _ = optim.Defaults("lars")
		o.Momentum, o.Eta = r.Momentum, r.LARSEta
	case model.Adam, model.FusedAdam, model.AdamW:
		kind := "adam"
		if r.Optimizer == model.AdamW {
			kind = "adamw"
		}
		o, _ = optim.Defaults(kind)
		if r.Adam != nil {
			o.Beta1, o.Beta2, o.Eps = r.Adam.Beta1, r.Adam.Beta2, r.Adam.Epsilon
		}
	default:
		return cfg, 0, fmt.Errorf("recipe %s: the engine has no optimizer %s", r.Name, r.Optimizer)
	}
	o.WeightDecay = r.WeightDecay
	cfg.Optimizer = o
	s := optim.ScheduleSettings{Base: r.BaseLR, Epochs: r.Epochs, End: r.Schedule.EndLR, StartFactor: r.Warmup.StartFactor,
		WarmupEpochs: r.Warmup.Epochs}
	sch := r.Schedule
	if sch.EverySteps != 0 || len(sch.MilestoneSteps) > 0 || sch.StartStep != 0 || sch.MaxDecays != 0 || r.Warmup.Steps != 0 ||
		(r.Warmup.Method != "" && r.Warmup.Method != "linear") {
		return cfg, 0, fmt.Errorf("recipe %s: the engine's schedules are given in epochs with a linear warm-up", r.Name)
	}
	switch sch.Kind {
	case model.Constant:
		s.Kind = "constant"
	case model.Cosine:
		s.Kind = "cosine"
	case model.Polynomial:
		s.Kind, s.Power = "poly", sch.Power
	case model.Step, model.Exponential:
		s.Kind, s.Gamma, s.DecayEpochs = "step", sch.Factor, sch.EveryEpochs
		if sch.Kind == model.Exponential {
			s.Kind = "exponential"
		}
	case model.MultiStep:
		s.Kind, s.Gamma, s.MilestoneEpochs = "multistep", sch.Factor, sch.MilestoneEpochs
	default:
		return cfg, 0, fmt.Errorf("recipe %s: the engine has no %s schedule", r.Name, sch.Kind)
	}
	cfg.Schedule = s
	target := 0.0
	if t := r.Target(); t.Metric == "accuracy" {
		target = t.Value
	}
	return cfg, target, nil
}

// trainRun is the configuration the header of a train log records.
type trainRun struct {
	Command string      `json:"command"`
	Recipe  string      `json:"recipe"`
	Target  float64     `json:"target"`
	Engine  dist.Config `json:"engine"`
}

func runBenchTrain(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("bench train takes no argument, got %q", c.Args().First())
	}
	if err := checkOutputs("bench train", flagPaths(c.String, "out", "plot"), commandInputs(c, "", nil)); err != nil {
		return err
	}
	format := c.String("format")
	if err := checkFormat(format); err != nil {
		return err
	}
	prof, err := loadProfiles(c)
	if err != nil {
		return err
	}
	name := c.String("recipe")
	if name == "" {
		m := c.String("model")
		if !slices.Contains(dist.Models, m) {
			return usagef("bench train: --model: %s", config.Unknown("model", m, dist.Models))
		}
		name = "engine-" + m
	}
	r, err := prof.Recipe(name)
	if err != nil {
		return err
	}
	cfg, target, err := recipeConfig(r)
	if err != nil {
		return err
	}
	if c.IsSet("model") && c.String("model") != cfg.Model {
		return usagef("--model %s, but recipe %s trains %s", c.String("model"), name, cfg.Model)
	}
	eng, err := engineConfig(c, "train")
	if err != nil {
		return err
	}
	eng.Model = cfg.Model
	if cfg.Model == "mlp" {
		cfg.Hidden = eng.Hidden
	}
	cfg.Data, cfg.Seed, cfg.Transport, cfg.Overlap, cfg.BucketBytes = eng.Data, eng.Seed, eng.Transport, eng.Overlap, eng.BucketBytes
	cfg.Threads, cfg.Prefetch, cfg.Timeout, cfg.Spawn, cfg.Chunk = eng.Threads, eng.Prefetch, eng.Timeout, eng.Spawn, eng.Chunk
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
	setFloat("target", &target)
	if c.IsSet("schedule") {
		cfg.Schedule.Kind = c.String("schedule")
	}
	if !(target >= 0 && target <= 1) {
		return usagef("--target %g is not a fraction in [0, 1]", target)
	}
	if err := checkConfig("bench train", cfg); err != nil {
		return err
	}
	per, err := cfg.StepsPerEpoch()
	if err != nil {
		return err
	}
	cfg.Eval = dist.Eval{Every: per, Target: target}
	stderr := c.App.ErrWriter
	warnBackend(stderr)
	ctx, cancel := benchContext(c)
	defer cancel()
	total := cfg.Steps
	if total == 0 {
		total = optim.EpochsToSteps(cfg.Epochs, per)
	}
	bar := newCountdown(c, "bench train", "trained", "steps", &total)
	defer bar.Done()
	cfg.Progress = func(dist.StepStats) { bar.Add(1) }
	cfg.EvalProgress = func(e dist.EvalResult) {
		bar.Printf("bench: %s epoch %.4g (step %d): test accuracy %.4f, loss %.4f (%.0f s)",
			cfg.ModelName(), float64(e.Step)/float64(per), e.Step, e.Accuracy, e.Loss, e.Time.Seconds())
	}
	res, err := dist.Run(ctx, cfg)
	if err != nil {
		return fmt.Errorf("bench train: %w", err)
	}
	run := runName(c, "train")
	hdr, err := header(run, trainRun{Command: "bench train", Recipe: name, Target: target, Engine: res.Config})
	if err != nil {
		return err
	}
	final := res.FinalAccuracy()
	rec := benchlog.Record{Kind: benchlog.KindConvergence, Run: run, Model: cfg.ModelName(), Device: dist.Device, Precision: "fp32",
		Transport: res.Config.Transport, Workers: res.Config.Workers, Batch: res.Config.Batch, GlobalBatch: res.Config.GlobalBatch(),
		Target: target, Accuracy: final, Reached: res.StepsToTarget > 0, StepsToTarget: len(res.Steps), LearningRate: res.Config.Schedule.Base}
	if res.StepsToTarget > 0 {
		rec.StepsToTarget = res.StepsToTarget
	}
	if res.Config.Accumulate > 1 {
		rec.Accumulate = res.Config.Accumulate
	}
	log, err := encodeLog([]benchlog.Record{hdr, rec})
	if err != nil {
		return err
	}
	if _, err := writeLog(c, log); err != nil {
		return err
	}
	t := &table{Title: fmt.Sprintf("%s with recipe %s, %s", cfg.ModelName(), name, tensor.Backend()),
		Header: []string{"epoch", "step", "test_accuracy", "test_loss", "seconds"}}
	for _, e := range res.Evals {
		t.Rows = append(t.Rows, []string{strconv.FormatFloat(float64(e.Step)/float64(per), 'g', 4, 64), strconv.Itoa(e.Step),
			strconv.FormatFloat(e.Accuracy, 'f', 4, 64), strconv.FormatFloat(e.Loss, 'f', 4, 64), strconv.FormatFloat(e.Time.Seconds(), 'f', 1, 64)})
	}
	if err := t.write(c.App.Writer, format); err != nil {
		return err
	}
	if format == "text" || format == "md" {
		verdict := "not reached"
		if res.StepsToTarget > 0 {
			verdict = fmt.Sprintf("first reached at step %d", res.StepsToTarget)
		}
		fmt.Fprintf(c.App.Writer, "\nfinal test accuracy %.4f after %d steps in %.1f s; target %.4g %s\n", final, len(res.Steps), res.Time.Seconds(), target, verdict)
	}
	return nil
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
