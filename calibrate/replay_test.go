package calibrate

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"

	"scaleplan/internal/benchlog"
)

// readLog returns the records of the bench log at path, a JSON object a
// line.
func readLog(t *testing.T, path string) []benchlog.Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []benchlog.Record
	for n, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		r, err := benchlog.Decode([]byte(line))
		if err != nil {
			t.Fatalf("%s:%d: %v", path, n+1, err)
		}
		recs = append(recs, r)
	}
	return recs
}

// The replay of a committed log: a row for every worker count, transport
// and batch of its header, in that order, each measured at the global
// batch over the mean step of the log's records of it, Σ n_r·t_r / Σ n_r
// over its rounds, computed here from the records themselves.
func TestReplay(t *testing.T) {
	const path = "../testdata/measurements/validate-engine-mlp-amd-replay.jsonl"
	recs := readLog(t, path)
	rep, err := Replay(recs, ReplayOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	h := rep.Header
	if want := len(h.Workers) * len(h.Transports) * len(h.Batches); len(rep.Rows) != want {
		t.Fatalf("%d rows, want %d", len(rep.Rows), want)
	}
	if rep.Calibration.Rounds != h.Rounds || rep.Calibration.Guard != nil || len(rep.Calibration.Links) != len(h.Transports) {
		t.Errorf("calibration of %d rounds, guard %v, %d links; want %d, none, %d", rep.Calibration.Rounds, rep.Calibration.Guard, len(rep.Calibration.Links), h.Rounds, len(h.Transports))
	}
	k := 0
	for _, w := range h.Workers {
		for _, tr := range h.Transports {
			for _, b := range h.Batches {
				r := rep.Rows[k]
				k++
				if r.Workers != w || r.Transport != tr || r.Batch != b {
					t.Fatalf("row %d: %d workers %s batch %d, want %d %s %d", k, r.Workers, r.Transport, r.Batch, w, tr, b)
				}
				var n, sum float64
				for _, rec := range recs {
					if rec.Kind == benchlog.KindMeasurement && rec.Workers == w && rec.Transport == tr && rec.Batch == b && rec.Labels[benchlog.InStep] == "" {
						n += float64(rec.Steps)
						sum += float64(rec.Steps) * rec.StepTime
					}
				}
				want := float64(w*b) / (sum / n)
				if got := r.Measured.SamplesPerSec; math.Abs(got-want) > 1e-9*want {
					t.Errorf("%d workers %s batch %d: measured %.6g samples/s, want %.6g", w, tr, b, got, want)
				}
				if e := (r.Predicted.SamplesPerSec - want) / want; math.Abs(r.Error-e) > 1e-12 {
					t.Errorf("%d workers %s batch %d: error %v, want %v", w, tr, b, r.Error, e)
				}
			}
		}
	}
}

// Logs that cannot be replayed are refused with the reason, never a
// crash.
func TestReplayRefuses(t *testing.T) {
	const path = "../testdata/measurements/validate-engine-mlp-amd-replay.jsonl"
	recs := readLog(t, path)
	other := recs[0]
	other.Config = map[string]any{"command": "bench throughput"}
	for _, tc := range []struct {
		name string
		recs []benchlog.Record
		want string
	}{
		{"empty", nil, "no header record first"},
		{"no header", recs[1:], "no header record first"},
		{"another command", []benchlog.Record{other}, `its header's command is "bench throughput"`},
		{"a round short", recs[:len(recs)-3], "records after the header, want"},
	} {
		_, err := Replay(tc.recs, ReplayOptions{Path: "x.jsonl"})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "x.jsonl") {
			t.Errorf("%s: error %v, want one naming x.jsonl with %q", tc.name, err, tc.want)
		}
	}
}

// Options Run cannot measure are refused before anything is measured.
func TestRunRefuses(t *testing.T) {
	good := Options{Batches: []int{4, 8}, Workers: []int{2}, Transports: []string{"inproc"}, Cores: 2, Mode: Each, Threads: 1, Steps: 2, Rounds: 1}
	for _, tc := range []struct {
		name string
		bad  func(*Options)
		want string
	}{
		{"nothing", func(o *Options) { *o = Options{} }, "want two batches or more"},
		{"one batch", func(o *Options) { o.Batches = []int{4} }, "want two batches or more"},
		{"unknown calibration", func(o *Options) { o.Mode = "all" }, `calibration "all" (valid: step, each, one)`},
		{"no rounds", func(o *Options) { o.Rounds = 0 }, "rounds 0"},
		{"negative warm-up", func(o *Options) { o.Warmup = -1 }, "warm-up -1"},
		{"one on too many threads", func(o *Options) { o.Mode, o.Threads = One, 3 }, "threads 3"},
		{"batch 0", func(o *Options) { o.Batches = []int{4, 0} }, "batch"},
	} {
		o := good
		tc.bad(&o)
		if _, _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one with %q", tc.name, err, tc.want)
		}
	}
}
