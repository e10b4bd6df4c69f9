package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// zeros reads as an endless run of zero bytes, as /dev/zero does.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestReadLimitedEdges(t *testing.T) {
	data, err := readLimited(io.LimitReader(zeros{}, MaxFileSize))
	if err != nil || len(data) != MaxFileSize {
		t.Errorf("exactly %d bytes: %d bytes, %v; want them all", MaxFileSize, len(data), err)
	}
	if _, err := readLimited(io.LimitReader(zeros{}, MaxFileSize+1)); !errors.Is(err, errTooLarge) {
		t.Errorf("%d bytes: %v, want %v", MaxFileSize+1, err, errTooLarge)
	}
	if _, err := readLimited(zeros{}); !errors.Is(err, errTooLarge) {
		t.Errorf("endless input: %v, want %v", err, errTooLarge)
	}
	_, err = Decode(zeros{}, &doc{})
	if want := "larger than 16 MiB (the limit for a YAML document)"; err == nil || err.Error() != want {
		t.Errorf("Decode of endless input: %v, want %q", err, want)
	}
}

func TestReadFileLimits(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	// A sparse file one byte past the limit: refused from its size.
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxFileSize+1); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, want string }{
		{big, big + ": larger than 16 MiB (the limit for a catalogue file)"},
		{dir, dir + ": is a directory, not a catalogue file"},
		{filepath.Join(dir, "none.yaml"), "no such file or directory"},
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		cases = append(cases, struct{ name, want string }{"/dev/zero", "/dev/zero: larger than 16 MiB (the limit for a catalogue file)"})
	}
	for _, c := range cases {
		_, err := ReadFile(c.name, "catalogue file")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.name) {
			t.Errorf("ReadFile(%s) = %v, want %q", c.name, err, c.want)
		}
	}
	if err := os.Truncate(big, MaxFileSize); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(big, "catalogue file"); err != nil || len(data) != MaxFileSize {
		t.Errorf("ReadFile of exactly %d bytes: %d bytes, %v", MaxFileSize, len(data), err)
	}
}

func TestDecodeFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "d.yaml")
	if err := os.WriteFile(name, []byte("name: x\nitems:\n  - {<<, {a: 1}}: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var d doc
	_, err := DecodeFile(name, "test file", &d)
	want := name + ": line 3: items[0]: a key must be a name or number, not a mapping"
	if err == nil || err.Error() != want {
		t.Errorf("DecodeFile = %v\nwant %s", err, want)
	}
}

// TestDecodeKeys checks the keys the YAML decoder is not given: keys that
// are lists or mappings (v3.0.1 of the decoder panicked on the first
// case), repeated keys, and mappings past MaxMappingKeys.
func TestDecodeKeys(t *testing.T) {
	cases := []struct{ src, want string }{
		{"sizes: {<<, {a: 1}}\n", "line 1: sizes: a key must be a name or number, not a mapping"},
		{"sizes:\n  ? [a, b]\n  : 1\n", "line 2: sizes: a key must be a name or number, not a list"},
		{"x: &k [1]\nsizes: {*k : 1}\n", "line 2: sizes: a key must be a name or number, not a list"},
		{"name: a\nname: b\n", `line 2: mapping key "name" already defined at line 1`},
		{"items:\n  - name: a\n    name: b\n", `line 3: items[0]: mapping key "name" already defined at line 2`},
	}
	for _, c := range cases {
		var d doc
		_, err := Decode(strings.NewReader(c.src), &d)
		if err == nil || err.Error() != c.want {
			t.Errorf("Decode(%q) = %v\nwant %s", c.src, err, c.want)
		}
	}
	var b strings.Builder
	b.WriteString("sizes:\n")
	for i := range MaxMappingKeys + 1 {
		fmt.Fprintf(&b, "  k%d: 1\n", i)
	}
	var d doc
	_, err := Decode(strings.NewReader(b.String()), &d)
	if want := "line 2: sizes: a mapping of 10001 keys; at most 10000 are allowed"; err == nil || err.Error() != want {
		t.Errorf("Decode of %d keys = %v, want %s", MaxMappingKeys+1, err, want)
	}
	d = doc{}
	src := strings.Replace(b.String(), "  k0: 1\n", "", 1)
	if _, err := Decode(strings.NewReader(src), &d); err != nil || len(d.Sizes) != MaxMappingKeys {
		t.Errorf("Decode of %d keys: %d sizes, %v", MaxMappingKeys, len(d.Sizes), err)
	}
}

// TestDecodeRepeatedKeys gives 8,000 copies of one key: the error lists
// the first MaxListed and counts the rest (the YAML decoder alone compares
// each key with every later one, and lists the 32 million pairs).
func TestDecodeRepeatedKeys(t *testing.T) {
	const n = 8000
	src := "sizes:\n" + strings.Repeat("  x: 1\n", n)
	var d doc
	_, err := Decode(strings.NewReader(src), &d)
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{
		fmt.Sprintf("%d problems:", n-1),
		`  line 3: sizes: mapping key "x" already defined at line 2`,
	}
	if len(lines) != MaxListed+2 || lines[0] != want[0] || lines[1] != want[1] {
		t.Fatalf("error starts %q, has %d lines; want %q and %d lines", lines[:2], len(lines), want, MaxListed+2)
	}
	if last, want := lines[len(lines)-1], fmt.Sprintf("  and %d more", n-1-MaxListed); last != want {
		t.Errorf("last line %q, want %q", last, want)
	}
}

func TestProblemsErrorBounded(t *testing.T) {
	ps := &Problems{File: "f.yaml"}
	for i := range MaxListed + 5 {
		ps.Addf(fmt.Sprintf("a[%d]", i), "bad")
	}
	got := ps.Error()
	if !strings.HasPrefix(got, "f.yaml: 25 problems:\n  a[0]: bad\n") || !strings.HasSuffix(got, "\n  a[19]: bad\n  and 5 more") {
		t.Errorf("got\n%s", got)
	}
}

// TestLocateMany locates a problem in each of many entries, by key and by
// name, as LineOf locates each alone.
func TestLocateMany(t *testing.T) {
	var b strings.Builder
	b.WriteString("sizes:\n")
	for i := range 3000 {
		fmt.Fprintf(&b, "  k%d: %d\n", i, i)
	}
	b.WriteString("items:\n")
	for i := range 3000 {
		fmt.Fprintf(&b, "  - name: i%d\n    n: 1\n", i)
	}
	var d doc
	root, err := Decode(strings.NewReader(b.String()), &d)
	if err != nil {
		t.Fatal(err)
	}
	var ps Problems
	for i := 2996; i >= 0; i -= 7 { // 2996 is 7 × 428
		ps.Addf(fmt.Sprintf("sizes.k%d", i), "bad")
		ps.Addf(fmt.Sprintf("items.i%d.n", i), "bad")
		ps.Addf(fmt.Sprintf("items[%d]", i), "bad")
	}
	ps.Locate(root)
	for _, p := range ps.List {
		if want := LineOf(root, p.Path); p.Line != want {
			t.Fatalf("%s: line %d, LineOf gives %d", p.Path, p.Line, want)
		}
	}
	if p := ps.List[0]; p.Path != "sizes.k0" || p.Line != 2 {
		t.Errorf("first problem %+v, want sizes.k0 at line 2", p)
	}
}

// panicky decodes itself by panicking, as a faulty decoder would.
type panicky struct{}

func (*panicky) UnmarshalYAML(*yaml.Node) error { panic("boom") }

func TestDecodeRecovers(t *testing.T) {
	var v struct {
		P panicky `yaml:"p"`
	}
	_, err := Decode(strings.NewReader("p: 1\n"), &v)
	want := "f.yaml: the YAML decoder failed on this document: boom"
	if err = InFile("f.yaml", err); err == nil || err.Error() != want {
		t.Errorf("Decode = %v, want %s", err, want)
	}
}

// TestDecodeKeyPairs gives three mappings of MaxMappingKeys keys: the
// first two are within MaxKeyPairs (99,990,003 pairs with the top
// mapping's three), the third is not.
func TestDecodeKeyPairs(t *testing.T) {
	var b strings.Builder
	for _, name := range []string{"a", "b", "c"} {
		fmt.Fprintf(&b, "%s:\n", name)
		for i := range MaxMappingKeys {
			fmt.Fprintf(&b, "  k%d: 1\n", i)
		}
	}
	var v map[string]map[string]int
	_, err := Decode(strings.NewReader(b.String()), &v)
	want := fmt.Sprintf("line %d: c: a mapping of 10000 keys, which brings the document's mappings to 149985003 pairs of keys; "+
		"at most 100000000 are allowed (the YAML decoder compares every pair)", 2*(MaxMappingKeys+1)+2)
	if err == nil || err.Error() != want {
		t.Errorf("Decode = %v\nwant %s", err, want)
	}
	two := b.String()[:strings.Index(b.String(), "c:\n")]
	if _, err := Decode(strings.NewReader(two), &v); err != nil || len(v["b"]) != MaxMappingKeys {
		t.Errorf("Decode of two mappings: %d keys in b, %v", len(v["b"]), err)
	}
}

func TestSuggester(t *testing.T) {
	var s Suggester
	valid := []string{"dgx1", "dgx-a100"}
	for i := range MaxListed {
		if got, want := s.Unknown("system", "dgx2", valid), Unknown("system", "dgx2", valid); got != want {
			t.Fatalf("call %d: %s, want %s", i+1, got, want)
		}
	}
	want := `unknown system "dgx2" (2 valid names; near ones are suggested for the first 20 unknown names only)`
	if got := s.Unknown("system", "dgx2", valid); got != want {
		t.Errorf("call %d: %s, want %s", MaxListed+1, got, want)
	}
}
