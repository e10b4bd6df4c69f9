package cmd

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"scaleplan/internal/benchlog"
)

func TestBenchSteps(t *testing.T) {
	dir := t.TempDir()
	log, charts := filepath.Join(dir, "steps.jsonl"), filepath.Join(dir, "charts")
	stdout, stderr, code := runCLI("bench", "steps", "--data", "synthetic", "--hidden", "64", "--batch", "16,32,64", "--target", "0.25",
		"--max-epochs", "0.2", "--validation", "500", "--lr", "0.01", "--lr-batch", "16", "--lr-factors", "0.5,1", "--lr-max", "0.015",
		"--eval-every", "5", "--out", log, "--run", "s1", "--plot", charts)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs := readLog(t, log)
	checkHeader(t, recs, "s1", "bench steps")
	if len(recs) != 4 {
		t.Fatalf("%d records, want a header and 3 convergence records", len(recs))
	}
	checkChartDir(t, charts, 2) // the steps-to-target chart, PNG and SVG
	for i, r := range recs[1:] {
		b := []int{16, 32, 64}[i]
		if r.Kind != benchlog.KindConvergence || r.GlobalBatch != b || r.Target != 0.25 || r.StepsToTarget < 1 || r.LearningRate <= 0 || r.LearningRate > 0.015 {
			t.Errorf("record %+v", r)
		}
		// The table's row of the batch shows the record's figures.
		reached := map[bool]string{true: "yes", false: "no"}[r.Reached]
		want := []string{strconv.Itoa(b), strconv.FormatFloat(r.LearningRate, 'g', 4, 64), reached, strconv.Itoa(r.StepsToTarget),
			strconv.FormatFloat(r.Accuracy, 'f', 4, 64)}
		if !slices.ContainsFunc(strings.Split(stdout, "\n"), func(l string) bool {
			f := strings.Fields(l)
			return len(f) >= len(want) && slices.Equal(f[:len(want)], want)
		}) {
			t.Errorf("no table row %v in\n%s", want, stdout)
		}
	}
	if !strings.Contains(stdout, "global_batch") || strings.Count(stderr, "bench: mlp-784-64-10 batch") < 3 {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
}
