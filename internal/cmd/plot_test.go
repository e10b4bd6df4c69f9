package cmd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"scaleplan/internal/calib"
)

// TestPlotCommand runs `scaleplan plot` and compares exit code, stdout and
// stderr with testdata/plot/NAME.golden (-update rewrites), then checks
// the files it says it wrote: each PNG decodes and each SVG is XML.
func TestPlotCommand(t *testing.T) {
	tmp := t.TempDir()
	out := func(name string) string { return filepath.Join(tmp, name) }
	for _, tc := range []struct {
		name  string
		args  []string
		code  int
		dir   string   // the output directory
		files []string // base names written in dir
	}{
		{"throughput", []string{"plot", "throughput", "testdata/plot/seed003.jsonl", "-o", out("throughput")}, exitOK, out("throughput"), []string{"throughput.png", "throughput.svg"}},
		{"steps", []string{"plot", "--out", out("steps"), "steps", "testdata/plot/steps.csv"}, exitOK, out("steps"), []string{"steps.png", "steps.svg"}},
		{"two-subjects", []string{"plot", "throughput", "testdata/plot/two_models.csv", "testdata/plot/seed003.jsonl", "--out=" + out("two")}, exitOK, out("two"),
			[]string{"throughput-resnet50-gtx1080ti-fp32.png", "throughput-resnet50-gtx1080ti-fp32.svg", "throughput-resnet50-v100.png", "throughput-resnet50-v100.svg", "throughput-vgg16-v100.png", "throughput-vgg16-v100.svg"}},
		{"after-dashes", []string{"plot", "-o", out("dashes"), "steps", "--", "testdata/plot/steps.csv"}, exitOK, out("dashes"), []string{"steps.png", "steps.svg"}},
		{"no-kind", []string{"plot"}, exitUsage, "", nil},
		{"unknown-kind", []string{"plot", "pie", "testdata/plot/seed003.jsonl"}, exitUsage, "", nil},
		{"no-log", []string{"plot", "steps", "-o", out("none")}, exitUsage, "", nil},
		{"bad-flag", []string{"plot", "throughput", "testdata/plot/seed003.jsonl", "--bogus"}, exitUsage, "", nil},
		{"flag-without-value", []string{"plot", "throughput", "testdata/plot/seed003.jsonl", "-o"}, exitUsage, "", nil},
		{"no-steps", []string{"plot", "steps", "testdata/plot/seed003.jsonl", "-o", out("nosteps")}, exitRuntime, "", nil},
		{"no-throughput", []string{"plot", "throughput", "testdata/plot/steps.csv", "-o", out("nothroughput")}, exitRuntime, "", nil},
		{"missing-file", []string{"plot", "throughput", "testdata/plot/no-such.log"}, exitRuntime, "", nil},
		{"epochs-builtin", []string{"plot", "epochs", "--benchmark", "resnet", "--optimizer", "lars", "-o", out("epochs")}, exitOK, out("epochs"), []string{"epochs.png", "epochs.svg"}},
		{"epochs-file", []string{"plot", "epochs", "--benchmark=resnet", "--epochs", "testdata/plot/epochs.csv", "-o", out("epochsfile")}, exitOK, out("epochsfile"),
			[]string{"epochs-resnet-lars.png", "epochs-resnet-lars.svg", "epochs-resnet-sgd.png", "epochs-resnet-sgd.svg"}},
		{"epochs-family", []string{"plot", "epochs", "--benchmark", "resnet", "--optimizer", "sgd_with_momentum", "--epochs", "testdata/plot/epochs.csv", "-o", out("family")}, exitOK, out("family"), []string{"epochs.png", "epochs.svg"}},
		{"epochs-no-benchmark", []string{"plot", "epochs", "-o", out("none")}, exitUsage, "", nil},
		{"epochs-bad-benchmark", []string{"plot", "epochs", "--benchmark", "gnmt", "-o", out("none")}, exitUsage, "", nil},
		{"epochs-bad-optimizer", []string{"plot", "epochs", "--benchmark", "resnet", "--optimizer", "adam", "-o", out("none")}, exitUsage, "", nil},
		{"epochs-argument", []string{"plot", "epochs", "--benchmark", "resnet", "testdata/plot/epochs.csv", "-o", out("none")}, exitUsage, "", nil},
		{"epochs-bad-line", []string{"plot", "epochs", "--benchmark", "resnet", "--epochs", "testdata/plot/epochs-bad.csv", "-o", out("none")}, exitRuntime, "", nil},
		{"epochs-missing-file", []string{"plot", "epochs", "--benchmark", "resnet", "--epochs", "testdata/plot/no-such.csv", "-o", out("none")}, exitRuntime, "", nil},
		{"epochs-flag-other-kind", []string{"plot", "steps", "--benchmark", "resnet", "testdata/plot/steps.csv", "-o", out("none")}, exitUsage, "", nil},
		{"epochs-scenario-flag", []string{"plot", "epochs", "--benchmark", "resnet", "--devices", "8", "-o", out("none")}, exitUsage, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(tc.args...)
			if code != tc.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			got := "$ scaleplan " + strings.Join(tc.args, " ") + "\n-- exit " + strconv.Itoa(code) + " --\n-- stdout --\n" + stdout + "-- stderr --\n" + stderr
			got = strings.ReplaceAll(got, tmp, "$TMP")
			checkGolden(t, filepath.Join("plot", tc.name+".golden"), got)
			var want []string
			for _, f := range tc.files {
				want = append(want, filepath.Join(tc.dir, f))
			}
			printed := strings.Fields(stdout)
			if strings.Join(printed, " ") != strings.Join(want, " ") {
				t.Errorf("printed %v, want %v", printed, want)
			}
			for _, p := range printed {
				checkChart(t, p)
			}
		})
	}
	for _, d := range []string{"nosteps", "none"} {
		if _, err := os.Stat(out(d)); !os.IsNotExist(err) {
			t.Errorf("a failed plot created its output directory %s (%v)", d, err)
		}
	}
	if _, err := os.Stat(out("nosteps")); !os.IsNotExist(err) {
		t.Errorf("a failed plot created its output directory (%v)", err)
	}
}

func TestPlotHelp(t *testing.T) {
	for _, args := range [][]string{{"plot", "--help"}, {"plot", "throughput", "x.log", "-h"}} {
		stdout, stderr, code := runCLI(args...)
		if code != exitOK {
			t.Errorf("%v: exit code %d: %s", args, code, stderr)
		}
		for _, want := range []string{"scaleplan plot [command options] KIND LOG...|SCENARIO...|--benchmark NAME [-o DIR]", "Kinds:", "throughput ", "steps ", "epochs ", "--benchmark NAME", "scaling ", "efficiency ", "breakdown ", "timeline ", "--out DIR, -o DIR", "--devices N,N,..."} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%v: help lacks %q:\n%s", args, want, stdout)
			}
		}
	}
}

// The built-in ResNet-50 LARS group's line gives the law of the shipped
// calibration (scenarios/calibrations/mlperf-epochs.yaml, which
// scripts/mlperfepochs' TestShippedCalibration ties to the same table):
// E_min = S_min·B_noise/N with ImageNet's N = 1,281,167, and B_noise with
// its interval. Its PNG is the chart of docs/mlperf-epochs.md, which
// scripts/mlperfepochs fit drew through the same function.
func TestPlotEpochsShippedLaw(t *testing.T) {
	cal, err := calib.ReadFile(filepath.Join("..", "..", "scenarios", "calibrations", "mlperf-epochs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var e *calib.StepsEntry
	for i := range cal.Steps {
		if s := &cal.Steps[i]; s.Model == "resnet50" && s.Labels["optimizer"] == "lars" {
			e = s
		}
	}
	if e == nil {
		t.Fatal("the calibration has no resnet50 lars entry")
	}
	dir := t.TempDir()
	_, stderr, code := runCLI("plot", "epochs", "--benchmark", "resnet", "--optimizer", "lars", "-o", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, err := os.ReadFile(filepath.Join(dir, "epochs.png"))
	if err != nil {
		t.Fatal(err)
	}
	if want, err := os.ReadFile(filepath.Join("..", "..", "docs", "img", "mlperf-epochs-resnet-lars.png")); err != nil || !bytes.Equal(got, want) {
		t.Errorf("epochs.png differs from docs/img/mlperf-epochs-resnet-lars.png (%v): redraw the docs' charts (docs/mlperf-epochs.md)", err)
	}
	want := fmt.Sprintf("E_min %s epochs, B_noise %s [%s, %s] (95 %%), %d of ", num4(e.SMin*e.BNoise/1281167), num4(e.BNoise),
		num4(e.BNoiseInterval[0]), num4(e.BNoiseInterval[1]), e.Points)
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr %q lacks %q", stderr, want)
	}
	for v, s := range map[float64]string{33.2974: "33.3", 41257.35: "41257", 408: "408", 2.633e6: "2633000", 0.5: "0.5"} {
		if got := num4(v); got != s {
			t.Errorf("num4(%v) = %q, want %q", v, got, s)
		}
	}
}
