package sim

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"scaleplan/internal/units"
)

// TestTrace checks that a trace is Chrome trace-event JSON whose device
// tracks tile the traced steps (every moment is compute or a named wait),
// and that a large cluster traces a sample of its devices.
func TestTrace(t *testing.T) {
	for _, c := range []struct {
		nodes, per, stages int
		storage            Storage
		devices            int // device tracks expected
	}{
		{1, 4, 2, SharedDB, 4},
		{2, 4, 1, Local, 8},
		{8, 4, 1, SharedDB, 6}, // first node, slowest, last
	} {
		cfg := Config{Nodes: c.nodes, DevicesPerNode: c.per, Stages: c.stages, MicroBatch: 16, Accumulation: 2,
			Compute: Compute{PerSample: 2e-3, Update: 1e-3}, Memory: Memory{Gradients: 50 * units.MB},
			Comm:    Comm{Boundary: 1 * units.MB},
			Network: Network{Intra: Link{Bandwidth: 50e9}, NIC: Link{Bandwidth: 12.5e9}},
			Input: Input{Storage: c.storage, SampleBytes: 100e3, Local: 2e9, Shared: SharedStorage{Aggregate: 100e9, PerClient: 3e9},
				DB: DB{Service: 1e-4}, Decode: 4e-3, Cores: 16}, Jitter: 0.1, Steps: 4, TraceSteps: 2}
		res, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := res.Trace.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			TraceEvents []TraceEvent `json:"traceEvents"`
		}
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatalf("trace is not JSON: %v", err)
		}
		start, end := float64(res.Steps[2].Start)*1e6, float64(res.Steps[3].End)*1e6
		busy := map[int]float64{}
		names := map[int]bool{}
		for _, e := range doc.TraceEvents {
			switch {
			case e.Ph == "M" && e.Pid == pidDevices && e.Name == "thread_name":
				names[e.Tid] = true
			case e.Ph == "X" && e.Pid == pidDevices:
				if e.Ts < start-1e-6 || e.Ts+e.Dur > end+1e-6 || e.Dur < 0 {
					t.Errorf("event %+v outside the traced steps [%v, %v]", e, start, end)
				}
				busy[e.Tid] += e.Dur
			}
		}
		if len(names) != c.devices || len(busy) != c.devices {
			t.Errorf("%d nodes of %d: %d device tracks with %d busy, want %d", c.nodes, c.per, len(names), len(busy), c.devices)
		}
		for tid, d := range busy {
			if math.Abs(d-(end-start)) > 1e-6*(end-start) {
				t.Errorf("device %d: spans cover %v us of %v", tid, d, end-start)
			}
		}
	}
}
