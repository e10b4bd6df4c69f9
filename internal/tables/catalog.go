package tables

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"scaleplan/hw"
	"scaleplan/internal/config"
	"scaleplan/model"
	"scaleplan/scenarios"
)

// Catalog returns the tables `scaleplan catalog` prints: the systems,
// devices, models and recipes of cat and prof, and the shipped scenarios
// with their descriptions (a scenario that does not load shows its error).
func Catalog(cat *hw.Catalog, prof *model.Profiles) []Named {
	return []Named{
		{Key: "systems", T: systemsTable(cat)},
		{Key: "devices", T: devicesTable(cat)},
		{Key: "models", T: modelsTable(prof)},
		{Key: "recipes", T: recipesTable(prof)},
		{Key: "scenarios", T: scenariosTable()},
	}
}

// systemsTable lists cat's systems with their nodes, fabric and price.
func systemsTable(cat *hw.Catalog) *Table {
	t := &Table{Title: "Systems", Header: []string{"system", "node", "max nodes", "devices/node", "device", "fabric", "transports", "$/device-h"}}
	for _, name := range cat.SystemNames() {
		s := cat.Systems[name]
		row := []string{name, s.Node, strconv.Itoa(s.MaxNodes), "", "", "-", strings.Join(slices.Sorted(maps.Keys(s.Transports)), ","), "-"}
		if n, ok := cat.Nodes[s.Node]; ok {
			row[3], row[4] = strconv.Itoa(n.Devices), n.Device
		}
		if s.Fabric.Kind != "" {
			row[5] = fmt.Sprintf("%s %v", s.Fabric.Kind, s.Fabric.Bandwidth)
		}
		if s.PricePerDeviceHour > 0 {
			row[7] = strconv.FormatFloat(s.PricePerDeviceHour, 'f', 2, 64)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// devicesTable lists cat's devices with their peak rates and memory.
func devicesTable(cat *hw.Catalog) *Table {
	t := &Table{Title: "Devices", Header: []string{"device", "vendor", "kind", "fp32", "fp16", "memory", "memory bw", "TDP"}}
	for _, name := range cat.DeviceNames() {
		d := cat.Devices[name]
		t.Rows = append(t.Rows, []string{name, d.Vendor, string(d.Kind), orDash(d.Peak.FP32), orDash(d.Peak.FP16), orDash(d.Memory), orDash(d.MemoryBandwidth), orDash(d.TDP)})
	}
	return t
}

// modelsTable lists prof's models with their size and cost per sample.
func modelsTable(prof *model.Profiles) *Table {
	t := &Table{Title: "Models", Header: []string{"model", "task", "dataset", "params", "forward/sample", "class"}}
	for _, name := range prof.ModelNames() {
		m := prof.Models[name]
		t.Rows = append(t.Rows, []string{name, m.Task, m.Dataset, strconv.FormatInt(m.Params, 10), m.ForwardFLOPs.String(), string(m.Class)})
	}
	return t
}

// recipesTable lists prof's recipes with their batches, length and target.
func recipesTable(prof *model.Profiles) *Table {
	t := &Table{Title: "Recipes", Header: []string{"recipe", "model", "optimizer", "devices", "batch/device", "global batch", "length", "target"}}
	for _, name := range prof.RecipeNames() {
		r := prof.Recipes[name]
		target := "-"
		if len(r.Targets) > 0 {
			tg := r.Target()
			target = fmt.Sprintf("%s %g", tg.Metric, tg.Value)
		}
		t.Rows = append(t.Rows, []string{name, r.Model, string(r.Optimizer), strconv.Itoa(r.Devices), strconv.FormatInt(r.PerDeviceBatch, 10), strconv.FormatInt(r.GlobalBatch, 10), recipeLength(r), target})
	}
	return t
}

// recipeLength is r's length in epochs or steps, and where its runs
// reach the target sooner, that with the configured length at most:
// "3 epochs (at most 30 epochs)".
func recipeLength(r *model.Recipe) string {
	length := strconv.FormatFloat(r.Epochs, 'g', -1, 64) + " epochs"
	if r.Iterations > 0 {
		length = strconv.FormatInt(r.Iterations, 10) + " steps"
	}
	if x := r.Reached; x != nil {
		at := strconv.FormatFloat(x.Epochs, 'g', -1, 64) + " epochs"
		if x.Iterations > 0 {
			at = strconv.FormatInt(x.Iterations, 10) + " steps"
		}
		length = at + " (at most " + length + ")"
	}
	return length
}

// scenariosTable lists the shipped scenarios with their descriptions.
func scenariosTable() *Table {
	t := &Table{Title: "Scenarios", Header: []string{"scenario", "description"}}
	for _, name := range scenarios.Names() {
		s, err := scenarios.Load(name, scenarios.Options{})
		desc := ""
		if err != nil {
			desc = "error: " + err.Error()
		} else {
			desc = s.Description
		}
		t.Rows = append(t.Rows, []string{name, desc})
	}
	return t
}

// entry is one section of CatalogEntry's text: a kind ("system",
// "device p100-sxm2") and the value shown as YAML.
type entry struct {
	kind  string
	value any
}

// CatalogEntry returns the text `scaleplan catalog show NAME` prints:
// every entry of cat and prof called name, and sc (nil when name is no
// shipped scenario), each as YAML with units after a "# kind name" line;
// sc's inline catalogue and profiles are left out.
// A system comes with its node and device, a node with its device; a
// device may be named as CUDA names it. A zero figure of the catalogue or
// the profiles is marked "not given" (a device's zero peak rate
// "unsupported"); the scenario, shown with its defaults filled in, is not
// marked. A name of no entry is an error that suggests the nearest.
func CatalogEntry(name string, cat *hw.Catalog, prof *model.Profiles, sc *scenarios.Scenario) ([]byte, error) {
	found := hardwareEntries(name, cat)
	if m, ok := prof.Models[name]; ok {
		found = append(found, entry{"model", m})
	}
	if d, ok := prof.Datasets[name]; ok {
		found = append(found, entry{"dataset", d})
	}
	if r, ok := prof.Recipes[name]; ok {
		found = append(found, entry{"recipe", r})
	}
	if sc != nil {
		shown := *sc
		shown.Catalog, shown.Profiles = nil, nil
		found = append(found, entry{"scenario (defaults filled in)", shown})
	}
	if len(found) == 0 {
		var all []string
		all = append(all, cat.SystemNames()...)
		all = append(all, cat.NodeNames()...)
		all = append(all, cat.DeviceNames()...)
		all = append(all, prof.ModelNames()...)
		all = append(all, prof.DatasetNames()...)
		all = append(all, prof.RecipeNames()...)
		all = append(all, scenarios.Names()...)
		slices.Sort(all)
		return nil, errors.New(config.Unknown("entry", name, slices.Compact(all)))
	}
	return entriesYAML(name, found)
}

// hardwareEntries returns the system, node and device of cat called name,
// a system with its node and the last node with its device; a device also
// by the name CUDA gives it, as nvidia-smi and the logs print it.
func hardwareEntries(name string, cat *hw.Catalog) []entry {
	var found []entry
	if s, ok := cat.Systems[name]; ok {
		found = append(found, entry{"system", s})
		if n, ok := cat.Nodes[s.Node]; ok && s.Node != name {
			found = append(found, entry{"node " + s.Node, n})
		}
	}
	if n, ok := cat.Nodes[name]; ok {
		found = append(found, entry{"node", n})
	}
	if len(found) > 0 {
		last := found[len(found)-1].value.(*hw.Node)
		if d, ok := cat.Devices[last.Device]; ok {
			found = append(found, entry{"device " + last.Device, d})
		}
	} else if d, ok := cat.Devices[name]; ok {
		found = append(found, entry{"device", d})
	} else if d := cat.DeviceCalled(name); d != nil {
		found = append(found, entry{"device " + d.Name, d})
	}
	return found
}

// entriesYAML writes found as YAML documents after their "# kind name"
// lines, separated by blank lines.
func entriesYAML(name string, found []entry) ([]byte, error) {
	var b bytes.Buffer
	for i, s := range found {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "# %s\n", strings.TrimSpace(s.kind+" "+entryName(s.kind, name)))
		var doc yaml.Node
		if err := doc.Encode(s.value); err != nil {
			return nil, err
		}
		if !strings.HasPrefix(s.kind, "scenario") {
			markNotGiven(&doc)
		}
		y, err := yaml.Marshal(&doc)
		if err != nil {
			return nil, err
		}
		b.Write(y)
	}
	return b.Bytes(), nil
}

// markNotGiven adds the comment "not given" to every field of n whose
// value is a zero quantity ("0", "0 W", "0 FLOP/s"), an empty string, null
// or an empty list: in the catalogue and the profiles a zero means the entry
// does not give the figure (a default or "unpublished" applies), and a
// bare "power: 0 W" would read as a measured zero. A device's zero peak
// rate is marked "unsupported" instead. Scenarios are shown
// with their defaults filled in and are not marked.
func markNotGiven(n *yaml.Node) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "peak" && v.Kind == yaml.MappingNode {
				// A device's peak rate of 0 is a precision it does not
				// support (docs/catalog.md).
				for j := 1; j < len(v.Content); j += 2 {
					if notGiven(v.Content[j]) {
						v.Content[j].LineComment = "unsupported"
					}
				}
				continue
			}
			if notGiven(v) {
				v.LineComment = "not given"
			}
			markNotGiven(v)
		}
		return
	}
	for _, c := range n.Content {
		markNotGiven(c)
	}
}

// notGiven reports whether v is a zero quantity, an empty string, null or
// an empty sequence. Booleans are never marked: false is a statement.
func notGiven(v *yaml.Node) bool {
	switch v.Kind {
	case yaml.SequenceNode:
		return len(v.Content) == 0
	case yaml.ScalarNode:
		if v.Tag == "!!bool" {
			return false
		}
		if v.Value == "" || v.Tag == "!!null" {
			return true
		}
		num, _, _ := strings.Cut(v.Value, " ")
		f, err := strconv.ParseFloat(num, 64)
		return err == nil && f == 0
	}
	return false
}

// entryName is name unless kind already names the entry ("node tsubame3").
func entryName(kind, name string) string {
	if strings.Contains(kind, " ") && !strings.HasPrefix(kind, "scenario") {
		return ""
	}
	return name
}

// orDash is v, or "-" for 0 (a figure the catalogue does not give).
func orDash[T interface {
	~float64
	String() string
}](v T) string {
	if v == 0 {
		return "-"
	}
	return v.String()
}
