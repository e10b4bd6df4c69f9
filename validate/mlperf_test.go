package validate

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestLeaveRoundOut checks the rows a case's law is fitted to: closed
// division, the case's optimizer, neither its round nor its system.
func TestLeaveRoundOut(t *testing.T) {
	rows := []epochsRow{
		{Round: "v1.0", System: "a", Division: "closed", Optimizer: "lars", Batch: 1, Epochs: 10},
		{Round: "v2.0", System: "b", Division: "closed", Optimizer: "lars", Batch: 2, Epochs: 20},
		{Round: "v2.0", System: "c", Division: "closed", Optimizer: "lars", Batch: 3, Epochs: 30},
		{Round: "v3.0", System: "b", Division: "closed", Optimizer: "lars", Batch: 4, Epochs: 40}, // b re-published
		{Round: "v3.0", System: "d", Division: "open", Optimizer: "lars", Batch: 5, Epochs: 50},
		{Round: "v3.0", System: "e", Division: "closed", Optimizer: "sgd", Batch: 6, Epochs: 60},
		{Round: "v3.0", System: "f", Division: "closed", Optimizer: "lars", Batch: 7, Epochs: 70},
	}
	b, e, samples, err := leaveRoundOut(rows, "lars", "v2.0", "b")
	if !slices.Equal(b, []float64{1, 7}) || !slices.Equal(e, []float64{10, 70}) || samples || err != nil {
		t.Errorf("v2.0 without b: batches %v epochs %v, samples %v, %v; want [1 7] [10 70], epochs", b, e, samples, err)
	}
	b, _, _, _ = leaveRoundOut(rows, "lars", "v3.0", "")
	if !slices.Equal(b, []float64{1, 2, 3}) {
		t.Errorf("v3.0: batches %v, want [1 2 3]", b)
	}
	for i := range rows {
		rows[i].Unit = "samples"
	}
	if _, _, samples, err = leaveRoundOut(rows, "lars", "v3.0", ""); !samples || err != nil {
		t.Errorf("rows of samples: samples %v, %v; want true", samples, err)
	}
	rows[0].Unit = "epochs"
	if _, _, _, err = leaveRoundOut(rows, "lars", "v3.0", ""); err == nil {
		t.Error("rows of samples and of epochs: no error")
	}
}

// TestEpochsCurveSamples checks a table that counts samples (BERT's): the
// law is fitted in samples whatever the data set's size, so that S_min
// and B_noise are those of S = samples/B. Rows on samples(B) =
// 2e6·(1 + B/4000): S_min = 2e6/4000 = 500, B_noise = 4000.
func TestEpochsCurveSamples(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("round,submitter,system,division,accelerators,global_batch,optimizer,unit,mean\n")
	for i, b := range []float64{256, 1024, 3072, 8192, 16384} {
		fmt.Fprintf(&sb, "v1,x,s%d,closed,8,%g,lamb,samples,%g\n", i, b, 2e6*(1+b/4000))
	}
	path := filepath.Join(t.TempDir(), "bert.csv")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := (&CaseEpochs{Data: path, Optimizer: "lamb", Round: "v2"}).epochsCurve(157696000, "")
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(c.SMin-500)/500 > 1e-6 || math.Abs(c.BNoise-4000)/4000 > 1e-6 {
		t.Errorf("S_min %g, B_noise %g; want 500 and 4000", c.SMin, c.BNoise)
	}
}

// TestEpochsCurveClosedForm fits a table whose rounds v1 and v2 lie on
// E(B) = E_min·(1 + B/B_noise) with E_min = 10, B_noise = 1000 and N =
// 100 samples per epoch, so S_min = E_min·N/B_noise = 1, and whose round
// v3 ran five times the epochs: the case of round v3 must get the law of
// v1 and v2 alone, and that of round v1 a law pulled off by v3.
func TestEpochsCurveClosedForm(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("round,submitter,system,division,accelerators,global_batch,optimizer,mean\n")
	for i, b := range []float64{100, 300, 1000, 3000, 10000} {
		e := 10 * (1 + b/1000)
		fmt.Fprintf(&sb, "v1,x,s%d,closed,8,%g,lars,%g\n", i, b, e)
		fmt.Fprintf(&sb, "v2,x,t%d,closed,8,%g,lars,%g\n", i, b*1.5, 10*(1+b*1.5/1000))
		fmt.Fprintf(&sb, "v3,x,u%d,closed,8,%g,lars,%g\n", i, b, 5*e)
	}
	path := filepath.Join(t.TempDir(), "law.csv")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := (&CaseEpochs{Data: path, Optimizer: "lars", Round: "v3"}).epochsCurve(100, "")
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(c.SMin-1) > 1e-6 || math.Abs(c.BNoise-1000)/1000 > 1e-6 {
		t.Errorf("without v3: S_min %g, B_noise %g; want 1 and 1000", c.SMin, c.BNoise)
	}
	// Steps at B = 2000: ⌈1·(1 + 1000/2000)⌉ = 2; epochs 2·2000/100 = 40 =
	// 10·(1 + 2000/1000).
	if got := c.Steps(2000); got != 2 {
		t.Errorf("steps at 2000: %d, want 2", got)
	}
	with, err := (&CaseEpochs{Data: path, Optimizer: "lars", Round: "v1"}).epochsCurve(100, "")
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(with.SMin*with.BNoise-1000) < 1 {
		t.Errorf("without v1 (v3 kept): S_min·B_noise %g, want v3's larger epochs to show", with.SMin*with.BNoise)
	}
	if _, err := (&CaseEpochs{Data: path, Optimizer: "adam", Round: "v3"}).epochsCurve(100, ""); err == nil {
		t.Error("an optimizer without rows: no error")
	}
	rel, err := (&CaseEpochs{Data: "law.csv", Optimizer: "lars", Round: "v3"}).epochsCurve(100, filepath.Dir(path))
	if err != nil || rel.SMin != c.SMin || rel.BNoise != c.BNoise {
		t.Errorf("the table's path relative to the case file's directory: %+v, %v; want the law of its absolute path", rel, err)
	}
	_, err = (&CaseEpochs{Data: "no/such.csv", Optimizer: "lars", Round: "v3"}).epochsCurve(100, "")
	if err == nil || !strings.Contains(err.Error(), "resnet") {
		t.Errorf("a missing table: %v, want an error naming the embedded tables", err)
	}
}

// TestBuiltinEpochsCases checks every built-in case that takes the epochs
// law: a time to train with a source and a link to the logs, whose round
// and system are rows of its table (read here with encoding/csv), so that
// leaving them out leaves out something.
func TestBuiltinEpochsCases(t *testing.T) {
	n := 0
	for _, c := range BuiltinCases().Cases {
		e := c.Epochs
		if e == nil {
			continue
		}
		n++
		if c.Metric != TimeToTrain || c.Source == "" || !strings.HasPrefix(c.URL, "https://github.com/mlcommons/training_results_") {
			t.Errorf("%s: metric %s, source %q, url %q: want a time to train citing the logs", c.Name, c.Metric, c.Source, c.URL)
		}
		if !strings.Contains(c.URL, "/"+e.System+"/") {
			t.Errorf("%s: url %s does not name system %s", c.Name, c.URL, e.System)
		}
		data, _, err := e.table("")
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range recs[1:] {
			found = found || (r[0] == e.Round && r[2] == e.System)
		}
		if !found {
			t.Errorf("%s: %s has no row of round %s and system %s", c.Name, e.Data, e.Round, e.System)
		}
	}
	if n < 10 {
		t.Errorf("%d cases take the epochs law, want at least 10", n)
	}
}

// TestEpochsCasesOutsideRepository runs the built-in cases from a
// directory outside the repository, as a shipped binary runs: the tables
// of the cases that take the epochs law are embedded, so every case is
// predicted, the epochs cases among them.
func TestEpochsCasesOutsideRepository(t *testing.T) {
	t.Chdir(t.TempDir())
	rep := CompareCases(BuiltinCases(), Options{})
	n, got := 0, 0
	for _, r := range rep.Results {
		if r.Case.Epochs != nil {
			n++
		}
		switch {
		case r.Err != nil:
			t.Errorf("%s, run outside the repository: %v", r.Case.Name, r.Err)
		case r.Case.Epochs != nil && r.Predicted > 0:
			got++
		}
	}
	if got != n || n < 10 {
		t.Errorf("%d of %d epochs cases predicted outside the repository, want all and at least 10", got, n)
	}
}

// TestEpochsChecked checks that a case's epochs law is checked: only on a
// time to train, with its table, optimizer and round.
func TestEpochsChecked(t *testing.T) {
	src := `cases:
  - name: x
    scenario: dgx-a100-resnet50-mlperf-v2.0
    metric: epoch_time
    published: 1 s
    source: test
    epochs: {data: ""}
`
	_, err := ReadCases(strings.NewReader(src), "x.yaml")
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"epochs: only a time_to_train case", "epochs.data: required", "epochs.optimizer: required", "epochs.round: required"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestTimeToTrainScores recomputes the published figure of every built-in
// MLPerf time-to-train case from its runs, run_stop − run_start of each
// result_N.txt (testdata/measurements/mlperf-timed/ttt-runs.csv, read from
// the logs the case links): MLPerf's score drops the fastest and the
// slowest run, a run that did not reach the target counting as the
// slowest, and averages the rest (mlcommons/training_policies,
// training_rules.adoc, "Benchmark results").
func TestTimeToTrainScores(t *testing.T) {
	f, err := os.Open("../testdata/measurements/mlperf-timed/ttt-runs.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string][]float64{}
	for _, r := range recs[1:] {
		s := math.Inf(1)
		if r[3] == "success" {
			if s, err = strconv.ParseFloat(r[2], 64); err != nil {
				t.Fatalf("%v: %v", r, err)
			}
		}
		runs[r[0]] = append(runs[r[0]], s)
	}
	n := 0
	for _, c := range BuiltinCases().Cases {
		if !strings.HasSuffix(c.Name, "-ttt") {
			continue
		}
		n++
		rs := slices.Sorted(slices.Values(runs[c.Name]))
		if len(rs) < 5 {
			t.Errorf("%s: %d runs in ttt-runs.csv, want at least 5", c.Name, len(rs))
			continue
		}
		sum := 0.0
		for _, s := range rs[1 : len(rs)-1] {
			sum += s
		}
		score := sum / float64(len(rs)-2)
		pub, err := strconv.ParseFloat(strings.TrimSuffix(c.Published, " s"), 64)
		if err != nil || math.Abs(score-pub) > 0.005 {
			t.Errorf("%s: published %q, the runs' score %.3f s", c.Name, c.Published, score)
		}
	}
	if n < 19 {
		t.Errorf("%d time-to-train cases, want at least 19", n)
	}
}

// TestSizeBuckets checks the errors by accelerators against sums worked
// by hand: the independent time-to-train cases with an epochs law and 64
// accelerators or more count, in the bucket of their size; a tuned case,
// one without the law, one below 64 and a failed one do not.
func TestSizeBuckets(t *testing.T) {
	law := &CaseEpochs{Data: "resnet", Optimizer: "lars", Round: "v1.1"}
	res := func(devices int, e float64, c Case) CaseResult {
		c.Metric = TimeToTrain
		return CaseResult{Case: &c, Devices: devices, Error: e}
	}
	rep := &Report{Results: []CaseResult{
		res(64, 0.10, Case{Epochs: law}),
		res(128, -0.30, Case{Epochs: law}),
		res(256, -0.20, Case{Epochs: law}),
		res(4096, 0.05, Case{Epochs: law}),
		res(512, 0.50, Case{Epochs: law, Tuned: "chosen after"}),
		res(512, 0.50, Case{}),
		res(32, 0.50, Case{Epochs: law}),
		{Case: &Case{Epochs: law, Metric: TimeToTrain}, Devices: 600, Err: errors.New("x")},
	}}
	rep.sizes()
	want := []SizeBucket{
		{Min: 64, Max: 128, N: 2, MAE: 0.20, Bias: -0.10},
		{Min: 129, Max: 512, N: 1, MAE: 0.20, Bias: -0.20},
		{Min: 513, N: 1, MAE: 0.05, Bias: 0.05},
	}
	near := func(a, b SizeBucket) bool {
		return a.Min == b.Min && a.Max == b.Max && a.N == b.N && math.Abs(a.MAE-b.MAE) < 1e-12 && math.Abs(a.Bias-b.Bias) < 1e-12
	}
	for i, w := range want {
		if !near(rep.Sizes[i], w) {
			t.Errorf("bucket %d: %+v, want %+v", i, rep.Sizes[i], w)
		}
	}
	if s := rep.Scale; s.N != 4 || math.Abs(s.MAE-0.65/4) > 1e-12 || math.Abs(s.Bias-(-0.35/4)) > 1e-12 {
		t.Errorf("all sizes: %+v, want 4 cases, MAE 0.1625, bias -0.0875", s)
	}
}
