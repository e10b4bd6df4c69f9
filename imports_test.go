package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"path"
	"strings"
	"testing"
)

// allowed lists, for each project package (a trailing "/..." covers the
// subtree), the project packages it may import directly. It is DESIGN.md's
// layout table: imports point down, nothing imports upward, fit and sim never
// meet except in internal/cmd and calibrate. Beyond the table, plan and
// validate load the catalogue and profiles (hw, model), validate simulates
// measured runs as sim configurations and reads the records of fit's logs
// (internal/benchlog), report (not in the table) maps a scenario's
// simulated sweep (scenarios, sim, predict, hw) onto the inputs of plots,
// engine/recipe reads the model profiles' recipes to configure the engine,
// engine/measure writes the records of its sweep (internal/benchlog), and
// calibrate reads and writes bench log records and sizes
// (internal/benchlog, internal/units), and llm (LLM layouts and their
// memory) reads the transformer shapes (model), sizes (internal/units) and
// the catalogue (hw); validate reads the MLPerf epochs tables embedded in
// internal/mlperfepochs, which groups and fits them (fit), and plots draws
// its groups.
var allowed = map[string][]string{
	"scaleplan":           {"internal/cmd"},
	"internal/cmd":        {"*"},
	"plots":               {"sim", "fit", "fit/logs", "internal/units", "internal/atomicfile", "internal/mlperfepochs"},
	"compute":             {"hw", "model", "internal/units"},
	"scenarios":           {"compute", "sim/...", "hw", "model", "internal/units", "internal/config", "internal/calib"},
	"predict":             {"scenarios", "sim", "sim/...", "hw", "model", "internal/units", "internal/config", "internal/calib", "internal/atomicfile"},
	"plan":                {"compute", "predict", "scenarios", "sim", "hw", "model", "llm", "internal/units", "internal/config", "internal/calib"},
	"validate":            {"compute", "predict", "fit", "fit/logs", "scenarios", "sim", "hw", "model", "internal/units", "internal/config", "internal/calib", "internal/benchlog", "internal/mlperfepochs"},
	"report":              {"predict", "plots", "scenarios", "sim", "hw", "internal/units"},
	"sim":                 {"sim/internal/...", "hw", "model", "internal/units"},
	"sim/internal/...":    {"sim/internal/...", "internal/units"},
	"fit":                 {"fit/logs", "internal/benchlog", "internal/units", "internal/config", "internal/atomicfile", "internal/calib"},
	"fit/logs":            {"internal/benchlog", "internal/units", "internal/calib"},
	"engine/tensor":       {},
	"engine/nn":           {"engine/tensor"},
	"engine/optim":        {},
	"engine/data":         {},
	"engine/dist":         {"engine/tensor", "engine/nn", "engine/optim", "engine/data", "internal/benchlog", "internal/units", "internal/procout"},
	"engine/recipe":       {"engine/dist", "engine/optim", "model"},
	"engine/measure":      {"engine/dist", "internal/benchlog"},
	"calibrate":           {"engine/dist", "engine/measure", "fit", "sim", "internal/benchlog", "internal/units"},
	"engine/torchbench":   {"internal/benchlog", "internal/atomicfile", "internal/config", "internal/procout"},
	"hw":                  {"internal/units", "internal/config"},
	"model":               {"internal/units", "internal/config"},
	"llm":                 {"model", "internal/units", "hw"},
	"internal/calib":      {"internal/units", "internal/config", "internal/atomicfile"},
	"internal/benchlog":   {"internal/units"},
	"internal/config":     {},
	"internal/atomicfile": {},
	"internal/version":    {},
	"internal/progress":   {},
	"internal/procout":    {},
	"internal/tables":     {"internal/units", "llm", "fit", "fit/logs", "predict", "plan", "validate", "calibrate", "scenarios", "sim", "hw", "model", "report", "plots", "engine/dist", "engine/measure", "engine/torchbench", "internal/benchlog", "internal/calib", "internal/config"},
	"internal/units":      {},

	// The MLPerf epochs tables, embedded for validate's cases, and their
	// grouping and fit by benchmark and optimizer (fit), which plots
	// charts for scripts/mlperfepochs and `scaleplan plot epochs`.
	"internal/mlperfepochs": {"fit"},

	// A program run by hand on the MLPerf results repositories: it fits
	// (fit), draws (plots) and writes a calibration (internal/calib).
	"scripts/mlperfepochs": {"fit", "plots", "internal/calib", "internal/mlperfepochs"},
}

// noClock lists the packages that must not read the wall clock or a global
// random source: they may not import "time" at all.
var noClock = []string{"sim", "sim/internal/...", "fit", "fit/logs"}

type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

func matches(pattern, rel string) bool {
	if pattern == "*" {
		return true
	}
	if p, ok := strings.CutSuffix(pattern, "/..."); ok {
		return rel == p || strings.HasPrefix(rel, p+"/")
	}
	return pattern == rel
}

func rule(rel string) ([]string, bool) {
	if a, ok := allowed[rel]; ok {
		return a, true
	}
	for p, a := range allowed {
		if strings.HasSuffix(p, "/...") && matches(p, rel) {
			return a, true
		}
	}
	return nil, false
}

func TestImportDirection(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	n := 0
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, "scaleplan"), "/")
		if rel == "" {
			rel = "scaleplan"
		}
		allow, ok := rule(rel)
		if !ok {
			t.Errorf("package %s is not in DESIGN.md's layout table (add it to allowed in imports_test.go)", p.ImportPath)
			continue
		}
		imports := append(append([]string(nil), p.Imports...), p.TestImports...)
		for _, imp := range imports {
			if imp == "math/rand" {
				t.Errorf("%s imports math/rand: use math/rand/v2 with an explicit *rand.Rand", p.ImportPath)
			}
			if imp == "time" {
				for _, nc := range noClock {
					if matches(nc, rel) {
						t.Errorf("%s imports time: simulated and fitted time are values, not the wall clock", p.ImportPath)
					}
				}
			}
			irel, ok := strings.CutPrefix(imp, "scaleplan/")
			if !ok || irel == rel {
				continue
			}
			permitted := false
			for _, a := range allow {
				if matches(a, irel) {
					permitted = true
				}
			}
			if !permitted {
				t.Errorf("%s imports %s: not allowed by the layout (allowed: %s)", p.ImportPath, imp, strings.Join(allow, ", "))
			}
		}
	}
	if n < 5 {
		t.Fatalf("go list found %d packages", n)
	}
}

func TestMatches(t *testing.T) {
	for _, c := range []struct {
		pat, rel string
		want     bool
	}{{"sim/...", "sim", true}, {"sim/...", "sim/internal/event", true}, {"sim/...", "simx", false}, {"fit", "fit", true}, {"fit", "fit/x", false}, {"*", path.Join("a", "b"), true}} {
		if got := matches(c.pat, c.rel); got != c.want {
			t.Errorf("matches(%q, %q) = %v", c.pat, c.rel, got)
		}
	}
}
