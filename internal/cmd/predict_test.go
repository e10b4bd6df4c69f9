package cmd

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestPlanCalibrationFlag: plan --calibration says which of a system's
// precisions compute by the measured law, and searches only those.
func TestPlanCalibrationFlag(t *testing.T) {
	stdout, stderr, code := runCLI("plan", "--recipe", "mlperf-v0.7-resnet50", "--systems", "dgx-a100", "--max-devices", "8",
		"--calibration", "testdata/calib-a100-resnet50.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "compute on dgx-a100 (a100-sxm4-80gb): fp16: calibrated, v0 = 2180 samples/s on 1 device, t = 0 s (testdata/calib-a100-resnet50.yaml (DeepLearningExamples RN50v1.5 README, DGX A100, AMP, batch 256, 1 GPU)); bf16, tf32, fp32: not searched"
	if !strings.Contains(stdout, want) {
		t.Errorf("no %q in:\n%s", want, stdout)
	}
	if strings.Contains(stdout, "roofline:") {
		t.Errorf("the roofline explained where no system uses it:\n%s", stdout)
	}
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.Fields(line); len(f) > 3 && f[0] == "dgx-a100" && f[3] != "fp16" {
			t.Errorf("searched at %s: %s", f[3], line)
		}
	}
}

// TestPredictCalibrationFlag: predict --calibration computes a scenario
// by the file's law and the notes name the file. One A100 at v0 and t = 0
// takes 408/v0 s for its per-device batch of 408: 2,180 samples/s in the
// published figure's file; 2,500 in one as a PyTorch log gives it, the
// device under CUDA's name and the precision amp-fp16, which applies to
// the scenario's fp16 (and not to fp32: plan says no entry applies).
func TestPredictCalibrationFlag(t *testing.T) {
	for _, tc := range []struct {
		file string
		v0   float64
		note string
	}{
		{"testdata/calib-a100-resnet50.yaml", 2180, "compute: calibrated, v0 = 2180 samples/s on 1 device(s), t = 0 s (testdata/calib-a100-resnet50.yaml (DeepLearningExamples"},
		{"testdata/calib-a100-torch.yaml", 2500, "compute: calibrated, v0 = 2500 samples/s on 1 device(s), t = 0 s (testdata/calib-a100-torch.yaml (torch.jsonl))"},
	} {
		stdout, stderr, code := runCLI("predict", "--calibration", tc.file, "dgx-a100-resnet50-mlperf-v0.7")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.file, code, stderr)
		}
		for _, want := range []string{tc.note, fmt.Sprintf(" %.2f ", 408/tc.v0*1000)} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%s: no %q in:\n%s", tc.file, want, stdout)
			}
		}
	}
	_, stderr, code := runCLI("plan", "--recipe", "mlperf-v0.7-resnet50", "--systems", "dgx-a100", "--max-devices", "8", "--precisions", "fp32",
		"--calibration", "testdata/calib-a100-torch.yaml")
	if code != exitRuntime || !strings.Contains(stderr, "no throughput entry applies") {
		t.Errorf("plan at fp32: exit %d, stderr %q", code, stderr)
	}
}

// TestSimulateCalibrationFlag: simulate --calibration computes the
// scenario's step by the file's law, as predict does.
func TestSimulateCalibrationFlag(t *testing.T) {
	stdout, stderr, code := runCLI("simulate", "--devices", "1", "--calibration", "testdata/calib-a100-resnet50.yaml", "dgx-a100-resnet50-mlperf-v0.7")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if want := fmt.Sprintf(" %.2f ", 408.0/2180*1000); !strings.Contains(stdout, want) {
		t.Errorf("no compute of %q ms in:\n%s", want, stdout)
	}
}

// TestPlanningGolden pins the output of predict, plan and validate, two
// invocations each, against testdata/*.golden (-update rewrites them).
// None depends on this machine: the localhost system is not used.
func TestPlanningGolden(t *testing.T) {
	for _, c := range []struct {
		golden string
		args   []string
		code   int
	}{
		{"predict-default.golden", []string{"predict"}, exitOK},
		{"predict-dgx-a100-md.golden", []string{"predict", "--format", "md", "--devices", "8,16,32", "--batch", "104", "dgx-a100-resnet50-mlperf-v0.7"}, exitOK},
		{"plan-resnet50.golden", []string{"plan", "--model", "resnet50", "--recipe", "mlperf-v0.7-resnet50", "--deadline", "2h", "--systems", "dgx-a100,dgx-h100,zinrai-200h,tsubame3", "--max-devices", "1024"}, exitOK},
		{"plan-tsubame3-json.golden", []string{"plan", "--recipe", "tsubame3-resnet50", "--systems", "tsubame3", "--max-devices", "64", "--budget", "200 device-hours", "--storage", "staged,shared-db", "--stages", "1", "--format", "json"}, exitOK},
		{"validate-builtin.golden", []string{"validate"}, exitOK},
		{"validate-cases-csv.golden", []string{"validate", "--cases", "testdata/validate/cases.yaml", "--format", "csv", "--max-error", "5"}, exitRuntime},
	} {
		out, stderr, code := runCLI(c.args...)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d: %s", strings.Join(c.args, " "), code, c.code, stderr)
			continue
		}
		checkGolden(t, c.golden, out)
	}
}

// TestPlanningJSON checks that the JSON output of each command parses and
// holds its tables.
func TestPlanningJSON(t *testing.T) {
	for _, c := range []struct {
		args []string
		keys []string
	}{
		{[]string{"predict", "--format", "json", "--devices", "1,4", "tsubame3-resnet50-caffe2-staged"}, []string{"tsubame3_resnet50_caffe2_staged", "notes", "answer"}},
		{[]string{"predict", "--format", "json", "--devices", "4,32"}, []string{"a_default", "b_staged", "c_staged_verbs", "side_by_side", "notes", "answer"}},
		{[]string{"plan", "--format", "json", "--recipe", "mlperf-v0.7-resnet50", "--systems", "dgx1", "--max-devices", "16"}, []string{"summary", "pareto", "candidates", "infeasible"}},
		{[]string{"validate", "--format", "json"}, []string{"cases", "summary"}},
	} {
		out, stderr, code := runCLI(c.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		var doc map[string][]map[string]any
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%v: %v\n%s", c.args, err, out)
		}
		for _, k := range c.keys {
			if len(doc[k]) == 0 {
				t.Errorf("%v: no rows under %q", c.args, k)
			}
		}
	}
	// Numbers are JSON numbers, text stays text.
	out, _, _ := runCLI("predict", "--format", "json", "--devices", "1,4", "tsubame3-resnet50-caffe2-staged")
	var doc map[string][]map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	row := doc["tsubame3_resnet50_caffe2_staged"][1]
	if d, ok := row["devices"].(float64); !ok || d != 4 {
		t.Errorf("devices %#v, want the number 4", row["devices"])
	}
	// step_s is in seconds: the text table's step (ms) over 1000.
	text, _, _ := runCLI("predict", "--devices", "1,4", "tsubame3-resnet50-caffe2-staged")
	m := regexp.MustCompile(`(?m)^4 +1 +\d+ +\d+ +\d+ +([0-9.]+) `).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no row of 4 devices in\n%s", text)
	}
	ms, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := row["step_s"].(float64); !ok || math.Abs(s*1000-ms) > 1e-9 {
		t.Errorf("step_s %#v, want the text table's %s ms in seconds", row["step_s"], m[1])
	}
	if _, ok := row["risk"].(string); !ok {
		t.Errorf("risk %#v, want text", row["risk"])
	}
}

// TestPlanningErrors checks exit codes and messages of bad invocations.
func TestPlanningErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"predict", "a", "b"}, exitUsage, "predict takes at most one SCENARIO or STUDY"},
		{[]string{"predict", "--format", "xml"}, exitUsage, `unknown format "xml"`},
		{[]string{"predict", "--devices", "4,x"}, exitUsage, "predict: --devices \"4,x\": want positive integers"},
		{[]string{"predict", "--steps", "1"}, exitUsage, "--steps 1: want 2 to"},
		{[]string{"predict", "tsubame3-resnet50-caffe2-verb"}, exitRuntime, `unknown scenario "tsubame3-resnet50-caffe2-verb"; did you mean`},
		{[]string{"predict", "--devices", "4096", "tsubame3-resnet50-caffe2-verbs"}, exitRuntime, "--devices (sweep.devices[0]): 4096 devices need 1024 nodes of 4"},
		// Flags may follow the scenario, as they may simulate's.
		{[]string{"predict", "tsubame3-resnet50-caffe2-verbs", "--devices", "4,4096"}, exitRuntime, "--devices (sweep.devices[1]): 4096 devices need 1024 nodes of 4"},
		{[]string{"predict", "tsubame3-resnet50-caffe2-verbs", "--batch", "0"}, exitUsage, "predict: --batch \"0\": want positive integers"},
		{[]string{"predict", "tsubame3-resnet50-caffe2-verbs", "--bogus"}, exitUsage, "predict: unknown flag --bogus\nrun 'scaleplan predict --help' for its flags"},
		{[]string{"report", "--devices", "8000", "tsubame3-resnet50-caffe2-verbs", "-o", "none/r.html"}, exitRuntime, "--devices (sweep.devices[0]): 8000 devices need 2000 nodes"},
		{[]string{"plot", "scaling", "--devices", "8000", "tsubame3-resnet50-caffe2-verbs", "-o", "none"}, exitRuntime, "--devices (sweep.devices[0]): 8000 devices need 2000 nodes"},
		{[]string{"plan"}, exitUsage, "plan: --recipe is required"},
		{[]string{"plan", "--recipe", "mlperf-v0.7-resnet50", "extra"}, exitUsage, "plan takes no argument"},
		{[]string{"plan", "--recipe", "mlperf-v0.7-resnet50", "--deadline", "2"}, exitUsage, `--deadline "2": want a positive duration`},
		{[]string{"plan", "--recipe", "mlperf-v0.7-resnet50", "--budget", "5 euros"}, exitUsage, `unknown unit "euros"`},
		{[]string{"plan", "--recipe", "mlperf-v0.7-resnet50", "--allreduce", "rign"}, exitUsage, `did you mean "ring"`},
		{[]string{"plan", "--recipe", "mlperf-v0.7-resnet50", "--inter-node", "double-tre"}, exitUsage, `did you mean "double-tree"`},
		{[]string{"plan", "--recipe", "mlperf-v0.7-resnet50", "--storage", "nfs"}, exitUsage, `unknown storage "nfs"`},
		{[]string{"plan", "--recipe", "mlperf-v0.7-resnet50", "--batch", "0"}, exitUsage, "want positive integers"},
		{[]string{"plan", "--recipe", "mlperf-v0.7-resnet50", "--max-devices", "0"}, exitUsage, "--max-devices 0"},
		{[]string{"plan", "--recipe", "mlperf-v0.7-resnet50", "--examples", "-1"}, exitUsage, "plan: --examples -1: want 0 or more"},
		// An empty list or value is a mistake (a script's empty variable), not
		// the default, in every command and subcommand and of the global flags.
		{[]string{"plan", "--recipe", "mlperf-v0.7-resnet50", "--systems", ""}, exitUsage, "scaleplan: plan: --systems is empty: give it a value, or leave it out for its default"},
		{[]string{"--profiles", "", "predict"}, exitUsage, "scaleplan: predict: --profiles is empty"},
		{[]string{"fit", "--out", "", "testdata/fit/bench_resnet50.jsonl"}, exitUsage, "scaleplan: fit: --out is empty"},
		{[]string{"bench", "train", "--model", " "}, exitUsage, "scaleplan: bench train: --model is empty"},
		{[]string{"report", "tsubame3-resnet50-caffe2-verbs", "-o", ""}, exitUsage, "scaleplan: report: --out is empty"},
		// A log or scenario given twice would count twice, or draw two lines
		// that cannot be told apart; a scenario given as a log is pointed to
		// the kinds that draw scenarios.
		{[]string{"fit", "testdata/fit/bench_resnet50.jsonl", "./testdata/fit/bench_resnet50.jsonl"}, exitUsage,
			"scaleplan: ./testdata/fit/bench_resnet50.jsonl is given twice (also as testdata/fit/bench_resnet50.jsonl): its records would count twice"},
		{[]string{"plot", "scaling", "tsubame3-resnet50-caffe2-verbs", "tsubame3-resnet50-caffe2-verbs", "-o", "none"}, exitUsage,
			`scaleplan: plot scaling: tsubame3-resnet50-caffe2-verbs and tsubame3-resnet50-caffe2-verbs are both scenario "tsubame3-resnet50-caffe2-verbs"`},
		{[]string{"fit", "--target", "75.9", "testdata/fit/bench_resnet50.jsonl"}, exitUsage,
			"scaleplan: fit: --target applies to runs whose logs evaluate without naming a target (torchvision's train.py, the Hugging Face Trainer's eval_accuracy, Lightning's val_acc); none of these logs has one"},
		{[]string{"plot", "steps", "--target", "0.759", "testdata/fit/bench_resnet50.jsonl", "-o", "none"}, exitUsage, "scaleplan: plot steps: --target applies to runs"},
		{[]string{"plot", "throughput", "tsubame3-resnet50-caffe2-verbs", "-o", "none"}, exitRuntime,
			"(tsubame3-resnet50-caffe2-verbs is a shipped scenario; logs are read here: `scaleplan plot scaling|efficiency|breakdown|timeline` draws scenarios)"},
		{[]string{"plan", "--recipe", "mlperf-v0.7-resnet50", "--allreduce", ","}, exitUsage, "plan: --allreduce is empty"},
		{[]string{"plan", "--recipe", "mlperf-v0.7-resnet50", "--transports", " "}, exitUsage, "plan: --transports is empty"},
		{[]string{"plan", "--recipe", "mlperf-v0.7-resnet50", "--model", "gnmt"}, exitRuntime, `scaleplan: plan: model "gnmt": recipe "mlperf-v0.7-resnet50" trains "resnet50"`},
		// Unknown names are named as the request gave them, not as a line of
		// the scenario a system's search is built on.
		{[]string{"plan", "--recipe", "mlperf-v0.7-resnet5"}, exitRuntime, `scaleplan: plan: unknown recipe "mlperf-v0.7-resnet5"; did you mean "mlperf-v0.7-resnet50"`},
		{[]string{"plan", "--recipe", "mlperf-v0.7-resnet50", "--systems", "dgx-a100,dgx"}, exitRuntime, `scaleplan: plan: unknown system "dgx"; did you mean "dgx1"`},
		{[]string{"plan", "--recipe", "mlperf-v0.7-resnet50", "--model", "resnet"}, exitRuntime, `scaleplan: plan: unknown model "resnet"; did you mean "resnet50"`},
		{[]string{"plan", "--recipe", "mlperf-v0.7-resnet50", "--calibration", "testdata/none.yaml"}, exitRuntime, "scaleplan: plan: calibration: open testdata/none.yaml"},
		{[]string{"plan", "--recipe", "mlperf-v0.7-resnet50", "--systems", "dgx-h100", "--calibration", "testdata/calib-a100-resnet50.yaml"}, exitRuntime,
			"scaleplan: plan: calibration testdata/calib-a100-resnet50.yaml: no throughput entry applies to a candidate system (the plan needs model resnet50 on one of: h100-sxm5-80gb fp16, "},
		{[]string{"predict", "--calibration", "testdata/calib-a100-resnet50.yaml"}, exitRuntime,
			"scaleplan: predict: calibration testdata/calib-a100-resnet50.yaml: no throughput, comm, fabric or operators entry applies to any of the 3 scenarios (they need resnet50 on p100-sxm2 at fp32 on system tsubame3; the file has: resnet50 on 1 a100-sxm4-80gb, fp16)"},
		{[]string{"simulate", "--calibration", "testdata/calib-a100-resnet50.yaml", "tsubame3-resnet50-caffe2-verbs"}, exitRuntime,
			"scaleplan: simulate: calibration testdata/calib-a100-resnet50.yaml: no throughput, comm, fabric or operators entry applies to the scenario (it needs resnet50 on p100-sxm2 at fp32 on system tsubame3; the file has: "},
		{[]string{"report", "--calibration", "testdata/none.yaml", "tsubame3-resnet50-caffe2-verbs"}, exitRuntime, "scaleplan: report: calibration: open testdata/none.yaml"},
		{[]string{"predict", "--calibration", "testdata/none.yaml"}, exitRuntime, "scaleplan: predict: calibration: open testdata/none.yaml"},
		{[]string{"validate", "x"}, exitUsage, "validate takes no argument"},
		{[]string{"validate", "--max-error", "-1"}, exitUsage, "--max-error -1"},
		{[]string{"validate", "--cases", "testdata/validate/none.yaml"}, exitRuntime, "none.yaml"},
		{[]string{"validate", "--max-error", "5"}, exitRuntime, "% exceeds --max-error 5%"},
		{[]string{"validate", "--cases", "testdata/validate/cases.yaml", "--max-error", "5"}, exitRuntime, "validate: mean absolute error 6.7% exceeds --max-error 5%; 1 of 1 bounds do not hold"},
	} {
		_, stderr, code := runCLI(c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, stderr, c.code, c.msg)
		}
	}
	if _, stderr, code := runCLI("validate", "--max-error", "15"); code != 0 {
		t.Errorf("validate --max-error 15: exit %d: %s", code, stderr)
	}
}

// TestPredictNothingRuns: when no configuration of a scenario can run,
// predict still prints the table with each one's reason, and exits 1.
func TestPredictNothingRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "oom.yaml")
	src := "name: oom\nsystem: dgx-a100\nrecipe: mlperf-v0.7-resnet50\nsweep: {devices: [8, 16], batch: [100000]}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI("predict", path)
	if code != exitRuntime || !strings.Contains(stderr, "predict: no configuration could be simulated") ||
		strings.Count(stdout, "error: out of memory (largest batch that fits: ") != 2 {
		t.Errorf("exit %d, want %d with both rows out of memory\nstdout:\n%s\nstderr: %s", code, exitRuntime, stdout, stderr)
	}
}

// BenchmarkPredictDefault times `scaleplan predict` with no argument, as
// the command runs it: the built-in study simulated and printed.
func BenchmarkPredictDefault(b *testing.B) {
	for range b.N {
		if _, stderr, code := runCLI("predict"); code != 0 {
			b.Fatal(stderr)
		}
	}
}

// TestValidateCarryError: a case calibrated by a case of another compute
// kind is reported as failed with both kinds, and --max-error fails on it.
func TestValidateCarryError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cases.yaml")
	src := `cases:
  - {name: a, scenario: tsubame3-resnet50-caffe2-verbs, set: {gpus: 1}, metric: samples_per_second, published: 190, source: x, calibrates: true, fits: [v0]}
  - {name: b, scenario: dgx1-resnet50-mlperf-v0.7, metric: epoch_time, published: 100 s, source: x, calibrated_by: [a]}
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := runCLI("validate", "--cases", path)
	if code != exitOK || !strings.Contains(out, `the calibration of case "a" (resnet50 in caffe2 at fp32`) || !strings.Contains(out, "failed: 1 case could not be predicted") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	if _, stderr, code := runCLI("validate", "--cases", path, "--max-error", "50"); code != exitRuntime {
		t.Errorf("--max-error 50: exit %d: %s", code, stderr)
	}
}

// TestPublishedCalibrationFlag: --calibration published computes by the
// published figures built in: the DGX H100's law from its MLPerf v3.0
// epochs on one node and on eight, v0 = 7,510.4 samples/s a GPU and
// t = 3.575 ms, takes 400/v0 + t of compute for its batch of 400 per GPU,
// in predict and in plan.
func TestPublishedCalibrationFlag(t *testing.T) {
	stdout, stderr, code := runCLI("predict", "--calibration", "published", "--devices", "8", "dgx-h100-resnet50-mlperf-v3.0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"compute: calibrated, v0 = 7510 samples/s on 1 device(s), t = 3.575 ms (published (validate case mlperf-v3.0-dgx-h100-resnet50-epoch with mlperf-v3.0-dgx-h100-n8-resnet50-epoch:",
		fmt.Sprintf(" %.2f ", (400/7510.4+0.003575)*1000),
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("predict: no %q in:\n%s", want, stdout)
		}
	}
	stdout, stderr, code = runCLI("plan", "--recipe", "mlperf-v0.7-resnet50", "--systems", "dgx-h100,tsubame3", "--max-devices", "8", "--calibration", "published")
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, stderr)
	}
	checkContains(t, "plan", stdout,
		"compute on dgx-h100 (h100-sxm5-80gb): fp16: calibrated, v0 = 7510 samples/s on 1 device, t = 3.575 ms (published (validate case mlperf-v3.0-dgx-h100-resnet50-epoch",
		"compute on tsubame3 (p100-sxm2): fp16, fp32: operator model of the device's datasheet")
	// The published figures are of NVIDIA GPUs: for the IPU's scenario
	// none applies, and it computes by its roofline, as the same scenario
	// without --calibration does, saying so in its title and note.
	stdout, stderr, code = runCLI("predict", "--calibration", "published", "ipu-pod16-efficientnet-b4")
	plain, _, _ := runCLI("predict", "ipu-pod16-efficientnet-b4")
	if code != 0 || stdout != plain {
		t.Errorf("IPU: exit %d, %s\n%s\nwant, as without --calibration:\n%s", code, stderr, stdout, plain)
	}
	checkContains(t, "IPU", stdout, "fp16, torus-2d over gcl, storage local; compute by roofline\n", "compute: roofline of gc200 at fp16\n")
	// A file the user wrote that applies to nothing is refused, in predict
	// and in plan.
	_, stderr, code = runCLI("predict", "--calibration", "testdata/calib-a100-resnet50.yaml", "ipu-pod16-efficientnet-b4")
	if code != exitRuntime || !strings.Contains(stderr, "calibration testdata/calib-a100-resnet50.yaml: no throughput, comm, fabric or operators entry applies") {
		t.Errorf("IPU with an A100 file: exit %d, %s", code, stderr)
	}
	stdout, stderr, code = runCLI("plan", "--recipe", "mlperf-v0.7-resnet50", "--systems", "tsubame3", "--max-devices", "8", "--calibration", "published")
	if code != 0 {
		t.Fatalf("plan on tsubame3 alone: exit %d: %s", code, stderr)
	}
	checkContains(t, "plan on tsubame3 alone", stdout, "compute on tsubame3 (p100-sxm2): fp16, fp32: operator model of the device's datasheet")
}

// A plan of a recipe with no known batch limit says so beside each
// candidate that meets the deadline and budget, and in the recommendation:
// meeting them says nothing of reaching the accuracy at that batch.
func TestPlanLimitUnknown(t *testing.T) {
	stdout, stderr, code := runCLI("plan", "--recipe", "engine-mlp", "--systems", "dgx1", "--devices", "8", "--batch", "64",
		"--accumulation", "1", "--stages", "1", "--precisions", "fp32")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"  meets (batch limit unknown)  ",
		"global batch 512: the recipe gives no largest batch known to reach its target",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in:\n%s", want, stdout)
		}
	}
}

// TestPlanStepsToTargetFlag: plan --steps-to-target counts the steps by
// the shipped MLPerf epochs law (docs/mlperf-epochs.md) and gives the
// recommendation's spread of runs from the law's intervals.
func TestPlanStepsToTargetFlag(t *testing.T) {
	stdout, stderr, code := runCLI("plan", "--recipe", "mlperf-v0.7-resnet50", "--systems", "dgx-a100", "--devices", "8", "--batch", "208",
		"--accumulation", "1", "--stages", "1", "--precisions", "fp16", "--steps-to-target", "../../scenarios/calibrations/mlperf-epochs.yaml")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkContains(t, "plan --steps-to-target", stdout,
		"(fitted steps-to-target curve S(B) = 1033.96 · (1 + 41257.4/B)",
		"; spread of runs, the steps law's intervals: ")
}

// editedScenario writes the shipped scenario name with its first old
// replaced by new to a temporary file, and returns the file's path.
func editedScenario(t *testing.T, name, old, new string) string {
	t.Helper()
	data, err := os.ReadFile("../../scenarios/shipped/" + name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), old, new, 1)
	if edited == string(data) {
		t.Fatalf("scenario %s has no %q", name, old)
	}
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExchangeNote: predict says when the exchange at its largest size is
// latency-bound (predict.CheckExchange): the DGX H100 scenario with a flat
// ring over 64 nodes, and not the shipped one, whose NCCL exchange at 8
// nodes hides behind its step.
func TestExchangeNote(t *testing.T) {
	path := editedScenario(t, "dgx-h100-resnet50-mlperf-v3.0", "\n  allreduce: nccl\n", "\n  allreduce: ring\n")
	stdout, stderr, code := runCLI("predict", "--devices", "8,512", "--batch", "40", path)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkContains(t, "ring", stdout, "exchange: latency-bound at 512 devices: ring all-reduces a 25 MiB bucket in 7.292 ms, 98% of it the latency its steps cost (one byte takes 7.154 ms); of the simulator's all-reduces, halving-doubling takes it in 329.2 us")
	stdout, _, _ = runCLI("predict", "--devices", "8,64", "dgx-h100-resnet50-mlperf-v3.0")
	if strings.Contains(stdout, "exchange:") {
		t.Errorf("shipped scenario at 64 GPUs: an exchange note:\n%s", stdout)
	}
}

// TestPredictStepsToTargetFlag: predict --steps-to-target counts each
// size's steps by the shipped MLPerf epochs law (docs/mlperf-epochs.md),
// S(B) = S_min·(1 + B_noise/B) at the global batch, and gives each size's
// spread of runs from the law's intervals; a missing file is refused by
// name.
func TestPredictStepsToTargetFlag(t *testing.T) {
	stdout, stderr, code := runCLI("predict", "--devices", "8,64", "--format", "json", "--steps-to-target", "../../scenarios/calibrations/mlperf-epochs.yaml", "dgx-a100-resnet50-mlperf-v2.0")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out map[string][]map[string]any
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("%v:\n%s", err, stdout)
	}
	const sMin, bNoise = 1033.96, 41257.4 // the law the plan test reads from the same file
	n := 0
	for _, r := range out["dgx_a100_resnet50_mlperf_v2_0"] {
		steps, ok1 := r["steps"].(float64)
		b, ok2 := r["global_batch"].(float64)
		if !ok1 || !ok2 {
			continue
		}
		n++
		if want := sMin * (1 + bNoise/b); math.Abs(steps-want) > 0.001*want+1 {
			t.Errorf("global batch %v: %v steps, want S(B) = %.0f", b, steps, want)
		}
	}
	if n != 2 {
		t.Errorf("%d rows with steps, want 2:\n%s", n, stdout)
	}
	text, stderr, code := runCLI("predict", "--devices", "8,64", "--steps-to-target", "../../scenarios/calibrations/mlperf-epochs.yaml", "dgx-a100-resnet50-mlperf-v2.0")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkContains(t, "predict --steps-to-target", text, "spread of runs, the steps law's intervals: 8 devices ", "; 64 devices ")
	if _, stderr, code := runCLI("predict", "--steps-to-target", "testdata/none.yaml", "dgx-a100-resnet50-mlperf-v2.0"); code == exitOK || !strings.Contains(stderr, "none.yaml") {
		t.Errorf("missing file: exit %d, stderr %q", code, stderr)
	}
}

// TestPredictDocDefaultStudy checks what docs/predict.md ("The default
// study") quotes of `predict` with no argument: its answer's four lines
// and the side-by-side table, line for line, and the exposed all-reduce
// of (b) and (c) from 16 GPUs, read from their tables.
func TestPredictDocDefaultStudy(t *testing.T) {
	stdout, stderr, code := runCLI("predict")
	if code != exitOK {
		t.Fatalf("predict: exit %d: %s", code, stderr)
	}
	doc, err := os.ReadFile("../../docs/predict.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(doc)
	lines := strings.Split(stdout, "\n")
	table, comm := false, map[string][2]float64{}
	study := ""
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "devices  global batch"):
			table = true
		case table && strings.TrimSpace(l) == "":
			table = false
		case strings.HasPrefix(l, "(b) staged (") || strings.HasPrefix(l, "(c) staged + verbs ("):
			study = l[:3]
		case strings.HasPrefix(l, "steps to target"):
			study = ""
		}
		if table || strings.HasPrefix(l, "fastest") || strings.HasPrefix(l, "best efficiency") || strings.HasPrefix(l, "at risk beyond") {
			if !strings.Contains(page, l+"\n") {
				t.Errorf("docs/predict.md lacks the line %q", l)
			}
		}
		// The exposed all-reduce (the 8th column) of the rows of 16 GPUs and more.
		if f := strings.Fields(l); study != "" && len(f) > 8 {
			n, err1 := strconv.Atoi(f[0])
			c, err2 := strconv.ParseFloat(f[7], 64)
			if err1 == nil && err2 == nil && n >= 16 {
				r, ok := comm[study]
				if !ok {
					r = [2]float64{c, c}
				}
				comm[study] = [2]float64{math.Min(r[0], c), math.Max(r[1], c)}
			}
		}
	}
	b, c := comm["(b)"], comm["(c)"]
	want := fmt.Sprintf("exposed all-reduce at %.1f to %.1f ms a step from 16 GPUs where IPoIB leaves %.1f to %.1f", c[0], c[1], b[0], b[1])
	if !strings.Contains(strings.Join(strings.Fields(page), " "), want) {
		t.Errorf("docs/predict.md lacks %q", want)
	}
}
