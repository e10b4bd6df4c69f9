package cmd

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scaleplan/internal/calib"
)

// The -update flag rewrites the golden files. Another test file of the
// package may have registered it already (as a package variable); then
// both share it.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata/")
	}
}

func updating() bool {
	g, ok := flag.Lookup("update").Value.(flag.Getter)
	if !ok {
		return false
	}
	b, _ := g.Get().(bool)
	return b
}

// TestFitCommand runs `scaleplan fit` on the sample logs and compares exit
// code, stdout and stderr with testdata/fit/NAME.golden (-update rewrites).
func TestFitCommand(t *testing.T) {
	tmp := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"text", []string{"fit", "--gradient-size", "102.2 MB", "--out", filepath.Join(tmp, "calib.yaml"), "testdata/fit/bench_resnet50.jsonl"}, exitOK},
		{"csv", []string{"fit", "--format", "csv", "testdata/fit/bench_resnet50.jsonl"}, exitOK},
		{"json", []string{"fit", "--format", "json", "--keep-outliers", "testdata/fit/horovod_truncated.txt"}, exitOK},
		{"md", []string{"fit", "--format", "md", "--device", "V100", "testdata/fit/horovod_truncated.txt", "testdata/fit/mlperf_resnet.log"}, exitOK},
		{"repeats", []string{"fit", "testdata/fit/bench_mlp_repeats.jsonl"}, exitOK},
		{"gradient-unused", []string{"fit", "--gradient-size", "7.45 MB", "testdata/fit/one-device.csv"}, exitOK},
		{"rename", []string{"fit", "--device", "V100=v100-sxm2-16gb", "--out", filepath.Join(tmp, "renamed.yaml"), "testdata/fit/bench_resnet50.jsonl"}, exitOK},
		{"bad-device", []string{"fit", "--device", "V100=", "testdata/fit/bench_resnet50.jsonl"}, exitUsage},
		{"device-unused", []string{"fit", "--device", "V100=v100-sxm2-16gb,A100=a100-sxm4-80gb", "testdata/fit/bench_resnet50.jsonl"}, exitUsage},
		{"device-all-named", []string{"fit", "--device", "h100-sxm5-80gb", "../../fit/testdata/seed003.csv"}, exitUsage},
		{"target", []string{"fit", "--target", "20%", "../../fit/testdata/torchvision_resnet50_ddp.txt"}, exitRuntime},
		{"bad-target", []string{"fit", "--target", "0", "../../fit/testdata/torchvision_resnet50_ddp.txt"}, exitUsage},
		{"torchvision", []string{"fit", "--device", "A100-SXM4-80GB", "../../fit/testdata/torchvision_resnet50_ddp.txt", "../../fit/testdata/torchvision_truncated.txt"}, exitRuntime},
		{"hf-trainer", []string{"fit", "--target", "0.93", "--device", "a100-sxm4-80gb", "--out", filepath.Join(tmp, "vit.yaml"), "../../fit/testdata/hf_trainer_vit_ddp.txt"}, exitOK},
		{"megatron", []string{"fit", "--device", "h100-sxm5-80gb", "--group-by", "layout", "../../fit/testdata/megatron_gpt_tp2.txt"}, exitOK},
		{"deepspeed", []string{"fit", "--device", "h100-sxm5-80gb", "../../fit/testdata/deepspeed_bert_zero2.txt"}, exitOK},
		{"lightning", []string{"fit", "--device", "a100-sxm4-80gb", "../../fit/testdata/lightning_1gpu_metrics.csv", "../../fit/testdata/lightning_ddp_metrics.csv"}, exitOK},
		{"nccl", []string{"fit", "../../fit/testdata/nccl_allreduce_h100x16.txt", "../../fit/testdata/nccl_mixed.txt"}, exitOK},
		{"nccl-out", []string{"fit", "--out", filepath.Join(tmp, "nccl.yaml"), "../../fit/testdata/nccl_allreduce_h100x16.txt"}, exitRuntime},
		{"lightning-target", []string{"fit", "--target", "0.8", "../../fit/testdata/lightning_val_metrics.csv"}, exitOK},
		{"torchtitan", []string{"fit", "--group-by", "layout", "../../fit/testdata/torchtitan_llama3_8b.txt"}, exitRuntime},
		{"model", []string{"fit", "--device", "a100-sxm4-80gb", "--model", "resnet50", "--out", filepath.Join(tmp, "lightning.yaml"), "../../fit/testdata/lightning_1gpu_metrics.csv"}, exitOK},
		{"bad-model", []string{"fit", "--model", "resnet51", "../../fit/testdata/lightning_1gpu_metrics.csv"}, exitUsage},
		{"model-all-named", []string{"fit", "--model", "resnet50", "../../fit/testdata/horovod_resnet50.txt"}, exitUsage},
		{"no-batch", []string{"fit", "testdata/fit/mlperf_no_batch.log"}, exitOK},
		{"no-log", []string{"fit"}, exitUsage},
		{"bad-format", []string{"fit", "--format", "xml", "testdata/fit/bench_resnet50.jsonl"}, exitUsage},
		{"bad-size", []string{"fit", "--gradient-size", "102", "testdata/fit/bench_resnet50.jsonl"}, exitUsage},
		{"bad-flag", []string{"fit", "--bogus", "testdata/fit/bench_resnet50.jsonl"}, exitUsage},
		{"missing-file", []string{"fit", "testdata/fit/no-such.log"}, exitRuntime},
		{"unknown-format", []string{"fit", "testdata/fit/notalog.txt"}, exitRuntime},
		{"fabric", []string{"fit", "--system", "dgx-h100", "--out", filepath.Join(tmp, "fabric.yaml"), "../../validate/testdata/nccl_synthetic_dgx_h100.txt"}, exitOK},
		{"fabric-unknown-system", []string{"fit", "--system", "dgx-h900", "../../validate/testdata/nccl_synthetic_dgx_h100.txt"}, exitRuntime},
		{"fabric-bad-allreduce", []string{"fit", "--system", "dgx-h100", "--allreduce", "ps", "../../validate/testdata/nccl_synthetic_dgx_h100.txt"}, exitUsage},
		{"fabric-no-tests", []string{"fit", "--system", "dgx-h100", "testdata/fit/bench_resnet50.jsonl"}, exitUsage},
		{"nothing-to-write", []string{"fit", "--out", filepath.Join(tmp, "x.yaml"), "testdata/fit/mlperf_resnet.log"}, exitRuntime},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(tc.args...)
			if code != tc.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			shown := make([]string, len(tc.args))
			for i, a := range tc.args {
				shown[i] = a
				if strings.Contains(a, " ") {
					shown[i] = "'" + a + "'"
				}
			}
			got := "$ scaleplan " + strings.Join(shown, " ") + "\n-- exit " + string(rune('0'+code)) + " --\n-- stdout --\n" + stdout + "-- stderr --\n" + stderr
			got = strings.ReplaceAll(got, tmp, "$TMP")
			path := filepath.Join("testdata", "fit", tc.name+".golden")
			if updating() {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -update creates it)", err)
			}
			if got != string(want) {
				t.Errorf("output differs from %s (go test -update rewrites it):\n%s", path, got)
			}
		})
	}
	// The calibration the text case wrote reads back.
	c, err := calib.ReadFile(filepath.Join(tmp, "calib.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Throughput) != 2 || len(c.Comm) != 1 || len(c.Steps) != 1 {
		t.Errorf("calibration has %d throughput, %d comm, %d steps entries; want 2, 1, 1", len(c.Throughput), len(c.Comm), len(c.Steps))
	}
	if _, err := os.Stat(filepath.Join(tmp, "x.yaml")); !os.IsNotExist(err) {
		t.Errorf("nothing to write: file exists (%v)", err)
	}
}

func TestFitHelp(t *testing.T) {
	stdout, _, code := runCLI("fit", "--help")
	for _, want := range []string{"scaleplan fit [command options] LOG...", "Examples:", "--group-by NAMES", "--out FILE", "--format FORMAT", "--gradient-size SIZE"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, stdout)
		}
	}
	if code != exitOK {
		t.Errorf("exit code %d", code)
	}
}

// Workers that exchanged nothing (validate --engine's calibration) get a
// transport column and a row of their own.
func TestFitIndependentColumn(t *testing.T) {
	stdout, stderr, code := runCLI("fit", "--format", "csv", "../../fit/testdata/bench_independent.jsonl")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(stdout, "\n")
	if !strings.HasPrefix(lines[0], "model,device,devices,precision,transport,points,") ||
		!strings.HasPrefix(lines[1], "mlp,localhost,2,fp32,,6,") || !strings.HasPrefix(lines[2], "mlp,localhost,2,fp32,none,6,") {
		t.Errorf("no transport column or rows:\n%s", stdout)
	}
}

// Points whose step time does not grow with the batch do not bound v0:
// the table says so rather than printing the value the least squares
// drifted to, and the calibration file records it.
func TestFitUnboundedV0(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cal.yaml")
	stdout, stderr, code := runCLI("fit", "--out", out, "../../fit/testdata/flat.csv")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "unbounded  >= ") || !strings.Contains(stdout, "v0 unbounded: the step time does not grow with the batch beyond its scatter") {
		t.Errorf("no unbounded v0 in the table:\n%s", stdout)
	}
	cal, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cal), "v0_unbounded: true") || !strings.Contains(string(cal), "v0_lower: ") || strings.Contains(string(cal), "v0_interval") {
		t.Errorf("calibration file:\n%s", cal)
	}
}

// TestParseTarget: --target is a fraction, or a percentage above 1.
func TestParseTarget(t *testing.T) {
	for in, want := range map[string]float64{"": 0, "0.759": 0.759, "75.9": 0.759, "75.9%": 0.759, "1": 1, "100": 1, " 0.5 ": 0.5} {
		if got, err := parseTarget("fit", in); err != nil || math.Abs(got-want) > 1e-12 {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "-1", "101", "x", "NaN", "Inf"} {
		if _, err := parseTarget("fit", in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

// TestPerfectScalingSteps: runs that all scale perfectly (120, 60 and 30
// steps at batch 4, 8 and 16: 480 samples each) fit S_min below one step;
// the table says so, with the product S·B = 480, rather than print a
// fraction of a step and a noise scale of 10¹⁶.
func TestPerfectScalingSteps(t *testing.T) {
	stdout, stderr, code := runCLI("fit", "--target", "60", "../../fit/testdata/torchvision_resnet18_cpu.txt")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"< 1", "> 480", "steps × batch = 480 samples to the target", "batches larger than 16"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in:\n%s", want, stdout)
		}
	}
}

// Steps that grow with the batch cannot be S(B) = S_min (1 + B_noise/B)
// with B_noise >= 0: the fit holds B_noise at 0 and the note says what
// that means, as the throughput table says so of t.
func TestFitStepsHeldAtZero(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rising.csv")
	if err := os.WriteFile(path, []byte("global_batch,steps_to_target\n64,1000\n128,2000\n256,4000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI("fit", path)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if want := "B_noise < 0 at the optimum, held at 0: the steps do not fall as the batch grows"; !strings.Contains(stdout, want) {
		t.Errorf("no %q in:\n%s", want, stdout)
	}
}
