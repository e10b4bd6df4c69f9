package logs

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"scaleplan/internal/benchlog"
)

// TestReadDeepSpeed reads ../testdata/deepspeed_bert_zero2.txt: two runs of a
// BERT pre-training script on DeepSpeed's engine (ZeRO stage 2, bf16, eight
// GPUs) at 32 and 64 samples per GPU, printing every 10 steps. The log was
// written by hand in the lines DeepSpeed 0.16's config.py and timer.py
// print; it is not the output of a run. Each run's measurement is its last
// running average, computed here from the printed figure.
func TestReadDeepSpeed(t *testing.T) {
	lg, err := ReadFile("../testdata/deepspeed_bert_zero2.txt")
	if err != nil {
		t.Fatal(err)
	}
	if lg.Format != DeepSpeed || lg.Malformed != 0 || len(lg.Notes) != 0 {
		t.Fatalf("format %s, %s, notes %q", lg.Format, lg.MalformedSummary(), lg.Notes)
	}
	want := []benchlog.Record{
		{Kind: benchlog.KindMeasurement, Run: "1", Device: "GPU", Precision: "bf16", Workers: 8, Batch: 32, GlobalBatch: 256, Accumulate: 1,
			Steps: 100 - 2, StepTime: 256 / 2412.6640531190, SamplesPerSec: 2412.6640531190, PeakMemory: 21.07 * (1 << 30)},
		{Kind: benchlog.KindMeasurement, Run: "2", Device: "GPU", Precision: "bf16", Workers: 8, Batch: 64, GlobalBatch: 512, Accumulate: 1,
			Steps: 50 - 2, StepTime: 512 / 2676.0315008820, SamplesPerSec: 2676.0315008820, PeakMemory: 38.49 * (1 << 30)},
	}
	if len(lg.Records) != len(want) {
		t.Fatalf("%d records, want %d", len(lg.Records), len(want))
	}
	for i, r := range lg.Records {
		if math.Abs(r.StepTime/want[i].StepTime-1) > 1e-15 {
			t.Errorf("record %d: step %v, want %v", i, r.StepTime, want[i].StepTime)
		}
		r.StepTime = want[i].StepTime
		if !reflect.DeepEqual(r, want[i]) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, r, want[i])
		}
	}
	if got, want := lg.Lines, []int{61, 111}; !reflect.DeepEqual(got, want) {
		t.Errorf("lines %v, want %v (each run's last timer line)", got, want)
	}
}

// TestReadDeepSpeedVariants: older releases print no global step (the
// "[Rank 0] step=N" line before gives it), newer ones the bf16 setting as
// bfloat16_config; fp16; and what is malformed.
func TestReadDeepSpeedVariants(t *testing.T) {
	config := func(lines ...string) string {
		s := "[2026-11-26 06:00:00,000] [INFO] [config.py:960:print] DeepSpeedEngine configuration:\n"
		for _, l := range lines {
			s += "[2026-11-26 06:00:00,000] [INFO] [config.py:964:print]   " + l + "\n"
		}
		return s
	}
	const old = "[2022-08-29 06:58:56,121] [INFO] [logging.py:68:log_dist] [Rank 0] step=20, skipped=17, lr=[5e-05], mom=[(0.9, 0.999)]\n" +
		"[2022-08-29 06:58:56,176] [INFO] [timer.py:198:stop] 0/20, RunningAvgSamplesPerSec=232.7340551694273, CurrSamplesPerSec=227.48090316379353, MemAllocated=0.36GB, MaxMemAllocated=15.06GB\n"
	lg, err := Read(strings.NewReader(config("fp16_enabled ................. True", "train_batch_size ............. 64", "world_size ................... 4")+old), "old.log")
	if err != nil {
		t.Fatal(err)
	}
	if lg.Format != DeepSpeed || len(lg.Records) != 1 {
		t.Fatalf("old: %s, %+v", lg.Format, lg.Records)
	}
	if r := lg.Records[0]; r.Steps != 18 || r.Precision != "fp16" || r.Workers != 4 || r.Batch != 0 || math.Abs(r.StepTime-64/232.7340551694273) > 1e-15 {
		t.Errorf("old: %+v", r)
	}

	const timer = "[2026-11-26 06:01:00,000] [INFO] [timer.py:264:stop] epoch=0/micro_step=10/global_step=10, RunningAvgSamplesPerSec=%s, CurrSamplesPerSec=100.0, MemAllocated=1.0GB, MaxMemAllocated=2.0GB\n"
	line := func(avg string) string { return strings.Replace(timer, "%s", avg, 1) }
	lg, err = ReadAs(strings.NewReader(config("bfloat16_config .............. enabled=True immediate_grad_update=False check_grad_overflow=False",
		"train_batch_size ............. 64", "world_size ................... 4")+line("100.0")), "new.log", DeepSpeed)
	if err != nil || len(lg.Records) != 1 || lg.Records[0].Precision != "bf16" || lg.Records[0].Steps != 8 {
		t.Errorf("bfloat16_config: %v, %+v", err, lg)
	}

	for _, tc := range []struct{ name, text, want string }{
		{"no configuration", line("100.0"), `no "DeepSpeedEngine configuration:" before it`},
		{"no world size", config("train_batch_size ............. 64") + line("100.0"), "no world_size in DeepSpeed's configuration before it"},
		{"zero batch", config("train_batch_size ............. 0", "world_size ................... 4") + line("100.0"), `train_batch_size "0": want a whole number from 1 to 2^31`},
		{"nan", config("train_batch_size ............. 64", "world_size ................... 4") + line("nan"), `RunningAvgSamplesPerSec: bad number "nan"`},
	} {
		lg, err := ReadAs(strings.NewReader(tc.text), tc.name, DeepSpeed)
		msg := ""
		if err != nil {
			msg = err.Error()
		} else {
			msg = lg.MalformedSummary()
		}
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, msg, tc.want)
		}
	}

	// Step 2 is the last the running average leaves out: no measurement.
	early := config("train_batch_size ............. 64", "world_size ................... 4") + strings.Replace(line("100.0"), "global_step=10", "global_step=2", 1)
	if _, err := ReadAs(strings.NewReader(early), "early.log", DeepSpeed); err == nil || !strings.Contains(err.Error(), "no usable records") {
		t.Errorf("global step 2: %v", err)
	}
}

// TestDetectDeepSpeed: DeepSpeed's lines alone are DeepSpeed's; Megatron-
// DeepSpeed prints them beside Megatron's iteration lines, which win.
func TestDetectDeepSpeed(t *testing.T) {
	ds := "[2026-11-26 06:01:00,000] [INFO] [timer.py:264:stop] epoch=0/micro_step=10/global_step=10, RunningAvgSamplesPerSec=100.0, CurrSamplesPerSec=100.0, MemAllocated=1.0GB, MaxMemAllocated=2.0GB\n"
	mg := " iteration      199/  317892 | consumed samples:       152832 | elapsed time per iteration (ms): 14287.5 | learning rate: 2.407E-04 | global batch size:   768 |\n"
	for _, tc := range []struct {
		text string
		want Format
	}{{ds, DeepSpeed}, {ds + mg, Megatron}} {
		if got, err := Detect([]byte(tc.text)); err != nil || got != tc.want {
			t.Errorf("Detect = %s, %v; want %s", got, err, tc.want)
		}
	}
}
