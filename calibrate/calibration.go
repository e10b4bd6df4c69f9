package calibrate

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"scaleplan/engine/dist"
	"scaleplan/engine/measure"
	"scaleplan/fit"
	"scaleplan/internal/units"
	"scaleplan/sim"
)

// Calibration is what the calibration's sweeps and the link probes
// give the simulator.
type Calibration struct {
	Sweeps []*Sweep              // one with For 0 (--engine-calibration one), or Sweeps' of each
	Layers []int                 // gradient values per tensor, backward order
	Bucket int                   // all-reduce bucket, bytes
	Links  map[string]*dist.Link // per transport
	Rounds int                   // rounds each configuration is measured in
	Warm   int                   // warm rounds set aside before them
	Cores  int                   // cores the workers and their links share (GOMAXPROCS); 0 means as many as workers
	Guard  *measure.Guard        // what the core guard did; nil without one
}

// Sweep is the calibration of one sweep of the batches: worker
// 0 of Copies independent workers (one alone where Copies is 1), each on
// Threads cores.
type Sweep struct {
	For             int                // the worker count whose cores it measures (Each, Step); 0: one sweep for every count (One)
	Over            string             // the transport workers in step met over (Step, For > cores); "": independent workers
	Serves          []int              // the worker counts it calibrates: For, and with For = cores those with more workers than cores; nil for every count
	Copies, Threads int                // workers measured, the calibrated one included, and the cores of each; Threads 0 means all of them
	Law             *fit.ThroughputFit // v = b/(b/v0 + t) of the calibrated worker
	Update          float64            // its mean optimizer update, seconds
	Forward         float64            // its forward share of forward + backward, in (0, 1)
	Jitter          map[int]float64    // per batch: its spread from step to step (RoundJitter)
}

// The calibrations validate --engine can make (--engine-calibration), Modes.
const (
	Step = "step" // as Each, but W > cores workers: W in step over each transport (dist.Config.InStep)
	Each = "each" // every worker count W: W independent workers on the cores the W workers will have
	One  = "one"  // one sweep for every worker count, scaled to each by the slowdown model
)

// Modes lists the valid --engine-calibration values.
var Modes = []string{Step, Each, One}

// Sweeps returns the calibration's sweeps for workers on cores,
// connected by transports. With One: one worker on calThreads
// cores beside independent copies of it on the others
// (calibrationCopies). With Each: for each W of workers, F =
// min(W, cores) independent workers of dist.Threads(cores, F) cores, as
// the W workers will compute when they have a core or more each; workers
// that take turns on the cores (W > cores) share the sweep of one worker
// per core, F = cores, and the slowdown model takes them from it
// (SimConfig). Independent workers that take turns are no measure
// of workers that do: with nothing to wait for, each runs its steps as the
// scheduler leaves it, not in step with the others (docs/validation.md,
// "`validate --engine`", step 1). With Step, as Each,
// but W > cores workers have a sweep for each transport of their own: W
// workers that take turns on the cores in step, meeting once a step over
// the transport where exchanging workers all-reduce, and exchanging
// nothing (dist.Config.InStep; docs/validation.md, "`validate --engine`").
func Sweeps(mode string, workers []int, transports []string, cores, calThreads int) []*Sweep {
	if mode == One {
		return []*Sweep{{Copies: calibrationCopies(cores, calThreads), Threads: calThreads}}
	}
	var sw []*Sweep
	byFor := map[int]*Sweep{}
	for _, w := range workers {
		if mode == Step && w > cores {
			for _, tr := range transports {
				sw = append(sw, &Sweep{For: w, Over: tr, Serves: []int{w}, Copies: w, Threads: dist.Threads(cores, w)})
			}
			continue
		}
		f := min(w, cores)
		s, ok := byFor[f]
		if !ok {
			s = &Sweep{For: f, Copies: f, Threads: dist.Threads(cores, f)}
			byFor[f] = s
			sw = append(sw, s)
		}
		s.Serves = append(s.Serves, w)
	}
	return sw
}

// sweep returns the sweep that calibrates w workers over transport: that
// of w workers in step over it, or else w's own (For = min(w, cores)), or
// else the one for every count.
func (cal *Calibration) sweep(w int, transport string) *Sweep {
	f := w
	if cal.Cores > 0 {
		f = min(w, cal.Cores)
	}
	var own, all *Sweep
	for _, s := range cal.Sweeps {
		switch {
		case s.Over != "":
			if s.For == w && s.Over == transport {
				return s
			}
		case s.For == f: // one a count (Sweeps)
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

// SimConfig returns the simulator's configuration of w engine
// workers at per-worker batch b on this machine, connected by transport,
// from the calibration's sweep for w over transport
// (Calibration.sweep). Each of the
// w workers computes on k_w = max(1, cores/w) cores, and when w·k_w is
// more than the cores they take turns on them. Calibrated by w's own sweep
// (--engine-calibration each and step), w independent workers on those
// cores, or, with step, w workers in step over the transport where they
// take turns, a worker computes as the calibrated one did: s = 1 below. Calibrated by
// the sweep of one worker on k cores, as --engine-calibration one does for
// every count and each does for the counts that take turns on the cores
// (Sweeps), a worker's compute and update take s times those of the
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
// (RoundJitter), drawn anew for every worker and step (sim.Config.Jitter),
// so that a synchronous step waits for the slowest of the w workers; not
// after a sweep of workers in step, each of whose measured steps already
// waited for the slowest.
func SimConfig(cal *Calibration, w, b int, transport string) (sim.Config, error) {
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
		cfg.Jitter, cfg.Steps = min(j, sim.MaxJitter), JitterSteps
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

// JitterSteps is the number of steps SimConfig simulates
// when the workers' compute varies from step to step. The wait for the
// slowest of w workers is about J·m_w of a step's forward and backward,
// m_w the mean of the largest of w standard normal draws (m_2 = 0.56,
// m_4 = 1.03); its mean over the 399 steps after the first then has a
// standard error of J·s_w/√399, under J/20 (s_w, the standard deviation
// of that largest draw, is 0.83 for two and 0.70 for four).
const JitterSteps = 400

// slowdown returns s of SimConfig: how many times longer w workers
// on the calibration's cores each take to compute a step than the worker
// sw calibrated; 1 where sw is w's own. Without a count of cores or of the
// calibrated worker's threads the calibrated worker is taken to have had
// the whole machine, and s = w.
func (cal *Calibration) slowdown(sw *Sweep, w int) float64 {
	if sw.For == w {
		return 1
	}
	if cal.Cores < 1 || sw.Threads < 1 {
		return float64(w)
	}
	kw := dist.Threads(cal.Cores, w)
	return float64(sw.Threads) / float64(kw) * max(1, float64(w*kw)/float64(cal.Cores))
}

// Text says what sw's calibrated worker computed on, as the
// report's calibration line begins: "Calibration (one worker on 1 of 2
// cores, beside an independent copy of it on the other", on a machine of
// cores, with " of 2 and 4 workers" after "Calibration" where the run made
// more than one sweep (several); for workers in step, "Calibration of 4
// workers over tcp (4 workers in step on 2 cores, …".
func (sw *Sweep) Text(cores int, several bool) string {
	s := "Calibration"
	if sw.Over != "" {
		return fmt.Sprintf("%s of %s over %s (%d workers in step on %s, meeting over %s where they would all-reduce and exchanging nothing",
			s, WorkersText(sw.Serves), sw.Over, sw.Copies, coresWord(cores), sw.Over)
	}
	if several && len(sw.Serves) > 0 {
		s += " of " + WorkersText(sw.Serves)
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

// JitterText lists the sweep's jitter by batch, "batch 16 6.9%, 32 8.8%,
// ...", or returns "" when no batch has any.
func (sw *Sweep) JitterText() string {
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

// WorkersText is "1 worker", "2 workers", "2 and 4 workers" or "1, 2 and 4
// workers".
func WorkersText(ns []int) string {
	if len(ns) == 1 {
		return count(ns[0], "worker")
	}
	s := make([]string, len(ns)-1)
	for i, n := range ns[:len(ns)-1] {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ") + " and " + strconv.Itoa(ns[len(ns)-1]) + " workers"
}

// coresWord is "1 core" or "n cores".
func coresWord(n int) string { return count(n, "core") }

// count is "1 thing" or "n things" of noun thing.
func count(n int, thing string) string { return strconv.Itoa(n) + " " + noun(n, thing) }

// noun is thing, or its plural thing+"s" unless n is 1.
func noun(n int, thing string) string {
	if n != 1 {
		return thing + "s"
	}
	return thing
}

// Row is one predicted and measured configuration.
type Row struct {
	Workers, Batch     int
	Transport          string
	Predicted          *sim.Result
	Measured           *dist.Measurement
	Error              float64 // (predicted − measured)/measured samples/s
	PredComm, MeasWait float64 // exposed communication after the worker's own backward, the wait for the slowest included, seconds
}

// configs returns every configuration validate --engine measures, in
// the order of a round: the calibration's sweeps of batches, each sweep's
// at every batch (calibrationConfig), then W workers over each transport at
// each batch, for each W of workers.
func configs(base dist.Config, batches, workers []int, transports []string, cores int, sweeps []*Sweep) []dist.Config {
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
				cfg.Workers, cfg.Batch, cfg.Transport, cfg.Threads = w, b, tr, dist.Threads(cores, w)
				cfgs = append(cfgs, cfg)
			}
		}
	}
	return cfgs
}

// calibrationConfig returns sw's measurement at batch b: one worker on
// sw.Threads cores and, beside it, sw.Copies − 1 independent copies of it
// (dist.Config.Independent) on the others, or taking turns with it on the
// same ones, so that the worker computes with the machine as loaded as it
// is under the predicted workers, which share its memory and cache, but
// exchanges nothing. With one copy it is one worker alone.
func calibrationConfig(base dist.Config, b int, sw *Sweep) dist.Config {
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
