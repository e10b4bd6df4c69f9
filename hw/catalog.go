package hw

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"scaleplan/internal/config"
)

//go:embed catalog/*.yaml
var embedded embed.FS

// source is a document entries came from, for locating problems.
type source struct {
	name string     // file name shown in errors
	root *yaml.Node // nil for entries built at run time
}

// origins maps an entry key such as "nodes.dgx-a100" to its source.
type origins map[string]*source

var builtin struct {
	once    sync.Once
	cat     *Catalog
	origins origins
	err     error
}

// loadBuiltin parses the embedded catalogue and adds the localhost entries,
// once.
func loadBuiltin() (*Catalog, origins, error) {
	builtin.once.Do(func() {
		c := &Catalog{}
		orig := origins{}
		names, err := fs.Glob(embedded, "catalog/*.yaml")
		if err != nil {
			builtin.err = err
			return
		}
		slices.Sort(names)
		for _, name := range names {
			data, err := embedded.ReadFile(name)
			if err != nil {
				builtin.err = err
				return
			}
			part, root, err := decodeRaw(bytes.NewReader(data))
			if err != nil {
				builtin.err = config.InFile("hw/"+name, err)
				return
			}
			c.merge(part, orig, &source{name: "hw/" + name, root: root})
		}
		dev, node, sys := Localhost()
		c.merge(&Catalog{
			Devices: map[string]*Device{dev.Name: dev},
			Nodes:   map[string]*Node{node.Name: node},
			Systems: map[string]*System{sys.Name: sys},
		}, orig, &source{name: "localhost (detected)"})
		if err := c.check(orig); err != nil {
			builtin.err = err
			return
		}
		builtin.cat, builtin.origins = c, orig
	})
	return builtin.cat, builtin.origins, builtin.err
}

// Default returns the built-in catalogue: the embedded YAML files
// (hw/catalog/*.yaml) and the localhost entries detected at run time (see
// Localhost). The files are parsed and this machine is inspected once; each
// call returns a fresh deep copy the caller may change. It is safe for
// concurrent use.
func Default() (*Catalog, error) {
	c, _, err := loadBuiltin()
	if err != nil {
		return nil, err
	}
	return c.Clone(), nil
}

// Parse reads a self-contained catalogue from r: strict YAML (unknown fields
// are errors), then Validate. Every problem is reported at once, with its
// line. Use Load to add entries to the built-in catalogue or to refer to its
// devices and nodes.
func Parse(r io.Reader) (*Catalog, error) {
	c, root, err := decodeRaw(r)
	if err != nil {
		return nil, err
	}
	if ps := c.validate(true); ps.Err() != nil {
		ps.Locate(root)
		return nil, ps
	}
	return c, nil
}

// ReadFile is Parse of the named file, with the file name in errors.
// The file is read through config.MaxFileSize.
func ReadFile(name string) (*Catalog, error) {
	data, err := config.ReadFile(name, fileKind)
	if err != nil {
		return nil, err
	}
	c, err := Parse(bytes.NewReader(data))
	return c, config.InFile(name, err)
}

// fileKind names a catalogue file in the error for one past
// config.MaxFileSize.
const fileKind = "catalogue file"

// Load returns the built-in catalogue (Default) with each path merged in
// order. A path is a YAML file, or a directory whose *.yaml and *.yml files
// are read in name order. An entry adds to the catalogue or replaces the one
// of the same name, whole. The merged catalogue is validated, so a file may
// use the built-in devices and nodes; every problem is reported at once,
// with the file and line of the entry it concerns.
func Load(paths ...string) (*Catalog, error) {
	return LoadWith(paths, nil)
}

// Inline is a catalogue decoded as part of another document, such as the
// catalog section of a scenario file.
type Inline struct {
	Catalog *Catalog   // the decoded entries
	File    string     // the document's file name, for errors
	Root    *yaml.Node // the YAML node the entries were decoded from, for lines
}

// LoadWith is Load followed by the inline catalogues, merged in order after
// the files. Problems in an inline entry are located in its document.
func LoadWith(paths []string, inline []Inline) (*Catalog, error) {
	base, baseOrig, err := loadBuiltin()
	if err != nil {
		return nil, err
	}
	files, err := config.YAMLFiles("catalog", paths)
	if err != nil {
		return nil, err
	}
	c := base.Clone()
	orig := maps.Clone(baseOrig)
	for _, name := range files {
		var part Catalog
		root, err := config.DecodeFile(name, fileKind, &part)
		if err != nil {
			return nil, err
		}
		part.setDefaults()
		c.merge(&part, orig, &source{name: name, root: root})
	}
	for _, in := range inline {
		if in.Catalog == nil {
			continue
		}
		part := in.Catalog.Clone()
		part.setDefaults()
		c.merge(part, orig, &source{name: in.File, root: in.Root})
	}
	if err := c.check(orig); err != nil {
		return nil, err
	}
	return c, nil
}

// decodeRaw reads one document strictly and fills in names and defaults.
func decodeRaw(r io.Reader) (*Catalog, *yaml.Node, error) {
	var c Catalog
	root, err := config.Decode(r, &c)
	if err != nil {
		return nil, root, err
	}
	c.setDefaults()
	return &c, root, nil
}

// setDefaults fills in names from keys and the defaults that need no other entry.
func (c *Catalog) setDefaults() {
	for name, d := range c.Devices {
		if d == nil {
			continue
		}
		d.Name = name
		if d.HostLink.Bandwidth == 0 {
			d.HostLink.Bandwidth = PCIeBandwidth(d.HostLink.Gen, d.HostLink.Lanes)
		}
	}
	for name, n := range c.Nodes {
		if n != nil {
			n.Name = name
		}
	}
	for name, s := range c.Systems {
		if s == nil {
			continue
		}
		s.Name = name
		if s.Fabric.Oversubscription == 0 {
			s.Fabric.Oversubscription = 1
		}
		for tn, t := range s.Transports {
			if t.Scope == "" {
				t.Scope = DefaultScope(tn)
				s.Transports[tn] = t
			}
		}
	}
}

// merge adds or replaces src's entries in c, recording where each came from.
func (c *Catalog) merge(src *Catalog, orig origins, from *source) {
	if c.Devices == nil {
		c.Devices = map[string]*Device{}
	}
	if c.Nodes == nil {
		c.Nodes = map[string]*Node{}
	}
	if c.Systems == nil {
		c.Systems = map[string]*System{}
	}
	for name, d := range src.Devices {
		c.Devices[name] = d
		orig["devices."+name] = from
	}
	for name, n := range src.Nodes {
		c.Nodes[name] = n
		orig["nodes."+name] = from
	}
	for name, s := range src.Systems {
		c.Systems[name] = s
		orig["systems."+name] = from
	}
}

// check validates a merged catalogue and locates each problem in the file
// that defined its entry. Problems of one file come as one *config.Problems;
// several files give their errors joined.
func (c *Catalog) check(orig origins) error {
	ps := c.validate(true)
	if ps.Err() == nil {
		return nil
	}
	var order []*source
	byFile := map[*source]*config.Problems{}
	unknown := &source{}
	for _, p := range ps.List {
		src := unknown
		if parts := strings.SplitN(p.Path, ".", 3); len(parts) >= 2 {
			if s, ok := orig[parts[0]+"."+parts[1]]; ok {
				src = s
			}
		}
		g, ok := byFile[src]
		if !ok {
			g = &config.Problems{File: src.name}
			byFile[src] = g
			order = append(order, src)
		}
		g.List = append(g.List, p)
	}
	var errs []error
	for _, src := range order {
		g := byFile[src]
		g.Locate(src.root)
		errs = append(errs, g)
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// Device returns the device named name, or an error with a did-you-mean
// suggestion. The result belongs to c.
func (c *Catalog) Device(name string) (*Device, error) {
	if d, ok := c.Devices[name]; ok && d != nil {
		return d, nil
	}
	return nil, errors.New(unknownMsg("device", name, c.DeviceNames()))
}

// DeviceCalled returns the device that name names (Device.Is: its key or
// one of its Names, ignoring case), or nil.
func (c *Catalog) DeviceCalled(name string) *Device {
	if d := c.Devices[name]; d != nil {
		return d
	}
	for _, k := range c.DeviceNames() {
		if d := c.Devices[k]; d != nil && d.Is(name) {
			return d
		}
	}
	return nil
}

// Node returns the node named name, or an error with a did-you-mean
// suggestion. The result belongs to c.
func (c *Catalog) Node(name string) (*Node, error) {
	if n, ok := c.Nodes[name]; ok && n != nil {
		return n, nil
	}
	return nil, errors.New(unknownMsg("node", name, c.NodeNames()))
}

// System returns the system named name, or an error with a did-you-mean
// suggestion. The result belongs to c.
func (c *Catalog) System(name string) (*System, error) {
	if s, ok := c.Systems[name]; ok && s != nil {
		return s, nil
	}
	return nil, errors.New(unknownMsg("system", name, c.SystemNames()))
}

// Resolve returns the system named name with its node and device.
func (c *Catalog) Resolve(name string) (*System, *Node, *Device, error) {
	s, err := c.System(name)
	if err != nil {
		return nil, nil, nil, err
	}
	n, err := c.Node(s.Node)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("system %q: %w", name, err)
	}
	d, err := c.Device(n.Device)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("system %q: node %q: %w", name, n.Name, err)
	}
	return s, n, d, nil
}

// DeviceNames returns the device names, sorted.
func (c *Catalog) DeviceNames() []string { return sortedKeys(c.Devices) }

// NodeNames returns the node names, sorted.
func (c *Catalog) NodeNames() []string { return sortedKeys(c.Nodes) }

// SystemNames returns the system names, sorted.
func (c *Catalog) SystemNames() []string { return sortedKeys(c.Systems) }

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func unknownMsg(kind, name string, valid []string) string {
	return config.Unknown(kind, name, valid)
}

// Clone returns a deep copy of c.
func (c *Catalog) Clone() *Catalog {
	out := &Catalog{
		Devices: make(map[string]*Device, len(c.Devices)),
		Nodes:   make(map[string]*Node, len(c.Nodes)),
		Systems: make(map[string]*System, len(c.Systems)),
	}
	for k, d := range c.Devices {
		if d != nil {
			d2 := *d
			d = &d2
		}
		out.Devices[k] = d
	}
	for k, n := range c.Nodes {
		if n != nil {
			n2 := *n
			n2.Storage = slices.Clone(n.Storage)
			n2.NICs = slices.Clone(n.NICs)
			n = &n2
		}
		out.Nodes[k] = n
	}
	for k, s := range c.Systems {
		if s != nil {
			s2 := *s
			s2.Transports = maps.Clone(s.Transports)
			for tn, t := range s2.Transports {
				t.NCCLProtocols = slices.Clone(t.NCCLProtocols)
				s2.Transports[tn] = t
			}
			if s.SharedStorage != nil {
				st := *s.SharedStorage
				s2.SharedStorage = &st
			}
			s = &s2
		}
		out.Systems[k] = s
	}
	return out
}
