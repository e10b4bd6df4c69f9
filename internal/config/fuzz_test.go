package config

import (
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// fuzzDoc has every shape checkWhole walks: integers of several sizes,
// inline and named structs, pointers, maps, slices and values that are
// not integers.
type fuzzDoc struct {
	fuzzInner `yaml:",inline"`
	N         int                  `yaml:"n"`
	U         uint8                `yaml:"u"`
	P         *int64               `yaml:"p"`
	F         float64              `yaml:"f"`
	S         string               `yaml:"s"`
	List      []int                `yaml:"list"`
	Grid      [][]int32            `yaml:"grid"`
	ByName    map[string]fuzzInner `yaml:"by_name"`
	Any       any                  `yaml:"any"`
}

type fuzzInner struct {
	Count int     `yaml:"count"`
	Ratio float32 `yaml:"ratio"`
}

// Decode is yaml.v3's strict decoding and a check: wherever it succeeds it
// gives the value yaml.v3 gives, and wherever yaml.v3 alone succeeds and
// it does not, the reason is a number with a fraction for an integer.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"n: 1\nu: 2\np: 3\nf: 1.5\ns: x\nlist: [1, 2]\ngrid: [[1], [2, 3]]\nby_name: {a: {count: 1, ratio: 0.5}}\ncount: 4\n",
		"n: 1.5\n",
		"list: [1, 2.5]\n",
		"grid: [[1.0e3]]\n",
		"by_name: {a: {count: 7.25}}\n",
		"count: &x 2.5\nn: *x\n",
		"by_name: {a: {<<: {count: 7.25}}, b: {<<: [{ratio: 1}, {count: 2.5}]}}\n",
		"p: 1e100\n",
		"any: {n: 1.5}\n",
		"u: 300\n",
		"- 1\n",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var got fuzzDoc
		_, err := Decode(strings.NewReader(src), &got)
		var plain fuzzDoc
		d := yaml.NewDecoder(strings.NewReader(src))
		d.KnownFields(true)
		plainErr := d.Decode(&plain)
		if err == nil {
			if plainErr != nil {
				t.Fatalf("Decode(%q) succeeded where yaml.v3 failed: %v", src, plainErr)
			}
			if !reflect.DeepEqual(got, plain) {
				t.Fatalf("Decode(%q) = %+v, yaml.v3 gives %+v", src, got, plain)
			}
			return
		}
		if plainErr == nil && !strings.Contains(err.Error(), "want a whole number, got the number") {
			t.Fatalf("Decode(%q): %v, where yaml.v3 succeeded", src, err)
		}
	})
}
