package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runSim runs `scaleplan simulate args...` as Main does, registering the
// command if the application does not list it yet.
func runSim(args ...string) (stdout, stderr string, code int) {
	for _, c := range commands() {
		if c.Name == "simulate" {
			return runCLI(append([]string{"simulate"}, args...)...)
		}
	}
	var out, errb bytes.Buffer
	app := newApp(&out, &errb)
	app.Commands = append(app.Commands, simulateCommand())
	err := app.Run(append([]string{"scaleplan", "simulate"}, args...))
	if err != nil {
		fmt.Fprintf(&errb, "scaleplan: %v\n", err)
		var ue usageError
		if errors.As(err, &ue) || isCLIUsage(err) {
			code = exitUsage
		} else {
			code = exitRuntime
		}
	}
	return out.String(), errb.String(), code
}

func TestSimulateGolden(t *testing.T) {
	for _, c := range []struct {
		golden string
		args   []string
	}{
		{"simulate-tsubame3-default.golden", []string{"tsubame3-resnet50-caffe2-default"}},
		{"simulate-tsubame3-verbs-md.golden", []string{"--format", "md", "tsubame3-resnet50-caffe2-verbs"}},
		{"simulate-seed003-csv.golden", []string{"--format", "csv", "seed003-resnet50-2gpu-nop2p"}},
		{"simulate-ipu-pod16-json.golden", []string{"--format", "json", "ipu-pod16-efficientnet-b4"}},
		{"simulate-overrides.golden", []string{"--devices", "8,16", "--batch", "64", "--allreduce", "ring", "--transport", "verbs", "--storage", "local", "--seed", "7", "--steps", "4", "tsubame3-resnet50-caffe2-default"}},
		{"simulate-tensorflow-async.golden", []string{"--allreduce", "async-ps", "--devices", "4,32", "tsubame3-resnet50-tensorflow-ps"}},
	} {
		out, stderr, code := runSim(c.args...)
		if code != 0 {
			t.Errorf("simulate %s: exit %d: %s", strings.Join(c.args, " "), code, stderr)
			continue
		}
		checkGolden(t, c.golden, out)
	}
}

func TestSimulateErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{nil, 2, "simulate takes one SCENARIO"},
		{[]string{"a", "b"}, 2, "simulate takes one SCENARIO"},
		{[]string{"--format", "xml", "tsubame3-resnet50-caffe2-default"}, 2, `unknown format "xml"`},
		{[]string{"--devices", "4,x", "tsubame3-resnet50-caffe2-default"}, 2, "want positive integers"},
		{[]string{"--batch", "0", "tsubame3-resnet50-caffe2-default"}, 2, "want positive integers"},
		{[]string{"--allreduce", "rign", "tsubame3-resnet50-caffe2-default"}, 2, `did you mean "ring"`},
		{[]string{"--storage", "nfs", "tsubame3-resnet50-caffe2-default"}, 2, `unknown storage "nfs"`},
		// An empty value is a mistake, not the scenario's own, before the
		// scenario or after it.
		{[]string{"--allreduce", "", "tsubame3-resnet50-caffe2-default"}, 2, "scaleplan: simulate: --allreduce is empty: give it a value, or leave it out for its default"},
		{[]string{"tsubame3-resnet50-caffe2-default", "--storage", " "}, 2, "scaleplan: simulate: --storage is empty"},
		{[]string{"--transport", "", "tsubame3-resnet50-caffe2-default"}, 2, "scaleplan: simulate: --transport is empty"},
		{[]string{"tsubame3-resnet50-caffe2-default", "--trace", ""}, 2, "scaleplan: simulate: --trace is empty"},
		{[]string{"--seed", "-1", "tsubame3-resnet50-caffe2-default"}, 2, "--seed"},
		{[]string{"--steps", "0", "tsubame3-resnet50-caffe2-default"}, 2, "--steps 0"},
		{[]string{"tsubame"}, 1, `unknown scenario "tsubame"`},
		{[]string{"--devices", "4096", "tsubame3-resnet50-caffe2-default"}, 1, `4096 devices need 1024 nodes of 4 devices; system "tsubame3" has 540`},
		{[]string{"--devices", "6", "tsubame3-resnet50-caffe2-default"}, 1, "6 devices do not fill whole nodes of 4"},
		{[]string{"--transport", "nccl", "tsubame3-resnet50-caffe2-verbs"}, 1, `transport "nccl" of system "tsubame3" works only inside a node`},
		{[]string{"--transport", "rdma", "tsubame3-resnet50-caffe2-verbs"}, 1, `unknown transport "rdma"`},
		{[]string{"--batch", "4096", "seed003-resnet50-2gpu-nop2p"}, 1, "the largest batch that fits is"},
		{[]string{"--placement", "1,0", "tsubame3-resnet50-caffe2-default"}, 2, "--placement \"1,0\": want positive device counts per node"},
		{[]string{"--placement", "1,3", "--devices", "4", "tsubame3-resnet50-caffe2-default"}, 2, "--placement gives the devices; leave out --devices"},
		{[]string{"--placement", "1,5", "tsubame3-resnet50-caffe2-default"}, 1, "--placement (parallelism.placement[1]): must be within 1 to 4 devices, got 5"},
		{[]string{"--placement", "1,2,3,4", "tsubame3-resnet50-caffe2-verbs"}, 1, "hierarchical needs as many of the ranks on every node"},
	} {
		_, stderr, code := runSim(c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("simulate %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, stderr, c.code, c.msg)
		}
	}
}

// TestSimulateTrace checks that --trace writes Chrome trace-event JSON
// with device tracks, and that two runs write the same bytes.
func TestSimulateTrace(t *testing.T) {
	dir := t.TempDir()
	var traces [2][]byte
	for i := range traces {
		path := filepath.Join(dir, fmt.Sprintf("trace%d.json", i))
		_, stderr, code := runSim("--devices", "32", "--trace", path, "tsubame3-resnet50-caffe2-default")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.Contains(stderr, "wrote the last 2 steps of 32 devices") {
			t.Errorf("stderr %q", stderr)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		traces[i] = b
	}
	if !bytes.Equal(traces[0], traces[1]) {
		t.Error("two runs wrote different traces")
	}
	var doc struct {
		DisplayTimeUnit string `json:"displayTimeUnit"`
		TraceEvents     []struct {
			Name string            `json:"name"`
			Ph   string            `json:"ph"`
			Pid  int               `json:"pid"`
			Args map[string]string `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(traces[0], &doc); err != nil {
		t.Fatal(err)
	}
	var tracks, spans int
	names := map[string]bool{}
	for _, e := range doc.TraceEvents {
		if e.Ph == "M" && e.Name == "thread_name" && e.Pid == 1 {
			tracks++
		}
		if e.Ph == "X" {
			spans++
			names[e.Name] = true
		}
	}
	if tracks < 4 || tracks > 6 || spans == 0 {
		t.Errorf("%d device tracks and %d spans", tracks, spans)
	}
	for _, n := range []string{"forward", "backward", "update", "read", "node 0"} {
		if !names[n] {
			t.Errorf("no %q span in the trace", n)
		}
	}
}

// TestSimulateDecode: --decode moves a scenario's decoding between the
// hosts and the devices; the DGX-1 waits for its 40 cores when they decode.
func TestSimulateDecode(t *testing.T) {
	exposed := map[string]float64{}
	for _, site := range []string{"host", "device"} {
		out, stderr, code := runCLI("simulate", "dgx1-resnet50-mlperf-v0.7", "--decode", site, "--format", "json")
		if code != exitOK {
			t.Fatalf("--decode %s: exit %d: %s", site, code, stderr)
		}
		var rows []map[string]any
		if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
			t.Fatalf("--decode %s: %v\n%s", site, err, out)
		}
		v, ok := rows[0]["exposed_input_s"].(float64)
		if !ok {
			t.Fatalf("--decode %s: exposed input %#v", site, rows[0]["exposed_input_s"])
		}
		exposed[site] = v * 1e3
	}
	if !(exposed["host"] > 50) || exposed["device"] != 0 {
		t.Errorf("exposed input %v ms decoding on the host, %v ms on the device; want > 50 and 0", exposed["host"], exposed["device"])
	}
	if _, stderr, code := runCLI("simulate", "dgx1-resnet50-mlperf-v0.7", "--decode", "gpu"); code != exitUsage || !strings.Contains(stderr, `unknown decode site "gpu"`) {
		t.Errorf("--decode gpu: exit %d: %s", code, stderr)
	}
}

// TestSimulateCacheWarmup: the GX2570 M5 holds ImageNet in its page
// cache, so its steady step computes and the first epoch's drive reads
// (1,664 × 110 kB at its two SSDs' 1.12 GB/s) show as a one-time cost of
// ⌈1,281,167/1,664⌉ · (cold read − step). The published calibration's
// V100 law (MLPerf's DGX-1 epochs) times the step, shorter than a cold
// read; with a step longer than the cold read there is nothing to warm.
func TestSimulateCacheWarmup(t *testing.T) {
	out, stderr, code := runCLI("simulate", "zinrai-200h-resnet50-mlperf-v0.7", "--calibration", "published", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("%v\n%s", err, out)
	}
	step, _ := rows[0]["step_s"].(float64)
	warm, _ := rows[0]["cache_warm_up_s"].(float64)
	input, _ := rows[0]["exposed_input_s"].(float64)
	cold := 1664 * 110e3 / 1.12e9
	want := 770 * max(cold-step, 0)
	if input != 0 || !(warm > 0) || !(math.Abs(warm-want) < 0.06) {
		t.Errorf("exposed input %v s, cache warm-up %v s; want 0 and %.2f s", input, warm, want)
	}
	out, _, _ = runCLI("simulate", "zinrai-200h-resnet50-mlperf-v0.7")
	if !strings.Contains(out, "page cache: 100% of the data set (140.9 GB)") {
		t.Errorf("no page cache note:\n%s", out)
	}
}
