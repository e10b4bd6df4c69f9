package tables_test

import (
	"math"
	"reflect"
	"testing"

	"scaleplan/calibrate"
	"scaleplan/engine/dist"
	"scaleplan/internal/tables"
)

// The summary's figures, computed by hand from four rows.
func TestEngineSummary(t *testing.T) {
	rows := []calibrate.Row{
		{Workers: 2, Transport: "inproc", Batch: 16, Error: 0.30},
		{Workers: 2, Transport: "inproc", Batch: 32, Error: -0.10},
		{Workers: 4, Transport: "tcp", Batch: 64, Error: 0.16},
		{Workers: 4, Transport: "inproc", Batch: 128, Error: 0.15}, // on the bound: within
	}
	// All: (0.30 + 0.10 + 0.16 + 0.15)/4 = 0.1775; batch >= 32:
	// (0.10 + 0.16 + 0.15)/3 = 0.1367, two of three within 0.15.
	want := "mean absolute error 17.8% over 4 configurations, 13.7% over the 3 with batch >= 32; worst +30.0% (2 workers, inproc, batch 16)\n" +
		"within 15% at batch >= 32: 2 of 3; worst there +16.0% (4 workers, tcp, batch 64)\n"
	if got := tables.EngineSummary(rows); got != want {
		t.Errorf("summary:\n%s\nwant\n%s", got, want)
	}
	if s := calibrate.SummaryOf(rows); s.All.Within != 2 || s.Large.Within != 2 || math.Abs(s.Large.MAE-0.41/3) > 1e-12 {
		t.Errorf("calibrate.SummaryOf = %+v", s)
	}
	// Only small batches: no line about the target.
	want = "mean absolute error 30.0% over 1 configurations; worst +30.0% (2 workers, inproc, batch 16)\n"
	if got := tables.EngineSummary(rows[:1]); got != want {
		t.Errorf("summary of batch 16 alone:\n%s\nwant\n%s", got, want)
	}
}

// The rounds, cores and links of a calibration with no sweep, and the
// names of the workers of a configuration.
func TestEngineCalibration(t *testing.T) {
	cal := &calibrate.Calibration{Rounds: 3, Warm: 2, Links: map[string]*dist.Link{
		"tcp":    {Latency: 25e-6, Bandwidth: 1.5e9},
		"inproc": {Latency: 1.3e-6, Bandwidth: 8e9, Evict: 1 << 20},
	}}
	got := tables.EngineCalibration(cal)
	want := []string{
		"Every configuration measured in 3 alternating rounds, over the timed steps of all of them, after 2 warm-up rounds set aside",
		"Link inproc (ring step of two ranks on buffers out of the cache (1 MiB written before each step), median of 3 rounds): latency 1.3 us, bandwidth 8 GB/s",
		"Link tcp (ring step of two ranks, median of 3 rounds): latency 25.0 us, bandwidth 1.5 GB/s",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("EngineCalibration:\n%q\nwant\n%q", got, want)
	}
	cal = &calibrate.Calibration{Rounds: 1, Warm: 1}
	if got, want := tables.EngineCalibration(cal), []string{"Every configuration measured once, after a warm-up round set aside"}; !reflect.DeepEqual(got, want) {
		t.Errorf("EngineCalibration of one round:\n%q\nwant\n%q", got, want)
	}
	for _, c := range []struct {
		cfg  dist.Config
		want string
	}{
		{dist.Config{Workers: 2, Transport: "tcp"}, "2 workers tcp"},
		{dist.Config{Workers: 4, Transport: "tcp", InStep: true}, "4 workers in step over tcp"},
		{dist.Config{Workers: 2, Independent: true}, "2 independent workers"},
	} {
		if got := tables.EngineWorkers(c.cfg); got != c.want {
			t.Errorf("EngineWorkers(%d workers, %q) = %q, want %q", c.cfg.Workers, c.cfg.Transport, got, c.want)
		}
	}
}
