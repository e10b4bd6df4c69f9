package calibrate

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"scaleplan/engine/dist"
	"scaleplan/internal/benchlog"
)

// Header is what the header of a validate --engine --engine-out log
// says of its run.
type Header struct {
	Batches            []int       `json:"batches"`
	Workers            []int       `json:"workers"`
	Transports         []string    `json:"transports"`
	Cores              int         `json:"cores"`
	Calibration        string      `json:"calibration"` // Step, Each or One; "" in the logs before the first is One
	CalibrationThreads int         `json:"calibration_threads"`
	Rounds             int         `json:"rounds"`
	WarmRounds         int         `json:"warm_rounds"`
	Engine             dist.Config `json:"engine"`
}

// wholeRounds returns recs, the records of the log at path of run, without
// its end record. Of a log cut short (benchlog.Record.Incomplete) it keeps
// the whole rounds of perRound records, says so on w and sets run.Rounds
// to their number; a log cut short before its first round ended is an
// error.
func wholeRounds(w io.Writer, path string, recs []benchlog.Record, run *Header, perRound int) ([]benchlog.Record, error) {
	last := recs[len(recs)-1]
	if last.Kind != benchlog.KindEnd {
		return recs, nil
	}
	recs = recs[:len(recs)-1]
	reason, cut := last.Incomplete()
	if !cut {
		return recs, nil
	}
	n := (len(recs) - 1) / perRound
	if n < 1 {
		return nil, fmt.Errorf("validate --engine-from: %s: the log is incomplete (%s) and holds %s after the header, fewer than one round's %d: nothing to replay",
			path, reason, count(len(recs)-1, "record"), perRound)
	}
	fmt.Fprintf(w, "validate --engine-from: %s: the log is incomplete (%s): replaying the %d whole %s of the %d it was to measure\n",
		path, reason, n, noun(n, "round"), run.Rounds)
	run.Rounds = min(n, run.Rounds)
	return recs[:1+run.Rounds*perRound], nil
}

// readHeader returns what the header of recs, the records of the log
// at path, says of its validate --engine run, or an error that says why
// the log cannot be replayed.
func readHeader(path string, recs []benchlog.Record) (*Header, error) {
	if len(recs) == 0 || recs[0].Kind != benchlog.KindHeader {
		return nil, fmt.Errorf("validate --engine-from: %s: no header record first: not a log of validate --engine --engine-out", path)
	}
	if cmd, _ := recs[0].Config["command"].(string); cmd != "validate --engine" {
		return nil, fmt.Errorf("validate --engine-from: %s: its header's command is %q, not \"validate --engine\": not a log of validate --engine --engine-out", path, cmd)
	}
	b, err := json.Marshal(recs[0].Config)
	if err != nil {
		return nil, fmt.Errorf("validate --engine-from: %s: header: %w", path, err)
	}
	var run Header
	if err := json.Unmarshal(b, &run); err != nil {
		return nil, fmt.Errorf("validate --engine-from: %s: header: %w", path, err)
	}
	run.Calibration = cmp.Or(run.Calibration, One) // "" in the logs from before it was recorded
	if !slices.Contains(Modes, run.Calibration) {
		return nil, fmt.Errorf("validate --engine-from: %s: header: calibration %q (valid: %s)", path, run.Calibration, strings.Join(Modes, ", "))
	}
	if run.Cores < 1 {
		return nil, fmt.Errorf("validate --engine-from: %s: its header gives no cores: the log was written before validate --engine recorded them and its link probes (2026-11-26), and cannot be replayed", path)
	}
	// The batches are checked with the configurations they make
	// (dist.Config.Validate); the workers first, which divide the cores.
	switch {
	case len(run.Batches) < 2 || len(run.Workers) < 1 || len(run.Transports) < 1:
		err = fmt.Errorf("batches %v, workers %v, transports %v: want two batches or more, a worker count and a transport", run.Batches, run.Workers, run.Transports)
	case slices.Min(run.Workers) < 1 || run.Rounds < 1 || run.Calibration == One && (run.CalibrationThreads < 1 || run.CalibrationThreads > run.Cores):
		err = fmt.Errorf("workers %v, rounds %d, calibration threads %d: want workers and rounds at least 1, and 1 to %d threads, the run's cores", run.Workers, run.Rounds, run.CalibrationThreads, run.Cores)
	}
	if err != nil {
		return nil, fmt.Errorf("validate --engine-from: %s: header: %w", path, err)
	}
	return &run, nil
}

// sweepsOf returns, for the replay of run, a log at path of another
// calibration than mode, the sweeps mode would have measured, each one
// the log's sweep of the same workers on the same cores (a log of step
// replays as each or one, a log of each as one), and the configurations,
// measurements and rounds without the other sweeps'. A sweep mode would
// have measured that the log does not hold is an error.
func sweepsOf(path, mode string, run *Header, sweeps []*Sweep, cfgs []dist.Config, meas []*dist.Measurement, rounds [][]benchlog.Record) (
	[]*Sweep, []dist.Config, []*dist.Measurement, [][]benchlog.Record, error) {
	if mode == One && (run.CalibrationThreads < 1 || run.CalibrationThreads > run.Cores) {
		return nil, nil, nil, nil, fmt.Errorf("validate --engine-from: %s: --engine-calibration %s: header: calibration threads %d: want 1 to %d, the run's cores", path, mode, run.CalibrationThreads, run.Cores)
	}
	want := Sweeps(mode, run.Workers, run.Transports, run.Cores, run.CalibrationThreads)
	nb := len(run.Batches)
	n := len(sweeps) * nb // the first of the workers' configurations
	var keep []*Sweep
	var kc []dist.Config
	var km []*dist.Measurement
	var kr [][]benchlog.Record
	for _, w := range want {
		i := slices.IndexFunc(sweeps, func(s *Sweep) bool {
			return s.Over == w.Over && s.Copies == w.Copies && s.Threads == w.Threads && (w.Over == "" || s.For == w.For)
		})
		if i < 0 {
			what := strings.TrimPrefix(w.Text(run.Cores, false), "Calibration (")
			if w.Over != "" {
				what = fmt.Sprintf("%d workers in step over %s", w.Copies, w.Over)
			}
			return nil, nil, nil, nil, fmt.Errorf("validate --engine-from: %s: --engine-calibration %s: the log (calibration %s) holds no sweep of %s, which %s measures; a log is replayed as it is, or with a calibration whose sweeps it holds",
				path, mode, run.Calibration, what, mode)
		}
		at := i * nb
		keep = append(keep, w)
		kc, km, kr = append(kc, cfgs[at:at+nb]...), append(km, meas[at:at+nb]...), append(kr, rounds[at:at+nb]...)
	}
	return keep, slices.Concat(kc, cfgs[n:]), slices.Concat(km, meas[n:]), slices.Concat(kr, rounds[n:]), nil
}

// missingLinks returns, for the error of a log that cannot be replayed,
// "" when recs, the records after its header, hold a link probe, and else
// why they hold none.
func missingLinks(recs []benchlog.Record) string {
	for _, r := range recs {
		if r.Kind == benchlog.KindLink {
			return ""
		}
	}
	return " (the log holds no link probes: written before validate --engine logged them (2026-11-26), it cannot be replayed)"
}

// combineRecords returns the measurement of cfg over the timed steps of
// its rounds, recs, as dist.Combine gives it from the steps themselves:
// the step time and each phase the mean over all the rounds' steps,
//
//	StepTime = Σ n_r·t_r / Σ n_r
//
// for round r's n_r steps of mean t_r, and SamplesPerSec the global batch
// over it. The standard deviation of the steps is not in the records and
// is left 0.
func combineRecords(cfg dist.Config, recs []benchlog.Record) *dist.Measurement {
	m := &dist.Measurement{Config: cfg.WithDefaults()}
	var sum float64
	var ph [6]float64 // data wait, forward, backward, all-reduce, wait, update, summed over the steps
	for _, r := range recs {
		n := float64(r.Steps)
		m.Steps += r.Steps
		sum += n * r.StepTime
		if p := r.Phases; p != nil {
			for i, v := range []float64{p.DataWait, p.Forward, p.Backward, p.AllReduce, p.AllReduceWait, p.Update} {
				ph[i] += n * v
			}
		}
	}
	n := float64(m.Steps)
	m.StepTime = sum / n
	m.SamplesPerSec = float64(m.Config.GlobalBatch()) / m.StepTime
	d := func(s float64) time.Duration { return time.Duration(math.Round(s / n * 1e9)) }
	m.Phases = dist.Phases{DataWait: d(ph[0]), Forward: d(ph[1]), Backward: d(ph[2]), AllReduce: d(ph[3]), Wait: d(ph[4]), Update: d(ph[5])}
	return m
}

// ReplayOptions says how Replay rebuilds a report.
type ReplayOptions struct {
	Path  string    // the log's file, for messages
	Mode  string    // Step, Each or One to replay the log as; "" as it was measured
	Notes io.Writer // where a note that the log is incomplete goes; nil for none
}

// Replayed is the report Replay rebuilt from a log.
type Replayed struct {
	Calibration *Calibration
	Rows        []Row
	Header      *Header // the log's header, Rounds the whole rounds replayed
	Logged      int     // the log's measurements, before any sweep is left out
}

// Replay rebuilds, measuring nothing, the report of the validate --engine
// run whose --engine-out log's records are recs: the configurations,
// cores and rounds its header gives, each configuration's measurement
// over the timed steps of its rounds (combineRecords), each transport's
// link the median of its rounds' probes, and the calibration and
// predictions of this build's simulator, as the run computed them
// (analyse). What the log does not hold, the core guard's account, is
// left out. With o.Mode another calibration than the log's, the log is
// replayed from the sweeps of it that calibration would have measured
// (sweepsOf), the others left out: a log of Step as Each or One, one of
// Each as One, and any log as a calibration whose sweeps it holds.
func Replay(recs []benchlog.Record, o ReplayOptions) (*Replayed, error) {
	path := o.Path
	run, err := readHeader(path, recs)
	if err != nil {
		return nil, err
	}
	base := run.Engine
	sweeps := Sweeps(run.Calibration, run.Workers, run.Transports, run.Cores, run.CalibrationThreads)
	cfgs := configs(base, run.Batches, run.Workers, run.Transports, run.Cores, sweeps)
	for _, cfg := range cfgs {
		cfg.Steps = 1 // the log's steps are its records'
		if err := cfg.Validate(); err != nil {
			return nil, fmt.Errorf("validate --engine-from: %s: header: %s", path, strings.ReplaceAll(err.Error(), "\n", "; "))
		}
	}
	perRound := len(cfgs) + len(run.Transports)
	notes := o.Notes
	if notes == nil {
		notes = io.Discard
	}
	if recs, err = wholeRounds(notes, path, recs, run, perRound); err != nil {
		return nil, err
	}
	if n := len(recs) - 1; n != run.Rounds*perRound {
		return nil, fmt.Errorf("validate --engine-from: %s: %d records after the header, want %d: %d rounds of %d measurements and %d link probes%s",
			path, n, run.Rounds*perRound, run.Rounds, len(cfgs), len(run.Transports), missingLinks(recs[1:]))
	}
	rounds, probes, err := roundsOf(path, recs, run, cfgs)
	if err != nil {
		return nil, err
	}
	meas := make([]*dist.Measurement, len(cfgs))
	for i, cfg := range cfgs {
		meas[i] = combineRecords(cfg, rounds[i])
	}
	logged := run.Rounds * len(cfgs) // the log's measurements, before any sweep is left out
	if o.Mode != "" && o.Mode != run.Calibration {
		if sweeps, cfgs, meas, rounds, err = sweepsOf(path, o.Mode, run, sweeps, cfgs, meas, rounds); err != nil {
			return nil, err
		}
	}
	cal, rows, err := analyse(base, run.Batches, sweeps, cfgs, meas, rounds, run.Transports, probes, run.Cores)
	if err != nil {
		return nil, err
	}
	cal.Rounds, cal.Warm = run.Rounds, run.WarmRounds
	return &Replayed{Calibration: cal, Rows: rows, Header: run, Logged: logged}, nil
}

// roundsOf returns the records of recs, a log at path of run whose
// configurations are cfgs, by configuration and round, and each
// transport's link probes, round by round; or an error that names the
// first record out of place.
func roundsOf(path string, recs []benchlog.Record, run *Header, cfgs []dist.Config) ([][]benchlog.Record, [][]dist.Link, error) {
	perRound := len(cfgs) + len(run.Transports)
	// want[i] is the record of cfgs[i] as the run wrote it, but for what
	// it measured.
	want := make([]benchlog.Record, len(cfgs))
	for i, cfg := range cfgs {
		want[i] = (&dist.Measurement{Config: cfg}).Record(recs[0].Run)
	}
	rounds := make([][]benchlog.Record, len(cfgs))
	probes := make([][]dist.Link, len(run.Transports))
	for r := range run.Rounds {
		for i, w := range want {
			n := 1 + r*perRound + i
			rec := recs[n]
			if rec.Kind != w.Kind || rec.Model != w.Model || rec.Workers != w.Workers || rec.Batch != w.Batch || rec.Transport != w.Transport ||
				rec.Labels[benchlog.InStep] != w.Labels[benchlog.InStep] || !(rec.StepTime > 0) || rec.Steps < 1 {
				return nil, nil, fmt.Errorf("validate --engine-from: %s: record %d: want round %d's measurement of %s, %d workers %s, batch %d, with its steps and step time; found a %s record of %s, %d workers %s, batch %d",
					path, n+1, r+1, w.Model, w.Workers, w.Transport, w.Batch, rec.Kind, rec.Model, rec.Workers, rec.Transport, rec.Batch)
			}
			rounds[i] = append(rounds[i], rec)
		}
		for j, tr := range run.Transports {
			n := 1 + r*perRound + len(cfgs) + j
			rec := recs[n]
			if rec.Kind != benchlog.KindLink || rec.Transport != tr || rec.Link.Round != r+1 { // a link record has its link (benchlog.Record.Validate)
				return nil, nil, fmt.Errorf("validate --engine-from: %s: record %d: want round %d's probe of the %s link, found a %s record%s", path, n+1, r+1, tr, rec.Kind, missingLinks(recs[1:]))
			}
			k, err := dist.LinkOf(rec)
			if err != nil {
				return nil, nil, fmt.Errorf("validate --engine-from: %s: record %d: %w", path, n+1, err)
			}
			probes[j] = append(probes[j], k)
		}
	}
	return rounds, probes, nil
}
