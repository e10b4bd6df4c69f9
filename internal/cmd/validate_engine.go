package cmd

import (
	"context"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/engine/data"
	"scaleplan/engine/dist"
	"scaleplan/engine/optim"
	"scaleplan/engine/tensor"
	"scaleplan/fit"
	"scaleplan/internal/atomicfile"
	"scaleplan/internal/benchlog"
	"scaleplan/internal/units"
	"scaleplan/sim"
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
		&cli.StringFlag{Name: "engine-calibration", Value: calibrateStep, Usage: "`HOW` the workers' compute is calibrated: step (for every W of --engine-workers, W independent workers computing as the W will; where W workers take turns on the cores, W in step over each transport, meeting once a step), each (the same, but W workers that take turns on the cores are taken from one worker per core) or one (one worker, its speed scaled to every W by the share of the cores it has); with --engine-from, a log replays with another calibration whose sweeps it holds (step as each or one, each as one), from those sweeps"},
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

// engineRounds returns the rounds validate --engine measures every
// configuration in when --engine-rounds is not given, for the tensor
// backend (tensor.Backend): 4 with gonum's pure-Go BLAS, the README's
// build, whose run of them takes about eight minutes on two cores, near
// the ten a run is meant to take, and 12 with OpenBLAS, which computes the
// same rounds in a third of the time and spends the rest measuring each
// configuration over three times the steps. A row's error then scatters
// less from run to run (docs/validation.md, "Rounds"): what is measured
// and how it is modelled are the same, only averaged over more steps.
func engineRounds(backend string) int {
	if backend == "openblas" {
		return 12
	}
	return 4
}

// engineCalibration is what the calibration's sweeps and the link probes
// give the simulator.
type engineCalibration struct {
	Sweeps []*sweepCalibration   // one with For 0 (--engine-calibration one), or engineSweeps' of each
	Layers []int                 // gradient values per tensor, backward order
	Bucket int                   // all-reduce bucket, bytes
	Links  map[string]*dist.Link // per transport
	Rounds int                   // rounds each configuration is measured in
	Warm   int                   // warm rounds set aside before them
	Cores  int                   // cores the workers and their links share (GOMAXPROCS); 0 means as many as workers
	Guard  *coreGuard            // what the core guard did; nil without one
}

// sweepCalibration is the calibration of one sweep of the batches: worker
// 0 of Copies independent workers (one alone where Copies is 1), each on
// Threads cores.
type sweepCalibration struct {
	For             int                // the worker count whose cores it measures (calibrateEach, calibrateStep); 0: one sweep for every count (calibrateOne)
	Over            string             // the transport workers in step met over (calibrateStep, For > cores); "": independent workers
	Serves          []int              // the worker counts it calibrates: For, and with For = cores those with more workers than cores; nil for every count
	Copies, Threads int                // workers measured, the calibrated one included, and the cores of each; Threads 0 means all of them
	Law             *fit.ThroughputFit // v = b/(b/v0 + t) of the calibrated worker
	Update          float64            // its mean optimizer update, seconds
	Forward         float64            // its forward share of forward + backward, in (0, 1)
	Jitter          map[int]float64    // per batch: its spread from step to step (roundJitter)
}

// The calibrations validate --engine can make (--engine-calibration).
const (
	calibrateStep = "step" // as calibrateEach, but W > cores workers: W in step over each transport (dist.Config.InStep)
	calibrateEach = "each" // every worker count W: W independent workers on the cores the W workers will have
	calibrateOne  = "one"  // one sweep for every worker count, scaled to each by the slowdown model
)

// calibrations lists the valid --engine-calibration values.
var calibrations = []string{calibrateStep, calibrateEach, calibrateOne}

// engineSweeps returns the calibration's sweeps for workers on cores,
// connected by transports. With calibrateOne: one worker on calThreads
// cores beside independent copies of it on the others
// (calibrationCopies). With calibrateEach: for each W of workers, F =
// min(W, cores) independent workers of workerThreads(cores, F) cores, as
// the W workers will compute when they have a core or more each; workers
// that take turns on the cores (W > cores) share the sweep of one worker
// per core, F = cores, and the slowdown model takes them from it
// (engineSimConfig). Independent workers that take turns are no measure
// of workers that do: with nothing to wait for, each runs its steps as the
// scheduler leaves it, not in step with the others (docs/validation.md,
// "A sweep for each worker count"). With calibrateStep, as calibrateEach,
// but W > cores workers have a sweep for each transport of their own: W
// workers that take turns on the cores in step, meeting once a step over
// the transport where exchanging workers all-reduce, and exchanging
// nothing (dist.Config.InStep; docs/validation.md, "Workers in step").
func engineSweeps(mode string, workers []int, transports []string, cores, calThreads int) []*sweepCalibration {
	if mode == calibrateOne {
		return []*sweepCalibration{{Copies: calibrationCopies(cores, calThreads), Threads: calThreads}}
	}
	var sw []*sweepCalibration
	byFor := map[int]*sweepCalibration{}
	for _, w := range workers {
		if mode == calibrateStep && w > cores {
			for _, tr := range transports {
				sw = append(sw, &sweepCalibration{For: w, Over: tr, Serves: []int{w}, Copies: w, Threads: workerThreads(cores, w)})
			}
			continue
		}
		f := min(w, cores)
		s, ok := byFor[f]
		if !ok {
			s = &sweepCalibration{For: f, Copies: f, Threads: workerThreads(cores, f)}
			byFor[f] = s
			sw = append(sw, s)
		}
		s.Serves = append(s.Serves, w)
	}
	return sw
}

// calibrationMode returns --engine-calibration's value, or a usage error
// naming the valid ones.
func calibrationMode(c *cli.Context) (string, error) {
	mode := c.String("engine-calibration")
	if !slices.Contains(calibrations, mode) {
		return "", usagef("--engine-calibration %q (valid: %s)", mode, strings.Join(calibrations, ", "))
	}
	return mode, nil
}

// sweep returns the sweep that calibrates w workers over transport: that
// of w workers in step over it, or else w's own (For = min(w, cores)), or
// else the one for every count.
func (cal *engineCalibration) sweep(w int, transport string) *sweepCalibration {
	f := w
	if cal.Cores > 0 {
		f = min(w, cal.Cores)
	}
	var own, all *sweepCalibration
	for _, s := range cal.Sweeps {
		switch {
		case s.Over != "":
			if s.For == w && s.Over == transport {
				return s
			}
		case s.For == f: // one a count (engineSweeps)
			own = s
		case s.For == 0:
			all = s
		}
	}
	if own != nil {
		return own
	}
	return all
}

// engineSimConfig returns the simulator's configuration of w engine
// workers at per-worker batch b on this machine, connected by transport,
// from the calibration's sweep for w over transport
// (engineCalibration.sweep). Each of the
// w workers computes on k_w = max(1, cores/w) cores, and when w·k_w is
// more than the cores they take turns on them. Calibrated by w's own sweep
// (--engine-calibration each and step), w independent workers on those
// cores, or, with step, w workers in step over the transport where they
// take turns, a worker computes as the calibrated one did: s = 1 below. Calibrated by
// the sweep of one worker on k cores, as --engine-calibration one does for
// every count and each does for the counts that take turns on the cores
// (engineSweeps), a worker's compute and update take s times those of the
// calibrated worker,
//
//	s = (k/k_w) · max(1, w·k_w/cores)
//
// and in either case
//
//	PerSample = s/v0    Update = s·u1    Fixed = s·max(t − u1, 0)
//
// where u1 is the calibrated worker's measured update; t − u1 is the rest
// of the fixed time per step. Calibrated on one core of two (k = 1), two
// workers have s = 1 and four s = 2; calibrated on both (k = 2), s = w.
// A worker with more cores than the calibrated one is taken to speed up
// in proportion (s < 1), which is optimistic: w's own sweep measures it
// instead. With the calibrated worker's own cores the step is b/v0 + t,
// the fitted law.
//
// The gradient is all-reduced by a ring, in buckets of the engine's size
// filled in backward order, over links of the latency MeasureLink found
// for the transport (on buffers out of the cache, as after backward) and
// of its bandwidth scaled by the ranks' share of the cores,
//
//	bandwidth = β · min(1, cores/w)
//
// because both transports are driven by the CPU: every byte is copied
// (and, over TCP, passed through the kernel) by the cores the workers
// compute on. The probe ran two ranks with a core each; w ranks on the
// same cores drive w links at once with cores/w of a core each. For the
// same reason the all-reduce does not hide behind the backward pass: the
// cores that would copy and add are busy computing, so the simulator
// runs it after backward (NoOverlap) even when the engine overlaps it.
//
// Each worker's forward and backward vary from step to step with the
// coefficient of variation J the calibrated worker showed at batch b
// (roundJitter), drawn anew for every worker and step (sim.Config.Jitter),
// so that a synchronous step waits for the slowest of the w workers; not
// after a sweep of workers in step, each of whose measured steps already
// waited for the slowest.
func engineSimConfig(cal *engineCalibration, w, b int, transport string) (sim.Config, error) {
	link, ok := cal.Links[transport]
	if !ok && w > 1 {
		return sim.Config{}, fmt.Errorf("no link measured for transport %q", transport)
	}
	sw := cal.sweep(w, transport)
	if sw == nil {
		return sim.Config{}, fmt.Errorf("no calibration of %d workers", w)
	}
	v0, t := sw.Law.V0, float64(sw.Law.T)
	fw := float64(w)
	slow := cal.slowdown(sw, w)
	layers := make([]units.Bytes, len(cal.Layers))
	var grad units.Bytes
	for i, n := range cal.Layers {
		layers[i] = units.Bytes(4 * n)
		grad += layers[i]
	}
	cfg := sim.Config{
		Name:           fmt.Sprintf("engine %d workers, %s, batch %d", w, transport, b),
		Nodes:          1,
		DevicesPerNode: w,
		MicroBatch:     b,
		Compute: sim.Compute{
			PerSample:       units.Seconds(slow / v0),
			Fixed:           units.Seconds(slow * max(t-sw.Update, 0)),
			Update:          units.Seconds(slow * min(sw.Update, t)),
			ForwardFraction: sw.Forward,
		},
		Memory: sim.Memory{Gradients: grad, Weights: grad},
		Comm:   sim.Comm{Algorithm: sim.Ring, Layers: layers, Bucket: units.Bytes(cal.Bucket), NoOverlap: true},
	}
	if j := sw.Jitter[b]; w > 1 && j > 0 && sw.Over == "" {
		cfg.Jitter, cfg.Steps = min(j, sim.MaxJitter), engineJitterSteps
	}
	if w > 1 {
		share := 1.0
		if cal.Cores > 0 {
			share = min(1, float64(cal.Cores)/fw)
		}
		cfg.Network.Intra = sim.Link{Bandwidth: units.BytesPerSec(link.Bandwidth * share), Latency: units.Seconds(link.Latency)}
	}
	return cfg, nil
}

// engineJitterSteps is the number of steps engineSimConfig simulates
// when the workers' compute varies from step to step. The wait for the
// slowest of w workers is about J·m_w of a step's forward and backward,
// m_w the mean of the largest of w standard normal draws (m_2 = 0.56,
// m_4 = 1.03); its mean over the 399 steps after the first then has a
// standard error of J·s_w/√399, under J/20 (s_w, the standard deviation
// of that largest draw, is 0.83 for two and 0.70 for four).
const engineJitterSteps = 400

// jitterText lists the sweep's jitter by batch, "batch 16 6.9%, 32 8.8%,
// ...", or returns "" when no batch has any.
func (sw *sweepCalibration) jitterText() string {
	bs := slices.Sorted(maps.Keys(sw.Jitter))
	var parts []string
	some := false
	for i, b := range bs {
		j := sw.Jitter[b]
		some = some || j > 0
		p := fmt.Sprintf("%d %.1f%%", b, 100*j)
		if i == 0 {
			p = "batch " + p
		}
		parts = append(parts, p)
	}
	if !some {
		return ""
	}
	return strings.Join(parts, ", ")
}

// slowdown returns s of engineSimConfig: how many times longer w workers
// on the calibration's cores each take to compute a step than the worker
// sw calibrated; 1 where sw is w's own. Without a count of cores or of the
// calibrated worker's threads the calibrated worker is taken to have had
// the whole machine, and s = w.
func (cal *engineCalibration) slowdown(sw *sweepCalibration, w int) float64 {
	if sw.For == w {
		return 1
	}
	if cal.Cores < 1 || sw.Threads < 1 {
		return float64(w)
	}
	kw := workerThreads(cal.Cores, w)
	return float64(sw.Threads) / float64(kw) * max(1, float64(w*kw)/float64(cal.Cores))
}

// calibrationText says what sw's calibrated worker computed on, as the
// report's calibration line begins: "Calibration (one worker on 1 of 2
// cores, beside an independent copy of it on the other", on a machine of
// cores, with " of 2 and 4 workers" after "Calibration" where the run made
// more than one sweep (several); for workers in step, "Calibration of 4
// workers over tcp (4 workers in step on 2 cores, …".
func (sw *sweepCalibration) calibrationText(cores int, several bool) string {
	s := "Calibration"
	if sw.Over != "" {
		return fmt.Sprintf("%s of %s over %s (%d workers in step on %s, meeting over %s where they would all-reduce and exchanging nothing",
			s, workersText(sw.Serves), sw.Over, sw.Copies, coresWord(cores), sw.Over)
	}
	if several && len(sw.Serves) > 0 {
		s += " of " + workersText(sw.Serves)
	}
	if sw.Threads < 1 || sw.Threads == cores {
		return s + " (one worker on " + coresWord(cores)
	}
	s += fmt.Sprintf(" (one worker on %d of %s", sw.Threads, coresWord(cores))
	switch sw.Copies {
	case 1:
	case 2:
		s += ", beside an independent copy of it on the other"
	default:
		s += fmt.Sprintf(", beside %d independent copies of it on the others", sw.Copies-1)
	}
	return s
}

// workersText is "1 worker", "2 workers", "2 and 4 workers" or "1, 2 and 4
// workers".
func workersText(ns []int) string {
	if len(ns) == 1 {
		return fmt.Sprintf("%d %s", ns[0], plural(ns[0], "worker", "workers"))
	}
	return joinInts(ns[:len(ns)-1]) + " and " + strconv.Itoa(ns[len(ns)-1]) + " workers"
}

// coresWord is "1 core" or "n cores".
func coresWord(n int) string { return fmt.Sprintf("%d %s", n, plural(n, "core", "cores")) }

// workerThreads is the number of cores each of w workers computes on when
// they share cores: max(1, cores/w), dist.Config's default.
func workerThreads(cores, w int) int { return max(1, cores/w) }

// engineRow is one predicted and measured configuration.
type engineRow struct {
	Workers, Batch     int
	Transport          string
	Predicted          *sim.Result
	Measured           *dist.Measurement
	Error              float64 // (predicted − measured)/measured samples/s
	PredComm, MeasWait float64 // exposed communication after the worker's own backward, the wait for the slowest included, seconds
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
	batches, workers := c.IntSlice("engine-batch"), c.IntSlice("engine-workers")
	if err := positive("engine-batch", batches); err != nil {
		return err
	}
	if err := positive("engine-workers", workers); err != nil {
		return err
	}
	if len(batches) < 2 {
		return usagef("--engine-batch: the one-worker fit needs at least two batches, got one, %s", joinInts(batches))
	}
	transports := c.StringSlice("engine-transport")
	if err := distinct("engine-transport", transports); err != nil {
		return err
	}
	for _, tr := range transports {
		if !slices.Contains([]string{"inproc", "tcp"}, tr) {
			return usagef("--engine-transport %q (valid: inproc, tcp)", tr)
		}
	}
	if len(transports) == 0 {
		return usagef("--engine-transport: no value")
	}
	steps, warmup := c.Int("engine-steps"), c.Int("engine-warmup")
	if steps < 2 || warmup < 0 {
		return usagef("--engine-steps %d, --engine-warmup %d: want at least 2 timed steps and no negative warm-up", steps, warmup)
	}
	rounds := engineRounds(tensor.Backend())
	if c.IsSet("engine-rounds") {
		rounds = c.Int("engine-rounds")
	}
	if rounds < 1 || rounds > 99 {
		return usagef("--engine-rounds %d: want 1 to 99", rounds)
	}
	warm, err := warmRounds(c, "engine-warm-rounds")
	if err != nil {
		return err
	}
	mode, err := calibrationMode(c)
	if err != nil {
		return err
	}
	cores := runtime.GOMAXPROCS(0)
	calThreads := workerThreads(cores, slices.Max(workers))
	if c.IsSet("engine-threads") {
		if mode != calibrateOne {
			return usagef("--engine-threads applies to --engine-calibration one; with %s, every worker count is calibrated on the cores its workers have", mode)
		}
		if calThreads = c.Int("engine-threads"); calThreads < 1 || calThreads > cores {
			return usagef("--engine-threads %d: want 1 to %d, the cores of this process (GOMAXPROCS)", calThreads, cores)
		}
	}
	sweeps := engineSweeps(mode, workers, transports, cores, calThreads)
	base := dist.Config{Model: c.String("engine-model"), Seed: 1, Overlap: true,
		Schedule: optim.ScheduleSettings{Kind: "constant", Base: 0.01}}
	switch d := c.String("engine-data"); d {
	case "":
		if dir := data.DefaultDir(); dir != "" {
			base.Data.Dir = dir
		}
	case "synthetic":
	default:
		base.Data.Dir = d
	}
	// Every configuration: the calibration's sweeps of the batches
	// (engineSweeps: by default W independent workers, each on the cores
	// each of W workers has, for each W), then W workers over each
	// transport. They are measured in rounds, each round all of them in
	// this order, so that the spells of load on a shared machine fall on
	// all of them alike; each one's measurement is over the timed steps of
	// all its rounds (dist.Combine).
	cfgs := engineConfigs(base, batches, workers, transports, cores, sweeps)
	for _, cfg := range cfgs {
		cfg.Steps = warmup + steps // as dist.Measure will run it
		if err := checkConfig("validate --engine", cfg); err != nil {
			return err
		}
	}
	stderr := c.App.ErrWriter
	warnBackend(stderr)
	ctx, cancel := benchContext(c)
	defer cancel()
	total := rounds*(len(cfgs)+len(transports)) + warm*len(cfgs)
	bar := newCountdown(c, "validate --engine", "made", "measurements", &total)
	defer bar.Done()
	guard := newBarGuard(c, "engine-core-guard", "validate", bar.Bar, &total)
	run := "validate-engine-" + base.Model
	hdr, err := header(run, map[string]any{"command": "validate --engine", "batches": batches, "workers": workers,
		"transports": transports, "cores": cores, "calibration": mode, "calibration_threads": calThreads, "steps": steps, "warmup": warmup, "rounds": rounds, "warm_rounds": warm,
		"core_guard": guard != nil, "engine": base.WithDefaults()})
	if err != nil {
		return err
	}
	// The log is written as the rounds go, so that a run cut short keeps
	// its rounds; the core guard's revisits after them are in the whole
	// log that replaces it at the end.
	stream, err := startLog(c.String("engine-out"), run, "validate --engine")
	if err != nil {
		return err
	}
	defer stream.discard()
	if err := stream.add(hdr); err != nil {
		return err
	}
	measure := func(round, i int) (*dist.Measurement, error) {
		cfg := cfgs[i]
		if cfg.Transport == "tcp" && cfg.Workers > 1 {
			cfg.Spawn = &dist.Spawn{Args: []string{"bench", "worker"}, Stderr: stderr}
			cfg.Log = stderr
		}
		prefix := roundPrefix(round, rounds)
		who := fmt.Sprintf("%d workers %s", cfg.Workers, cfg.Transport)
		switch {
		case cfg.InStep:
			who = fmt.Sprintf("%d workers in step over %s", cfg.Workers, cfg.Transport)
		case cfg.Independent:
			who = fmt.Sprintf("%d independent workers", cfg.Workers)
		}
		bar.Item(fmt.Sprintf("%s%s batch %d", prefix, who, cfg.Batch))
		m, err := dist.Measure(ctx, cfg, warmup, steps)
		if err != nil {
			return nil, fmt.Errorf("%d workers, %s, batch %d: %w", cfg.Workers, cfg.Transport, cfg.Batch, err)
		}
		bar.Printf("validate: %s%s %s batch %d: %.0f samples/s", prefix, m.Config.ModelName(), who, cfg.Batch, m.SamplesPerSec)
		bar.Add(1)
		return m, nil
	}
	// Each round ends with a probe of every link (a ring step of two
	// ranks at 16 KiB and 4 MiB), so that the links too are measured in
	// every round and a spell of load moves them no more than the median.
	probes := make([][]dist.Link, len(transports))
	linkRecs := make([][]benchlog.Record, rounds) // each round's probes, for the log
	evict := linkEvict()                          // the machine's cache, read once
	probeRound := func(r int) error {
		for i, tr := range transports {
			bar.Item(fmt.Sprintf("round %d: link %s", r+1, tr))
			link, err := probeLink(ctx, tr, evict)
			if err != nil {
				return fmt.Errorf("probing the %s link: %w", tr, err)
			}
			probes[i] = append(probes[i], *link)
			linkRecs[r] = append(linkRecs[r], link.Record(run, tr, r+1))
			bar.Add(1)
			if err := stream.add(link.Record(run, tr, r+1)); err != nil {
				return err
			}
		}
		return nil
	}
	keep := func(_, _ int, m *dist.Measurement) error { return stream.add(m.Record(run)) }
	meas, kept, err := measureRoundsTo(len(cfgs), warm, rounds, measure, probeRound, guard, roundHooks{kept: keep})
	if err != nil {
		return stream.abort(ctx, stderr, fmt.Errorf("validate --engine: %w", err))
	}
	roundRecs := make([][]benchlog.Record, len(cfgs)) // each configuration's record of each round
	for i := range cfgs {
		for _, m := range kept[i] {
			roundRecs[i] = append(roundRecs[i], m.Record(run))
		}
	}
	var recs []benchlog.Record // every measurement kept and every link probe, in the order measured
	for r := range rounds {
		for i := range cfgs {
			recs = append(recs, roundRecs[i][r])
		}
		recs = append(recs, linkRecs[r]...)
	}
	// The whole log, as the core guard left it, replaces the one written
	// round by round, before the analysis, which may fail.
	if out := c.String("engine-out"); out != "" {
		log, err := encodeLog(append([]benchlog.Record{hdr}, recs...))
		if err != nil {
			return err
		}
		stream.discard()
		if err := atomicfile.WriteBytes(out, log); err != nil {
			return err
		}
	}

	cal, rows, err := analyseEngine(base, batches, sweeps, cfgs, meas, roundRecs, transports, probes, cores)
	if err != nil {
		return err
	}
	cal.Rounds, cal.Warm = rounds, warm
	cal.Guard = guard
	for _, w := range unboundedWarnings(cal, batches) {
		bar.Printf("%s", w)
	}
	bar.Done()
	return writeEngineReport(c, format, engineTitle(base.ModelName(), tensor.Backend(), runtime.NumCPU()), cal, rows)
}

// writeEngineReport writes the report (writeEngineValidation) under title
// and applies --max-error to its mean absolute error at batch ≥
// engineLarge.
func writeEngineReport(c *cli.Context, format, title string, cal *engineCalibration, rows []engineRow) error {
	if err := writeEngineValidation(c, format, title, cal, rows); err != nil {
		return err
	}
	if maxErr, mae := c.Float64("max-error"), summaryOf(rows).Large.MAE; c.IsSet("max-error") && mae > maxErr/100 {
		return fmt.Errorf("validate --engine: mean absolute error %.1f%% at batch >= %d exceeds --max-error %g%%", 100*mae, engineLarge, maxErr)
	}
	return nil
}

// engineTitle is the report's title for model on backend and a machine of
// cores.
func engineTitle(model, backend string, cores int) string {
	return fmt.Sprintf("Engine: predicted against measured, %s, %s, %d cores", model, backend, cores)
}

// engineConfigs returns every configuration validate --engine measures, in
// the order of a round: the calibration's sweeps of batches, each sweep's
// at every batch (calibrationConfig), then W workers over each transport at
// each batch, for each W of workers.
func engineConfigs(base dist.Config, batches, workers []int, transports []string, cores int, sweeps []*sweepCalibration) []dist.Config {
	var cfgs []dist.Config
	for _, sw := range sweeps {
		for _, b := range batches {
			cfgs = append(cfgs, calibrationConfig(base, b, sw))
		}
	}
	for _, w := range workers {
		for _, tr := range transports {
			for _, b := range batches {
				cfg := base
				cfg.Workers, cfg.Batch, cfg.Transport, cfg.Threads = w, b, tr, workerThreads(cores, w)
				cfgs = append(cfgs, cfg)
			}
		}
	}
	return cfgs
}

// analyseEngine computes the report from what a run measured: meas, each
// configuration of cfgs (engineConfigs: the sweeps' first, each at
// batches) over its rounds, rounds, the records of each configuration's
// measurement round by round, and probes, each transport's link probes.
//  1. Each sweep: the throughput law of its calibrated worker, the update
//     time and the spread from step to step at each batch (roundJitter).
//  2. The links: the median of each round's probe.
//  3. W workers predicted against their measurements.
//
// The sweeps are filled in and become the calibration's.
func analyseEngine(base dist.Config, batches []int, sweeps []*sweepCalibration, cfgs []dist.Config, meas []*dist.Measurement, rounds [][]benchlog.Record,
	transports []string, probes [][]dist.Link, cores int) (*engineCalibration, []engineRow, error) {
	nb := len(batches)
	for i, sw := range sweeps {
		at := i * nb
		if err := calibrateSweep(sw, batches, meas[at:at+nb], rounds[at:at+nb]); err != nil {
			return nil, nil, err
		}
	}
	layers, err := base.GradientLayout()
	if err != nil {
		return nil, nil, err
	}
	cal := &engineCalibration{Sweeps: sweeps, Layers: layers, Bucket: base.WithDefaults().BucketBytes, Links: map[string]*dist.Link{}, Cores: cores}
	for i, tr := range transports {
		link, err := dist.MedianLink(probes[i])
		if err != nil {
			return nil, nil, fmt.Errorf("validate --engine: the %s link: %w", tr, err)
		}
		cal.Links[tr] = &link
	}
	n := len(sweeps) * nb
	rows, err := predictEngine(cal, cfgs[n:], meas[n:])
	if err != nil {
		return nil, nil, err
	}
	return cal, rows, nil
}

// unboundedWarnings says, for each sweep of cal whose measurements at
// batches did not bound v0, what the predictions then rest on.
func unboundedWarnings(cal *engineCalibration, batches []int) []string {
	var ws []string
	for _, sw := range cal.Sweeps {
		if !sw.Law.V0Unbounded {
			continue
		}
		who := "the one-worker sweep"
		if len(cal.Sweeps) > 1 {
			who = "the sweep of " + workersText(sw.Serves)
		}
		ws = append(ws, fmt.Sprintf("validate --engine: warning: %s does not bound v0: its step time did not grow measurably from batch %d to %d, so the predictions below rest on t alone and a v0 the least squares left at %.4g samples/s; measure larger batches (--engine-batch)",
			who, slices.Min(batches), slices.Max(batches), sw.Law.V0))
	}
	return ws
}

// roundJitter returns the spread from step to step of one worker's
// compute that recs, the rounds of a measurement, show: the median over
// the rounds of
//
//	J_r = σ_r / (f_r + b_r)
//
// round r's sample standard deviation of worker 0's step times over its
// mean forward and backward (over its mean step where the record has no
// phases), or 0 where no round has two steps or more. The simulator takes
// J as the coefficient of variation of each worker's forward and backward,
// drawn anew every step, so that the workers of a synchronous step wait
// for the slowest of them (sim.Config.Jitter). Within a round the steps
// follow each other on a machine in one state: their spread is the
// variation of step to step; between rounds the machine's load changes
// for all workers at once, which makes none wait for another, and is left
// out. The median leaves out a round with a step caught by a spell of
// load.
func roundJitter(recs []benchlog.Record) float64 {
	var js []float64
	for _, r := range recs {
		if r.Steps < 2 || !(r.StepTime > 0) {
			continue
		}
		d := r.StepTime
		if p := r.Phases; p != nil && p.Forward+p.Backward > 0 {
			d = p.Forward + p.Backward
		}
		js = append(js, r.StepTimeStd/d)
	}
	if len(js) == 0 {
		return 0
	}
	slices.Sort(js)
	n := len(js)
	if n%2 == 1 {
		return js[n/2]
	}
	return (js[n/2-1] + js[n/2]) / 2
}

// calibrationConfig returns sw's measurement at batch b: one worker on
// sw.Threads cores and, beside it, sw.Copies − 1 independent copies of it
// (dist.Config.Independent) on the others, or taking turns with it on the
// same ones, so that the worker computes with the machine as loaded as it
// is under the predicted workers, which share its memory and cache, but
// exchanges nothing. With one copy it is one worker alone.
func calibrationConfig(base dist.Config, b int, sw *sweepCalibration) dist.Config {
	cfg := base
	cfg.Workers, cfg.Batch, cfg.Transport, cfg.Threads = sw.Copies, b, "inproc", sw.Threads
	cfg.Independent = cfg.Workers > 1
	if sw.Over != "" {
		cfg.Transport, cfg.InStep = sw.Over, true
	}
	return cfg
}

// calibrationCopies is the number of workers of --engine-calibration one's
// measurement, the calibrated one included: one on each group of threads
// of the cores.
func calibrationCopies(cores, threads int) int { return max(1, cores/threads) }

// calibrateSweep fits the throughput law to sw's measurements at batches
// (calibrationConfig; worker 0's samples/s, b/step) and takes from them
// the mean optimizer update and the forward share of forward + backward,
// and from each one's rounds, rounds, its spread from step to step
// (roundJitter).
func calibrateSweep(sw *sweepCalibration, batches []int, meas []*dist.Measurement, rounds [][]benchlog.Record) error {
	var bs, vs []float64
	var upd, fwd, bwd float64
	sw.Jitter = make(map[int]float64, len(batches))
	for i, b := range batches {
		m := meas[i]
		if sw.Over == "" { // workers in step waited for the slowest in every step measured
			sw.Jitter[b] = roundJitter(rounds[i])
		}
		bs, vs = append(bs, float64(b)), append(vs, float64(b)/m.StepTime)
		upd += m.Phases.Update.Seconds() / float64(len(batches))
		fwd += m.Phases.Forward.Seconds()
		bwd += m.Phases.Backward.Seconds()
	}
	law, err := fit.Throughput(bs, vs, nil)
	if err != nil {
		return fmt.Errorf("validate --engine: fitting one worker: %w", err)
	}
	sw.Law, sw.Update, sw.Forward = law, upd, min(max(fwd/(fwd+bwd), 0.05), 0.95)
	return nil
}

// predictEngine simulates every configuration of cfgs with cal and
// compares it with its measurement.
func predictEngine(cal *engineCalibration, cfgs []dist.Config, meas []*dist.Measurement) ([]engineRow, error) {
	var rows []engineRow
	for i, cfg := range cfgs {
		m := meas[i]
		sc, err := engineSimConfig(cal, cfg.Workers, cfg.Batch, cfg.Transport)
		if err != nil {
			return nil, err
		}
		pred, err := sim.Run(sc)
		if err != nil {
			return nil, fmt.Errorf("validate --engine: simulating %s: %w", sc.Name, err)
		}
		rows = append(rows, engineRow{Workers: cfg.Workers, Batch: cfg.Batch, Transport: cfg.Transport, Predicted: pred, Measured: m,
			Error:    (pred.SamplesPerSec - m.SamplesPerSec) / m.SamplesPerSec,
			PredComm: float64(pred.Breakdown.Comm + pred.Breakdown.Straggler), MeasWait: m.Phases.Wait.Seconds()})
	}
	return rows, nil
}

// probeLink measures the link of a transport with a ring of two ranks in
// this process (TCP over loopback for tcp), at 16 KiB and 4 MiB, 7 times
// each, every step after writing evict bytes (linkEvict) so that its
// buffers are out of the cache.
func probeLink(ctx context.Context, transport string, evict int) (*dist.Link, error) {
	var ts []dist.Transport
	switch transport {
	case "inproc":
		ts = dist.NewInprocRing(2)
	case "tcp":
		var err error
		if ts, err = dist.NewLoopbackRing(ctx, 2, dist.DefaultTimeout); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown transport %q", transport)
	}
	defer func() {
		for _, t := range ts {
			t.Close()
		}
	}()
	link, err := dist.MeasureLink(ts, dist.LinkProbe{Small: 4 << 10, Large: 1 << 20, Reps: 7, Evict: evict})
	if err != nil {
		return nil, err
	}
	return &link, nil
}

// linkEvict returns the bytes the link probe writes before every step so
// that its messages are out of the cache: twice the last-level cache, at
// least 64 MiB (also where the cache's size is not known) and at most
// 1 GiB. In training the all-reduce runs after, or during, a backward pass
// that has read the weights and written the gradients and activations of
// every worker, more than the cache holds for the MLP; a probe whose 4 MiB
// messages stayed in the cache from step to step measured the in-process
// ring at two to two and a half times the bandwidth it has on cold buffers
// (docs/validation.md, "The link probe on cold buffers").
func linkEvict() int {
	return min(max(2*dist.LastLevelCache(), 64<<20), 1<<30)
}

// writeEngineValidation prints the calibration, the table of predicted
// against measured and the error summary.
func writeEngineValidation(c *cli.Context, format, title string, cal *engineCalibration, rows []engineRow) error {
	w := c.App.Writer
	t := &table{Title: title,
		Header: []string{"workers", "transport", "batch", "global_batch", "predicted_samples_per_s", "measured_samples_per_s", "error (%)",
			"predicted_step_ms", "measured_step_ms", "predicted_exposed_comm_ms", "measured_exposed_comm_ms"}}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{strconv.Itoa(r.Workers), r.Transport, strconv.Itoa(r.Batch), strconv.Itoa(r.Predicted.GlobalBatch),
			strconv.FormatFloat(r.Predicted.SamplesPerSec, 'f', 0, 64), strconv.FormatFloat(r.Measured.SamplesPerSec, 'f', 0, 64),
			signedPct(r.Error), strconv.FormatFloat(float64(r.Predicted.StepTime)*1e3, 'f', 2, 64),
			strconv.FormatFloat(r.Measured.StepTime*1e3, 'f', 2, 64), strconv.FormatFloat(r.PredComm*1e3, 'f', 2, 64),
			strconv.FormatFloat(r.MeasWait*1e3, 'f', 2, 64)})
	}
	if format == "text" || format == "md" {
		for _, sw := range cal.Sweeps {
			law := sw.Law
			v0 := fmt.Sprintf("%.0f samples/s", law.V0)
			if law.V0Unbounded {
				v0 = "unbounded (the step time did not grow with the batch)"
			}
			fmt.Fprintf(w, "%s, %d batches): v0 = %s, t = %.2f ms, R² = %.4f; update %.2f ms, forward share %.2f\n",
				sw.calibrationText(cal.Cores, len(cal.Sweeps) > 1), law.Used, v0, float64(law.T)*1e3, law.R2, sw.Update*1e3, sw.Forward)
		}
		for _, sw := range cal.Sweeps {
			j := sw.jitterText()
			switch {
			case j == "":
			case len(cal.Sweeps) == 1:
				fmt.Fprintf(w, "Jitter (the calibrated worker's spread from step to step, median of the rounds; every simulated worker's compute varies so): %s\n", j)
			default:
				fmt.Fprintf(w, "Jitter of %s (the calibrated worker's spread from step to step, median of the rounds; each simulated worker's compute varies so): %s\n", workersText(sw.Serves), j)
			}
		}
		perRound, warmed := "", ""
		switch cal.Warm {
		case 0:
		case 1:
			warmed = ", after a warm-up round set aside"
		default:
			warmed = fmt.Sprintf(", after %d warm-up rounds set aside", cal.Warm)
		}
		if cal.Rounds > 1 {
			fmt.Fprintf(w, "Every configuration measured in %d alternating rounds, over the timed steps of all of them%s\n", cal.Rounds, warmed)
			perRound = fmt.Sprintf(", median of %d rounds", cal.Rounds)
		} else if warmed != "" {
			fmt.Fprintf(w, "Every configuration measured once%s\n", warmed)
		}
		if g := cal.Guard; g != nil {
			fmt.Fprintf(w, "Cores: %s\n", g)
		}
		names := make([]string, 0, len(cal.Links))
		for n := range cal.Links {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			k := cal.Links[n]
			cold := ""
			if k.Evict > 0 {
				cold = fmt.Sprintf(" on buffers out of the cache (%s written before each step)", units.Bytes(k.Evict))
			}
			fmt.Fprintf(w, "Link %s (ring step of two ranks%s%s): latency %.1f us, bandwidth %s\n", n, cold, perRound, k.Latency*1e6, units.BytesPerSec(k.Bandwidth))
		}
		fmt.Fprintln(w)
	}
	if err := t.write(w, format); err != nil {
		return err
	}
	if (format == "text" || format == "md") && len(rows) > 0 {
		fmt.Fprintln(w)
		fmt.Fprint(w, summarizeEngine(rows))
	}
	return nil
}

// The target docs/validation.md holds validate --engine to: every
// configuration at batch engineLarge or more within engineTarget of its
// measurement. At smaller batches a step is a few milliseconds, and a
// spell of load on the machine is a large part of it.
const (
	engineTarget = 0.15
	engineLarge  = 32
)

// engineSummary is the error of validate --engine's rows: over all of
// them, and over those at batch engineLarge or more.
type engineSummary struct {
	All, Large engineStats
}

// engineStats are the mean absolute error of N rows, how many of them are
// within engineTarget, and the row of the largest error.
type engineStats struct {
	MAE       float64
	N, Within int
	Worst     engineRow
	sum       float64 // of the absolute errors; MAE is set from it once every row is added
}

// add counts row r.
func (st *engineStats) add(r engineRow) {
	e := math.Abs(r.Error)
	if st.N == 0 || e > math.Abs(st.Worst.Error) {
		st.Worst = r
	}
	if e <= engineTarget {
		st.Within++
	}
	st.N++
	st.sum += e
}

// summaryOf returns the summary of rows.
func summaryOf(rows []engineRow) engineSummary {
	var s engineSummary
	for _, r := range rows {
		s.All.add(r)
		if r.Batch >= engineLarge {
			s.Large.add(r)
		}
	}
	for _, st := range []*engineStats{&s.All, &s.Large} {
		if st.N > 0 {
			st.MAE = st.sum / float64(st.N)
		}
	}
	return s
}

// summarizeEngine is the report's last lines: the mean absolute errors,
// how many rows at batch >= 32 are within the target, and the worst rows.
func summarizeEngine(rows []engineRow) string {
	s := summaryOf(rows)
	where := func(r engineRow) string {
		return fmt.Sprintf("%s%% (%d workers, %s, batch %d)", signedPct(r.Error), r.Workers, r.Transport, r.Batch)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "mean absolute error %.1f%% over %d configurations", 100*s.All.MAE, s.All.N)
	if s.Large.N > 0 {
		fmt.Fprintf(&b, ", %.1f%% over the %d with batch >= %d", 100*s.Large.MAE, s.Large.N, engineLarge)
	}
	fmt.Fprintf(&b, "; worst %s\n", where(s.All.Worst))
	if s.Large.N > 0 {
		fmt.Fprintf(&b, "within %.0f%% at batch >= %d: %d of %d; worst there %s\n", 100*engineTarget, engineLarge, s.Large.Within, s.Large.N, where(s.Large.Worst))
	}
	return b.String()
}
