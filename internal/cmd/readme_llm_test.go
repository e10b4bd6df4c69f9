package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"scaleplan/plan"
)

// TestREADMELLM runs each `go run . plan --llm` command of the README and
// checks that every line of the excerpt under it (the indented lines up
// to the next blank one) is a line of what the command prints, spaces
// aside, and that each search takes at most 2 s of CPU time (issue 47;
// CPU time, not wall-clock time, so that a loaded machine does not fail
// it).
func TestREADMELLM(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(readme), "\n")
	ran := 0
	for i, line := range lines {
		cmd, ok := strings.CutPrefix(line, "    go run . plan --llm ")
		if !ok {
			continue
		}
		var excerpt []string
		for _, l := range lines[i+1:] {
			if !strings.HasPrefix(l, "    ") || strings.HasPrefix(l, "    go run ") {
				break
			}
			excerpt = append(excerpt, norm(l))
		}
		start := time.Now()
		cpu0, measured := cpuTime()
		stdout, stderr, code := runCLI(append([]string{"plan", "--llm"}, strings.Fields(cmd)...)...)
		cpu1, _ := cpuTime()
		wall, cpu := time.Since(start), cpu1-cpu0
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", line, code, stderr)
		}
		got := map[string]bool{}
		for _, l := range strings.Split(stdout, "\n") {
			got[norm(l)] = true
		}
		for _, e := range excerpt {
			if !got[e] {
				t.Errorf("README line %d, %q: %q is not in its output:\n%s", i+1, cmd, e, stdout)
			}
		}
		if len(excerpt) < 2 {
			t.Errorf("README line %d: %d excerpt lines, want the layout table's header and best row", i+1, len(excerpt))
		}
		t.Logf("%s: %v wall, %v CPU", cmd, wall, cpu)
		if measured && cpu > 2*time.Second {
			t.Errorf("%s took %v of CPU time: want at most 2 s", cmd, cpu)
		}
		ran++
	}
	if ran < 3 {
		t.Errorf("the README has %d plan --llm commands, want 3 (7B on 256 H100s; Llama-3-70B on 1,024 and 16,384)", ran)
	}
}

// norm joins a line's fields with one space.
func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestREADMELLMError checks the README's figures of the LLM validation,
// the mean absolute error of the papers' runs and of the MLPerf runs,
// against what plan.ValidateLLM computes now.
func TestREADMELLMError(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := plan.ValidateLLM(nil)
	if err != nil || len(v.Groups) != 2 {
		t.Fatalf("%d groups: %v", len(v.Groups), err)
	}
	text := norm(string(readme))
	for _, want := range []string{
		fmt.Sprintf("%d published runs: %.1f %% mean absolute error", v.Groups[0].Cases, 100*v.Groups[0].MAE),
		fmt.Sprintf("%d MLPerf GPT-3 175B runs in fp8: %.1f %%", v.Groups[1].Cases, 100*v.Groups[1].MAE),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("README lacks %q", want)
		}
	}
}
