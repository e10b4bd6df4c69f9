package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"scaleplan/engine/torchbench"
	"scaleplan/internal/benchlog"
)

// nodeArgsEnv names the variable that makes TestBenchTorchNodes, run by
// the test binary as a child process, run the command line it holds (its
// arguments separated by line breaks) as scaleplan would, and exit.
const nodeArgsEnv = "SCALEPLAN_TEST_NODE_ARGS"

// TestBenchTorchNodes measures a cluster of two "nodes" on this machine:
// two processes of bench --framework torch, node ranks 0 and 1, meeting at
// the static rendezvous on 127.0.0.1, one gloo worker on the CPU each.
// Node rank 0 writes the log: a world of 2 workers on 2 nodes of 1, the
// all-reduce share measured, OpenMP waiting passively; node rank 1 leaves
// its --out as it was; fit groups the measurement by its node count.
func TestBenchTorchNodes(t *testing.T) {
	if args := os.Getenv(nodeArgsEnv); args != "" {
		_, stderr, code := runCLI(strings.Split(args, "\n")...)
		os.Stderr.WriteString(stderr)
		os.Exit(code)
	}
	if _, err := torchbench.FindPython(); err != nil {
		needDeps(t, "PyTorch (apt-get install python3-torch python3-torchvision): "+err.Error())
	}
	dir := t.TempDir()
	log, other := filepath.Join(dir, "node0.jsonl"), filepath.Join(dir, "node1.jsonl")
	if err := os.WriteFile(other, []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	node := func(rank int, out string) (*exec.Cmd, *bytes.Buffer) {
		args := []string{"bench", "--framework", "torch", "--model", "mlp", "--batch", "4,8", "--steps", "3", "--warmup", "1",
			"--device", "cpu", "--threads", "1", "--workers", "1", "--backend", "gloo", "--nodes", "2",
			"--node-rank", strconv.Itoa(rank), "--master-addr", "127.0.0.1", "--master-port", strconv.Itoa(port),
			"--timeout", "3m", "--run", "two-nodes", "--out", out}
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestBenchTorchNodes$")
		cmd.Env = append(os.Environ(), nodeArgsEnv+"="+strings.Join(args, "\n"))
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stderr, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &stderr
	}
	n1, e1 := node(1, other)
	n0, e0 := node(0, log)
	err0 := n0.Wait()
	if err0 != nil {
		cancel() // node 1 would wait for the rendezvous until --timeout
	}
	err1 := n1.Wait()
	if err0 != nil || err1 != nil {
		t.Fatalf("node 0: %v\n%s\nnode 1: %v\n%s", err0, e0, err1, e1)
	}
	if !strings.Contains(e1.String(), "node rank 1: "+other+" left as it was") {
		t.Errorf("node 1 said:\n%s\nwant that its --out is left as it was", e1)
	}
	if b, err := os.ReadFile(other); err != nil || string(b) != "kept\n" {
		t.Errorf("node 1's --out holds %q (%v), want it as it was", b, err)
	}
	checkTwoNodeLog(t, log)
	out, stderr, code := runCLI("fit", "--format", "csv", log)
	if code != exitOK || !strings.Contains(out, "nodes") || !strings.Contains(out, "mlp,cpu,2,fp32,2,") {
		t.Errorf("fit: exit %d, want the law of mlp on 2 cpu devices of 2 nodes:\n%s\n%s", code, out, stderr)
	}
}

// checkTwoNodeLog checks node rank 0's log of two nodes of one worker.
func checkTwoNodeLog(t *testing.T, log string) {
	t.Helper()
	recs := readLog(t, log)
	if len(recs) != 3 || recs[0].Kind != benchlog.KindHeader || recs[1].Kind != benchlog.KindMeasurement || recs[2].Kind != benchlog.KindMeasurement {
		t.Fatalf("records %+v, want a header and two measurements", recs)
	}
	cfg := recs[0].Config
	if cfg["nodes"] != 2.0 || cfg["node_rank"] != 0.0 || cfg["workers"] != 2.0 || cfg["omp_wait_policy"] != "PASSIVE" {
		t.Errorf("header config nodes %v, node_rank %v, workers %v, omp_wait_policy %v; want 2, 0, 2, PASSIVE",
			cfg["nodes"], cfg["node_rank"], cfg["workers"], cfg["omp_wait_policy"])
	}
	if hosts, _ := cfg["node_hosts"].([]any); len(hosts) != 2 {
		t.Errorf("header config node_hosts %v, want the host of each of the 2 nodes", cfg["node_hosts"])
	}
	r := recs[1]
	if r.Workers != 2 || r.Nodes != 2 || r.DevicesPerNode != 1 || r.Transport != "gloo" || r.Batch != 4 || r.GlobalBatch != 8 || r.Steps != 3 {
		t.Errorf("measurement %+v: want 2 workers on 2 nodes of 1 over gloo, batch 4 of 8, 3 steps", r)
	}
	// The all-reduce share is written even where its estimate is 0.
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct{ Phases map[string]float64 }
	if err := json.Unmarshal(bytes.Split(b, []byte("\n"))[1], &raw); err != nil {
		t.Fatal(err)
	}
	if ar, ok := raw.Phases["allreduce_s"]; !ok || ar < 0 || ar > r.StepTime {
		t.Errorf("phases %v: want allreduce_s in [0, step_time_s %v]", raw.Phases, r.StepTime)
	}
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
