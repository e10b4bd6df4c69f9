package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestUnknown(t *testing.T) {
	valid := []string{"tsubame3", "dgx1", "dgx-a100", "dgx-h100", "zinrai-200h"}
	cases := []struct{ name, want string }{
		{"tsubame", `unknown system "tsubame"; did you mean "tsubame3"?`},
		{"dgx-h10", `unknown system "dgx-h10"; did you mean "dgx-h100" or "dgx-a100"?`},
		{"cray", `unknown system "cray" (valid: dgx-a100, dgx-h100, dgx1, tsubame3, zinrai-200h)`},
		{"", `unknown system "" (valid: dgx-a100, dgx-h100, dgx1, tsubame3, zinrai-200h)`}, // every name contains ""
		{" ", `unknown system " " (valid: dgx-a100, dgx-h100, dgx1, tsubame3, zinrai-200h)`},
	}
	for _, c := range cases {
		if got := Unknown("system", c.name, valid); got != c.want {
			t.Errorf("Unknown(%q)\n got %s\nwant %s", c.name, got, c.want)
		}
	}
	if got, want := Unknown("node", "y", nil), `unknown node "y" (there are none)`; got != want {
		t.Errorf("Unknown of none: %s; want %s", got, want)
	}
}

func TestEditDistance(t *testing.T) {
	cases := []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2}, {"same", "same", 0}}
	for _, c := range cases {
		if got := editDistance(c.a, c.b); got != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}

type doc struct {
	Name  string `yaml:"name"`
	Items []struct {
		Name string `yaml:"name"`
		N    int    `yaml:"n"`
	} `yaml:"items"`
	Sizes map[string]float64 `yaml:"sizes"`
	Kind  kind               `yaml:"kind"`
	On    bool               `yaml:"on"`
}

// kind is a named type, which the YAML package names by its package.
type kind string

func TestDecodeAndLocate(t *testing.T) {
	src := "name: x\nitems:\n  - name: a\n    n: 1\n  - name: b\n    n: 2\n"
	var d doc
	root, err := Decode(strings.NewReader(src), &d)
	if err != nil {
		t.Fatal(err)
	}
	var ps Problems
	ps.Addf("items[1].n", "too big")
	ps.Addf("items.a.n", "too small")
	ps.Addf("name", "bad name")
	ps.Addf("items[7]", "missing")
	ps.Locate(root)
	got := InFile("f.yaml", ps.Err()).Error()
	want := "f.yaml: 4 problems:\n  line 1: name: bad name\n  line 3: items[7]: missing\n  line 4: items.a.n: too small\n  line 6: items[1].n: too big"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"name: x\nnmae: y\n", `line 2: unknown field "nmae"; did you mean "name"?`},
		{"name: [x\n", "line 1: did not find expected ',' or ']'"},
		{"", "empty document"},
		{"items:\n  - n: many\n", "line 2: want a whole number, got the text `many`"},
		{"items:\n  - n: 1.5\n", "line 2: want a whole number, got the number `1.5`"},
		{"items: {a: 1}\n", "line 1: want a list, got a mapping"},
		{"sizes: [1, 2]\n", "line 1: want a mapping (name: value), got a list"},
		{"sizes: {a: x}\n", "line 1: want a number, got the text `x`"},
		{"kind: [a]\n", "line 1: want text, got a list"},
		{"on: maybe\n", "line 1: want true or false, got the text `maybe`"},
		{"items: [[1]]\n", "line 1: want a mapping of fields, got a list"},
		{"- a\n", "line 1: want a mapping of fields, got a list"},
	}
	for _, c := range cases {
		var d doc
		_, err := Decode(strings.NewReader(c.src), &d)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Decode(%q) = %v, want %q", c.src, err, c.want)
		}
	}
}

func TestSplitPath(t *testing.T) {
	got := splitPath("a.b[2].c[0][1]")
	want := []string{"a", "b", "[2]", "c", "[0]", "[1]"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("splitPath = %q, want %q", got, want)
	}
}

func TestDecodeWholeNumbers(t *testing.T) {
	type inner struct {
		Count int `yaml:"count"`
	}
	type outer struct {
		inner `yaml:",inline"`
		Per   map[string]uint   `yaml:"per"`
		Steps []int64           `yaml:"steps"`
		Ratio float64           `yaml:"ratio"`
		Ptr   *int              `yaml:"ptr"`
		Any   map[string]any    `yaml:"any"`
		Named map[string]inner  `yaml:"named"`
		Text  map[string]string `yaml:"text"`
	}
	ok := "count: 2.0\nper: {a: 1e3}\nsteps: [1, 2.00]\nratio: 0.5\nptr: 3\nany: {x: 1.5}\ntext: {y: 1.5}\n"
	var o outer
	if _, err := Decode(strings.NewReader(ok), &o); err != nil {
		t.Fatalf("Decode(%q): %v", ok, err)
	}
	if o.Count != 2 || o.Per["a"] != 1000 || o.Steps[1] != 2 || *o.Ptr != 3 {
		t.Errorf("decoded %+v", o)
	}
	bad := "count: 2.5\nper: {a: 0.1}\nsteps: [1, 2.25]\nptr: 3.5\nnamed:\n  z: {count: 7.5}\n"
	_, err := Decode(strings.NewReader(bad), &outer{})
	if err == nil {
		t.Fatalf("Decode(%q): no error", bad)
	}
	for _, w := range []string{"line 1: want a whole number, got the number `2.5`",
		"line 2: want a whole number, got the number `0.1`",
		"line 3: want a whole number, got the number `2.25`",
		"line 4: want a whole number, got the number `3.5`",
		"line 6: want a whole number, got the number `7.5`"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Decode(%q) = %v, want it to contain %q", bad, err, w)
		}
	}
	// What a merge key merges is checked as the mapping it merges into.
	merged := "named:\n  y:\n    <<: {count: 2.5}\n  x:\n    <<:\n      - {count: 1}\n      - {count: 4.5}\n" +
		"per:\n  <<: {a: 0.5}\n<<: {count: 6.5}\n"
	_, err = Decode(strings.NewReader(merged), &outer{})
	if err == nil {
		t.Fatalf("Decode(%q): no error", merged)
	}
	for _, w := range []string{"line 3: want a whole number, got the number `2.5`",
		"line 7: want a whole number, got the number `4.5`",
		"line 9: want a whole number, got the number `0.5`",
		"line 10: want a whole number, got the number `6.5`"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Decode(%q) = %v, want it to contain %q", merged, err, w)
		}
	}
	if n := strings.Count(err.Error(), "want a whole number"); n != 4 {
		t.Errorf("Decode(%q) = %v, want 4 problems", merged, err)
	}
	mergedOK := "named:\n  y:\n    <<: {count: 2.0}\n  x:\n    <<: [{count: 1}]\n"
	if _, err := Decode(strings.NewReader(mergedOK), &outer{}); err != nil {
		t.Errorf("Decode(%q): %v", mergedOK, err)
	}
}

func TestYAMLFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b.yaml", "A.YML", "c.txt", "d.yml", "sub.yaml/x.yaml", "empty/readme"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	single := filepath.Join(dir, "c.txt")
	got, err := YAMLFiles("catalog", []string{single, dir})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{single, filepath.Join(dir, "A.YML"), filepath.Join(dir, "b.yaml"), filepath.Join(dir, "d.yml")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("YAMLFiles = %q, want %q", got, want)
	}
	empty := filepath.Join(dir, "empty")
	if _, err := YAMLFiles("profiles", []string{empty}); err == nil || err.Error() != "profiles directory "+empty+" has no *.yaml or *.yml files" {
		t.Errorf("empty directory: %v", err)
	}
	missing := filepath.Join(dir, "missing")
	if _, err := YAMLFiles("catalog", []string{missing}); !errors.Is(err, fs.ErrNotExist) || err.Error() != "catalog "+missing+": no such file or directory" {
		t.Errorf("missing path: %v, want a not-exist error that names it as the catalog's", err)
	}
}

// TestSuggest checks Suggest's choices against names picked by
// hand.
func TestSuggest(t *testing.T) {
	cmds := []string{"catalog", "simulate", "fit", "plot", "report", "predict", "plan", "validate", "bench"}
	for name, want := range map[string]string{
		"predcit": "predict", "simualte": "simulate", "valdiate": "validate", "ctalog": "catalog", "bnech": "bench",
		"xyzzy": "", "thruput": "", "": "",
	} {
		if got := Suggest(name, cmds); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", name, got, want)
		}
	}
	subs := []string{"throughput", "steps", "train", "worker"}
	for name, want := range map[string]string{"thruput": "throughput", "trian": "train", "stpes": "steps", "q": ""} {
		if got := Suggest(name, subs); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", name, got, want)
		}
	}
	if got := Suggest("bogus", []string{"o", "h", "out"}); got != "" {
		t.Errorf("bogus among -o, -h, --out: %q, want none", got)
	}
}
