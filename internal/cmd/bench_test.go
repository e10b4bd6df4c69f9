package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"scaleplan/engine/dist"
	"scaleplan/engine/tensor"
	"scaleplan/engine/torchbench"
	"scaleplan/internal/benchlog"
)

// TestMain lets the test binary serve as the worker program of
// `bench --transport tcp`, which starts this executable with the
// arguments "bench worker" and the dist environment variables.
func TestMain(m *testing.M) {
	if dist.IsWorker() {
		_, stderr, code := runCLI("bench", "worker")
		os.Stderr.WriteString(stderr)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// readLog reads a bench log, failing the test on any bad line.
func readLog(t *testing.T, path string) []benchlog.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []benchlog.Record
	r := benchlog.NewReader(f)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return recs
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		recs = append(recs, rec)
	}
}

// checkHeader checks the first record describes the run and the machine.
func checkHeader(t *testing.T, recs []benchlog.Record, run, command string) {
	t.Helper()
	if len(recs) == 0 || recs[0].Kind != benchlog.KindHeader {
		t.Fatalf("log does not start with a header: %+v", recs)
	}
	h := recs[0]
	m := h.Machine
	if h.Run != run || h.Tool != benchTool || m == nil || m.Cores < 1 || m.Backend != tensor.BackendDetail() || !strings.Contains(m.Framework, "go1.") {
		t.Errorf("header %+v, machine %+v", h, m)
	}
	if h.Config["command"] != command || h.Config["engine"] == nil {
		t.Errorf("header config %v lacks the command %q and the engine configuration", h.Config, command)
	}
	for _, r := range recs[1:] {
		if r.Run != run || r.Kind == benchlog.KindHeader {
			t.Errorf("record %+v: want run %q and no second header", r, run)
		}
	}
}

func TestBenchThroughput(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "tp.jsonl")
	charts := filepath.Join(dir, "charts")
	stdout, stderr, code := runCLI("bench", "throughput", "--data", "synthetic", "--workers", "1,2", "--batch", "4,8",
		"--steps", "3", "--warmup", "1", "--step-records", "--run", "t1", "--out", log, "--format", "csv", "--plot", charts, "--core-guard=false")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs := readLog(t, log)
	checkHeader(t, recs, "t1", "bench throughput")
	var meas, steps int
	for _, r := range recs[1:] {
		switch r.Kind {
		case benchlog.KindMeasurement:
			meas++
			if r.Model != "mlp" || r.Device != "localhost" || r.Transport != "inproc" || r.GlobalBatch != r.Workers*r.Batch || r.Steps != 3 || r.Phases == nil {
				t.Errorf("measurement %+v", r)
			}
		case benchlog.KindStep:
			steps++
		}
	}
	if meas != 4 || steps != 12 {
		t.Errorf("%d measurements and %d step records, want 4 and 12", meas, steps)
	}
	if n := strings.Count(stderr, "bench: mlp workers"); n != 4 {
		t.Errorf("stderr has %d progress lines, want 4:\n%s", n, stderr)
	}
	if lines := strings.Split(strings.TrimSpace(stdout), "\n"); len(lines) != 5 || !strings.HasPrefix(lines[0], "workers,batch,global_batch") {
		t.Errorf("stdout is not a CSV table of 4 rows:\n%s", stdout)
	}
	checkChartDir(t, charts, 2) // the throughput chart, PNG and SVG
	// fit reads the log and fits each worker count.
	fout, ferr, code := runCLI("fit", log)
	if code != exitOK || !strings.Contains(fout, "mlp") {
		t.Errorf("fit: exit %d\n%s\n%s", code, fout, ferr)
	}
}

// A sweep over worker counts gives every worker the cores' share at the
// largest count unless --threads says otherwise, and says so on stderr
// when that is fewer cores than the smallest count would get alone.
func TestBenchThroughputThreads(t *testing.T) {
	cores := runtime.NumCPU()
	for _, tc := range []struct {
		args []string
		want int  // threads in the header's engine configuration
		note bool // the stderr line about the same device
	}{
		{[]string{"--workers", "1,2"}, max(1, cores/2), cores > 1},
		{[]string{"--workers", "2,1,4"}, max(1, cores/4), cores > 1},
		{[]string{"--workers", "2"}, max(1, cores/2), false},
		{[]string{"--workers", "1,2", "--threads", "3"}, 3, false},
	} {
		log := filepath.Join(t.TempDir(), "threads.jsonl")
		args := append([]string{"bench", "throughput", "--core-guard=false", "--data", "synthetic", "--batch", "4", "--steps", "1",
			"--warmup", "0", "--warm-rounds", "0", "--out", log}, tc.args...)
		_, stderr, code := runCLI(args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr)
		}
		recs := readLog(t, log)
		eng, _ := recs[0].Config["engine"].(map[string]any)
		if got := fmt.Sprint(eng["threads"]); got != strconv.Itoa(tc.want) {
			t.Errorf("%v: header threads %s, want %d", tc.args, got, tc.want)
		}
		note := fmt.Sprintf("every worker computes on %d of the %d cores", tc.want, cores)
		if got := strings.Contains(stderr, note); got != tc.note {
			t.Errorf("%v: stderr has %q: %v, want %v:\n%s", tc.args, note, got, tc.note, stderr)
		}
	}
}

// With --rounds every configuration is measured once per round, rounds
// over the whole sweep, and recorded once over all its timed steps.
func TestBenchThroughputRounds(t *testing.T) {
	log := filepath.Join(t.TempDir(), "rounds.jsonl")
	_, stderr, code := runCLI("bench", "throughput", "--core-guard=false", "--data", "synthetic", "--workers", "1", "--batch", "4,8",
		"--steps", "2", "--warmup", "1", "--rounds", "3", "--step-records", "--out", log)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs := readLog(t, log)
	var meas, steps int
	for _, r := range recs[1:] {
		switch r.Kind {
		case benchlog.KindMeasurement:
			meas++
			if r.Steps != 6 {
				t.Errorf("measurement of batch %d over %d steps, want 6 (3 rounds of 2)", r.Batch, r.Steps)
			}
		case benchlog.KindStep:
			steps++
		}
	}
	if meas != 2 || steps != 12 {
		t.Errorf("%d measurements and %d step records, want 2 and 12", meas, steps)
	}
	// The rounds run the sweep in order: batch 4, batch 8, batch 4, ...
	var order []string
	for _, l := range strings.Split(stderr, "\n") {
		if i := strings.Index(l, "bench: round "); i >= 0 {
			order = append(order, strings.Fields(l[i:])[2]+strings.Fields(l[i:])[7])
		}
	}
	if want := []string{"1:4:", "1:8:", "2:4:", "2:8:", "3:4:", "3:8:"}; !slices.Equal(order, want) {
		t.Errorf("progress in the order %v, want %v:\n%s", order, want, stderr)
	}
	if got := fmt.Sprint(recs[0].Config["rounds"]); got != "3" {
		t.Errorf("header's rounds %s, want 3", got)
	}
	// The warm-up round (one by default) comes first and is neither
	// logged (above: 6 steps a measurement) nor a round.
	if got := fmt.Sprint(recs[0].Config["warm_rounds"]); got != "1" {
		t.Errorf("header's warm_rounds %s, want 1", got)
	}
	warm4, warm8, round1 := strings.Index(stderr, "bench: warm-up: mlp workers 1 batch 4:"), strings.Index(stderr, "bench: warm-up: mlp workers 1 batch 8:"),
		strings.Index(stderr, "bench: round 1: ")
	if warm4 < 0 || warm8 < warm4 || round1 < warm8 {
		t.Errorf("progress without the warm-up round of batches 4 and 8 before round 1:\n%s", stderr)
	}
}

// --chunk reaches the workers' configuration and the log's header; a
// chunked CNN run trains, and the header of an unchunked one leaves the
// field out.
func TestBenchThroughputChunk(t *testing.T) {
	for _, chunk := range []string{"3", ""} {
		log := filepath.Join(t.TempDir(), "chunk.jsonl")
		args := []string{"bench", "throughput", "--model", "cnn", "--data", "synthetic", "--batch", "8", "--steps", "2", "--warmup", "0", "--out", log, "--core-guard=false"}
		if chunk != "" {
			args = append(args, "--chunk", chunk)
		}
		_, stderr, code := runCLI(args...)
		if code != exitOK {
			t.Fatalf("--chunk %q: exit %d: %s", chunk, code, stderr)
		}
		if want := chunk == "3"; strings.Contains(stderr, "batch 8 in 3 chunks:") != want {
			t.Errorf("--chunk %q: progress does not say the batch ran in 3 chunks (want %v):\n%s", chunk, want, stderr)
		}
		eng, _ := readLog(t, log)[0].Config["engine"].(map[string]any)
		got, set := eng["chunk"]
		if want := chunk != ""; set != want || (want && fmt.Sprint(got) != chunk) {
			t.Errorf("--chunk %q: header's engine chunk %v (set %v)", chunk, got, set)
		}
	}
}

// bench --transport tcp starts this test binary as worker processes.
func TestBenchThroughputTCP(t *testing.T) {
	log := filepath.Join(t.TempDir(), "tcp.jsonl")
	_, stderr, code := runCLI("bench", "throughput", "--core-guard=false", "--data", "synthetic", "--transport", "tcp", "--workers", "2", "--batch", "4",
		"--steps", "2", "--warmup", "1", "--out", log, "--timeout", "1m")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs := readLog(t, log)
	if len(recs) != 2 || recs[1].Transport != "tcp" || recs[1].Workers != 2 {
		t.Errorf("records %+v, want a header and one tcp measurement of 2 workers", recs)
	}
}

// bench with no subcommand and --framework torch runs the PyTorch bench
// script (Debian's python3-torch in CI), writes its log and prints a
// table; fit reads the log. This is the command of the README.
func TestBenchTorch(t *testing.T) {
	log := filepath.Join(t.TempDir(), "torch.jsonl")
	charts := filepath.Join(filepath.Dir(log), "charts")
	stdout, stderr, code := runCLI("bench", "--framework", "torch", "--model", "cnn", "--batch", "4,16,64", "--steps", "3",
		"--warmup", "1", "--device", "cpu", "--threads", "1", "--run", "tt", "--out", log, "--format", "csv", "--plot", charts)
	if code != exitOK {
		if strings.Contains(stderr, "cannot import torch") || strings.Contains(stderr, "no python3") {
			needDeps(t, "PyTorch (apt-get install python3-torch python3-torchvision): "+firstLine(stderr))
		}
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs := readLog(t, log)
	if len(recs) == 0 || recs[0].Kind != benchlog.KindHeader || recs[0].Tool != "torchbench" || recs[0].Run != "tt" {
		t.Fatalf("first record %+v, want the torchbench header of run tt", recs[0])
	}
	var batches []int
	for _, r := range recs[1:] {
		if r.Kind == benchlog.KindMeasurement {
			if r.Model != "cnn" || r.Steps != 3 || !(r.SamplesPerSec > 0) {
				t.Errorf("measurement %+v", r)
			}
			batches = append(batches, r.Batch)
		}
	}
	if fmt.Sprint(batches) != "[4 16 64]" {
		t.Errorf("measured batches %v, want [4 16 64]", batches)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "model,precision,workers,batch") || !strings.HasPrefix(lines[1], "cnn,fp32,1,4,4,3,") {
		t.Errorf("stdout is not a CSV table of 3 measurements:\n%s", stdout)
	}
	checkChartDir(t, charts, 2)
	fout, ferr, code := runCLI("fit", log)
	if code != exitOK || !strings.Contains(fout, "cnn") || !strings.Contains(fout, "R²") {
		t.Errorf("fit: exit %d\n%s\n%s", code, fout, ferr)
	}
}

// checkChartDir checks that dir holds n chart files and that each decodes.
func checkChartDir(t *testing.T, dir string, n int) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(files) != n {
		t.Fatalf("%s holds %v, want %d chart files (%v)", dir, files, n, err)
	}
	for _, f := range files {
		checkChart(t, f)
	}
}

// A chart that cannot be written fails the command after the log and the
// table are out: nothing measured is lost.
func TestBenchPlotFails(t *testing.T) {
	dir := t.TempDir()
	log, file := filepath.Join(dir, "tp.jsonl"), filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI("bench", "throughput", "--core-guard=false", "--data", "synthetic", "--batch", "4,8", "--steps", "1", "--warmup", "0",
		"--out", log, "--plot", filepath.Join(file, "charts"))
	if code != exitRuntime || !strings.Contains(stderr, "not a directory") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	if recs := readLog(t, log); len(recs) != 3 || !strings.Contains(stdout, "samples_per_s") {
		t.Errorf("%d records, stdout:\n%s", len(recs), stdout)
	}
}

func TestBenchWarnsWithoutCoreType(t *testing.T) {
	t.Setenv("OPENBLAS_CORETYPE", "")
	var b bytes.Buffer
	warnBackend(&b)
	if warned := strings.Contains(b.String(), "OPENBLAS_CORETYPE is not set"); warned != (tensor.Backend() == "openblas") {
		t.Errorf("backend %s: warning %q", tensor.Backend(), b.String())
	}
	t.Setenv("OPENBLAS_CORETYPE", "SkylakeX")
	b.Reset()
	if warnBackend(&b); b.Len() != 0 {
		t.Errorf("warning with the variable set: %q", b.String())
	}
}

// TestBenchErrors pins the usage and runtime errors of bench against
// testdata/bench/errors.golden (go test -update rewrites it).
func TestBenchErrors(t *testing.T) {
	// The golden output is the errors alone: an OpenBLAS build run
	// without OPENBLAS_CORETYPE would add its warning (tested above).
	t.Setenv("OPENBLAS_CORETYPE", "SkylakeX")
	var got strings.Builder
	for _, args := range [][]string{
		{"bench", "throughput", "--framework", "mxnet"},
		{"bench", "--framework", "torch", "--transport", "tcp"},
		{"bench", "--framework", "torch", "--workers", "1,2"},
		{"bench", "--framework", "torch", "--model", "resnet51"},
		{"bench", "--framework", "torch", "--device", "cpu", "--precision", "amp-fp16"},
		{"bench", "throughput", "--precision", "amp-bf16"},
		{"bench", "throughput", "--format", "xml"},
		{"bench", "throughput", "--workers", "0"},
		{"bench", "throughput", "--rounds", "0"},
		{"bench", "throughput", "--warm-rounds", "-1"},
		{"bench", "--framework", "torch", "--warm-rounds", "2"},
		{"bench", "--framework", "torch", "--rounds", "2"},
		{"bench", "--framework", "torch", "--steps", "0"},
		{"bench", "--framework", "torch", "--warmup", "-1"},
		{"bench", "--framework", "torch", "--batch", "8,8"},
		{"bench", "--framework", "torch", "--precision", "fp32,amp-fp16,fp32"},
		{"bench", "--framework", "torch", "--nodes", "2", "--node-rank", "2", "--master-addr", "n0"},
		{"bench", "--framework", "torch", "--nodes", "2", "--node-rank", "1"},
		{"bench", "--framework", "torch", "--master-port", "70000"},
		{"bench", "--framework", "torch", "--device", "cpu", "--backend", "nccl"},
		{"bench", "--framework", "torch", "--timeout", "0s"},
		{"bench", "throughput", "--nodes", "2"},
		{"bench", "throughput", "--batch", "8,-1"},
		{"bench", "throughput", "--bucket", "1024"},
		{"bench", "throughput", "--timeout", "0s"},
		{"bench", "throughput", "--batch", "16,32,16"},
		{"bench", "throughput", "--workers", "1", "--workers", "1"},
		{"bench", "steps", "--batch", "64,64"},
		{"bench", "steps", "--lr-factors", "1,0.5,1"},
		{"bench", "train", "--timeout", "-1s"},
		{"bench", "train", "--epochs", "0"},
		{"bench", "train", "--workers", "0"},
		{"bench", "train", "--lr", "0"},
		{"bench", "throughput", "--lr", "0"},
		{"bench", "train", "--epochs", "NaN"},
		{"bench", "train", "--epochs", "1e9", "--data", "synthetic"},
		{"bench", "throughput", "--model", "resnet", "--data", "synthetic"},
		{"bench", "throughput", "--transport", "udp", "--data", "synthetic"},
		{"bench", "throughput", "extra"},
		{"bench", "throughput", "--data", "/nonexistent", "--batch", "4", "--steps", "1"},
		{"bench", "throughput", "--data", "synthetic", "--batch", "8000", "--steps", "1"},
		{"bench", "steps", "--workers", "3", "--batch", "16"},
		{"bench", "steps", "--target", "85"},
		{"bench", "train", "--recipe", "nosuch"},
		{"bench", "train", "--model", "cnn", "--recipe", "engine-mlp"},
		{"bench", "train", "--model", "cn"},
		{"bench", "train", "--transport", "none"},
		{"bench", "steps", "--transport", "none", "--data", "synthetic"},
		{"bench", "worker"},
	} {
		_, stderr, code := runCLI(args...)
		fmt.Fprintf(&got, "$ scaleplan %s\n-- exit %d --\n%s", strings.Join(args, " "), code, withoutDataNotice(stderr))
	}
	path := filepath.Join("testdata", "bench", "errors.golden")
	if updating() {
		if err := os.WriteFile(path, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if got.String() != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n%s", path, got.String())
	}
}

// withoutDataNotice drops the line bench prints where Fashion-MNIST is not
// installed, so that the golden output is the same with and without it.
func withoutDataNotice(stderr string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(stderr, "\n") {
		if !strings.HasPrefix(l, "bench: Fashion-MNIST is not installed at ") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// TestBenchSeedExact: a 64-bit seed reaches the log's header digit for
// digit (a float64 would round 2^53+1 to 2^53).
func TestBenchSeedExact(t *testing.T) {
	log := filepath.Join(t.TempDir(), "seed.jsonl")
	_, stderr, code := runCLI("bench", "throughput", "--core-guard=false", "--data", "synthetic", "--batch", "4", "--steps", "1", "--warmup", "0",
		"--seed", "9007199254740993", "--out", log)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(string(b), "\n")
	if !strings.Contains(head, `"seed":9007199254740993`) {
		t.Errorf("header %s: want \"seed\":9007199254740993", head)
	}
}

// bench throughput --transport none measures independent workers: the
// records say transport none, and fit keeps them in a group of their own.
func TestBenchIndependent(t *testing.T) {
	log, recs := benchTwoWorkers(t, "--transport", "none")
	if n := strings.Count(string(recs), `"transport":"none"`); n != 2 {
		t.Errorf("%d records with transport none, want 2:\n%s", n, recs)
	}
	stdout, stderr, code := runCLI("fit", "--format", "csv", log)
	if code != exitOK || !strings.Contains(stdout, "mlp,localhost,2,fp32,none,2,") {
		t.Errorf("fit: exit %d, %s\n%s", code, stderr, stdout)
	}
}

// benchTwoWorkers runs bench throughput of two workers on synthetic data
// at batches 4 and 8, two steps each, with args, and returns its log's
// path and contents.
func benchTwoWorkers(t *testing.T, args ...string) (string, []byte) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "two.jsonl")
	_, stderr, code := runCLI(append([]string{"bench", "throughput", "--core-guard=false", "--data", "synthetic", "--workers", "2",
		"--batch", "4,8", "--steps", "2", "--warmup", "0", "--out", log}, args...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	return log, mustRead(t, log)
}

// TestBenchInStep: bench throughput --in-step measures independent
// workers that meet once a step over --transport, logged with transport
// none and the transport they met over; elsewhere it is refused.
func TestBenchInStep(t *testing.T) {
	_, recs := benchTwoWorkers(t, "--transport", "tcp", "--in-step")
	if n, m := strings.Count(string(recs), `"transport":"none"`), strings.Count(string(recs), `"labels":{"in_step":"tcp"}`); n != 2 || m != 2 {
		t.Errorf("%d records of workers in step over tcp, want 2:\n%s", n, recs)
	}
	for _, args := range [][]string{
		{"bench", "throughput", "--transport", "none", "--in-step"},
		{"bench", "steps", "--in-step"},
	} {
		if _, stderr, code := runCLI(args...); code != exitUsage || !strings.Contains(stderr, "independent workers in step meet over inproc or tcp; only bench throughput measures them") {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
		}
	}
}

// TestBenchTorchInterrupted: bench --framework torch cancelled (^C) after
// the script measured a batch keeps what it measured in --out, prints
// its table and fails with an error that says so. The script is a stand-in
// that, like torchbench.py, writes its log when SIGTERM stops it.
func TestBenchTorchInterrupted(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("skipping: needs a POSIX shell")
	}
	dir := t.TempDir()
	logBody := `{"kind":"header","run":"r","tool":"torchbench","machine":{"cpu":"x","cores":2}}` + "\n" +
		`{"kind":"measurement","run":"r","model":"cnn","device":"cpu","precision":"fp32","workers":1,"batch":16,"global_batch":16,"steps":5,"step_time_s":0.05,"samples_per_s":320}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "log"), []byte(logBody), 0o644); err != nil {
		t.Fatal(err)
	}
	sh := "#!/bin/sh\nif [ \"$1\" = -c ]; then exit 0; fi\nfor last; do :; done\n" +
		"trap 'cat \"" + filepath.Join(dir, "log") + "\" > \"$last\"; exit 1' TERM\n" +
		"while :; do sleep 0.05; done\n"
	python := filepath.Join(dir, "python3")
	if err := os.WriteFile(python, []byte(sh), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.jsonl")
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := newApp(&stdout, &stderr).RunContext(ctx, []string{"scaleplan", "bench", "--framework", "torch", "--python", python,
		"--model", "cnn", "--device", "cpu", "--out", out, "--format", "csv"})
	if !errors.Is(err, torchbench.ErrInterrupted) {
		t.Errorf("error %v, want one wrapping torchbench.ErrInterrupted", err)
	}
	if b, rerr := os.ReadFile(out); rerr != nil || string(b) != logBody {
		t.Errorf("--out holds %q (%v), want the script's log", b, rerr)
	}
	if !strings.Contains(stdout.String(), "cnn,fp32,1,16,16,5,0.05,") {
		t.Errorf("stdout %q: want the table of the measured batch", stdout.String())
	}
}
