package calibrate

import (
	"fmt"
	"math"
	"slices"

	"scaleplan/engine/dist"
	"scaleplan/fit"
	"scaleplan/internal/benchlog"
	"scaleplan/sim"
)

// analyse computes the report from what a run measured: meas, each
// configuration of cfgs (configs: the sweeps' first, each at
// batches) over its rounds, rounds, the records of each configuration's
// measurement round by round, and probes, each transport's link probes.
//  1. Each sweep: the throughput law of its calibrated worker, the update
//     time and the spread from step to step at each batch (RoundJitter).
//  2. The links: the median of each round's probe.
//  3. W workers predicted against their measurements.
//
// The sweeps are filled in and become the calibration's.
func analyse(base dist.Config, batches []int, sweeps []*Sweep, cfgs []dist.Config, meas []*dist.Measurement, rounds [][]benchlog.Record,
	transports []string, probes [][]dist.Link, cores int) (*Calibration, []Row, error) {
	nb := len(batches)
	for i, sw := range sweeps {
		at := i * nb
		if err := fitSweep(sw, batches, meas[at:at+nb], rounds[at:at+nb]); err != nil {
			return nil, nil, err
		}
	}
	layers, err := base.GradientLayout()
	if err != nil {
		return nil, nil, err
	}
	cal := &Calibration{Sweeps: sweeps, Layers: layers, Bucket: base.WithDefaults().BucketBytes, Links: map[string]*dist.Link{}, Cores: cores}
	for i, tr := range transports {
		link, err := dist.MedianLink(probes[i])
		if err != nil {
			return nil, nil, fmt.Errorf("validate --engine: the %s link: %w", tr, err)
		}
		cal.Links[tr] = &link
	}
	n := len(sweeps) * nb
	rows, err := predict(cal, cfgs[n:], meas[n:])
	if err != nil {
		return nil, nil, err
	}
	return cal, rows, nil
}

// UnboundedWarnings says, for each sweep of cal whose measurements at
// batches did not bound v0, what the predictions then rest on.
func UnboundedWarnings(cal *Calibration, batches []int) []string {
	var ws []string
	for _, sw := range cal.Sweeps {
		if !sw.Law.V0Unbounded {
			continue
		}
		who := "the one-worker sweep"
		if len(cal.Sweeps) > 1 {
			who = "the sweep of " + WorkersText(sw.Serves)
		}
		ws = append(ws, fmt.Sprintf("validate --engine: warning: %s does not bound v0: its step time did not grow measurably from batch %d to %d, so the predictions below rest on t alone and a v0 the least squares left at %.4g samples/s; measure larger batches (--engine-batch)",
			who, slices.Min(batches), slices.Max(batches), sw.Law.V0))
	}
	return ws
}

// RoundJitter returns the spread from step to step of one worker's
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
func RoundJitter(recs []benchlog.Record) float64 {
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

// fitSweep fits the throughput law to sw's measurements at batches
// (calibrationConfig; worker 0's samples/s, b/step) and takes from them
// the mean optimizer update and the forward share of forward + backward,
// and from each one's rounds, rounds, its spread from step to step
// (RoundJitter).
func fitSweep(sw *Sweep, batches []int, meas []*dist.Measurement, rounds [][]benchlog.Record) error {
	var bs, vs []float64
	var upd, fwd, bwd float64
	sw.Jitter = make(map[int]float64, len(batches))
	for i, b := range batches {
		m := meas[i]
		if sw.Over == "" { // workers in step waited for the slowest in every step measured
			sw.Jitter[b] = RoundJitter(rounds[i])
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

// predict simulates every configuration of cfgs with cal and
// compares it with its measurement.
func predict(cal *Calibration, cfgs []dist.Config, meas []*dist.Measurement) ([]Row, error) {
	var rows []Row
	for i, cfg := range cfgs {
		m := meas[i]
		sc, err := SimConfig(cal, cfg.Workers, cfg.Batch, cfg.Transport)
		if err != nil {
			return nil, err
		}
		pred, err := sim.Run(sc)
		if err != nil {
			return nil, fmt.Errorf("validate --engine: simulating %s: %w", sc.Name, err)
		}
		rows = append(rows, Row{Workers: cfg.Workers, Batch: cfg.Batch, Transport: cfg.Transport, Predicted: pred, Measured: m,
			Error:    (pred.SamplesPerSec - m.SamplesPerSec) / m.SamplesPerSec,
			PredComm: float64(pred.Breakdown.Comm + pred.Breakdown.Straggler), MeasWait: m.Phases.Wait.Seconds()})
	}
	return rows, nil
}

// The target docs/validation.md holds validate --engine to: every
// configuration at batch Large or more within Target of its
// measurement. At smaller batches a step is a few milliseconds, and a
// spell of load on the machine is a large part of it.
const (
	Target = 0.15
	Large  = 32
)

// Summary is the error of validate --engine's rows: over all of
// them, and over those at batch Large or more.
type Summary struct {
	All, Large Stats
}

// Stats are the mean absolute error of N rows, how many of them are
// within Target, and the row of the largest error.
type Stats struct {
	MAE       float64
	N, Within int
	Worst     Row
	sum       float64 // of the absolute errors; MAE is set from it once every row is added
}

// add counts row r.
func (st *Stats) add(r Row) {
	e := math.Abs(r.Error)
	if st.N == 0 || e > math.Abs(st.Worst.Error) {
		st.Worst = r
	}
	if e <= Target {
		st.Within++
	}
	st.N++
	st.sum += e
}

// SummaryOf returns the summary of rows.
func SummaryOf(rows []Row) Summary {
	var s Summary
	for _, r := range rows {
		s.All.add(r)
		if r.Batch >= Large {
			s.Large.add(r)
		}
	}
	for _, st := range []*Stats{&s.All, &s.Large} {
		if st.N > 0 {
			st.MAE = st.sum / float64(st.N)
		}
	}
	return s
}
