package torchbench

import (
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// readHostTable returns the quantities of a scripts/torchhost.py table in
// order and their values, its comment lines skipped.
func readHostTable(t *testing.T, text string) ([]string, map[string]float64) {
	t.Helper()
	r := csv.NewReader(strings.NewReader(text))
	r.Comment = '#'
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%v:\n%s", err, text)
	}
	if len(rows) < 2 || !slices.Equal(rows[0], []string{"quantity", "value"}) {
		t.Fatalf("no quantity,value table:\n%s", text)
	}
	var names []string
	values := map[string]float64{}
	for _, row := range rows[1:] {
		v, err := strconv.ParseFloat(row[1], 64)
		if err != nil {
			t.Fatalf("%s: %v", row[0], err)
		}
		names = append(names, row[0])
		values[row[0]] = v
	}
	return names, values
}

// TestTorchHostScript runs scripts/torchhost.py briefly and checks its
// table: the quantities of the committed compute/testdata/torch-host.csv
// in the same order (and a CUDA host's two more), a dispatch that takes time, the header's torch
// version and CPU, and momentum SGD's four foreach calls with weight
// decay (torch/optim/sgd.py's _multi_tensor_sgd: the decay's add, the
// buffers' mul and add, the parameters' add).
func TestTorchHostScript(t *testing.T) {
	python := needPython(t)
	cmd := exec.Command(python, "../../scripts/torchhost.py", "--number", "20", "--repeats", "3", "--rounds", "1", "--budget", "0.0002")
	cmd.Env = append(os.Environ(), "OMP_WAIT_POLICY=PASSIVE")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("torchhost.py: %v", err)
	}
	names, got := readHostTable(t, string(out))
	committed, err := os.ReadFile("../../compute/testdata/torch-host.csv")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := readHostTable(t, string(committed))
	names = slices.DeleteFunc(names, func(n string) bool { return strings.HasPrefix(n, "cuda_") }) // a CUDA host's
	if !slices.Equal(names, want) {
		t.Errorf("quantities %v, the committed table's %v", names, want)
	}
	if !(got["dispatch"] > 0) {
		t.Errorf("dispatch %g µs, want > 0", got["dispatch"])
	}
	if got["sgd_foreach_calls"] != 4 {
		t.Errorf("momentum SGD makes %g foreach calls, want 4", got["sgd_foreach_calls"])
	}
	for _, s := range []string{"# torch ", "# cpu ", "OMP_WAIT_POLICY=PASSIVE, threads 1"} {
		if !strings.Contains(string(out), s) {
			t.Errorf("header lacks %q:\n%s", s, out)
		}
	}
}

// TestTorchHostCUDA checks scripts/torchhost.py's CUDA quantities where no
// CUDA device is: --device cuda is refused with a message, the table of
// --device auto has no cuda_ rows, and the function that measures them
// runs through with the device's tensors, synchronisation and events
// stood in for by the CPU's (a device's timings themselves need one).
func TestTorchHostCUDA(t *testing.T) {
	python := needPython(t)
	args := []string{"--number", "20", "--repeats", "3", "--rounds", "1", "--budget", "0.0002"}
	cmd := exec.Command(python, append([]string{"../../scripts/torchhost.py", "--device", "cuda"}, args...)...)
	cmd.Env = append(os.Environ(), "OMP_WAIT_POLICY=PASSIVE")
	out, err := cmd.CombinedOutput()
	if cuda := strings.Contains(string(out), "cuda_op,"); !cuda && (err == nil || !strings.Contains(string(out), "torch sees no CUDA device")) {
		t.Errorf("--device cuda without a device: %v, %s: want it refused", err, out)
	}
	cmd = exec.Command(python, append([]string{"../../scripts/torchhost.py"}, args...)...)
	cmd.Env = append(os.Environ(), "OMP_WAIT_POLICY=PASSIVE")
	if out, err = cmd.Output(); err != nil {
		t.Fatalf("torchhost.py: %v", err)
	}
	names, _ := readHostTable(t, string(out))
	if slices.Contains(names, "cuda_op") != strings.Contains(string(out), "# cuda ") {
		t.Errorf("cuda_op rows and the header's # cuda line disagree:\n%s", out)
	}
	standIn := `import sys, argparse
sys.path.insert(0, "../../scripts")
import torch, torchhost
cpu = torch.device("cpu")
torch.device = lambda name: cpu
torch.cuda.synchronize = lambda *a: None
class Event:
    def __init__(self, **kw): pass
    def record(self): pass
torch.cuda.Event = Event
rows = torchhost.cuda(argparse.Namespace(number=20, repeats=3, budget=0.0002, rounds=1, cuda_number=10))
print(",".join("%s=%r" % kv for kv in sorted(rows.items())))
`
	cmd = exec.Command(python, "-c", standIn)
	cmd.Env = append(os.Environ(), "OMP_WAIT_POLICY=PASSIVE")
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cuda() with CPU stand-ins: %v\n%s", err, out)
	}
	got := strings.TrimSpace(string(out))
	if !regexp.MustCompile(`^cuda_event=-?[0-9.e+-]+,cuda_op=[0-9.e+-]+,cuda_sync=-?[0-9.e+-]+$`).MatchString(got) {
		t.Errorf("cuda() with CPU stand-ins gave %q: want cuda_event, cuda_op and cuda_sync", got)
	}
}

// TestHostTableOptions checks that HostTable refuses a device and a
// number of rounds it cannot pass to the script, naming the choices,
// before it looks for an interpreter.
func TestHostTableOptions(t *testing.T) {
	for _, tc := range []struct {
		opt  HostOptions
		want string
	}{
		{HostOptions{Device: "gpu"}, `host device "gpu": want one of auto, cpu, cuda`},
		{HostOptions{Rounds: -1}, "host rounds -1: want 1 to 100"},
		{HostOptions{Rounds: 101}, "host rounds 101"},
	} {
		if _, err := HostTable(t.Context(), tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.opt, err, tc.want)
		}
	}
}

// TestHeaderHostCosts checks torchbench.py's host_costs, which fills the
// header's machine.host_costs on CUDA: it runs the torchhost.py beside it
// in a process of its own and reads its table's rows; a script that
// fails (here a stand-in that exits as torchhost.py does without a
// device) or is missing gives none.
func TestHeaderHostCosts(t *testing.T) {
	python := needPython(t)
	for _, tc := range []struct {
		host, want string
	}{
		{"print('# stand-in\\nquantity,value\\nmodule_call,1.118\\ncuda_op,35.14')", "{'module_call': 1.118, 'cuda_op': 35.14}"},
		{"import sys; sys.exit('torchhost.py: error: --device cuda: torch sees no CUDA device')", "None"},
		{"", "None"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "torchbench.py"), script, 0o644); err != nil {
			t.Fatal(err)
		}
		if tc.host != "" {
			if err := os.WriteFile(filepath.Join(dir, "torchhost.py"), []byte(tc.host+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(python, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import torchbench; print(torchbench.host_costs())", dir)
		cmd.Env = append(os.Environ(), "OMP_WAIT_POLICY=PASSIVE")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("host_costs: %v", err)
		}
		if got := strings.TrimSpace(string(out)); got != tc.want {
			t.Errorf("host_costs with %q: %s, want %s", tc.host, got, tc.want)
		}
	}
}

// TestHeaderHostCostsStopped checks that a stop while the host is timed
// (torchbench's Interrupted, raised by its signal handlers; here by an
// alarm half a second in, the stand-in torchhost.py sleeping 30 s) ends
// the timing process and gives no costs, so that the log is still
// written; and that --no-host-costs, a CPU device or a rank above 0
// measure nothing.
func TestHeaderHostCostsStopped(t *testing.T) {
	python := needPython(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "torchbench.py"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "torchhost.py"), []byte("import time\ntime.sleep(30)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prog := `import argparse, signal, sys, time, types
sys.path.insert(0, sys.argv[1])
import torchbench as tb
def stop(signum, frame):
    raise tb.Interrupted("SIGALRM")
signal.signal(signal.SIGALRM, stop)
cuda, cpu = types.SimpleNamespace(type="cuda"), types.SimpleNamespace(type="cpu")
on, off = argparse.Namespace(no_host_costs=False), argparse.Namespace(no_host_costs=True)
print(tb.measure_host(off, cuda, 0), tb.measure_host(on, cpu, 0), tb.measure_host(on, cuda, 1))
t0 = time.monotonic()
signal.setitimer(signal.ITIMER_REAL, 0.5)
print(tb.measure_host(on, cuda, 0), time.monotonic() - t0 < 10)
`
	cmd := exec.Command(python, "-c", prog, dir)
	cmd.Env = append(os.Environ(), "OMP_WAIT_POLICY=PASSIVE")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("measure_host: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != "None None None\nNone True" {
		t.Errorf("measure_host: %q, want no costs each time and the stop within 10 s", got)
	}
}
