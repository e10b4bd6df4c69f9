package hw

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/errors")

// TestErrorsGolden loads each bad catalogue under testdata/errors with Load
// (so it may use the built-in entries, as a --catalog file does) and compares
// the error with the .golden file beside it. Run with -update to rewrite them.
func TestErrorsGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/errors/*.yaml")
	if err != nil || len(inputs) < 10 {
		t.Fatalf("want at least ten inputs, have %d (%v)", len(inputs), err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".yaml")
		t.Run(name, func(t *testing.T) {
			_, err := Load(in)
			if err == nil {
				t.Fatal("Load: no error")
			}
			got := err.Error() + "\n"
			golden := strings.TrimSuffix(in, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if got != string(want) {
				t.Errorf("error changed\n got: %s\nwant: %s", got, want)
			}
		})
	}
}
