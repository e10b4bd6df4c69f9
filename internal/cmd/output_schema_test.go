package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"scaleplan/internal/tables"
	"slices"
	"strings"
	"testing"
)

// schemaRun is one command line whose --format json output the schema
// test checks against the section of docs/output.md it names.
type schemaRun struct {
	section string   // "predict", "validate --measured", ...
	args    []string // without --format json
	// variants are the table keys that stand for <variant> in the docs.
	variants []string
}

// schemaRuns cover every table and every column of the documented
// schema: each conditional column appears in one run at least.
func schemaRuns(t *testing.T) []schemaRun {
	dir := t.TempDir()
	two := filepath.Join(dir, "two.csv")
	if err := os.WriteFile(two, []byte("model,device,precision,devices,batch,samples_per_s\nresnet50,v100-sxm2-16gb,fp32,16,64,3400\nresnet50,v100-sxm2-16gb,fp32,1,64,230\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	jitter := filepath.Join(dir, "jitter.yaml")
	if err := os.WriteFile(jitter, []byte("name: jitter\nsystem: dgx1\nrecipe: mlperf-v0.7-resnet50\nprecision: fp16\nstragglers: {jitter: 0.05}\nsweep:\n  devices: [8]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return []schemaRun{
		{section: "catalog", args: []string{"catalog"}},
		{section: "simulate", args: []string{"simulate", "seed003-resnet50-2gpu-nop2p"}},
		{section: "simulate", args: []string{"simulate", "--allreduce", "async-ps", "--devices", "4", "tsubame3-resnet50-tensorflow-ps"}},
		{section: "simulate", args: []string{"simulate", "--devices", "32", "tsubame3-resnet50-caffe2-staged"}},
		{section: "simulate", args: []string{"simulate", "--calibration", "published", "zinrai-200h-resnet50-mlperf-v0.7"}},
		{section: "simulate", args: []string{"simulate", "--placement", "1,2,3,4", "--allreduce", "ring", "--steps", "3", "tsubame3-resnet50-caffe2-verbs"}},
		{section: "predict", args: []string{"predict", "--placement", "1,3", "dgx1-ssd-mlperf-v0.7"}, variants: []string{"dgx1_ssd_mlperf_v0_7"}},
		{section: "predict", args: []string{"predict", "--devices", "4,32"}, variants: []string{"a_default", "b_staged", "c_staged_verbs"}},
		{section: "predict", args: []string{"predict", "--devices", "8,16", "--batch", "104", "dgx-a100-resnet50-mlperf-v0.7"}, variants: []string{"dgx_a100_resnet50_mlperf_v0_7"}},
		{section: "predict", args: []string{"predict", "--devices", "16", "ipu-pod16-efficientnet-b4"}, variants: []string{"ipu_pod16_efficientnet_b4"}},
		{section: "predict", args: []string{"predict", "--devices", "8", "zinrai-200h-ssd-mlperf-v0.7"}, variants: []string{"zinrai_200h_ssd_mlperf_v0_7"}},
		{section: "predict", args: []string{"predict", jitter}, variants: []string{"jitter"}},
		{section: "plan", args: []string{"plan", "--recipe", "mlperf-v0.7-resnet50", "--systems", "dgx1", "--max-devices", "16"}},
		{section: "validate", args: []string{"validate"}},
		{section: "validate --measured", args: []string{"validate", "--measured", two, "--system", "dgx1"}},
		{section: "validate --measured", args: []string{"validate", "--measured", "../../testdata/measurements/h200-2026-11-26/resnet50-amp-fp16.jsonl",
			"--measured", "../../testdata/measurements/h100-2026-11-26/resnet50-amp-fp16.jsonl"}},
		{section: "validate --measured", args: []string{"validate", "--calibration", "published", "--measured", "../../testdata/measurements/h100-2026-11-26/resnet50-amp-fp16.jsonl"}},
		{section: "validate --measured", args: []string{"validate", "--measured", "../../testdata/measurements/published-resnet50.csv",
			"--measured", "../../testdata/measurements/published-h100-mlperf-maskrcnn.csv"}},
		{section: "validate --measured", args: []string{"validate", "--measured", "../../testdata/measurements/published-lambda-resnet50.csv",
			"--measured", "../../testdata/measurements/h100-2026-11-26/resnet50-amp-fp16.jsonl", "--measured", "../../testdata/measurements/h200-2026-11-26/resnet50-amp-fp16.jsonl"}},
		{section: "validate --measured (nccl-tests)", args: []string{"validate", "--measured", "../../fit/testdata/nccl_allreduce_h100x16.txt", "--system", "dgx-h100"}},
		{section: "validate --measured (nccl-tests)", args: []string{"validate", "--measured", "../../testdata/measurements/nccl-tests/aws-p5-2node-all_reduce.txt", "--system", "aws-p5"}},
		{section: "validate --profile", args: []string{"validate", "--profile", "../../testdata/measurements/h200-2026-11-30-profile/resnet50-tf32-prof.profile.json",
			"--profile", "../../testdata/measurements/h200-2026-11-30-profile/resnet50-cl-amp-fp16-prof.profile.json", "--carry-to", "h100-sxm5-80gb"}},
		{section: "validate --engine", args: []string{"validate", "--engine", "--engine-from", "../../testdata/measurements/validate-engine-mlp-amd-replay.jsonl"}},
		{section: "fit", args: []string{"fit", "--gradient-size", "100 MB", "testdata/fit/bench_resnet50.jsonl"}},
		{section: "fit", args: []string{"fit", "--target", "60", "../../fit/testdata/torchvision_resnet18_cpu.txt"}},
		{section: "fit", args: []string{"fit", "--gradient-size", "100 MB", "../../fit/testdata/bench_independent.jsonl"}},
		{section: "fit", args: []string{"fit", "../../fit/testdata/nccl_allreduce_h100x16.txt"}},
		{section: "fit", args: []string{"fit", "--system", "dgx-h100", "../../validate/testdata/nccl_synthetic_dgx_h100.txt"}},
		{section: "fit", args: []string{"fit", "--system", "dgx-h100", "../../fit/testdata/nccl_allreduce_h100x16.txt"}},
		{section: "bench throughput", args: []string{"bench", "throughput", "--core-guard=false", "--data", "synthetic", "--workers", "1", "--batch", "4", "--steps", "2", "--warmup", "0"}},
		{section: "bench steps", args: []string{"bench", "steps", "--data", "synthetic", "--hidden", "64", "--batch", "16", "--target", "0.2", "--max-epochs", "0.2"}},
		{section: "bench train", args: []string{"bench", "train", "--data", "synthetic", "--hidden", "64", "--epochs", "0.05", "--batch", "16", "--lr", "0.01"}},
	}
}

// schema is docs/output.md's: section → table → key → the JSON types.
type schema map[string]map[string]map[string][]string

// readSchema parses the schema tables of docs/output.md: a section
// starts at "## `scaleplan SECTION`", a table at "### `NAME`", and each
// row "| `key` | types | ..." gives the key and its types, separated by
// " or ", the first the type the key mostly has.
func readSchema(t *testing.T) schema {
	f, err := os.Open("../../docs/output.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sec := regexp.MustCompile("^## `scaleplan (.+)`$")
	tab := regexp.MustCompile("^### `([^`]+)`")
	row := regexp.MustCompile("^\\| `([^`]+)` \\| ([a-z ]+) \\|")
	s := schema{}
	var section, name string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case sec.MatchString(line):
			section, name = sec.FindStringSubmatch(line)[1], ""
			s[section] = map[string]map[string][]string{}
		case tab.MatchString(line) && section != "":
			name = tab.FindStringSubmatch(line)[1]
			s[section][name] = map[string][]string{}
		case row.MatchString(line) && name != "":
			m := row.FindStringSubmatch(line)
			if _, dup := s[section][name][m[1]]; dup {
				t.Errorf("docs/output.md:%d: key %s of %s/%s documented twice", n, m[1], section, name)
			}
			s[section][name][m[1]] = strings.Split(m[2], " or ")
		}
	}
	return s
}

// jsonType is the schema's name of a decoded JSON value's type.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	}
	return fmt.Sprintf("%T", v)
}

// observe adds the keys and types of one run's output to seen.
func observe(t *testing.T, run schemaRun, out string, seen schema) {
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", strings.Join(run.args, " "), err, out)
	}
	tables := map[string]any{}
	switch d := doc.(type) {
	case []any:
		tables["rows"] = d
	case map[string]any:
		tables = d
	}
	if seen[run.section] == nil {
		seen[run.section] = map[string]map[string][]string{}
	}
	for name, rows := range tables {
		if slices.Contains(run.variants, name) {
			name = "<variant>"
		}
		if seen[run.section][name] == nil {
			seen[run.section][name] = map[string][]string{}
		}
		for _, r := range rows.([]any) {
			for k, v := range r.(map[string]any) {
				for _, vr := range run.variants {
					if k == vr+"_s" {
						k = "<variant>_s"
					}
				}
				if q := quantityText(v); q != "" {
					t.Errorf("scaleplan %s: table %s: key %s holds the %s %q as text: declare its column's unit (internal/tables/columns.go)", run.section, name, k, q, v)
				}
				if ty := jsonType(v); !slices.Contains(seen[run.section][name][k], ty) {
					seen[run.section][name][k] = append(seen[run.section][name][k], ty)
				}
			}
		}
	}
}

// quantityText returns the kind of quantity v is when it is text that
// internal/units reads as one ("32 GiB"), else "".
func quantityText(v any) string {
	s, ok := v.(string)
	if !ok {
		return ""
	}
	return tables.QuantityKind(s)
}

// TestOutputSchema runs every command that prints tables with --format
// json and checks that the keys and types it prints are the ones
// docs/output.md documents, and that every documented key is printed by
// one run at least, with the type the docs name first.
func TestOutputSchema(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every command")
	}
	doc := readSchema(t)
	seen := schema{}
	for _, run := range schemaRuns(t) {
		out, stderr, code := runCLI(append(run.args, "--format", "json")...)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", strings.Join(run.args, " "), code, stderr)
		}
		observe(t, run, out, seen)
	}
	observe(t, schemaRun{section: "bench --framework torch"}, torchJSON(t), seen)
	if *updateGolden {
		printSchema(seen)
	}
	for sec, tables := range seen {
		for name, keys := range tables {
			for k, types := range keys {
				want, ok := doc[sec][name][k]
				if !ok {
					t.Errorf("scaleplan %s: table %s: key %s (%s) is not in docs/output.md", sec, name, k, strings.Join(types, " or "))
					continue
				}
				for _, ty := range types {
					if !slices.Contains(want, ty) {
						t.Errorf("scaleplan %s: table %s: key %s is %s, docs/output.md says %s", sec, name, k, ty, strings.Join(want, " or "))
					}
				}
			}
		}
	}
	for sec, tables := range doc {
		for name, keys := range tables {
			for k, want := range keys {
				got, ok := seen[sec][name][k]
				switch {
				case !ok:
					t.Errorf("docs/output.md: scaleplan %s: table %s: key %s is printed by no run of the test", sec, name, k)
				case !slices.Contains(got, want[0]):
					t.Errorf("docs/output.md: scaleplan %s: table %s: key %s is %s in no run (got %s)", sec, name, k, want[0], strings.Join(got, " or "))
				}
			}
		}
	}
}

// torchJSON is the table bench --framework torch prints for a committed
// torchbench log, in json.
func torchJSON(t *testing.T) string {
	f, err := os.Open("../../testdata/measurements/h200-2026-11-26/resnet50-amp-fp16.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tb, err := tables.BenchTorch(f)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := tb.Write(&b, "json"); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// printSchema prints seen as docs/output.md's tables, for -update: a
// draft to check and complete by hand, never written over the page.
func printSchema(seen schema) {
	for _, sec := range slices.Sorted(mapKeys(seen)) {
		fmt.Printf("## `scaleplan %s`\n\n", sec)
		for _, name := range slices.Sorted(mapKeys(seen[sec])) {
			fmt.Printf("### `%s`\n\n| key | type | unit |\n|---|---|---|\n", name)
			for _, k := range slices.Sorted(mapKeys(seen[sec][name])) {
				fmt.Printf("| `%s` | %s | |\n", k, strings.Join(seen[sec][name][k], " or "))
			}
			fmt.Println()
		}
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
