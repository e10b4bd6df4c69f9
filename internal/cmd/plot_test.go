package cmd

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
		for _, want := range []string{"scaleplan plot [command options] KIND LOG...|SCENARIO... [-o DIR]", "Kinds:", "throughput ", "steps ", "scaling ", "efficiency ", "breakdown ", "timeline ", "--out DIR, -o DIR", "--devices N,N,..."} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%v: help lacks %q:\n%s", args, want, stdout)
			}
		}
	}
}
