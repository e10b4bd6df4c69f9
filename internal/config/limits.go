package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// MaxFileSize is the largest YAML document a loader reads, in bytes: 16 MiB,
// some 400 times the largest shipped one (validate/cases.yaml, 44 KiB) and
// more than a catalogue of 100,000 devices takes. A file is read through
// this limit, so that an endless one (/dev/zero, a pipe that never closes
// its end) is refused once the limit is passed rather than filling memory.
const MaxFileSize = 16 << 20

// MaxMappingKeys is the most keys one YAML mapping may have: 10,000, far
// more than any catalogue, profile or scenario has.
const MaxMappingKeys = 10000

// MaxKeyPairs bounds the work of the YAML decoder's check for repeated
// keys, which compares every key of a mapping with every other: a mapping
// of k keys costs k(k-1)/2 comparisons, some 11 ns each, and a document
// may cost at most 100 million in all (about a second: three mappings of
// 8,000 keys), where 16 MiB of mappings of 10,000 keys would cost hours.
// Decode finds repeated keys itself, in linear time, before the decoder
// runs.
const MaxKeyPairs = 100_000_000

// MaxListed is the most problems an error lists; the rest are counted
// ("and 7979 more"), so that an error stays readable and its size bounded.
const MaxListed = 20

// ReadFile reads the named file through MaxFileSize. kind names the file's
// role ("catalogue file") in the error for a file past the limit:
//
//	big.yaml: larger than 16 MiB (the limit for a catalogue file)
//
// Every error names the file. A directory is an error; any other file that
// is not a regular one (a pipe, a device) is read up to the limit.
func ReadFile(name, kind string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch {
	case fi.IsDir():
		return nil, fmt.Errorf("%s: is a directory, not a %s", name, kind)
	case fi.Mode().IsRegular() && fi.Size() > MaxFileSize:
		return nil, tooLarge(name, kind)
	}
	data, err := readLimited(f)
	if errors.Is(err, errTooLarge) {
		return nil, tooLarge(name, kind)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return data, nil
}

// DecodeFile is ReadFile followed by Decode: it reads the named file
// strictly into v, and every error names the file.
func DecodeFile(name, kind string, v any) (*yaml.Node, error) {
	data, err := ReadFile(name, kind)
	if err != nil {
		return nil, err
	}
	root, err := decodeBytes(data, v)
	return root, InFile(name, err)
}

// errTooLarge is readLimited's error for input past MaxFileSize.
var errTooLarge = errors.New("larger than " + sizeWords(MaxFileSize))

// readLimited reads r to its end, or fails with errTooLarge once it has
// given more than MaxFileSize bytes.
func readLimited(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, errTooLarge
	}
	return data, nil
}

func tooLarge(name, kind string) error {
	return fmt.Errorf("%s: %w (the limit for a %s)", name, errTooLarge, kind)
}

// sizeWords writes a whole number of MiB as "16 MiB", anything else in bytes.
func sizeWords(n int64) string {
	if n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// checkKeys reports, in document order, every mapping key that is not a
// scalar (a list or mapping as a key, which no document of ours has and
// which the YAML decoder of v3.0.1 panicked on), every key that repeats an
// earlier one of its mapping, and every mapping of more than MaxMappingKeys
// keys. It takes time linear in the document: the decoder's own check of
// repeated keys is quadratic.
func checkKeys(root *yaml.Node, ps *Problems) {
	var pairs int64
	walkKeys(root, nil, &pairs, ps)
}

func walkKeys(n *yaml.Node, at *pathPart, pairs *int64, ps *Problems) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for i, c := range n.Content {
			next := at
			if n.Kind == yaml.SequenceNode {
				next = &pathPart{up: at, index: i}
			}
			walkKeys(c, next, pairs, ps)
		}
	case yaml.MappingNode:
		checkMapping(n, at, pairs, ps)
	}
}

// keyID is what makes two keys the same for the YAML decoder.
type keyID struct {
	kind  yaml.Kind
	value string
}

// checkMapping checks the keys of mapping n, at path at, and the mappings
// under it; pairs counts the pairs of keys of the document's mappings.
func checkMapping(n *yaml.Node, at *pathPart, pairs *int64, ps *Problems) {
	k := int64(len(n.Content) / 2)
	if k > MaxMappingKeys {
		ps.List = append(ps.List, Problem{Path: at.String(), Line: n.Line,
			Msg: fmt.Sprintf("a mapping of %d keys; at most %d are allowed", k, MaxMappingKeys)})
		return
	}
	before := *pairs
	if *pairs += k * (k - 1) / 2; *pairs > MaxKeyPairs {
		if before <= MaxKeyPairs { // said once
			ps.List = append(ps.List, Problem{Path: at.String(), Line: n.Line,
				Msg: fmt.Sprintf("a mapping of %d keys, which brings the document's mappings to %d pairs of keys; "+
					"at most %d are allowed (the YAML decoder compares every pair)", k, *pairs, int64(MaxKeyPairs))})
		}
		return
	}
	seen := make(map[keyID]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i]
		target := key
		if key.Kind == yaml.AliasNode && key.Alias != nil {
			target = key.Alias
		}
		if target.Kind != yaml.ScalarNode {
			ps.List = append(ps.List, Problem{Path: at.String(), Line: key.Line,
				Msg: fmt.Sprintf("a key must be a name or number, not %s", kindName(target.Kind))})
			continue
		}
		id := keyID{key.Kind, key.Value}
		if line, dup := seen[id]; dup {
			ps.List = append(ps.List, Problem{Path: at.String(), Line: key.Line,
				Msg: fmt.Sprintf("mapping key %q already defined at line %d", key.Value, line)})
			continue
		}
		seen[id] = key.Line
		walkKeys(n.Content[i+1], &pathPart{up: at, key: key.Value, isKey: true}, pairs, ps)
	}
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return "a node of kind " + strconv.Itoa(int(k))
}

// pathPart is one step of a YAML path, linked to its parent, so that a walk
// builds the path's text only for a node it reports.
type pathPart struct {
	up    *pathPart
	key   string
	index int
	isKey bool
}

// String writes the path as Problem.Path does: "devices.x", "items[2].n".
func (p *pathPart) String() string {
	if p == nil {
		return ""
	}
	var parts []*pathPart
	for q := p; q != nil; q = q.up {
		parts = append(parts, q)
	}
	var b []byte
	for i := len(parts) - 1; i >= 0; i-- {
		q := parts[i]
		if !q.isKey {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(q.index), 10)
			b = append(b, ']')
			continue
		}
		if len(b) > 0 {
			b = append(b, '.')
		}
		b = append(b, q.key...)
	}
	return string(b)
}

// Suggester writes Unknown's messages for the problems of one document,
// searching for near names for the first MaxListed unknown names only:
// each search compares the name with every valid one, and a document of
// thousands of unknown names among thousands of valid ones would cost
// their product. Its zero value is ready to use.
type Suggester struct{ n int }

// Unknown is config.Unknown for the first MaxListed calls; later calls
// give the message without near names or the list of valid ones, in time
// independent of len(valid).
func (s *Suggester) Unknown(kind, name string, valid []string) string {
	if s.n++; s.n <= MaxListed {
		return Unknown(kind, name, valid)
	}
	return fmt.Sprintf("unknown %s %q (%d valid names; near ones are suggested for the first %d unknown names only)",
		kind, name, len(valid), MaxListed)
}
