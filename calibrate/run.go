package calibrate

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"scaleplan/engine/dist"
	"scaleplan/engine/measure"
	"scaleplan/internal/benchlog"
)

// DefaultRounds returns the rounds validate --engine measures every
// configuration in when --engine-rounds is not given, for the tensor
// backend (tensor.Backend): 4 with gonum's pure-Go BLAS, the README's
// build, whose run of them takes about eight minutes on two cores, near
// the ten a run is meant to take, and 12 with OpenBLAS, which computes the
// same rounds in a third of the time and spends the rest measuring each
// configuration over three times the steps. A row's error then scatters
// less from run to run (docs/validation.md, "Rounds"): what is measured
// and how it is modelled are the same, only averaged over more steps.
func DefaultRounds(backend string) int {
	if backend == "openblas" {
		return 12
	}
	return 4
}

// probeLink measures the link of a transport with a ring of two ranks in
// this process (TCP over loopback for tcp), at 16 KiB and 4 MiB, 7 times
// each, every step after writing evict bytes (LinkEvict) so that its
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

// LinkEvict returns the bytes the link probe writes before every step so
// that its messages are out of the cache: twice the last-level cache, at
// least 64 MiB (also where the cache's size is not known) and at most
// 1 GiB. In training the all-reduce runs after, or during, a backward pass
// that has read the weights and written the gradients and activations of
// every worker, more than the cache holds for the MLP; a probe whose 4 MiB
// messages stayed in the cache from step to step measured the in-process
// ring at two to two and a half times the bandwidth it has on cold buffers
// (docs/validation.md, "`validate --engine`", step 3).
func LinkEvict() int {
	return min(max(2*dist.LastLevelCache(), 64<<20), 1<<30)
}

// Options is what Run measures and how it reports as it goes.
type Options struct {
	Base       dist.Config // the workers' configuration but for workers, batch, transport and threads
	Batches    []int       // per-worker batches, two or more
	Workers    []int       // worker counts predicted and measured
	Transports []string    // "inproc", "tcp"
	Cores      int         // cores the workers share (GOMAXPROCS)
	Mode       string      // Step, Each or One
	Threads    int         // with One, the cores of the calibrated worker
	Warmup     int         // untimed steps of each measurement
	Steps      int         // timed steps of each measurement
	Rounds     int         // rounds every configuration is measured in (measure.Rounds)
	Warm       int         // warm rounds set aside before them
	Guard      *measure.Guard
	Name       string      // the run's name, for its records
	Spawn      *dist.Spawn // how W > 1 workers over tcp start the others (dist.Config.Spawn)
	Log        io.Writer   // where those workers' lines go (dist.Config.Log)

	// Measuring, if not nil, is told of each measurement before it is
	// made: round r (-1 for a warm one) of cfg.
	Measuring func(r int, cfg dist.Config)
	// Measured, if not nil, is told of each measurement once made.
	Measured func(r int, cfg dist.Config, m *dist.Measurement)
	// Probing, if not nil, is told of each link probe before it is made.
	Probing func(r int, transport string)
	// Probed, if not nil, is told of each link probe once made.
	Probed func(r int, transport string)
	// Record, if not nil, receives each record as it is made: each
	// measurement of a round that the guard keeps, and each link probe.
	// An error of it ends the run.
	Record func(benchlog.Record) error
	// Done, if not nil, receives every record kept, in the order of
	// the rounds, once all are measured and before the analysis: the
	// log as the core guard left it. An error of it ends the run.
	Done func(recs []benchlog.Record) error
}

// Sweeps returns the calibration's sweeps of o (Sweeps).
func (o *Options) Sweeps() []*Sweep {
	return Sweeps(o.Mode, o.Workers, o.Transports, o.Cores, o.Threads)
}

// Configs returns every configuration Run measures, in the order of a
// round (configs), with the steps of a measurement.
func (o *Options) Configs() []dist.Config {
	cfgs := configs(o.Base, o.Batches, o.Workers, o.Transports, o.Cores, o.Sweeps())
	for i := range cfgs {
		cfgs[i].Steps = o.Warmup + o.Steps // as dist.Measure will run it
	}
	return cfgs
}

// Run closes the calibration loop on this machine: it measures every
// configuration of o (Options.Configs: the calibration's sweeps of the
// batches, then W workers over each transport) in rounds, each ending
// with a probe of every link (a ring step of two ranks at 16 KiB and
// 4 MiB), so that the spells of load on a shared machine fall on all of
// them alike; fits each sweep, simulates the workers with the fitted
// calibration and compares (analyse). The calibration comes back with the
// rounds and the guard.
func Run(ctx context.Context, o Options) (*Calibration, []Row, error) {
	if err := o.check(); err != nil {
		return nil, nil, err
	}
	sweeps := o.Sweeps()
	cfgs := configs(o.Base, o.Batches, o.Workers, o.Transports, o.Cores, sweeps)
	record := func(r benchlog.Record) error {
		if o.Record == nil {
			return nil
		}
		return o.Record(r)
	}
	probes := make([][]dist.Link, len(o.Transports))
	linkRecs := make([][]benchlog.Record, o.Rounds) // each round's probes, for the log
	evict := LinkEvict()                            // the machine's cache, read once
	probeRound := func(r int) error {
		for i, tr := range o.Transports {
			if o.Probing != nil {
				o.Probing(r, tr)
			}
			link, err := probeLink(ctx, tr, evict)
			if err != nil {
				return fmt.Errorf("probing the %s link: %w", tr, err)
			}
			probes[i] = append(probes[i], *link)
			linkRecs[r] = append(linkRecs[r], link.Record(o.Name, tr, r+1))
			if o.Probed != nil {
				o.Probed(r, tr)
			}
			if err := record(link.Record(o.Name, tr, r+1)); err != nil {
				return err
			}
		}
		return nil
	}
	keep := func(_, _ int, m *dist.Measurement) error { return record(m.Record(o.Name)) }
	meas, kept, err := measure.RoundsTo(len(cfgs), o.Warm, o.Rounds, o.measure(ctx, cfgs), probeRound, o.Guard, measure.Hooks{Kept: keep})
	if err != nil {
		return nil, nil, err
	}
	roundRecs := make([][]benchlog.Record, len(cfgs)) // each configuration's record of each round
	for i := range cfgs {
		for _, m := range kept[i] {
			roundRecs[i] = append(roundRecs[i], m.Record(o.Name))
		}
	}
	if o.Done != nil {
		var recs []benchlog.Record // every measurement kept and every link probe, in the order measured
		for r := range o.Rounds {
			for i := range cfgs {
				recs = append(recs, roundRecs[i][r])
			}
			recs = append(recs, linkRecs[r]...)
		}
		if err := o.Done(recs); err != nil {
			return nil, nil, err
		}
	}
	cal, rows, err := analyse(o.Base, o.Batches, sweeps, cfgs, meas, roundRecs, o.Transports, probes, o.Cores)
	if err != nil {
		return nil, nil, err
	}
	cal.Rounds, cal.Warm, cal.Guard = o.Rounds, o.Warm, o.Guard
	return cal, rows, nil
}

// check returns an error for options Run cannot measure: fewer than two
// batches, no worker count or transport, an unknown calibration, no
// cores, rounds or timed steps, or negative warm rounds or warm-up.
func (o *Options) check() error {
	switch {
	case len(o.Batches) < 2 || len(o.Workers) == 0 || len(o.Transports) == 0:
		return fmt.Errorf("batches %v, workers %v, transports %v: want two batches or more, a worker count and a transport", o.Batches, o.Workers, o.Transports)
	case !slices.Contains(Modes, o.Mode):
		return fmt.Errorf("calibration %q (valid: %s)", o.Mode, strings.Join(Modes, ", "))
	case o.Cores < 1 || o.Rounds < 1 || o.Steps < 1 || o.Warm < 0 || o.Warmup < 0 || o.Mode == One && (o.Threads < 1 || o.Threads > o.Cores):
		return fmt.Errorf("cores %d, rounds %d, steps %d, warm rounds %d, warm-up %d, threads %d: want cores, rounds and steps at least 1, no negative warm rounds or warm-up, and with calibration one 1 to cores threads",
			o.Cores, o.Rounds, o.Steps, o.Warm, o.Warmup, o.Threads)
	}
	for _, cfg := range o.Configs() {
		if err := cfg.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// measure returns the measurement of round r of cfgs[i] for
// measure.RoundsTo, telling o of it.
func (o *Options) measure(ctx context.Context, cfgs []dist.Config) func(r, i int) (*dist.Measurement, error) {
	return func(r, i int) (*dist.Measurement, error) {
		cfg := cfgs[i]
		if cfg.Transport == "tcp" && cfg.Workers > 1 {
			cfg.Spawn, cfg.Log = o.Spawn, o.Log
		}
		if o.Measuring != nil {
			o.Measuring(r, cfg)
		}
		m, err := dist.Measure(ctx, cfg, o.Warmup, o.Steps)
		if err != nil {
			return nil, fmt.Errorf("%d workers, %s, batch %d: %w", cfg.Workers, cfg.Transport, cfg.Batch, err)
		}
		if o.Measured != nil {
			o.Measured(r, cfg, m)
		}
		return m, nil
	}
}
