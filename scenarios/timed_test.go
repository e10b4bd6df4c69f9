package scenarios

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// readCSV reads a file of testdata/measurements/mlperf-timed as maps of
// its header's columns.
func readCSV(t *testing.T, name string) []map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "measurements", "mlperf-timed", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("%s: %d records, %v", name, len(recs), err)
	}
	var rows []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		rows = append(rows, m)
	}
	return rows
}

// num parses a CSV cell.
func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// med returns the median of v.
func med(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// TestMaskRCNNv07EvalFromLogs recomputes the v0.7 DGX A100 Mask R-CNN
// scenario's evaluation costs from the logs' split of the exposed pass
// (maskrcnn-v0.7-eval.csv): per system the median over runs of exposed −
// inference, against ⌈5,000/GPUs⌉ images a rank on 1, 2 and 4 nodes, and
// the least-squares line through the three, whose slope is
// eval_host_per_sample and intercept eval_scoring (to the YAML's rounding).
func TestMaskRCNNv07EvalFromLogs(t *testing.T) {
	prep := map[int][]float64{}
	for _, r := range readCSV(t, "maskrcnn-v0.7-eval.csv") {
		g := int(num(t, r["gpus"]))
		prep[g] = append(prep[g], num(t, r["exposed_median_s"])-num(t, r["inference_median_s"]))
	}
	var xs, ys []float64
	for _, g := range []int{8, 16, 32} {
		if len(prep[g]) != 5 {
			t.Fatalf("%d GPUs: %d runs, want 5", g, len(prep[g]))
		}
		xs = append(xs, math.Ceil(5000/float64(g)))
		ys = append(ys, med(prep[g]))
	}
	var mx, my, sxy, sxx float64
	for i := range xs {
		mx, my = mx+xs[i]/3, my+ys[i]/3
	}
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	slope := sxy / sxx
	icept := my - slope*mx
	r, err := Load("dgx-a100-maskrcnn-mlperf-v0.7", Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr := r.Rcp.TimedRegion
	if got := float64(tr.EvalHostPerSample); math.Abs(got-slope) > 0.05e-3 {
		t.Errorf("eval_host_per_sample %v s, the logs' line %v s", got, slope)
	}
	if got := float64(tr.EvalScoring); math.Abs(got-icept) > 0.005 {
		t.Errorf("eval_scoring %v s, the logs' line %v s", got, icept)
	}
	if tr.EvalEveryEpochs != 1 {
		t.Errorf("every %v epochs, want v0.7's 1", tr.EvalEveryEpochs)
	}
}

// TestSSDv11TimedRegion checks the v1.1 SSD scenarios' region: every 5
// epochs (the v1.1 rules) and the start-up the median of the v1.0 SSD
// rows of timed-region.csv; the recipe (v0.7's fixed epochs) unchanged.
func TestSSDv11TimedRegion(t *testing.T) {
	var s []float64
	for _, r := range readCSV(t, "timed-region.csv") {
		if r["round"] == "v1.0" && r["benchmark"] == "ssd" {
			s = append(s, num(t, r["startup_s"]))
		}
	}
	want := med(s)
	for _, name := range []string{"dgx-a100-ssd-mlperf-v1.1", "azure-nd-a100-v4-ssd-mlperf-v1.1"} {
		r, err := Load(name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		tr := r.Rcp.TimedRegion
		if tr.EvalEveryEpochs != 5 || len(tr.EvalEpochs) != 0 || math.Abs(float64(tr.Startup)-want) > 5e-4 {
			t.Errorf("%s: every %v epochs (fixed %v), start-up %v; want 5, none, %v s", name, tr.EvalEveryEpochs, tr.EvalEpochs, tr.Startup, want)
		}
		if got := r.Profiles.Recipes[r.Scenario.Recipe].TimedRegion; len(got.EvalEpochs) != 8 {
			t.Errorf("%s: the recipe's region changed: %+v", name, got)
		}
	}
}

// TestDelayAllReduce checks parallelism.delay_allreduce: the simulator's
// exchange waits for the whole backward pass (NoOverlap), and not without.
func TestDelayAllReduce(t *testing.T) {
	for _, delay := range []bool{false, true} {
		r, err := Load("dgx-a100-maskrcnn-mlperf-v0.7", Options{Edit: func(s *Scenario) {
			s.Parallelism.DelayAllReduce = delay
			s.Sweep.Devices = []int{16}
		}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := r.Build(r.Points()[0])
		if err != nil {
			t.Fatal(err)
		}
		if c.Comm.NoOverlap != delay {
			t.Errorf("delay_allreduce %v: NoOverlap %v", delay, c.Comm.NoOverlap)
		}
	}
}
