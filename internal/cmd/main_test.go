package cmd

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files under testdata/")

// needDeps skips a test that needs a Debian package which is not installed,
// with a one-line reason, or fails it where SCALEPLAN_REQUIRE_DEPS=1 (as
// .ci/run sets it after installing them): there the test must run.
func needDeps(t *testing.T, reason string) {
	t.Helper()
	if os.Getenv("SCALEPLAN_REQUIRE_DEPS") == "1" {
		t.Fatalf("SCALEPLAN_REQUIRE_DEPS=1 but this test cannot run: %s", reason)
	}
	t.Skipf("skipping: needs %s", reason)
}

// firstLine returns s up to its first line break.
func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// runCLI runs the application as the shell would and returns what it wrote
// and its exit code.
func runCLI(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = Main(append([]string{"scaleplan"}, args...), &out, &errb)
	return out.String(), errb.String(), code
}

// checkGolden compares got with testdata/name, or rewrites it with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateGolden {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestExitCodes(t *testing.T) {
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--help"}, 0, ""},
		{[]string{"catalog"}, 0, ""},
		{[]string{"catalog", "show", "tsubame"}, 1, `unknown entry "tsubame"; did you mean "tsubame3"`},
		{[]string{"catalog", "extra"}, 2, "catalog takes no argument"},
		{[]string{"catalog", "show"}, 2, "catalog show takes one NAME"},
		// A flag after the name is a flag, not a second name.
		{[]string{"catalog", "show", "dgx1", "--format", "json"}, 2, "scaleplan: catalog show: unknown flag --format\nrun 'scaleplan catalog show --help' for its flags\n"},
		{[]string{"catalog", "show", "dgx1", "dgx-a100"}, 2, "catalog show takes one NAME, got 2 arguments"},
		{[]string{"catalog", "--format", "xml"}, 2, `unknown format "xml"`},
		{[]string{"catalog", "--bogus"}, 2, "scaleplan: catalog: unknown flag --bogus\nrun 'scaleplan catalog --help' for its flags\n"},
		{[]string{"--catalog", "no-such-file.yaml", "catalog"}, 1, "no-such-file.yaml"},
	}
	for _, c := range cases {
		_, stderr, code := runCLI(c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("scaleplan %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, stderr, c.code, c.msg)
		}
	}
}

func TestCatalogListsEverything(t *testing.T) {
	out, stderr, code := runCLI("catalog")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, name := range []string{
		"zinrai-200e-t4x2", "zinrai-200e-t4x4", "zinrai-200e-v100sx1", "zinrai-200e-v100sx2", "zinrai-200h",
		"tsubame3", "ipu-m2000", "ipu-pod16", "ipu-pod64", "ipu-pod128", "ipu-pod256", "dgx1", "dgx-a100", "dgx-h100", "dgx-h200", "dgx-b200",
		"workstation-rtx6000-ada", "localhost",
		"resnet50", "ssd-resnet34", "maskrcnn-r50-fpn", "transformer-big", "gnmt", "efficientnet-b4", "efficientnet-b4-g16", "mlp", "cnn",
		"mlperf-v0.6-resnet50", "mlperf-v0.7-resnet50", "tsubame3-resnet50", "graphcore-efficientnet-b4",
		"tsubame3-resnet50-caffe2-verbs", "seed003-resnet50-2gpu-nop2p",
		"mlperf-v0.7-transformer-dgx1", "mlperf-v0.7-gnmt-dgx1", "dgx1-transformer-mlperf-v0.7", "dgx1-maskrcnn-mlperf-v0.7",
	} {
		if !strings.Contains(out, "\n"+name+" ") {
			t.Errorf("catalog does not list %s", name)
		}
	}
	// A recipe whose runs stop at the target before its configured length
	// shows both: Transformer's 3 epochs of NVIDIA's runs, 30 at most.
	if !regexp.MustCompile(`\nmlperf-v0\.7-transformer +transformer-big .* 3 epochs \(at most 30 epochs\) +bleu 25\n`).MatchString(out) {
		t.Errorf("catalog's recipe mlperf-v0.7-transformer does not say 3 epochs (at most 30 epochs)")
	}
	for _, f := range []string{"csv", "json", "md"} {
		if _, stderr, code := runCLI("catalog", "--format", f); code != 0 {
			t.Errorf("--format %s: exit %d: %s", f, code, stderr)
		}
	}
}

// TestCatalogShowTSUBAME pins `catalog show tsubame3`, whose figures are
// SEEDS.md's (seed 001): 540 nodes, 4 P100 with NVLink, 2 x 14-core
// 2.4 GHz Xeon E5-2680 v4, 256 GiB, 2 TB NVMe, 4 x 100 Gbit/s Omni-Path,
// 12.15 PFLOP/s fp64 and 47.2 PFLOP/s fp16 peak.
func TestCatalogShowTSUBAME(t *testing.T) {
	out, stderr, code := runCLI("catalog", "show", "tsubame3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"max_nodes: 540", "devices: 4", "device: p100-sxm2", "sockets: 2", "cores_per_socket: 14",
		"clock: 2.4 GHz", "host_memory: 256 GiB", "capacity: 2 TB", "kind: omni-path", "bandwidth: 100 Gbit/s", "count: 4",
		"fp64: 12.15 PFLOP/s", "fp16: 47.2 PFLOP/s", "kind: nvlink"} {
		if !strings.Contains(out, want) {
			t.Errorf("catalog show tsubame3 lacks %q", want)
		}
	}
	checkGolden(t, "catalog-show-tsubame3.golden", out)
}

// A device can be shown by the name CUDA gives it, as nvidia-smi and
// the logs print it, ignoring case: the same entry as by its key.
func TestCatalogShowCUDAName(t *testing.T) {
	byKey, _, _ := runCLI("catalog", "show", "h100-sxm5-80gb")
	out, stderr, code := runCLI("catalog", "show", "nvidia h100 80gb hbm3")
	if code != 0 || !strings.HasPrefix(out, "# device h100-sxm5-80gb\n") || out != byKey {
		t.Errorf("exit %d, stderr %q:\n%s\nwant the entry shown by its key:\n%s", code, stderr, out, byKey)
	}
}

func TestCatalogUserFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "mine.yaml")
	os.WriteFile(f, []byte("systems:\n  mine:\n    node: tsubame3\n    max_nodes: 2\n    fabric: {kind: omni-path, bandwidth: 100 Gbit/s}\n    transports:\n      verbs: {efficiency: 0.9, overhead: 2 us}\n"), 0o644)
	out, stderr, code := runCLI("--catalog", f, "catalog", "show", "mine")
	if code != 0 || !strings.Contains(out, "max_nodes: 2") {
		t.Fatalf("exit %d, stderr %s, out %s", code, stderr, out)
	}
	os.WriteFile(f, []byte("systems:\n  mine:\n    node: tsubame\n"), 0o644)
	_, stderr, code = runCLI("--catalog", f, "catalog")
	if code != 1 || !strings.Contains(stderr, "mine.yaml") || !strings.Contains(stderr, `did you mean "tsubame3"`) {
		t.Errorf("bad user file: exit %d, stderr %s", code, stderr)
	}
}

// TestCatalogShowNotGiven: a figure the catalogue leaves out is shown as
// "not given", never as a bare zero; false and real figures are not marked.
func TestCatalogShowNotGiven(t *testing.T) {
	out, stderr, code := runCLI("catalog", "show", "ipu-pod16")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"power: 0 W # not given", "price_per_device_hour: 0 # not given", "shared_storage: null # not given",
		"storage: [] # not given", "max_nodes: 4\n", "bandwidth: 128 Gbit/s\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("catalog show ipu-pod16 lacks %q", want)
		}
	}
	if out, _, _ := runCLI("catalog", "show", "p100-sxm2"); !strings.Contains(out, "tf32: 0 FLOP/s # unsupported") || !strings.Contains(out, "fp32: 10.6 TFLOP/s\n") {
		t.Errorf("catalog show p100-sxm2: want tf32 marked unsupported, fp32 unmarked:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasSuffix(line, ": false # not given") || strings.Contains(line, ": true #") {
			t.Errorf("boolean marked: %q", line)
		}
	}
}
