package cmd

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"scaleplan/engine/dist"
	"scaleplan/internal/benchlog"
)

// replayFlags are the flags of validate --engine that say what to
// measure: the log of --engine-from says it instead.
var replayFlags = []string{"engine-model", "engine-batch", "engine-workers", "engine-transport", "engine-threads", "engine-steps",
	"engine-warmup", "engine-rounds", "engine-warm-rounds", "engine-data", "engine-out", "engine-core-guard"}

// engineRun is what the header of a validate --engine --engine-out log
// says of its run.
type engineRun struct {
	Batches            []int       `json:"batches"`
	Workers            []int       `json:"workers"`
	Transports         []string    `json:"transports"`
	Cores              int         `json:"cores"`
	Calibration        string      `json:"calibration"` // calibrateStep, calibrateEach or calibrateOne; "" in the logs before the first is calibrateOne
	CalibrationThreads int         `json:"calibration_threads"`
	Rounds             int         `json:"rounds"`
	WarmRounds         int         `json:"warm_rounds"`
	Engine             dist.Config `json:"engine"`
}

// replayEngine writes the report of the validate --engine run whose
// --engine-out log is path, measuring nothing: the configurations, cores
// and rounds its header gives, each configuration's measurement over the
// timed steps of its rounds (combineRecords), each transport's link the
// median of its rounds' probes, and the calibration and predictions of
// this build's simulator, as the run computed them (analyseEngine). What
// the log does not hold, the core guard's account, is left out of the
// report. With --engine-calibration of another calibration than the
// log's, the log is replayed from the sweeps of it that calibration would
// have measured (sweepsOf), the others left out: a log of calibrateStep as
// calibrateEach or calibrateOne, one of calibrateEach as calibrateOne, and
// any log as a calibration whose sweeps it holds.
func replayEngine(c *cli.Context, format, path string) error {
	for _, name := range replayFlags {
		if c.IsSet(name) {
			return usagef("validate --engine-from: --%s: the log says what was measured; leave it out", name)
		}
	}
	mode, err := calibrationMode(c)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("validate --engine-from: %w", err)
	}
	defer f.Close()
	var recs []benchlog.Record
	rd := benchlog.NewReader(f)
	for {
		r, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("validate --engine-from: %s: %w", path, err)
		}
		recs = append(recs, r)
	}
	run, err := readEngineRun(path, recs)
	if err != nil {
		return err
	}
	base := run.Engine
	sweeps := engineSweeps(run.Calibration, run.Workers, run.Transports, run.Cores, run.CalibrationThreads)
	cfgs := engineConfigs(base, run.Batches, run.Workers, run.Transports, run.Cores, sweeps)
	for _, cfg := range cfgs {
		cfg.Steps = 1 // the log's steps are its records'
		if err := cfg.Validate(); err != nil {
			return fmt.Errorf("validate --engine-from: %s: header: %s", path, strings.ReplaceAll(err.Error(), "\n", "; "))
		}
	}
	perRound := len(cfgs) + len(run.Transports)
	if recs, err = wholeRounds(c.App.ErrWriter, path, recs, run, perRound); err != nil {
		return err
	}
	if n := len(recs) - 1; n != run.Rounds*perRound {
		return fmt.Errorf("validate --engine-from: %s: %d records after the header, want %d: %d rounds of %d measurements and %d link probes%s",
			path, n, run.Rounds*perRound, run.Rounds, len(cfgs), len(run.Transports), missingLinks(recs[1:]))
	}
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
				return fmt.Errorf("validate --engine-from: %s: record %d: want round %d's measurement of %s, %d workers %s, batch %d, with its steps and step time; found a %s record of %s, %d workers %s, batch %d",
					path, n+1, r+1, w.Model, w.Workers, w.Transport, w.Batch, rec.Kind, rec.Model, rec.Workers, rec.Transport, rec.Batch)
			}
			rounds[i] = append(rounds[i], rec)
		}
		for j, tr := range run.Transports {
			n := 1 + r*perRound + len(cfgs) + j
			rec := recs[n]
			if rec.Kind != benchlog.KindLink || rec.Transport != tr || rec.Link.Round != r+1 { // a link record has its link (benchlog.Record.Validate)
				return fmt.Errorf("validate --engine-from: %s: record %d: want round %d's probe of the %s link, found a %s record%s", path, n+1, r+1, tr, rec.Kind, missingLinks(recs[1:]))
			}
			k, err := dist.LinkOf(rec)
			if err != nil {
				return fmt.Errorf("validate --engine-from: %s: record %d: %w", path, n+1, err)
			}
			probes[j] = append(probes[j], k)
		}
	}
	meas := make([]*dist.Measurement, len(cfgs))
	for i, cfg := range cfgs {
		meas[i] = combineRecords(cfg, rounds[i])
	}
	logged := run.Rounds * len(cfgs) // the log's measurements, before any sweep is left out
	if c.IsSet("engine-calibration") && mode != run.Calibration {
		if sweeps, cfgs, meas, rounds, err = sweepsOf(path, mode, run, sweeps, cfgs, meas, rounds); err != nil {
			return err
		}
	}
	cal, rows, err := analyseEngine(base, run.Batches, sweeps, cfgs, meas, rounds, run.Transports, probes, run.Cores)
	if err != nil {
		return err
	}
	cal.Rounds, cal.Warm = run.Rounds, run.WarmRounds
	stderr := c.App.ErrWriter
	fmt.Fprintf(stderr, "validate --engine-from: %s: %d measurements and %d link probes of %d rounds, measured by %s; nothing measured now\n",
		path, logged, run.Rounds*len(run.Transports), run.Rounds, machineText(recs[0].Machine))
	for _, w := range unboundedWarnings(cal, run.Batches) {
		fmt.Fprintln(stderr, w)
	}
	backend, cores := "", 0
	if m := recs[0].Machine; m != nil {
		backend, _, _ = strings.Cut(m.Backend, " ")
		cores = m.Cores
	}
	return writeEngineReport(c, format, engineTitle(base.ModelName(), backend, cores), cal, rows)
}

// wholeRounds returns recs, the records of the log at path of run, without
// its end record. Of a log cut short (benchlog.Record.Incomplete) it keeps
// the whole rounds of perRound records, says so on w and sets run.Rounds
// to their number; a log cut short before its first round ended is an
// error.
func wholeRounds(w io.Writer, path string, recs []benchlog.Record, run *engineRun, perRound int) ([]benchlog.Record, error) {
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
		return nil, fmt.Errorf("validate --engine-from: %s: the log is incomplete (%s) and holds %d %s after the header, fewer than one round's %d: nothing to replay",
			path, reason, len(recs)-1, plural(len(recs)-1, "record", "records"), perRound)
	}
	fmt.Fprintf(w, "validate --engine-from: %s: the log is incomplete (%s): replaying the %d whole %s of the %d it was to measure\n",
		path, reason, n, plural(n, "round", "rounds"), run.Rounds)
	run.Rounds = min(n, run.Rounds)
	return recs[:1+run.Rounds*perRound], nil
}

// readEngineRun returns what the header of recs, the records of the log
// at path, says of its validate --engine run, or an error that says why
// the log cannot be replayed.
func readEngineRun(path string, recs []benchlog.Record) (*engineRun, error) {
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
	var run engineRun
	if err := json.Unmarshal(b, &run); err != nil {
		return nil, fmt.Errorf("validate --engine-from: %s: header: %w", path, err)
	}
	run.Calibration = cmp.Or(run.Calibration, calibrateOne) // "" in the logs from before it was recorded
	if !slices.Contains(calibrations, run.Calibration) {
		return nil, fmt.Errorf("validate --engine-from: %s: header: calibration %q (valid: %s)", path, run.Calibration, strings.Join(calibrations, ", "))
	}
	if run.Cores < 1 {
		return nil, fmt.Errorf("validate --engine-from: %s: its header gives no cores: the log was written before validate --engine recorded them and its link probes (2026-11-26), and cannot be replayed", path)
	}
	// The batches are checked with the configurations they make
	// (dist.Config.Validate); the workers first, which divide the cores.
	switch {
	case len(run.Batches) < 2 || len(run.Workers) < 1 || len(run.Transports) < 1:
		err = fmt.Errorf("batches %v, workers %v, transports %v: want two batches or more, a worker count and a transport", run.Batches, run.Workers, run.Transports)
	case slices.Min(run.Workers) < 1 || run.Rounds < 1 || run.Calibration == calibrateOne && (run.CalibrationThreads < 1 || run.CalibrationThreads > run.Cores):
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
func sweepsOf(path, mode string, run *engineRun, sweeps []*sweepCalibration, cfgs []dist.Config, meas []*dist.Measurement, rounds [][]benchlog.Record) (
	[]*sweepCalibration, []dist.Config, []*dist.Measurement, [][]benchlog.Record, error) {
	if mode == calibrateOne && (run.CalibrationThreads < 1 || run.CalibrationThreads > run.Cores) {
		return nil, nil, nil, nil, fmt.Errorf("validate --engine-from: %s: --engine-calibration %s: header: calibration threads %d: want 1 to %d, the run's cores", path, mode, run.CalibrationThreads, run.Cores)
	}
	want := engineSweeps(mode, run.Workers, run.Transports, run.Cores, run.CalibrationThreads)
	nb := len(run.Batches)
	n := len(sweeps) * nb // the first of the workers' configurations
	var keep []*sweepCalibration
	var kc []dist.Config
	var km []*dist.Measurement
	var kr [][]benchlog.Record
	for _, w := range want {
		i := slices.IndexFunc(sweeps, func(s *sweepCalibration) bool {
			return s.Over == w.Over && s.Copies == w.Copies && s.Threads == w.Threads && (w.Over == "" || s.For == w.For)
		})
		if i < 0 {
			what := strings.TrimPrefix(w.calibrationText(run.Cores, false), "Calibration (")
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

// machineText names the machine of a log's header in a few words.
func machineText(m *benchlog.Machine) string {
	if m == nil {
		return "an unnamed machine"
	}
	return fmt.Sprintf("%s (%d cores, %s)", strings.TrimSpace(m.CPU+" "+m.Host), m.Cores, m.Backend)
}
