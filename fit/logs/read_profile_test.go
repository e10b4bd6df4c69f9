package logs

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readTestProfiles reads the profiles of testdata file name, returning
// them with the file's bytes.
func readTestProfiles(t *testing.T, name string) ([]Profile, []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := ReadProfiles(path, data)
	if err != nil {
		t.Fatal(err)
	}
	return ps, data
}

// TestReadBenchProfile reads the profile that `torchbench.py --model mlp
// --batch 8 --steps 2 --warmup 1 --device cpu --threads 1 --profile`
// wrote (torch 1.13 on the CPU) and checks it against the file's JSON
// read generically: every operator, its calls, times and FLOPs.
func TestReadBenchProfile(t *testing.T) {
	ps, data := readTestProfiles(t, "torchbench-mlp-cpu.profile.json")
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	rp := raw["profiles"].([]any)
	if len(ps) != len(rp) || len(ps) != 1 {
		t.Fatalf("%d profiles, want %d", len(ps), len(rp))
	}
	p, q := ps[0], rp[0].(map[string]any)
	if p.Device != "cpu" || p.Model != "mlp" || p.Precision != "fp32" || p.Batch != 8 || float64(p.StepTime) != q["step_time_s"].(float64) {
		t.Errorf("profile %+v", p)
	}
	ops := q["ops"].([]any)
	if len(p.Ops) != len(ops) {
		t.Fatalf("%d ops, want %d", len(p.Ops), len(ops))
	}
	for i, o := range ops {
		m := o.(map[string]any)
		g := p.Ops[i]
		if g.Name != m["name"] || g.Calls != m["calls"] || float64(g.SelfCPU) != m["self_cpu_s"] || g.FLOPs != m["flops"] ||
			float64(g.SelfDevice) != m["self_device_s"] || float64(g.CPU) != m["cpu_s"] {
			t.Errorf("op %d: %+v, want %v", i, g, m)
		}
	}
	if g := p.Ops[0]; g.Name != "aten::mm" || g.Class != "matmul" || g.Calls != 5 {
		t.Errorf("first op %+v: want aten::mm, matmul, 5 calls (the backward products of three linear layers, less the first's input gradient)", g)
	}
}

// TestReadChromeTrace reads a Chrome trace made by hand: a linear
// operator (0–100 µs) holding an addmm (10–40 µs, 1e6 FLOPs) whose kernel
// ran 25 µs on the device, and a relu (50–60 µs) on the same thread, and
// a second thread's addmm: the self times are the durations less the
// nested ones.
func TestReadChromeTrace(t *testing.T) {
	trace := `{"traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 0, "dur": 100, "args": {"External id": 1}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 10, "dur": 30, "args": {"External id": 2, "flops": 1000000}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 50, "dur": 10, "args": {"External id": 3}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 2, "ts": 5, "dur": 20, "args": {"External id": 4}},
 {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm", "pid": 0, "tid": 7, "ts": 20, "dur": 25, "args": {"External id": 2}},
 {"ph": "i", "name": "marker", "pid": 1, "tid": 1, "ts": 3}
]}`
	ps, err := ReadProfiles("trace.json", []byte(trace))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]OpProfile{}
	for _, o := range ps[0].Ops {
		got[o.Name] = o
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	for _, w := range []OpProfile{
		{Name: "aten::linear", Class: "matmul", Calls: 1, SelfCPU: 60e-6, CPU: 100e-6},
		{Name: "aten::addmm", Class: "matmul", Calls: 2, SelfCPU: 50e-6, CPU: 50e-6, SelfDevice: 25e-6, FLOPs: 1e6},
		{Name: "aten::relu", Class: "elementwise", Calls: 1, SelfCPU: 10e-6, CPU: 10e-6},
	} {
		g := got[w.Name]
		if g.Class != w.Class || g.Calls != w.Calls || !near(float64(g.SelfCPU), float64(w.SelfCPU)) || !near(float64(g.CPU), float64(w.CPU)) ||
			!near(float64(g.SelfDevice), float64(w.SelfDevice)) || g.FLOPs != w.FLOPs {
			t.Errorf("%s: %+v, want %+v", w.Name, g, w)
		}
	}
	if len(got) != 3 {
		t.Errorf("%d operators, want 3 (the kernel and the instant event are none)", len(got))
	}
}

// TestReadChromeTraceSample reads a Chrome trace that torch 1.13's
// export_chrome_trace wrote (a JSON array) of one training step of a
// two-layer perceptron on the CPU: two forward addmm, three backward mm.
func TestReadChromeTraceSample(t *testing.T) {
	ps, data := readTestProfiles(t, "chrome-trace-mlp-cpu.json")
	calls := map[string]float64{}
	var self, top float64
	for _, o := range ps[0].Ops {
		calls[o.Name] = o.Calls
		self += float64(o.SelfCPU)
	}
	var evs []traceEvent
	if err := json.Unmarshal(data, &evs); err != nil {
		t.Fatal(err)
	}
	// The self times add up to the time of the outermost events.
	end := math.Inf(-1)
	for _, e := range evs {
		if e.Ts >= end {
			top += e.Dur * 1e-6
			end = e.Ts + e.Dur
		}
	}
	if calls["aten::addmm"] != 2 || calls["aten::mm"] != 3 || calls["aten::linear"] != 2 {
		t.Errorf("calls %v", calls)
	}
	if math.Abs(self-top) > 1e-9 {
		t.Errorf("self times sum to %v s, the outermost events to %v s", self, top)
	}
}

// TestReadProfilesErrors checks what ReadProfiles refuses.
func TestReadProfilesErrors(t *testing.T) {
	for name, tc := range map[string]struct{ data, want string }{
		"empty":     {"", "empty profile"},
		"kind":      {`{"kind": "header"}`, `kind "header"`},
		"none":      {`{"kind": "torch-profile", "profiles": []}`, "no profile"},
		"batch":     {`{"kind": "torch-profile", "profiles": [{"batch": 0}]}`, "batch 0"},
		"negative":  {`{"kind": "torch-profile", "profiles": [{"batch": 1, "ops": [{"name": "aten::mm", "calls": -1}]}]}`, "ops[0] (aten::mm)"},
		"not json":  {`{"kind": `, "not a per-operator profile"},
		"self":      {`{"kind": "torch-profile", "profiles": [{"batch": 1, "ops": [{"name": "aten::mm", "calls": 2, "self_cpu_s": -3e-5, "cpu_s": 2e-5}]}]}`, "ops[0] (aten::mm): -3e-05"},
		"trace":     {`[{"ph": "X", "name": "aten::mm", "ts": 0, "dur": -5}]`, "dur -5"},
		"no ops":    {`{"traceEvents": []}`, "no complete"},
		"bad trace": {`[{"ph": 1}]`, "Chrome trace"},
	} {
		_, err := ReadProfiles("p.json", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

// TestReadProfilesSelfNoise reads self times that the profiler's
// subtraction left below 0, by no more than the operator's total (or a
// microsecond a call on the device), as 0: torchbench's CNN profile on a
// CPU gave these two.
func TestReadProfilesSelfNoise(t *testing.T) {
	data := `{"kind": "torch-profile", "profiles": [{"batch": 1, "ops": [
		{"name": "aten::nll_loss_nd", "calls": 1, "self_cpu_s": -3.333333333333333e-07, "cpu_s": 2.0666666666666666e-05, "self_device_s": 0},
		{"name": "autograd::engine::evaluate_function: LogSoftmaxBackward0", "calls": 1, "self_cpu_s": -6e-06, "cpu_s": 2.4666666666666665e-05, "self_device_s": -1e-7}]}]}`
	ps, err := ReadProfiles("p.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range ps[0].Ops {
		if o.SelfCPU != 0 || o.SelfDevice != 0 || o.CPU <= 0 {
			t.Errorf("%s: self CPU %v, self device %v, CPU %v: want the self times read as 0, the total kept", o.Name, o.SelfCPU, o.SelfDevice, o.CPU)
		}
	}
}

// FuzzReadProfiles checks that no input crashes ReadProfiles and that what
// it reads has finite, non-negative times.
func FuzzReadProfiles(f *testing.F) {
	for _, name := range []string{"torchbench-mlp-cpu.profile.json", "chrome-trace-mlp-cpu.json"} {
		if b, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"traceEvents": [{"ph": "X", "name": "aten::mm", "ts": 5, "dur": 3, "pid": 1, "tid": 1, "args": {"External id": 1}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, err := ReadProfiles("f.json", data)
		if err != nil {
			return
		}
		for _, p := range ps {
			for _, o := range p.Ops {
				for _, v := range []float64{float64(o.CPU), float64(o.SelfCPU), float64(o.SelfDevice), o.Calls, o.FLOPs} {
					if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
						t.Fatalf("%s: %v", o.Name, o)
					}
				}
			}
		}
	})
}
