package main

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"scaleplan/internal/mlperfepochs"
)

// The expected values are read off the sample logs' lines
// (testdata/README.md cites their sources).
func TestExtractSamples(t *testing.T) {
	cases := []struct {
		round, bench string
		want         Submission
		wantTo       []float64
	}{
		// v0.6 ":::MLL" format: global_batch_size 32768, opt_name lars,
		// last eval_accuracy at epoch_num 76; 1 node × 512 chips.
		{"v0.6", "resnet", Submission{Submitter: "Google", System: "tpu-v3-1024", Division: "closed", Accelerators: 512,
			GlobalBatch: 32768, Optimizer: "lars", Unit: "epochs", Runs: 1, Reached: 1}, []float64{76}},
		// BERT: epoch_num is 1 in these logs; train_samples 3151872 and
		// 3326976 are the samples trained; 8 nodes × 8 GPUs; no opt_name,
		// so the benchmark's LAMB.
		{"v1.1", "bert", Submission{Submitter: "NVIDIA", System: "dgxa100_n8_ngc21.09_pytorch", Division: "closed", Accelerators: 64,
			GlobalBatch: 3072, Optimizer: "lamb", Unit: "samples", Runs: 2, Reached: 2}, []float64{3151872, 3326976}},
		// v2.0's "ssd" directory is RetinaNet: batch 256, adam, epoch_num 4.
		{"v2.0", "retinanet", Submission{Submitter: "NVIDIA", System: "dgxa100_n8_ngc22.04_pytorch", Division: "closed", Accelerators: 64,
			GlobalBatch: 256, Optimizer: "adam", Unit: "epochs", Runs: 1, Reached: 1}, []float64{4}},
	}
	for _, c := range cases {
		src := source{Round: c.round, Dir: filepath.Join("testdata", c.round), Repo: "mlcommons/training_results_" + c.round, Commit: "x"}
		b := bench(t, c.bench)
		subs, err := extract(src, b)
		if err != nil {
			t.Fatal(err)
		}
		if len(subs) != 1 {
			t.Fatalf("%s %s: %d submissions, want 1", c.round, c.bench, len(subs))
		}
		s := *subs[0]
		got := s
		got.Round, got.ToTarget, got.Repo, got.Commit, got.Path = "", nil, "", "", ""
		if got.Submitter != c.want.Submitter || got.System != c.want.System || got.Division != c.want.Division ||
			got.Accelerators != c.want.Accelerators || got.GlobalBatch != c.want.GlobalBatch || got.Optimizer != c.want.Optimizer ||
			got.Unit != c.want.Unit || got.Runs != c.want.Runs || got.Reached != c.want.Reached {
			t.Errorf("%s %s: got %+v, want %+v", c.round, c.bench, got, c.want)
		}
		if len(s.ToTarget) != len(c.wantTo) {
			t.Fatalf("%s %s: to target %v, want %v", c.round, c.bench, s.ToTarget, c.wantTo)
		}
		for i := range c.wantTo {
			if s.ToTarget[i] != c.wantTo[i] {
				t.Errorf("%s %s: to target %v, want %v", c.round, c.bench, s.ToTarget, c.wantTo)
			}
		}
		if want := "NVIDIA/results/"; c.round != "v0.6" && !strings.HasPrefix(s.Path, want) {
			t.Errorf("path %q, want it under %s", s.Path, want)
		}
	}
}

func bench(t *testing.T, name string) benchmark {
	t.Helper()
	for _, b := range benchmarks {
		if b.Name == name {
			return b
		}
	}
	t.Fatalf("no benchmark %q", name)
	return benchmark{}
}

// The v2.0 "ssd" directory is RetinaNet, not SSD; the v0.6 one would be SSD.
func TestSSDRounds(t *testing.T) {
	subs, err := extract(source{Round: "v2.0", Dir: "testdata/v2.0"}, bench(t, "ssd"))
	if err != nil || len(subs) != 0 {
		t.Errorf("ssd in v2.0: %d submissions, %v; want none", len(subs), err)
	}
	if !before20("v1.1") || before20("v2.0") || before20("v10.0") {
		t.Error("before20: want v1.1 before v2.0, v2.0 and v10.0 not")
	}
}

func TestReadRun(t *testing.T) {
	log := strings.Join([]string{
		`:::MLLOG {"key": "global_batch_size", "value": 1024, "metadata": {}}`,
		`:::MLLOG {"key": "eval_accuracy", "value": 0.5, "metadata": {"epoch_num": 8}}`,
		`:::MLLOG {"key": "eval_accuracy", "value": 0.6, "metad`, // torn: skipped
		`noise`,
		`:::MLL 1.5 lars_opt_momentum: {"value": 0.9, "metadata": {}}`,
		`:::MLLOG {"key": "eval_accuracy", "value": 0.7, "metadata": {"epoch_num": "12"}}`,
		`:::MLLOG {"key": "run_stop", "value": null, "metadata": {"status": "aborted"}}`,
		`:::MLLOG {"key": "eval_accuracy", "value": 0.8, "metadata": {"epoch_num": 16}}`,
	}, "\n")
	r, err := readRun(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if r.GlobalBatch != 1024 || !r.LARS || r.Status != "aborted" || r.ToTarget != 12 {
		t.Errorf("got %+v; want batch 1024, LARS, aborted, to target 12 (the line after run_stop unread)", r)
	}
	if o := optimizerOf(r, bench(t, "resnet")); o != "lars" {
		t.Errorf("optimizer %q, want lars", o)
	}
}

func TestCSVRoundTrip(t *testing.T) {
	s := &Submission{Round: "v3.1", Submitter: "A", System: "s", Division: "closed", Accelerators: 16, GlobalBatch: 3264,
		Optimizer: "lars", Unit: "epochs", Runs: 5, Reached: 3, ToTarget: []float64{35, 36, 40},
		Repo: "mlcommons/training_results_v3.1", Commit: "c", Path: "A/results/s/resnet"}
	var buf bytes.Buffer
	if err := writeCSV(&buf, []*Submission{s}); err != nil {
		t.Fatal(err)
	}
	rows, err := mlperfepochs.ReadRows(&buf, "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	// Mean 37, sample standard deviation sqrt(((−2)²+(−1)²+3²)/2) = sqrt(7).
	r := rows[0]
	if r.Mean != 37 || math.Abs(r.Std-math.Sqrt(7)) > 1e-5 || r.Min != 35 || r.Max != 40 || r.Reached != 3 || r.Accelerators != 16 ||
		r.Source != "mlcommons/training_results_v3.1@c:A/results/s/resnet" {
		t.Errorf("row %+v", r)
	}
	if _, err := mlperfepochs.ReadRows(strings.NewReader("round\n"), "bad.csv"); err == nil || !strings.Contains(err.Error(), "bad.csv: line 1") {
		t.Errorf("bad header: %v", err)
	}
}

func TestParseSource(t *testing.T) {
	s, err := parseSource("v3.1=/tmp/r@abc")
	if err != nil || s.Round != "v3.1" || s.Dir != "/tmp/r" || s.Commit != "abc" || s.Repo != "mlcommons/training_results_v3.1" {
		t.Errorf("got %+v, %v", s, err)
	}
	for _, bad := range []string{"3.1=/tmp@a", "v3.1=/tmp", "v3.1@a"} {
		if _, err := parseSource(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
