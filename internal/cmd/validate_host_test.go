package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"scaleplan/engine/torchbench"
)

// h200MLPLog is our H200's MLP and CNN sweep, whose small batches are the
// host's (docs/torchbench.md).
const h200MLPLog = "../../testdata/measurements/h200-2026-11-26/mlp-cnn.jsonl"

// meanError returns the percentage of validate's "mean absolute error of
// samples/s" line in out.
func meanError(t *testing.T, out string) float64 {
	t.Helper()
	m := regexp.MustCompile(`mean absolute error of samples/s over \d+ measurements: ([0-9.]+)%`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no mean absolute error in:\n%s", out)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// TestValidateMeasuredHost checks validate's --host: a table whose CUDA
// operator costs 35 µs on the host (as the H200 calibration's fitted
// launch has it) brings the host-bound MLP and CNN rows of our H200 to
// within half of their error on the published 4.2 µs, the figures
// docs/compute-calibration.md quotes (and the whole H200 sweep's), and a
// table the
// reader refuses, or a missing one, is an error naming --host and the
// file; fit --operators --host holds the table's cost per kernel. Where PyTorch is installed, scripts/torchhost.py's own table of
// this machine is read as it writes it.
func TestValidateMeasuredHost(t *testing.T) {
	cpu, err := os.ReadFile("../../compute/testdata/torch-host.csv")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	slow := filepath.Join(dir, "slow.csv")
	if err := os.WriteFile(slow, append(cpu, "cuda_op,35.14\ncuda_sync,21.5\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI("validate", "--measured", h200MLPLog)
	if code != 0 {
		t.Fatalf("validate: exit %d: %s", code, stderr)
	}
	base := meanError(t, out)
	out, stderr, code = runCLI("validate", "--measured", h200MLPLog, "--host", slow)
	if code != 0 {
		t.Fatalf("validate --host: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "by operators, host measured") {
		t.Errorf("validate --host: no row says its host was measured:\n%s", out)
	}
	got := meanError(t, out)
	if !(got < base/2) {
		t.Errorf("mean absolute error with a 35 µs kernel %.1f %%, without %.1f %%: want under half", got, base)
	}
	page, err := os.ReadFile("../../docs/compute-calibration.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(page)), " ")
	if want := fmt.Sprintf("%.1f %% to %.1f %% mean absolute error", base, got); !strings.Contains(text, want) {
		t.Errorf("docs/compute-calibration.md lacks %q", want)
	}
	sweep, err := filepath.Glob("../../testdata/measurements/h200-2026-11-26/*.jsonl")
	if err != nil || len(sweep) == 0 {
		t.Fatalf("the H200 sweep: %v, %d logs", err, len(sweep))
	}
	var args []string
	for _, f := range sweep {
		args = append(args, "--measured", f)
	}
	out, stderr, code = runCLI(append([]string{"validate"}, args...)...)
	if code != 0 {
		t.Fatalf("validate of the H200 sweep: exit %d: %s", code, stderr)
	}
	sweepBase := meanError(t, out)
	out, stderr, code = runCLI(append([]string{"validate", "--host", slow}, args...)...)
	if code != 0 {
		t.Fatalf("validate --host of the H200 sweep: exit %d: %s", code, stderr)
	}
	if want := fmt.Sprintf("from %.1f %% to %.1f %%", sweepBase, meanError(t, out)); !strings.Contains(text, want) {
		t.Errorf("docs/compute-calibration.md lacks the whole sweep's %q", want)
	}
	// The host table a lent H200 machine measured (torchhost.py with
	// CUDA rows): its cuda_op, a fifth of the fitted launch, moves the
	// sweep little.
	measuredHost := "../../testdata/measurements/h200-2026-11-30-profile/torch-host.csv"
	out, stderr, code = runCLI(append([]string{"validate", "--host", measuredHost}, args...)...)
	if code != 0 {
		t.Fatalf("validate --host %s: exit %d: %s", measuredHost, code, stderr)
	}
	if want := fmt.Sprintf("from %.1f %% to %.1f %% with the host that machine measured", sweepBase, meanError(t, out)); !strings.Contains(text, want) {
		t.Errorf("docs/compute-calibration.md lacks %q", want)
	}

	// fit --operators --host holds the table's cuda_op as the host's
	// cost per kernel and writes it as measured.
	calOut := filepath.Join(dir, "ops.yaml")
	out, stderr, code = runCLI("fit", "--operators", "--host", slow, "--out", calOut, h200MLPLog)
	if code != 0 {
		t.Fatalf("fit --operators --host: exit %d: %s", code, stderr)
	}
	if !regexp.MustCompile(`launch \(µs per kernel\)\s+35\.14\s+35\.14\s+—.*measured: the host table's cuda_op`).MatchString(out) {
		t.Errorf("fit --operators --host: no held launch of 35.14 µs in:\n%s", out)
	}
	if b, err := os.ReadFile(calOut); err != nil || !strings.Contains(string(b), "launch_measured: true") {
		t.Errorf("fit --out: %v, want launch_measured: true in:\n%s", err, b)
	}

	// The table is an input: no output may overwrite it.
	if _, stderr, code := runCLI("fit", "--operators", "--host", slow, "--out", slow, h200MLPLog); code == 0 || !strings.Contains(stderr, "never overwrites an input") {
		t.Errorf("fit --host X --out X: exit %d, %q: want it refused", code, stderr)
	}
	if b, err := os.ReadFile(slow); err != nil || !strings.Contains(string(b), "cuda_op,35.14") {
		t.Errorf("the host table after fit --out onto it: %v, %q: want it as it was", err, b)
	}

	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, append(cpu, "cuda_op,-5\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{bad, bad + ": line "},
		{filepath.Join(dir, "absent.csv"), "absent.csv"},
	} {
		_, stderr, code := runCLI("validate", "--measured", h200MLPLog, "--host", tc.path)
		if code == 0 || !strings.Contains(stderr, "--host: ") || !strings.Contains(stderr, tc.want) {
			t.Errorf("--host %s: exit %d, %q: want an error naming --host and %q", tc.path, code, stderr, tc.want)
		}
	}

	python, err := torchbench.FindPython()
	if err != nil {
		needDeps(t, "PyTorch (apt-get install python3-torch python3-torchvision): "+err.Error())
	}
	cmd := exec.Command(python, "../../scripts/torchhost.py", "--number", "20", "--repeats", "3", "--rounds", "1", "--budget", "0.0002")
	cmd.Env = append(os.Environ(), "OMP_WAIT_POLICY=PASSIVE")
	table, err := cmd.Output()
	if err != nil {
		t.Fatalf("torchhost.py: %v", err)
	}
	own := filepath.Join(dir, "torch-host.csv")
	if err := os.WriteFile(own, table, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runCLI("validate", "--measured", h200MLPLog, "--host", own); code != 0 {
		t.Errorf("validate --host with torchhost.py's table: exit %d: %s\n%s", code, stderr, table)
	}
}

// TestScenarioHost checks --host of the commands that compute scenarios:
// simulate charges the table's cost per kernel to a scenario computed by
// the operator model (a host of 1 ms a kernel makes TSUBAME 3.0's
// ResNet-50 step longer at one GPU), predict says its compute had the
// host measured, as plan does, a missing table is an error naming
// --host, and plan --llm charges each kernel the table's cuda_op (a 1 ms
// launch makes GPT-3 XL's compute longer) and says so.
func TestScenarioHost(t *testing.T) {
	cpu, err := os.ReadFile("../../compute/testdata/torch-host.csv")
	if err != nil {
		t.Fatal(err)
	}
	slow := filepath.Join(t.TempDir(), "slow.csv")
	if err := os.WriteFile(slow, append(cpu, "cuda_op,1000\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	step := func(args ...string) float64 {
		t.Helper()
		out, stderr, code := runCLI(append([]string{"simulate", "tsubame3-resnet50-caffe2-default", "--format", "csv"}, args...)...)
		if code != 0 {
			t.Fatalf("simulate %v: exit %d: %s", args, code, stderr)
		}
		m := regexp.MustCompile(`(?m)^1,1,32,32,([0-9.]+),`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("simulate %v: no one-device row in:\n%s", args, out)
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	if base, host := step(), step("--host", slow); !(host > base) {
		t.Errorf("one GPU's step %v s with a 1 ms kernel, %v s without: want longer", host, base)
	}
	if out, stderr, code := runCLI("predict", "tsubame3-resnet50-caffe2-default", "--host", slow); code != 0 || !strings.Contains(out, "compute by operators, host measured") {
		t.Errorf("predict --host: exit %d, %s: want its compute said to have the host measured:\n%s", code, stderr, out)
	}
	if _, stderr, code := runCLI("simulate", "tsubame3-resnet50-caffe2-default", "--host", filepath.Join(t.TempDir(), "absent.csv")); code == 0 || !strings.Contains(stderr, "simulate: --host: ") {
		t.Errorf("simulate --host of a missing file: exit %d, %q", code, stderr)
	}
	if out, stderr, code := runCLI("plan", "--recipe", "engine-mlp", "--systems", "workstation-rtx6000-ada", "--host", slow); code != 0 || !strings.Contains(out, "operator model of the device's datasheet (docs/compute.md), host measured (--host)") {
		t.Errorf("plan --host: exit %d, %s: want its compute said to have the host measured:\n%s", code, stderr, out)
	}
	llm := func(args ...string) (compute float64, out string) {
		t.Helper()
		out, stderr, code := runCLI(append([]string{"plan", "--llm", "gpt3-1.3b", "--system", "dgx-h100", "--gpus", "8", "--top", "1"}, args...)...)
		if code != 0 {
			t.Fatalf("plan --llm %v: exit %d: %s", args, code, stderr)
		}
		m := regexp.MustCompile(`(?m)^compute +([0-9.]+) `).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("plan --llm %v: no compute part in:\n%s", args, out)
		}
		compute, _ = strconv.ParseFloat(m[1], 64)
		return compute, out
	}
	base, _ := llm()
	if host, out := llm("--host", slow); !(host > base) || !strings.Contains(out, "each kernel's launch the host's measured cuda_op") {
		t.Errorf("plan --llm --host: compute %v s against %v s without, output:\n%s\nwant longer, and the host said to be measured", host, base, out)
	}
	if _, stderr, code := runCLI("plan", "--llm", "gpt3-1.3b", "--system", "dgx-h100", "--gpus", "8", "--host", filepath.Join(t.TempDir(), "absent.csv")); code == 0 || !strings.Contains(stderr, "plan: --host: ") {
		t.Errorf("plan --llm --host of a missing file: exit %d, %q", code, stderr)
	}
}

// TestValidateHeaderHost checks that a bench log whose header carries its
// host's costs (machine.host_costs, engine/torchbench on CUDA) is
// predicted with them as if --host gave the same table, that --host
// overrides them, and that costs the reader refuses name the field.
func TestValidateHeaderHost(t *testing.T) {
	b, err := os.ReadFile(h200MLPLog)
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := strings.Cut(string(b), "\n")
	var header map[string]any
	if err := json.Unmarshal([]byte(first), &header); err != nil {
		t.Fatal(err)
	}
	costs := map[string]float64{"dispatch": 0.729, "autograd_record": 0.418, "module_call": 1.118, "sgd_tensor": 1.815,
		"adam_tensor": 6.842, "scaler_tensor": 1.465, "cuda_op": 35.14, "cuda_sync": 21.5}
	dir := t.TempDir()
	write := func(name string, costs map[string]float64) string {
		t.Helper()
		header["machine"].(map[string]any)["host_costs"] = costs
		line, err := json.Marshal(header)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(string(line)+"\n"+rest), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	withCosts := write("with-costs.jsonl", costs)
	var table strings.Builder
	table.WriteString("quantity,value\n")
	for k, v := range costs {
		fmt.Fprintf(&table, "%s,%v\n", k, v)
	}
	tablePath := filepath.Join(dir, "host.csv")
	if err := os.WriteFile(tablePath, []byte(table.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	fromHeader, stderr, code := runCLI("validate", "--measured", withCosts)
	if code != 0 {
		t.Fatalf("validate of a log with host costs: exit %d: %s", code, stderr)
	}
	fromFlag, stderr, code := runCLI("validate", "--measured", h200MLPLog, "--host", tablePath)
	if code != 0 {
		t.Fatalf("validate --host: exit %d: %s", code, stderr)
	}
	if !strings.Contains(fromHeader, "by operators, host measured") || meanError(t, fromHeader) != meanError(t, fromFlag) {
		t.Errorf("the header's costs: mean error %v, --host's %v; want the same, the rows saying host measured", meanError(t, fromHeader), meanError(t, fromFlag))
	}
	cpu, err := os.ReadFile("../../compute/testdata/torch-host.csv")
	if err != nil {
		t.Fatal(err)
	}
	cpuPath := filepath.Join(dir, "cpu.csv")
	if err := os.WriteFile(cpuPath, cpu, 0o644); err != nil {
		t.Fatal(err)
	}
	overridden, _, _ := runCLI("validate", "--measured", withCosts, "--host", cpuPath)
	plain, _, _ := runCLI("validate", "--measured", h200MLPLog, "--host", cpuPath)
	if meanError(t, overridden) != meanError(t, plain) {
		t.Errorf("--host over the header's costs: %v, want %v", meanError(t, overridden), meanError(t, plain))
	}
	bad := write("bad-costs.jsonl", map[string]float64{"cuda_ops": 3})
	if _, stderr, code := runCLI("validate", "--measured", bad); code == 0 || !strings.Contains(stderr, "machine.host_costs: unknown quantity") {
		t.Errorf("unknown host costs: exit %d, %q: want an error naming machine.host_costs", code, stderr)
	}
}
