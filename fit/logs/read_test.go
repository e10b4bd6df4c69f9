package logs

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"scaleplan/internal/benchlog"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// dump prints everything a reader found, one fact per line.
func dump(lg *Log) string {
	var b strings.Builder
	fmt.Fprintf(&b, "format: %s (%s)\n", lg.Format, lg.Format.Describe())
	fmt.Fprintf(&b, "records: %d\n", len(lg.Records))
	for i, r := range lg.Records {
		j, err := json.Marshal(r)
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(&b, "  line %d: %s\n", lg.Lines[i], j)
	}
	fmt.Fprintf(&b, "runs: %d\n", len(lg.Runs))
	for _, r := range lg.Runs {
		fmt.Fprintf(&b, "  line %d: run %s model %q benchmark %q device %q global batch %d epochs %g accuracy %g status %q time to train %v\n",
			r.Line, r.Run, r.Model, r.Benchmark, r.Device, r.GlobalBatch, r.Epochs, r.Accuracy, r.Status, r.TimeToTrain)
	}
	if len(lg.Collectives) > 0 {
		fmt.Fprintf(&b, "collectives: %d\n", len(lg.Collectives))
		for _, c := range lg.Collectives {
			fmt.Fprintf(&b, "  line %d: op %q ranks %d nodes %d device %q type %q avg busbw %v\n", c.Line, c.Op, c.Ranks, c.Nodes, c.Device, c.Type, c.AvgBusBW)
			for _, p := range c.Points {
				fmt.Fprintf(&b, "    line %d: %v in %v: algbw %v, busbw %v\n", p.Line, p.Bytes, p.Time, p.AlgBW, p.BusBW)
			}
		}
	}
	fmt.Fprintf(&b, "malformed: %d\n", lg.Malformed)
	for _, e := range lg.Errors {
		fmt.Fprintf(&b, "  %v\n", e)
	}
	fmt.Fprintf(&b, "notes: %d\n", len(lg.Notes))
	for _, n := range lg.Notes {
		fmt.Fprintf(&b, "  %s\n", n)
	}
	return b.String()
}

// golden compares got with ../testdata/golden/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// TestReadGolden reads every sample log, written to the published format
// of its tool, and compares what was found with a golden dump.
func TestReadGolden(t *testing.T) {
	for _, tc := range []struct {
		file      string
		format    Format
		records   int // records expected, a check on the golden file
		malformed int
	}{
		{"bench_resnet50.jsonl", Benchlog, 28, 0},
		{"bench_garbled.jsonl", Benchlog, 8, 4},
		{"horovod_resnet50.txt", Horovod, 4, 0},
		{"horovod_truncated.txt", Horovod, 2, 3},
		{"tf_cnn_resnet50.txt", TFCNN, 3, 0},
		{"tf_cnn_truncated.txt", TFCNN, 2, 2},
		{"mlperf_resnet.log", MLPerf, 38, 0},
		{"mlperf_truncated.log", MLPerf, 5, 4},
		{"mlperf06_resnet.log", MLPerfV06, 5, 0},
		{"mlperf06_ssd_truncated.log", MLPerfV06, 2, 2},
		{"mlperf06_garbled.log", MLPerfV06, 3, 8},
		{"seed003.csv", CSV, 12, 0},
		{"steps_semicolon.csv", CSV, 10, 0},
		{"garbled.csv", CSV, 4, 5},
		{"torchvision_resnet18_cpu.txt", Torchvision, 6, 0},
		{"torchvision_resnet50_ddp.txt", Torchvision, 2, 0},
		{"torchvision_truncated.txt", Torchvision, 1, 2},
		{"hf_trainer_vit_ddp.txt", HFTrainer, 2, 0},
		{"megatron_gpt_tp2.txt", Megatron, 4, 0},
		{"deepspeed_bert_zero2.txt", DeepSpeed, 2, 0},
		{"lightning_ddp_metrics.csv", Lightning, 1, 0},
		{"lightning_1gpu_metrics.csv", Lightning, 2, 0},
		{"lightning_val_metrics.csv", Lightning, 2, 0},
		{"torchtitan_llama3_8b.txt", Torchtitan, 2, 0},
		{"nccl_allreduce_h100x16.txt", NCCLTests, 0, 0},
		{"nccl_mixed.txt", NCCLTests, 0, 2},
	} {
		t.Run(tc.file, func(t *testing.T) {
			lg, err := ReadFile(filepath.Join("..", "testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if lg.Format != tc.format {
				t.Errorf("format %s, want %s", lg.Format, tc.format)
			}
			if len(lg.Records) != tc.records || lg.Malformed != tc.malformed {
				t.Errorf("%d records, %d malformed; want %d, %d", len(lg.Records), lg.Malformed, tc.records, tc.malformed)
			}
			for i, r := range lg.Records {
				if err := r.Validate(); err != nil {
					t.Errorf("record %d (line %d): %v", i, lg.Lines[i], err)
				}
			}
			golden(t, tc.file+".golden", dump(lg))
		})
	}
}

// TestReadFigures checks the figures the readers derive against values
// computed by hand from the sample logs.
func TestReadFigures(t *testing.T) {
	lg, err := ReadFile("../testdata/mlperf_resnet.log")
	if err != nil {
		t.Fatal(err)
	}
	// run_start at 1593997686372 ms and run_stop at 1594001961590 ms:
	// 4275.218 s, 71.25 min (seed 000: 71.28 min on 8 V100).
	if len(lg.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(lg.Runs))
	}
	r := lg.Runs[0]
	if got, want := float64(r.TimeToTrain), 4275.218; got < want-1e-6 || got > want+1e-6 {
		t.Errorf("time to train %v s, want %v", got, want)
	}
	if r.Epochs != 37 || r.GlobalBatch != 1664 || r.Status != "success" || r.Accuracy != 0.7598 {
		t.Errorf("run %+v: want 37 epochs at global batch 1664, success, accuracy 0.7598", r)
	}
	// The run's step: the mean of its epochs' (each 1664 / samples/s).
	var sum float64
	for _, m := range lg.Records {
		if m.Kind == benchlog.KindMeasurement {
			sum += 1664 / m.SamplesPerSec
		}
	}
	if want := sum / 37; math.Abs(float64(r.StepTime)/want-1) > 1e-12 || r.DataWait != 0 {
		t.Errorf("run step %v, data wait %v; want %v s and none", r.StepTime, r.DataWait, want)
	}
	// The second epoch: 1281167 samples between its epoch_start and epoch_stop.
	m := lg.Records[1]
	if m.Kind != benchlog.KindMeasurement {
		t.Fatalf("record 1 is %s", m.Kind)
	}
	start, stop := mllogTime(t, "../testdata/mlperf_resnet.log", `"epoch_start"`, 2), mllogTime(t, "../testdata/mlperf_resnet.log", `"epoch_stop"`, 2)
	want := 1281167 / ((stop - start) / 1000)
	if d := m.SamplesPerSec/want - 1; d > 1e-12 || d < -1e-12 {
		t.Errorf("epoch 2: %v samples/s, want %v", m.SamplesPerSec, want)
	}
	// The last record: 37 epochs of 1281167 samples at 1664 per step.
	c := lg.Records[len(lg.Records)-1]
	if c.Kind != benchlog.KindConvergence || c.StepsToTarget != 28487 || !c.Reached {
		t.Errorf("convergence %+v: want 28487 steps (37·1281167/1664), reached", c)
	}

	lg, err = ReadFile("../testdata/horovod_resnet50.txt")
	if err != nil {
		t.Fatal(err)
	}
	// "Total img/sec on 4 GPU(s)" with "Batch size: 16".
	if r := lg.Records[0]; r.Workers != 4 || r.Batch != 16 || r.GlobalBatch != 64 || r.Model != "resnet50" {
		t.Errorf("first record %+v: want 4 workers, batch 16, global 64, resnet50", r)
	}
}

// mllogTime returns time_ms of the event key with epoch_num n.
func mllogTime(t *testing.T, file, key string, n int) float64 {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.Contains(l, key) || !strings.Contains(l, fmt.Sprintf(`"epoch_num": %d}`, n)) {
			continue
		}
		var e struct {
			TimeMS float64 `json:"time_ms"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(l, ":::MLLOG ")), &e); err != nil {
			t.Fatal(err)
		}
		return e.TimeMS
	}
	t.Fatalf("%s: no %s with epoch_num %d", file, key, n)
	return 0
}

// TestBenchlogRoundTrip: what internal/benchlog writes, fit reads, and
// writes back byte for byte.
// writeRecords writes recs as a bench log and returns its bytes.
func writeRecords(t *testing.T, recs []benchlog.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := benchlog.NewWriter(&buf)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func TestBenchlogRoundTrip(t *testing.T) {
	recs := []benchlog.Record{
		{Kind: benchlog.KindHeader, Run: "r1", Tool: "scaleplan-engine", Machine: &benchlog.Machine{Host: "n1", Cores: 2, DeviceName: "cpu"}, Config: map[string]any{"lr": 0.1, "model": "mlp"}},
		{Kind: benchlog.KindStep, Run: "r1", Model: "mlp", Device: "localhost", Precision: "fp32", Transport: "gloo", Workers: 2, Nodes: 2, DevicesPerNode: 1, Batch: 32, GlobalBatch: 64, Step: 7, StepTime: 0.0123,
			Phases: &benchlog.Phases{DataWait: 0.0001, Forward: 0.004, Backward: 0.006, AllReduce: 0.002, Update: 0.0002}},
		{Kind: benchlog.KindMeasurement, Run: "r1", Model: "mlp", Device: "localhost", Workers: 2, Batch: 32, GlobalBatch: 64, Steps: 20, StepTime: 0.0125, StepTimeStd: 0.0004, SamplesPerSec: 5120, PeakMemory: 1 << 28, Labels: map[string]string{"framework": "gonum"}},
		{Kind: benchlog.KindConvergence, Run: "r2", Model: "mlp", GlobalBatch: 256, Accumulate: 2, Target: 0.85, Accuracy: 0.8512, Reached: true, StepsToTarget: 1400, LearningRate: 0.2},
		{Kind: benchlog.KindConvergence, Run: "r2", Model: "mlp", GlobalBatch: 65536, Target: 0.85, Accuracy: 0.81, StepsToTarget: 5000, LearningRate: 3.2},
		{Kind: benchlog.KindOOM, Run: "r1", Model: "mlp", Workers: 1, Batch: 1 << 20, Error: "out of memory"},
	}
	written := writeRecords(t, recs)
	lg, err := Read(bytes.NewReader(written), "roundtrip.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if lg.Format != Benchlog || lg.Malformed != 0 {
		t.Fatalf("format %s, %d malformed", lg.Format, lg.Malformed)
	}
	if !reflect.DeepEqual(lg.Records, recs) {
		t.Errorf("records differ:\n got %+v\nwant %+v", lg.Records, recs)
	}
	if want := []int{1, 2, 3, 4, 5, 6}; !reflect.DeepEqual(lg.Lines, want) {
		t.Errorf("lines %v, want %v", lg.Lines, want)
	}
	if again := writeRecords(t, lg.Records); !bytes.Equal(again, written) {
		t.Errorf("written back:\n%s\nwant:\n%s", again, written)
	}

	// A configuration holding a 64-bit seed, which a float64 cannot hold,
	// comes back digit for digit too.
	written = writeRecords(t, []benchlog.Record{
		{Kind: benchlog.KindHeader, Run: "r3", Config: map[string]any{"seed": uint64(1<<64 - 1), "lr": 0.05}},
		{Kind: benchlog.KindMeasurement, Run: "r3", Model: "mlp", Workers: 1, Batch: 8, StepTime: 0.01},
	})
	if lg, err = Read(bytes.NewReader(written), "seed.jsonl"); err != nil {
		t.Fatal(err)
	}
	if again := writeRecords(t, lg.Records); !bytes.Equal(again, written) {
		t.Errorf("written back:\n%s\nwant:\n%s", again, written)
	}
}

// A bench log's placement: torchbench's record of two nodes of one worker
// each reads with its nodes and devices per node, a record of an older log
// without them reads as before (0: not said), and one whose counts do not
// multiply is malformed.
func TestReadBenchlogNodes(t *testing.T) {
	in := `{"kind": "header", "run": "n", "tool": "torchbench", "config": {"nodes": 2, "node_rank": 0}}
{"kind": "measurement", "run": "n", "model": "mlp", "device": "cpu", "precision": "fp32", "transport": "gloo", "workers": 2, "nodes": 2, "devices_per_node": 1, "batch": 4, "global_batch": 8, "steps": 2, "step_time_s": 0.021, "phases": {"allreduce_s": 0.0107}, "samples_per_s": 380.9}
{"kind": "measurement", "run": "n", "model": "mlp", "device": "cpu", "workers": 2, "batch": 4, "step_time_s": 0.02}
{"kind": "measurement", "run": "n", "model": "mlp", "device": "cpu", "workers": 3, "nodes": 2, "devices_per_node": 2, "batch": 4, "step_time_s": 0.02}
`
	lg, err := Read(strings.NewReader(in), "nodes.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if lg.Format != Benchlog || len(lg.Records) != 3 || lg.Malformed != 1 {
		t.Fatalf("format %s, %d records, %d malformed; want benchlog, 3, 1", lg.Format, len(lg.Records), lg.Malformed)
	}
	if r := lg.Records[1]; r.Workers != 2 || r.Nodes != 2 || r.DevicesPerNode != 1 || r.Transport != "gloo" || r.Phases == nil || r.Phases.AllReduce != 0.0107 {
		t.Errorf("two-node record %+v", r)
	}
	if r := lg.Records[2]; r.Nodes != 0 || r.DevicesPerNode != 0 {
		t.Errorf("record without placement %+v: nodes %d, devices per node %d; want 0, 0", r, r.Nodes, r.DevicesPerNode)
	}
	if len(lg.Errors) != 1 || lg.Errors[0].Line != 4 || !strings.Contains(lg.Errors[0].Error(), "workers 3: want nodes 2 × devices_per_node 2 = 4") {
		t.Errorf("errors %v, want line 4's placement", lg.Errors)
	}
}

func TestReadErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		is       error
		want     string // substring of the message
	}{
		{"empty", "", ErrUnknownFormat, "want one of"},
		{"prose", "hello\nworld\n", ErrUnknownFormat, "Total img/sec on N GPU(s)"},
		{"csv without batch", "devices,samples_per_s\n1,200\n", ErrUnknownFormat, "CSV with a header"},
		{"benchlog all bad", "{\"kind\":\"measurement\"}\n{\"kind\":\"bogus\"}\n", ErrNoRecords,
			`no usable records in scaleplan bench log (JSON lines): want JSON lines such as {"kind":"measurement","batch":64,"step_time_s":0.1}; 2 malformed lines: line 1: measurement record without batch or global_batch`},
		{"horovod without numbers", "Model: resnet50\nBatch size: 32\nTotal img/sec on 4 GPU(s): n/a\n", ErrNoRecords, `line 3: want "Total img/sec on N GPU(s): X +-Y": bad number "n/a"`},
		{"horovod without batch", "Model: resnet50\nTotal img/sec on 4 GPU(s): 390.1 +-2.0\n", ErrNoRecords, `line 2: no usable "Batch size:" line before this result`},
		{"horovod batch of zero", "Model: resnet50\nBatch size: 0\nTotal img/sec on 4 GPU(s): 390.1 +-2.0\n", ErrNoRecords,
			`2 malformed lines: line 2: batch size "0": want a whole number from 1 to 2^31: "Batch size: 0"; line 3: no usable "Batch size:" line before this result`},
		{"horovod batch past int", "Model: resnet50\nBatch size: 99999999999999999999\nTotal img/sec on 4 GPU(s): 390.1 +-2.0\n", ErrNoRecords,
			`line 2: batch size "99999999999999999999": want a whole number from 1 to 2^31`},
		{"horovod counts disagree", "Model: resnet50\nBatch size: 32\nNumber of GPUs: 4\nTotal img/sec on 8 GPU(s): 390.1 +-2.0\n", ErrNoRecords,
			`line 4: total on 8 GPUs, where "Number of GPUs" said 4`},
		{"horovod on no GPUs", "Model: resnet50\nBatch size: 32\nNumber of GPUs: 0\nTotal img/sec on 0 GPU(s): 390.1 +-2.0\n", ErrNoRecords,
			`2 malformed lines: line 3: number of GPUs "0": want a whole number from 1 to 2^31: "Number of GPUs: 0"; line 4: want "Total img/sec on N GPU(s): X +-Y": GPUs "0": want a whole number from 1 to 2^31`},
		{"tf_cnn global batch of zero", "Model: resnet50\nBatch size: 0 global\nDevices: ['/gpu:0']\ntotal images/sec: 100.5\n", ErrNoRecords,
			`2 malformed lines: line 2: global batch "0": want a whole number from 1 to 2^31: "Batch size: 0 global"; line 4: no usable "Batch size:" line before this result`},
		{"torchvision batch of zero", "Namespace(batch_size=0, device='cuda', world_size=1)\n" +
			"Epoch: [0]  [ 20/100]  eta: 0:00:10  lr: 0.1  loss: 6.9 (6.9)  time: 0.1000  data: 0.0010\n", ErrNoRecords,
			`line 1: batch_size "0": want a whole number from 1 to 2^31`},
		{"csv batch past 2^31", "batch,devices,samples_per_s\n4294967296,4294967296,100\n", ErrNoRecords,
			`line 2: batch "4294967296": want a whole number up to 2^31; devices "4294967296": want a whole number up to 2^31`},
		{"mlperf only settings", `:::MLLOG {"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "global_batch_size", "value": 256.0, "metadata": {}}` + "\n", ErrNoRecords, "MLPerf Training log"},
		{"csv header only", "batch,samples_per_s\n", ErrNoRecords, "CSV with a header"},
		{"csv column twice", "batch,devices,batch,samples_per_s\n8,1,8,100\n", ErrUnknownFormat,
			`(the first line, read as a CSV header: csv header: columns "batch" and "batch" both give batch)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lg, err := Read(strings.NewReader(tc.in), "in.log")
			if err == nil {
				t.Fatalf("no error; read %s with %d records", lg.Format, len(lg.Records))
			}
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "in.log: ") {
				t.Errorf("error %q: want %v containing %q, prefixed by the file name", err, tc.is, tc.want)
			}
		})
	}
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Format
	}{
		{`{"kind":"header"}`, Benchlog},
		{"\n\n  {broken", Benchlog},
		{"noise\n0: :::MLLOG {}\n", MLPerf},
		{":::MLL 1558640449.212 run_start: {\"value\": null, \"metadata\": {\"lineno\": 42}}\n", MLPerfV06},
		{"noise\n0: :::MLL 1558640449.212 epoch_start: {}\n", MLPerfV06},
		{":::MLL 1.000 run_start: {}\n:::MLLOG {}\n", MLPerf}, // :::MLLOG wins
		{":::MLLx 1.000 run_start: {}\ntotal images/sec: 12.5\n", TFCNN},
		{"total images/sec: 12.5\n", TFCNN},
		{"10\timages/sec: 761.0 +/- 0.5 (jitter = 1.9)\t7.932\n", TFCNN},
		{"Img/sec per CPU: 12.1 +-0.3\n", Horovod},
		{"Epoch: [0]  [ 20/100]  eta: 0:00:10  lr: 0.1  loss: 6.9 (6.9)  time: 0.1000  data: 0.0010\n", Torchvision},
		{"[default0]:Epoch: [3]  [   0/5005]  eta: 2:33:25  lr: 0.1  img/s: 82.3  time: 1.8383  data: 1.0497  max mem: 10163\n", Torchvision},
		{"# Epoch: [0] Total time: 0:00:10\nbatch,samples_per_s\n8,100\n", CSV}, // no training line
		{"# comment\nbatch\tstep_time\n8\t0.1\n", CSV},
		{"Global Batch Size;Steps to target\n", CSV},
	} {
		got, err := Detect([]byte(tc.in))
		if err != nil || got != tc.want {
			t.Errorf("Detect(%q) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

// A CSV as a spreadsheet writes it (a UTF-8 byte order mark, CRLF) or as
// Windows PowerShell's > writes it (UTF-16 with a byte order mark, either
// order) reads as the plain UTF-8 file does.
func TestReadEncodings(t *testing.T) {
	const text = "batch,samples_per_s\r\n16,100\r\n32,180\r\n64,300\r\n"
	want, err := Read(strings.NewReader(text), "plain.csv")
	if err != nil {
		t.Fatal(err)
	}
	utf16 := func(order binary.AppendByteOrder, bom uint16) string {
		b := order.AppendUint16(nil, bom)
		for _, r := range text { // ASCII: one code unit a character
			b = order.AppendUint16(b, uint16(r))
		}
		return string(b)
	}
	for name, data := range map[string]string{
		"utf8-bom": "\xef\xbb\xbf" + text,
		"utf16-le": utf16(binary.LittleEndian, 0xfeff),
		"utf16-be": utf16(binary.BigEndian, 0xfeff),
	} {
		lg, err := Read(strings.NewReader(data), name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if lg.Format != CSV || !reflect.DeepEqual(lg.Records, want.Records) || !reflect.DeepEqual(lg.Lines, want.Lines) {
			t.Errorf("%s: %s, %+v at lines %v; want %+v at %v", name, lg.Format, lg.Records, lg.Lines, want.Records, want.Lines)
		}
	}
	if _, err := Read(strings.NewReader("\xff\xfeb"), "odd.csv"); err == nil || !strings.Contains(err.Error(), "odd number of bytes") {
		t.Errorf("odd UTF-16: %v", err)
	}
}

// A CSV row is refused, with its line, when a count or a speed is zero or
// when its samples_per_s and step_time give different speeds: the
// throughput of one device beside the step time of all of them (row 6: 8
// devices × 32 in 0.512 s is 500 samples/s, not 62.5) is the usual case.
// Rows whose two agree within 5 % are kept (rows 7 and 8).
func TestReadCSVRowChecks(t *testing.T) {
	const in = `batch,devices,samples_per_s,step_time
32,0,100,
32,1,0,
32,1,,0 ms
32,1,100,0.2
32,8,62.5,0.512
32,8,500,0.512
64,1,305,0.2
`
	lg, err := Read(strings.NewReader(in), "rows.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{
		2: `devices "0": want a number > 0`,
		3: `samples_per_s "0": want a number > 0`,
		4: `step_time "0 ms": want a time > 0`,
		5: "samples_per_s 100 and step_time 200 ms disagree by more than 5%: a global batch of 32 in 200 ms is 160 samples/s (give one of the two)",
		6: "samples_per_s 62.5 and step_time 512 ms disagree by more than 5%: a global batch of 256 in 512 ms is 500 samples/s (give one of the two, or the samples/s of all 8 devices)",
	}
	if lg.Malformed != len(want) || len(lg.Errors) != len(want) {
		t.Fatalf("%d malformed lines, errors %v; want %d", lg.Malformed, lg.Errors, len(want))
	}
	for _, e := range lg.Errors {
		if w, ok := want[e.Line]; !ok || e.Err.Error() != w {
			t.Errorf("line %d: %v; want %q", e.Line, e.Err, w)
		}
	}
	if !reflect.DeepEqual(lg.Lines, []int{7, 8}) {
		t.Errorf("records at lines %v; want 7, 8", lg.Lines)
	}
}

// tf_cnn_benchmarks prints the global batch and total images/sec over
// every worker (num_workers × the process's batch) but the Devices of its
// own process: rank 0 of a Horovod run of 8 processes of one GPU each
// lists one device. The record counts global / per device, 8, with a note.
func TestReadTFCNNWorkers(t *testing.T) {
	const in = "Model:       resnet50\nMode:        training\nBatch size:  512 global\n             64 per device\n" +
		"Devices:     ['/gpu:0']\nVariables:   horovod\n----------------------------------------------------------------\n" +
		"total images/sec: 6400.00\n"
	lg, err := Read(strings.NewReader(in), "hvd-rank0.log")
	if err != nil {
		t.Fatal(err)
	}
	if len(lg.Records) != 1 {
		t.Fatalf("%d records", len(lg.Records))
	}
	r := lg.Records[0]
	if r.Workers != 8 || r.Batch != 64 || r.GlobalBatch != 512 || r.SamplesPerSec != 6400 || r.Device != "GPU" {
		t.Errorf("record %+v; want 8 GPUs of 64, 512 in all, 6400 samples/s", r)
	}
	want := "line 8: global batch 512 is 64 per device × 8 devices, where the Devices list has 1: a run of several workers, counted as 8 devices"
	if len(lg.Notes) != 1 || lg.Notes[0] != want {
		t.Errorf("notes %q; want %q", lg.Notes, want)
	}
}
