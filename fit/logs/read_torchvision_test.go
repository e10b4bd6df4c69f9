package logs

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"scaleplan/internal/units"
)

// TestReadTorchvision checks the figures the torchvision reader derives
// from the two hand-written logs against values worked out from their
// lines.
func TestReadTorchvision(t *testing.T) {
	lg, err := ReadFile("../testdata/torchvision_resnet50_ddp.txt")
	if err != nil {
		t.Fatal(err)
	}
	// Eight processes of 128: a global batch of 1,024. Epoch 0's lines past
	// iteration 19 (100 to 1,200) alternate 0.1652 and 0.1648 s, epoch 1's
	// 0.1701 and 0.1699 s: mean steps of 0.1650 and 0.1700 s.
	for i, want := range []struct {
		step, wait float64
		line       int
	}{{0.1650, 0.0010, 31}, {0.1700, 0.0020, 52}} {
		r := lg.Records[i]
		if r.Model != "resnet50" || r.Device != "GPU" || r.Precision != "amp-fp16" || r.Workers != 8 || r.Batch != 128 || r.GlobalBatch != 1024 {
			t.Errorf("epoch %d: %+v: want resnet50 on 8 GPUs at amp, 128 each", i, r)
		}
		if !within(r.StepTime, want.step, 1e-12) || !within(r.SamplesPerSec, 1024/want.step, 1e-12) {
			t.Errorf("epoch %d: step %v s, %v samples/s; want %v s, %v", i, r.StepTime, r.SamplesPerSec, want.step, 1024/want.step)
		}
		if r.Phases == nil || !within(r.Phases.DataWait, want.wait, 1e-12) {
			t.Errorf("epoch %d: phases %+v, want a data wait of %v s", i, r.Phases, want.wait)
		}
		// The windows of the twelve lines from 100 to 1,200, twenty
		// iterations each (81–100, ..., 1181–1200); the record is at the
		// epoch's Total time line.
		if r.Steps != 240 || r.PeakMemory != 20412*(1<<20) || lg.Lines[i] != want.line {
			t.Errorf("epoch %d: %d steps, peak %v B, line %d; want 240, 20412 MiB, line %d", i, r.Steps, r.PeakMemory, lg.Lines[i], want.line)
		}
	}
	if len(lg.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(lg.Runs))
	}
	// The last Acc@1 of the model itself (21.446 %), not of its EMA; the
	// training time 0:07:15 = 435 s.
	if r := lg.Runs[0]; r.Epochs != 2 || r.Accuracy != 0.21446 || r.Status != "finished" || r.TimeToTrain != 435 ||
		r.Device != "8xGPU" || r.GlobalBatch != 1024 || r.Benchmark != "resnet50" || r.Line != 9 {
		t.Errorf("run %+v", r)
	}
	// The run's step and data wait: the means of its two epochs'.
	if r := lg.Runs[0]; !within(float64(r.StepTime), (0.1650+0.1700)/2, 1e-12) || !within(float64(r.DataWait), (0.0010+0.0020)/2, 1e-12) {
		t.Errorf("run step %v, data wait %v; want 167.5 ms and 1.5 ms", r.StepTime, r.DataWait)
	}

	lg, err = ReadFile("../testdata/torchvision_truncated.txt")
	if err != nil {
		t.Fatal(err)
	}
	// Four processes from the distributed init lines; efficientnet_b4 with
	// apex. Of the lines past iteration 19, iteration 30's time is nan
	// (malformed) and the log stops inside iteration 60's line: the epoch is
	// 0.4417, 0.4400 and 0.4410 s.
	if len(lg.Records) != 1 || lg.Malformed != 2 {
		t.Fatalf("%d records, %d malformed; want 1, 2", len(lg.Records), lg.Malformed)
	}
	r := lg.Records[0]
	if want := (0.4417 + 0.4400 + 0.4410) / 3; !within(r.StepTime, want, 1e-12) || r.Workers != 4 || r.GlobalBatch != 128 ||
		r.Model != "efficientnet-b4" || r.Precision != "amp-fp16" || r.Steps != 50 {
		// Steps: the windows of the lines at 20, 40 and 50 cover iterations 1 to 50.
		t.Errorf("record %+v: want %v s a step of 4 × 32 at amp, efficientnet-b4, 50 steps", r, want)
	}
	if run := lg.Runs[0]; run.Status != "" || run.Epochs != 0 || run.Benchmark != "efficientnet_b4" || run.TimeToTrain != 0 {
		t.Errorf("run %+v: want an unfinished run of no whole epoch", run)
	}
	if len(lg.Notes) != 1 || !strings.Contains(lg.Notes[0], `no "Total time" line follows`) {
		t.Errorf("notes %q", lg.Notes)
	}
}

// TestReadTorchvisionCPU reads real output of torchvision's reference
// script (the 2019 references/classification/train.py and utils.py, their
// printing as published; ResNet-18 at batch 4, 8 and 16 on a CPU, two
// epochs each, concatenated). The step times were
// computed from the file with awk, not by the reader: the mean of the
// time: fields of each epoch's training lines past iteration 19,
//
//	awk '/^Namespace/{r++} /^Epoch: \[[0-9]+\]  \[/{split($0,a,"[][/]"); i=a[4]+0; if(i>=20){for(k=1;k<=NF;k++) if($k=="time:") {s[r" "$2]+=$(k+1); n[r" "$2]++}}} END{for(x in s) printf "%s %.10f\n", x, s[x]/n[x]}'
func TestReadTorchvisionCPU(t *testing.T) {
	lg, err := ReadFile("../testdata/torchvision_resnet18_cpu.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := torchvisionCPUSteps
	if len(lg.Records) != len(want) || len(lg.Runs) != 3 || lg.Malformed != 0 {
		t.Fatalf("%d records, %d runs, %d malformed; want %d, 3, 0", len(lg.Records), len(lg.Runs), lg.Malformed, len(want))
	}
	for i, r := range lg.Records {
		batch := []int{4, 8, 16}[i/2]
		if r.Batch != batch || r.Workers != 1 || r.Device != "CPU" || r.Precision != "fp32" || r.Model != "resnet18" {
			t.Errorf("record %d: %+v: want resnet18 at batch %d on one CPU, fp32", i, r, batch)
		}
		if !within(r.StepTime, want[i], 1e-9) || !within(r.SamplesPerSec, float64(batch)/want[i], 1e-9) {
			t.Errorf("record %d: step %v s, want %v", i, r.StepTime, want[i])
		}
	}
	for i, run := range lg.Runs {
		if run.Status != "finished" || run.Epochs != 2 || run.TimeToTrain <= 0 {
			t.Errorf("run %d: %+v", i+1, run)
		}
	}
}

func TestTorchvisionDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want units.Seconds
	}{
		{"0:16:25", 985},
		{"1 day, 2:03:04", 93784},
		{"3 days, 0:00:01", 259201},
		{"12:00:00.5", 43200.5},
	} {
		if got, err := tvParseDuration(tc.in); err != nil || got != tc.want {
			t.Errorf("%q: %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "1:75:00", "0:00:60", "1 week, 0:00:00", "-1:00:00"} {
		if _, err := tvParseDuration(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func within(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// torchvisionCPUSteps are the mean step times, seconds, of the six epochs
// of ../testdata/torchvision_resnet18_cpu.txt, by the awk program above.
var torchvisionCPUSteps = []float64{0.3129, 0.343015, 0.747725, 0.59095, 1.20525, 1.47295}

// TestTorchvisionConvergence: a torchvision run evaluates after every
// epoch without naming a target; with one (Options.Target) it gives a
// convergence record at the steps of its first evaluation that reaches it.
// The hand-written eight-GPU log has 1,251 steps an epoch and Acc@1 9.871
// and 21.446 % after epochs 0 and 1 (the EMA model's 0.101 and 0.132 %
// are not the run's). TestFitTorchvisionSteps fits them.
func TestTorchvisionConvergence(t *testing.T) {
	lg, err := ReadFile("../testdata/torchvision_resnet50_ddp.txt")
	if err != nil {
		t.Fatal(err)
	}
	run := lg.Runs[0]
	if want := []Eval{{Line: 34, Steps: 1251, Accuracy: 0.09871}, {Line: 55, Steps: 2502, Accuracy: 0.21446}}; !reflect.DeepEqual(run.Evals, want) {
		t.Fatalf("evals %+v, want %+v", run.Evals, want)
	}
	for _, tc := range []struct {
		target  float64
		reached bool
		steps   int
		line    int
	}{
		{0.05, true, 1251, 34},
		{0.09871, true, 1251, 34}, // at the target counts
		{0.2, true, 2502, 55},
		{0.5, false, 2502, 55}, // not reached: the steps it ran
	} {
		r, line, ok := run.Convergence(tc.target)
		if !ok || r.Reached != tc.reached || r.StepsToTarget != tc.steps || line != tc.line ||
			r.Accuracy != 0.21446 || r.GlobalBatch != 1024 || r.Model != "resnet50" || r.Target != tc.target || r.Validate() != nil {
			t.Errorf("target %v: %+v at line %d, %v; want reached %v after %d steps, line %d", tc.target, r, line, ok, tc.reached, tc.steps, tc.line)
		}
	}
	if _, _, ok := run.Convergence(0); ok {
		t.Error("a convergence record without a target")
	}
	trunc, err := ReadFile("../testdata/torchvision_truncated.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := trunc.Runs[0].Convergence(0.5); ok || trunc.Runs[0].Evals != nil {
		t.Errorf("a run without evaluations gave a convergence record: %+v", trunc.Runs[0])
	}
}

// TestTorchvisionDetectionSegmentation: the detection references evaluate
// by COCO's summary, whose box AP at IoU 0.50:0.95 (the first line after
// "IoU metric: bbox", as pycocotools prints it) is the run's accuracy; the
// segmentation references by their confusion matrix's "mean IoU". Both
// print their training lines through the same MetricLogger.
func TestTorchvisionDetectionSegmentation(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		model     string
		batch     int
		evals     []Eval
	}{
		{"detection", `Namespace(data_path='/data/coco', dataset='coco', model='maskrcnn_resnet50_fpn', device='cuda', batch_size=2, epochs=26, world_size=8, distributed=True)
Epoch: [0]  [   0/7329]  eta: 3:49:58  lr: 0.000040  loss: 6.0418 (6.0418)  loss_classifier: 4.5129 (4.5129)  time: 1.8807  data: 0.9510  max mem: 3186
Epoch: [0]  [  20/7329]  eta: 0:51:13  lr: 0.000840  loss: 1.9031 (2.4077)  loss_classifier: 0.4919 (0.8871)  time: 0.4200  data: 0.0031  max mem: 3941
Epoch: [0] Total time: 0:52:11
Test:  [   0/5000]  eta: 1:45:02  model_time: 0.7702 (0.7702)  evaluator_time: 0.0367 (0.0367)  time: 1.2605  data: 0.4304  max mem: 3941
Test: Total time: 0:06:41 (0.0802 s / it)
Averaged stats: model_time: 0.0436 (0.0446)  evaluator_time: 0.0127 (0.0164)
IoU metric: bbox
 Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ] = 0.206
 Average Precision  (AP) @[ IoU=0.50      | area=   all | maxDets=100 ] = 0.392
 Average Precision  (AP) @[ IoU=0.50:0.95 | area= small | maxDets=100 ] = 0.112
IoU metric: segm
 Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ] = 0.196
Training time 1:00:02
`, "maskrcnn-r50-fpn", 16, []Eval{{Line: 9, Steps: 7329, Accuracy: 0.206}}},
		{"segmentation", `Namespace(data_path='/data/coco', dataset='coco', model='fcn_resnet50', device='cuda', batch_size=4, epochs=30, world_size=8, distributed=True)
Epoch: [0]  [   0/2889]  eta: 2:10:18  lr: 0.019999  loss: 3.2197 (3.2197)  time: 2.7066  data: 1.9043  max mem: 6731
Epoch: [0]  [  40/2889]  eta: 0:18:03  lr: 0.019750  loss: 1.0123 (1.4011)  time: 0.3523  data: 0.0022  max mem: 7120
Epoch: [0] Total time: 0:17:31
Test:  [   0/5000]  eta: 1:30:11  time: 1.0822  data: 0.8710  max mem: 7120
Test: Total time: 0:02:12
global correct: 91.3
average row correct: ['95.1', '70.2', '55.9']
IoU: ['90.1', '52.4', '40.8']
mean IoU: 60.5
Training time 0:20:01
`, "fcn_resnet50", 32, []Eval{{Line: 10, Steps: 2889, Accuracy: 0.605}}},
	} {
		lg, err := Read(strings.NewReader(tc.log), tc.name)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if lg.Format != Torchvision || len(lg.Records) != 1 || lg.Malformed != 0 || len(lg.Runs) != 1 {
			t.Fatalf("%s: %s, %d records, %d malformed, %d runs", tc.name, lg.Format, len(lg.Records), lg.Malformed, len(lg.Runs))
		}
		if f := lg.Records[0].Labels[FrameworkLabel]; f != TorchvisionFramework {
			t.Errorf("%s: framework %q, want %q (torchvision's own models)", tc.name, f, TorchvisionFramework)
		}
		run := lg.Runs[0]
		if run.Model != tc.model || run.GlobalBatch != tc.batch || !reflect.DeepEqual(run.Evals, tc.evals) || run.Accuracy != tc.evals[0].Accuracy {
			t.Errorf("%s: run %+v; want %s at global batch %d, evals %+v", tc.name, run, tc.model, tc.batch, tc.evals)
		}
	}
}
