package validate

import (
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"scaleplan/compute"
	"scaleplan/fit/logs"
	"scaleplan/internal/benchlog"
	"scaleplan/model"
	"scaleplan/predict"
	"scaleplan/sim"
)

// TestPlatformNodes reads MLPerf platforms' node counts.
func TestPlatformNodes(t *testing.T) {
	for in, want := range map[string]int{"1xGX2570M5": 1, "8xDGX-A100": 8, "DGX-A100": 0, "0xDGX": 0, "x": 0, "4x": 0, "": 0} {
		if got := platformNodes(in); got != want {
			t.Errorf("platformNodes(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestHeaderOptimizer reads torchbench's optimizer descriptions.
func TestHeaderOptimizer(t *testing.T) {
	header := func(opt string) benchlog.Record {
		return benchlog.Record{Config: map[string]any{"models_info": map[string]any{"m": map[string]any{"optimizer": opt}}}}
	}
	for opt, want := range map[string]model.Optimizer{
		"adam lr 1e-4": "adam", "AdamW lr 1e-4": "adamw", "sgd lr 0.01 momentum 0.9": model.Momentum,
		"sgd lr 0.01": model.SGD, "lamb": "", "": "",
	} {
		if got := headerOptimizer(header(opt), "m"); got != want {
			t.Errorf("%q: %q, want %q", opt, got, want)
		}
	}
	if got := headerOptimizer(benchlog.Record{}, "m"); got != "" {
		t.Errorf("no header: %q", got)
	}
}

// TestLogReader checks which records and collective tests a LogReader
// keeps and why it leaves the others out.
func TestLogReader(t *testing.T) {
	cat, prof := defaults(t)
	meas := func(dev string, workers, batch int) benchlog.Record {
		return benchlog.Record{Kind: benchlog.KindMeasurement, Device: dev, Model: "resnet50", Precision: "fp32",
			Workers: workers, Batch: batch, GlobalBatch: 256, SamplesPerSec: 500}
	}
	lg := &logs.Log{Name: "x.jsonl", Lines: []int{1, 2, 3}, Records: []benchlog.Record{meas("v100-sxm2-16gb", 1, 32), meas("v100-sxm2-16gb", 4, 32), meas("8xDGX", 0, 0)}}
	left := map[string]int{}
	in := &LogReader{Catalog: cat}
	ms, err := in.Measurements(lg, prof, left)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Source != "x.jsonl:1" || ms[0].Devices != 1 || ms[0].Batch != 32 || left[LeftSeveral] != 1 || left[LeftCount] != 1 {
		t.Errorf("measurements %+v, left %v", ms, left)
	}
	// With a system, a record's node count comes with it (torchbench
	// across nodes); one device has no placement.
	two := meas("v100-sxm2-16gb", 4, 32)
	two.Nodes, two.DevicesPerNode = 2, 2
	in2 := &LogReader{Catalog: cat, System: "dgx1"}
	ms, err = in2.Measurements(&logs.Log{Name: "n.jsonl", Lines: []int{1, 2}, Records: []benchlog.Record{two, meas("v100-sxm2-16gb", 1, 32)}}, prof, map[string]int{})
	if err != nil || len(ms) != 2 || ms[0].Nodes != 2 || ms[0].System != "dgx1" || ms[1].Nodes != 0 {
		t.Errorf("two nodes: %+v, %v; want 2 nodes of dgx1, then one device without", ms, err)
	}
	lg.Collectives = []logs.Collective{{Op: "all_reduce", Ranks: 8}, {Op: "reduce", Ranks: 8}, {Op: "all_reduce", Ranks: 1}}
	if cs := in.Collectives([]*logs.Log{lg}, sim.Ring, left); len(cs) != 0 || left[LeftCollectiveSystem] != 1 || left[LeftCollectiveOp] != 1 || left[LeftCollectiveRank] != 1 {
		t.Errorf("collectives %+v, left %v", cs, left)
	}
}

// TestThroughputCharts checks the charts' data of a hand-made report: one
// chart per subject, a series per device count with the global batches,
// the first out-of-memory batch, and the law fitted to exact points of
// v = b / (b/v0 + t) with v0 = 1000 samples/s and t = 0.01 s.
func TestThroughputCharts(t *testing.T) {
	law := func(b float64) float64 { return b / (b/1000 + 0.01) }
	row := func(b int, oom bool) MeasuredRow { return MeasuredRow{Measured: Measured{Batch: b, OOM: oom}} }
	rows := []MeasuredRow{row(8, false), row(16, false), row(32, false), row(64, true)}
	for i := range rows[:3] {
		rows[i].SamplesPerSec, rows[i].Predicted = law(float64(2*rows[i].Batch)), 1
	}
	rep := &MeasuredReport{Groups: []MeasuredGroup{
		{Device: "d", Model: "m", Precision: "fp32", Devices: 2, System: "s", Rows: rows, FirstOOM: 64},
		{Device: "d", Model: "m", Precision: "fp32", Variant: "v", Devices: 1, Rows: []MeasuredRow{row(8, true)}},
	}}
	charts := rep.ThroughputCharts()
	if len(charts) != 2 || charts[0].Subject != "m d fp32" || charts[1].Subject != "m d fp32 v" || len(charts[1].Series) != 0 {
		t.Fatalf("charts %+v", charts)
	}
	s := charts[0].Series[0]
	if s.Name != "2 devices of s" || !slices.Equal(s.Batch, []float64{16, 32, 64}) || s.OOM != 128 || s.Fit == nil {
		t.Fatalf("series %+v", s)
	}
	if math.Abs(s.Fit.V0-1000) > 1e-6 || math.Abs(float64(s.Fit.T)-0.01) > 1e-9 {
		t.Errorf("fit v0 %v, t %v; want 1000, 0.01", s.Fit.V0, s.Fit.T)
	}
	if rep.Calibrated() || rep.CalibrationSources() != nil {
		t.Error("an uncalibrated report says it is calibrated")
	}
	rep.Groups[0].Rows[0].Calibration, rep.Groups[0].Rows[1].Calibration = "a", "a"
	rep.Groups[0].Rows[1].Fitted = true
	if mae, n := rep.CalibratedError(); n != 1 || math.Abs(mae-math.Abs(1/law(16)-1)) > 1e-12 || !slices.Equal(rep.CalibrationSources(), []string{"a"}) {
		t.Errorf("calibrated error %v over %d, sources %q", mae, n, rep.CalibrationSources())
	}
}

// TestLogFramework reads a row's framework from a CSV's framework column
// where the log's header names none, and from the header where it does.
func TestLogFramework(t *testing.T) {
	cat, prof := defaults(t)
	rec := benchlog.Record{Kind: benchlog.KindMeasurement, Device: "v100-sxm2-16gb", Model: "resnet50", Precision: "fp32",
		Workers: 1, Batch: 32, SamplesPerSec: 500, Labels: map[string]string{"framework": "mxnet"}}
	in := &LogReader{Catalog: cat}
	ms, err := in.Measurements(&logs.Log{Name: "t.csv", Lines: []int{2}, Records: []benchlog.Record{rec}}, prof, map[string]int{})
	if err != nil || len(ms) != 1 || ms[0].Framework != "mxnet" || measuredMode(&ms[0]) != "compiled" {
		t.Fatalf("%+v, %v: want framework mxnet, compiled", ms, err)
	}
	header := benchlog.Record{Kind: benchlog.KindHeader, Machine: &benchlog.Machine{Framework: "torch 2.11"}}
	ms, err = in.Measurements(&logs.Log{Name: "t.jsonl", Lines: []int{1, 2}, Records: []benchlog.Record{header, rec}}, prof, map[string]int{})
	if err != nil || len(ms) != 1 || ms[0].Framework != "torch 2.11" {
		t.Errorf("%+v, %v: want the header's framework", ms, err)
	}
}

// TestLogMode reads a row's framework mode from a CSV's mode column: it
// overrides the framework's (a torch row replayed as CUDA graphs), an
// empty cell leaves the framework's (eager for torch, compiled for mxnet),
// and a name that is not a mode is refused with the file and line.
func TestLogMode(t *testing.T) {
	cat, prof := defaults(t)
	csv := "model,device,precision,devices,batch,samples_per_s,framework,mode\n" +
		"resnet50,v100-sxm2-16gb,amp-fp16,1,256,1200,torch,cuda-graphs\n" +
		"resnet50,v100-sxm2-16gb,amp-fp16,1,256,1200,torch,\n" +
		"resnet50,v100-sxm2-16gb,amp-fp16,1,256,1200,mxnet,\n" +
		"resnet50,v100-sxm2-16gb,amp-fp16,1,256,1200,mxnet,eager\n"
	read := func(text string) ([]Measured, error) { return readCSV(t, cat, prof, text) }
	ms, err := read(csv)
	if err != nil || len(ms) != 4 {
		t.Fatalf("read %+v, %v", ms, err)
	}
	for i, want := range []compute.Mode{compute.Graphs, compute.Eager, compute.Compiled, compute.Eager} {
		if got := measuredMode(&ms[i]); got != want {
			t.Errorf("row %d: mode %q, want %q", i+2, got, want)
		}
	}
	_, err = read(strings.Replace(csv, "torch,cuda-graphs", "torch,graphs", 1))
	if err == nil || !strings.Contains(err.Error(), `t.csv:2: mode: framework mode "graphs": want one of eager, cuda-graphs, compiled`) {
		t.Errorf("mode graphs: %v", err)
	}
}

// TestLogOptimizerAndWorkShare reads a row's optimizer and work_share
// columns: a cell sets Measured.Optimizer or Measured.WorkShare, an empty
// cell leaves the default, and a value outside the choices (an optimizer's
// name; a share in (0, 1]) is refused with the file and line. A binned
// sample that costs half a padded one is predicted at twice the padded
// samples/s.
func TestLogOptimizerAndWorkShare(t *testing.T) {
	cat, prof := defaults(t)
	csv := "model,device,precision,devices,batch,samples_per_s,seq_len,framework,optimizer,work_share\n" +
		"bert-large,a100-sxm4-80gb,amp-fp16,1,32,200,512,torch,fusedadam,0.5\n" +
		"bert-large,a100-sxm4-80gb,amp-fp16,1,32,100,512,torch,fusedadam,\n" +
		"bert-large,a100-sxm4-80gb,amp-fp16,1,32,100,512,torch,,\n"
	ms, err := readCSV(t, cat, prof, csv)
	if err != nil || len(ms) != 3 {
		t.Fatalf("read %+v, %v", ms, err)
	}
	if ms[0].Optimizer != model.FusedAdam || ms[0].WorkShare != 0.5 || ms[2].Optimizer != "" || ms[2].WorkShare != 0 {
		t.Errorf("read %q, %v and %q, %v; want fusedadam, 0.5, then neither", ms[0].Optimizer, ms[0].WorkShare, ms[2].Optimizer, ms[2].WorkShare)
	}
	rep, err := CompareMeasured(ms[:2], cat, prof, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var binned, padded float64
	for _, g := range rep.Groups {
		for _, r := range g.Rows {
			if r.WorkShare > 0 {
				binned = r.Predicted
			} else {
				padded = r.Predicted
			}
		}
	}
	if !(padded > 0) || math.Abs(binned/padded-2) > 1e-9 {
		t.Errorf("predicted %v binned and %v padded: want twice", binned, padded)
	}
	for bad, want := range map[string]string{
		"adafactor,0.5": `t.csv:2: optimizer "adafactor": want one of sgd, momentum`,
		"adam,0":        "t.csv:2: work_share", "adam,1.5": "t.csv:2: work_share",
		"adam,-0.2": "t.csv:2: work_share", "adam,half": "t.csv:2: work_share",
	} {
		_, err = readCSV(t, cat, prof, strings.Replace(csv, "fusedadam,0.5", bad, 1))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", bad, err, want)
		}
	}
}

// TestGradientBytes checks the gradient precision of the exchange: float32
// under PyTorch's autocast, whose parameters stay float32; the storage
// precision for another framework's mixed precision or a plain precision.
func TestGradientBytes(t *testing.T) {
	for _, c := range []struct {
		framework, precision string
		want                 float64
	}{
		{"torch", "amp-fp16", 4}, {"torch", "amp-bf16", 4}, {"torch", "fp16", 2}, {"torch", "fp32", 4},
		{"mxnet", "amp-fp16", 2}, {"tensorflow", "amp-fp16", 2}, {"", "amp-fp16", 2},
	} {
		ms := Measured{Framework: c.framework, Precision: c.precision}
		prec, sp, _, err := measuredPrecisions(c.precision)
		if err != nil {
			t.Fatal(err)
		}
		if got := gradientBytes(&ms, prec, sp); got != c.want {
			t.Errorf("%s %s: %g bytes a gradient, want %g", c.framework, c.precision, got, c.want)
		}
	}
}

// TestTorchvisionLogFramework checks that a row read from a torchvision
// reference script's log carries the framework the reader labels it with,
// so that its Mask R-CNN is predicted as torchvision's program
// (model.Shape.Framework), not maskrcnn-benchmark's.
func TestTorchvisionLogFramework(t *testing.T) {
	cat, prof := defaults(t)
	log := `Namespace(data_path='/data/coco', dataset='coco', model='maskrcnn_resnet50_fpn', device='cuda', batch_size=2, epochs=26, world_size=1, distributed=False)
Epoch: [0]  [   0/7329]  eta: 3:49:58  lr: 0.000040  loss: 6.0418 (6.0418)  time: 1.8807  data: 0.9510  max mem: 3186
Epoch: [0]  [  20/7329]  eta: 0:51:13  lr: 0.000840  loss: 1.9031 (2.4077)  time: 0.4200  data: 0.0031  max mem: 3941
Epoch: [0] Total time: 0:52:11
`
	lg, err := logs.Read(strings.NewReader(log), "detection.txt")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := (&LogReader{Catalog: cat}).Measurements(lg, prof, map[string]int{})
	if err != nil || len(ms) != 1 {
		t.Fatalf("read %+v, %v; want one row", ms, err)
	}
	if ms[0].Model != "maskrcnn-r50-fpn" || ms[0].Framework != logs.TorchvisionFramework || !isTorch(&ms[0]) {
		t.Errorf("row %s of framework %q; want maskrcnn-r50-fpn of %q, a PyTorch program", ms[0].Model, ms[0].Framework, logs.TorchvisionFramework)
	}
}

// TestTorchbenchTimerEvents checks TorchbenchTimerEvents against the
// marks engine/torchbench's step takes (timer.mark() in torchbench.py's
// Trainer.step), and that the reader gives them to the measurements of a
// torchbench log timed with CUDA events and not to a CSV's.
func TestTorchbenchTimerEvents(t *testing.T) {
	b, err := os.ReadFile("../engine/torchbench/torchbench.py")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	i := strings.Index(src, "    def step(self, data, timer, sync=True):")
	if i < 0 {
		t.Fatal("torchbench.py: no Trainer.step")
	}
	body := src[i+1:]
	if j := strings.Index(body, "\n    def "); j >= 0 {
		body = body[:j]
	}
	if n := strings.Count(body, "timer.mark()"); n != TorchbenchTimerEvents {
		t.Errorf("Trainer.step marks %d times, TorchbenchTimerEvents %d", n, TorchbenchTimerEvents)
	}
	cat, prof := defaults(t)
	for _, tc := range []struct {
		file string
		want int
	}{
		{"../testdata/measurements/h200-2026-11-26/mlp-cnn.jsonl", TorchbenchTimerEvents},
		{"../testdata/measurements/published-resnet50.csv", 0},
	} {
		lg, err := logs.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := (&LogReader{Catalog: cat, System: "dgx-a100"}).Measurements(lg, prof, map[string]int{})
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) == 0 {
			t.Fatalf("%s: no measurement", tc.file)
		}
		if ms[0].TimerEvents != tc.want {
			t.Errorf("%s: timer events %d, want %d", tc.file, ms[0].TimerEvents, tc.want)
		}
	}
}
