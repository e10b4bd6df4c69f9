package config

import (
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
	}
	for _, c := range cases {
		if got := Unknown("system", c.name, valid); got != c.want {
			t.Errorf("Unknown(%q)\n got %s\nwant %s", c.name, got, c.want)
		}
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
}

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
		{"items:\n  - n: many\n", "line 2: cannot unmarshal !!str `many` into int"},
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
