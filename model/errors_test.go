package model

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// TestErrorsGolden reads each bad document under testdata/errors with
// ReadFile and compares the error with NAME.golden. Regenerate with
//
//	go test ./model -run TestErrorsGolden -update
func TestErrorsGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "errors", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("%d error cases, want at least 10", len(files))
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			_, err := ReadFile(filepath.ToSlash(file))
			if err == nil {
				t.Fatalf("ReadFile(%s) succeeded, want an error", file)
			}
			got := err.Error() + "\n"
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("ReadFile(%s) error\n got: %s\nwant: %s", file, got, want)
			}
		})
	}
}

// TestErrorsLocated checks the golden cases that the brief names by their
// content, so that a regenerated golden file cannot silently lose them.
func TestErrorsLocated(t *testing.T) {
	cases := []struct{ file, want string }{
		{"typo-field", `line 21: unknown field "optimiser"; did you mean "optimizer"?`},
		{"unknown-model", `line 19: recipes.mine.model: unknown model "resnet5"; did you mean "resnet50"?`},
		{"negative-lr", "line 24: recipes.mine.base_lr: must be positive, got -0.1"},
		{"batch-zero", "line 22: recipes.mine.per_device_batch: must be positive, got 0"},
		{"wrong-unit", `line 11: "8 GB" is not a quantity of FLOPs`},
		{"bad-syntax", "line 20: mapping values are not allowed in this context"},
		{"layer-sum", "line 14: models.resnet50.layers: layers sum to 99 parameters, but params is 100 (off by -1)"},
		{"unknown-optimizer", `line 21: recipes.mine.optimizer: unknown optimizer "larz"`},
		{"unknown-schedule", `line 25: recipes.mine.schedule.kind: unknown schedule "cosin"; did you mean "cosine"?`},
		{"percent-target", "line 29: recipes.mine.targets[0].value: 75.9 is not a fraction: write 0.759 for 75.9%"},
	}
	for _, c := range cases {
		file := "testdata/errors/" + c.file + ".yaml"
		_, err := ReadFile(file)
		if err == nil || !strings.Contains(err.Error(), file+": ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadFile(%s) = %v\nwant it to contain %q", file, err, c.want)
		}
	}
}
