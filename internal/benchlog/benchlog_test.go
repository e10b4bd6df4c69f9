package benchlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	recs := []Record{
		{Kind: KindHeader, Run: "r", Tool: "test", Machine: &Machine{CPU: "x", Cores: 2}, Config: map[string]any{"lr": 0.1}},
		{Kind: KindStep, Run: "r", Model: "mlp", Workers: 2, Batch: 32, GlobalBatch: 64, Step: 3, StepTime: 0.01,
			Phases: &Phases{DataWait: 0.001, Forward: 0.003, Backward: 0.005, AllReduce: 0.002, Update: 0.0005}},
		{Kind: KindMeasurement, Model: "mlp", Transport: "nccl", Workers: 8, Nodes: 2, DevicesPerNode: 4, Batch: 64, Steps: 10, StepTime: 0.02, StepTimeStd: 0.001, SamplesPerSec: 3200, PeakMemory: 1 << 30},
		{Kind: KindConvergence, GlobalBatch: 256, Target: 0.85, Accuracy: 0.86, Reached: true, StepsToTarget: 1400, LearningRate: 0.1},
		{Kind: KindOOM, Model: "resnet50", Batch: 512, Error: "CUDA out of memory", Labels: map[string]string{"gpu": "h100"}},
		{Kind: KindLink, Run: "r", Transport: "tcp", Link: &Link{Round: 2, SmallBytes: 16384, SmallTime: 1.2e-4, LargeBytes: 4 << 20,
			LargeTime: 3.1e-3, EvictBytes: 64 << 20, Latency: 1.06e-4, Bandwidth: 1.6e9}},
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	rd := NewReader(&buf)
	for i := range recs {
		got, err := rd.Next()
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, recs[i]) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, got, recs[i])
		}
	}
	if _, err := rd.Next(); err != io.EOF {
		t.Fatalf("after last record: %v, want EOF", err)
	}
}

// TestConfigNumbers checks that a header's configuration reads back as it
// was written: small numbers as float64, as encoding/json gives them, and
// integers a float64 cannot hold (a uint64 seed) digit for digit.
func TestConfigNumbers(t *testing.T) {
	rec := Record{Kind: KindHeader, Config: map[string]any{
		"seed":   uint64(1<<63 + 1),
		"offset": int64(-(1<<53 + 1)),
		"exact":  uint64(1 << 53), // a float64 writes it with the same digits
		"big":    uint64(1 << 60), // a float64 holds it, but writes 1152921504606847000
		"lr":     0.1,
		"steps":  20,
		"layers": []any{map[string]any{"units": 64, "seed": uint64(1<<53 + 1)}},
		"name":   "mlp",
	}}
	var buf bytes.Buffer
	if err := NewWriter(&buf).Write(rec); err != nil {
		t.Fatal(err)
	}
	written := append([]byte(nil), buf.Bytes()...)
	got, err := NewReader(&buf).Next()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"seed":   json.Number("9223372036854775809"),
		"offset": json.Number("-9007199254740993"),
		"exact":  float64(1 << 53),
		"big":    json.Number("1152921504606846976"),
		"lr":     0.1,
		"steps":  20.0,
		"layers": []any{map[string]any{"units": 64.0, "seed": json.Number("9007199254740993")}},
		"name":   "mlp",
	}
	if !reflect.DeepEqual(got.Config, want) {
		t.Errorf("config read back as\n%#v\nwant\n%#v", got.Config, want)
	}
	var again bytes.Buffer
	if err := NewWriter(&again).Write(got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), written) {
		t.Errorf("written back as\n%s\nwant\n%s", again.Bytes(), written)
	}
	// Numbers a float64 cannot hold at all are still errors, with their path.
	for in, msg := range map[string]string{
		`{"kind":"header","config":{"x":1e999}}`:                       "config.x: number 1e999 out of range",
		`{"kind":"header","config":{"a":[1,{"b":-1e400}]}}`:            "config.a[1].b: number -1e400 out of range",
		`{"kind":"header","config":{"x":100000000000000000000000000}}`: "",
	} {
		_, err := Decode([]byte(in))
		if msg == "" && err != nil || msg != "" && (err == nil || err.Error() != msg) {
			t.Errorf("Decode(%s): error %v, want %q", in, err, msg)
		}
	}
}

func TestReaderErrors(t *testing.T) {
	in := strings.Join([]string{
		`{"kind":"measurement","batch":8,"step_time_s":0.1}`,
		``,
		`{"kind":"measurement","batch":8,"step_time":0.1}`,
		`{"kind":"bogus"}`,
		`{"kind":"measurement","batch":8}`,
		`{"kind":"measurement","batch":8,"step_time_s":-1}`,
		`{"kind":"measurement","batch":8,"step_time_s":0.1`,
		`{"kind":"convergence","global_batch":8,"steps_to_target":5,"accuracy":75}`,
		`{"kind":"measurement","batch":"8","step_time_s":0.1}`,
		`{"kind":"measurement","batch":8.5,"step_time_s":0.1}`,
		`{"kind":"header","machine":{"cores":[2]}}`,
		`{"kind":"header","machine":"here"}`,
		`{"kind":"measurement","batch":8,"step_time_s":true}`,
		`{"kind":"link","transport":"tcp","link":{"small_bytes":16,"small_s":1e-4,"large_bytes":4096,"large_s":1e-3,"latency_s":0,"bandwidth_bytes_per_s":5e6}}`,
		`{"kind":"link","transport":"tcp"}`,
		`{"kind":"link","link":{"small_bytes":16,"small_s":1e-4,"large_bytes":4096,"large_s":1e-3,"latency_s":0,"bandwidth_bytes_per_s":5e6}}`,
		`{"kind":"link","transport":"tcp","link":{"small_bytes":4096,"small_s":1e-4,"large_bytes":4096,"large_s":1e-3,"latency_s":0,"bandwidth_bytes_per_s":5e6}}`,
		`{"kind":"link","transport":"tcp","link":{"small_bytes":16,"small_s":0,"large_bytes":4096,"large_s":1e-3,"latency_s":0,"bandwidth_bytes_per_s":5e6}}`,
		`{"kind":"link","transport":"tcp","link":{"small_bytes":16,"small_s":1e-4,"large_bytes":4096,"large_s":1e-3,"latency_s":-1,"bandwidth_bytes_per_s":5e6}}`,
		`{"kind":"link","transport":"tcp","link":{"round":-1,"small_bytes":16,"small_s":1e-4,"large_bytes":4096,"large_s":1e-3,"latency_s":0,"bandwidth_bytes_per_s":5e6}}`,
		`{"kind":"measurement","batch":8,"step_time_s":0.1,"link":{"small_bytes":16,"small_s":1e-4,"large_bytes":4096,"large_s":1e-3,"latency_s":0,"bandwidth_bytes_per_s":5e6}}`,
		`{"kind":"measurement","workers":8,"nodes":2,"devices_per_node":4,"batch":8,"step_time_s":0.1}`,
		`{"kind":"measurement","workers":6,"nodes":2,"batch":8,"step_time_s":0.1}`,
		`{"kind":"measurement","workers":6,"nodes":2,"devices_per_node":4,"batch":8,"step_time_s":0.1}`,
		`{"kind":"measurement","workers":2,"nodes":3,"batch":8,"step_time_s":0.1}`,
		`{"kind":"measurement","workers":2,"nodes":-1,"batch":8,"step_time_s":0.1}`,
		`{"kind":"header","machine":{"host_costs":{"cuda_op":35.14,"autocast":-0.01}}}`,
		`{"kind":"header","machine":{"host_costs":{"cuda_op":2e6}}}`,
		`{"kind":"header","machine":{"host_costs":{"":1}}}`,
	}, "\n")
	want := []string{
		"",
		`line 3: json: unknown field "step_time"`,
		`line 4: unknown kind "bogus" (want one of header, step, measurement, convergence, oom, link, end)`,
		`line 5: measurement record without step_time_s or samples_per_s`,
		`line 6: step_time_s = -1: must be a finite number >= 0`,
		`line 7: unexpected EOF`,
		`line 8: accuracy 75, target 0: must be fractions in [0, 1]`,
		`line 9: batch: want a whole number, got a string`,
		`line 10: batch: want a whole number, got the number 8.5`,
		`line 11: machine.cores: want a whole number, got an array`,
		`line 12: machine: want an object, got a string`,
		`line 13: step_time_s: want a number, got a boolean`,
		"",
		`line 15: link record without "link"`,
		`line 16: link record without transport`,
		`line 17: link.small_bytes 4096, link.large_bytes 4096: want 0 < small < large`,
		`line 18: link.small_s = 0: must be a finite number > 0`,
		`line 19: link.latency_s = -1: must be a finite number >= 0`,
		`line 20: link.round -1, link.evict_bytes 0: must be >= 0`,
		`line 21: measurement record with a link: only link records have one`,
		"",
		"", // uneven nodes: 6 workers on 2 nodes, counts per node not given
		`line 24: workers 6: want nodes 2 × devices_per_node 4 = 8`,
		`line 25: nodes 3: more than the 2 workers`,
		`line 26: nodes = -1: must be a finite number >= 0`,
		"",
		`line 28: machine.host_costs.cuda_op = 2e+06: want microseconds within ±1e6`,
		`line 29: machine.host_costs: quantity "": want a name of 1 to 64 bytes`,
	}
	rd := NewReader(strings.NewReader(in))
	for i, w := range want {
		_, err := rd.Next()
		if w == "" {
			if err != nil {
				t.Fatalf("record %d: %v", i, err)
			}
			continue
		}
		var le *LineError
		if !errors.As(err, &le) || !strings.HasPrefix(err.Error(), w) {
			t.Errorf("record %d: got %v, want prefix %q", i, err, w)
		}
	}
}

func TestThroughput(t *testing.T) {
	r := Record{Kind: KindMeasurement, Batch: 32, Workers: 4, StepTime: 0.5}
	if got := r.Throughput(); got != 256 {
		t.Errorf("Throughput = %v, want 32*4/0.5 = 256", got)
	}
	r.SamplesPerSec = 300
	if got := r.Throughput(); got != 300 {
		t.Errorf("Throughput = %v, want 300", got)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"kind":"measurement","batch":8,"step_time_s":0.1}`))
	f.Add([]byte(`{"kind":"header","machine":{"cores":2}}`))
	f.Add([]byte(`{"kind":"header","config":{"seed":18446744073709551615,"lr":0.1,"layers":[64,-9007199254740993]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(b)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := NewWriter(&buf).Write(r); err != nil {
			t.Fatalf("decoded record does not write back: %v", err)
		}
		// What was written reads back and writes the same bytes.
		r2, err := Decode(buf.Bytes())
		if err != nil {
			t.Fatalf("written record %s does not decode: %v", buf.Bytes(), err)
		}
		var again bytes.Buffer
		if err := NewWriter(&again).Write(r2); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again.Bytes(), buf.Bytes()) {
			t.Fatalf("written back as\n%s\nwant\n%s", again.Bytes(), buf.Bytes())
		}
	})
}
