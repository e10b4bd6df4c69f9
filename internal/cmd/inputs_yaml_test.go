package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// yamlInput is how one kind of YAML input reaches the program: args runs
// it on the file named by path.
type yamlInput struct {
	kind string
	args func(dir, path string) []string
}

// yamlInputs lists every YAML file a user gives: a catalogue, profiles, a
// scenario, a study, a calibration (through a scenario that names it) and
// validation cases.
func yamlInputs(t *testing.T) []yamlInput {
	shipped, err := os.ReadFile("../../scenarios/shipped/seed003-resnet50-2gpu-nop2p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return []yamlInput{
		{"catalogue file", func(_, p string) []string { return []string{"--catalog", p, "catalog"} }},
		{"profiles file", func(_, p string) []string { return []string{"--profiles", p, "catalog"} }},
		{"scenario file", func(_, p string) []string { return []string{"simulate", p} }},
		{"scenario file", func(_, p string) []string { return []string{"predict", p} }},
		{"case file", func(_, p string) []string { return []string{"validate", "--cases", p} }},
		{"calibration file", func(dir, p string) []string {
			// The shipped scenario, calibrated by the file instead of v0 and t.
			s := strings.Replace(string(shipped), "calibration:\n", "calibration:\n  file: "+p+"\n", 1)
			s = strings.Replace(s, "  v0: 258.1\n  t: 54 ms\n", "", 1)
			name := filepath.Join(dir, "calibrated.yaml")
			if err := os.WriteFile(name, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
			return []string{"simulate", name}
		}},
	}
}

// TestYAMLMergeOfMappingKey runs every YAML input on a document whose key
// is a mapping, on which the YAML decoder v3.0.1 (gopkg.in) panicked ("hash of
// unhashable type"): each is refused with exit code 1 and the file's name
// and line.
func TestYAMLMergeOfMappingKey(t *testing.T) {
	for _, in := range yamlInputs(t) {
		dir := t.TempDir()
		bad := filepath.Join(dir, "bad.yaml")
		doc := "name: x\ncalibration: {<<, {a: 1}}\n"
		if err := os.WriteFile(bad, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		args := in.args(dir, bad)
		_, stderr, code := runCLI(args...)
		want := bad + ": line 2: calibration: a key must be a name or number, not a mapping"
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and %q", strings.Join(args, " "), code, stderr, want)
		}
	}
}

// TestYAMLEndlessInput runs every YAML input on /dev/zero, which never
// ends: each stops at config.MaxFileSize with exit code 1, naming the file,
// the limit and the kind of file.
func TestYAMLEndlessInput(t *testing.T) {
	if fi, err := os.Stat("/dev/zero"); err != nil || fi.Mode()&os.ModeDevice == 0 {
		t.Skip("no /dev/zero")
	}
	for _, in := range yamlInputs(t) {
		args := in.args(t.TempDir(), "/dev/zero")
		_, stderr, code := runCLI(args...)
		want := "/dev/zero: larger than 16 MiB (the limit for a " + in.kind + ")"
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and %q", strings.Join(args, " "), code, stderr, want)
		}
	}
}

// TestYAMLRepeatedDevices gives --catalog a file of 8,000 devices of one
// name: refused at once with the line of each repeat, the first 20 listed.
func TestYAMLRepeatedDevices(t *testing.T) {
	name := filepath.Join(t.TempDir(), "dup.yaml")
	doc := "devices:\n" + strings.Repeat("  x:\n    model: m\n", 8000)
	if err := os.WriteFile(name, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI("--catalog", name, "catalog")
	for _, want := range []string{
		name + ": 7999 problems:\n",
		"\n  line 4: devices: mapping key \"x\" already defined at line 2\n",
		"\n  and 7979 more\n",
	} {
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, stderr %.300q; want 1 and %q", code, stderr, want)
		}
	}
}
