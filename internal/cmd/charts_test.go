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

	"scaleplan/report"
	"scaleplan/scenarios"
)

var tsubame = []string{"tsubame3-resnet50-caffe2-default", "tsubame3-resnet50-caffe2-staged", "tsubame3-resnet50-caffe2-verbs"}

func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
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
		rs, err := plotScenarios(scenarios.Options{}, &plotOptions{devices: "8", calibrations: calibrations}, report.Breakdown, []string{name})
		if err != nil {
			t.Fatal(err)
		}
		run, err := report.Simulate(rs[0], 0, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		return report.BreakdownData(run).Bars[0].Parts[0]
	}
	if got, want := compute(scenarios.Published), 8*400/v0+tfix; !near(got, want, 1e-9) {
		t.Errorf("calibrated compute %v s, want 3200/v0 + t = %v s", got, want)
	}
	// Uncalibrated, the operator model computes it (package compute): not
	// the calibration's figure, though within 1 % of it on this case.
	if got := compute(); got == 8*400/v0+tfix || !near(got, 8*400/v0+tfix, 0.2) {
		t.Errorf("uncalibrated compute %v s: want the operator model's, near but not equal to the calibrated %v s", got, 8*400/v0+tfix)
	}

	dir := t.TempDir()
	stdout, stderr, code := runCLI("plot", "breakdown", name, "--devices", "8", "--calibration", scenarios.Published, "-o", dir)
	if code != exitOK || len(strings.Fields(stdout)) != 2 {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	if want := "plot: " + name + ": compute: calibrated, v0 = 7510 samples/s on 1 device(s), t = 3.575 ms (published"; !strings.Contains(stderr, want) {
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
			"plot breakdown: calibration testdata/calib-a100-resnet50.yaml: no throughput, comm, fabric or operators entry applies to the scenario (it needs efficientnet-b4-g16 on gc200 at fp16 on system ipu-pod16"},
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
