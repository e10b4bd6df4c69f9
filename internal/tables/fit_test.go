package tables

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"scaleplan/fit"
	"scaleplan/fit/logs"
	"scaleplan/hw"
	"scaleplan/internal/benchlog"
	"scaleplan/internal/calib"
	"scaleplan/model"
)

// TestMeasured: the note of a group without a fit gives its points'
// samples/s, one value or the range: the hand-written torchvision log's
// two epochs ran 1,024 samples in 0.1650 and 0.1700 s.
func TestMeasured(t *testing.T) {
	for _, tc := range []struct {
		v    []float64
		want string
	}{
		{nil, ""},
		{[]float64{290.3152642322522}, "290.3 samples/s"},
		{[]float64{1024 / 0.165, 1024 / 0.17}, "6024–6206 samples/s"},
	} {
		var ps []fit.Point
		for _, v := range tc.v {
			ps = append(ps, fit.Point{Throughput: v})
		}
		if got := measured(ps); got != tc.want {
			t.Errorf("measured(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// TestCalibrationReach: for each entry of a calibration, fit --out says
// (after "fit: ") which scenarios compute by it, by the rule of
// scenarios.PickCalibration, or why none does.
func TestCalibrationReach(t *testing.T) {
	cat, err := hw.Default()
	if err != nil {
		t.Fatal(err)
	}
	prof, err := model.Default()
	if err != nil {
		t.Fatal(err)
	}
	e := func(m, dev string, n int, prec string) calib.ThroughputEntry {
		return calib.ThroughputEntry{Model: m, Device: dev, Devices: n, Precision: prec, V0: 1000, R2: 1, Points: 3}
	}
	unbounded := e("resnet50", "t4", 1, "fp16")
	unbounded.V0Unbounded = true
	pairs := e("transformer-base", "NVIDIA H200", 1, "fp32")
	pairs.Labels = map[string]string{"sample": "sentence-pair"}
	tokens := e("transformer-base", "NVIDIA H200", 1, "amp-fp16")
	tokens.Labels = map[string]string{"sample": "token-pair"}
	// Two entries apart only by how the model ran, with the same figures:
	// the second is shadowed, and each line names its variant.
	cl := e("resnet50", "h200-sxm-141gb", 1, "amp-bf16")
	cl.Labels = map[string]string{"channels_last": "true"}
	compiled := cl
	compiled.Labels = map[string]string{"channels_last": "true", "compile": "true"}
	cal := &calib.Calibration{Throughput: []calib.ThroughputEntry{
		e("resnet50", "NVIDIA H100 80GB HBM3", 1, "amp-fp16"),
		e("resnet50", "h100-sxm5-80gb", 8, "amp-fp16"),
		e("resnet50", "a100-sxm4-80gb", 1, ""),
		e("resnet18", "a100-sxm4-80gb", 1, "fp32"),
		e("resnet50", "GPU", 1, "fp32"),
		e("resnet50", "NVIDIA L40S", 1, "fp32"),
		e("resnet50", "t4", 1, "fp8"),
		e("resnet50", "v100-sxm2-16gb", 0, "fp16"),
		unbounded,
		pairs,
		tokens,
		cl,
		compiled,
	}}
	got := CalibrationReach("c.yaml", cal, cat, prof)
	want := []string{
		"c.yaml: resnet50 on 1 NVIDIA H100 80GB HBM3, amp-fp16: scenarios of resnet50 on h100-sxm5-80gb at fp16 compute by it",
		"c.yaml: resnet50 on 8 h100-sxm5-80gb, amp-fp16: scenarios of resnet50 on h100-sxm5-80gb take the entry on 1 device before it",
		"c.yaml: resnet50 on 1 a100-sxm4-80gb: scenarios of resnet50 on a100-sxm4-80gb at fp64, fp32, tf32, fp16, bf16 compute by it",
		"c.yaml: resnet18 on 1 a100-sxm4-80gb, fp32: no scenario takes it: the profiles have no model \"resnet18\"",
		"c.yaml: resnet50 on 1 GPU, fp32: no scenario takes it: name the device kind with --device",
		"c.yaml: resnet50 on 1 NVIDIA L40S, fp32: no scenario takes it: no catalogue device is called \"NVIDIA L40S\"",
		"c.yaml: resnet50 on 1 t4, fp8: no scenario takes it: precision \"fp8\" is none of fp64, fp32, tf32, fp16, bf16, amp-fp16, amp, amp-bf16",
		"c.yaml: resnet50 on 0 v100-sxm2-16gb, fp16: no scenario takes it: the logs did not say on how many devices",
		"c.yaml: resnet50 on 1 t4, fp16: no scenario takes it: its points did not bound v0",
		"c.yaml: transformer-base on 1 NVIDIA H200, fp32: no scenario takes it: its samples are of kind \"sentence-pair\" (label sample) and transformer-base's profile counts tokens",
		"c.yaml: transformer-base on 1 NVIDIA H200, amp-fp16: scenarios of transformer-base on h200-sxm-141gb at fp16 compute by it",
		"c.yaml: resnet50 on 1 h200-sxm-141gb, amp-bf16, channels_last: scenarios of resnet50 on h200-sxm-141gb at bf16 compute by it",
		"c.yaml: resnet50 on 1 h200-sxm-141gb, amp-bf16, channels_last compile: scenarios of resnet50 on h200-sxm-141gb take the entry on 1 device before it (channels_last)",
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("line %d:\n got %s\nwant %s...", i+1, got[i], want[i])
		}
	}
}

// TestLogRead: what fit says of each log it reads: its format, what it
// holds, the malformed lines quoted and a count of the rest, its notes.
func TestLogRead(t *testing.T) {
	bad := errors.New("no batch")
	for _, tc := range []struct {
		name string
		lg   *logs.Log
		want []string
	}{
		{"one record", &logs.Log{Name: "a.jsonl", Format: logs.Benchlog, Records: make([]benchlog.Record, 1)},
			[]string{"a.jsonl: read as benchlog (scaleplan bench log (JSON lines)): 1 record"}},
		{"collectives", &logs.Log{Name: "n.txt", Format: logs.NCCLTests, Collectives: make([]logs.Collective, 2)},
			[]string{"n.txt: read as nccl-tests (nccl-tests output (all_reduce_perf, ...)): 2 collective tests"}},
		{"malformed", &logs.Log{Name: "m.log", Format: logs.MLPerf, Records: make([]benchlog.Record, 3), Runs: make([]logs.Run, 2), Malformed: 7,
			Errors: []*benchlog.LineError{{Line: 4, Text: "x", Err: bad}, {Line: 9, Text: "y", Err: bad}}, Notes: []string{"no device count"}},
			[]string{
				"m.log: read as mlperf (MLPerf Training log (:::MLLOG lines)): 3 records, 2 runs, 7 malformed lines",
				`  line 4: no batch: "x"`,
				`  line 9: no batch: "y"`,
				"  and 5 more",
				"m.log: no device count",
			}},
		{"one malformed", &logs.Log{Name: "c.csv", Format: logs.CSV, Runs: make([]logs.Run, 1), Malformed: 1,
			Errors: []*benchlog.LineError{{Line: 2, Text: "z", Err: bad}}},
			[]string{"c.csv: read as csv (CSV with a header): 0 records, 1 run, 1 malformed line", `  line 2: no batch: "z"`}},
	} {
		if got := LogRead(tc.lg); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// TestCalibrationWritten: fit --out counts the entries it wrote and names
// what it left out for want of a model name: a CSV without a model column
// gives a throughput group and a steps curve of no model.
func TestCalibrationWritten(t *testing.T) {
	var lgs []*logs.Log
	for name, csv := range map[string]string{
		"v.csv": "device,batch,samples_per_s\nt4,32,320\nt4,64,355.5555556\nt4,128,376.4705882\n",
		"s.csv": "global_batch,steps_to_target\n64,2000\n128,1200\n256,800\n",
	} {
		lg, err := logs.Read(strings.NewReader(csv), name)
		if err != nil {
			t.Fatal(err)
		}
		lgs = append(lgs, lg)
	}
	rep, err := fit.Fit(lgs, &fit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := CalibrationWritten(rep, rep.Calibration(), "c.yaml")
	want := []string{
		"wrote c.yaml: 0 throughput, 0 comm, 0 steps entries",
		"not in c.yaml: group ? t4 ×1 has no model name",
		"not in c.yaml: a steps curve has no model name (give the log a model column)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
