package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Problem is one thing wrong with a document.
type Problem struct {
	Path string // YAML path such as "systems.tsubame3.nodes" or "devices[2].memory"
	Line int    // 1-based line; 0 if unknown, negative if the value is not the file's (Locate leaves it)
	Msg  string
}

func (p Problem) String() string {
	var b strings.Builder
	if p.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", p.Line)
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Problems collects every problem of a document. Its zero value is ready to use.
type Problems struct {
	File string // file name, added by InFile
	List []Problem
}

// Addf records a problem at path.
func (ps *Problems) Addf(path, format string, args ...any) {
	ps.List = append(ps.List, Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
}

// Err returns ps as an error, or nil if there are no problems.
func (ps *Problems) Err() error {
	if ps == nil || len(ps.List) == 0 {
		return nil
	}
	return ps
}

// Error lists the first MaxListed problems, one a line, and counts the rest.
func (ps *Problems) Error() string {
	var b strings.Builder
	if ps.File != "" {
		b.WriteString(ps.File + ": ")
	}
	if len(ps.List) == 1 {
		b.WriteString(ps.List[0].String())
		return b.String()
	}
	fmt.Fprintf(&b, "%d problems:", len(ps.List))
	for i, p := range ps.List {
		if i == MaxListed {
			fmt.Fprintf(&b, "\n  and %d more", len(ps.List)-MaxListed)
			break
		}
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Locate fills in the line of every problem whose path names a node of root.
// A path that does not resolve fully takes the line of its deepest resolved
// prefix. Problems are then sorted by line, stably. It takes time linear in
// the number of problems and the size of the document.
func (ps *Problems) Locate(root *yaml.Node) {
	if root == nil {
		return
	}
	idx := index{}
	for i := range ps.List {
		if ps.List[i].Line == 0 {
			ps.List[i].Line = lineOf(root, ps.List[i].Path, idx)
		}
	}
	sort.SliceStable(ps.List, func(i, j int) bool { return ps.List[i].Line < ps.List[j].Line })
}

// LineOf returns the line of the node at path in root, or of the deepest
// prefix of path that exists. Paths are keys joined by dots, with [i] for a
// sequence index: "nodes.cpu.cores", "systems[3].fabric".
func LineOf(root *yaml.Node, path string) int {
	return lineOf(root, path, index{})
}

func lineOf(root *yaml.Node, path string, idx index) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, part := range splitPath(path) {
		next := child(n, part, idx)
		if next == nil {
			break
		}
		n = next
		line = n.Line
	}
	return line
}

// index holds, for each mapping or sequence that a lookup has searched,
// its children by key (a sequence's mappings by their name), so that
// locating many problems in a large document does not search the same
// mapping again for each.
type index map[*yaml.Node]map[string]*yaml.Node

// names returns n's children by name, building the table on first use.
func (idx index) names(n *yaml.Node) map[string]*yaml.Node {
	if m, ok := idx[n]; ok {
		return m
	}
	m := map[string]*yaml.Node{}
	for i := 0; i < len(n.Content); i++ {
		var name string
		var c *yaml.Node
		if n.Kind == yaml.MappingNode {
			if i+1 >= len(n.Content) {
				break
			}
			name, c = n.Content[i].Value, n.Content[i+1]
			i++
		} else {
			c = n.Content[i]
			name = nameOf(c)
			if name == "" {
				continue
			}
		}
		if _, dup := m[name]; !dup {
			m[name] = c
		}
	}
	idx[n] = m
	return m
}

// nameOf returns the value of a mapping's name key, or "".
func nameOf(c *yaml.Node) string {
	if c.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(c.Content); i += 2 {
		if c.Content[i].Value == "name" {
			return c.Content[i+1].Value
		}
	}
	return ""
}

func splitPath(path string) []string {
	var parts []string
	for _, p := range strings.Split(path, ".") {
		for p != "" {
			i := strings.IndexByte(p, '[')
			if i < 0 {
				parts = append(parts, p)
				break
			}
			if i > 0 {
				parts = append(parts, p[:i])
			}
			j := strings.IndexByte(p[i:], ']')
			if j < 0 {
				parts = append(parts, p[i:])
				break
			}
			parts = append(parts, p[i:i+j+1])
			p = p[i+j+1:]
		}
	}
	return parts
}

// child returns the child of n that part names: a mapping's value by key, a
// sequence's item by [i] or, for a sequence of mappings, by its name key (the
// first of each name); idx keeps the tables of names it builds.
func child(n *yaml.Node, part string, idx index) *yaml.Node {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil || (n.Kind != yaml.MappingNode && n.Kind != yaml.SequenceNode) {
		return nil
	}
	if n.Kind == yaml.SequenceNode && strings.HasPrefix(part, "[") && strings.HasSuffix(part, "]") {
		k, err := strconv.Atoi(part[1 : len(part)-1])
		if err == nil && k >= 0 && k < len(n.Content) {
			return n.Content[k]
		}
	}
	return idx.names(n)[part]
}

// Decode reads one YAML document from r into v, rejecting fields that v
// does not have and numbers with a fraction for its integers, and returns
// the document's node tree for Locate. An empty document is an error, and
// so is one larger than MaxFileSize, a key that is not a scalar, a repeated
// key and a mapping of more than MaxMappingKeys keys. A panic of the YAML
// decoder is returned as an error: no document may crash the program.
func Decode(r io.Reader, v any) (*yaml.Node, error) {
	data, err := readLimited(r)
	if errors.Is(err, errTooLarge) {
		return nil, fmt.Errorf("%w (the limit for a YAML document)", err)
	}
	if err != nil {
		return nil, err
	}
	return decodeBytes(data, v)
}

// decodeBytes is Decode of a document read whole.
func decodeBytes(data []byte, v any) (root *yaml.Node, err error) {
	defer func() {
		if p := recover(); p != nil {
			root = nil
			err = &Problems{List: []Problem{{Msg: fmt.Sprintf("the YAML decoder failed on this document: %v", p)}}}
		}
	}()
	root = &yaml.Node{}
	if err := yaml.Unmarshal(data, root); err != nil {
		return nil, cleanYAMLError(err)
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil, errors.New("empty document")
	}
	var ps Problems
	if checkKeys(root, &ps); ps.Err() != nil {
		return root, &ps
	}
	d := yaml.NewDecoder(bytes.NewReader(data))
	d.KnownFields(true)
	if err := d.Decode(v); err != nil {
		err = cleanYAMLError(err)
		explain(err, reflect.TypeOf(v))
		return root, err
	}
	checkWhole(root, reflect.TypeOf(v), &ps, 0)
	return root, ps.Err()
}

// explain rewrites the YAML package's messages about the shape of a value into
// words a person writing the file can act on: "field x not found in type
// pkg.T" becomes "unknown field "x"; did you mean "y"?", naming the fields
// that T accepts, and "cannot unmarshal !!seq into map[string]*pkg.T"
// becomes "want a mapping (name: value), got a list".
func explain(err error, t reflect.Type) {
	var ps *Problems
	if !errors.As(err, &ps) {
		return
	}
	types := map[string]reflect.Type{}
	collectTypes(t, types)
	for i, p := range ps.List {
		var field, typ string
		if n, _ := fmt.Sscanf(p.Msg, "field %s not found in type %s", &field, &typ); n == 2 {
			if st, ok := types[typ]; ok && st.Kind() == reflect.Struct {
				ps.List[i].Msg = Unknown("field", field, yamlFields(st))
			}
			continue
		}
		if msg, ok := explainMismatch(p.Msg, types); ok {
			ps.List[i].Msg = msg
		}
	}
}

// explainMismatch rewrites "cannot unmarshal !!TAG[ `VALUE`] into TYPE",
// the YAML package's message for a value of the wrong kind, as "want W,
// got G". It reports false for any other message.
func explainMismatch(msg string, types map[string]reflect.Type) (string, bool) {
	rest, ok := strings.CutPrefix(msg, "cannot unmarshal ")
	if !ok {
		return "", false
	}
	i := strings.LastIndex(rest, " into ")
	if i < 0 {
		return "", false
	}
	got, into := rest[:i], rest[i+len(" into "):]
	tag, value, _ := strings.Cut(got, " ")
	want := describeType(into, types)
	if want == "" {
		return "", false
	}
	return fmt.Sprintf("want %s, got %s", want, describeNode(tag, value)), true
}

// describeNode names what a YAML node is, from its short tag and, for a
// scalar, its value as the YAML package quotes it (`value`, cut after 7
// characters).
func describeNode(tag, value string) string {
	switch tag {
	case "!!seq":
		return "a list"
	case "!!map":
		return "a mapping"
	case "!!null":
		return "an empty value"
	case "!!str":
		return "the text " + value
	case "!!int", "!!float":
		return "the number " + value
	case "!!bool":
		return "the boolean " + value
	}
	if value == "" {
		return tag
	}
	return tag + " " + value
}

// describeType names what a Go type accepts in YAML, from the type's name
// as the YAML package prints it; named types are looked up in types. It
// returns "" for a type it cannot describe.
func describeType(name string, types map[string]reflect.Type) string {
	name = strings.TrimLeft(name, "*")
	if t, ok := types[name]; ok {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		return kindWords(t.Kind())
	}
	switch {
	case strings.HasPrefix(name, "map["):
		return kindWords(reflect.Map)
	case strings.HasPrefix(name, "[]"):
		return kindWords(reflect.Slice)
	case strings.HasPrefix(name, "struct {"):
		return kindWords(reflect.Struct)
	}
	for k := reflect.Bool; k <= reflect.String; k++ {
		if k.String() == name { // a basic type is named as its kind
			return kindWords(k)
		}
	}
	return ""
}

// kindWords names what YAML value a Go type of kind k takes, or "".
func kindWords(k reflect.Kind) string {
	switch {
	case k >= reflect.Int && k <= reflect.Uint64:
		return "a whole number"
	case k == reflect.Float32 || k == reflect.Float64:
		return "a number"
	case k == reflect.String:
		return "text"
	case k == reflect.Bool:
		return "true or false"
	case k == reflect.Slice || k == reflect.Array:
		return "a list"
	case k == reflect.Map:
		return "a mapping (name: value)"
	case k == reflect.Struct:
		return "a mapping of fields"
	}
	return ""
}

// collectTypes records every named type reachable from t by its
// package-qualified name, as the YAML package prints it.
func collectTypes(t reflect.Type, seen map[string]reflect.Type) {
	for {
		if t.Name() != "" {
			if _, ok := seen[t.String()]; ok {
				return
			}
			seen[t.String()] = t
		}
		if k := t.Kind(); k != reflect.Pointer && k != reflect.Slice && k != reflect.Array && k != reflect.Map {
			break
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.IsExported() || f.Anonymous {
			collectTypes(f.Type, seen)
		}
	}
}

// yamlFields lists the keys a struct type accepts.
func yamlFields(t reflect.Type) []string {
	var names []string
	for _, f := range fieldsOf(t) {
		names = append(names, f.key)
	}
	return names
}

// field is a key a struct type accepts and the type of its value.
type field struct {
	key string
	typ reflect.Type
}

// fieldsOf lists the keys a struct type accepts, with inline structs'
// keys in place, as the YAML package decodes them.
func fieldsOf(t reflect.Type) []field {
	var fs []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			if f.Type.Kind() == reflect.Struct {
				fs = append(fs, fieldsOf(f.Type)...)
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fs = append(fs, field{name, f.Type})
	}
	return fs
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// checkWhole reports every number with a fraction that n gives to an
// integer of t, which the YAML package would truncate without a word
// ("devices: 1.5" becomes 1). Values of types that decode themselves are theirs to check.
func checkWhole(n *yaml.Node, t reflect.Type, ps *Problems, depth int) {
	if n == nil || depth > 100 { // an alias may lead back to itself
		return
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) > 0 {
			checkWhole(n.Content[0], t, ps, depth+1)
		}
		return
	case yaml.AliasNode:
		checkWhole(n.Alias, t, ps, depth+1)
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return
	}
	switch k := t.Kind(); {
	case k >= reflect.Int && k <= reflect.Uint64:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!float" {
			return
		}
		if f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64); err == nil && f == math.Trunc(f) {
			return
		}
		ps.List = append(ps.List, Problem{Line: n.Line, Msg: fmt.Sprintf("want a whole number, got the number `%s`", n.Value)})
	case k == reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return
		}
		fs := fieldsOf(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			if checkMerged(n.Content[i], n.Content[i+1], t, ps, depth) {
				continue
			}
			for _, f := range fs {
				if f.key == n.Content[i].Value {
					checkWhole(n.Content[i+1], f.typ, ps, depth+1)
					break
				}
			}
		}
	case k == reflect.Map:
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if !checkMerged(n.Content[i], n.Content[i+1], t, ps, depth) {
				checkWhole(n.Content[i+1], t.Elem(), ps, depth+1)
			}
		}
	case k == reflect.Slice || k == reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return
		}
		for _, c := range n.Content {
			checkWhole(c, t.Elem(), ps, depth+1)
		}
	}
}

// checkMerged checks the mappings that a merge key ("<<: *defaults", or
// "<<: [*a, *b]") merges into a mapping of t, as checkWhole checks that
// mapping, and reports whether key was a merge key.
func checkMerged(key, value *yaml.Node, t reflect.Type, ps *Problems, depth int) bool {
	if key.Kind != yaml.ScalarNode || key.ShortTag() != "!!merge" {
		return false
	}
	if value.Kind == yaml.SequenceNode {
		for _, c := range value.Content {
			checkWhole(c, t, ps, depth+1)
		}
		return true
	}
	checkWhole(value, t, ps, depth+1)
	return true
}

// cleanYAMLError turns the YAML package's messages into ours: no "yaml: "
// prefix and one problem per line.
func cleanYAMLError(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		ps := &Problems{}
		for _, e := range te.Errors {
			ps.List = append(ps.List, parseYAMLProblem(e))
		}
		return ps
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	return &Problems{List: []Problem{parseYAMLProblem(msg)}}
}

// parseYAMLProblem splits "line 7: msg" into a Problem.
func parseYAMLProblem(s string) Problem {
	s = strings.TrimPrefix(s, "yaml: ")
	if rest, ok := strings.CutPrefix(s, "line "); ok {
		if i := strings.Index(rest, ": "); i > 0 {
			if n, err := strconv.Atoi(rest[:i]); err == nil {
				return Problem{Line: n, Msg: rest[i+2:]}
			}
		}
	}
	return Problem{Msg: s}
}

// InFile returns err with the file name attached: Problems get their File
// set, other errors are wrapped as "name: err".
func InFile(name string, err error) error {
	if err == nil {
		return nil
	}
	var ps *Problems
	if errors.As(err, &ps) {
		ps.File = name
		return ps
	}
	return fmt.Errorf("%s: %w", name, err)
}

// Unknown returns the message for a name that is not among valid:
//
//	unknown system "tsubame"; did you mean "tsubame3"?
//
// It lists the valid names when no near one exists and there are few.
func Unknown(kind, name string, valid []string) string {
	msg := fmt.Sprintf("unknown %s %q", kind, name)
	if near := Nearest(name, valid); len(near) > 0 {
		q := make([]string, len(near))
		for i, n := range near {
			q[i] = strconv.Quote(n)
		}
		return msg + "; did you mean " + strings.Join(q, " or ") + "?"
	}
	if len(valid) == 0 {
		return msg + " (there are none)"
	}
	sorted := append([]string(nil), valid...)
	sort.Strings(sorted)
	if len(sorted) <= 12 {
		return msg + " (valid: " + strings.Join(sorted, ", ") + ")"
	}
	return msg + fmt.Sprintf(" (valid: %s, and %d more)", strings.Join(sorted[:12], ", "), len(sorted)-12)
}

// Nearest returns up to three names from valid closest to name: those within
// an edit distance of a third of the name's length (at least 2), or that
// contain name or are contained in it, closest first; none for a blank name.
func Nearest(name string, valid []string) []string {
	type cand struct {
		s string
		d int
	}
	if strings.TrimSpace(name) == "" {
		return nil // every name contains it, and none is near
	}
	lname := strings.ToLower(name)
	limit := max(2, len(name)/3)
	var cs []cand
	for _, v := range valid {
		lv := strings.ToLower(v)
		d := editDistance(lname, lv)
		if d <= limit || (len(lname) >= 3 && (strings.Contains(lv, lname) || strings.Contains(lname, lv))) {
			cs = append(cs, cand{v, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].s < cs[j].s
	})
	var out []string
	for i := 0; i < len(cs) && i < 3; i++ {
		out = append(out, cs[i].s)
	}
	return out
}

// Suggest returns the name of valid to suggest for name, or "": the
// nearest Nearest finds (a few letters off), else the shortest name of
// which name is an abbreviation: its letters in order, at least three of
// them and at least half as many as the name's ("thruput" of
// "throughput"). One-letter names (flags such as -o and -h) are never
// suggested: every word is near them.
func Suggest(name string, valid []string) string {
	valid = slices.DeleteFunc(slices.Clone(valid), func(v string) bool { return len(v) < 2 })
	if near := Nearest(name, valid); len(near) > 0 {
		return near[0]
	}
	best := ""
	for _, v := range valid {
		if len(name) >= 3 && 2*len(name) >= len(v) && isSubsequence(strings.ToLower(name), strings.ToLower(v)) && (best == "" || len(v) < len(best)) {
			best = v
		}
	}
	return best
}

// isSubsequence reports whether the bytes of a appear in b in order.
func isSubsequence(a, b string) bool {
	i := 0
	for j := 0; i < len(a) && j < len(b); j++ {
		if a[i] == b[j] {
			i++
		}
	}
	return i == len(a)
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// YAMLFiles lists the files that paths name, in order: a file as it is, a
// directory as its *.yaml and *.yml files (any case) in name order. A
// directory without one is an error that names it as kind ("catalog
// directory x has no *.yaml or *.yml files"): a path that adds nothing is
// more likely a mistake than meant.
func YAMLFiles(kind string, paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the path is said once, with its kind
			}
			return nil, fmt.Errorf("%s %s: %w", kind, p, err)
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		ents, err := os.ReadDir(p) // sorted by name
		if err != nil {
			return nil, err
		}
		n := len(files)
		for _, e := range ents {
			ext := strings.ToLower(filepath.Ext(e.Name()))
			if !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
				files = append(files, filepath.Join(p, e.Name()))
			}
		}
		if len(files) == n {
			return nil, fmt.Errorf("%s directory %s has no *.yaml or *.yml files", kind, p)
		}
	}
	return files, nil
}
