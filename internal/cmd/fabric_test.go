package cmd

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scaleplan/internal/calib"
)

// synthetic is nccl-tests output simulated on dgx-h100 at known links
// (validate/fabric_test.go writes it).
const synthetic = "../../validate/testdata/nccl_synthetic_dgx_h100.txt"

// collectiveMAE runs validate --measured synthetic on dgx-h100 with args
// and returns each test's mean absolute error.
func collectiveMAE(t *testing.T, args ...string) []float64 {
	t.Helper()
	stdout, stderr, code := runCLI(append([]string{"validate", "--format", "json", "--measured", synthetic, "--system", "dgx-h100"}, args...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out struct {
		Collectives []struct {
			Source string  `json:"source"`
			Error  float64 `json:"error_percent"`
		} `json:"collectives"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	var mae []float64
	var n []int
	index := map[string]int{}
	for _, row := range out.Collectives {
		i, ok := index[row.Source]
		if !ok {
			i = len(mae)
			index[row.Source] = i
			mae, n = append(mae, 0), append(n, 0)
		}
		mae[i] += math.Abs(row.Error)
		n[i]++
	}
	for i := range mae {
		mae[i] /= float64(n[i])
	}
	if len(mae) != 2 {
		t.Fatalf("%d tests in the summary, want 2:\n%s", len(mae), stdout)
	}
	return mae
}

// TestFabricCalibration fits the synthetic tables' links with fit
// --system --out, and checks that validate --measured --calibration then
// predicts every size of both tests within 1 % where the catalogue's links
// alone miss by more, that the calibration names the links it set, and
// that predict --calibration says it took them.
func TestFabricCalibration(t *testing.T) {
	out := filepath.Join(t.TempDir(), "fabric.yaml")
	if _, stderr, code := runCLI("fit", "--system", "dgx-h100", "--out", out, synthetic); code != exitOK {
		t.Fatalf("fit: exit %d: %s", code, stderr)
	}
	cal, err := calib.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.Fabric) != 2 || cal.Fabric[0].Level != calib.Intra || cal.Fabric[1].Level != calib.Inter {
		t.Fatalf("fabric entries %+v, want intra and inter", cal.Fabric)
	}
	for i, mae := range collectiveMAE(t, "--calibration", out) {
		if mae > 1 {
			t.Errorf("calibrated: test %d mean error %.2f%%, want at most 1%%", i, mae)
		}
	}
	for i, mae := range collectiveMAE(t) {
		if mae <= 1 {
			t.Errorf("catalogue: test %d mean error %.2f%%: the calibration is not needed, and the test cannot tell", i, mae)
		}
	}
	stdout, stderr, code := runCLI("predict", "--calibration", out, "--devices", "16", "dgx-h100-resnet50-mlperf-v3.0")
	if code != exitOK {
		t.Fatalf("predict: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"network: calibrated: intra link 200 GB/s, 3 us a message from " + out, "inter link 12 GB/s, 7 us a message from " + out} {
		if !strings.Contains(stdout, want) {
			t.Errorf("predict does not say %q:\n%s", want, stdout)
		}
	}
}

// TestPredictCommEntry checks that predict --calibration uses a comm
// entry: ResNet-50 on one DGX H100 node with synthetic input, compute
// from a throughput law of one device, so that two device counts differ
// by the exchange alone, one ring all-reduce after the backward pass:
//
//	step(8) − step(2) = (r(8) − r(2))·t_comm + 2·(8 − 2)·L,
//
// r(p) = 2(p−1)/p, t_comm = 6 ms, L = 7 us a hop (the catalogue's NVLink
// latency of dgx-h100, 2 us, and the nccl transport's overhead, 5 us):
// 4.584 ms. The steps print to four significant digits, so within 0.5 %.
// Without the comm entry the exchange overlaps the backward pass and the
// difference is another.
func TestPredictCommEntry(t *testing.T) {
	dir := t.TempDir()
	scenario := filepath.Join(dir, "comm.yaml")
	thr := "throughput:\n  - {model: resnet50, device: h100-sxm5-80gb, devices: 1, precision: fp16, v0: 3000, t: 5 ms, r2: 0.99, points: 3}\n"
	comm := "comm:\n  - {model: resnet50, device: h100-sxm5-80gb, precision: fp16, counts: [1, 2, 4, 8], t_fixed: 5 ms, t_comm: 6 ms}\n"
	files := map[string]string{
		scenario: "name: comm\nsystem: dgx-h100\nrecipe: mlperf-v0.7-resnet50\nprecision: fp16\nbatch_per_device: 64\n" +
			"parallelism: {allreduce: ring}\ninput: {storage: synthetic}\nsweep: {devices: [2, 8]}\n",
		filepath.Join(dir, "with.yaml"):    thr + comm,
		filepath.Join(dir, "without.yaml"): thr,
	}
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	diff := func(cal string) float64 {
		stdout, stderr, code := runCLI("predict", "--format", "json", "--calibration", filepath.Join(dir, cal), scenario)
		if code != exitOK {
			t.Fatalf("predict: exit %d: %s", code, stderr)
		}
		var out map[string]json.RawMessage
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatalf("%v\n%s", err, stdout)
		}
		var rows []struct {
			Devices int     `json:"devices"`
			Step    float64 `json:"step_s"`
		}
		if err := json.Unmarshal(out["comm"], &rows); err != nil || len(rows) != 2 || rows[0].Devices != 2 || rows[1].Devices != 8 {
			t.Fatalf("rows %+v (%v):\n%s", rows, err, stdout)
		}
		return rows[1].Step - rows[0].Step
	}
	ring := func(p float64) float64 { return 2 * (p - 1) / p }
	want := (ring(8)-ring(2))*6e-3 + 2*(8-2)*7e-6
	if got := diff("with.yaml"); math.Abs(got-want) > 0.005*want {
		t.Errorf("with the comm entry: step(8) − step(2) = %.4g s, want %.4g s within 0.5%%", got, want)
	}
	if got := diff("without.yaml"); math.Abs(got-want) <= 0.05*want {
		t.Errorf("without the comm entry: step(8) − step(2) = %.4g s, also near %.4g s: the test cannot tell", got, want)
	}
}
