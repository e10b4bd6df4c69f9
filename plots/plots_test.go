package plots

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"scaleplan/fit"
	"scaleplan/fit/logs"
	"scaleplan/internal/units"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// seed001 is seed 001's table: Caffe2 ResNet-50 time to 90 epochs on
// TSUBAME 3.0, seconds, at 1, 4, 32 and 128 GPUs.
var seed001 = []Curve{
	{Name: "default", X: []float64{1, 4, 32, 128}, Y: []float64{604987, 154931, 44862, 135905}},
	{Name: "staged", X: []float64{1, 4, 32, 128}, Y: []float64{593992, 88185, 21111, 10089}},
	{Name: "verbs", X: []float64{1, 4, 32, 128}, Y: []float64{608629, 152852, 21774, 5989}},
}

// scalingData is chart 3 and 4's test input: seed 001 as measured, and
// predictions at more device counts (made-up values of the same shape).
func scalingData() ScalingData {
	return ScalingData{
		Subject: "ResNet-50, 90 epochs, TSUBAME 3.0",
		Predicted: []Curve{
			{Name: "default", X: []float64{1, 2, 4, 8, 16, 32, 64, 128}, Y: []float64{600000, 310000, 160000, 95000, 60000, 45000, 70000, 130000}},
			{Name: "staged", X: []float64{1, 2, 4, 8, 16, 32, 64, 128}, Y: []float64{600000, 305000, 90000, 48000, 30000, 21000, 14000, 10500}},
			{Name: "verbs", X: []float64{128, 1, 2, 4, 8, 16, 32, 64}, Y: []float64{6100, 600000, 305000, 150000, 76000, 40000, 21500, 11500}},
		},
		Measured: seed001,
	}
}

func readReport(t testing.TB, names ...string) (*fit.Report, []*logs.Log) {
	t.Helper()
	var lgs []*logs.Log
	for _, n := range names {
		lg, err := logs.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		lgs = append(lgs, lg)
	}
	rep, err := fit.Fit(lgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rep, lgs
}

// gpipe returns the spans of one GPipe step on s stages with m
// micro-batches, forward tf and backward tb per micro-batch and stage, an
// all-reduce of ta per stage after its last backward and an input load of
// ti before each forward on the first stage:
//
//	forward (stage k, micro-batch j) starts at ti + (k+j)·tf
//	backward starts at ti + (m+s−1)·tf + (s−1−k+j)·tb
func gpipe(s, m int, tf, tb, ti, ta float64) []Span {
	var out []Span
	for k := 0; k < s; k++ {
		row := fmt.Sprintf("stage %d", k)
		for j := 0; j < m; j++ {
			if k == 0 {
				a := float64(j) * tf
				out = append(out, Span{Row: row, Kind: "input", Start: units.Seconds(a), End: units.Seconds(a + ti)})
			}
			f := ti + float64(k+j)*tf
			out = append(out, Span{Row: row, Kind: "forward", Start: units.Seconds(f), End: units.Seconds(f + tf)})
		}
		for j := 0; j < m; j++ {
			b := ti + float64(m+s-1)*tf + float64(s-1-k+j)*tb
			out = append(out, Span{Row: row, Kind: "backward", Start: units.Seconds(b), End: units.Seconds(b + tb)})
		}
		last := ti + float64(m+s-1)*tf + float64(s-1-k+m)*tb
		out = append(out, Span{Row: row, Kind: "all-reduce", Start: units.Seconds(last), End: units.Seconds(last + ta)})
	}
	return out
}

var paretoPoints = []PlanPoint{
	{Label: "8 × dgx1", Time: 5.2 * 3600, Cost: 330, Feasible: true},
	{Label: "16 × dgx1", Time: 2.9 * 3600, Cost: 370, Feasible: true},
	{Label: "32 × dgx1", Time: 1.7 * 3600, Cost: 430, Feasible: true, Chosen: true},
	{Label: "64 × dgx1", Time: 1.2 * 3600, Cost: 610, Feasible: true},
	{Label: "16 × dgx-a100", Time: 1.5 * 3600, Cost: 520, Feasible: true},
	{Label: "8 × dgx-a100", Time: 2.6 * 3600, Cost: 450, Feasible: true},
	{Label: "128 × dgx1", Time: 1.1 * 3600, Cost: 1100, Feasible: false},
	{Label: "4 × dgx1", Time: 10 * 3600, Cost: 320, Feasible: false},
}

var breakdownData = BreakdownData{
	Subject: "ResNet-50, 32 per GPU, staged",
	Bars: []Breakdown{
		{Label: "1", Parts: []float64{0.110, 0, 0.002, 0, 0}},
		{Label: "4", Parts: []float64{0.110, 0.004, 0.003, 0, 0.002}},
		{Label: "32", Parts: []float64{0.110, 0.021, 0.006, 0, 0.007}},
		{Label: "128", Parts: []float64{0.110, 0.048, 0.011, 0, 0.012}},
	},
}

// allCharts builds the seven charts from the test inputs.
func allCharts(t testing.TB) []*Chart {
	rep, lgs := readReport(t, "seed003.jsonl", "steps.csv")
	td := ThroughputFromReport(rep, lgs)
	sd := StepsFromReport(rep)
	if len(td) != 1 || len(sd) != 1 {
		t.Fatalf("%d throughput and %d steps data sets, want 1 and 1", len(td), len(sd))
	}
	build := []func() (*Chart, error){
		func() (*Chart, error) { return Throughput(td[0]) },
		func() (*Chart, error) { return Steps(sd[0]) },
		func() (*Chart, error) { return TimeToTrain(scalingData()) },
		func() (*Chart, error) { return Efficiency(scalingData()) },
		func() (*Chart, error) { return StepBreakdown(breakdownData) },
		func() (*Chart, error) {
			return Timeline(TimelineData{Subject: "GPipe, 4 stages, 6 micro-batches", Spans: gpipe(4, 6, 0.010, 0.020, 0.004, 0.015)})
		},
		func() (*Chart, error) {
			return Pareto(ParetoData{Subject: "ResNet-50 to 75.9 %", CostUnit: "USD", Points: paretoPoints})
		},
	}
	var out []*Chart
	for _, b := range build {
		c, err := b()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// TestCharts compares every chart's data with testdata/KIND.golden
// (-update rewrites them) and checks that its PNG and SVG files are
// written and decode.
func TestCharts(t *testing.T) {
	dir := t.TempDir()
	for _, c := range allCharts(t) {
		t.Run(c.Kind, func(t *testing.T) {
			checkGolden(t, c.Kind+".golden", c.Text())
			paths, err := WriteAll(dir, c.Kind, c.Plot)
			if err != nil {
				t.Fatal(err)
			}
			if len(paths) != 2 || filepath.Ext(paths[0]) != ".png" || filepath.Ext(paths[1]) != ".svg" {
				t.Fatalf("WriteAll wrote %v, want KIND.png and KIND.svg", paths)
			}
			checkPNG(t, paths[0])
			checkSVG(t, paths[1], c.Plot.Title.Text)
			left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
			if len(left) > 0 {
				t.Errorf("temporary files left behind: %v", left)
			}
		})
	}
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("data differs from %s (go test -update rewrites it):\n--- got\n%s", path, got)
	}
}

// checkPNG decodes the file and checks it is 800 × 600 pixels with more
// than a handful of colours (something was drawn).
func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() != 800 || b.Dy() != 600 {
		t.Errorf("%s: %d × %d pixels, want 800 × 600", path, b.Dx(), b.Dy())
	}
	if n := colours(img); n < 8 {
		t.Errorf("%s: %d colours: nothing drawn?", path, n)
	}
}

func colours(img image.Image) int {
	seen := map[color.RGBA]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			seen[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)] = true
		}
	}
	return len(seen)
}

// checkSVG parses the file as XML and checks that its text holds title.
func checkSVG(t *testing.T, path, title string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	var texts []string
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: not XML: %v", path, err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tk.Name.Local
			}
		case xml.CharData:
			texts = append(texts, string(tk))
		}
	}
	if root != "svg" {
		t.Errorf("%s: root element %q, want svg", path, root)
	}
	if !strings.Contains(strings.Join(texts, "\n"), title) {
		t.Errorf("%s: no text %q", path, title)
	}
}

// TestThroughputPoints checks chart 1's points against the log: repeats
// become their mean and sample standard deviation, a single record gets
// v·σ_τ/τ, and the fitted line is b/(b/v0 + t) with the fit's v0 and t.
func TestThroughputPoints(t *testing.T) {
	rep, lgs := readReport(t, "seed003.jsonl")
	td := ThroughputFromReport(rep, lgs)
	if len(td) != 1 || len(td[0].Groups) != 2 {
		t.Fatalf("got %d data sets, want 1 with 2 groups", len(td))
	}
	if got, want := td[0].Subject, "resnet50 GTX1080Ti fp32"; got != want {
		t.Errorf("subject %q, want %q", got, want)
	}
	one, two := td[0].Groups[0], td[0].Groups[1]
	if one.Name != "1 device" || two.Name != "2 devices" {
		t.Errorf("names %q, %q", one.Name, two.Name)
	}
	// Line 2 of the log: batch 8, 94.88 samples/s, step 0.084321 ± 0.001012 s.
	p := one.Points[0]
	if want := 94.88 * 0.001012 / 0.084321; p.Batch != 8 || math.Abs(p.Std-want) > 1e-9 || p.Repeats != 1 {
		t.Errorf("1 device, batch 8: %+v, want std %g", p, want)
	}
	// 2 devices, batch 16: three records.
	var v []float64
	for _, lg := range lgs {
		for _, r := range lg.Records {
			if r.Workers == 2 && r.EffectiveGlobalBatch() == 16 && r.Kind == "measurement" {
				v = append(v, r.SamplesPerSec)
			}
		}
	}
	m := (v[0] + v[1] + v[2]) / 3
	s := math.Sqrt(((v[0]-m)*(v[0]-m) + (v[1]-m)*(v[1]-m) + (v[2]-m)*(v[2]-m)) / 2)
	q := two.Points[0]
	if q.Batch != 16 || q.Repeats != 3 || math.Abs(q.Throughput-m) > 1e-9 || math.Abs(q.Std-s) > 1e-9 {
		t.Errorf("2 devices, batch 16: %+v, want mean %g std %g over 3", q, m, s)
	}
	if len(two.OOM) != 1 || two.OOM[0] != 512 {
		t.Errorf("2 devices OOM %v, want [512]", two.OOM)
	}
	c, err := Throughput(td[0])
	if err != nil {
		t.Fatal(err)
	}
	f := two.Fit
	for _, se := range c.Series {
		if se.Name != "2 devices fit" {
			continue
		}
		for _, r := range se.Rows {
			if want := r[0] / (r[0]/f.V0 + float64(f.T)); math.Abs(r[1]-want) > 1e-9*want {
				t.Errorf("fit line at b = %g: %g, want %g", r[0], r[1], want)
			}
		}
	}
	excluded := false
	for _, q := range two.Points {
		excluded = excluded || q.Excluded && q.Batch == 256
	}
	if !excluded {
		t.Errorf("the 22 %% drop at batch 256 is not excluded: %+v", two.Points)
	}
}

// TestThroughputPredicted: a group's Predicted points are drawn as their
// own series, sorted by batch, with the legend the data names, and the
// throughput axis reaches the highest of them.
func TestThroughputPredicted(t *testing.T) {
	d := ThroughputData{Subject: "resnet50 h200 amp-fp16", PredictedLabel: "predicted from the catalogue",
		Groups: []ThroughputGroup{{Name: "1 device",
			Points:    []ThroughputPoint{{Batch: 8, Throughput: 367}, {Batch: 2048, Throughput: 3088}},
			Predicted: []ThroughputPoint{{Batch: 2048, Throughput: 14105}, {Batch: 8, Throughput: 11883}}}}}
	c, err := Throughput(d)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]float64
	for _, se := range c.Series {
		if se.Name == "1 device predicted" {
			rows = se.Rows
		}
	}
	if len(rows) != 2 || rows[0][0] != 8 || rows[0][1] != 11883 || rows[1][0] != 2048 || rows[1][1] != 14105 {
		t.Errorf("predicted series %v, want (8, 11883), (2048, 14105)", rows)
	}
	if c.Plot.Y.Max < 14105 {
		t.Errorf("throughput axis ends at %v, below the prediction 14105", c.Plot.Y.Max)
	}
	dir := t.TempDir()
	if _, err := WriteAll(dir, "predicted", c.Plot); err != nil {
		t.Fatal(err)
	}
	checkSVG(t, filepath.Join(dir, "predicted.svg"), "predicted from the catalogue")
}

// TestStepsRegimes checks chart 2's bands against fit's thresholds: perfect
// scaling up to 0.2·B_noise, maximal data parallelism from 5·B_noise, and
// that the perfect-scaling line is S_min·B_noise/B.
func TestStepsRegimes(t *testing.T) {
	rep, _ := readReport(t, "steps.csv")
	sd := StepsFromReport(rep)
	c, err := Steps(sd[0])
	if err != nil {
		t.Fatal(err)
	}
	f := sd[0].Fit
	bands := map[string][]float64{}
	for _, s := range c.Series {
		switch s.Style {
		case "band":
			bands[s.Name] = s.Rows[0]
		}
		if s.Name == "perfect-scaling line" {
			for _, r := range s.Rows {
				if want := f.SMin * f.BNoise / r[0]; math.Abs(r[1]-want) > 1e-9*want {
					t.Errorf("perfect-scaling line at %g: %g, want %g", r[0], r[1], want)
				}
			}
		}
	}
	tol := fit.RegimeTolerance
	for name, want := range map[string][2]float64{
		"perfect scaling":          {c.Plot.X.Min, tol * f.BNoise},
		"diminishing returns":      {tol * f.BNoise, f.BNoise / tol},
		"maximal data parallelism": {f.BNoise / tol, c.Plot.X.Max},
	} {
		got := bands[name]
		if len(got) != 2 || math.Abs(got[0]-want[0]) > 1e-9*want[0] || math.Abs(got[1]-want[1]) > 1e-9*want[1] {
			t.Errorf("band %q = %v, want %v", name, got, want)
		}
	}
	// The S_min = 3000, B_noise = 2048 the data was made from, within the
	// 2 % noise.
	if math.Abs(f.SMin-3000) > 0.05*3000 || math.Abs(f.BNoise-2048) > 0.1*2048 {
		t.Errorf("S_min %g, B_noise %g; want about 3000 and 2048", f.SMin, f.BNoise)
	}
	for _, s := range c.Series {
		if s.Name == "not reached" && (len(s.Rows) != 1 || s.Rows[0][0] != 65536 || s.Rows[0][1] != 6000) {
			t.Errorf("not reached: %v, want [[65536 6000]]", s.Rows)
		}
	}
}

// TestEfficiencySeed001 checks chart 4 on seed 001's published times: (c)
// at 128 GPUs is 608629 / (5989·128) = 79.4 % efficient, (a) 3.48 %.
func TestEfficiencySeed001(t *testing.T) {
	c, err := Efficiency(ScalingData{Measured: seed001})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"default (measured)": 100 * 604987 / (135905 * 128.0), "verbs (measured)": 100 * 608629 / (5989 * 128.0)}
	for _, s := range c.Series {
		if w, ok := want[s.Name]; ok {
			if got := s.Rows[3][1]; math.Abs(got-w) > 1e-9 {
				t.Errorf("%s at 128: %g %%, want %g %%", s.Name, got, w)
			}
			delete(want, s.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("missing series %v", want)
	}
	if got := 100 * 608629 / (5989 * 128.0); math.Abs(got-79.4) > 0.05 {
		t.Errorf("reference %g", got)
	}
}

// TestTimeToTrainIdeal checks the ideal line T(n0)·n0/n from the first
// predicted curve, in hours.
func TestTimeToTrainIdeal(t *testing.T) {
	c, err := TimeToTrain(scalingData())
	if err != nil {
		t.Fatal(err)
	}
	if c.Plot.Y.Label.Text != "time to train (h)" {
		t.Errorf("y label %q", c.Plot.Y.Label.Text)
	}
	for _, s := range c.Series {
		if s.Name != "ideal" {
			continue
		}
		for _, r := range s.Rows {
			if want := 600000 / r[0] / 3600; math.Abs(r[1]-want) > 1e-9*want {
				t.Errorf("ideal at %g: %g h, want %g h", r[0], r[1], want)
			}
		}
		return
	}
	t.Error("no ideal line")
}

// TestParetoFront checks the front against a brute-force dominance test:
// a feasible point is on it when no other feasible point is at least as
// fast and as cheap and better in one.
func TestParetoFront(t *testing.T) {
	c, err := Pareto(ParetoData{CostUnit: "USD", Points: paretoPoints})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, p := range paretoPoints {
		if !p.Feasible {
			continue
		}
		dominated := false
		for _, q := range paretoPoints {
			if q.Feasible && q.Time <= p.Time && q.Cost <= p.Cost && (q.Time < p.Time || q.Cost < p.Cost) {
				dominated = true
			}
		}
		if !dominated {
			want[p.Label] = true
		}
	}
	for _, s := range c.Series {
		if s.Name != "Pareto front" {
			continue
		}
		if len(s.Labels) != len(want) {
			t.Errorf("front %v, want %v", s.Labels, want)
		}
		for _, l := range s.Labels {
			if !want[l] {
				t.Errorf("%q is on the front, but dominated", l)
			}
		}
		return
	}
	t.Error("no front")
}

// TestBreakdownTotals checks the labels above the bars against the sums of
// the parts, in ms.
func TestBreakdownTotals(t *testing.T) {
	c, err := StepBreakdown(breakdownData)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range c.Series {
		if s.Name != "step time" {
			continue
		}
		for i, b := range breakdownData.Bars {
			sum := 0.0
			for _, v := range b.Parts {
				sum += v
			}
			if got := s.Rows[i][1]; math.Abs(got-1000*sum) > 1e-9 {
				t.Errorf("bar %s: %g ms, want %g ms", b.Label, got, 1000*sum)
			}
		}
		return
	}
	t.Error("no totals")
}

// TestBreakdownShares: when the input wait comes to dominate (the longest
// step 100 times the shortest), each bar shows the shares of its own step,
// which add up to 100 %, the step times above them keep their length, and
// the axis says so; below ShareRatio the bars keep their times.
func TestBreakdownShares(t *testing.T) {
	d := BreakdownData{Bars: []Breakdown{
		{Label: "1", Parts: []float64{0.1, 0, 0, 0, 0}},
		{Label: "64", Parts: []float64{0.1, 0.002, 0.898, 0, 0}},
		{Label: "512", Parts: []float64{0.1, 0.003, 9.897, 0, 0}},
	}}
	c, err := StepBreakdown(d)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Plot.Y.Label.Text; got != "share of the step (%)" {
		t.Errorf("y label %q", got)
	}
	sums := make([]float64, len(d.Bars))
	for _, s := range c.Series {
		switch {
		case s.Style == "bars":
			for i, r := range s.Rows {
				sums[i] += r[1]
			}
			if s.Name == "compute" && math.Abs(s.Rows[2][1]-1) > 1e-9 {
				t.Errorf("compute at 512: %g%%, want 0.1 s of 10 s = 1%%", s.Rows[2][1])
			}
		case s.Name == "step time":
			for i, want := range []string{"0.1 s", "1 s", "10 s"} {
				if s.Labels[i] != want {
					t.Errorf("bar %d labelled %q, want %q", i, s.Labels[i], want)
				}
			}
		}
	}
	for i, sum := range sums {
		if math.Abs(sum-100) > 1e-9 {
			t.Errorf("bar %s: shares add up to %g%%", d.Bars[i].Label, sum)
		}
	}
	c, err = StepBreakdown(breakdownData) // 112 to 191 ms
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Plot.Y.Label.Text; got != "time per step (ms)" {
		t.Errorf("y label %q for steps within ShareRatio of each other", got)
	}
}

// TestTimelineLanes checks that a row's kinds share its height without
// overlap and that the spans keep their times.
func TestTimelineLanes(t *testing.T) {
	spans := gpipe(2, 2, 0.010, 0.020, 0.004, 0.015)
	c, err := Timeline(TimelineData{Spans: spans})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range c.Series {
		n += len(s.Rows)
		for i, r := range s.Rows {
			if r[1] < r[0] {
				t.Errorf("%s span %d (%s): %v", s.Name, i, s.Labels[i], r)
			}
		}
	}
	if n != len(spans) {
		t.Errorf("%d spans drawn, want %d", n, len(spans))
	}
	// Stage 0 does input, forward, backward and all-reduce: four lanes of
	// 0.2 each from y = 1.4 down; stage 1 three lanes from 0.4.
	lanes := map[[2]float64]bool{}
	for _, s := range c.Series {
		for _, r := range s.Rows {
			lanes[[2]float64{math.Round(r[2]*1e9) / 1e9, math.Round(r[3]*1e9) / 1e9}] = true
		}
	}
	for _, l := range [][2]float64{{1.2, 1.4}, {1, 1.2}, {0.8, 1}, {0.6, 0.8}, {0.4 - 0.8/3, 0.4}, {0.4 - 1.6/3, 0.4 - 0.8/3}, {-0.4, 0.4 - 1.6/3}} {
		k := [2]float64{math.Round(l[0]*1e9) / 1e9, math.Round(l[1]*1e9) / 1e9}
		if !lanes[k] {
			t.Errorf("no lane %v in %v", l, lanes)
		}
	}
	if len(lanes) != 7 {
		t.Errorf("%d lanes, want 7", len(lanes))
	}
}

func TestBadInput(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name string
		f    func() (*Chart, error)
		want string
		base error
	}{
		{"throughput empty", func() (*Chart, error) { return Throughput(ThroughputData{}) }, "no measured point", ErrNoData},
		{"throughput nan", func() (*Chart, error) {
			return Throughput(ThroughputData{Groups: []ThroughputGroup{{Name: "g", Points: []ThroughputPoint{{Batch: 8, Throughput: nan}}}}})
		}, `group "g" point 1: batch 8, throughput NaN`, nil},
		{"throughput oom", func() (*Chart, error) {
			return Throughput(ThroughputData{Groups: []ThroughputGroup{{Name: "g", Points: []ThroughputPoint{{Batch: 8, Throughput: 1}}, OOM: []float64{-1}}}})
		}, "out-of-memory batch -1", nil},
		{"throughput predicted", func() (*Chart, error) {
			return Throughput(ThroughputData{Groups: []ThroughputGroup{{Name: "g", Points: []ThroughputPoint{{Batch: 8, Throughput: 1}},
				Predicted: []ThroughputPoint{{Batch: 8, Throughput: 0}}}}})
		}, `group "g" predicted point 1: batch 8, throughput 0`, nil},
		{"steps empty", func() (*Chart, error) { return Steps(StepsData{}) }, "no run", ErrNoData},
		{"steps zero", func() (*Chart, error) { return Steps(StepsData{Points: []StepsPoint{{Batch: 0, Steps: 10}}}) }, "point 1: batch 0, steps 10", nil},
		{"time empty", func() (*Chart, error) { return TimeToTrain(ScalingData{}) }, "nothing to plot", ErrNoData},
		{"time empty curve", func() (*Chart, error) { return TimeToTrain(ScalingData{Predicted: []Curve{{Name: "a"}}}) }, `curve "a": no points`, nil},
		{"time inf", func() (*Chart, error) {
			return TimeToTrain(ScalingData{Measured: []Curve{{Name: "a", X: []float64{1}, Y: []float64{math.Inf(1)}}}})
		}, `curve "a" point 1: devices 1, time +Inf s`, nil},
		{"efficiency zero devices", func() (*Chart, error) {
			return Efficiency(ScalingData{Predicted: []Curve{{Name: "a", X: []float64{0}, Y: []float64{1}}}})
		}, `curve "a" point 1: devices 0`, nil},
		{"breakdown empty", func() (*Chart, error) { return StepBreakdown(BreakdownData{}) }, "no bar", ErrNoData},
		{"breakdown negative", func() (*Chart, error) {
			return StepBreakdown(BreakdownData{Parts: []string{"a", "b"}, Bars: []Breakdown{{Label: "4", Parts: []float64{1, -1}}}})
		}, `bar "4": b -1 s`, nil},
		{"timeline empty", func() (*Chart, error) { return Timeline(TimelineData{}) }, "no span", ErrNoData},
		{"timeline backwards", func() (*Chart, error) {
			return Timeline(TimelineData{Spans: []Span{{Row: "gpu 0", Kind: "compute", Start: 2, End: 1}}})
		}, "span 1 (gpu 0, compute): from 2 s to 1 s", nil},
		{"pareto empty", func() (*Chart, error) { return Pareto(ParetoData{}) }, "no configuration", ErrNoData},
		{"pareto negative cost", func() (*Chart, error) {
			return Pareto(ParetoData{Points: []PlanPoint{{Label: "x", Time: 1, Cost: -3}}})
		}, "point 1 (x): time 1 s, cost -3", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tc.f()
			if err == nil || c != nil {
				t.Fatalf("got %v, %v; want an error", c, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
			if tc.base != nil && !errors.Is(err, tc.base) {
				t.Errorf("error %q does not wrap %v", err, tc.base)
			}
		})
	}
}

func TestPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"curve lengths":  func() { TimeToTrain(ScalingData{Predicted: []Curve{{X: []float64{1, 2}, Y: []float64{1}}}}) },
		"breakdown part": func() { StepBreakdown(BreakdownData{Bars: []Breakdown{{Parts: []float64{1}}}}) },
	} {
		func() {
			defer func() {
				if r := recover(); r != badLength {
					t.Errorf("%s: recovered %v, want %q", name, r, badLength)
				}
			}()
			f()
		}()
	}
}

// TestSingularInputs draws what is legal but degenerate: a single point,
// zero times, a fit without points beyond it. None may panic.
func TestSingularInputs(t *testing.T) {
	dir := t.TempDir()
	for name, f := range map[string]func() (*Chart, error){
		"one throughput point": func() (*Chart, error) {
			return Throughput(ThroughputData{Groups: []ThroughputGroup{{Name: "g", Points: []ThroughputPoint{{Batch: 8, Throughput: 100}}}}})
		},
		"one steps point, bound fit": func() (*Chart, error) {
			return Steps(StepsData{Points: []StepsPoint{{Batch: 64, Steps: 100, Reached: true}}, Fit: &fit.StepsFit{SMin: 100}})
		},
		"one device count": func() (*Chart, error) {
			return TimeToTrain(ScalingData{Predicted: []Curve{{Name: "a", X: []float64{4}, Y: []float64{10}}}})
		},
		"one efficiency point": func() (*Chart, error) {
			return Efficiency(ScalingData{Measured: []Curve{{Name: "a", X: []float64{4}, Y: []float64{10}}}})
		},
		"zero breakdown": func() (*Chart, error) {
			return StepBreakdown(BreakdownData{Bars: []Breakdown{{Label: "1", Parts: make([]float64, 5)}}})
		},
		"zero-length span": func() (*Chart, error) {
			return Timeline(TimelineData{Spans: []Span{{Row: "gpu 0", Kind: "compute"}}})
		},
		"extreme range": func() (*Chart, error) {
			return TimeToTrain(ScalingData{Predicted: []Curve{{Name: "a", X: []float64{1e-300, 1e300}, Y: []float64{1e300, 1e-300}}}})
		},
		"extreme steps": func() (*Chart, error) {
			return Steps(StepsData{Points: []StepsPoint{{Batch: 1e-300, Steps: 1e300, Reached: true}, {Batch: 1e300, Steps: 1e-300}},
				Fit: &fit.StepsFit{SMin: 1e-300, BNoise: 1e300}})
		},
		"one plan, zero cost": func() (*Chart, error) {
			return Pareto(ParetoData{Points: []PlanPoint{{Label: "x", Time: 10, Cost: 0, Feasible: true, Chosen: true}}})
		},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := f()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := WriteAll(dir, "x", c.Plot); err != nil {
				t.Fatal(err)
			}
			c.Text()
		})
	}
}

func TestSaveExtension(t *testing.T) {
	c, err := Efficiency(ScalingData{Measured: seed001})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := Save(c.Plot, filepath.Join(dir, "x.PNG"), Width, Height); err != nil {
		t.Errorf("upper-case extension: %v", err)
	}
	err = Save(c.Plot, filepath.Join(dir, "x.gif"), Width, Height)
	if err == nil || !strings.Contains(err.Error(), `unsupported extension ".gif"`) {
		t.Errorf("gif: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.gif")); err == nil {
		t.Error("x.gif written")
	}
	if _, err := WriteAll(filepath.Join(dir, "no-such-dir"), "x", c.Plot); err == nil {
		t.Error("WriteAll into a missing directory succeeded")
	}
}

func TestTicks(t *testing.T) {
	labels := func(ts []plot.Tick) string {
		var out []string
		for _, t := range ts {
			if t.Label != "" {
				out = append(out, t.Label)
			}
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		name   string
		got    []plot.Tick
		labels string
	}{
		{"pow2 1-128", pow2Ticks{}.Ticks(0.9, 140), "1 2 4 8 16 32 64 128"},
		{"pow2 wide", pow2Ticks{}.Ticks(1, 1<<20), "1 4 16 64 256 1024 4096 16384 65536 262144 1048576"},
		{"pow2 wider", pow2Ticks{}.Ticks(1, 1<<30), "1 8 64 512 4096 32768 262144 2097152 1.68e+07 1.34e+08 1.07e+09"},
		{"pow2 narrow", pow2Ticks{}.Ticks(5, 7), "5 6 7"},
		{"log 1-2-5", logTicks{}.Ticks(1.5, 170), "2 5 10 20 50 100"},
		{"log decades", logTicks{}.Ticks(0.01, 1e6), "0.01 0.1 1 10 100 1000 10000 100000 1000000"},
		{"log many decades", logTicks{}.Ticks(1e-3, 1e12), "0.01 1 100 10000 1000000 1e+08 1e+10 1e+12"},
		{"lin dust", linTicks{}.Ticks(0, 0.35), "0 0.05 0.1 0.15 0.2 0.25 0.3 0.35"}, {"lin 0.6", linTicks{}.Ticks(0.1, 0.7), "0.1 0.2 0.3 0.4 0.5 0.6 0.7"}, {"lin 566", linTicks{}.Ticks(0, 566), "0 100 200 300 400 500"}, {"lin 183", linTicks{}.Ticks(0, 183), "0 25 50 75 100 125 150 175"},
		// Two values a float64 step apart (a Pareto chart's two plans of 1 s
		// and 1 s + 2⁻⁵², found by FuzzCharts): a step between them would
		// not advance the loop's index, so one tick at their middle.
		{"lin unresolved", linTicks{}.Ticks(1, 1.0000000000000002), "1"},
	} {
		if got := labels(tc.got); got != tc.labels {
			t.Errorf("%s: labels %q, want %q", tc.name, got, tc.labels)
		}
	}
}

// TestSlug: a chart's subject becomes a file-name part of letters, digits, '.' and '-', whatever it holds.
func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"resnet50 GTX1080Ti fp32":          "resnet50-gtx1080ti-fp32",
		"resnet50 to 0.759 optimizer=lars": "resnet50-to-0.759-optimizer-lars",
		"? ×2 /etc/passwd":                 "2-etc-passwd",
		"":                                 "",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSetRangeUnresolved: a linear axis over two values closer than
// float64 can cut into ticks gets the margin two equal values get, a
// tenth of the value and at least 1 either way.
func TestSetRangeUnresolved(t *testing.T) {
	for _, c := range []struct{ lo, hi float64 }{{1, 1}, {1, 1.0000000000000002}, {40, 40}, {40, 40.00000000000001}} {
		var a plot.Axis
		setRange(&a, c.lo, c.hi, 0.06)
		d := math.Max(0.1*c.hi, 1)
		if math.Abs(a.Min-(c.lo-d)) > 1e-12 || math.Abs(a.Max-(c.hi+d)) > 1e-12 {
			t.Errorf("%v to %v: axis %v to %v, want %v to %v", c.lo, c.hi, a.Min, a.Max, c.lo-d, c.hi+d)
		}
	}
}
