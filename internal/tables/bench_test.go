package tables

import (
	"slices"
	"strings"
	"testing"
	"time"

	"scaleplan/engine/dist"
)

// The throughput table shows a measurement's figures in milliseconds,
// two decimals, and samples/s whole, under the sweep's model and backend.
func TestBenchThroughput(t *testing.T) {
	m := &dist.Measurement{Config: dist.Config{Model: "mlp", Workers: 2, Batch: 32, Accumulate: 1}, Steps: 20,
		StepTime: 0.0123456, StepTimeStd: 0.0004, SamplesPerSec: 5184.3,
		Phases: dist.Phases{DataWait: 1500 * time.Microsecond, Forward: 3 * time.Millisecond, Backward: 6250 * time.Microsecond,
			AllReduce: 2 * time.Millisecond, Wait: 500 * time.Microsecond, Update: 250 * time.Microsecond}}
	tb := BenchThroughput(dist.Config{Model: "mlp", Hidden: []int{64}}, "gonum", []*dist.Measurement{m})
	want := [][]string{{"2", "32", "64", "20", "12.35", "0.40", "5184", "1.50", "3.00", "6.25", "2.00", "0.50", "0.25"}}
	if tb.Title != "mlp-784-64-10 throughput, gonum" || !slices.EqualFunc(tb.Rows, want, slices.Equal) || len(tb.Header) != len(want[0]) {
		t.Errorf("table %q %v\n%v, want rows\n%v", tb.Title, tb.Header, tb.Rows, want)
	}
}

// trials is a learning-rate search's trials: one reached the target, one
// stopped at its cap, one diverged.
var trials = []dist.Trial{
	{LR: 0.025, Steps: 400, MaxSteps: 1000, Reached: true, Accuracy: 0.8512, Time: 12500 * time.Millisecond},
	{LR: 0.0125, Steps: 400, MaxSteps: 400, Accuracy: 0.8, Time: 10 * time.Second},
	{LR: 0.05, Steps: 30, MaxSteps: 400, Diverged: true, Time: 1500 * time.Millisecond},
}

// The steps table shows each batch's chosen rate and every trial tried,
// with the trials' total time.
func TestBenchSteps(t *testing.T) {
	convs := []*dist.Convergence{
		{LR: 0.025, Reached: true, StepsToTarget: 400, Accuracy: 0.8512, Trials: trials},
		{LR: 0.2, StepsToTarget: 1000, Accuracy: 0.61, Trials: []dist.Trial{{LR: 0.2, Steps: 1000, MaxSteps: 1000, Accuracy: 0.61, Time: 2 * time.Second}}},
	}
	tb := BenchSteps(dist.Config{Model: "cnn", Eval: dist.Eval{Target: 0.85}}, []int{64, 4096}, convs)
	want := [][]string{
		{"64", "0.025", "yes", "400", "0.8512", "0.025:400 0.0125:>400 0.05:div", "24.0"},
		{"4096", "0.2", "no", "1000", "0.6100", "0.2:>1000", "2.0"},
	}
	if tb.Title != "cnn steps to 0.85 validation accuracy" || !slices.EqualFunc(tb.Rows, want, slices.Equal) {
		t.Errorf("table %q\n%v, want rows\n%v", tb.Title, tb.Rows, want)
	}
}

// Trial says how each trial ended, for bench steps' progress lines.
func TestTrial(t *testing.T) {
	want := []string{"target at step 400 (12.5 s)", "not reached in 400 steps, best accuracy 0.8000 (10.0 s)", "diverged by step 30"}
	for i, tr := range trials {
		if got := Trial(tr); got != want[i] {
			t.Errorf("trial %d: %q, want %q", i, got, want[i])
		}
	}
}

// The train table has a row per evaluation, its epoch the step over the
// steps of an epoch, and a final line with the last accuracy and the
// step the target was first reached at.
func TestBenchTrain(t *testing.T) {
	tr := &dist.Training{Config: dist.Config{Model: "cnn"}, Target: 0.9, StepsPerEpoch: 100}
	res := &dist.Result{Steps: make([]dist.StepStats, 250), StepsToTarget: 250, Time: 80 * time.Second, Evals: []dist.EvalResult{
		{Step: 100, Accuracy: 0.88, Loss: 0.35, Time: 30 * time.Second},
		{Step: 250, Accuracy: 0.905, Loss: 0.3, Time: 75 * time.Second},
	}}
	tb, line := BenchTrain("engine-cnn", "openblas", tr, res)
	want := [][]string{{"1", "100", "0.8800", "0.3500", "30.0"}, {"2.5", "250", "0.9050", "0.3000", "75.0"}}
	if tb.Title != "cnn with recipe engine-cnn, openblas" || !slices.EqualFunc(tb.Rows, want, slices.Equal) {
		t.Errorf("table %q\n%v, want rows\n%v", tb.Title, tb.Rows, want)
	}
	if want := "final test accuracy 0.9050 after 250 steps in 80.0 s; target 0.9 first reached at step 250"; line != want {
		t.Errorf("line %q, want %q", line, want)
	}
	res.StepsToTarget = 0
	if _, line := BenchTrain("engine-cnn", "openblas", tr, res); !strings.HasSuffix(line, "; target 0.9 not reached") {
		t.Errorf("target not reached: line %q", line)
	}
}

// BenchTorch shows a torchbench log's measurements and out-of-memory
// records, titled with its framework and device, and fails on a broken
// log.
func TestBenchTorch(t *testing.T) {
	log := `{"kind":"header","run":"r","tool":"torchbench","machine":{"framework":"torch 2.5.1","device_name":"NVIDIA H100"}}
{"kind":"measurement","run":"r","model":"resnet50","precision":"amp-bf16","workers":8,"batch":256,"steps":20,"step_time_s":0.25,"step_time_std_s":0.001,"samples_per_s":8192,"peak_memory_bytes":40e9}
{"kind":"oom","run":"r","model":"resnet50","precision":"amp-bf16","workers":8,"batch":512}
`
	tb, err := BenchTorch(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := tb.Write(&b, "csv"); err != nil {
		t.Fatal(err)
	}
	want := "model,precision,workers,batch,global_batch,steps,step_s,std_s,samples_per_s,peak_memory_bytes\n" +
		"resnet50,amp-bf16,8,256,2048,20,0.25,0.001,8192,40000000000\n" +
		"resnet50,amp-bf16,8,512,4096,,,,out of memory,\n"
	if b.String() != want || tb.Title != "torch throughput, torch 2.5.1 NVIDIA H100" {
		t.Errorf("table %q\n%s\nwant\n%s", tb.Title, b.String(), want)
	}
	if _, err := BenchTorch(strings.NewReader(log + "{\"kind\":\"measurement\"")); err == nil {
		t.Error("a truncated log gave no error")
	}
}
