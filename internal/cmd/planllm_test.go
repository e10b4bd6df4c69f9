package cmd

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPlanLLMGolden pins `plan --llm` (testdata/plan-llm-llama3-8b.golden;
// -update rewrites it).
func TestPlanLLMGolden(t *testing.T) {
	out, stderr, code := runCLI("plan", "--llm", "llama3-8b", "--system", "dgx-h100", "--gpus", "64", "--tokens", "1T", "--top", "5")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkGolden(t, "plan-llm-llama3-8b.golden", out)
}

// TestPlanLLMJSON checks the machine output's tables and units.
func TestPlanLLMJSON(t *testing.T) {
	out, stderr, code := runCLI("plan", "--llm", "gpt3-1.3b", "--system", "dgx-a100", "--gpus", "16", "--top", "3", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc map[string][]map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(doc["layouts"]) != 3 || len(doc["breakdown"]) != 8 || len(doc["summary"]) == 0 {
		t.Errorf("tables: %d layouts, %d parts, %d summary lines", len(doc["layouts"]), len(doc["breakdown"]), len(doc["summary"]))
	}
	if _, ok := doc["layouts"][0]["step_s"].(float64); !ok {
		t.Errorf("layout row %v: want a numeric step_s", doc["layouts"][0])
	}
}

// TestPlanLLMErrors checks the usage errors of plan --llm.
func TestPlanLLMErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"plan", "--llm", "llama3-8b", "--gpus", "8"}, exitUsage, "--system"},
		{[]string{"plan", "--llm", "llama3-8b", "--system", "dgx-h100", "--gpus", "8", "--tokens", "lots"}, exitUsage, "--tokens"},
		{[]string{"plan", "--llm", "llama3-8b", "--system", "dgx-h100", "--gpus", "12"}, exitRuntime, "gpus 12"},
		{[]string{"plan", "--llm", "gpt5", "--system", "dgx-h100", "--gpus", "8"}, exitRuntime, "gpt5"},
		{[]string{"plan", "--llm", "llama3-8b", "--system", "dgx-h100", "--gpus", "64-32"}, exitUsage, "LO-HI"},
		{[]string{"plan", "--llm", "llama3-8b", "--system", "dgx-h100", "--gpus", "64", "--precision", "fp16"}, exitUsage, "--precision"},
		{[]string{"plan", "--llm", "llama3-8b", "--system", "dgx-a100", "--gpus", "64", "--precision", "fp8"}, exitRuntime, "fp8 peak"},
		{[]string{"plan", "--llm", "llama3-8b", "--system", "dgx-h100", "--gpus", "64-100"}, exitRuntime, "whole nodes"},
		{[]string{"plan", "--llm", "llama3-8b", "--system", "dgx-h100", "--gpus", "64", "--deadline", "3d"}, exitUsage, "--tokens"},
		{[]string{"plan", "--llm", "llama3-8b", "--system", "dgx-h100", "--gpus", "64", "--global-batch", "0"}, exitUsage, "--global-batch"},
		{[]string{"plan", "--llm", "llama3-8b", "--system", "dgx-h100", "--gpus", "64", "--tokens", "1T", "--budget", "5 kWh"}, exitRuntime, "energy"},
		{[]string{"plan", "--llm", "llama3-8b", "--system", "dgx-h100", "--gpus", "64", "--tokens", "1T", "--deadline", "1h"}, exitRuntime, "meets the deadline"},
		{[]string{"plan", "--recipe", "mlperf-v0.7-resnet50", "--gpus", "8"}, exitUsage, "--gpus goes with --llm"},
	} {
		_, stderr, code := runCLI(c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", strings.Join(c.args, " "), code, stderr, c.code, c.msg)
		}
	}
}

// TestValidateLLM: validate --llm prints every published LLM case with its
// source and the mean absolute error, in text and json; --max-error below
// it fails; it refuses the other modes.
func TestValidateLLM(t *testing.T) {
	out, stderr, code := runCLI("validate", "--llm", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc map[string][]map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(doc["cases"]) < 20 || len(doc["summary"]) != 1 {
		t.Fatalf("%d cases, %d summary lines", len(doc["cases"]), len(doc["summary"]))
	}
	for _, r := range doc["cases"] {
		if src, _ := r["source"].(string); !strings.Contains(src, "arXiv:") && !strings.Contains(src, "github.com/mlcommons/training_results_") {
			t.Errorf("case %v cites no paper or MLPerf result", r["case"])
		}
	}
	text, _, code := runCLI("validate", "--llm")
	if code != exitOK || !strings.Contains(text, "korthikanti-175B-selective") || !strings.Contains(text, "mean absolute error") {
		t.Errorf("text: exit %d:\n%s", code, text)
	}
	if _, stderr, code := runCLI("validate", "--llm", "--max-error", "1"); code == exitOK || !strings.Contains(stderr, "exceeds --max-error 1%") {
		t.Errorf("--max-error 1: exit %d, %s", code, stderr)
	}
	for _, bad := range [][]string{{"--cases", "x.yaml"}, {"--steps", "5"}, {"--engine"}} {
		if _, stderr, code := runCLI(append([]string{"validate", "--llm"}, bad...)...); code != exitUsage || !strings.Contains(stderr, "exclusive") {
			t.Errorf("validate --llm %v: exit %d, %s", bad, code, stderr)
		}
	}
}
