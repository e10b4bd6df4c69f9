package measure

import (
	"context"
	"fmt"

	"scaleplan/engine/dist"
	"scaleplan/internal/benchlog"
)

// Sweep is a throughput sweep (scaleplan bench throughput): every worker
// count of Workers at every per-worker batch of Batches, each measured
// over Warmup untimed and Steps timed steps, in Rounds rounds over the
// sweep after Warm warm rounds set aside (Rounds), and the whole sweep
// Repeat times over.
type Sweep struct {
	Base          dist.Config // every configuration's but for its workers and batch
	Workers       []int       // worker counts, in the order measured
	Batches       []int       // per-worker batches, in the order measured
	Warmup, Steps int         // untimed and timed steps of one measurement
	Repeat        int         // sweeps measured, one record of each configuration each; at least 1
	Rounds        int         // rounds over the sweep each record is taken over; at least 1
	Warm          int         // warm rounds before the first sweep's, 0 to MaxWarmRounds
	Guard         *Guard      // the core guard; nil for none
	Name          string      // the run's name, for its records
	StepRecords   bool        // also a record of every timed step

	// Measuring, if not nil, is told of each measurement before it is
	// made: round r (-1 for a warm round) of configuration cfg.
	Measuring func(r int, cfg dist.Config)
	// Measured, if not nil, is told of each measurement m once made.
	Measured func(r int, cfg dist.Config, m *dist.Measurement)
	// Log, if not nil, receives each configuration's records as soon as
	// its measurement over the rounds is final; after an error, those of
	// the configurations not yet given over the rounds they have. An
	// error of it ends the sweep.
	Log func(recs ...benchlog.Record) error
}

// Header is the configuration the header record of a sweep's log
// records (benchlog.Record.Config).
type Header struct {
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

// Header returns the header of s's log, made by command with framework,
// whose runs share the engine configuration engine.
func (s *Sweep) Header(command, framework string, engine dist.Config) Header {
	return Header{Command: command, Framework: framework, Workers: s.Workers, Batches: s.Batches, Steps: s.Steps, Warmup: s.Warmup,
		Repeat: s.Repeat, Rounds: s.Rounds, Warm: s.Warm, CoreGuard: s.Guard != nil, Engine: engine}
}

// Configs returns the configurations of s in the order of a round: for
// each worker count, each batch.
func (s *Sweep) Configs() []dist.Config {
	var cfgs []dist.Config
	for _, w := range s.Workers {
		for _, b := range s.Batches {
			cfg := s.Base
			cfg.Workers, cfg.Batch = w, b
			cfgs = append(cfgs, cfg)
		}
	}
	return cfgs
}

// Validate returns an error for a sweep of nothing, or of no rounds, and
// else the error of dist.Config.Validate for the first configuration of s
// that is invalid: each worker count's at the first
// batch, over the steps of a measurement, then the first count's at each
// batch.
func (s *Sweep) Validate() error {
	if len(s.Workers) == 0 || len(s.Batches) == 0 || s.Repeat < 1 || s.Rounds < 1 || s.Warm < 0 || s.Warmup < 0 || s.Steps < 1 {
		return fmt.Errorf("sweep of workers %v, batches %v, %d repeats, %d rounds, %d warm rounds, %d+%d steps: want a worker count and a batch, "+
			"repeats, rounds and timed steps at least 1, and no negative warm rounds or warm-up", s.Workers, s.Batches, s.Repeat, s.Rounds, s.Warm, s.Warmup, s.Steps)
	}
	var cfgs []dist.Config
	for _, w := range s.Workers {
		cfg := s.Base
		cfg.Workers, cfg.Batch, cfg.Steps = w, s.Batches[0], s.Warmup+s.Steps
		cfgs = append(cfgs, cfg)
	}
	for _, b := range s.Batches {
		cfg := s.Base
		cfg.Workers, cfg.Batch, cfg.Steps = s.Workers[0], b, 1
		cfgs = append(cfgs, cfg)
	}
	for _, cfg := range cfgs {
		if err := cfg.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Measurements returns the measurements s makes without a guard's
// repeats: (Repeat·Rounds + Warm) per configuration.
func (s *Sweep) Measurements() int {
	return (s.Repeat*s.Rounds + s.Warm) * len(s.Workers) * len(s.Batches)
}

// Run measures the sweep and returns each sweep's measurement of each
// configuration (Repeat times Configs, in order), and their records as
// the log holds them (without the header). An error is returned after
// Log has been given what was measured.
func (s *Sweep) Run(ctx context.Context) ([]*dist.Measurement, []benchlog.Record, error) {
	if err := s.Validate(); err != nil {
		return nil, nil, err
	}
	cfgs := s.Configs()
	measure := func(r, i int) (*dist.Measurement, error) {
		if s.Measuring != nil {
			s.Measuring(r, cfgs[i])
		}
		m, err := dist.Measure(ctx, cfgs[i], s.Warmup, s.Steps)
		if err != nil {
			return nil, fmt.Errorf("workers %d, batch %d: %w", cfgs[i].Workers, cfgs[i].Batch, err)
		}
		if s.Measured != nil {
			s.Measured(r, cfgs[i], m)
		}
		return m, nil
	}
	log := func(recs ...benchlog.Record) error {
		if s.Log == nil {
			return nil
		}
		return s.Log(recs...)
	}
	var meas []*dist.Measurement
	var recs []benchlog.Record
	warm := s.Warm
	for rep := range s.Repeat {
		if rep > 0 {
			warm = 0 // the process is warm after the first sweep
		}
		logged := make([][]benchlog.Record, len(cfgs)) // each configuration's records, once final
		final := func(i int, m *dist.Measurement) error {
			logged[i] = s.records(m)
			return log(logged[i]...)
		}
		ms, all, err := RoundsTo(len(cfgs), warm, s.Rounds, measure, nil, s.Guard, Hooks{Final: final})
		if err != nil {
			// Keep what was measured: each configuration not yet
			// logged over the rounds it has.
			for i, ms := range all {
				if logged[i] != nil || len(ms) == 0 {
					continue
				}
				if m, cerr := dist.Combine(ms); cerr == nil {
					log(s.records(m)...)
				}
			}
			return nil, nil, err
		}
		for _, rs := range logged {
			recs = append(recs, rs...)
		}
		meas = append(meas, ms...)
	}
	return meas, recs, nil
}

// records returns the records of m: its measurement, and with
// StepRecords one of each timed step.
func (s *Sweep) records(m *dist.Measurement) []benchlog.Record {
	rs := []benchlog.Record{m.Record(s.Name)}
	if s.StepRecords {
		rs = append(rs, m.StepRecords(s.Name)...)
	}
	return rs
}
