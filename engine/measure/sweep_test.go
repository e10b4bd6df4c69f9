package measure

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"scaleplan/engine/dist"
	"scaleplan/internal/benchlog"
)

// A sweep's configurations come worker count by worker count, each at
// every batch; it makes (Repeat·Rounds + Warm) measurements of each, and
// its header says what it measured.
func TestSweepPlan(t *testing.T) {
	s := &Sweep{Base: dist.Config{Model: "mlp", Seed: 1}, Workers: []int{1, 2}, Batches: []int{4, 8, 16}, Warmup: 1, Steps: 2, Repeat: 2, Rounds: 3, Warm: 1}
	var got []string
	for _, cfg := range s.Configs() {
		got = append(got, fmt.Sprintf("%s/%d/%d", cfg.Model, cfg.Workers, cfg.Batch))
	}
	if want := []string{"mlp/1/4", "mlp/1/8", "mlp/1/16", "mlp/2/4", "mlp/2/8", "mlp/2/16"}; !slices.Equal(got, want) {
		t.Errorf("configurations %v, want %v", got, want)
	}
	if got, want := s.Measurements(), (2*3+1)*6; got != want {
		t.Errorf("%d measurements, want %d", got, want)
	}
	h := s.Header("bench throughput", "engine", s.Base)
	if h.Command != "bench throughput" || !slices.Equal(h.Workers, s.Workers) || h.Rounds != 3 || h.Warm != 1 || h.Repeat != 2 || h.CoreGuard {
		t.Errorf("header %+v", h)
	}
	if err := s.Validate(); err != nil {
		t.Errorf("valid sweep: %v", err)
	}
	for name, bad := range map[string]func(*Sweep){
		"no workers":     func(s *Sweep) { s.Workers = nil },
		"no rounds":      func(s *Sweep) { s.Rounds = 0 },
		"negative warm":  func(s *Sweep) { s.Warm = -1 },
		"batch 0":        func(s *Sweep) { s.Batches = []int{4, 0} },
		"unknown model":  func(s *Sweep) { s.Base.Model = "resnet-9000" },
		"no timed steps": func(s *Sweep) { s.Steps = 0 },
	} {
		c := *s
		bad(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
		if _, _, err := c.Run(context.Background()); err == nil {
			t.Errorf("%s: Run made no error", name)
		}
	}
}

// A small sweep measured: the callbacks hear of every measurement, warm
// ones as round -1, and Log receives each configuration's record once,
// the same the result holds.
func TestSweepRun(t *testing.T) {
	s := &Sweep{Base: dist.Config{Model: "mlp", Seed: 1, Threads: 1}, Workers: []int{1}, Batches: []int{4, 8}, Steps: 2, Repeat: 1, Rounds: 2, Warm: 1, Name: "t"}
	var rounds []int
	var logged []benchlog.Record
	s.Measuring = func(r int, _ dist.Config) { rounds = append(rounds, r) }
	measured := 0
	s.Measured = func(int, dist.Config, *dist.Measurement) { measured++ }
	s.Log = func(recs ...benchlog.Record) error { logged = append(logged, recs...); return nil }
	meas, recs, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{-1, -1, 0, 0, 1, 1}; !slices.Equal(rounds, want) || measured != 6 {
		t.Errorf("measuring rounds %v and %d measured, want %v and 6", rounds, measured, want)
	}
	if len(meas) != 2 || len(recs) != 2 || len(logged) != 2 {
		t.Fatalf("%d measurements, %d records, %d logged; want 2 each", len(meas), len(recs), len(logged))
	}
	for i, m := range meas {
		if m.Steps != 4 || m.Config.Batch != s.Batches[i] || recs[i].Batch != s.Batches[i] || logged[i].Batch != s.Batches[i] || recs[i].Run != "t" {
			t.Errorf("configuration %d: %d steps of batch %d, records %+v and %+v; want 4 steps of %d over the two rounds", i, m.Steps, m.Config.Batch, recs[i], logged[i], s.Batches[i])
		}
	}
	// Cut short, the sweep logs nothing it has not finished and returns the error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	logged = nil
	if _, _, err := s.Run(ctx); err == nil || len(logged) != 0 {
		t.Errorf("cancelled: error %v, %d logged; want an error and none", err, len(logged))
	}
}
