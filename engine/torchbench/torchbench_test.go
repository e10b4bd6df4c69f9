package torchbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat"

	"scaleplan/internal/benchlog"
)

// needPython returns an interpreter with torch, or skips the test with a
// one-line reason. Where SCALEPLAN_REQUIRE_DEPS=1 (.ci/run sets it after
// installing Debian's python3-torch) a missing torch fails the test
// instead: the script must be exercised there.
func needPython(t *testing.T) string {
	t.Helper()
	python, err := FindPython()
	if err != nil {
		if os.Getenv("SCALEPLAN_REQUIRE_DEPS") == "1" {
			t.Fatalf("SCALEPLAN_REQUIRE_DEPS=1 but the script cannot run: %v", err)
		}
		t.Skip("skipping: needs PyTorch (apt-get install python3-torch python3-torchvision)")
	}
	return python
}

// cpuOptions fills in what every test run on the CPU shares: the CPU,
// and passive OpenMP waiting, without which torch's threads spin and
// stall for whole time slices on a machine shared with other tests.
func cpuOptions(t *testing.T, opt Options) Options {
	opt.Python = needPython(t)
	opt.Device = "cpu"
	if os.Getenv("OMP_WAIT_POLICY") == "" {
		opt.Env = append(opt.Env, "OMP_WAIT_POLICY=PASSIVE")
	}
	return opt
}

// runLog runs the script through Run and returns every record of the log,
// each checked with benchlog.Decode, and the raw lines.
func runLog(t *testing.T, opt Options) ([]benchlog.Record, [][]byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	out := filepath.Join(t.TempDir(), "log.jsonl")
	var progress bytes.Buffer
	start := time.Now()
	err := Run(ctx, opt, out, &progress)
	t.Logf("%s in %.1f s (%d bytes):\n%s", strings.Join(opt.Models, ","), time.Since(start).Seconds(), progress.Len(), progress.String())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !strings.Contains(progress.String(), "torchbench: wrote") {
		t.Errorf("progress %q: want the script's progress lines", progress.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	recs := make([]benchlog.Record, len(lines))
	for i, line := range lines {
		if recs[i], err = benchlog.Decode(line); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, line)
		}
	}
	if len(recs) == 0 || recs[0].Kind != benchlog.KindHeader || recs[0].Tool != "torchbench" || recs[0].Machine == nil {
		t.Fatalf("first record %+v: want the torchbench header with a machine", recs[0])
	}
	return recs, lines
}

// Parameter counts from outside the script: the engine's own networks
// (engine/nn, computed from their layers), torchvision's documentation
// (num_params of the weights' metadata), and the model catalogue
// (model/profiles: Mask R-CNN's frozen stem and layer1, Transformer base
// with MLPerf's 33,708-token vocabulary and no final layer norms).
var wantParams = map[string]struct{ params, trainable float64 }{
	"cnn":              {1199882, 1199882},
	"mlp":              {1863690, 1863690},
	"resnet18":         {11689512, 11689512},
	"resnet50":         {25557032, 25557032},
	"efficientnet-b4":  {19341616, 19341616},
	"maskrcnn-r50-fpn": {44401393, 44401393 - 222400},
	"transformer-base": {61396992, 61396992},
	"gpt3-125m":        {gptParams(12, 768), gptParams(12, 768)},
	// BertForQuestionAnswering without the pooler: word, position and
	// token-type tables and a LayerNorm, 12 layers of 12d² + 13d (three
	// d×d products, the attention output, 4d and back, two LayerNorms),
	// the d×2 span head: the catalogue's 108,893,186.
	"bert-base-squad": {(30522+512+2)*768 + 2*768 + 12*(12*768*768+13*768) + 768*2 + 2, 108893186},
}

// gptParams is a GPT-3 shape's parameters (Brown et al. 2020, Table 2.1):
// per layer a LayerNorm before attention and one before the feed-forward
// block (2d each), the fused query-key-value product (3d² + 3d), the
// attention output (d² + d) and the two feed-forward products of 4d
// (8d² + 5d); the token table (GPT-2's 50,257) and 2,048 learned
// positions; the final LayerNorm. The logits reuse the token table.
func gptParams(layers, d int) float64 {
	return float64(layers*(12*d*d+13*d) + (50257+2048)*d + 2*d)
}

func checkParams(t *testing.T, header benchlog.Record, models []string) {
	t.Helper()
	info, _ := header.Config["models_info"].(map[string]any)
	for _, m := range models {
		mi, _ := info[m].(map[string]any)
		want := wantParams[m]
		if mi["params"] != want.params || mi["trainable_params"] != want.trainable {
			t.Errorf("%s: params %v, trainable %v; want %v, %v", m, mi["params"], mi["trainable_params"], want.params, want.trainable)
		}
	}
}

// checkMeasurement checks the fields of a measurement record against
// each other and against the run's options.
func checkMeasurement(t *testing.T, r benchlog.Record, model string, workers, steps int) {
	t.Helper()
	if r.Model != model || r.Device != "cpu" || r.Precision != "fp32" || r.Workers != workers || r.Steps != steps {
		t.Errorf("measurement %+v: want model %s, device cpu, fp32, %d workers, %d steps", r, model, workers, steps)
	}
	if r.GlobalBatch != workers*r.Batch {
		t.Errorf("batch %d: global batch %d, want %d", r.Batch, r.GlobalBatch, workers*r.Batch)
	}
	if r.StepTime <= 0 || r.PeakMemory <= 0 {
		t.Errorf("batch %d: step time %v s, peak memory %v bytes: want both > 0", r.Batch, r.StepTime, r.PeakMemory)
	}
	if want := float64(r.GlobalBatch) / r.StepTime; math.Abs(r.SamplesPerSec-want) > 0.01*want {
		t.Errorf("batch %d: %v samples/s, want global_batch/step_time_s = %v within 1%%", r.Batch, r.SamplesPerSec, want)
	}
	if r.Phases == nil {
		t.Fatalf("batch %d: no phases", r.Batch)
	}
	// With one worker the phases split the step (synthetic data takes no
	// time to fetch); with several they are rank 0's, the step the
	// slowest worker's.
	sum := r.Phases.Forward + r.Phases.Backward + r.Phases.Update
	if sum > r.StepTime*(1+1e-9) || (workers == 1 && sum < 0.97*r.StepTime) {
		t.Errorf("batch %d: phases sum to %v s, step %v s", r.Batch, sum, r.StepTime)
	}
}

// fitLaw fits 1/v = 1/v0 + t/b by least squares in x = 1/b, y = 1/v,
// with v = b / step, under t >= 0, and returns v0 (samples/s) and t
// (seconds). Where the unconstrained t is negative (a network
// with no fixed cost per step, measured with noise) the constrained
// optimum lies on t = 0, where 1/v0 is the mean of y.
func fitLaw(batches []float64, steps []float64) (v0, t float64) {
	x := make([]float64, len(batches))
	y := make([]float64, len(batches))
	for i, b := range batches {
		x[i], y[i] = 1/b, steps[i]/b
	}
	alpha, beta := stat.LinearRegression(x, y, nil, false)
	if beta < 0 {
		return 1 / stat.Mean(y, nil), 0
	}
	return 1 / alpha, beta
}

func TestFitLaw(t *testing.T) {
	bs := []float64{16, 32, 64, 128}
	for _, tc := range []struct {
		name  string
		v0, t float64 // the law the steps follow
		noise []float64
		// the fit expected
		wantV0, wantT float64
	}{
		// A closed form: step = t + b/v0 exactly.
		{"exact", 350, 0.045, nil, 350, 0.045},
		// No fixed cost and a step at the largest batch 10% slow: the
		// unconstrained t is negative, so t = 0 and 1/v0 is
		// the mean time per sample, (1+1+1+1.1)/4 / 900.
		{"clamped", 900, 0, []float64{1, 1, 1, 1.1}, 900 / 1.025, 0},
	} {
		steps := make([]float64, len(bs))
		for i, b := range bs {
			steps[i] = tc.t + b/tc.v0
			if tc.noise != nil {
				steps[i] *= tc.noise[i]
			}
		}
		gotV0, gotT := fitLaw(bs, steps)
		if math.Abs(gotV0-tc.wantV0) > 1e-9*tc.wantV0 || math.Abs(gotT-tc.wantT) > 1e-12 {
			t.Errorf("%s: fit v0 %v, t %v; want %v, %v", tc.name, gotV0, gotT, tc.wantV0, tc.wantT)
		}
	}
}

// TestLawProblem: steps that follow the law pass; steps that shrink with
// the batch, or do not follow b/(b/v0 + t), are named.
func TestLawProblem(t *testing.T) {
	bs := []float64{16, 32, 64}
	for _, tc := range []struct {
		steps []float64
		want  string
	}{
		{[]float64{0.018, 0.034, 0.066}, ""},
		{[]float64{0.127, 0.038, 0.085}, "want longer steps for the larger batch"},
		{[]float64{0.018, 0.090, 0.066}, "the fitted law gives"},
	} {
		_, _, got := lawProblem(bs, tc.steps)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("steps %v: %q, want %q", tc.steps, got, tc.want)
		}
	}
}

// TestRunCPU measures the small CNN and ResNet-18 at 64×64, checks the
// records against each other and fits the throughput law to them. The
// CNN's sweep goes on to a batch that the script is told to treat as out
// of memory (TORCHBENCH_TEST_OOM), which must end it with an oom record.
func TestRunCPU(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opt      Options
		measured []float64 // batches with a measurement
		oom      int       // batch with an oom record; 0 for none
	}{
		{"cnn", Options{Models: []string{"cnn"}, Batches: []int{256, 16, 32, 64, 128}, Steps: 6, Warmup: 2,
			Env: []string{"TORCHBENCH_TEST_OOM=128"}}, []float64{16, 32, 64}, 128},
		// Batches 16 apart, so that the b/v0 term outgrows the noise of a
		// shared machine's step times.
		{"resnet18-64x64", Options{Models: []string{"resnet18"}, ImageSize: 64, Batches: []int{4, 16, 64}, Steps: 3, Warmup: 1},
			[]float64{4, 16, 64}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// One thread: on two cores shared with other tests, two
			// OpenMP threads wait on each other for whole time slices,
			// and the step times stop meaning anything.
			opt := cpuOptions(t, tc.opt)
			opt.Threads = 1
			opt.StepRecords = true
			opt.Run = "test-" + tc.name
			// Step times on a machine shared with other tests (go test
			// runs packages in parallel) can be slowed for a whole batch;
			// the records' consistency is checked every time, the law on
			// their timings is given three tries before it fails.
			for attempt := 1; ; attempt++ {
				bs, fastest := measureCPU(t, opt, tc.measured, tc.oom)
				v0, tFixed, problem := lawProblem(bs, fastest)
				t.Logf("%s: v0 = %.4g samples/s, t = %.4g s", opt.Models[0], v0, tFixed)
				if problem == "" {
					break
				}
				if attempt == 3 {
					t.Errorf("three measurements: %s", problem)
					break
				}
				t.Logf("attempt %d: %s; measuring again", attempt, problem)
			}
		})
	}
}

// measureCPU runs the script with opt, checks every record against the
// schema and the others, and returns the measured batches and the
// fastest step of each (other work on a shared machine only ever adds
// time to a step).
func measureCPU(t *testing.T, opt Options, measured []float64, wantOOM int) (bs, fastest []float64) {
	t.Helper()
	recs, _ := runLog(t, opt)
	model := opt.Models[0]
	checkParams(t, recs[0], opt.Models)
	if got := recs[0].Config["threads"]; got != 1.0 {
		t.Errorf("header config threads %v, want 1", got)
	}
	var steps []float64
	oom := 0
	for _, r := range recs[1:] {
		if r.Run != opt.Run || r.Model != model {
			t.Errorf("record of run %q, model %q; want %q, %q", r.Run, r.Model, opt.Run, model)
		}
		if oom != 0 {
			t.Errorf("%s record at batch %d after the oom record", r.Kind, r.Batch)
		}
		switch r.Kind {
		case benchlog.KindStep:
			if r.Step != len(steps)+1 {
				t.Errorf("step record %d, want %d", r.Step, len(steps)+1)
			}
			steps = append(steps, r.StepTime)
		case benchlog.KindMeasurement:
			checkMeasurement(t, r, model, 1, opt.Steps)
			if len(steps) != opt.Steps {
				t.Fatalf("batch %d: %d step records, want %d", r.Batch, len(steps), opt.Steps)
			}
			// The summary against the step records, recomputed here.
			mean, std := stat.MeanStdDev(steps, nil)
			if math.Abs(r.StepTime-mean) > 1e-9*mean || math.Abs(r.StepTimeStd-std) > 1e-6*mean {
				t.Errorf("batch %d: mean %v sd %v, step records give %v sd %v", r.Batch, r.StepTime, r.StepTimeStd, mean, std)
			}
			bs = append(bs, float64(r.Batch))
			fastest = append(fastest, slices.Min(steps))
			steps = nil
		case benchlog.KindOOM:
			oom = r.Batch
			if r.GlobalBatch != r.Batch || r.Precision != "fp32" || !strings.Contains(r.Error, "out of memory") {
				t.Errorf("oom record %+v", r)
			}
		default:
			t.Errorf("unexpected %s record %+v", r.Kind, r)
		}
	}
	if !slices.Equal(bs, measured) || oom != wantOOM {
		t.Fatalf("measured batches %v, out of memory at %d; want %v, %d", bs, oom, measured, wantOOM)
	}
	return bs, fastest
}

// lawProblem fits the throughput law to the fastest step of each batch
// and says what is wrong with the fit, or "" if nothing: the largest
// batch (4 or 16 times the smallest in TestRunCPU) must take longer than
// the smallest, v0 must be positive and finite, and the law must give
// every batch's step within 50 % (loose, for a shared machine, but
// records that do not follow b/(b/v0 + t) at all miss it).
func lawProblem(bs, fastest []float64) (v0, tFixed float64, problem string) {
	if last := len(bs) - 1; !(fastest[last] > fastest[0]) {
		return 0, 0, fmt.Sprintf("fastest step %v s at batch %v, %v s at batch %v: want longer steps for the larger batch", fastest[last], bs[last], fastest[0], bs[0])
	}
	v0, tFixed = fitLaw(bs, fastest)
	if !(v0 > 0) || math.IsInf(v0, 0) || math.IsInf(tFixed, 0) {
		return v0, tFixed, fmt.Sprintf("fit of %v s/step at batches %v: v0 %v, t %v; want v0 > 0, both finite", fastest, bs, v0, tFixed)
	}
	for i, b := range bs {
		if law := tFixed + b/v0; math.Abs(fastest[i]-law) > 0.5*law {
			return v0, tFixed, fmt.Sprintf("batch %v: fastest step %v s, the fitted law gives %v s", b, fastest[i], law)
		}
	}
	return v0, tFixed, ""
}

// TestRunDDP trains the CNN on two CPU workers with gloo. Worker 1 is
// told that batch 32 does not fit (TORCHBENCH_TEST_OOM=32:1): worker 0
// must learn it and write the oom record.
func TestRunDDP(t *testing.T) {
	opt := cpuOptions(t, Options{Models: []string{"cnn"}, Batches: []int{16, 32, 64}, Steps: 3, Warmup: 1, NProc: 2,
		Env: []string{"TORCHBENCH_TEST_OOM=32:1"}})
	recs, lines := runLog(t, opt)
	if w := recs[0].Config["workers"]; w != 2.0 {
		t.Errorf("header config workers %v, want 2", w)
	}
	if l := recs[0].Config["launcher"]; l != "torchrun" && l != "spawn" {
		t.Errorf("header config launcher %v, want torchrun or spawn", l)
	}
	if len(recs) != 3 || recs[1].Kind != benchlog.KindMeasurement || recs[2].Kind != benchlog.KindOOM {
		t.Fatalf("records %+v: want header, measurement, oom", recs)
	}
	r := recs[1]
	checkMeasurement(t, r, "cnn", 2, 3)
	if r.Transport != "gloo" || r.Batch != 16 || r.GlobalBatch != 32 || r.Nodes != 1 || r.DevicesPerNode != 2 {
		t.Errorf("transport %q, batch %d, global batch %d, %d nodes of %d; want gloo, 16, 32, 1 node of 2",
			r.Transport, r.Batch, r.GlobalBatch, r.Nodes, r.DevicesPerNode)
	}
	// allreduce_s is written even when the estimate is 0.
	var raw struct{ Phases map[string]float64 }
	if err := json.Unmarshal(lines[1], &raw); err != nil {
		t.Fatal(err)
	}
	if ar, ok := raw.Phases["allreduce_s"]; !ok || ar < 0 || ar > r.StepTime {
		t.Errorf("phases %v: want allreduce_s in [0, step_time_s %v]", raw.Phases, r.StepTime)
	}
	o := recs[2]
	if o.Batch != 32 || o.GlobalBatch != 64 || o.Workers != 2 || o.Error != "out of memory on another worker" {
		t.Errorf("oom record %+v: want batch 32, global batch 64, 2 workers, out of memory on another worker", o)
	}
}

// TestRunDiverged checks that a configuration whose loss stops being finite
// is not timed as if it were the model's step: the script fails it
// (TORCHBENCH_TEST_NAN makes the MLP's loss nan from batch 32 on) and the
// run's error says at which batch. A diverged Mask R-CNN runs its heads on
// the ground truth's boxes alone.
func TestRunDiverged(t *testing.T) {
	opt := cpuOptions(t, Options{Models: []string{"mlp"}, Batches: []int{16, 32, 64}, Steps: 2, Warmup: 1, Threads: 1,
		Env: []string{"TORCHBENCH_TEST_NAN=32"}})
	err := Run(t.Context(), opt, filepath.Join(t.TempDir(), "out.jsonl"), nil)
	if err == nil || !strings.Contains(err.Error(), "training diverged at batch 32: the loss is not finite") {
		t.Errorf("error %v, want the divergence at batch 32", err)
	}
}

// TestRunAllModels trains every other model for one step at a tiny size:
// it checks that each builds, trains and is the size published.
func TestRunAllModels(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: about 20 s of CPU training")
	}
	models := []string{"resnet50", "efficientnet-b4", "maskrcnn-r50-fpn", "transformer-base", "mlp", "gpt3-125m", "bert-base-squad"}
	opt := cpuOptions(t, Options{Models: models, ImageSize: 64, SeqLen: 8, Batches: []int{1}, Steps: 1, Warmup: -1})
	recs, _ := runLog(t, opt)
	checkParams(t, recs[0], models)
	var got []string
	for _, r := range recs[1:] {
		if r.Kind != benchlog.KindMeasurement {
			t.Errorf("unexpected %s record %+v", r.Kind, r)
			continue
		}
		checkMeasurement(t, r, r.Model, 1, 1)
		got = append(got, r.Model)
	}
	if !slices.Equal(got, models) {
		t.Errorf("measured %v, want %v", got, models)
	}
	if l := recs[4].Labels; l["input"] != "2x8 tokens" || l["sample"] != "sentence-pair" {
		t.Errorf("transformer-base labels %v", l)
	}
	// A GPT sample is one sequence, its length a label of its own; the
	// attention label says whether torch had the fused kernel.
	if l := recs[6].Labels; l["input"] != "8 tokens" || l["seq_len"] != "8" || (l["attention"] != "" && l["attention"] != "sdpa") {
		t.Errorf("gpt3-125m labels %v", l)
	}
	// Mask R-CNN's records say how many positive RoIs an image its mask
	// head ran on.
	if n, err := strconv.Atoi(recs[3].Labels["positive_rois"]); err != nil || n < 1 || n > 512 {
		t.Errorf("maskrcnn-r50-fpn labels %v: want positive_rois from 1 to 512", recs[3].Labels)
	}
	// BERT's attention runs unfused, as run_squad.py's.
	if l := recs[7].Labels; l["input"] != "8 tokens" || l["seq_len"] != "8" || l["attention"] != "" {
		t.Errorf("bert-base-squad labels %v", l)
	}
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		opt  Options
		want []string // substrings of the error; none for a valid Options
	}{
		{Options{}, nil},
		{Options{Models: []string{"cnn", "transformer-base"}, Batches: []int{1, 2}, Precision: "fp32,amp-bf16", Device: "cpu", DataDir: ""}, nil},
		{Options{Models: []string{"resnet51"}}, []string{`unknown model "resnet51"; did you mean "resnet50"? (valid: resnet50, resnet18, efficientnet-b4, maskrcnn-r50-fpn, transformer-base, bert-base-squad, bert-large-squad, gpt3-125m, gpt3-350m, gpt3-760m, gpt3-1.3b, mlp, cnn)`}},
		{Options{Models: []string{"alexnet"}}, []string{`unknown model "alexnet" (valid: resnet50, resnet18,`}},
		{Options{Batches: []int{8, 0, -4}}, []string{"batch 0: must be > 0", "batch -4: must be > 0"}},
		{Options{Precision: "fp16"}, []string{`unknown precision "fp16" (valid: fp32, tf32, amp-fp16, amp-bf16)`}},
		{Options{Precision: "fp32,amp-fp16", Device: "cpu"}, []string{"precision amp-fp16 needs a CUDA device"}},
		{Options{Device: "tpu"}, []string{`unknown device "tpu" (valid: auto, cpu, cuda)`}},
		{Options{Steps: -1, NProc: -2, ImageSize: 16, SeqLen: -1, Threads: -1}, []string{"steps -1", "nproc -2", "image size 16", "sequence length -1", "threads -1"}},
		{Options{DataDir: filepath.Join(dir, "none")}, []string{"data dir: stat", "no such file"}},
		{Options{DataDir: file}, []string{"not a directory"}},
		{Options{Models: []string{"cnn", "transformer-base"}, DataDir: dir}, []string{"model transformer-base is not an image classifier"}},
		{Options{Env: []string{"A=1", "B"}}, []string{`environment entry "B": want KEY=VALUE`}},
		{Options{Nodes: 2, NodeRank: 1, MasterAddr: "10.0.0.1", MasterPort: 29400, Backend: "gloo", Device: "cpu", Timeout: time.Minute}, nil},
		{Options{Nodes: 2, NodeRank: 2, MasterAddr: "n0"}, []string{"node rank 2: must be from 0 to 1, one less than the 2 nodes"}},
		{Options{NodeRank: 1}, []string{"node rank 1: must be 0 on one node"}},
		{Options{Nodes: -1}, []string{"nodes -1: must be >= 1"}},
		{Options{Nodes: 2}, []string{"2 nodes need the master address"}},
		{Options{MasterPort: 65536}, []string{"master port 65536: must be from 1 to 65535 (0 for 29500 with several nodes, a free port on one)"}},
		{Options{MasterPort: -1, MasterAddr: "a b"}, []string{"master port -1", `master address "a b": want a host name or an IP address`}},
		{Options{Models: []string{"gpt3-350m"}, SeqLen: 2048}, nil},
		{Options{Models: []string{"bert-large-squad"}, SeqLen: 1024}, []string{"sequence length 1024: model bert-large-squad takes at most 512 tokens, BERT's positions"}},
		{Options{Models: []string{"transformer-base", "gpt3-350m"}, SeqLen: 4096}, []string{"sequence length 4096: model gpt3-350m takes at most 2048 tokens, GPT-3's context"}},
		{Options{Backend: "mpi"}, []string{`unknown backend "mpi" (valid: auto, nccl, gloo)`}},
		{Options{Backend: "nccl", Device: "cpu"}, []string{"backend nccl needs CUDA devices; on the CPU use gloo"}},
		{Options{Timeout: -time.Second}, []string{"timeout -1s: must be >= 0"}},
	} {
		err := tc.opt.Validate()
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%+v: %v", tc.opt, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%+v: no error, want %q", tc.opt, tc.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), "torchbench: ") {
			t.Errorf("error %q: want the torchbench: prefix", err)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: error %q, want it to contain %q", tc.opt, err, w)
			}
		}
	}
}

func TestArgs(t *testing.T) {
	for _, tc := range []struct {
		opt  Options
		want string
	}{
		{Options{}, ""},
		{Options{Warmup: -1}, "--warmup 0"},
		{Options{Models: []string{"cnn", "mlp"}, Batches: []int{16, 1024}, Precision: "fp32, amp-bf16", Steps: 5, Warmup: 2,
			ChannelsLast: true, Compile: true, NProc: 2, Device: "cpu", ImageSize: 64, SeqLen: 32, Threads: 2,
			StepRecords: true, Run: "r1"},
			"--model cnn,mlp --batch 16,1024 --precision fp32,amp-bf16 --steps 5 --warmup 2 --channels-last --compile " +
				"--nproc 2 --device cpu --image-size 64 --seq-len 32 --threads 2 --step-records --run r1"},
		{Options{NProc: 4, Nodes: 2, NodeRank: 1, MasterAddr: "10.0.0.1", MasterPort: 29400, Backend: "nccl", Timeout: 90*time.Second + 1},
			"--nproc 4 --nodes 2 --node-rank 1 --master-addr 10.0.0.1 --master-port 29400 --backend nccl --dist-timeout 91"},
	} {
		args, err := tc.opt.Args()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(args, " "); got != tc.want {
			t.Errorf("%+v: args %q, want %q", tc.opt, got, tc.want)
		}
	}
}

// anyPython returns a Python 3, with or without torch, or skips.
func anyPython(t *testing.T) string {
	for _, c := range []string{"python3", "/usr/bin/python3"} {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	t.Skip("skipping: no python3")
	return ""
}

// TestScriptLists checks that the script and the package agree on the
// models and precisions; the lists need no torch.
func TestScriptLists(t *testing.T) {
	python := anyPython(t)
	path := filepath.Join(t.TempDir(), "torchbench.py")
	if err := os.WriteFile(path, Script(), 0o644); err != nil {
		t.Fatal(err)
	}
	for flag, want := range map[string][]string{"--list-models": Models(), "--list-precisions": Precisions()} {
		out, err := exec.Command(python, path, flag).Output()
		if err != nil {
			t.Fatalf("%s %s: %v", python, flag, err)
		}
		if got := strings.Fields(string(out)); !slices.Equal(got, want) {
			t.Errorf("script %s: %v, package: %v", flag, got, want)
		}
	}
}

// TestAttentionFLOPs checks the FLOPs the script gives the fused attention
// operators torch.profiler leaves uncounted against the closed form: the
// two products of b·h·s_q·s_k·d multiply-adds each, 4·b·h·s_q·s_k·d, in
// either layout of the query (heads before or after the tokens), 2.5 times
// that for a backward operator, and none for another operator or shapes
// it cannot read. It needs no torch.
func TestAttentionFLOPs(t *testing.T) {
	python := anyPython(t)
	path := filepath.Join(t.TempDir(), "torchbench.py")
	if err := os.WriteFile(path, Script(), 0o644); err != nil {
		t.Fatal(err)
	}
	const b, h, s, d = 2, 12, 1024, 64
	for _, c := range []struct {
		name, shapes string
		want         float64
	}{
		{"aten::_scaled_dot_product_flash_attention", "[[2,12,1024,64],[2,12,1024,64],[2,12,1024,64]]", 4 * b * h * s * s * d},
		{"aten::_flash_attention_forward", "[[2,1024,12,64],[2,1024,12,64],[2,1024,12,64]]", 4 * b * h * s * s * d},
		{"aten::_scaled_dot_product_flash_attention_backward", "[[2,12,1024,64],[2,12,1024,64],[2,12,1024,64]]", 2.5 * 4 * b * h * s * s * d},
		{"aten::_efficient_attention_backward", "[[2,1024,12,64],[2,1024,12,64],[2,1024,12,64]]", 2.5 * 4 * b * h * s * s * d},
		// Cross attention: 100 queries over 300 keys.
		{"aten::_scaled_dot_product_efficient_attention", "[[1,8,100,64],[1,8,300,64],[1,8,300,64]]", 4 * 8 * 100 * 300 * 64},
		{"aten::mm", "[[2,3],[3,4]]", 0},
		{"aten::_flash_attention_forward", "[[2,1024,12],[2,1024,12,64]]", 0},
		{"aten::_scaled_dot_product_flash_attention", "[]", 0},
	} {
		code := "import importlib.util as u\ns = u.spec_from_file_location('tb', " + strconv.Quote(path) + ")\n" +
			"m = u.module_from_spec(s)\ns.loader.exec_module(m)\nprint(repr(m.attention_flops(" + strconv.Quote(c.name) + ", " + c.shapes + ")))"
		out, err := exec.Command(python, "-c", code).Output()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
		if err != nil || got != c.want {
			t.Errorf("%s %s: %q (%v), want %v", c.name, c.shapes, out, err, c.want)
		}
	}
}

// fake writes a shell script standing in for python: it passes the torch
// probe and, run as the bench, copies log (if any) to the path after
// --out, writes stderr to its stderr and exits with rc.
func fake(t *testing.T, log, stderr string, rc int) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("skipping: needs a POSIX shell")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "log"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	sh := "#!/bin/sh\nif [ \"$1\" = -c ]; then exit 0; fi\nfor last; do :; done\n"
	if log != "" {
		sh += "cat \"$(dirname \"$0\")/log\" > \"$last\"\n"
	}
	if stderr != "" {
		sh += "echo '" + stderr + "' >&2\n"
	}
	sh += "exit " + string(rune('0'+rc)) + "\n"
	path := filepath.Join(dir, "python3")
	if err := os.WriteFile(path, []byte(sh), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

const (
	goodHeader = `{"kind":"header","run":"r","tool":"torchbench","machine":{"cpu":"x","cores":2}}` + "\n"
	goodMeas   = `{"kind":"measurement","run":"r","model":"cnn","device":"cpu","workers":1,"batch":16,"global_batch":16,"steps":5,"step_time_s":0.05,"samples_per_s":320}` + "\n"
)

// TestRunKeepsOut checks that Run moves a good log into place and that
// any failure, of the script or of a record, leaves the old file as it
// was and no temporary file behind.
func TestRunKeepsOut(t *testing.T) {
	const old = "the previous log\n"
	for _, tc := range []struct {
		name        string
		log, stderr string
		rc          int
		want        string // substring of the error; "" for success
	}{
		{"ok", goodHeader + goodMeas, "", 0, ""},
		{"exit", goodHeader, "torchbench: error: --steps 0: must be >= 1", 2, "exit status 2: torchbench: error: --steps 0: must be >= 1"},
		{"unknown field", goodHeader + strings.Replace(goodMeas, `"steps"`, `"stepz"`, 1), "", 0, `line 2: json: unknown field "stepz"`},
		{"negative", goodHeader + strings.Replace(goodMeas, `0.05`, `-0.05`, 1), "", 0, "step_time_s = -0.05: must be a finite number >= 0"},
		{"no header", goodMeas, "", 0, `first record is a "measurement"`},
		{"two headers", goodHeader + goodMeas + goodHeader, "", 0, "line 3: a second header"},
		{"no results", goodHeader, "", 0, "no measurement or oom record"},
		{"empty", "", "", 0, "the script wrote no log"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			python := fake(t, tc.log, tc.stderr, tc.rc)
			dir := t.TempDir()
			out := filepath.Join(dir, "out.jsonl")
			if err := os.WriteFile(out, []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
			err := Run(t.Context(), Options{Python: python, Models: []string{"cnn"}}, out, nil)
			got, _ := os.ReadFile(out)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Run: %v", err)
			case tc.want == "" && string(got) != tc.log:
				t.Errorf("out holds %q, want %q", got, tc.log)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			case tc.want != "" && string(got) != old:
				t.Errorf("out holds %q after a failed run, want %q", got, old)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("%d entries in the output directory, want 1 (no temporary file left)", len(ents))
			}
		})
	}
}

// TestRunOtherNode checks that Run on a node of rank above 0, whose
// script writes no log (node rank 0 writes the cluster's), succeeds and
// leaves out as it was, and that a failure of that node is an error.
func TestRunOtherNode(t *testing.T) {
	const old = "the previous log\n"
	opt := Options{Models: []string{"cnn"}, Nodes: 2, NodeRank: 1, MasterAddr: "n0"}
	for _, tc := range []struct {
		rc   int
		want string
	}{{0, ""}, {1, "exit status 1"}} {
		out := filepath.Join(t.TempDir(), "out.jsonl")
		if err := os.WriteFile(out, []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
		opt.Python = fake(t, "", "", tc.rc)
		err := Run(t.Context(), opt, out, nil)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("script exit %d: error %v, want %q", tc.rc, err, tc.want)
		}
		if got, _ := os.ReadFile(out); string(got) != old {
			t.Errorf("script exit %d: out holds %q, want %q", tc.rc, got, old)
		}
	}
	opt.Python = fake(t, "", "", 0)
	if err := Run(t.Context(), opt, "", nil); err != nil {
		t.Errorf("no output path on node rank 1: %v", err)
	}
}

// TestRunRealFailure forces a bad option through to the real script.
func TestRunRealFailure(t *testing.T) {
	python := needPython(t)
	out := filepath.Join(t.TempDir(), "out.jsonl")
	const old = "the previous log\n"
	if err := os.WriteFile(out, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := Options{Python: python, Models: []string{"cnn"}, extraArgs: []string{"--steps", "0"}}
	err := Run(t.Context(), opt, out, nil)
	if err == nil || !strings.Contains(err.Error(), "--steps 0: must be >= 1") {
		t.Errorf("error %v, want the script's complaint about --steps 0", err)
	}
	if got, _ := os.ReadFile(out); string(got) != old {
		t.Errorf("out holds %q after a failed run, want %q", got, old)
	}
}

func TestRunBadOptions(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.jsonl")
	err := Run(t.Context(), Options{Models: []string{"resnet51"}}, out, nil)
	if err == nil || !strings.Contains(err.Error(), `unknown model "resnet51"`) || !strings.Contains(err.Error(), "(valid: resnet50, resnet18,") {
		t.Errorf("error %v, want the unknown model and the valid ones", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("out exists after bad options: %v", err)
	}
	if err := Run(t.Context(), Options{}, "", nil); err == nil {
		t.Error("no error for an empty output path")
	}
}

func TestFindPython(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("skipping: needs a POSIX shell")
	}
	dir := t.TempDir()
	noTorch := filepath.Join(dir, "notorch")
	err := os.WriteFile(noTorch, []byte("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'torch'\" >&2\nexit 1\n"), 0o755)
	if err != nil {
		t.Fatal(err)
	}
	bogus := filepath.Join(dir, "nonexistent", "python3")

	// The real fallbacks: a bogus interpreter gives way to one with torch.
	if got, err := FindPython(bogus); err == nil {
		if got == bogus {
			t.Errorf("FindPython(%s) = %s", bogus, got)
		}
	} else if !strings.Contains(err.Error(), bogus+" (not found)") || !strings.Contains(err.Error(), "install Debian's python3-torch") {
		t.Errorf("FindPython(%s): error %v, want the bogus path and what to install", bogus, err)
	}

	saved := fallbacks
	defer func() { fallbacks = saved }()
	fallbacks = []string{bogus}
	_, err = FindPython("", noTorch)
	want := "torchbench: no python3 with torch found (tried " + noTorch + " (ModuleNotFoundError: No module named 'torch'), " +
		bogus + " (not found)): install Debian's python3-torch and python3-torchvision, or pip install torch torchvision"
	if err == nil || err.Error() != want {
		t.Errorf("FindPython error:\n%v\nwant\n%s", err, want)
	}

	good := fake(t, "", "", 0)
	if got, err := FindPython(noTorch, good); err != nil || got != good {
		t.Errorf("FindPython(notorch, good) = %q, %v; want %q", got, err, good)
	}
}

// TestCommittedLogs reads the logs measured on the development machine
// (testdata/cpu-*.jsonl, quoted in docs/torchbench.md): every record must
// pass benchlog's reader, and the fits of their mean step times must give
// the figures the documentation quotes.
func TestCommittedLogs(t *testing.T) {
	for _, tc := range []struct {
		file, model string
		records     int
		v0, t       float64 // as quoted in docs/torchbench.md
	}{
		{"cpu-cnn-mlp.jsonl", "cnn", 15, 797.4, 0.0276},
		{"cpu-cnn-mlp.jsonl", "mlp", 15, 9539.8, 0.0073},
		{"cpu-resnet18-64.jsonl", "resnet18", 7, 111.3, 0.0882},
		{"cpu-cnn-ddp2.jsonl", "cnn", 6, 986.7, 0.0402},
	} {
		f, err := os.Open(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		r := benchlog.NewReader(f)
		var bs, steps []float64
		n := 0
		for {
			rec, err := r.Next()
			if err != nil {
				if err != io.EOF {
					t.Errorf("%s: %v", tc.file, err)
				}
				break
			}
			n++
			if n == 1 && (rec.Kind != benchlog.KindHeader || rec.Tool != "torchbench") {
				t.Errorf("%s: first record %+v, want the torchbench header", tc.file, rec)
			}
			if rec.Kind == benchlog.KindMeasurement && rec.Model == tc.model {
				bs = append(bs, float64(rec.GlobalBatch))
				steps = append(steps, rec.StepTime)
			}
		}
		f.Close()
		if n != tc.records {
			t.Errorf("%s: %d records, want %d", tc.file, n, tc.records)
		}
		v0, tFixed := fitLaw(bs, steps)
		if math.Abs(v0-tc.v0) > 0.001*tc.v0 || math.Abs(tFixed-tc.t) > 0.00006 {
			t.Errorf("%s %s: v0 %.1f, t %.4f; docs say %.1f, %.4f", tc.file, tc.model, v0, tFixed, tc.v0, tc.t)
		}
	}
}

// TestRunCancel checks that cancelling the context stops the script and
// the processes it started, and leaves out alone.
func TestRunCancel(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("skipping: needs a POSIX shell")
	}
	dir := t.TempDir()
	python := filepath.Join(dir, "python3")
	// The probe passes; the bench starts a child that would sleep a minute.
	sh := "#!/bin/sh\nif [ \"$1\" = -c ]; then exit 0; fi\nsleep 60 &\nwait\n"
	if err := os.WriteFile(python, []byte(sh), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.jsonl")
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := Run(ctx, Options{Python: python}, out, nil)
	if err == nil || !strings.Contains(err.Error(), "context deadline exceeded") {
		t.Errorf("error %v, want the context's", err)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("Run returned %v after the deadline, want at once", d)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("out exists after a cancelled run: %v", err)
	}
}

// TestInterrupted stops the script with SIGTERM once it has measured a
// batch, as timeout(1) or a batch scheduler's time limit would, and checks
// that it writes what it measured: a valid log whose header says where it
// stopped, and exits with status 1.
func TestInterrupted(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("skipping: needs SIGTERM")
	}
	python := needPython(t)
	out := filepath.Join(t.TempDir(), "log.jsonl")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "torchbench.py", "--device", "cpu", "--threads", "1",
		"--model", "mlp", "--batch", "16,32,65536,131072", "--steps", "3", "--warmup", "1",
		"--run", "interrupted", "--out", out)
	cmd.Env = append(os.Environ(), "OMP_WAIT_POLICY=PASSIVE")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var progress strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(progress.String(), "mlp fp32 batch 32 x1:") {
		n, err := stderr.Read(buf)
		progress.Write(buf[:n])
		if err != nil {
			t.Fatalf("the script ended before measuring batch 32: %v\n%s", err, progress.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(stderr)
	progress.Write(rest)
	err = cmd.Wait()
	t.Logf("progress:\n%s", progress.String())
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("exit %v, want status 1", err)
	}
	if !strings.Contains(progress.String(), "interrupted by SIGTERM during mlp fp32") {
		t.Errorf("progress does not say it was interrupted")
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var batches []int
	for i, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		rec, err := benchlog.Decode(line)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		switch {
		case i == 0:
			if got, _ := rec.Config["interrupted"].(string); rec.Kind != benchlog.KindHeader || got != "SIGTERM during mlp fp32" {
				t.Errorf("header %v, config.interrupted %q: want the header saying SIGTERM during mlp fp32", rec.Kind, got)
			}
		case rec.Kind == benchlog.KindMeasurement:
			batches = append(batches, rec.Batch)
		}
	}
	if len(batches) < 2 || batches[0] != 16 || batches[1] != 32 {
		t.Errorf("measured batches %v, want 16 and 32 first", batches)
	}
}

// TestRunInterruptedKeepsLog cancels a run whose script, like the real
// one, writes the batches it finished when SIGTERM stops it: Run keeps
// that log in out and returns an error wrapping ErrInterrupted. A script
// that writes nothing leaves out as it was (TestRunCancel).
func TestRunInterruptedKeepsLog(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("skipping: needs a POSIX shell")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "log"), []byte(goodHeader+goodMeas), 0o644); err != nil {
		t.Fatal(err)
	}
	// The probe passes; the bench waits, and on SIGTERM writes its log to
	// the path after --out (the last argument) and exits 1.
	sh := "#!/bin/sh\nif [ \"$1\" = -c ]; then exit 0; fi\nfor last; do :; done\n" +
		"trap 'cat \"" + filepath.Join(dir, "log") + "\" > \"$last\"; exit 1' TERM\n" +
		"echo started >&2\nwhile :; do sleep 0.05; done\n"
	python := filepath.Join(dir, "python3")
	if err := os.WriteFile(python, []byte(sh), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.jsonl")
	if err := os.WriteFile(out, []byte("the previous log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	err := Run(ctx, Options{Python: python}, out, nil)
	if !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "the log holds the 1 measurement or out-of-memory record made") {
		t.Errorf("error %v, want one wrapping ErrInterrupted with 1 record", err)
	}
	b, rerr := os.ReadFile(out)
	if rerr != nil || string(b) != goodHeader+goodMeas {
		t.Errorf("out %q (%v), want the script's log", b, rerr)
	}
}

// TestGPUSweepScript runs scripts/torchbench-gpu.sh with stand-ins for
// python and nvidia-smi, and checks the groups of each sweep, the
// arguments each passes to torchbench.py, and that an unknown sweep is
// refused with the valid ones.
func TestGPUSweepScript(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("skipping: needs a POSIX shell")
	}
	if _, err := exec.LookPath("timeout"); err != nil {
		t.Skip("skipping: no timeout(1)")
	}
	bin := t.TempDir()
	py := "#!/bin/sh\nif [ \"$1\" = -c ]; then echo python x torch y; exit 0; fi\n" +
		"out=/dev/stdout\nprev=\nfor a; do if [ \"$prev\" = --out ]; then out=$a; fi; prev=$a; done\necho \"$*\" > \"$out\"\n"
	for name, body := range map[string]string{"python3": py, "nvidia-smi": "#!/bin/sh\necho stand-in GPU\n"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script, err := filepath.Abs("../../scripts/torchbench-gpu.sh")
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		cmd := exec.Command("sh", append([]string{script}, args...)...)
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "PYTHON="+filepath.Join(bin, "python3"))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for sweep, want := range map[string]map[string]string{
		"first": {
			"mlp-cnn":            "--model mlp,cnn --batch 16,32,64,128,256,512,1024,2048,4096,8192 --precision fp32,amp-fp16",
			"resnet50":           "--model resnet50 --batch 8,16,32,64,128,256,512,1024,2048,4096 --precision fp32,amp-fp16",
			"transformer-base":   "--model transformer-base --seq-len 128",
			"efficientnet-b4":    "--model efficientnet-b4 --batch 4,8,16,32,64,128,256,512,1024",
			"resnet50-tf32-bf16": "--precision tf32,amp-bf16",
			"maskrcnn-r50-fpn":   "--model maskrcnn-r50-fpn --batch 1,2,4,8,16,32,64",
		},
		"tuned": {
			"resnet50-cl-amp-fp16":         "--model resnet50 --channels-last --batch 16,32,64,128,256,512,1024,2048,4096 --precision amp-fp16",
			"resnet50-cl-amp-bf16":         "--model resnet50 --channels-last --batch 16,32,64,128,256,512,1024,2048,4096 --precision amp-bf16",
			"maskrcnn-r50-fpn-amp-fp16":    "--model maskrcnn-r50-fpn --batch 1,2,4,8,16,32 --precision amp-fp16",
			"efficientnet-b4-cl-amp-fp16":  "--model efficientnet-b4 --channels-last",
			"transformer-base-amp-bf16":    "--model transformer-base --seq-len 128",
			"resnet50-cl-amp-fp16-compile": "--model resnet50 --channels-last --compile --batch 256,512",
		},
		"one": {
			"resnet50":                    "--model resnet50 --batch 8,16,32,64,128,256,512,1024,2048,4096 --precision fp32,amp-fp16",
			"resnet50-cl-amp-fp16":        "--model resnet50 --channels-last --batch 16,32,64,128,256,512,1024,2048,4096 --precision amp-fp16",
			"transformer-base":            "--model transformer-base --seq-len 128 --batch 8,16,32,64,128,256,512,1024,2048 --precision fp32,amp-fp16",
			"efficientnet-b4":             "--model efficientnet-b4 --batch 4,8,16,32,64,128,256,512 --precision fp32",
			"efficientnet-b4-cl-amp-fp16": "--model efficientnet-b4 --channels-last --batch 16,32,64,128,256,512 --precision amp-fp16",
			"maskrcnn-r50-fpn-amp-fp16":   "--model maskrcnn-r50-fpn --batch 1,2,4,8,16,32 --precision amp-fp16",
			"cnn":                         "--model cnn --batch 16,32,64,128,256,512,1024,2048,4096,8192 --precision fp32",
		},
		"rest": {
			"resnet50-tf32":             "--model resnet50 --batch 8,16,32,64,128,256,512,1024,2048,4096 --precision tf32",
			"resnet50-cl-amp-bf16":      "--model resnet50 --channels-last --batch 16,32,64,128,256,512,1024,2048,4096 --precision amp-bf16",
			"transformer-base-amp-bf16": "--model transformer-base --seq-len 128 --batch 8,16,32,64,128,256,512,1024,2048 --precision amp-bf16",
			"mlp":                       "--model mlp --batch 16,32,64,128,256,512,1024,2048,4096,8192 --precision fp32,amp-fp16",
		},
		"profile": {
			"resnet50-amp-fp16-prof":         "--model resnet50 --batch 256 --precision amp-fp16 --profile",
			"resnet50-cl-amp-fp16-prof":      "--model resnet50 --channels-last --batch 256 --precision amp-fp16 --profile",
			"resnet50-tf32-prof":             "--model resnet50 --batch 256 --precision tf32 --profile",
			"transformer-base-amp-fp16-prof": "--model transformer-base --seq-len 128 --batch 256 --precision amp-fp16 --profile",
			"gpt3-125m-amp-bf16-prof":        "--model gpt3-125m --seq-len 1024 --batch 8 --precision amp-bf16 --profile",
			"gpt3-350m-amp-bf16-prof":        "--model gpt3-350m --seq-len 1024 --batch 8 --precision amp-bf16 --profile",
			"bert-large-squad-amp-fp16-prof": "--model bert-large-squad --seq-len 384 --batch 32 --precision amp-fp16 --profile",
		},
		"residual": {
			"mlp-prof":                    "--model mlp --batch 16,8192 --precision fp32,amp-fp16 --profile",
			"cnn-prof":                    "--model cnn --batch 16,8192 --precision fp32,amp-fp16 --profile",
			"resnet50-fp32-prof":          "--model resnet50 --batch 256 --precision fp32 --profile",
			"efficientnet-b4-fp32-prof":   "--model efficientnet-b4 --batch 64 --precision fp32 --profile",
			"transformer-base-small-prof": "--model transformer-base --seq-len 128 --batch 8 --precision amp-fp16 --profile",
			"transformer-base-small-1":    "--model transformer-base --seq-len 128 --batch 8,16,32 --precision amp-fp16,amp-bf16",
			"transformer-base-small-2":    "--model transformer-base --seq-len 128 --batch 8,16,32 --precision amp-fp16,amp-bf16",
		},
		"maskrcnn": {
			"maskrcnn-r50-fpn-amp-fp16": "--model maskrcnn-r50-fpn --batch 1,2,4,8,16,32 --precision amp-fp16",
			"maskrcnn-r50-fpn":          "--model maskrcnn-r50-fpn --batch 1,2,4,8 --precision fp32",
		},
		"squad": {
			"bert-large-squad": "--model bert-large-squad --seq-len 384 --batch 8,16,32,64,112,128,256 --precision amp-fp16,tf32",
			"bert-base-squad":  "--model bert-base-squad --seq-len 384 --batch 16,32,64,128,172,256,320,512 --precision amp-fp16,tf32",
		},
		"gpt": {
			"gpt3-125m-amp-bf16": "--model gpt3-125m --seq-len 2048 --batch 1,2,4,8,16,32,64 --precision amp-bf16",
			"gpt3-125m-tf32":     "--model gpt3-125m --seq-len 2048 --batch 1,2,4,8,16,32 --precision tf32",
			"gpt3-350m-amp-bf16": "--model gpt3-350m --seq-len 2048 --batch 1,2,4,8,16,32,64 --precision amp-bf16",
			"gpt3-760m-amp-bf16": "--model gpt3-760m --seq-len 2048 --batch 1,2,4,8,16,32 --precision amp-bf16",
			"gpt3-1.3b-amp-bf16": "--model gpt3-1.3b --seq-len 2048 --batch 1,2,4,8,16,32 --precision amp-bf16",
		},
	} {
		dir := filepath.Join(t.TempDir(), sweep)
		if out, err := run(dir, "r", sweep); err != nil {
			t.Fatalf("%s: %v\n%s", sweep, err, out)
		}
		logs, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		if len(logs) != len(want) {
			t.Errorf("%s: %d logs %v, want %d", sweep, len(logs), logs, len(want))
		}
		for name, args := range want {
			b, err := os.ReadFile(filepath.Join(dir, name+".jsonl"))
			if err != nil {
				t.Errorf("%s: %v", sweep, err)
				continue
			}
			got := string(b)
			for _, w := range []string{"engine/torchbench/torchbench.py --device cuda --nproc 1 --warmup 3 --steps 10 --run r-" + name, args} {
				if !strings.Contains(got, w) {
					t.Errorf("%s %s: arguments %q lack %q", sweep, name, got, w)
				}
			}
		}
		if b, err := os.ReadFile(filepath.Join(dir, "torch-host.csv")); err != nil || !strings.Contains(string(b), "engine/torchbench/torchhost.py") {
			t.Errorf("%s: torch-host.csv %q (%v): want engine/torchbench/torchhost.py's output", sweep, b, err)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "machine.txt")); err != nil || strings.Count(string(b), "stand-in GPU") < 3 {
			t.Errorf("%s: machine.txt %q (%v): want nvidia-smi before and after", sweep, b, err)
		}
	}
	dir := filepath.Join(t.TempDir(), "x")
	out, err := run(dir, "r", "fast")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(out, `unknown sweep "fast" (first, tuned, one, rest, profile, gpt, squad, maskrcnn, residual)`) {
		t.Errorf("unknown sweep: %v: %s", err, out)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("unknown sweep made %s (%v)", dir, err)
	}
}

// TestMaskRCNNDiverges runs scripts/maskrcnn-diverge.py, the check behind
// the script's Mask R-CNN optimizer, on 256×256 images for three steps:
// with the first optimizer (momentum SGD at 0.01 from the first step) the
// second step's RPN proposes nothing, so the heads sample the 4 ground
// truth boxes alone, and by the third the loss is nan; with torchvision's
// reference warm-up every step proposes and the heads sample 512 RoIs at
// finite losses.
func TestMaskRCNNDiverges(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: about 10 s of CPU training")
	}
	python := needPython(t)
	for _, c := range []struct {
		schedule string
		diverges bool
	}{{"first", true}, {"reference", false}} {
		cmd := exec.Command(python, "../../scripts/maskrcnn-diverge.py", "--height", "256", "--width", "256", "--steps", "3", "--schedule", c.schedule)
		cmd.Env = append(os.Environ(), "OMP_WAIT_POLICY=PASSIVE")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", c.schedule, err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != 3 {
			t.Fatalf("%s: %q, want three steps", c.schedule, out)
		}
		for i, l := range lines {
			f := strings.Split(l, "\t")
			if len(f) != 5 {
				t.Fatalf("%s: line %q", c.schedule, l)
			}
			loss, err1 := strconv.ParseFloat(f[1], 64)
			proposals, err2 := strconv.Atoi(f[2])
			sampled, err3 := strconv.Atoi(f[3])
			positive, err4 := strconv.Atoi(f[4])
			if err := errors.Join(err1, err2, err3, err4); err != nil {
				t.Fatalf("%s: line %q: %v", c.schedule, l, err)
			}
			diverged := proposals == 0 && sampled == 4
			switch {
			case i == 0 && (diverged || sampled != 512):
				t.Errorf("%s, first step: %d proposals, %d sampled; want 512 sampled before any update", c.schedule, proposals, sampled)
			case i > 0 && c.diverges && !diverged:
				t.Errorf("%s, step %d: %d proposals, %d sampled; want none and the 4 ground-truth boxes", c.schedule, i, proposals, sampled)
			case i > 0 && !c.diverges && (diverged || sampled != 512 || math.IsNaN(loss) || math.IsInf(loss, 0)):
				t.Errorf("%s, step %d: loss %v, %d proposals, %d sampled; want a finite loss and 512 sampled", c.schedule, i, loss, proposals, sampled)
			}
			// The ground truth's 4 boxes are always among the positives,
			// and the sampler takes at most a quarter of its 512.
			if positive < 4 || positive > 128 {
				t.Errorf("%s, step %d: %d positive RoIs, want 4 to 128", c.schedule, i, positive)
			}
			if c.diverges && i == 2 && !math.IsNaN(loss) {
				t.Errorf("%s, third step: loss %v, want nan", c.schedule, loss)
			}
		}
	}
}
