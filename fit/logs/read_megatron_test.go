package logs

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"scaleplan/internal/benchlog"
	"scaleplan/internal/units"
)

// TestReadMegatron reads ../testdata/megatron_gpt_tp2.txt: two runs of a
// 6.7-billion-parameter GPT (3.4 billion on each tensor-parallel rank) on
// eight GPUs (tensor-parallel 2, data-parallel 4, micro batch 2, sequences
// of 4,096 tokens, bf16), logged every 10
// iterations: the first at a global batch of 128 for 100 iterations, the
// second ramping up from 64 to 192 (--rampup-batch-size 64 64 240). The
// log was written by hand in the lines Megatron-LM's arguments.py and
// training.py print (the layout line, the arguments, the iteration lines,
// the memory report, the datetimes); it is not the output of a run. The
// expected step times are computed below from the times the lines print.
func TestReadMegatron(t *testing.T) {
	lg, err := ReadFile("../testdata/megatron_gpt_tp2.txt")
	if err != nil {
		t.Fatal(err)
	}
	if lg.Format != Megatron || lg.Malformed != 0 || len(lg.Notes) != 0 {
		t.Fatalf("format %s, %s, notes %q", lg.Format, lg.MalformedSummary(), lg.Notes)
	}
	mean := func(ms ...float64) float64 {
		s := 0.0
		for _, v := range ms {
			s += v
		}
		return s / float64(len(ms)) / 1000
	}
	// Each run's first line (14,533.9 and 9,123.4 ms: the first iteration)
	// and the first line at each new batch are left out.
	want := []struct {
		run         string
		batch, line int
		steps       int
		step        float64
		accumulate  int
		peak        float64
	}{
		{"1", 128, 44, 90, mean(6503.6, 6522.8, 6504.3, 6502.1, 6486.7, 6504.7, 6537.8, 6520.6, 6535.9), 16, (51234.5 + 600) * (1 << 20)},
		{"2", 64, 80, 30, mean(3407.0, 3409.9, 3405.7), 8, 0},
		{"2", 128, 84, 30, mean(6532.1, 6525.1, 6525.0), 16, 0},
		{"2", 192, 88, 30, mean(9613.1, 9630.2, 9638.6), 24, 0},
	}
	if len(lg.Records) != len(want) {
		t.Fatalf("%d records, want %d: %+v", len(lg.Records), len(want), lg.Records)
	}
	for i, w := range want {
		r := lg.Records[i]
		if math.Abs(r.StepTime-w.step) > 1e-12 || math.Abs(r.SamplesPerSec-float64(w.batch)/w.step) > 1e-9 {
			t.Errorf("record %d: step %v, %v samples/s; want %v, %v", i, r.StepTime, r.SamplesPerSec, w.step, float64(w.batch)/w.step)
		}
		r.StepTime, r.SamplesPerSec = 0, 0
		exp := benchlog.Record{
			Kind: benchlog.KindMeasurement, Run: w.run, Device: "GPU", Precision: "bf16",
			Workers: 8, Batch: 2, GlobalBatch: w.batch, Accumulate: w.accumulate, Steps: w.steps, PeakMemory: w.peak,
			Labels: map[string]string{"sample": "sequence-4096", "layout": "tp2 pp1 cp1 dp4"},
		}
		if !reflect.DeepEqual(r, exp) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, r, exp)
		}
		if lg.Lines[i] != w.line {
			t.Errorf("record %d at line %d, want %d", i, lg.Lines[i], w.line)
		}
	}
	if len(lg.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(lg.Runs))
	}
	// 06:00:02 to 06:12:40; the second run prints no end.
	r1, r2 := lg.Runs[0], lg.Runs[1]
	if r1.Device != "8xGPU" || r1.GlobalBatch != 128 || r1.Status != "finished" || r1.TimeToTrain != 758 || math.Abs(float64(r1.StepTime)-want[0].step) > 1e-12 {
		t.Errorf("run 1: %+v", r1)
	}
	all := (want[1].step + want[2].step + want[3].step) / 3 // 30 iterations each
	if r2.GlobalBatch != 192 || r2.Status != "" || r2.TimeToTrain != 0 || math.Abs(float64(r2.StepTime)-all) > 1e-12 {
		t.Errorf("run 2: %+v, want step %v", r2, units.Seconds(all))
	}
}

// TestReadMegatronErrors: impossible figures are malformed lines naming
// the field; a log of iteration lines alone gives records without a
// device count, with notes; an iteration that goes back starts a run.
func TestReadMegatronErrors(t *testing.T) {
	line := func(i int, ms string, gbs string) string {
		return " [2026-11-26 06:00:00] iteration " + fmt.Sprintf("%8d", i) + "/     100 | consumed samples:          128 | elapsed time per iteration (ms): " + ms + " | learning rate: 1.0E-04 | global batch size: " + gbs + " | lm loss: 1.0E+01 |\n"
	}
	for _, tc := range []struct{ name, text, want string }{
		{"nan time", line(10, "100.0", "64") + line(20, "nan", "64"), `elapsed time per iteration (ms) "nan": want a time above 0`},
		{"zero time", line(10, "100.0", "64") + line(20, "0.0", "64"), `elapsed time per iteration (ms) "0.0": want a time above 0`},
		{"zero batch", line(10, "100.0", "64") + line(20, "100.0", "0"), `global batch size "0": want a whole number from 1 to 2^31`},
		{"zero world", "using world size: 0, data-parallel size: 1\n" + line(10, "100.0", "64"), `world size "0": want a whole number from 1 to 2^31`},
		{"bad datetime", "using world size: 8, data-parallel size: 8\n[before the start of training step] datetime: 2026-13-45 99:00:00 \n" + line(10, "100.0", "64"), `datetime "2026-13-45 99:00:00": want YYYY-MM-DD HH:MM:SS`},
	} {
		lg, err := ReadAs(strings.NewReader(tc.text), tc.name, Megatron)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if s := lg.MalformedSummary(); !strings.Contains(s, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, s, tc.want)
		}
	}

	text := line(10, "900.0", "64") + line(20, "100.0", "64") + line(30, "110.0", "64") + line(10, "800.0", "64") + line(20, "120.0", "64") + line(30, "130.0", "64")
	lg, err := ReadAs(strings.NewReader(text), "restarted.log", Megatron)
	if err != nil {
		t.Fatal(err)
	}
	if len(lg.Runs) != 2 || len(lg.Records) != 2 || math.Abs(lg.Records[0].StepTime-0.105) > 1e-15 || math.Abs(lg.Records[1].StepTime-0.125) > 1e-15 || lg.Records[0].Workers != 0 || lg.Records[1].Precision != "" {
		t.Errorf("restarted: runs %+v, records %+v", lg.Runs, lg.Records)
	}
	notes := strings.Join(lg.Notes, "\n")
	for _, want := range []string{"line 4: iteration 10 after iteration 30: a new run", "no print of Megatron's arguments", `no "using world size" line`} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}

	// Two layouts in one log: a note says how to fit them apart.
	layouts := "using world size: 8, data-parallel size: 4, context-parallel size: 1, tensor-model-parallel size: 2, pipeline-model-parallel size: 1\n" +
		line(10, "900.0", "64") + line(20, "100.0", "64") +
		"using world size: 8, data-parallel size: 2, context-parallel size: 1, tensor-model-parallel size: 4, pipeline-model-parallel size: 1\n" +
		line(10, "900.0", "64") + line(20, "90.0", "64")
	lg, err = ReadAs(strings.NewReader(layouts), "layouts.log", Megatron)
	if err != nil {
		t.Fatal(err)
	}
	if len(lg.Records) != 2 || lg.Records[1].Labels["layout"] != "tp4 pp1 cp1 dp2" ||
		!strings.Contains(strings.Join(lg.Notes, "\n"), "runs of 2 parallel layouts (tp2 pp1 cp1 dp4; tp4 pp1 cp1 dp2): fit them apart with --group-by layout") {
		t.Errorf("layouts: records %+v, notes %q", lg.Records, lg.Notes)
	}

	// A print of the arguments cut off before its end: the lines after it
	// are read.
	cut := mgArgumentsStart + "\n  micro_batch_size ..... 4\n" + line(10, "900.0", "64") + line(20, "100.0", "64")
	lg, err = ReadAs(strings.NewReader(cut), "cut.log", Megatron)
	if err != nil || len(lg.Records) != 1 || lg.Records[0].Batch != 4 || lg.Records[0].StepTime != 0.1 {
		t.Errorf("arguments cut off: %v, records %+v", err, lg)
	}

	// Arguments printed, training never started: no run.
	if _, err := ReadAs(strings.NewReader(mgArgumentsStart+"\n  world_size ..... 8\n"+mgArgumentsEnd+"\n"), "nothing.log", Megatron); err == nil || !strings.Contains(err.Error(), "no usable records") {
		t.Errorf("arguments only: %v", err)
	}
}

// TestMgSeconds checks the datetimes' seconds against Python's
// calendar.timegm of the same dates, and refuses impossible ones.
func TestMgSeconds(t *testing.T) {
	for _, tc := range []struct {
		date string
		want float64
		ok   bool
	}{
		{"2026-11-26 06:00:02", 1795672802, true},
		{"2024-02-29 12:00:00", 1709208000, true},
		{"1970-01-01 00:00:00", 0, true},
		{"2000-03-01 00:00:00", 951868800, true},
		{"2023-02-29 00:00:00", 0, false},
		{"2026-13-01 00:00:00", 0, false},
		{"2026-04-31 00:00:00", 0, false},
		{"2026-11-26 24:00:00", 0, false},
		{"2026-11-26 06:60:00", 0, false},
		{"1969-12-31 23:59:59", 0, false},
	} {
		m := mgDatetime.FindStringSubmatch("[after training is done] datetime: " + tc.date)
		got, ok := dateSeconds(m[3:])
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %v, %v; want %v, %v", tc.date, got, ok, tc.want, tc.ok)
		}
	}
}

// TestModelParallel: only tensor, pipeline or context parallel sizes
// above 1 split the model; data parallelism and no layout do not.
func TestModelParallel(t *testing.T) {
	for layout, want := range map[string]bool{
		"": false, "tp1 pp1 cp1 dp8": false, "tp2 pp1 cp1 dp4": true, "tp1 pp4 cp1 dp2": true, "tp1 pp1 cp2 dp4": true, "tp pp1": true,
	} {
		if got := ModelParallel(map[string]string{LayoutLabel: layout}); got != want {
			t.Errorf("%q: %v, want %v", layout, got, want)
		}
	}
}
