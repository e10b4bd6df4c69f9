package cmd

import (
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/calibrate"
	"scaleplan/engine/data"
	"scaleplan/engine/dist"
	"scaleplan/engine/measure"
	"scaleplan/engine/optim"
	"scaleplan/engine/tensor"
	"scaleplan/internal/atomicfile"
	"scaleplan/internal/benchlog"
	"scaleplan/internal/tables"
)

// validateEngineFlags are the flags of `validate --engine`, prefixed so that they do not clash
// with validate's own.
func validateEngineFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "engine", Usage: "close the calibration loop on this machine with the reference engine (measure workers that exchange nothing, fit, simulate W workers training together, measure them)"},
		&cli.StringFlag{Name: "engine-model", Value: "mlp", Usage: "engine network: mlp or cnn"},
		&cli.IntSliceFlag{Name: "engine-batch", Value: cli.NewIntSlice(16, 32, 64, 128, 256, 512), Usage: "per-worker batches `b,...`"},
		&cli.IntSliceFlag{Name: "engine-workers", Value: cli.NewIntSlice(2, 4), Usage: "worker counts `W,...` to predict and measure"},
		&cli.StringSliceFlag{Name: "engine-transport", Value: cli.NewStringSlice("inproc", "tcp"), Usage: "transports `T,...`: inproc, tcp"},
		&cli.StringFlag{Name: "engine-calibration", Value: calibrate.Step, Usage: "`HOW` the workers' compute is calibrated: step (for every W of --engine-workers, W independent workers computing as the W will; where W workers take turns on the cores, W in step over each transport, meeting once a step), each (the same, but W workers that take turns on the cores are taken from one worker per core) or one (one worker, its speed scaled to every W by the share of the cores it has); with --engine-from, a log replays with another calibration whose sweeps it holds (step as each or one, each as one), from those sweeps"},
		&cli.IntFlag{Name: "engine-threads", DefaultText: "max(1, cores / the largest of --engine-workers)", Usage: "with --engine-calibration one, `N` cores the calibrating worker computes on, beside independent copies of it on the other cores; the default is the cores each of the most workers has"},
		&cli.IntFlag{Name: "engine-steps", Value: 10, Usage: "timed steps per measurement"},
		&cli.IntFlag{Name: "engine-warmup", Value: 3, Usage: "untimed steps before them"},
		&cli.IntFlag{Name: "engine-rounds", DefaultText: "4, or 12 with the OpenBLAS build", Usage: "measure every configuration in `N` rounds over all of them, each measurement over the timed steps of all N"},
		warmRoundsFlag("engine-warm-rounds"),
		&cli.StringFlag{Name: "engine-data", Usage: "`DIR` of an IDX data set, or 'synthetic'; default Fashion-MNIST if installed"},
		&cli.StringFlag{Name: "engine-out", Usage: "write every measurement, round by round, and each round's link probes as a bench log to `FILE`, each record as it is made; a run cut short (interrupted, or failing) leaves the records made so far, marked incomplete"},
		&cli.StringFlag{Name: "engine-from", Usage: "measure nothing: rebuild the report of the run whose --engine-out log is `FILE`, with this build's simulator"},
		coreGuardFlag("engine-core-guard"),
	}
}

// calibrationMode returns --engine-calibration's value, or a usage error
// naming the valid ones.
func calibrationMode(c *cli.Context) (string, error) {
	mode := c.String("engine-calibration")
	if !slices.Contains(calibrate.Modes, mode) {
		return "", usagef("--engine-calibration %q (valid: %s)", mode, strings.Join(calibrate.Modes, ", "))
	}
	return mode, nil
}

// runValidateEngine is `validate --engine`.
func runValidateEngine(c *cli.Context) error {
	format := c.String("format")
	if err := checkFormat(format); err != nil {
		return err
	}
	if from := c.String("engine-from"); from != "" {
		return replayEngine(c, format, from)
	}
	o, err := engineOptions(c)
	if err != nil {
		return err
	}
	stderr := c.App.ErrWriter
	warnBackend(stderr)
	ctx, cancel := benchContext(c)
	defer cancel()
	n := len(o.Configs())
	total := o.Rounds*(n+len(o.Transports)) + o.Warm*n
	bar := newCountdown(c, "validate --engine", "made", "measurements", &total)
	defer bar.Done()
	o.Guard = newBarGuard(c, "engine-core-guard", "validate", bar.Bar, &total)
	o.Name = "validate-engine-" + o.Base.Model
	hdr, err := benchlog.Header(o.Name, benchTool, benchMachine(), map[string]any{"command": "validate --engine", "batches": o.Batches, "workers": o.Workers,
		"transports": o.Transports, "cores": o.Cores, "calibration": o.Mode, "calibration_threads": o.Threads, "steps": o.Steps, "warmup": o.Warmup,
		"rounds": o.Rounds, "warm_rounds": o.Warm, "core_guard": o.Guard != nil, "engine": o.Base.WithDefaults()})
	if err != nil {
		return err
	}
	// The log is written as the rounds go, so that a run cut short keeps
	// its rounds; the core guard's revisits after them are in the whole
	// log that replaces it at the end.
	stream, err := benchlog.NewStream(c.String("engine-out"), o.Name, "validate --engine")
	if err != nil {
		return err
	}
	defer stream.Discard()
	if err := stream.Add(hdr); err != nil {
		return err
	}
	o.Spawn, o.Log = &dist.Spawn{Args: []string{"bench", "worker"}, Stderr: stderr}, stderr
	o.Measuring = func(r int, cfg dist.Config) {
		bar.Item(fmt.Sprintf("%s%s batch %d", measure.RoundPrefix(r, o.Rounds), tables.EngineWorkers(cfg), cfg.Batch))
	}
	o.Measured = func(r int, cfg dist.Config, m *dist.Measurement) {
		bar.Printf("validate: %s%s %s batch %d: %.0f samples/s", measure.RoundPrefix(r, o.Rounds), m.Config.ModelName(), tables.EngineWorkers(cfg), cfg.Batch, m.SamplesPerSec)
		bar.Add(1)
	}
	o.Probing = func(r int, tr string) { bar.Item(fmt.Sprintf("round %d: link %s", r+1, tr)) }
	o.Probed = func(int, string) { bar.Add(1) }
	o.Record = func(r benchlog.Record) error { return stream.Add(r) }
	measured := false
	// The whole log, as the core guard left it, replaces the one written
	// round by round, before the analysis, which may fail.
	o.Done = func(recs []benchlog.Record) error {
		measured = true
		out := c.String("engine-out")
		if out == "" {
			return nil
		}
		log, err := benchlog.Encode(append([]benchlog.Record{hdr}, recs...))
		if err != nil {
			return err
		}
		stream.Discard()
		return atomicfile.WriteBytes(out, log)
	}
	cal, rows, err := calibrate.Run(ctx, *o)
	if err != nil && !measured {
		return stream.Abort(ctx, stderr, fmt.Errorf("validate --engine: %w", err))
	}
	if err != nil {
		return err
	}
	for _, w := range calibrate.UnboundedWarnings(cal, o.Batches) {
		bar.Printf("%s", w)
	}
	bar.Done()
	return writeEngineReport(c, format, tables.EngineTitle(o.Base.ModelName(), tensor.Backend(), runtime.NumCPU()), cal, rows)
}

// engineOptions returns what validate --engine's flags ask to measure, or
// a usage error.
func engineOptions(c *cli.Context) (*calibrate.Options, error) {
	o := &calibrate.Options{Batches: c.IntSlice("engine-batch"), Workers: c.IntSlice("engine-workers"), Transports: c.StringSlice("engine-transport"),
		Steps: c.Int("engine-steps"), Warmup: c.Int("engine-warmup"), Rounds: calibrate.DefaultRounds(tensor.Backend()), Cores: runtime.GOMAXPROCS(0)}
	if err := positive("engine-batch", o.Batches); err != nil {
		return nil, err
	}
	if err := positive("engine-workers", o.Workers); err != nil {
		return nil, err
	}
	if len(o.Batches) < 2 {
		return nil, usagef("--engine-batch: the one-worker fit needs at least two batches, got one, %s", tables.JoinInts(o.Batches))
	}
	if err := distinct("engine-transport", o.Transports); err != nil {
		return nil, err
	}
	for _, tr := range o.Transports {
		if !slices.Contains([]string{"inproc", "tcp"}, tr) {
			return nil, usagef("--engine-transport %q (valid: inproc, tcp)", tr)
		}
	}
	if len(o.Transports) == 0 {
		return nil, usagef("--engine-transport: no value")
	}
	if o.Steps < 2 || o.Warmup < 0 {
		return nil, usagef("--engine-steps %d, --engine-warmup %d: want at least 2 timed steps and no negative warm-up", o.Steps, o.Warmup)
	}
	if c.IsSet("engine-rounds") {
		o.Rounds = c.Int("engine-rounds")
	}
	if o.Rounds < 1 || o.Rounds > 99 {
		return nil, usagef("--engine-rounds %d: want 1 to 99", o.Rounds)
	}
	var err error
	if o.Warm, err = warmRounds(c, "engine-warm-rounds"); err != nil {
		return nil, err
	}
	if o.Mode, err = calibrationMode(c); err != nil {
		return nil, err
	}
	o.Threads = dist.Threads(o.Cores, slices.Max(o.Workers))
	if c.IsSet("engine-threads") {
		if o.Mode != calibrate.One {
			return nil, usagef("--engine-threads applies to --engine-calibration one; with %s, every worker count is calibrated on the cores its workers have", o.Mode)
		}
		if o.Threads = c.Int("engine-threads"); o.Threads < 1 || o.Threads > o.Cores {
			return nil, usagef("--engine-threads %d: want 1 to %d, the cores of this process (GOMAXPROCS)", o.Threads, o.Cores)
		}
	}
	o.Base = dist.Config{Model: c.String("engine-model"), Seed: 1, Overlap: true,
		Schedule: optim.ScheduleSettings{Kind: "constant", Base: 0.01}}
	switch d := c.String("engine-data"); d {
	case "":
		if dir := data.DefaultDir(); dir != "" {
			o.Base.Data.Dir = dir
		}
	case "synthetic":
	default:
		o.Base.Data.Dir = d
	}
	for _, cfg := range o.Configs() {
		if err := checkConfig("validate --engine", cfg); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// writeEngineReport writes the report (tables.WriteEngine) under title
// and applies --max-error to its mean absolute error at batch ≥
// calibrate.Large.
func writeEngineReport(c *cli.Context, format, title string, cal *calibrate.Calibration, rows []calibrate.Row) error {
	if err := tables.WriteEngine(c.App.Writer, format, title, cal, rows); err != nil {
		return err
	}
	if maxErr, mae := c.Float64("max-error"), calibrate.SummaryOf(rows).Large.MAE; c.IsSet("max-error") && mae > maxErr/100 {
		return fmt.Errorf("validate --engine: mean absolute error %.1f%% at batch >= %d exceeds --max-error %g%%", 100*mae, calibrate.Large, maxErr)
	}
	return nil
}
