package model

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestEvaluationsByHand checks the count of evaluations against counts
// worked by hand from MLPerf's cadences.
func TestEvaluationsByHand(t *testing.T) {
	every4 := &TimedRegion{EvalEveryEpochs: 4}
	ssd := &TimedRegion{EvalEpochs: []float64{40, 50, 55, 60, 65, 70, 75, 80}}
	bert := &TimedRegion{EvalEverySamples: 500000}
	// MLPerf BERT's rule: at B = 4,096, ⌊0.05·(230.23·4096 + 3e6)/25,000⌋
	// = ⌊7.886⌋, so 175,000 samples; at B = 448 ⌊6.206⌋, 150,000; at
	// B = 16,384 ⌊13.54⌋, 325,000 (the training_policies README's table:
	// 150,000 at 256 to 2,048, 175,000 at 3,072 to 8,192).
	rule := &TimedRegion{EvalSamplesRule: &EvalSamplesRule{Fraction: 0.05, PerBatch: 230.23, Offset: 3e6, Multiple: 25000}}
	for _, c := range []struct {
		name   string
		t      *TimedRegion
		epochs float64
		n      int64
		want   int
		batch  int
	}{
		{"37 epochs every 4: epochs 1, 5, ..., 37", every4, 37, 0, 10, 0},
		{"50 epochs every 4: epochs 2, 6, ..., 50", every4, 50, 0, 13, 0},
		{"40 epochs every 4: epochs 4, 8, ..., 40", every4, 40, 0, 10, 0},
		{"3 epochs every 4: the closing one", every4, 3, 0, 1, 0},
		{"SSD to epoch 50: 40 and 50", ssd, 50, 0, 2, 0},
		{"SSD to epoch 52: 40, 50 and the end", ssd, 52, 0, 3, 0},
		{"SSD to epoch 30: the end alone", ssd, 30, 0, 1, 0},
		{"SSD to epoch 90: all eight and the end", ssd, 90, 0, 9, 0},
		{"2.25 epochs of 1e6 every 5e5 samples", bert, 2.25, 1000000, 5, 0},
		{"2 epochs of 1e6 every 5e5 samples", bert, 2, 1000000, 4, 0},
		{"BERT rule, 2,627,000 samples at 4,096: 175,000 each", rule, 1, 2627000, 16, 4096},
		{"BERT rule, 2,625,000 samples at 4,096: exactly 15", rule, 1, 2625000, 15, 4096},
		{"BERT rule, 2,703,232 samples at 448: 150,000 each", rule, 1, 2703232, 19, 448},
		{"BERT rule, 5,205,540 samples at 16,384: 325,000 each", rule, 1, 5205540, 17, 16384},
		{"BERT rule without a batch", rule, 1, 2627000, 0, 0},
		{"no cadence", &TimedRegion{Startup: 1}, 10, 0, 0, 0},
		{"no region", nil, 10, 0, 0, 0},
		{"no epochs", every4, 0, 0, 0, 0},
	} {
		if got := c.t.Evaluations(c.epochs, c.n, c.batch); got != c.want {
			t.Errorf("%s: %d evaluations, want %d", c.name, got, c.want)
		}
	}
}

// timedRows reads testdata/measurements/mlperf-timed/timed-region.csv.
func timedRows(t *testing.T) []map[string]string {
	t.Helper()
	recs := timedRecords(t, "timed-region.csv")
	if len(recs) < 100 {
		t.Fatalf("%d records, want 100 or more", len(recs))
	}
	var rows []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, k := range recs[0] {
			m[k] = r[i]
		}
		rows = append(rows, m)
	}
	return rows
}

// TestTimedRegionFromLogs checks the MLPerf v0.7 recipes against the
// public logs: each recipe's start-up is the median run_start-to-first-
// step of the round's logs of its benchmark, and its cadence gives as
// many evaluations at its reached epochs as NVIDIA's DGX-1 run logged.
func TestTimedRegionFromLogs(t *testing.T) {
	p, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	rows := timedRows(t)
	for _, c := range []struct{ recipe, bench string }{
		{"mlperf-v0.7-resnet50", "resnet"},
		{"mlperf-v0.7-ssd", "ssd"},
		{"mlperf-v0.7-maskrcnn", "maskrcnn"},
		{"mlperf-v0.7-transformer", "transformer"},
		{"mlperf-v0.7-transformer-dgx1", "transformer"},
		{"mlperf-v0.7-gnmt", "gnmt"},
		{"mlperf-v0.7-gnmt-dgx1", "gnmt"},
	} {
		r, err := p.Recipe(c.recipe)
		if err != nil || r.TimedRegion == nil {
			t.Fatalf("%s: %v, timed region %v", c.recipe, err, r)
		}
		var startups []float64
		logged := -1
		for _, row := range rows {
			if row["round"] != "v0.7" || row["benchmark"] != c.bench {
				continue
			}
			v, err := strconv.ParseFloat(row["startup_s"], 64)
			if err != nil {
				t.Fatal(err)
			}
			startups = append(startups, v)
			if row["system"] == "dgx1_ngc20.06_pytorch" || row["system"] == "dgx1_ngc20.06_mxnet" {
				logged, _ = strconv.Atoi(row["evals"])
			}
		}
		slices.Sort(startups)
		med := startups[len(startups)/2]
		if len(startups)%2 == 0 {
			med = (startups[len(startups)/2-1] + med) / 2
		}
		if got := float64(r.TimedRegion.Startup); got < med-0.005 || got > med+0.005 {
			t.Errorf("%s: start-up %v s, want the logs' median %.3f s", c.recipe, got, med)
		}
		epochs, _ := r.Length()
		if epochs == 0 {
			t.Fatalf("%s: no epochs", c.recipe)
		}
		if got := r.TimedRegion.Evaluations(epochs, r.TrainSamples(), int(r.GlobalBatch)); got != logged {
			t.Errorf("%s: %d evaluations at %v epochs, NVIDIA's DGX-1 log has %d", c.recipe, got, epochs, logged)
		}
	}
}

// TestTimedRegionChecks checks the problems a timed_region can have.
func TestTimedRegionChecks(t *testing.T) {
	for _, c := range []struct {
		t    TimedRegion
		want string
	}{
		{TimedRegion{EvalEveryEpochs: 4}, "timed_region.source: missing source"},
		{TimedRegion{EvalEveryEpochs: 4, EvalEverySamples: 10, Source: "s"}, "give one of eval_every_epochs, eval_epochs, eval_every_samples and eval_samples_rule, not 2"},
		{TimedRegion{EvalSamplesRule: &EvalSamplesRule{Fraction: 0.05, Offset: 3e6}, Source: "s"}, "timed_region.eval_samples_rule: fraction in (0, 1], per_batch and offset in [0, 1e+13], multiple in (0, 1e+13]"},
		{TimedRegion{EvalEverySamples: 10, EvalSamplesRule: &EvalSamplesRule{Fraction: 1, Multiple: 1}, Source: "s"}, "not 2"},
		{TimedRegion{EvalEveryEpochs: -1, Source: "s"}, "timed_region.eval_every_epochs: must be in (0, 10000], got -1"},
		{TimedRegion{EvalEpochs: []float64{40, 30}, Source: "s"}, "timed_region.eval_epochs[1]: must be ascending"},
		{TimedRegion{EvalEverySamples: -5, Source: "s"}, "timed_region.eval_every_samples: must be positive, got -5"},
		{TimedRegion{Startup: -1, Source: "s"}, "timed_region.startup: must be 0 or within 1 us to 1 h"},
		{TimedRegion{EvalScoring: 1e9, Source: "s"}, "timed_region.eval_scoring: must be 0 or within 1 us to 1 h"},
		{TimedRegion{Checkpoint: -2, Source: "s"}, "timed_region.checkpoint: must be 0 or within 1 us to 1 h"},
		{TimedRegion{EvalSetup: 1e5, Source: "s"}, "timed_region.eval_setup: must be 0 or within 1 us to 1 h"},
		{TimedRegion{EvalHostPerSample: -0.03, Source: "s"}, "timed_region.eval_host_per_sample: must be 0 or within 1 us to 1 h"},
	} {
		var ck checker
		ck.timedRegion(&c.t)
		var msgs []string
		for _, is := range ck.issues {
			msgs = append(msgs, is.rest+": "+is.msg)
		}
		all := strings.Join(msgs, "; ")
		if !strings.Contains(all, c.want) {
			t.Errorf("%+v: problems %q, want one with %q", c.t, all, c.want)
		}
	}
	var ck checker
	ck.timedRegion(&TimedRegion{EvalEpochs: []float64{40, 50}, EvalScoring: 1, Startup: 2, Checkpoint: 1.9, EvalSetup: 27, Source: "s"})
	if len(ck.issues) != 0 {
		t.Errorf("a good region: %v", ck.issues)
	}
}

// TestTimedRegionProblems checks the region checked on its own, as a
// scenario gives it: each problem named by its field inside the region,
// "" for the region as a whole, none for a good region.
func TestTimedRegionProblems(t *testing.T) {
	got := (&TimedRegion{EvalEveryEpochs: 5, EvalEpochs: []float64{40}, EvalHostPerSample: -1}).Problems()
	want := map[string]string{
		"":                     "give one of eval_every_epochs",
		"source":               "missing source",
		"eval_host_per_sample": "must be 0 or within 1 us to 1 h",
	}
	if len(got) != len(want) {
		t.Errorf("problems %+v, want %d", got, len(want))
	}
	for _, p := range got {
		if w, ok := want[p.Field]; !ok || !strings.Contains(p.Msg, w) {
			t.Errorf("problem %+v, want field %q with %q", p, p.Field, w)
		}
	}
	if p := (&TimedRegion{EvalEveryEpochs: 5, EvalHostPerSample: 0.0337, Source: "s"}).Problems(); len(p) != 0 {
		t.Errorf("a good region: %+v", p)
	}
}

// median returns the median of v (sorted in place).
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// ipuRun holds one Graphcore log's stamps, seconds: each epoch's start,
// the training's end (the first block_stop after the last epoch) and the
// evaluations' starts and stops.
type ipuRun struct {
	epochs               map[int]float64
	trainEnd             float64
	evalStart, evalStops []float64
}

// readIPURuns reads testdata/measurements/mlperf-timed/ipu-pod16-v1.1-stamps.csv.
func readIPURuns(t *testing.T) map[string]*ipuRun {
	t.Helper()
	recs := timedRecords(t, "ipu-pod16-v1.1-stamps.csv")
	runs := map[string]*ipuRun{}
	for _, r := range recs[1:] {
		ms, err := strconv.ParseFloat(r[3], 64)
		if err != nil {
			t.Fatal(err)
		}
		run := runs[r[0]]
		if run == nil {
			run = &ipuRun{epochs: map[int]float64{}}
			runs[r[0]] = run
		}
		s := ms / 1000
		switch r[1] {
		case "epoch_start":
			e, _ := strconv.Atoi(r[2])
			run.epochs[e] = s
		case "block_stop":
			if run.trainEnd == 0 && len(run.epochs) > 1 {
				run.trainEnd = s
			}
		case "eval_start":
			run.evalStart = append(run.evalStart, s)
		case "eval_stop":
			run.evalStops = append(run.evalStops, s)
		}
	}
	return runs
}

// TestGraphcoreCheckpointFromLogs recomputes the Graphcore recipe's
// checkpoint and eval_setup from the MLLOG stamps of the five v1.1
// ipu-pod16-TF1 ResNet-50 logs: per run, the median excess over the
// median epoch of the saving epochs (2, 6, ..., 34), and the last epoch's
// excess less one save plus the wait to the first eval_start plus the
// first evaluation's excess over the median later one; the recipe takes
// the medians over the runs.
func TestGraphcoreCheckpointFromLogs(t *testing.T) {
	p, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Recipe("graphcore-resnet50-mlperf-v1.1")
	if err != nil || r.TimedRegion == nil {
		t.Fatalf("%v, timed region %v", err, r)
	}
	runs := readIPURuns(t)
	if len(runs) != 5 {
		t.Fatalf("%d runs, want 5", len(runs))
	}
	var ckpts, setups []float64
	for name, run := range runs {
		last := len(run.epochs)
		var epochs, saves []float64
		for e := 2; e < last; e++ {
			d := run.epochs[e+1] - run.epochs[e]
			epochs = append(epochs, d)
			if e%4 == 2 {
				saves = append(saves, d)
			}
		}
		med := median(epochs)
		for i := range saves {
			saves[i] -= med
		}
		ck := median(saves)
		var passes []float64
		for i := range run.evalStart {
			passes = append(passes, run.evalStops[i]-run.evalStart[i])
		}
		if len(passes) < 2 || run.trainEnd == 0 {
			t.Fatalf("%s: %d evaluations, training end %v", name, len(passes), run.trainEnd)
		}
		first := passes[0]
		setup := (run.trainEnd - run.epochs[last] - med - ck) + (run.evalStart[0] - run.trainEnd) + (first - median(passes[1:]))
		ckpts, setups = append(ckpts, ck), append(setups, setup)
	}
	if got, want := float64(r.TimedRegion.Checkpoint), median(ckpts); got < want-0.005 || got > want+0.005 {
		t.Errorf("checkpoint %v s, want the logs' median %.3f s (%v)", got, want, ckpts)
	}
	if got, want := float64(r.TimedRegion.EvalSetup), median(setups); got < want-0.05 || got > want+0.05 {
		t.Errorf("eval_setup %v s, want the logs' median %.2f s (%v)", got, want, setups)
	}
}

// timedRecords reads the CSV name of testdata/measurements/mlperf-timed,
// its header first.
func timedRecords(t *testing.T, name string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "measurements", "mlperf-timed", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("%s: %d records, %v", name, len(recs), err)
	}
	return recs
}
