package logs

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"scaleplan/internal/benchlog"
	"scaleplan/internal/units"
)

// TestReadHFTrainer reads ../testdata/hf_trainer_vit_ddp.txt: two runs of an
// example script (ViT-Base fine-tuned on 45,000 images, four GPUs under
// torchrun, fp16, accumulation 2) at 32 and 64 images per device, each
// evaluating after every epoch and once more after training. The log was
// written by hand in the lines transformers 4.44's trainer.py and the
// example scripts print (their logging prefixes, progress bars with
// carriage returns, TrainingArguments and model configuration dumps, the
// metrics blocks); it is not the output of a run. Its numbers agree with
// each other as the Trainer's would: 45,000 images over 4 × 32 per step
// are 352 micro-batches a process, 176 optimization steps an epoch at
// accumulation 2, 528 in three; train_samples_per_second is 45,000 × 3 /
// train_runtime. The expected figures are computed below from the logged
// numbers.
func TestReadHFTrainer(t *testing.T) {
	lg, err := ReadFile("../testdata/hf_trainer_vit_ddp.txt")
	if err != nil {
		t.Fatal(err)
	}
	if lg.Format != HFTrainer {
		t.Fatalf("format %s, want %s", lg.Format, HFTrainer)
	}
	if lg.Malformed != 0 {
		t.Fatalf("malformed: %s", lg.MalformedSummary())
	}
	runtime := []float64{402.1187, 331.4823}
	evalTime := []float64{6.812 + 6.507 + 6.633, 6.701 + 6.644 + 6.598}
	steps := []int{528, 264}
	global := []int{256, 512}
	if len(lg.Records) != 2 {
		t.Fatalf("%d records, want 2: %+v", len(lg.Records), lg.Records)
	}
	for i, r := range lg.Records {
		step := (runtime[i] - evalTime[i]) / float64(steps[i])
		want := benchlog.Record{
			Kind: benchlog.KindMeasurement, Run: []string{"1", "2"}[i], Model: "vit-base-patch16-224-in21k",
			Device: "GPU", Precision: "amp-fp16", Workers: 4, Batch: global[i] / 8, GlobalBatch: global[i],
			Accumulate: 2, Steps: steps[i], StepTime: step, SamplesPerSec: float64(global[i]) / step,
		}
		if math.Abs(r.StepTime-want.StepTime) > 1e-12 || math.Abs(r.SamplesPerSec-want.SamplesPerSec) > 1e-9 {
			t.Errorf("record %d: step %v, %v samples/s; want %v, %v", i, r.StepTime, r.SamplesPerSec, want.StepTime, want.SamplesPerSec)
		}
		r.StepTime, r.SamplesPerSec = want.StepTime, want.SamplesPerSec
		if !reflect.DeepEqual(r, want) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, r, want)
		}
	}
	if got, want := lg.Lines, []int{88, 185}; !reflect.DeepEqual(got, want) {
		t.Errorf("record lines %v, want %v (the train_runtime lines)", got, want)
	}

	if len(lg.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(lg.Runs))
	}
	accuracies := [][]float64{{0.9046, 0.9338, 0.9421}, {0.8912, 0.927, 0.9384}}
	for i, r := range lg.Runs {
		if r.Model != "vit-base-patch16-224-in21k" || r.Device != "4xGPU" || r.GlobalBatch != global[i] ||
			r.Epochs != 3 || r.Status != "finished" || r.TimeToTrain != units.Seconds(runtime[i]) {
			t.Errorf("run %d: %+v", i+1, r)
		}
		if r.Benchmark != "google/vit-base-patch16-224-in21k" {
			t.Errorf("run %d: model logged as %q", i+1, r.Benchmark)
		}
		if r.Accuracy != accuracies[i][2] {
			t.Errorf("run %d: accuracy %v, want the evaluation after training's, %v", i+1, r.Accuracy, accuracies[i][2])
		}
		if want := units.Seconds((runtime[i] - evalTime[i]) / float64(steps[i])); math.Abs(float64(r.StepTime-want)) > 1e-12 {
			t.Errorf("run %d: step %v, want %v", i+1, r.StepTime, want)
		}
		// Evaluated after each epoch: epoch e is e × steps/3 steps in.
		if len(r.Evals) != 3 {
			t.Fatalf("run %d: %d evaluations, want 3 (the one after training is not one of them)", i+1, len(r.Evals))
		}
		for e, ev := range r.Evals {
			if ev.Steps != (e+1)*steps[i]/3 || ev.Accuracy != accuracies[i][e] {
				t.Errorf("run %d, evaluation %d: %d steps, accuracy %v; want %d, %v", i+1, e+1, ev.Steps, ev.Accuracy, (e+1)*steps[i]/3, accuracies[i][e])
			}
		}
	}
	// At 0.93 the first run reaches the target after its second epoch,
	// the second after its third.
	for i, want := range []int{352, 264} {
		c, _, ok := lg.Runs[i].Convergence(0.93)
		if !ok || !c.Reached || c.StepsToTarget != want || c.GlobalBatch != global[i] {
			t.Errorf("run %d at 0.93: %+v, want reached after %d steps", i+1, c, want)
		}
	}
	if len(lg.Notes) != 2 || !strings.Contains(lg.Notes[0], "3 evaluations during training (19.95 s of its 402.1 s train_runtime)") {
		t.Errorf("notes: %q", lg.Notes)
	}
}

// TestReadHFTrainerNewer reads the lines of newer releases: numbers
// printed as strings of four digits, a 'step' in each dictionary, numpy's
// repr of a metric, no logging prefix, and a run resumed from a
// checkpoint.
func TestReadHFTrainerNewer(t *testing.T) {
	const text = `***** Running training *****
  Num examples = 60,000
  Num Epochs = 2
  Instantaneous batch size per device = 64
  Total train batch size (w. parallel, distributed & accumulation) = 64
  Gradient Accumulation steps = 1
  Total optimization steps = 1,876
  Number of trainable parameters = 11,181,642
  Continuing training from checkpoint, will skip to saved global_step
  Continuing training from epoch 1
  Continuing training from global step 938
{'loss': '0.4102', 'grad_norm': '2.113', 'learning_rate': '1e-05', 'epoch': '1.5', 'step': 1407}
{'eval_loss': '0.3012', 'eval_accuracy': np.float64(0.8931), 'eval_runtime': '3.5', 'eval_samples_per_second': '2857', 'eval_steps_per_second': '44.86', 'epoch': '2', 'step': 1876}
{'train_runtime': '103.5', 'train_samples_per_second': '1159', 'train_steps_per_second': '18.13', 'train_loss': '0.2051', 'epoch': '2', 'step': 1876}
`
	lg, err := Read(strings.NewReader(text), "newer.log")
	if err != nil {
		t.Fatal(err)
	}
	if lg.Format != HFTrainer || lg.Malformed != 0 || len(lg.Records) != 1 || len(lg.Runs) != 1 {
		t.Fatalf("format %s, %d records, %d runs, %s", lg.Format, len(lg.Records), len(lg.Runs), lg.MalformedSummary())
	}
	// 1,876 − 938 steps ran, in 103.5 s less the evaluation's 3.5 s.
	r := lg.Records[0]
	if r.Steps != 938 || r.Workers != 1 || r.GlobalBatch != 64 || math.Abs(r.StepTime-100.0/938) > 1e-15 || r.Precision != "" || r.Device != "" {
		t.Errorf("record %+v", r)
	}
	run := lg.Runs[0]
	if want := []Eval{{Line: 13, Steps: 1876, Accuracy: 0.8931}}; !reflect.DeepEqual(run.Evals, want) {
		t.Errorf("evaluations %+v, want %+v", run.Evals, want)
	}
	if run.Device != "1x?" || run.Epochs != 2 || run.TimeToTrain != 103.5 {
		t.Errorf("run %+v", run)
	}
	if !strings.Contains(strings.Join(lg.Notes, "\n"), "resumed from global step 938: 938 steps ran") {
		t.Errorf("notes %q", lg.Notes)
	}
}

// TestReadHFTrainerEarlyStop: a run that EarlyStoppingCallback stops
// before the header's total ran to the final dictionary's 'step', and its
// evaluations without a 'step' count from that step's epoch.
func TestReadHFTrainerEarlyStop(t *testing.T) {
	const text = `***** Running training *****
  Num Epochs = 5
  Instantaneous batch size per device = 32
  Total train batch size (w. parallel, distributed & accumulation) = 32
  Gradient Accumulation steps = 1
  Total optimization steps = 1,000
{'eval_loss': 0.5, 'eval_accuracy': 0.8, 'eval_runtime': 2.0, 'epoch': 1.0}
{'eval_loss': 0.4, 'eval_accuracy': 0.85, 'eval_runtime': 2.0, 'epoch': 2.0}
{'eval_loss': 0.45, 'eval_accuracy': 0.84, 'eval_runtime': 2.0, 'epoch': 3.0}
{'train_runtime': 66.0, 'train_samples_per_second': 2424.242, 'train_steps_per_second': 15.152, 'train_loss': 0.4, 'epoch': 3.0, 'step': 600}
`
	lg, err := Read(strings.NewReader(text), "early.log")
	if err != nil {
		t.Fatal(err)
	}
	// 600 steps in 66 − 3 × 2 s; 200 steps an epoch.
	if len(lg.Records) != 1 || lg.Records[0].Steps != 600 || math.Abs(lg.Records[0].StepTime-0.1) > 1e-15 {
		t.Fatalf("records %+v", lg.Records)
	}
	if got := lg.Runs[0].Evals; len(got) != 3 || got[0].Steps != 200 || got[1].Steps != 400 || got[2].Steps != 600 {
		t.Errorf("evaluations %+v", got)
	}
	if !strings.Contains(strings.Join(lg.Notes, "\n"), "stopped at global step 600 of the header's 1000 (early stopping): 600 steps ran") {
		t.Errorf("notes %q", lg.Notes)
	}
}

// TestReadHFTrainerHeadless: a script that leaves transformers' log level
// at warning prints the dictionaries only. The run is listed, with its
// time to train and accuracy, but without a batch it gives no measurement
// and its evaluations no steps; TrainOutput(...) repeats the last log and
// is not a second run, nor is an evaluation before training one.
func TestReadHFTrainerHeadless(t *testing.T) {
	const text = `{'eval_loss': 0.9, 'eval_accuracy': 0.1, 'eval_runtime': 1.0, 'epoch': 0.0}
{'loss': 0.69, 'learning_rate': 5e-05, 'epoch': 0.5}
 40%|████      | 50/125 [00:08<00:12,  6.1it/s]{'eval_loss': 0.5, 'eval_accuracy': 0.75, 'eval_runtime': 1.2, 'epoch': 1.0}
{'train_runtime': 20.5, 'train_samples_per_second': 48.78, 'train_steps_per_second': 6.1, 'train_loss': 0.6, 'epoch': 2.0}
TrainOutput(global_step=125, training_loss=0.6, metrics={'train_runtime': 20.5, 'train_samples_per_second': 48.78, 'train_steps_per_second': 6.1, 'train_loss': 0.6, 'epoch': 2.0})
`
	lg, err := Read(strings.NewReader(text), "headless.log")
	if err != nil {
		t.Fatal(err)
	}
	if lg.Format != HFTrainer || len(lg.Records) != 0 || len(lg.Runs) != 1 {
		t.Fatalf("format %s, %d records, %d runs", lg.Format, len(lg.Records), len(lg.Runs))
	}
	run := lg.Runs[0]
	if run.TimeToTrain != 20.5 || run.Status != "finished" || run.Accuracy != 0.75 || run.GlobalBatch != 0 || len(run.Evals) != 0 || run.Epochs != 2 {
		t.Errorf("run %+v", run)
	}
	notes := strings.Join(lg.Notes, "\n")
	for _, want := range []string{"--log_level info", "1 of its evaluations print no step"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}

	// A script that evaluates before it trains: the header that follows
	// starts the one run.
	const first = "{'eval_loss': 0.9, 'eval_accuracy': 0.1, 'eval_runtime': 1.0, 'epoch': 0.0}\n" +
		"***** Running training *****\n  Instantaneous batch size per device = 8\n  Total train batch size (w. parallel, distributed & accumulation) = 8\n" +
		"  Gradient Accumulation steps = 1\n  Total optimization steps = 10\n{'train_runtime': 5.0, 'epoch': 1.0}\n"
	lg, err = Read(strings.NewReader(first), "first.log")
	if err != nil {
		t.Fatal(err)
	}
	if len(lg.Runs) != 1 || lg.Runs[0].GlobalBatch != 8 || len(lg.Records) != 1 || lg.Records[0].StepTime != 0.5 {
		t.Errorf("evaluated first: runs %+v, records %+v", lg.Runs, lg.Records)
	}
}

// TestReadHFTrainerErrors: impossible numbers are malformed lines naming
// what is wrong; a run the log stops inside is listed as incomplete.
func TestReadHFTrainerErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"batch not a multiple", "***** Running training *****\n  Instantaneous batch size per device = 64\n  Total train batch size (w. parallel, distributed & accumulation) = 100\n  Gradient Accumulation steps = 1\n  Total optimization steps = 10\n{'train_runtime': 5.0, 'epoch': 1.0}\n",
			"total train batch size 100 is not a multiple of batch per device 64 × accumulation 1"},
		{"zero batch", "***** Running training *****\n  Instantaneous batch size per device = 0\n{'train_runtime': 5.0, 'epoch': 1.0}\n",
			`batch size per device "0": want a whole number from 1 to 2^31`},
		{"header incomplete", "***** Running training *****\n  Instantaneous batch size per device = 8\n{'train_runtime': 5.0, 'epoch': 1.0}\n",
			"header without Total train batch size, Gradient Accumulation steps, Total optimization steps"},
		{"percentage", "{'loss': 1.0, 'epoch': 0.5}\n{'eval_loss': 0.5, 'eval_accuracy': 91.2, 'eval_runtime': 1.2, 'epoch': 1.0}\n{'train_runtime': 5.0, 'epoch': 1.0}\n",
			"eval_accuracy 91.2: want a fraction from 0 to 1"},
		{"negative runtime", "{'loss': 1.0, 'epoch': 0.5}\n{'train_runtime': -5.0, 'epoch': 1.0}\n",
			`train_runtime "-5.0": want a number of at least 0`},
		{"evaluations longer than training", "***** Running training *****\n  Instantaneous batch size per device = 8\n  Total train batch size (w. parallel, distributed & accumulation) = 8\n  Gradient Accumulation steps = 1\n  Total optimization steps = 10\n{'eval_loss': 0.5, 'eval_runtime': 7.5, 'epoch': 1.0}\n{'train_runtime': 5.0, 'epoch': 1.0}\n",
			"train_runtime 5 s is not more than its 1 evaluations' eval_runtime, 7.5 s"},
	} {
		lg, err := ReadAs(strings.NewReader(tc.text), tc.name, HFTrainer)
		if err != nil {
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
			}
			continue
		}
		if s := lg.MalformedSummary(); !strings.Contains(s, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, s, tc.want)
		}
		if len(lg.Records) != 0 {
			t.Errorf("%s: records %+v", tc.name, lg.Records)
		}
	}

	cut := "***** Running training *****\n  Instantaneous batch size per device = 8\n  Total train batch size (w. parallel, distributed & accumulation) = 16\n  Gradient Accumulation steps = 1\n  Total optimization steps = 10\n{'loss': 1.0, 'epoch': 0.5}\n"
	lg, err := ReadAs(strings.NewReader(cut), "cut.log", HFTrainer)
	if err != nil {
		t.Fatal(err)
	}
	if len(lg.Runs) != 1 || lg.Runs[0].Status != "" || lg.Runs[0].GlobalBatch != 16 || lg.Runs[0].Device != "2x?" || len(lg.Records) != 0 {
		t.Errorf("cut off: runs %+v, records %+v", lg.Runs, lg.Records)
	}
	if !strings.Contains(strings.Join(lg.Notes, "\n"), "the log ends before its {'train_runtime': ...} line") {
		t.Errorf("cut off: notes %q", lg.Notes)
	}
}

func TestHFDict(t *testing.T) {
	for _, tc := range []struct {
		line string
		want map[string]string // nil: not a dictionary
	}{
		{"{'loss': 0.5, 'epoch': 1.0}", map[string]string{"loss": "0.5", "epoch": "1.0"}},
		{"[default0]:{'loss': '0.5'}", map[string]string{"loss": "0.5"}},
		{" 10%|█         | 1/10 [00:08<01:17,  8.64s/it]{'a': None}", map[string]string{"a": "None"}},
		{`{'name': 'it\'s, here', "b": True}`, map[string]string{"name": "it's, here", "b": "True"}},
		{"{'t': tensor(0.5, device='cuda:0'), 'e': np.float64(1.5)}", map[string]string{"t": "tensor(0.5, device='cuda:0')", "e": "np.float64(1.5)"}},
		{"{}", nil},
		{"{'a': 1", nil},
		{"{'a' 1}", nil},
		{"{'a': 1,, 'b': 2}", nil},
		{"metrics={'a': 1}", nil},
		{"x = {'a': 1}", nil},
		{"TrainOutput(global_step=1, metrics={'a': 1})", nil},
		{"[{'a': 1}", nil},
	} {
		got, ok := hfDict(tc.line)
		if ok != (tc.want != nil) || (ok && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("hfDict(%q) = %v, %v; want %v", tc.line, got, ok, tc.want)
		}
	}
	for in, want := range map[string]string{
		"microsoft/resnet-50": "resnet50", "google/efficientnet-b4": "efficientnet-b4",
		"/scratch/runs/ckpt/": "ckpt", "bert-base-uncased": "bert-base-uncased",
	} {
		if got := hfModel(in); got != want {
			t.Errorf("hfModel(%q) = %q, want %q", in, got, want)
		}
	}
	for _, tc := range []struct {
		v    string
		want float64
		ok   bool
	}{{"0.5", 0.5, true}, {"4.9e-05", 4.9e-05, true}, {"np.float64(0.912)", 0.912, true}, {"np.float32(2)", 2, true},
		{"nan", 0, false}, {"inf", 0, false}, {"None", 0, false}, {"tensor(0.5)", 0, false}} {
		got, err := hfFloat(tc.v)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("hfFloat(%q) = %v, %v", tc.v, got, err)
		}
	}
}

// TestDetectHFTrainer: a log of the Trainer's dictionaries alone starts
// with "{" as a bench log does, and is not one.
func TestDetectHFTrainer(t *testing.T) {
	for _, tc := range []struct {
		text string
		want Format
	}{
		{"{'loss': 0.69, 'epoch': 0.5}\n{'train_runtime': 20.5, 'epoch': 2.0}\n", HFTrainer},
		{"[default0]:  5%|▌         | 50/1000 [00:08<02:38,  6.0it/s]\r{'loss': 0.69, 'learning_rate': 5e-05, 'epoch': 0.05}\n", HFTrainer},
		{"[INFO|trainer.py:2128] 2026-11-26 06:10:09,870 >> ***** Running training *****\n", HFTrainer},
		{`{"kind":"measurement","batch":64,"step_time_s":0.1}` + "\n", Benchlog},
		{" [2026-11-26 06:03:30] iteration       20/     100 | consumed samples:         2560 | elapsed time per iteration (ms): 6503.6 | global batch size:   128 |\n", Megatron},
	} {
		got, err := Detect([]byte(tc.text))
		if err != nil || got != tc.want {
			t.Errorf("Detect(%q) = %s, %v; want %s", tc.text, got, err, tc.want)
		}
	}
}

// TestReadHFTrainerPrecision: the precision is TrainingArguments' fp16 or
// bf16 (autocast), fp32 when both are False, unknown without the dump;
// the device kind the example scripts' "Process rank" line.
func TestReadHFTrainerPrecision(t *testing.T) {
	const run = "***** Running training *****\n  Instantaneous batch size per device = 8\n  Total train batch size (w. parallel, distributed & accumulation) = 8\n  Gradient Accumulation steps = 1\n  Total optimization steps = 10\n{'train_runtime': 5.0, 'epoch': 1.0}\n"
	for _, tc := range []struct {
		before, prec, device string
	}{
		{"Process rank: 0, device: cpu, n_gpu: 0, distributed training: False, 16-bits training: False\nTrainingArguments(output_dir=out, bf16=True, fp16=False, per_device_train_batch_size=8)\n", "amp-bf16", "CPU"},
		{"TrainingArguments(\nbf16=False,\nbf16_full_eval=False,\nfp16=True,\nfp16_backend=auto,\n)\n", "amp-fp16", ""},
		{"TrainingArguments(\nbf16=False,\nfp16=False,\n)\n", "fp32", ""},
		{"Process rank: 3, device: cuda:3, n_gpu: 1\n", "", "GPU"},
		{"TrainingArguments(bf16=True)\nTrainingArguments(bf16=False, fp16=False)\n", "fp32", ""},
	} {
		lg, err := ReadAs(strings.NewReader(tc.before+run), "p.log", HFTrainer)
		if err != nil {
			t.Fatal(err)
		}
		if len(lg.Records) != 1 || lg.Records[0].Precision != tc.prec || lg.Records[0].Device != tc.device {
			t.Errorf("%q: records %+v, want precision %q, device %q", tc.before, lg.Records, tc.prec, tc.device)
		}
	}
}
