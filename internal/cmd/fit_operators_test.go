package cmd

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scaleplan/compute"
	"scaleplan/hw"
	"scaleplan/internal/calib"
)

// TestFitOperatorsCommand fits the operator classes to our H200's fp32
// ResNet-50 sweep: one eager entry of the H200 over every measurement of
// the log (the lines of kind measurement), tensor-core classes no row runs
// undetermined at the device's published figures.
func TestFitOperatorsCommand(t *testing.T) {
	log := "../../testdata/measurements/h200-2026-11-26/resnet50.jsonl"
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Count(string(data), `"kind": "measurement"`)
	out := filepath.Join(t.TempDir(), "ops.yaml")
	stdout, stderr, code := runCLI("fit", "--operators", "--out", out, log)
	if code != exitOK || !strings.Contains(stdout, "Operator classes") || !strings.Contains(stderr, "1 operators") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	c, err := calib.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Operators) != 1 {
		t.Fatalf("%d operators entries, want 1", len(c.Operators))
	}
	e := c.Operators[0]
	if e.Device != "h200-sxm-141gb" || e.Mode != "eager" || e.Rows != rows || !(e.Error < e.ErrorBefore) {
		t.Errorf("entry %+v: want the H200, eager, %d rows, a smaller error after", e, rows)
	}
	cat, err := hw.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range e.Classes {
		class, err := compute.ParseClass(k.Class)
		if err != nil {
			t.Fatal(err)
		}
		if want := compute.DeviceEfficiency(cat.DeviceCalled(e.Device), class); strings.HasPrefix(k.Class, "tensor-") && (!k.Undetermined || k.Efficiency != want) {
			t.Errorf("%s: %+v, want undetermined at the device's published %v (no row runs the tensor cores)", k.Class, k, want)
		}
	}
}

// TestFitProfileCommand fits a profile written here of an H100 product at
// half the fp16 peak, and refuses the committed CPU profile, whose device
// the catalogue does not have.
func TestFitProfileCommand(t *testing.T) {
	cat, err := hw.Load()
	if err != nil {
		t.Fatal(err)
	}
	d, err := cat.Device("h100-sxm5-80gb")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	prof := filepath.Join(dir, "p.profile.json")
	flops := 4e12
	json := fmt.Sprintf(`{"kind": "torch-profile", "device": "NVIDIA H100 80GB HBM3", "profiles": [{"model": "resnet50", "precision": "amp-fp16", "batch": 64, "step_time_s": 0.1,
 "ops": [{"name": "aten::cudnn_convolution", "calls": 4, "self_cpu_s": 4e-05, "cpu_s": 4e-05, "self_device_s": %v, "flops": %v}]}]}`,
		flops/(float64(d.PeakFLOPs(hw.FP16))*0.5), flops)
	if err := os.WriteFile(prof, []byte(json), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "ops.yaml")
	stdout, stderr, code := runCLI("fit", "--profile", prof, "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	c, err := calib.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	e := c.Operators[0]
	if e.Device != "h100-sxm5-80gb" || math.Abs(e.Classes[0].Efficiency-0.5) > 1e-9 || e.Classes[0].Undetermined ||
		math.Abs(float64(e.Launch)-10e-6) > 1e-12 {
		t.Errorf("entry %+v: want tensor-fp16 0.5 and 10 µs per call", e)
	}
	_, stderr, code = runCLI("fit", "--profile", "../../fit/logs/testdata/torchbench-mlp-cpu.profile.json")
	if code != exitRuntime || !strings.Contains(stderr, `device "cpu"`) {
		t.Errorf("CPU profile: exit %d, %s", code, stderr)
	}
}
