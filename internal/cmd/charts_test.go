package cmd

import (
	"bytes"
	"encoding/xml"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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
func simulated(t *testing.T, name string, devices ...int) *scenarioRun {
	t.Helper()
	var opt scenarios.Options
	if devices != nil {
		opt.Edit = func(s *scenarios.Scenario) { s.Sweep.Devices = devices }
	}
	r, err := scenarios.Load(name, opt)
	if err != nil {
		t.Fatal(err)
	}
	run, err := simulateSweep(r, 0, true, nil)
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
	var runs []*scenarioRun
	for _, name := range tsubame {
		run := simulated(t, name)
		runs = append(runs, run)
		for i, res := range run.Results {
			if res.GlobalBatch != 32*res.Devices {
				t.Fatalf("%s: global batch %d at %d GPUs, want 32 per GPU", name, res.GlobalBatch, res.Devices)
			}
			steps := 90 * math.Ceil(1281167/float64(res.GlobalBatch))
			want := steps*float64(res.StepTime) + float64(res.Staging)
			if got := float64(run.ttt(i)); !near(got, want, 1e-12) {
				t.Errorf("%s at %d GPUs: time to train %v s, want %v s", name, res.Devices, got, want)
			}
			if staged := strings.HasSuffix(name, "default"); staged == (res.Staging > 0) {
				t.Errorf("%s at %d GPUs: staging %v", name, res.Devices, res.Staging)
			}
		}
	}
	d := scalingData(runs)
	if d.Subject != "resnet50 on tsubame3" {
		t.Errorf("subject %q", d.Subject)
	}
	var names []string
	for i, c := range d.Predicted {
		names = append(names, c.Name)
		for j := range c.X {
			if c.X[j] != float64(runs[i].Results[j].Devices) || c.Y[j] != float64(runs[i].ttt(j)) {
				t.Errorf("curve %s point %d: (%v, %v), want (%d, %v)", c.Name, j, c.X[j], c.Y[j], runs[i].Results[j].Devices, runs[i].ttt(j))
			}
		}
	}
	if strings.Join(names, " ") != "default staged verbs" {
		t.Errorf("curves %q, want default, staged, verbs", names)
	}
	// A run that brings its own times to train keeps them.
	own := &scenarioRun{R: runs[0].R, Results: runs[0].Results, TimeToTrain: []units.Seconds{1, 2, 3, 4}}
	if c := scalingData([]*scenarioRun{own}).Predicted[0]; !slices.Equal(c.Y, []float64{1, 2, 3, 4}) {
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
		c, ok := published(r, "x")
		if !ok || !slices.Equal(c.X, []float64{1, 4, 32, 128}) || !slices.Equal(c.Y, want) {
			t.Errorf("%s: published %v at %v (ok %v), want %v at 1, 4, 32, 128", name, c.Y, c.X, ok, want)
		}
	}
	r, err := scenarios.Load("zinrai-200h-resnet50-mlperf-v0.6", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := published(r, "x"); !ok || !slices.Equal(c.X, []float64{8}) || !near(c.Y[0], 115.22*60, 1e-12) {
		t.Errorf("zinrai-200h-resnet50-mlperf-v0.6: published %v at %v, want 6913.2 s at 8", c.Y, c.X)
	}
	for _, name := range []string{"tsubame3-resnet50-chainermn", "ipu-pod256-efficientnet-b4"} {
		r, err := scenarios.Load(name, scenarios.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := published(r, "x"); ok {
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
		d := breakdownData(run)
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
	if b := breakdownData(run).Bars[0].Parts; !(b[2] > 0.5*(b[0]+b[1]+b[2]+b[3]+b[4])) {
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
		d, err := timelineData(run)
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
	// Without a trace there is no timeline; traceLast adds one, and the
	// result is the same but for it.
	run := simulated(t, "tsubame3-resnet50-caffe2-verbs", 4, 32)
	before := *run.Results[1]
	run.Results[1].Trace = nil
	if _, err := timelineData(run); err != errNoTrace {
		t.Errorf("untraced run: %v, want errNoTrace", err)
	}
	if err := traceLast(run, 0); err != nil {
		t.Fatal(err)
	}
	after := *run.Results[1]
	if after.Trace == nil || after.StepTime != before.StepTime || after.Breakdown != before.Breakdown || len(after.Steps) != len(before.Steps) {
		t.Errorf("traceLast: step %v, %+v, trace %v; want step %v, %+v and a trace", after.StepTime, after.Breakdown, after.Trace != nil, before.StepTime, before.Breakdown)
	}
	if _, err := timelineData(run); err != nil {
		t.Errorf("after traceLast: %v", err)
	}
}

// TestScenarioChartText compares the data every scenario chart draws with
// testdata/charts/NAME.golden (-update rewrites).
func TestScenarioChartText(t *testing.T) {
	var runs []*scenarioRun
	for _, name := range tsubame {
		runs = append(runs, simulated(t, name))
	}
	for _, tc := range []struct {
		golden string
		kind   string
		runs   []*scenarioRun
	}{
		{"scaling", chartScaling, runs},
		{"efficiency", chartEfficiency, runs},
		{"breakdown-default", chartBreakdown, runs[:1]},
		{"timeline-verbs-8", chartTimeline, []*scenarioRun{simulated(t, "tsubame3-resnet50-caffe2-verbs", 8)}},
		{"timeline-ipu-pod16", chartTimeline, []*scenarioRun{simulated(t, "ipu-pod16-efficientnet-b4")}},
	} {
		charts, err := scenarioCharts(tc.kind, tc.runs)
		if err != nil {
			t.Fatalf("%s: %v", tc.golden, err)
		}
		if len(charts) != 1 || charts[0].Kind != tc.kind {
			t.Fatalf("%s: %d charts", tc.golden, len(charts))
		}
		checkGolden(t, filepath.Join("charts", tc.golden+".golden"), charts[0].Text())
	}
}

// chartTitles are the title beginnings of the charts, by file kind.
var chartTitles = map[string]string{
	"scaling":    "Time to train vs device count",
	"efficiency": "Scaling efficiency vs device count",
	"breakdown":  "Step time breakdown",
	"timeline":   "One training step",
	"throughput": "Throughput vs batch size",
	"steps":      "Steps to target vs batch size",
}

// checkChart checks a chart file: a PNG decodes to 800 × 600 pixels, an
// SVG is XML with an <svg> root and the title of its kind.
func checkChart(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	switch filepath.Ext(path) {
	case ".png":
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if b := img.Bounds(); b.Dx() != 800 || b.Dy() != 600 {
			t.Errorf("%s: %d × %d pixels, want 800 × 600", path, b.Dx(), b.Dy())
		}
	case ".svg":
		var doc struct{ XMLName xml.Name }
		if err := xml.Unmarshal(data, &doc); err != nil || doc.XMLName.Local != "svg" {
			t.Fatalf("%s: not SVG: %v (root %q)", path, err, doc.XMLName.Local)
		}
		kind, _, _ := strings.Cut(strings.TrimSuffix(filepath.Base(path), ".svg"), "-")
		if !bytes.Contains(data, []byte(">"+chartTitles[kind])) {
			t.Errorf("%s: no title %q", path, chartTitles[kind])
		}
	default:
		t.Errorf("unexpected file %s", path)
	}
}

// TestPlotScenarios runs `scaleplan plot` on scenarios and compares exit
// code, stdout and stderr with testdata/plot/NAME.golden (-update
// rewrites), then checks the files it says it wrote.
func TestPlotScenarios(t *testing.T) {
	tmp := t.TempDir()
	out := func(name string) string { return filepath.Join(tmp, name) }
	for _, tc := range []struct {
		name  string
		args  []string
		code  int
		files []string // base names written, in order
	}{
		{"scaling", append([]string{"plot", "scaling", "-o", out("s")}, tsubame...), exitOK, []string{"scaling.png", "scaling.svg"}},
		{"efficiency", append([]string{"plot", "efficiency", "--devices", "1,4,32,128,256", "-o", out("e")}, tsubame...), exitOK, []string{"efficiency.png", "efficiency.svg"}},
		{"breakdown", []string{"plot", "breakdown", "tsubame3-resnet50-caffe2-default", "ipu-pod16-efficientnet-b4", "-o", out("b")}, exitOK,
			[]string{"breakdown-tsubame3-resnet50-caffe2-default.png", "breakdown-tsubame3-resnet50-caffe2-default.svg",
				"breakdown-ipu-pod16-efficientnet-b4.png", "breakdown-ipu-pod16-efficientnet-b4.svg"}},
		{"timeline", []string{"plot", "timeline", "tsubame3-resnet50-caffe2-verbs", "--devices", "32", "-o", out("t")}, exitOK, []string{"timeline.png", "timeline.svg"}},
		{"no-scenario", []string{"plot", "scaling", "-o", out("x")}, exitUsage, nil},
		{"timeline-two", []string{"plot", "timeline", "tsubame3-resnet50-caffe2-verbs", "ipu-pod16-efficientnet-b4"}, exitUsage, nil},
		{"bad-devices", []string{"plot", "breakdown", "--devices", "0", "tsubame3-resnet50-caffe2-verbs"}, exitUsage, nil},
		{"unknown-scenario", []string{"plot", "scaling", "tsubame3-resnet50-caffe2-verb"}, exitRuntime, nil},
		{"devices-not-whole-nodes", []string{"plot", "scaling", "--devices", "1,6", "tsubame3-resnet50-caffe2-verbs"}, exitRuntime, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(tc.args...)
			if code != tc.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			got := "$ scaleplan " + strings.Join(tc.args, " ") + "\n-- exit " + strconv.Itoa(code) + " --\n-- stdout --\n" + stdout + "-- stderr --\n" + stderr
			checkGolden(t, filepath.Join("plot", "scenario-"+tc.name+".golden"), strings.ReplaceAll(got, tmp, "$TMP"))
			printed := strings.Fields(stdout)
			if len(printed) != len(tc.files) {
				t.Fatalf("printed %q, want %d files", printed, len(tc.files))
			}
			for i, p := range printed {
				if filepath.Base(p) != tc.files[i] {
					t.Errorf("file %d: %s, want %s", i, p, tc.files[i])
				}
				checkChart(t, p)
			}
		})
	}
}

// TestSimulatePlot checks simulate --plot, given after the scenario: the
// table is what simulate prints without it, stderr lists the chart files
// written, and they decode. With one device count the scaling charts are
// left out, with a note.
func TestSimulatePlot(t *testing.T) {
	plain, _, code := runSim("tsubame3-resnet50-caffe2-verbs")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, tc := range []struct {
		args  []string
		files []string
		note  string
	}{
		{[]string{"tsubame3-resnet50-caffe2-verbs", "--plot", "DIR"}, []string{"scaling", "efficiency", "breakdown", "timeline"}, ""},
		{[]string{"--devices", "32", "tsubame3-resnet50-caffe2-verbs", "--plot=DIR", "--format", "csv"}, []string{"breakdown", "timeline"},
			"simulate: one device count: no time-to-train or efficiency chart"},
	} {
		dir := t.TempDir()
		args := make([]string, len(tc.args))
		for i, a := range tc.args {
			args[i] = strings.ReplaceAll(a, "DIR", dir)
		}
		stdout, stderr, code := runSim(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if len(tc.files) == 4 && stdout != plain {
			t.Errorf("%v: the table differs from simulate's without --plot:\n%s", args, stdout)
		}
		if !strings.Contains(stderr, tc.note) {
			t.Errorf("%v: stderr lacks %q:\n%s", args, tc.note, stderr)
		}
		var want []string
		for _, f := range tc.files {
			want = append(want, "simulate: wrote "+filepath.Join(dir, f+".png"), "simulate: wrote "+filepath.Join(dir, f+".svg"))
		}
		var wrote []string
		for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
			if strings.HasPrefix(l, "simulate: wrote ") {
				wrote = append(wrote, l)
				checkChart(t, strings.TrimPrefix(l, "simulate: wrote "))
			}
		}
		if !slices.Equal(wrote, want) {
			t.Errorf("%v: stderr says\n%s\nwant\n%s", args, strings.Join(wrote, "\n"), strings.Join(want, "\n"))
		}
	}
}

// TestFitPlot checks fit --plot: the throughput and steps charts of the
// sample bench log, the tables unchanged.
func TestFitPlot(t *testing.T) {
	log := "testdata/fit/bench_resnet50.jsonl"
	plain, _, _ := runCLI("fit", log)
	dir := t.TempDir()
	stdout, stderr, code := runCLI("fit", log, "--plot", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != plain {
		t.Errorf("the tables differ from fit's without --plot")
	}
	var wrote []string
	for _, l := range strings.Split(stderr, "\n") {
		if p, ok := strings.CutPrefix(l, "fit: wrote "); ok {
			wrote = append(wrote, filepath.Base(p))
			checkChart(t, p)
		}
	}
	if len(wrote) < 4 || !slices.Contains(wrote, "steps.png") || !strings.HasPrefix(wrote[0], "throughput") {
		t.Errorf("wrote %q, want throughput and steps charts", wrote)
	}
}

// TestInterspersed checks that simulate takes its flags after the
// scenario as before it, shows its help for -h there, and keeps what
// follows "--" as arguments.
func TestInterspersed(t *testing.T) {
	before, _, c1 := runSim("--devices", "4", "--format", "csv", "tsubame3-resnet50-caffe2-verbs")
	after, _, c2 := runSim("tsubame3-resnet50-caffe2-verbs", "--devices", "4", "--format=csv")
	if c1 != 0 || c2 != 0 || before != after || !strings.HasPrefix(before, "devices,nodes") {
		t.Errorf("flags after the scenario: exit %d, %d; outputs\n%s\n%s", c1, c2, before, after)
	}
	help, _, code := runSim("tsubame3-resnet50-caffe2-verbs", "-h")
	if code != 0 || !strings.Contains(help, "--plot DIR") {
		t.Errorf("-h after the scenario: exit %d:\n%s", code, help)
	}
	_, stderr, code := runSim("tsubame3-resnet50-caffe2-verbs", "--", "--devices")
	if code != exitUsage || !strings.Contains(stderr, "simulate takes one SCENARIO") {
		t.Errorf(`after "--": exit %d, %s`, code, stderr)
	}
	_, stderr, code = runSim("tsubame3-resnet50-caffe2-verbs", "--steps", "x")
	if code != exitUsage || !strings.Contains(stderr, "simulate:") {
		t.Errorf("bad value after the scenario: exit %d, %s", code, stderr)
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

// TestREADMECharts runs the `go run . plot ... -o docs/img` commands the
// README gives for its charts, writing into a temporary directory instead,
// and compares each PNG they write with the committed docs/img file of the
// same name: same size, and at most 0.5 % of the pixels differ (an
// approximate comparison, so that a new version of the rasteriser does not
// fail it while a change of the data does). Every docs/img image the README
// shows must come from one of its commands.
func TestREADMECharts(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	made := map[string]string{} // docs/img/NAME.png → the file the command wrote
	for _, line := range strings.Split(string(readme), "\n") {
		cmd, ok := strings.CutPrefix(strings.TrimSpace(line), "go run . plot ")
		if !ok {
			continue
		}
		args := append([]string{"plot"}, strings.Fields(cmd)...)
		i := slices.Index(args, "-o")
		if i < 0 || i+1 >= len(args) || args[i+1] != "docs/img" {
			continue // a command of the tour, not one of the README's images
		}
		args[i+1] = tmp
		stdout, stderr, code := runCLI(args...)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", line, code, stderr)
		}
		for _, p := range strings.Fields(stdout) {
			if filepath.Ext(p) == ".png" {
				made["docs/img/"+filepath.Base(p)] = p
			}
		}
	}
	shown := regexp.MustCompile(`\]\((docs/img/[^)]+\.png)\)`).FindAllStringSubmatch(string(readme), -1)
	if len(shown) < 2 {
		t.Fatalf("the README shows %d charts, want 2 or more", len(shown))
	}
	for _, m := range shown {
		got, ok := made[m[1]]
		if !ok {
			t.Errorf("the README shows %s, which none of its plot commands writes", m[1])
			continue
		}
		want := decodePNG(t, filepath.Join(root, m[1]))
		img := decodePNG(t, got)
		if img.Bounds() != want.Bounds() {
			t.Errorf("%s: %v, regenerated %v", m[1], want.Bounds(), img.Bounds())
			continue
		}
		b := img.Bounds()
		diff := 0
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				r0, g0, b0, _ := img.At(x, y).RGBA()
				r1, g1, b1, _ := want.At(x, y).RGBA()
				if r0 != r1 || g0 != g1 || b0 != b1 {
					diff++
				}
			}
		}
		if frac := float64(diff) / float64(b.Dx()*b.Dy()); frac > 0.005 {
			t.Errorf("%s: %.2f %% of the pixels differ from the README's command's output (%s); regenerate it with the README's commands", m[1], 100*frac, got)
		}
	}
}

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

// TestPlotCalibration: plot --calibration computes a scenario by the
// file's law, as predict does. With the published figures one DGX H100
// runs its 8 × 400 images a step at v0 with t = 0, so the breakdown's
// compute is 3,200 / v0 seconds, where the roofline gives another figure;
// stderr says which law the chart used. The log kinds refuse the flag.
func TestPlotCalibration(t *testing.T) {
	const name = "dgx-h100-resnet50-mlperf-v3.0"
	cal, err := scenarios.ReadCalibrationFiles([]string{scenarios.Published})
	if err != nil {
		t.Fatal(err)
	}
	var v0, tfix float64
	for _, e := range cal[0].Cal.Throughput {
		if e.Device == "h100-sxm5-80gb" {
			v0, tfix = e.V0*8/float64(e.Devices), float64(e.T)
		}
	}
	if v0 == 0 {
		t.Fatal("no H100 entry in the published calibrations")
	}
	compute := func(calibrations ...string) float64 {
		t.Helper()
		rs, err := plotScenarios(scenarios.Options{}, &plotOptions{devices: "8", calibrations: calibrations}, chartBreakdown, []string{name})
		if err != nil {
			t.Fatal(err)
		}
		run, err := simulateSweep(rs[0], 0, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		return breakdownData(run).Bars[0].Parts[0]
	}
	if got, want := compute(scenarios.Published), 8*400/v0+tfix; !near(got, want, 1e-9) {
		t.Errorf("calibrated compute %v s, want 3200/v0 + t = %v s", got, want)
	}
	if got := compute(); near(got, 8*400/v0+tfix, 0.01) {
		t.Errorf("roofline compute %v s equals the calibrated one", got)
	}

	dir := t.TempDir()
	stdout, stderr, code := runCLI("plot", "breakdown", name, "--devices", "8", "--calibration", scenarios.Published, "-o", dir)
	if code != exitOK || len(strings.Fields(stdout)) != 2 {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	if want := "plot: " + name + ": compute: calibrated, v0 = 7563 samples/s on 1 device(s), t = 3.862 ms (published"; !strings.Contains(stderr, want) {
		t.Errorf("no %q in stderr:\n%s", want, stderr)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"plot", "breakdown", "ipu-pod16-efficientnet-b4", "--calibration", scenarios.Published, "-o", dir}, exitOK,
			"plot: ipu-pod16-efficientnet-b4: compute: roofline of gc200 at fp16"},
		{[]string{"plot", "breakdown", "ipu-pod16-efficientnet-b4", "--calibration", "testdata/calib-a100-resnet50.yaml", "-o", dir}, exitRuntime,
			"plot breakdown: calibration testdata/calib-a100-resnet50.yaml: no throughput entry applies to the scenario (it needs efficientnet-b4-g16 on gc200 at fp16"},
		{[]string{"plot", "scaling", name, "--calibration", "testdata/no-such-file.yaml", "-o", dir}, exitRuntime, "no-such-file.yaml"},
		{[]string{"plot", "throughput", "--calibration", scenarios.Published, "testdata/bench.jsonl"}, exitUsage,
			"plot throughput: --calibration is for the scenario kinds (scaling, efficiency, breakdown, timeline)"},
		// Flags of the other kinds would change nothing: refused.
		{[]string{"plot", "steps", "testdata/bench.jsonl", "--devices", "4"}, exitUsage,
			"plot steps: --devices is for the scenario kinds (scaling, efficiency, breakdown, timeline), not throughput, steps"},
		{[]string{"plot", "timeline", name, "--keep-outliers"}, exitUsage,
			"plot timeline: --keep-outliers is for the log kinds (throughput, steps), not scaling, efficiency, breakdown, timeline"},
		{[]string{"plot", "scaling", "--group-by", "framework", name}, exitUsage, "plot scaling: --group-by is for the log kinds"},
	} {
		_, stderr, code := runCLI(tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}
