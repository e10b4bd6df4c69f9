package calib

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"scaleplan/internal/config"
	"scaleplan/internal/units"
)

// sample is a calibration with every kind of entry and every optional
// field set, to figures of at most four significant digits (as fit writes
// them), so that the units' text forms hold them exactly.
func sample() *Calibration {
	return &Calibration{
		Level: 0.9,
		Throughput: []ThroughputEntry{
			{
				Model: "resnet50", Device: "V100", Devices: 8, Precision: "fp16", Labels: map[string]string{"framework": "mxnet"},
				V0: 11250, V0Interval: []float64{11100, 11400}, T: 0.054, TInterval: []units.Seconds{0.0531, 0.0549},
				R2: 0.9991, Points: 12, Excluded: 1, Batches: []int{832, 3328}, OOM: 6656, Source: "a.log,b.log",
			},
			{Model: "mlp", Devices: 1, V0: 5120, T: 0.0021, R2: 0.98, Points: 2},
		},
		Comm: []CommEntry{{
			Model: "resnet50", Device: "V100", Precision: "fp16", Labels: map[string]string{"framework": "mxnet"},
			Counts: []int{1, 2, 4, 8}, TFixed: 0.012, TComm: 0.042, TCommInterval: []units.Seconds{0.04, 0.044},
			GradientSize: 102.2e6, Bandwidth: 2.433e9, BandwidthInterval: []units.BytesPerSec{2.3e9, 2.5e9},
		}},
		Steps: []StepsEntry{{
			Model: "resnet50", Target: 0.759, Labels: map[string]string{"framework": "mxnet"},
			SMin: 1200, SMinInterval: []float64{1100, 1300}, BNoise: 4096, BNoiseInterval: []float64{3500, 4700},
			R2: 0.97, Points: 5, MaxBatch: 32768, Source: "runs.csv",
		}},
		Fabric: []FabricEntry{{
			System: "dgx-h100", Level: Inter, Transport: "verbs", Bandwidth: 46e9, BandwidthInterval: []units.BytesPerSec{45e9, 47e9},
			Latency: 7e-6, LatencyInterval: []units.Seconds{6.5e-6, 7.5e-6}, Undetermined: []string{"latency"}, Algorithm: "ring", Error: 0.031,
			Tests: 2, Sizes: 32, Ranks: []int{16, 32}, Source: "nccl.txt",
		}},
	}
}

// near reports whether a and b are equal to a relative 1e-12: the unit
// types go through text ("54 ms") and back.
func near(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
}

// TestRoundTrip writes a calibration file and reads it back: the same
// entries, and the same bytes when written again.
func TestRoundTrip(t *testing.T) {
	want := sample()
	path := filepath.Join(t.TempDir(), "calib.yaml")
	if err := want.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(written, []byte(header)) {
		t.Errorf("file does not start with the header:\n%s", written)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, written)
	}

	// Unit fields compared to a relative 1e-12, everything else exactly.
	tp, wp := got.Throughput[0], want.Throughput[0]
	if !near(float64(tp.T), float64(wp.T)) || len(tp.TInterval) != 2 || !near(float64(tp.TInterval[0]), float64(wp.TInterval[0])) || !near(float64(tp.TInterval[1]), float64(wp.TInterval[1])) {
		t.Errorf("throughput t %v %v, want %v %v", tp.T, tp.TInterval, wp.T, wp.TInterval)
	}
	c, wc := got.Comm[0], want.Comm[0]
	for i, pair := range [][2]float64{
		{float64(c.TFixed), float64(wc.TFixed)}, {float64(c.TComm), float64(wc.TComm)},
		{float64(c.GradientSize), float64(wc.GradientSize)}, {float64(c.Bandwidth), float64(wc.Bandwidth)},
	} {
		if !near(pair[0], pair[1]) {
			t.Errorf("comm field %d: %v, want %v", i, pair[0], pair[1])
		}
	}
	if len(c.TCommInterval) != 2 || len(c.BandwidthInterval) != 2 ||
		!near(float64(c.TCommInterval[1]), float64(wc.TCommInterval[1])) || !near(float64(c.BandwidthInterval[0]), float64(wc.BandwidthInterval[0])) {
		t.Errorf("comm intervals %v %v, want %v %v", c.TCommInterval, c.BandwidthInterval, wc.TCommInterval, wc.BandwidthInterval)
	}
	f, wf := got.Fabric[0], want.Fabric[0]
	for i, pair := range [][2]float64{
		{float64(f.Bandwidth), float64(wf.Bandwidth)}, {float64(f.Latency), float64(wf.Latency)},
		{float64(f.BandwidthInterval[0]), float64(wf.BandwidthInterval[0])}, {float64(f.BandwidthInterval[1]), float64(wf.BandwidthInterval[1])},
		{float64(f.LatencyInterval[0]), float64(wf.LatencyInterval[0])}, {float64(f.LatencyInterval[1]), float64(wf.LatencyInterval[1])},
	} {
		if !near(pair[0], pair[1]) {
			t.Errorf("fabric field %d: %v, want %v", i, pair[0], pair[1])
		}
	}
	for _, e := range []*Calibration{got, want} {
		e.Fabric[0].Bandwidth, e.Fabric[0].Latency, e.Fabric[0].BandwidthInterval, e.Fabric[0].LatencyInterval = 0, 0, nil, nil
		e.Throughput[0].T, e.Throughput[0].TInterval = 0, nil
		e.Throughput[1].T = 0
		e.Comm[0].TFixed, e.Comm[0].TComm, e.Comm[0].GradientSize, e.Comm[0].Bandwidth = 0, 0, 0, 0
		e.Comm[0].TCommInterval, e.Comm[0].BandwidthInterval = nil, nil
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, want)
	}

	again, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := again.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), written) {
		t.Errorf("written again:\n%s\nfirst written:\n%s", buf.Bytes(), written)
	}
}

// TestReadDefaultLevel: a file without level reads as DefaultLevel.
func TestReadDefaultLevel(t *testing.T) {
	c, err := Read(strings.NewReader("steps:\n  - model: m\n    s_min: 100\n    b_noise: 0\n    r2: 1\n    points: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Level != DefaultLevel || len(c.Steps) != 1 || c.Steps[0].SMin != 100 {
		t.Errorf("read %+v: want level %v and one steps entry with s_min 100", c, DefaultLevel)
	}
}

// TestValidation: each mistake is reported with its YAML path and line,
// all of a file's mistakes at once.
func TestValidation(t *testing.T) {
	const fabric = "  - {system: s, level: intra, bandwidth: 46 GB/s, latency: 7 us, algorithm: ring, tests: 1, sizes: 2}\n"
	const good = "  - model: m\n    devices: 1\n    v0: 100\n    t: 10 ms\n    r2: 0.99\n    points: 3\n"
	for _, tc := range []struct {
		name, in string
		want     []string // substrings of the error, in order
	}{
		{"level", "level: 1.5\n" + "throughput:\n" + good, []string{"line 1: level: 1.5: must be in (0, 1)"}},
		{"v0", "throughput:\n  - model: m\n    devices: 1\n    v0: 0\n    t: 10 ms\n    r2: 0.99\n    points: 3\n",
			[]string{"line 4: throughput[0].v0: 0: must be a finite number > 0"}},
		{"missing model and few points", "throughput:\n  - devices: 1\n    v0: 100\n    t: 10 ms\n    r2: 0.99\n    points: 1\n",
			[]string{"2 problems:", "throughput[0].model: missing", "line 6: throughput[0].points: 1: a fit needs at least 2 points (1 with t = 0, one measured throughput)"}},
		{"no points", "throughput:\n  - model: m\n    devices: 1\n    v0: 100\n    t: 0 s\n    points: 0\n",
			[]string{"throughput[0].points: 0: a fit needs at least 2 points"}},
		{"negative t", "throughput:\n  - model: m\n    devices: 1\n    v0: 100\n    t: -5 ms\n    r2: 0.99\n    points: 3\n",
			[]string{"line 5: throughput[0].t: "}},
		{"interval", "throughput:\n  - model: m\n    devices: 1\n    v0: 100\n    v0_interval: [120, 80]\n    t: 10 ms\n    r2: 0.99\n    points: 3\n",
			[]string{"line 5: throughput[0].v0_interval: [120, 80]: low is above high"}},
		{"lower", "throughput:\n  - model: m\n    devices: 1\n    v0: 100\n    v0_unbounded: true\n    v0_lower: -5\n    t: 10 ms\n    r2: 0.99\n    points: 3\n",
			[]string{"line 6: throughput[0].v0_lower: -5: must be a finite number >= 0 (samples/s)"}},
		{"batches", "throughput:\n  - model: m\n    devices: 1\n    v0: 100\n    t: 10 ms\n    r2: 0.99\n    points: 3\n    batches: [64]\n",
			[]string{"line 8: throughput[0].batches: [64]: want [smallest, largest]"}},
		{"duplicate", "throughput:\n" + good + good, []string{"throughput[1]: same model, device, devices, precision and labels as throughput[0]"}},
		{"comm counts", "comm:\n  - model: m\n    counts: [0]\n    t_fixed: 1 ms\n    t_comm: 2 ms\n",
			[]string{"2 problems:", "line 3: comm[0].counts: [0]: want two or more device counts", "line 3: comm[0].counts: [0]: counts must be >= 1"}},
		{"steps", "steps:\n  - model: m\n    target: 76\n    s_min: 100\n    b_noise: -1\n    r2: 0.9\n    points: 2\n",
			[]string{"2 problems:", "line 3: steps[0].target: 76: must be a fraction in [0, 1]", "line 5: steps[0].b_noise: -1: must be a finite number >= 0"}},
		{"unknown field", "throughput:\n  - model: m\n    devcies: 1\n    v0: 100\n    t: 10 ms\n    r2: 0.99\n    points: 3\n",
			[]string{"line 3: ", `unknown field "devcies"; did you mean "devices"?`}},
		{"fabric", "fabric:\n  - system: dgx-h100\n    level: between\n    bandwidth: -4 GB/s\n    latency: 7 us\n    algorithm: ring\n    error: 0.01\n    tests: 1\n    sizes: 16\n",
			[]string{"2 problems:", "line 3: fabric[0].level: \"between\": want one of intra, inter", "line 4: fabric[0].bandwidth: -4e+09: must be a finite rate > 0"}},
		{"fabric fields", "fabric:\n  - level: inter\n    bandwidth: 46 GB/s\n    latency: 7 us\n    bandwidth_interval: [50 GB/s, 40 GB/s]\n    algorithm: ring\n    error: 0.01\n    tests: 0\n    sizes: 1\n    ranks: [1, 16]\n",
			[]string{"5 problems:", "fabric[0].system: missing", "line 5: fabric[0].bandwidth_interval: [5e+10, 4e+10]: low is above high", "line 8: fabric[0].tests: 0", "line 9: fabric[0].sizes: 1", "line 10: fabric[0].ranks: [1 16]"}},
		{"fabric undetermined", "fabric:\n  - {system: s, level: intra, bandwidth: 46 GB/s, latency: 7 us, undetermined: [size], algorithm: ring, tests: 1, sizes: 2}\n",
			[]string{"line 2: fabric[0].undetermined: \"size\": want bandwidth or latency"}},
		{"fabric duplicate", "fabric:\n" + fabric + fabric, []string{"fabric[1]: same system, level and transport as fabric[0]"}},
		{"fabric latency unit", "fabric:\n  - system: s\n    level: intra\n    bandwidth: 46 GB/s\n    latency: 7 parsecs\n    algorithm: ring\n    tests: 1\n    sizes: 2\n",
			[]string{"line 5: ", "parsecs"}},
		{"bad unit", "throughput:\n  - model: m\n    devices: 1\n    v0: 100\n    t: 10 parsecs\n    r2: 0.99\n    points: 3\n",
			[]string{"line 5: ", "parsecs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Read(strings.NewReader(tc.in))
			if err == nil {
				t.Fatalf("no error; read %+v", c)
			}
			var ps *config.Problems
			if !errors.As(err, &ps) {
				t.Errorf("error %T, want *config.Problems", err)
			}
			msg, rest := err.Error(), err.Error()
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Errorf("error\n%s\nwant (in order) %q", msg, w)
					break
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

// TestValidate: Validate finds the same problems in a value as Read does
// in its file, without lines.
func TestValidate(t *testing.T) {
	c := sample()
	if err := c.Validate(); err != nil {
		t.Fatalf("sample: %v", err)
	}
	c.Steps[0].SMin = math.NaN()
	c.Comm[0].Bandwidth = -1
	err := c.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{"comm[0].bandwidth: -1 B/s: must be a finite rate >= 0", "steps[0].s_min: NaN: must be a finite number > 0"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q: want it to contain %q", err, w)
		}
	}
}

// TestReadBroken: a truncated, a garbled and an empty file are errors
// that say where, and ReadFile names the file.
func TestReadBroken(t *testing.T) {
	var buf bytes.Buffer
	if err := sample().Encode(&buf); err != nil {
		t.Fatal(err)
	}
	full := buf.String()
	for _, tc := range []struct {
		name, in, want string
	}{
		// Cut inside the flow sequence of the first entry's v0_interval.
		{"truncated", full[:strings.Index(full, "v0_interval: [")+len("v0_interval: [111")], "did not find expected ',' or ']'"},
		// Cut after a key: the entry lacks v0, t, r2 and points.
		{"truncated entry", full[:strings.Index(full, "    v0:")], "throughput[0].v0: 0: must be a finite number > 0"},
		{"tab indented", "throughput:\n\t- model: m\n", "line 2: found character that cannot start any token"},
		{"not a mapping", "- model: m\n", "want a mapping of fields, got a list"},
		{"garbled value", "throughput:\n  - model: m\n    devices: eight\n", "line 3: want a whole number, got the text `eight`"},
		{"binary", "\x00\x01\x02throughput", "control characters are not allowed"},
		{"empty", "", "empty document"},
		{"comments only", header, "empty document"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Read(strings.NewReader(tc.in))
			if err == nil {
				t.Fatalf("no error; read %+v", c)
			}
			if c != nil {
				t.Errorf("a calibration with the error %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q: want it to contain %q", err, tc.want)
			}
		})
	}

	path := filepath.Join(t.TempDir(), "cut.yaml")
	if err := os.WriteFile(path, []byte(full[:strings.Index(full, "    v0:")]), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path); err == nil || !strings.HasPrefix(err.Error(), path+": ") {
		t.Errorf("ReadFile: error %v, want it prefixed by %q", err, path)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "none.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile of a missing file: %v, want os.ErrNotExist", err)
	}
}

func TestLookup(t *testing.T) {
	c := sample()
	c.Throughput = append(c.Throughput, ThroughputEntry{Model: "resnet50", Device: "V100", Devices: 8, V0: 9000, T: 0.06, R2: 0.9, Points: 3})
	for _, tc := range []struct {
		model, device string
		devices       int
		precision     string
		v0            float64 // 0: not found
	}{
		{"resnet50", "V100", 8, "fp16", 11250},
		{"resnet50", "V100", 8, "", 11250},    // any precision
		{"resnet50", "V100", 8, "fp32", 9000}, // the entry without precision
		{"resnet50", "V100", 4, "fp16", 0},
		{"resnet50", "A100", 8, "fp16", 0},
		{"mlp", "", 1, "fp32", 5120},
	} {
		e, ok := c.LookupThroughput(tc.model, tc.device, tc.devices, tc.precision)
		if ok != (tc.v0 != 0) || e.V0 != tc.v0 {
			t.Errorf("LookupThroughput(%s, %s, %d, %s) = v0 %v, %v; want %v", tc.model, tc.device, tc.devices, tc.precision, e.V0, ok, tc.v0)
		}
	}
	if e, ok := c.LookupSteps("resnet50"); !ok || e.SMin != 1200 {
		t.Errorf("LookupSteps(resnet50) = %+v, %v", e, ok)
	}
	if _, ok := c.LookupSteps("mlp"); ok {
		t.Error("LookupSteps(mlp) found a curve")
	}
	if got, want := LabelString(map[string]string{"org": "x", "division": "closed", "benchmark": "resnet"}), "benchmark=resnet division=closed org=x"; got != want {
		t.Errorf("LabelString = %q, want %q", got, want)
	}
	if got := LabelString(nil); got != "" {
		t.Errorf("LabelString(nil) = %q", got)
	}
}

// TestOnePublishedFigure: one measured throughput, with t taken as 0, is a
// valid entry; with any other t it is not a fit.
func TestOnePublishedFigure(t *testing.T) {
	const one = "throughput:\n  - model: m\n    devices: 1\n    v0: 2180\n    t: 0 s\n    points: 1\n"
	c, err := Read(strings.NewReader(one))
	if err != nil || c.Throughput[0].V0 != 2180 || c.Throughput[0].T != 0 {
		t.Errorf("read %+v, %v; want v0 2180 and t 0", c, err)
	}
	if _, err := Read(strings.NewReader(strings.Replace(one, "0 s", "5 ms", 1))); err == nil || !strings.Contains(err.Error(), "points: 1: a fit needs at least 2 points") {
		t.Errorf("one point with t = 5 ms: %v", err)
	}
}

func TestRunVariant(t *testing.T) {
	for _, c := range []struct {
		labels map[string]string
		want   string
	}{
		{nil, ""},
		{map[string]string{"input": "3x224x224", SampleLabel: "sentence-pair"}, ""},
		{map[string]string{"channels_last": "true"}, "channels_last"},
		{map[string]string{"compile": "true", "channels_last": "true"}, "channels_last compile"},
		{map[string]string{"compile": "max-autotune"}, "compile=max-autotune"},
	} {
		if got := RunVariant(c.labels); got != c.want {
			t.Errorf("RunVariant(%v) = %q, want %q", c.labels, got, c.want)
		}
	}
}

// TestLookupFabric: an entry naming the transport asked for wins over
// one naming none, which serves any transport; one naming another
// transport, level or system never applies.
func TestLookupFabric(t *testing.T) {
	c := &Calibration{Fabric: []FabricEntry{
		{System: "s", Level: Inter, Bandwidth: 1},
		{System: "s", Level: Inter, Transport: "verbs", Bandwidth: 2},
		{System: "s", Level: Intra, Transport: "nccl", Bandwidth: 3},
		{System: "t", Level: Inter, Bandwidth: 4},
	}}
	for _, tc := range []struct {
		system, level, transport string
		want                     float64 // bandwidth of the entry; 0 for none
	}{
		{"s", Inter, "verbs", 2},
		{"s", Inter, "tcp", 1},
		{"s", Intra, "nccl", 3},
		{"s", Intra, "shm", 0},
		{"t", Inter, "verbs", 4},
		{"u", Inter, "verbs", 0},
	} {
		e, ok := c.LookupFabric(tc.system, tc.level, tc.transport)
		if ok != (tc.want != 0) || float64(e.Bandwidth) != tc.want {
			t.Errorf("LookupFabric(%s, %s, %s) = %v, %v; want bandwidth %v", tc.system, tc.level, tc.transport, e.Bandwidth, ok, tc.want)
		}
	}
}

// TestLLMEntries reads an llm entry back and refuses bad ones, naming the
// field.
func TestLLMEntries(t *testing.T) {
	good := "llm:\n  - model: llama2-7b\n    system: dgx-h100\n    device: h100-sxm5-80gb\n    layout: tp2 pp1 cp1 dp4\n" +
		"    micro_batch: 2\n    global_batch: 128\n    seq_len: 4096\n    step: 6.5 s\n    predicted: 5.2 s\n    factor: 1.25\n" +
		"    factor_interval: [1.2, 1.3]\n    mfu: 0.48\n    iterations: 90\n    lines: 9\n"
	c, err := Read(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := c.LLMFor("h100-sxm5-80gb", "bf16"); !ok || e.Factor != 1.25 || e.Step != 6.5 {
		t.Errorf("LLMFor: %+v, %v", e, ok)
	}
	if _, ok := c.LLMFor("h100-sxm5-80gb", "fp8"); ok {
		t.Error("LLMFor fp8: found a bf16 entry")
	}
	for _, c := range []struct{ from, to, want string }{
		{"factor: 1.25", "factor: 0", "llm[0].factor"},
		{"factor_interval: [1.2, 1.3]", "factor_interval: [1.3, 1.2]", "llm[0].factor_interval"},
		{"mfu: 0.48", "mfu: 1.5", "llm[0].mfu"},
		{"lines: 9", "lines: 0", "llm[0].iterations"},
		{"    device: h100-sxm5-80gb\n", "", "llm[0]"},
	} {
		_, err := Read(strings.NewReader(strings.Replace(good, c.from, c.to, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.to, err, c.want)
		}
	}
}
