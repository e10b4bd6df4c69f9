package config

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
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

// Decode is the YAML package's strict decoding and checks: wherever it
// succeeds it gives the value the YAML package gives, and wherever the YAML
// package alone succeeds and it does not, the reason is a number with a
// fraction for an integer or a key that is a list or mapping.
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
		"by_name: {<<, {a: 1}}\n", // the YAML decoder of v3.0.1 panicked on it
		"any: {[1]: 2}\n",
		"by_name: {a: {}, a: {}}\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var got fuzzDoc
		_, err := Decode(strings.NewReader(src), &got)
		var plain fuzzDoc
		plainErr := plainDecode(src, &plain)
		if err == nil {
			if plainErr != nil {
				t.Fatalf("Decode(%q) succeeded where the YAML package failed: %v", src, plainErr)
			}
			if !reflect.DeepEqual(got, plain) {
				t.Fatalf("Decode(%q) = %+v, the YAML package gives %+v", src, got, plain)
			}
			return
		}
		if plainErr == nil && !strings.Contains(err.Error(), "want a whole number, got the number") &&
			!strings.Contains(err.Error(), "a key must be a name or number") {
			t.Fatalf("Decode(%q): %v, where the YAML package succeeded", src, err)
		}
	})
}

// plainDecode is the YAML package's strict decoding alone, with a panic
// returned as an error.
func plainDecode(src string, v any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	d := yaml.NewDecoder(strings.NewReader(src))
	d.KnownFields(true)
	return d.Decode(v)
}
