package cmd

import (
	"runtime"
	"strings"
	"testing"
)

// The guard is on by default with two CPUs alone; a flag set either way
// decides on any machine.
func TestGuardWanted(t *testing.T) {
	for _, tc := range []struct {
		set, value bool
		cpus       int
		want       bool
	}{
		{false, true, 2, true},
		{false, true, 4, false},
		{false, true, 16, false},
		{false, true, 1, false},
		{true, true, 16, true},
		{true, false, 2, false},
		{true, true, 2, true},
	} {
		if got := guardWanted(tc.set, tc.value, tc.cpus); got != tc.want {
			t.Errorf("set %v, value %v, %d CPUs: %v, want %v", tc.set, tc.value, tc.cpus, got, tc.want)
		}
	}
}

// bench throughput and validate --engine report what the guard did, on a
// machine with two CPUs.
func TestCoreGuardReport(t *testing.T) {
	if runtime.NumCPU() < 2 || runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one CPU: no guard")
	}
	_, stderr, code := runCLI("bench", "throughput", "--data", "synthetic", "--batch", "4", "--steps", "1", "--warmup", "0")
	if code != exitOK || !strings.Contains(stderr, "bench: cores: handoff between the first two CPUs ") {
		t.Errorf("bench throughput: exit %d, no guard summary:\n%s", code, stderr)
	}
	_, stderr, code = runCLI("bench", "throughput", "--data", "synthetic", "--batch", "4", "--steps", "1", "--warmup", "0", "--core-guard=false")
	if code != exitOK || strings.Contains(stderr, "cores:") {
		t.Errorf("bench throughput --core-guard=false: exit %d, guard summary:\n%s", code, stderr)
	}
	stdout, stderr, code := runCLI("validate", "--engine", "--engine-data", "synthetic", "--engine-batch", "4,8", "--engine-workers", "2",
		"--engine-transport", "inproc", "--engine-steps", "2", "--engine-warmup", "0", "--engine-rounds", "1")
	if code != exitOK || !strings.Contains(stdout, "\nCores: handoff between the first two CPUs ") {
		t.Errorf("validate --engine: exit %d, no guard line:\n%s%s", code, stdout, stderr)
	}
}
