package hw

import (
	"bytes"
	"os"
	"testing"
)

// FuzzParse checks that no input makes Parse panic, and that what Parse
// accepts validates and keeps its names.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/load/dir/a.yaml", "testdata/load/override.yaml", "testdata/errors/many_problems.yaml"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	// A key that is a mapping: gopkg.in's v3.0.1 of the YAML decoder panicked.
	f.Add([]byte("devices:\n  x: {<<, {a: 1}}\n"))
	f.Add([]byte("devices:\n  x: {model: m}\n  x: {model: m}\n"))
	f.Add([]byte(plausibleBase))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(bytes.NewReader(data))
		if err != nil {
			if c != nil {
				t.Fatal("catalogue and error")
			}
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Parse accepted what Validate rejects: %v", err)
		}
		for name, d := range c.Devices {
			if d.Name != name {
				t.Fatalf("device %q named %q", name, d.Name)
			}
		}
		for _, name := range c.SystemNames() {
			if _, _, _, err := c.Resolve(name); err != nil {
				t.Fatalf("Resolve(%q): %v", name, err)
			}
		}
		_ = c.Clone()
	})
}
