package fit

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"scaleplan/fit/logs"
	"strconv"
	"strings"
	"testing"

	"scaleplan/internal/benchlog"
	"scaleplan/internal/calib"
)

func readLogs(t *testing.T, files ...string) []*logs.Log {
	t.Helper()
	var lgs []*logs.Log
	for _, f := range files {
		lg, err := logs.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		lgs = append(lgs, lg)
	}
	return lgs
}

// measuredLogs reads the n logs that pattern, under testdata/measurements,
// matches.
func measuredLogs(t *testing.T, pattern string, n int) []*logs.Log {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("../testdata/measurements", pattern))
	if err != nil || len(files) != n {
		t.Fatalf("logs %s: %v (%v): want %d", pattern, files, err, n)
	}
	lgs := make([]*logs.Log, len(files))
	for i, f := range files {
		if lgs[i], err = logs.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
	return lgs
}

func findGroup(t *testing.T, rep *Report, key string) Group {
	t.Helper()
	var keys []string
	for _, g := range rep.Groups {
		if g.Key.String() == key {
			return g
		}
		keys = append(keys, g.Key.String())
	}
	t.Fatalf("no group %q; have %q", key, keys)
	return Group{}
}

// TestFitBenchlog fits the sample bench log: seed 003's curves on one and
// two V100s with 1 % noise, a 20 % drop at the largest two-GPU batch, an
// out-of-memory record and step records beside the measurements, and a
// steps-to-target sweep of S = 400·(1 + 512/B) with 2 % noise.
func TestFitBenchlog(t *testing.T) {
	rep, err := Fit(readLogs(t, "bench_resnet50.jsonl"), &Options{GradientSize: resnet50Gradient})
	if err != nil {
		t.Fatal(err)
	}
	one := findGroup(t, rep, "resnet50 V100 ×1 fp32")
	if one.Ignored != 3 || len(one.Points) != 6 || len(one.OOM) != 1 || one.OOM[0] != 512 {
		t.Errorf("1 GPU: %d ignored steps, %d points, OOM %v; want 3, 6, [512]", one.Ignored, len(one.Points), one.OOM)
	}
	two := findGroup(t, rep, "resnet50 V100 ×2 fp32")
	for _, g := range []struct {
		g     Group
		v0, t float64
	}{{one, 258.1, 0.054}, {two, 513.8, 0.15}} {
		f := g.g.Fit
		if f == nil {
			t.Fatalf("%v: %v", g.g.Key, g.g.Err)
		}
		if math.Abs(f.V0/g.v0-1) > 0.03 || math.Abs(float64(f.T)/g.t-1) > 0.05 {
			t.Errorf("%v: v0 %v, t %v; want within 3%% and 5%% of %v, %v", g.g.Key, f.V0, float64(f.T), g.v0, g.t)
		}
	}
	for _, p := range two.Points {
		if p.Excluded != (p.Batch == 512) {
			t.Errorf("2 GPUs, batch %d: excluded %v (residual %.3f, z %.1f)", p.Batch, p.Excluded, p.Residual, p.Z)
		}
	}
	if len(rep.Comm) != 1 {
		t.Fatalf("%d communication fits, want 1", len(rep.Comm))
	}
	c := rep.Comm[0].Fit
	if math.Abs(float64(c.TComm)/0.096-1) > 0.05 || c.Bandwidth <= 0 {
		t.Errorf("t_comm %v, bandwidth %v; want within 5%% of 0.096 s", float64(c.TComm), c.Bandwidth)
	}
	if len(rep.Steps) != 1 {
		t.Fatalf("%d steps groups, want 1", len(rep.Steps))
	}
	sg := rep.Steps[0]
	if sg.Fit == nil || math.Abs(sg.Fit.SMin/400-1) > 0.05 || math.Abs(sg.Fit.BNoise/512-1) > 0.1 {
		t.Fatalf("steps: %+v, %v; want S_min ≈ 400, B_noise ≈ 512", sg.Fit, sg.Err)
	}
	last := sg.Points[len(sg.Points)-1]
	if last.Reached || last.Batch != 16384 || last.Regime != MaximalDataParallelism || sg.MaxReached != 8192 || sg.Fit.Used != 10 {
		t.Errorf("unreached point %+v, max reached %d, %d points fitted; want 16384 kept, not reached, 8192, 10", last, sg.MaxReached, sg.Fit.Used)
	}
}

// Workers that exchanged nothing (transport "none", the calibration of
// validate --engine: one round of it and of two exchanging workers) are
// not mixed with workers that did.
func TestFitIndependentWorkers(t *testing.T) {
	rep, err := Fit(readLogs(t, "bench_independent.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, g := range rep.Groups {
		keys = append(keys, g.Key.String())
		if len(g.Points) != 6 {
			t.Errorf("%v: %d points, want 6", g.Key, len(g.Points))
		}
	}
	want := "mlp localhost ×2 fp32|mlp localhost ×2 fp32 transport=none"
	if got := strings.Join(keys, "|"); got != want {
		t.Errorf("groups %q, want %q", got, want)
	}
}

// Independent workers kept in step over a transport (label in_step) are
// a group apart from those that ran on as they would: four of each, of
// exactly v = b/(b/v0 + t) with v0 = 4,000 samples/s and t = 2 and 5 ms.
func TestFitInStepWorkers(t *testing.T) {
	lgs := exactLog("four.jsonl", 4, []exactLaw{{transport: "none", t: 2e-3}, {transport: "none", labels: map[string]string{benchlog.InStep: "tcp"}, t: 5e-3}})
	rep, err := Fit(lgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkExactGroups(t, rep, 0, []exactGroup{{"mlp localhost ×4 fp32 in_step=tcp transport=none", 5e-3}, {"mlp localhost ×4 fp32 transport=none", 2e-3}})
}

// exactLaw is the transport, labels and t of the records of exactLog.
type exactLaw struct {
	transport string
	labels    map[string]string
	t         float64
}

// exactLog returns a log, name, of w workers' measurements at per-worker
// batches 16, 64 and 256 that follow v = B/(B/v0 + t) exactly for each of
// laws, B = w·b the global batch and v0 = 4,000 samples/s.
func exactLog(name string, w int, laws []exactLaw) []*logs.Log {
	var recs []benchlog.Record
	var lines []int
	for _, c := range laws {
		for _, b := range []int{16, 64, 256} {
			step := float64(w*b)/4000 + c.t
			recs = append(recs, benchlog.Record{Kind: benchlog.KindMeasurement, Model: "mlp", Device: "localhost", Precision: "fp32", Labels: c.labels,
				Transport: c.transport, Workers: w, Batch: b, GlobalBatch: w * b, StepTime: step, SamplesPerSec: float64(w*b) / step})
			lines = append(lines, len(lines)+1)
		}
	}
	return []*logs.Log{{Name: name, Records: recs, Lines: lines}}
}

// exactGroup is a group checkExactGroups wants: its key and t.
type exactGroup struct {
	key string
	t   float64
}

// checkExactGroups checks that rep has the groups of want, in order, with
// their t within 1e-6, and v0 where v0 is not 0.
func checkExactGroups(t *testing.T, rep *Report, v0 float64, want []exactGroup) {
	t.Helper()
	if len(rep.Groups) != len(want) {
		t.Fatalf("%d groups, want %d", len(rep.Groups), len(want))
	}
	for i, w := range want {
		g := rep.Groups[i]
		if g.Key.String() != w.key || g.Fit == nil || v0 != 0 && math.Abs(g.Fit.V0/v0-1) > 1e-6 || math.Abs(float64(g.Fit.T)/w.t-1) > 1e-6 {
			t.Errorf("group %d: %v, %+v; want %s with v0 = %g, t = %g", i, g.Key, g.Fit, w.key, v0, w.t)
		}
	}
}

// --group-by transport splits a log's measurements by the transport each
// record names: two transports of exactly v = b/(b/v0 + t), in-process
// v0 = 4,000 samples/s and t = 2 ms, TCP v0 = 4,000 and t = 6 ms, give
// those two laws apart, and one group of both without it.
func TestFitGroupByTransport(t *testing.T) {
	lgs := exactLog("two.jsonl", 2, []exactLaw{{transport: "inproc", t: 2e-3}, {transport: "tcp", t: 6e-3}})
	rep, err := Fit(lgs, &Options{GroupBy: []string{"transport"}})
	if err != nil {
		t.Fatal(err)
	}
	checkExactGroups(t, rep, 4000, []exactGroup{{"mlp localhost ×2 fp32 transport=inproc", 2e-3}, {"mlp localhost ×2 fp32 transport=tcp", 6e-3}})
	rep, err = Fit(lgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 1 || len(rep.Groups[0].Points) != 6 {
		t.Errorf("without group-by: %d groups, want one of 6 points", len(rep.Groups))
	}
}

func TestFitGroupBy(t *testing.T) {
	lgs := readLogs(t, "seed003.csv", "horovod_resnet50.txt")
	rep, err := Fit(lgs, &Options{GroupBy: []string{"framework"}})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, g := range rep.Groups {
		keys = append(keys, g.Key.String())
	}
	want := "resnet50 GPU ×4 framework=|resnet50 GTX1080Ti ×1 framework=pytorch|resnet50 GTX1080Ti ×2 framework=pytorch"
	if got := strings.Join(keys, "|"); got != want {
		t.Errorf("groups %q, want %q", got, want)
	}
	// A label no record has would split nothing: it is an error that
	// names the labels there are.
	for _, c := range []struct {
		lgs   []*logs.Log
		names []string
		msg   string
	}{
		{lgs, []string{"framework", "frame"}, `group-by: unknown label "frame"; did you mean "framework"`},
		{lgs, []string{""}, "group-by: an empty label name"},
		{readLogs(t, "horovod_resnet50.txt"), []string{"framework"}, `group-by "framework": the records of these logs have no labels`},
	} {
		if _, err := Fit(c.lgs, &Options{GroupBy: c.names}); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("GroupBy %q: %v, want %q", c.names, err, c.msg)
		}
	}
}

func TestFitErrors(t *testing.T) {
	if _, err := Fit(nil, nil); !errors.Is(err, ErrNoData) {
		t.Errorf("no logs: %v, want ErrNoData", err)
	}
	lg := &logs.Log{Name: "x", Records: []benchlog.Record{
		{Kind: benchlog.KindMeasurement, Model: "m", Workers: 1, Batch: 8, StepTime: 0.1},
		{Kind: benchlog.KindMeasurement, Model: "m", Workers: 1, Batch: 8, StepTime: 0.11},
		{Kind: benchlog.KindOOM, Model: "n", Batch: 64},
	}, Lines: []int{1, 2, 3}}
	rep, err := Fit([]*logs.Log{lg}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 2 || !errors.Is(rep.Groups[0].Err, ErrFewBatches) || rep.Groups[1].Err == nil {
		t.Errorf("groups %+v: want one batch size (m) and OOM only (n) as errors", rep.Groups)
	}
	if c := rep.Calibration(); len(c.Throughput) != 0 {
		t.Errorf("calibration of failed fits: %+v", c)
	}
	// Every measurement under MinBatch: no data, and the error says why.
	_, err = Fit([]*logs.Log{lg}, &Options{MinBatch: 16})
	if !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), "the 2 throughput measurements are all under the minimum batch 16") {
		t.Errorf("all under MinBatch: %v", err)
	}
	lg.Records = append(lg.Records, benchlog.Record{Kind: benchlog.KindMeasurement, Model: "n", Workers: 1, Batch: 32, StepTime: 0.2})
	lg.Lines = append(lg.Lines, 4)
	rep, err = Fit([]*logs.Log{lg}, &Options{MinBatch: 16})
	if err != nil {
		t.Fatal(err)
	}
	if g := rep.Groups[0]; g.Err == nil || !strings.Contains(g.Err.Error(), "no throughput measurement at or above the minimum batch (2 under it)") {
		t.Errorf("m under MinBatch: %v", g.Err)
	}
}

// minBatchWant is whether a curve has no fit with Options.MinBatch 32
// (fewer than two batches left), and its measurements under 32: counts
// of the logs, which no fitting changes.
type minBatchWant struct {
	noFit32 bool
	below   int
}

// tf32Anchor begins the paragraph of docs/torchbench-measured.md that quotes the R²
// of ResNet-50's tf32 curve on the H100 over its two logs.
const tf32Anchor = "Over both calls' logs `fit` gives R² = "

// minR2 is the least R² a curve of the committed logs may have: the law
// explains nine tenths of the variation of samples/s over the batches.
const minR2 = 0.85

// checkFitted checks what holds of any fit of the throughput law to g's
// points, whatever its figures: each point's fitted value is
// b/(b/v0 + t) and its residual (v − v̂)/v̂; R² = 1 − Σ(v − v̂)²/Σ(v − v̄)²
// over the points used, above minR2; S the root of Σ((v − v̂)/v̂)²/DOF;
// the points used those not excluded, the excluded ones tested and at
// most a fifth; the intervals contain the estimates; and the law
// reproduces each point used within four S.
func checkFitted(t *testing.T, k string, g Group) {
	t.Helper()
	f := g.Fit
	var used, excluded int
	var sumV, ssRes, ssRel float64
	for _, p := range g.Points {
		want := float64(p.Batch) / (float64(p.Batch)/f.V0 + float64(f.T))
		if math.Abs(p.Fitted-want) > 1e-9*want || math.Abs(p.Residual-(p.Throughput-want)/want) > 1e-9 {
			t.Errorf("%s: batch %d: fitted %g, residual %g; want %g, %g", k, p.Batch, p.Fitted, p.Residual, want, (p.Throughput-want)/want)
		}
		if p.Excluded {
			excluded++
			if math.IsNaN(p.Z) {
				t.Errorf("%s: batch %d excluded untested", k, p.Batch)
			}
			continue
		}
		used++
		sumV += p.Throughput
		ssRes += (p.Throughput - p.Fitted) * (p.Throughput - p.Fitted)
		ssRel += p.Residual * p.Residual
	}
	var ssTot float64
	for _, p := range g.Points {
		if !p.Excluded {
			ssTot += (p.Throughput - sumV/float64(used)) * (p.Throughput - sumV/float64(used))
		}
	}
	if r2 := 1 - ssRes/ssTot; math.Abs(f.R2-r2) > 1e-9 || f.R2 < minR2 || f.Used != used || 5*excluded > len(g.Points) {
		t.Errorf("%s: R² %g (%g from its points), %d used of %d (%d not excluded); want R² above %g, a fifth excluded at most", k, f.R2, r2, f.Used, len(g.Points), used, minR2)
	}
	if f.DOF > 0 && math.Abs(f.S-math.Sqrt(ssRel/float64(f.DOF))) > 1e-9 {
		t.Errorf("%s: S %g, want %g", k, f.S, math.Sqrt(ssRel/float64(f.DOF)))
	}
	for _, p := range g.Points {
		if !p.Excluded && f.DOF > 0 && math.Abs(p.Residual) > 4*f.S {
			t.Errorf("%s: batch %d: residual %g beyond 4 S = %g", k, p.Batch, p.Residual, 4*f.S)
		}
	}
	in := func(x float64, iv [2]float64) bool { return math.IsNaN(iv[0]) || (iv[0] <= x && x <= iv[1]) }
	if !in(f.V0, f.V0Interval) || !in(float64(f.T), [2]float64{float64(f.TInterval[0]), float64(f.TInterval[1])}) {
		t.Errorf("%s: v0 %g in %v, t %g in %v", k, f.V0, f.V0Interval, f.T, f.TInterval)
	}
}

// docRow returns the row of the table after anchor in
// docs/torchbench-measured.md that begins "| key |", or with key "" the text from
// anchor to the end of its paragraph: what the doc quotes of a curve.
func docRow(t *testing.T, anchor, key string) string {
	t.Helper()
	b, err := os.ReadFile("../docs/torchbench-measured.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, anchor)
	if i < 0 {
		t.Fatalf("docs/torchbench-measured.md: no %q", anchor)
	}
	doc = doc[i:]
	if key == "" {
		end, _, _ := strings.Cut(doc, "\n\n")
		return strings.ReplaceAll(end, "\n", " ")
	}
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, "| "+key+" |") {
			return l
		}
	}
	t.Errorf("docs/torchbench-measured.md: no row %q after %q", key, anchor)
	return ""
}

// checkDocR2 checks that row, what the doc quotes of a curve, gives its
// R² to four places, or says why it has none.
func checkDocR2(t *testing.T, what, row string, g Group) {
	t.Helper()
	if g.Fit == nil {
		if !strings.Contains(row, "batch of 32)") {
			t.Errorf("%s: no fit, but docs/torchbench-measured.md quotes %q", what, row)
		}
		return
	}
	if r2 := strconv.FormatFloat(g.Fit.R2, 'f', 4, 64); !strings.Contains(row, " "+r2) {
		t.Errorf("%s: R² %s, not in docs/torchbench-measured.md's %q", what, r2, row)
	}
}

// checkMinBatch fits logs with every batch and with Options.MinBatch 32,
// and checks each fit (checkFitted; keyed by its model, precision and
// channels_last), whether a curve has one from batch 32, that its key
// has no labels but the Transformer's
// sentence pairs and channels_last, and that the batches under 32 are
// counted rather than fitted.
func checkMinBatch(t *testing.T, lgs []*logs.Log, anchor string, want map[string]minBatchWant) {
	t.Helper()
	all, err := Fit(lgs, &Options{})
	if err != nil {
		t.Fatal(err)
	}
	from32, err := Fit(lgs, &Options{MinBatch: 32})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Groups) != len(want) || len(from32.Groups) != len(want) {
		t.Fatalf("%d and %d groups, want %d", len(all.Groups), len(from32.Groups), len(want))
	}
	for i, g := range all.Groups {
		k := g.Key.Model + " " + g.Key.Precision
		if g.Key.Labels["channels_last"] == "true" {
			k += " channels_last"
		}
		w, ok := want[k]
		if !ok {
			t.Errorf("unexpected group %s", k)
			continue
		}
		h := from32.Groups[i]
		// torchbench labels the Transformer's samples as sentence pairs:
		// the label keys the group (and its calibration entry) without
		// Options.GroupBy.
		wantSample, labels := "", 0
		if g.Key.Model == "transformer-base" {
			wantSample, labels = "sentence-pair", 1
		}
		if strings.HasSuffix(k, " channels_last") {
			labels++
		}
		if got := g.Key.Labels[calib.SampleLabel]; got != wantSample || len(g.Key.Labels) != labels {
			t.Errorf("%s: key labels %v, want sample %q and %d in all", k, g.Key.Labels, wantSample, labels)
		}
		below := 0
		for _, p := range g.Points {
			if p.Batch < 32 {
				below++
			}
		}
		if g.Fit == nil || g.BelowMin != 0 || h.BelowMin != below || below != w.below || (h.Fit == nil) != w.noFit32 || len(h.Points) != len(g.Points)-below {
			t.Errorf("%s: every batch: fit %v, %d left out; from 32: fit %v, %d left out, %d points of %d; want a fit, none left out; from 32 no fit %v, %d left out", k, g.Fit != nil, g.BelowMin, h.Fit != nil, h.BelowMin, len(h.Points), len(g.Points), w.noFit32, w.below)
			continue
		}
		checkFitted(t, k+" every batch", g)
		if h.Fit != nil {
			checkFitted(t, k+" from 32", h)
		}
		docKey := ""
		if anchor != tf32Anchor {
			docKey = strings.Replace(strings.Replace(k, " ", " | ", 1), " channels_last", ", channels_last", 1)
		}
		row := docRow(t, anchor, docKey)
		checkDocR2(t, k+" every batch", row, g)
		checkDocR2(t, k+" from 32", row, h)
		for _, p := range h.Points {
			if p.Batch < 32 {
				t.Errorf("%s: batch %d fitted under MinBatch 32", k, p.Batch)
			}
		}
	}
}

// TestMinBatchH200 checks each curve of the H200 logs of
// testdata/measurements/h200-2026-11-26, with every batch and from batch
// 32, and that docs/torchbench-measured.md quotes its R².
func TestMinBatchH200(t *testing.T) {
	checkMinBatch(t, measuredLogs(t, "h200-2026-11-26/*.jsonl", 8), "every batch: v0, t, R²", map[string]minBatchWant{
		"cnn amp-fp16":              {false, 1},
		"cnn fp32":                  {false, 1},
		"efficientnet-b4 amp-fp16":  {false, 3},
		"efficientnet-b4 fp32":      {false, 3},
		"maskrcnn-r50-fpn fp32":     {true, 3},
		"mlp amp-fp16":              {false, 1},
		"mlp fp32":                  {false, 1},
		"resnet50 amp-fp16":         {false, 2},
		"resnet50 fp32":             {false, 2},
		"resnet50 tf32":             {false, 2},
		"transformer-base amp-fp16": {false, 2},
		"transformer-base fp32":     {false, 2},
	})
}

// TestMinBatchH100 checks each curve of the H100 logs of
// testdata/measurements/h100-2026-11-26 and h100-2026-11-26-rest, with
// every batch and from batch 32, and that docs/torchbench-measured.md quotes its
// R². Mask R-CNN's two logs (batches 1 to 4 and 8 to 32, two calls) are
// one curve; the channels_last curves are their own.
func TestMinBatchH100(t *testing.T) {
	checkMinBatch(t, measuredLogs(t, "h100-2026-11-26/*.jsonl", 10), "| model | precision, variant | R², every batch | R², from batch 32 |", map[string]minBatchWant{
		"cnn fp32":                               {false, 1},
		"efficientnet-b4 amp-fp16 channels_last": {false, 1},
		"efficientnet-b4 fp32":                   {false, 3},
		"maskrcnn-r50-fpn amp-fp16":              {true, 5},
		"resnet50 amp-fp16":                      {false, 2},
		"resnet50 amp-fp16 channels_last":        {false, 1},
		"resnet50 fp32":                          {false, 2},
		"transformer-base amp-fp16":              {false, 2},
		"transformer-base fp32":                  {false, 2},
	})
	// The later call's logs, testdata/measurements/h100-2026-11-26-rest.
	checkMinBatch(t, measuredLogs(t, "h100-2026-11-26-rest/*.jsonl", 4), "| H200, same batch | R², every batch |", map[string]minBatchWant{
		"mlp amp-fp16":                    {false, 1},
		"mlp fp32":                        {false, 1},
		"resnet50 amp-bf16 channels_last": {false, 1},
		"resnet50 tf32":                   {false, 2},
		"transformer-base amp-bf16":       {false, 2},
	})
	// ResNet-50 in tf32 over both its logs: the later call's batches 8 to
	// 64 and the twenty-seventh session's 128 to 512.
	checkMinBatch(t, append(measuredLogs(t, "h100-2026-11-26-rest/resnet50-tf32.jsonl", 1), measuredLogs(t, "h100-2026-11-26-tf32/*.jsonl", 1)...), tf32Anchor, map[string]minBatchWant{
		"resnet50 tf32": {false, 2},
	})
}

// TestFitRunLabels checks that the labels of how a model ran
// (calib.RunLabels) split the groups without Options.GroupBy: the same
// law in the two memory formats gives two fits, each recovering its own
// v0 and t exactly, where one group would mix them.
func TestFitRunLabels(t *testing.T) {
	var b strings.Builder
	for _, c := range []struct {
		labels string
		v0, t  float64
	}{
		{`{"input": "3x224x224"}`, 3000, 0.010},
		{`{"input": "3x224x224", "channels_last": "true"}`, 7000, 0.012},
		{`{"input": "3x224x224", "channels_last": "true", "compile": "true"}`, 8000, 0.008},
	} {
		for _, batch := range []int{32, 64, 128, 256, 512, 1024} {
			v := float64(batch) / (float64(batch)/c.v0 + c.t)
			fmt.Fprintf(&b, `{"kind": "measurement", "model": "resnet50", "device": "NVIDIA H200", "precision": "amp-fp16", "workers": 1, "batch": %d, "samples_per_s": %v, "labels": %s}`+"\n", batch, v, c.labels)
		}
	}
	lg, err := logs.ReadAs(strings.NewReader(b.String()), "tuned.jsonl", logs.Benchlog)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Fit([]*logs.Log{lg}, &Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		key   string
		v0, t float64
	}{
		{"resnet50 NVIDIA H200 ×1 amp-fp16", 3000, 0.010},
		{"resnet50 NVIDIA H200 ×1 amp-fp16 channels_last=true", 7000, 0.012},
		{"resnet50 NVIDIA H200 ×1 amp-fp16 channels_last=true compile=true", 8000, 0.008},
	} {
		g := findGroup(t, rep, w.key)
		if g.Fit == nil || len(g.Points) != 6 {
			t.Fatalf("%s: %d points, fit %v", w.key, len(g.Points), g.Err)
		}
		if math.Abs(g.Fit.V0/w.v0-1) > 1e-6 || math.Abs(float64(g.Fit.T)/w.t-1) > 1e-6 {
			t.Errorf("%s: v0 %v, t %v; want %v, %v", w.key, g.Fit.V0, float64(g.Fit.T), w.v0, w.t)
		}
	}
	if len(rep.Groups) != 3 {
		t.Errorf("%d groups, want 3", len(rep.Groups))
	}
}

// TestFitH200Tuned fits the logs of testdata/measurements/h200-2026-11-26-tuned
// and checks the groups, each fit, and that docs/torchbench-measured.md quotes its R²:
// channels_last and torch.compile split ResNet-50's amp-fp16 curve in two.
func TestFitH200Tuned(t *testing.T) {
	rep, err := Fit(measuredLogs(t, "h200-2026-11-26-tuned/*.jsonl", 8), &Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{ // points of each group in the logs
		"efficientnet-b4 NVIDIA H200 ×1 amp-fp16 channels_last=true":       4,
		"maskrcnn-r50-fpn NVIDIA H200 ×1 amp-fp16":                         5,
		"resnet50 NVIDIA H200 ×1 amp-bf16 channels_last=true":              8,
		"resnet50 NVIDIA H200 ×1 amp-fp16 channels_last=true":              8,
		"resnet50 NVIDIA H200 ×1 amp-fp16 channels_last=true compile=true": 4,
		"transformer-base NVIDIA H200 ×1 amp-bf16 sample=sentence-pair":    8,
	}
	if len(rep.Groups) != len(want) {
		t.Errorf("%d groups, want %d", len(rep.Groups), len(want))
	}
	for k, w := range want {
		g := findGroup(t, rep, k)
		if g.Fit == nil {
			t.Errorf("%s: no fit: %v", k, g.Err)
			continue
		}
		if len(g.Points) != w {
			t.Errorf("%s: %d points, want %d", k, len(g.Points), w)
		}
		checkFitted(t, k, g)
		docKey := g.Key.Model + " | " + g.Key.Precision
		for _, l := range []string{"channels_last", "compile"} {
			if g.Key.Labels[l] == "true" {
				docKey += ", " + l
			}
		}
		checkDocR2(t, k, docRow(t, "| model | precision, variant | points | v0 | t | R² |", docKey), g)
	}
}

// TestNoneFitted: a report whose every group failed says why each did; one
// fitted group, a collective fitted to its latency alone, or no group at
// all is no error.
func TestNoneFitted(t *testing.T) {
	failed := &Report{
		Groups:      []Group{{Key: Key{Model: "m", Device: "d", Devices: 2}, Err: ErrNoData}},
		Steps:       []StepsGroup{{Err: errors.New("one batch")}},
		Collectives: []CollectiveFit{{Source: "n.txt", Collective: logs.Collective{Line: 6}, Err: ErrFewSizes}},
	}
	want := "no group could be fitted:\n" +
		"  throughput group m d ×2: no throughput, convergence or run records\n" +
		"  steps-to-target curve of ?: one batch\n" +
		"  collective test of n.txt, line 6: fewer than two distinct message sizes"
	if err := failed.NoneFitted(); !errors.Is(err, ErrNoneFitted) || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	for name, rep := range map[string]*Report{
		"empty":        {},
		"one fitted":   {Groups: []Group{{Err: ErrNoData}, {Fit: &ThroughputFit{V0: 1}}}},
		"latency only": {Collectives: []CollectiveFit{{Err: fmt.Errorf("x: %w", ErrLatencyOnly)}}},
	} {
		if err := rep.NoneFitted(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Measurements of the same device count on one node and on two
// (benchlog.Record.Nodes) are two groups, and the fit across counts takes
// those of one node count: 2 workers on one node at t = 2 ms, and 2 and 4
// workers on two nodes at t = 6 and 8 ms, give the two-node line through
// both, t(p) = t_fixed + 2(p−1)/p·t_comm with t_fixed = 2 ms and
// t_comm = (8 − 6) ms / (1.5 − 1) = 4 ms, and no line for the one node.
func TestFitGroupByNodes(t *testing.T) {
	var recs []benchlog.Record
	for _, c := range []struct {
		workers, nodes int
		t              float64
	}{{2, 0, 2e-3}, {2, 2, 6e-3}, {4, 2, 8e-3}} {
		for _, b := range []int{16, 64, 256} {
			step := float64(c.workers*b)/4000 + c.t
			recs = append(recs, benchlog.Record{Kind: benchlog.KindMeasurement, Model: "mlp", Device: "cpu", Precision: "fp32",
				Transport: "gloo", Workers: c.workers, Nodes: c.nodes, Batch: b, GlobalBatch: c.workers * b, StepTime: step})
		}
	}
	lines := make([]int, len(recs))
	for i := range lines {
		lines[i] = i + 1
	}
	rep, err := Fit([]*logs.Log{{Name: "nodes.jsonl", Records: recs, Lines: lines}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkExactGroups(t, rep, 4000, []exactGroup{{"mlp cpu ×2 fp32", 2e-3}, {"mlp cpu ×2 fp32 nodes=2", 6e-3}, {"mlp cpu ×4 fp32 nodes=2", 8e-3}})
	if len(rep.Comm) != 1 || rep.Comm[0].Labels[benchlog.NodesLabel] != "2" || rep.Comm[0].Fit == nil {
		t.Fatalf("fits across counts %+v, want one of the two-node groups", rep.Comm)
	}
	if f := rep.Comm[0].Fit; math.Abs(float64(f.TFixed)/2e-3-1) > 1e-6 || math.Abs(float64(f.TComm)/4e-3-1) > 1e-6 {
		t.Errorf("two nodes: t_fixed %g, t_comm %g; want 2 ms and 4 ms", f.TFixed, f.TComm)
	}
}
