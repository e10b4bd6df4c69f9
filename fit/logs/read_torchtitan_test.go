package logs

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"scaleplan/internal/benchlog"
)

// TestReadTorchtitan reads ../testdata/torchtitan_llama3_8b.txt: two runs of
// Llama 3 8B on eight H100s at sequences of 8,192 tokens and a global batch
// of 16, logged every 10 steps. The first, FSDP over all eight (local batch
// 2), prints its arguments (bf16), colours its step lines, validates after
// step 50 and completes; the second, of an older release (the "2-D device
// mesh" line, "Training starts at step 1, with ...", wps), shards over
// four and splits each replica over two tensor-parallel ranks (local batch
// 4), prints no precision and stops after step 20. The log was written by
// hand in the lines torchtitan's train.py, components/metrics.py,
// distributed/parallel_dims.py and distributed/utils.py print; it is not
// the output of a run. The expected figures are computed here from the
// tokens per second the lines print, by the definition of metrics.py's
// tps: tokens of one data-parallel rank over the seconds times the
// devices of its model replica.
func TestReadTorchtitan(t *testing.T) {
	lg, err := ReadFile("../testdata/torchtitan_llama3_8b.txt")
	if err != nil {
		t.Fatal(err)
	}
	if lg.Format != Torchtitan || lg.Malformed != 0 {
		t.Fatalf("format %s, %s", lg.Format, lg.MalformedSummary())
	}
	// The seconds one device took for the steps of each line after the
	// first: the tokens of a step on it are local batch × sequence
	// length / devices of a replica.
	const seq = 8192
	seconds := func(local, replica int, steps []int, tps []float64) (sec float64, n int) {
		for i, k := range steps {
			sec += float64(k) * float64(local*seq) / float64(replica) / tps[i]
			n += k
		}
		return sec, n
	}
	s1, n1 := seconds(2, 1, []int{9, 10, 10, 10, 10}, []float64{7800, 8000, 8100, 7900, 8000})
	s2, n2 := seconds(4, 2, []int{9, 10}, []float64{4000, 4100})
	want := []struct {
		rec  benchlog.Record
		step float64
		line int
	}{
		{benchlog.Record{Kind: benchlog.KindMeasurement, Run: "1", Model: "llama3-8b", Device: "NVIDIA H100 80GB HBM3", Precision: "bf16",
			Workers: 8, Batch: 2, GlobalBatch: 16, Accumulate: 1, Steps: n1, PeakMemory: 58.90 * (1 << 30),
			Labels: map[string]string{"sample": "sequence-8192", "layout": "tp1 pp1 cp1 dp8"}}, s1 / float64(n1), 22},
		{benchlog.Record{Kind: benchlog.KindMeasurement, Run: "2", Model: "llama3-8b", Device: "NVIDIA H100 80GB HBM3", Precision: "bf16",
			Workers: 8, Batch: 4, GlobalBatch: 16, Accumulate: 1, Steps: n2, PeakMemory: 44.12 * (1 << 30),
			Labels: map[string]string{"sample": "sequence-8192", "layout": "tp2 pp1 cp1 dp4"}}, s2 / float64(n2), 36},
	}
	if len(lg.Records) != len(want) {
		t.Fatalf("%d records, want %d: %+v", len(lg.Records), len(want), lg.Records)
	}
	for i, w := range want {
		r := lg.Records[i]
		if math.Abs(r.StepTime/w.step-1) > 1e-12 || math.Abs(r.SamplesPerSec/(16/w.step)-1) > 1e-12 {
			t.Errorf("record %d: step %v s, %v samples/s; want %v, %v", i, r.StepTime, r.SamplesPerSec, w.step, 16/w.step)
		}
		r.StepTime, r.SamplesPerSec = 0, 0
		if !reflect.DeepEqual(r, w.rec) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, r, w.rec)
		}
		if lg.Lines[i] != w.line {
			t.Errorf("record %d at line %d, want %d", i, lg.Lines[i], w.line)
		}
	}
	if len(lg.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(lg.Runs))
	}
	// "Training starts at step 1" at 10:00:09, "Training completed" at
	// 10:02:15; the second run prints no end.
	r1, r2 := lg.Runs[0], lg.Runs[1]
	if r1.Device != "8xNVIDIA H100 80GB HBM3" || r1.Model != "llama3-8b" || r1.GlobalBatch != 16 || r1.Status != "finished" || r1.TimeToTrain != 126 || r1.Line != 4 {
		t.Errorf("run 1: %+v", r1)
	}
	if r2.Status != "" || r2.TimeToTrain != 0 || r2.Line != 28 || math.Abs(float64(r2.StepTime)/want[1].step-1) > 1e-12 {
		t.Errorf("run 2: %+v", r2)
	}
	if len(lg.Notes) != 2 || !strings.Contains(lg.Notes[0], "line 28: run 2: precision bf16, torchtitan's default") ||
		!strings.Contains(lg.Notes[1], "2 parallel layouts (tp1 pp1 cp1 dp8; tp2 pp1 cp1 dp4)") {
		t.Errorf("notes %q", lg.Notes)
	}
}

// TestReadTorchtitanVariants covers what a torchtitan log may lack or hold
// beyond the sample: no mesh, no batch line, a single step line, a restart,
// precisions, the mesh of one device, and malformed lines.
func TestReadTorchtitanVariants(t *testing.T) {
	const (
		mesh  = "Building device mesh with parallelism: pp=2, dp_replicate=2, dp_shard=2, cp=1, tp=2, ep=4, etp=1\n"
		batch = "Trainer is initialized with local batch size 1, global batch size 8, gradient accumulation steps 2, sequence length 1000, total steps 9 (warmup 1).\n"
		steps = "step:  1  loss: 9.0  memory: 1.00GiB(1.00%)  tps: 10  tflops: 1  mfu: 1%\nstep: 5  loss: 8.0  memory: 2.00GiB(2.00%)  tps: 1,000  tflops: 1  mfu: 1%\n"
	)
	read := func(body string) *Log {
		t.Helper()
		lg, err := ReadAs(strings.NewReader(body), "t.log", Torchtitan)
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		return lg
	}
	// Sixteen devices (ep splits the same ones): one device trains 1,000
	// tokens a second, all 16,000, 16 sequences a second; 8 a step.
	lg := read(mesh + batch + "Mixed precision training is disabled\n" + steps)
	want := benchlog.Record{Kind: benchlog.KindMeasurement, Run: "1", Device: "GPU", Precision: "fp32", Workers: 16, Batch: 1, GlobalBatch: 8, Accumulate: 2,
		Steps: 4, StepTime: 0.5, SamplesPerSec: 16, PeakMemory: 2 << 30, Labels: map[string]string{"sample": "sequence-1000", "layout": "tp2 pp2 cp1 dp4"}}
	if len(lg.Records) != 1 || !reflect.DeepEqual(lg.Records[0], want) || len(lg.Notes) != 0 {
		t.Errorf("mesh of 16:\n got %+v, notes %q\nwant %+v", lg.Records, lg.Notes, want)
	}
	// One device: a mesh of no dimension.
	lg = read("Building 0-D device mesh with [], []\n" + batch + steps)
	if len(lg.Records) != 1 || lg.Records[0].Workers != 1 || lg.Records[0].Labels["layout"] != "tp1 pp1 cp1 dp1" || lg.Records[0].Precision != "" {
		t.Errorf("one device: %+v", lg.Records)
	}
	// Precision from the arguments, mixed precision by fully_shard.
	lg = read("Running with args: {'training': {'mixed_precision_param': 'float32'}}\n" + mesh + "Mixed precision training is handled by fully_shard\n" + batch + steps)
	if len(lg.Records) != 1 || lg.Records[0].Precision != "fp32" || len(lg.Notes) != 0 {
		t.Errorf("fp32 from the arguments: %+v, notes %q", lg.Records, lg.Notes)
	}
	for _, tc := range []struct {
		name, body, note string
	}{
		{"no mesh", batch + steps, `run 1: no "Building device mesh" line`},
		{"no batch", mesh + steps, `run 1: no "Trainer is initialized with local batch size ...`},
		{"one line", mesh + batch + "step:  1  loss: 9.0  tps: 10\n", "run 1: no step line after the first"},
	} {
		lg := read(tc.body)
		if len(lg.Records) != 0 || len(lg.Runs) != 1 || len(lg.Notes) != 1 || !strings.Contains(lg.Notes[0], tc.note) {
			t.Errorf("%s: records %+v, runs %d, notes %q", tc.name, lg.Records, len(lg.Runs), lg.Notes)
		}
	}
	// A restart without a new set-up: the step falls; the set-up carries
	// over. A validation line is no step.
	lg = read(mesh + batch + steps + "validate step: 5  loss: 8.5  tps: 3,000\n" + steps)
	if len(lg.Records) != 2 || lg.Records[1].Run != "2" || lg.Records[1].Workers != 16 || lg.Records[1].SamplesPerSec != 16 ||
		len(lg.Notes) != 1 || !strings.Contains(lg.Notes[0], "line 6: step 1 after step 5: a new run") {
		t.Errorf("restart: %+v, notes %q", lg.Records, lg.Notes)
	}
	// Malformed: a rate of 0, no rate, a mesh of more names than sizes.
	lg = read(mesh + batch + steps + "step: 9  loss: 7.0  tps: 0\nstep: 9  loss: 7.0  mfu: 1%\nBuilding 2-D device mesh with ['dp_shard', 'tp'], [4]\n")
	if lg.Malformed != 3 || len(lg.Records) != 1 || lg.Records[0].Steps != 4 {
		t.Errorf("malformed: %s, records %+v", lg.MalformedSummary(), lg.Records)
	}
	for i, w := range []string{"tps 0: want tokens per second above 0", "no tps", "device mesh of 2 names and 1 sizes"} {
		if i >= len(lg.Errors) || !strings.Contains(lg.Errors[i].Error(), w) {
			t.Errorf("malformed line %d: %v, want %q", i, lg.Errors, w)
		}
	}
}

func TestDetectTorchtitan(t *testing.T) {
	for _, tc := range []struct {
		log  string
		want Format
	}{
		{"[rank0]:[titan] 2026-11-20 10:00:50,774 - root - INFO - \x1b[31mstep: 10  \x1b[32mloss:  9.8721  \x1b[34mtps: 7,800\x1b[39m\n", Torchtitan},
		{"step: 10  loss: 9.8  memory: 4.00GiB(5.00%)  wps: 1,021  mfu: 0.38%\n", Torchtitan},
		{"validate step: 10  loss: 9.8  tps: 7,800\n", ""},
		{"step: 10  loss: 9.8\n", ""},
	} {
		f, err := Detect([]byte(tc.log))
		if tc.want == "" {
			if err == nil {
				t.Errorf("%q: detected as %s", tc.log, f)
			}
			continue
		}
		if err != nil || f != tc.want {
			t.Errorf("%q: %s, %v; want %s", tc.log, f, err, tc.want)
		}
	}
}
