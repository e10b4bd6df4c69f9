package cmd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTemp writes data to name in a new temporary directory and returns
// its path.
func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFitNULs: `fit /dev/zero` ends at once with the line and the limit,
// as does a file of NULs.
func TestFitNULs(t *testing.T) {
	nul := writeTemp(t, "nul.csv", make([]byte, 2<<20))
	for _, p := range []string{"/dev/zero", nul} {
		if _, err := os.Stat(p); err != nil {
			t.Logf("%s: %v", p, err)
			continue
		}
		_, stderr, code := runCLI("fit", p)
		if code != exitRuntime || !strings.Contains(stderr, p+":1: line longer than 1 MiB") || len(stderr) > 300 {
			t.Errorf("fit %s: exit %d, stderr %q; want 1 and line 1 longer than 1 MiB", p, code, stderr)
		}
	}
}

// TestFitManyRows: past 100,000 rows a CSV's rows are merged, and fit
// says so and fits the merged measurements.
func TestFitManyRows(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("model,batch,samples_per_s\n")
	const n = 105_000
	for i := range n {
		batch := []int{8, 16, 32}[i%3]
		fmt.Fprintf(&b, "resnet50,%d,%g\n", batch, float64(batch)/(float64(batch)/1000+0.01))
	}
	p := writeTemp(t, "many.csv", b.Bytes())
	stdout, stderr, code := runCLI("fit", "--format", "csv", p)
	if code != exitOK || !strings.Contains(stderr, "105000 measurement rows (more than 100000) merged into 3 measurements") {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	// The law the rows lie on: v0 1000 samples/s, t 10 ms, from 3 points.
	if !strings.Contains(stdout, "\nresnet50,,1,,3,0,8–32,1000,1000,1000,0.01,0.01,0.01,1,") {
		t.Errorf("stdout:\n%s", stdout)
	}
}

// TestFitMLPerfStopBeforeStart: a run whose run_stop precedes its
// run_start is refused with both lines, not counted a success.
func TestFitMLPerfStopBeforeStart(t *testing.T) {
	log := `:::MLLOG {"namespace": "", "time_ms": 1000, "event_type": "POINT_IN_TIME", "key": "global_batch_size", "value": 256, "metadata": {}}
:::MLLOG {"namespace": "", "time_ms": 5000, "event_type": "INTERVAL_START", "key": "run_start", "value": null, "metadata": {}}
:::MLLOG {"namespace": "", "time_ms": 4000, "event_type": "INTERVAL_END", "key": "run_stop", "value": null, "metadata": {"status": "success"}}
`
	p := writeTemp(t, "mlperf.log", []byte(log))
	stdout, stderr, code := runCLI("fit", p)
	want := "run_stop at line 3 (4000 ms) is not after run_start at line 2 (5000 ms): run refused"
	if code != exitRuntime || !strings.Contains(stderr, want) || strings.Contains(stdout, "success") {
		t.Errorf("exit %d, stdout %s, stderr %s; want 1 and %q", code, stdout, stderr, want)
	}
}

// TestFitAbsurdThroughput: a row of 1e308 samples/s is refused with its
// line and value, and the other rows are fitted.
func TestFitAbsurdThroughput(t *testing.T) {
	p := writeTemp(t, "absurd.csv", []byte("model,batch,samples_per_s\nm,8,444.4\nm,16,1e308\nm,16,615.4\nm,32,761.9\n"))
	stdout, stderr, code := runCLI("fit", "--format", "csv", p)
	if code != exitOK || !strings.Contains(stderr, "line 3: throughput 1e+308 samples/s (1e+308 per device): want at most 1e+09 samples/s per device") {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
	if !strings.Contains(stdout, "\nm,,1,,3,0,8–32,") {
		t.Errorf("stdout, want a group of 3 points:\n%s", stdout)
	}
}

// TestFitQuotesLittle: a field of 20 MB ends the reading at its line,
// and one of 500 kB is quoted in 80 bytes: nothing echoes it whole.
func TestFitQuotesLittle(t *testing.T) {
	huge := writeTemp(t, "huge.csv", []byte("batch,samples_per_s\n8,100\n16,"+strings.Repeat("9", 20<<20)+"x\n"))
	_, stderr, code := runCLI("fit", huge)
	if code != exitRuntime || !strings.Contains(stderr, "huge.csv:3: line longer than 1 MiB") || len(stderr) > 300 {
		t.Errorf("20 MB: exit %d, %d bytes of stderr: %.400s", code, len(stderr), stderr)
	}
	big := writeTemp(t, "big.csv", []byte("batch,samples_per_s\n8,100\n16,"+strings.Repeat("9", 500_000)+"x\n32,180\n"))
	_, stderr, code = runCLI("fit", big)
	if code != exitOK || !strings.Contains(stderr, "…(500001 bytes)") || len(stderr) > 1000 {
		t.Errorf("500 kB: exit %d, %d bytes of stderr: %.1200s", code, len(stderr), stderr)
	}
}

// TestFitNothingFitted: fit exits 1 when no group could be fitted, saying
// why for each.
func TestFitNothingFitted(t *testing.T) {
	p := writeTemp(t, "one-batch.csv", []byte("model,devices,batch,samples_per_s\na,1,8,100\na,1,8,101\nb,2,16,300\n"))
	stdout, stderr, code := runCLI("fit", p)
	if code != exitRuntime || !strings.Contains(stderr, "fit: no group could be fitted") ||
		!strings.Contains(stderr, "throughput group a ×1:") || !strings.Contains(stderr, "throughput group b ×2:") {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
	if !strings.Contains(stdout, "Throughput law") {
		t.Errorf("the table of the groups and their errors is not written:\n%s", stdout)
	}
}

// TestFitCSVAliases: the common names of the columns, and a global batch
// divided by the device count.
func TestFitCSVAliases(t *testing.T) {
	p := writeTemp(t, "aliases.csv", []byte("model,global_batch_size,num_gpus,samples_per_second\nm,64,8,4000\nm,30,4,900\nm,128,8,6000\nm,256,8,7000\n"))
	stdout, stderr, code := runCLI("fit", "--format", "csv", p)
	if code != exitOK || !strings.Contains(stderr, "line 3: global_batch 30 is not a multiple of devices 4") {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
	if !strings.Contains(stdout, "\nm,,8,,3,0,64–256,") {
		t.Errorf("stdout, want a group of 8 devices and 3 points:\n%s", stdout)
	}
}

// TestOutputsNeverOverwriteInputs: every command that writes a file
// refuses an output that is one of its inputs (or another output), by
// path, by another spelling and through a link, with exit 1, and leaves
// the input as it was.
func TestOutputsNeverOverwriteInputs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	content := []byte("batch,samples_per_s\n8,100\n16,150\n32,180\n")
	if err := os.WriteFile(in, content, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fit", "--out", "in.csv", "in.csv"}, "fit: --out in.csv is the input LOG in.csv"},
		{[]string{"fit", "--out", "./in.csv", "in.csv"}, "fit: --out ./in.csv is the input LOG in.csv"},
		{[]string{"fit", "--out", in, "in.csv"}, "is the input LOG in.csv"},
		{[]string{"fit", "--out", "link.csv", "in.csv"}, "fit: --out link.csv is the input LOG in.csv"},
		{[]string{"fit", "--plot", "in.csv", "in.csv"}, "fit: --plot in.csv is the input LOG in.csv"},
		{[]string{"fit", "--out", "x.yaml", "--plot", "x.yaml", "in.csv"}, "fit: --out x.yaml and --plot x.yaml are the same file"},
		{[]string{"report", "-o", "in.csv", "in.csv"}, "report: --out in.csv is the input SCENARIO in.csv"},
		{[]string{"simulate", "--trace", "in.csv", "in.csv"}, "simulate: --trace in.csv is the input SCENARIO in.csv"},
		{[]string{"simulate", "--plot", "in.csv", "in.csv"}, "simulate: --plot in.csv is the input SCENARIO in.csv"},
		{[]string{"predict", "--plot", "in.csv", "in.csv"}, "predict: --plot in.csv is the input SCENARIO in.csv"},
		{[]string{"plan", "--plot", "in.csv", "--calibration", "in.csv"}, "plan: --plot in.csv is the input --calibration in.csv"},
		{[]string{"plot", "throughput", "-o", "in.csv", "in.csv"}, "plot: --out in.csv is the input LOG in.csv"},
		{[]string{"validate", "--engine", "--engine-out", "in.csv", "--engine-from", "in.csv"}, "validate: --engine-out in.csv is the input --engine-from in.csv"},
		{[]string{"validate", "--plot", "in.csv", "--measured", "in.csv"}, "validate: --plot in.csv is the input --measured in.csv"},
		{[]string{"--catalog", "in.csv", "bench", "throughput", "--out", "in.csv"}, "bench throughput: --out in.csv is the input --catalog in.csv"},
		{[]string{"--catalog", "in.csv", "fit", "--out", "in.csv", "x.csv"}, "fit: --out in.csv is the input --catalog in.csv"},
	} {
		_, stderr, code := runCLI(tc.args...)
		if code != exitRuntime || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %s; want 1 and %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
		if got, err := os.ReadFile(in); err != nil || !bytes.Equal(got, content) {
			t.Fatalf("%s: the input changed: %q, %v", strings.Join(tc.args, " "), got, err)
		}
	}
	// An output elsewhere is not refused (this log names no model, so fit
	// has nothing to write to it, and says so).
	if _, stderr, _ := runCLI("fit", "--out", "other.yaml", "in.csv"); strings.Contains(stderr, "never overwrites") || !strings.Contains(stderr, "nothing to write to other.yaml") {
		t.Errorf("fit --out other.yaml in.csv: %s", stderr)
	}
}
