package report

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"scaleplan/internal/units"
	"scaleplan/plots"
	"scaleplan/scenarios"
)

// table2 is seed 001's Table 2 (SEEDS.md): Caffe2's time to 90 epochs of
// ResNet-50 on TSUBAME 3.0, seconds, at 1, 4, 32 and 128 GPUs.
var table2 = map[string][]float64{
	"tsubame3-resnet50-caffe2-default": {604987, 154931, 44862, 135905},
	"tsubame3-resnet50-caffe2-staged":  {593992, 88185, 21111, 10089},
	"tsubame3-resnet50-caffe2-verbs":   {608629, 152852, 21774, 5989},
}

var tsubame = []string{"tsubame3-resnet50-caffe2-default", "tsubame3-resnet50-caffe2-staged", "tsubame3-resnet50-caffe2-verbs"}

// simulated loads and simulates a shipped scenario's sweep, devices
// replacing the sweep's counts when not nil, tracing the last
// configuration.
func simulated(t *testing.T, name string, devices ...int) *Run {
	t.Helper()
	var opt scenarios.Options
	if devices != nil {
		opt.Edit = func(s *scenarios.Scenario) { s.Sweep.Devices = devices }
	}
	r, err := scenarios.Load(name, opt)
	if err != nil {
		t.Fatal(err)
	}
	run, err := Simulate(r, 0, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// TestTimeToTrain checks the time to train of seed 001's configurations
// against the closed form of its recipe, 90 epochs of ImageNet's
// 1,281,167 images at B = 32 × GPUs:
//
//	T = 90 · ⌈1281167 / B⌉ · step time + staging
//
// and that the scaling chart's input carries these values.
func TestTimeToTrain(t *testing.T) {
	var runs []*Run
	for _, name := range tsubame {
		run := simulated(t, name)
		runs = append(runs, run)
		for i, res := range run.Results {
			if res.GlobalBatch != 32*res.Devices {
				t.Fatalf("%s: global batch %d at %d GPUs, want 32 per GPU", name, res.GlobalBatch, res.Devices)
			}
			steps := 90 * math.Ceil(1281167/float64(res.GlobalBatch))
			want := steps*float64(res.StepTime) + float64(res.Staging)
			if got := float64(run.Time(i)); !near(got, want, 1e-12) {
				t.Errorf("%s at %d GPUs: time to train %v s, want %v s", name, res.Devices, got, want)
			}
			if staged := strings.HasSuffix(name, "default"); staged == (res.Staging > 0) {
				t.Errorf("%s at %d GPUs: staging %v", name, res.Devices, res.Staging)
			}
		}
	}
	d := ScalingData(runs)
	if d.Subject != "resnet50 on tsubame3" {
		t.Errorf("subject %q", d.Subject)
	}
	var names []string
	for i, c := range d.Predicted {
		names = append(names, c.Name)
		for j := range c.X {
			if c.X[j] != float64(runs[i].Results[j].Devices) || c.Y[j] != float64(runs[i].Time(j)) {
				t.Errorf("curve %s point %d: (%v, %v), want (%d, %v)", c.Name, j, c.X[j], c.Y[j], runs[i].Results[j].Devices, runs[i].Time(j))
			}
		}
	}
	if strings.Join(names, " ") != "default staged verbs" {
		t.Errorf("curves %q, want default, staged, verbs", names)
	}
	// A run that brings its own times to train keeps them.
	own := &Run{R: runs[0].R, Results: runs[0].Results, TimeToTrain: []units.Seconds{1, 2, 3, 4}}
	if c := ScalingData([]*Run{own}).Predicted[0]; !slices.Equal(c.Y, []float64{1, 2, 3, 4}) {
		t.Errorf("given times to train: curve %v", c.Y)
	}
}

// TestPublished checks the published times the charts draw: seed 001's
// Table 2 for the three Caffe2 scenarios, MLPerf v0.6's 115.22 minutes on
// 8 GPUs of a ZINRAI 200H, and none for a scenario whose recipe's times
// are for other setups or only upper bounds.
func TestPublished(t *testing.T) {
	for name, want := range table2 {
		r, err := scenarios.Load(name, scenarios.Options{})
		if err != nil {
			t.Fatal(err)
		}
		c, ok := Published(r, "x")
		if !ok || !slices.Equal(c.X, []float64{1, 4, 32, 128}) || !slices.Equal(c.Y, want) {
			t.Errorf("%s: published %v at %v (ok %v), want %v at 1, 4, 32, 128", name, c.Y, c.X, ok, want)
		}
	}
	r, err := scenarios.Load("zinrai-200h-resnet50-mlperf-v0.6", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := Published(r, "x"); !ok || !slices.Equal(c.X, []float64{8}) || !near(c.Y[0], 115.22*60, 1e-12) {
		t.Errorf("zinrai-200h-resnet50-mlperf-v0.6: published %v at %v, want 6913.2 s at 8", c.Y, c.X)
	}
	for _, name := range []string{"tsubame3-resnet50-chainermn", "ipu-pod256-efficientnet-b4"} {
		r, err := scenarios.Load(name, scenarios.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := Published(r, "x"); ok {
			t.Errorf("%s: published %v at %v, want none", name, c.Y, c.X)
		}
	}
}

// TestBreakdownData checks that each bar's parts are the simulated
// breakdown and sum to the simulated step time, for a run whose steps
// wait for input (the shared database file), a pipeline (bubbles) and a
// sweep of batches (labels devices × batch).
func TestBreakdownData(t *testing.T) {
	for _, tc := range []struct {
		name   string
		xLabel string
		labels []string
	}{
		{"tsubame3-resnet50-caffe2-default", "devices", []string{"1", "4", "32", "128"}},
		{"ipu-pod16-efficientnet-b4", "devices", []string{"16"}},
		{"seed003-resnet50-2gpu-nop2p", "devices × batch per device", []string{"1×8", "1×16", "1×32", "1×64", "1×128", "1×256", "2×8", "2×16", "2×32", "2×64", "2×128", "2×256"}},
	} {
		run := simulated(t, tc.name)
		d := BreakdownData(run)
		var labels []string
		for i, b := range d.Bars {
			labels = append(labels, b.Label)
			res := run.Results[i]
			sum := 0.0
			for _, v := range b.Parts {
				sum += v
			}
			if !near(sum, float64(res.StepTime), 1e-9) {
				t.Errorf("%s bar %s: parts sum to %v s, step time %v s", tc.name, b.Label, sum, float64(res.StepTime))
			}
			bd := res.Breakdown
			if want := []float64{float64(bd.Compute), float64(bd.Comm), float64(bd.Input), float64(bd.Bubble), float64(bd.Straggler)}; !slices.Equal(b.Parts, want) {
				t.Errorf("%s bar %s: parts %v, want %v", tc.name, b.Label, b.Parts, want)
			}
		}
		if d.XLabel != tc.xLabel || !slices.Equal(labels, tc.labels) {
			t.Errorf("%s: axis %q, bars %q; want %q, %q", tc.name, d.XLabel, labels, tc.xLabel, tc.labels)
		}
		if d.Parts != nil && len(d.Parts) != len(plots.BreakdownParts) {
			t.Errorf("%s: parts %q", tc.name, d.Parts)
		}
	}
	// The shared database file: the 128-GPU step is mostly waiting for input.
	run := simulated(t, "tsubame3-resnet50-caffe2-default", 128)
	if b := BreakdownData(run).Bars[0].Parts; !(b[2] > 0.5*(b[0]+b[1]+b[2]+b[3]+b[4])) {
		t.Errorf("default at 128 GPUs: input %v s of %v", b[2], b)
	}
}

// TestTimelineData checks the timeline of one traced step: spans inside
// the step, the last one ending with it (the step ends when the last
// device finishes its update), devices' rows before the gradient exchange
// and the input pipeline, no waits, and a pipeline's stages each with
// their own exchange.
func TestTimelineData(t *testing.T) {
	for _, tc := range []struct {
		name    string
		devices []int
		rows    []string // rows in order
		kinds   []string // kinds, sorted
	}{
		{"tsubame3-resnet50-caffe2-verbs", []int{8}, []string{"device 0 (node 0", "device 1 (node 0)", "device 2 (node 0)", "device 3 (node 0)",
			"device 4 (node 1)", "device 5 (node 1)", "device 6 (node 1)", "device 7 (node 1)", "gradient exchange"},
			[]string{"backward", "communication", "forward", "update"}},
		{"tsubame3-resnet50-caffe2-default", []int{32}, []string{"device 0 (node 0", "device 1 (node 0)", "device 2 (node 0)", "device 3 (node 0)",
			"device 31 (node 7)", "gradient exchange", "shared database file"},
			[]string{"backward", "communication", "forward", "input", "update"}},
		{"ipu-pod16-efficientnet-b4", nil, nil, []string{"backward", "communication", "forward", "input", "update"}},
	} {
		run := simulated(t, tc.name, tc.devices...)
		d, err := TimelineData(run)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		res := run.Results[len(run.Results)-1]
		last := res.Steps[len(res.Steps)-1]
		step := float64(last.End - last.Start)
		var rows, kinds []string
		end := 0.0
		for _, s := range d.Spans {
			if !(s.Start >= 0) || !(s.End > s.Start) || float64(s.End) > step*(1+1e-12) {
				t.Errorf("%s: span %+v outside the step [0, %v]", tc.name, s, step)
			}
			end = math.Max(end, float64(s.End))
			if !slices.Contains(rows, s.Row) {
				rows = append(rows, s.Row)
			}
			if !slices.Contains(kinds, s.Kind) {
				kinds = append(kinds, s.Kind)
			}
		}
		if !near(end, step, 1e-9) {
			t.Errorf("%s: the last span ends at %v s, the step at %v s", tc.name, end, step)
		}
		slices.Sort(kinds)
		if !slices.Equal(kinds, tc.kinds) {
			t.Errorf("%s: kinds %q, want %q", tc.name, kinds, tc.kinds)
		}
		if tc.rows != nil {
			ok := len(rows) == len(tc.rows)
			for i := range rows {
				ok = ok && strings.HasPrefix(rows[i], tc.rows[i])
			}
			if !ok {
				t.Errorf("%s: rows %q, want %q", tc.name, rows, tc.rows)
			}
		}
		if tc.name == "ipu-pod16-efficientnet-b4" {
			if !slices.Contains(rows, "gradient exchange, stage 0") || !slices.Contains(rows, "gradient exchange, stage 1") {
				t.Errorf("%s: rows %q lack one exchange per stage", tc.name, rows)
			}
		}
	}
	// Without a trace there is no timeline; TraceLast adds one, and the
	// result is the same but for it.
	run := simulated(t, "tsubame3-resnet50-caffe2-verbs", 4, 32)
	before := *run.Results[1]
	run.Results[1].Trace = nil
	if _, err := TimelineData(run); err != ErrNoTrace {
		t.Errorf("untraced run: %v, want ErrNoTrace", err)
	}
	if err := run.TraceLast(0); err != nil {
		t.Fatal(err)
	}
	after := *run.Results[1]
	if after.Trace == nil || after.StepTime != before.StepTime || after.Breakdown != before.Breakdown || len(after.Steps) != len(before.Steps) {
		t.Errorf("TraceLast: step %v, %+v, trace %v; want step %v, %+v and a trace", after.StepTime, after.Breakdown, after.Trace != nil, before.StepTime, before.Breakdown)
	}
	if _, err := TimelineData(run); err != nil {
		t.Errorf("after TraceLast: %v", err)
	}
}

// TestScenarioChartText compares the data every scenario chart draws with
// testdata/charts/NAME.golden (-update rewrites).
func TestScenarioChartText(t *testing.T) {
	var runs []*Run
	for _, name := range tsubame {
		runs = append(runs, simulated(t, name))
	}
	for _, tc := range []struct {
		golden string
		kind   string
		runs   []*Run
	}{
		{"scaling", Scaling, runs},
		{"efficiency", Efficiency, runs},
		{"breakdown-default", Breakdown, runs[:1]},
		{"timeline-verbs-8", Timeline, []*Run{simulated(t, "tsubame3-resnet50-caffe2-verbs", 8)}},
		{"timeline-ipu-pod16", Timeline, []*Run{simulated(t, "ipu-pod16-efficientnet-b4")}},
	} {
		charts, err := Charts(tc.kind, tc.runs)
		if err != nil {
			t.Fatalf("%s: %v", tc.golden, err)
		}
		if len(charts) != 1 || charts[0].Kind != tc.kind {
			t.Fatalf("%s: %d charts", tc.golden, len(charts))
		}
		checkGolden(t, filepath.Join("charts", tc.golden+".golden"), charts[0].Text())
	}
}

func TestShortNames(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{tsubame, []string{"default", "staged", "verbs"}},
		{[]string{"a-b"}, []string{"a-b"}},
		{[]string{"x-y", "x-y"}, []string{"x-y", "x-y"}},
		{[]string{"x-y", "x-y-z"}, []string{"x-y", "x-y-z"}},
		{[]string{"ipu-pod16-efficientnet-b4", "ipu-pod64-efficientnet-b4"}, []string{"pod16-efficientnet-b4", "pod64-efficientnet-b4"}},
		{nil, nil},
	} {
		if got := shortNames(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("shortNames(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
