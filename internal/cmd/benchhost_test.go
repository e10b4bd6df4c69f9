package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scaleplan/compute"
	"scaleplan/engine/torchbench"
)

// TestBenchHost runs bench host on this machine: its table reads back as
// a host table, goes to --out or standard output, and a run that fails
// (--device cuda where torch sees no device) leaves --out as it was;
// wrong flags are usage errors that name the valid choices.
func TestBenchHost(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "host", "--device", "gpu"}, "want one of auto, cpu, cuda"},
		{[]string{"bench", "host", "--rounds", "0"}, "--rounds 0: want 1 to 100"},
		{[]string{"bench", "host", "extra"}, "takes no arguments"},
	} {
		if _, stderr, code := runCLI(tc.args...); code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q: want a usage error with %q", tc.args, code, stderr, tc.want)
		}
	}
	if _, err := torchbench.FindPython(); err != nil {
		needDeps(t, "PyTorch (apt-get install python3-torch python3-torchvision): "+err.Error())
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "host.csv")
	if _, stderr, code := runCLI("bench", "host", "--rounds", "1", "--out", out); code != 0 {
		t.Fatalf("bench host --out: exit %d: %s", code, stderr)
	}
	h, err := compute.ReadHostFile(out)
	if err != nil {
		t.Fatalf("the table: %v", err)
	}
	if !(h.ModuleCall > 0) || !(h.CPUOp > 0) {
		t.Errorf("module call %v, CPU operator %v: want both measured", h.ModuleCall, h.CPUOp)
	}
	stdout, stderr, code := runCLI("bench", "host", "--rounds", "1", "--device", "cpu")
	if code != 0 || !strings.Contains(stdout, "quantity,value") || strings.Contains(stdout, "cuda_op") {
		t.Errorf("bench host --device cpu: exit %d, %s: want a CPU table on standard output:\n%s", code, stderr, stdout)
	}
	// Where torch sees no CUDA device, --device cuda fails and keeps --out.
	if strings.Contains(stdout, "# cuda ") {
		return
	}
	kept := filepath.Join(dir, "kept.csv")
	if err := os.WriteFile(kept, []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runCLI("bench", "host", "--rounds", "1", "--device", "cuda", "--out", kept); code == 0 || !strings.Contains(stderr, "torch sees no CUDA device") {
		t.Errorf("bench host --device cuda without a device: exit %d, %q: want the script's refusal", code, stderr)
	}
	if b, err := os.ReadFile(kept); err != nil || string(b) != "kept\n" {
		t.Errorf("--out after a failed run: %q, %v: want it as it was", b, err)
	}
}
