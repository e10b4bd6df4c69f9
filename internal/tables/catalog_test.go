package tables

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"scaleplan/hw"
	"scaleplan/model"
)

// TestCatalogNotGiven checks which YAML values notGiven marks: zero
// quantities, empty strings, null and empty lists; never booleans.
func TestCatalogNotGiven(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  bool
	}{
		{"0", true}, {"0 W", true}, {"0 FLOP/s", true}, {"0.0 B/s", true}, {`""`, true}, {"null", true}, {"[]", true},
		{"false", false}, {"0.5", false}, {"1 us", false}, {"x", false}, {"[1]", false}, {"0x", false},
	} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte("k: "+tc.value), &n); err != nil {
			t.Fatal(err)
		}
		if got := notGiven(n.Content[0].Content[1]); got != tc.want {
			t.Errorf("notGiven(%s) = %v, want %v", tc.value, got, tc.want)
		}
	}
}

// TestCatalogEntry checks the sections CatalogEntry finds for a system
// (with its node and device, SEEDS.md's seed 001: TSUBAME3's 540 nodes of
// 4 P100) and a node, and its error for a name of no entry.
func TestCatalogEntry(t *testing.T) {
	cat, err := hw.Load()
	if err != nil {
		t.Fatal(err)
	}
	prof, err := model.Load()
	if err != nil {
		t.Fatal(err)
	}
	out, err := CatalogEntry("tsubame3", cat, prof, nil)
	if err != nil {
		t.Fatal(err)
	}
	var heads []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "# ") {
			heads = append(heads, l)
		}
	}
	if got, want := strings.Join(heads, "|"), "# system tsubame3|# node tsubame3|# device p100-sxm2"; got != want {
		t.Errorf("sections %q, want %q", got, want)
	}
	for _, want := range []string{"max_nodes: 540\n", "devices: 4\n", "tf32: 0 FLOP/s # unsupported\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("tsubame3 lacks %q", want)
		}
	}
	if _, err := CatalogEntry("tsubame", cat, prof, nil); err == nil || !strings.Contains(err.Error(), `unknown entry "tsubame"; did you mean "tsubame3"`) {
		t.Errorf("tsubame: %v, want an unknown entry suggesting tsubame3", err)
	}
}
