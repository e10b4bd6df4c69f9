package cmd

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
	"go.yaml.in/yaml/v3"

	"scaleplan/hw"
	"scaleplan/internal/config"
	"scaleplan/internal/tables"
	"scaleplan/model"
	"scaleplan/scenarios"
)

// profilesFlag is the global --profiles flag.
var profilesFlag = &cli.StringSliceFlag{Name: "profiles", Usage: "extra model profile `FILE|DIR` (YAML) that adds or overrides models, datasets and recipes; repeatable"}

// loadCatalog returns the catalogue with the --catalog files merged in.
func loadCatalog(c *cli.Context) (*hw.Catalog, error) {
	return hw.Load(c.StringSlice("catalog")...)
}

// loadProfiles returns the profiles with the --profiles files merged in.
func loadProfiles(c *cli.Context) (*model.Profiles, error) {
	return model.Load(c.StringSlice("profiles")...)
}

// loadCatalogAndProfiles returns the catalogue and the profiles with the
// --catalog and --profiles files merged in.
func loadCatalogAndProfiles(c *cli.Context) (*hw.Catalog, *model.Profiles, error) {
	cat, err := loadCatalog(c)
	if err != nil {
		return nil, nil, err
	}
	prof, err := loadProfiles(c)
	if err != nil {
		return nil, nil, err
	}
	return cat, prof, nil
}

// scenarioOptions returns the extra files every scenario is resolved against.
func scenarioOptions(c *cli.Context) scenarios.Options {
	return scenarios.Options{CatalogPaths: c.StringSlice("catalog"), ProfilePaths: c.StringSlice("profiles")}
}

// calibrationFlag is --calibration of the commands that predict or simulate
// scenarios (plan has its own, about systems).
func calibrationFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "calibration", Usage: "calibration `FILE` written by `scaleplan fit --out`, or published (the published figures built in: ResNet-50 at fp16 on the V100, A100 and H100): a scenario whose model, device and precision it measured computes by its law, in place of its roofline or calibration; repeatable"}
}

// readCalibrations reads the files of --calibration into opt.
func readCalibrations(cmd string, files []string, opt *scenarios.Options) error {
	if len(files) == 0 {
		return nil
	}
	var err error
	if opt.Calibrations, err = scenarios.ReadCalibrationFiles(files); err != nil {
		return fmt.Errorf("%s: calibration: %w", cmd, err)
	}
	return nil
}

// loadScenarios resolves the scenarios names against opt and, with
// calibrations in opt, fails as calibrationsUsed does when one of them
// applies to none.
func loadScenarios(cmd string, opt scenarios.Options, names ...string) ([]*scenarios.Resolved, error) {
	rs := make([]*scenarios.Resolved, len(names))
	for i, name := range names {
		r, err := scenarios.Load(name, opt)
		if err != nil {
			return nil, err
		}
		for j, prev := range rs[:i] {
			if prev.Scenario.Name == r.Scenario.Name {
				return nil, usagef("%s: %s and %s are both scenario %q: its lines and rows could not be told apart", cmd, names[j], name, r.Scenario.Name)
			}
		}
		rs[i] = r
	}
	if err := calibrationsUsed(cmd, opt.Calibrations, rs); err != nil {
		return nil, err
	}
	return rs, nil
}

// calibrationsUsed returns an error naming the first --calibration file
// that none of the scenarios rs computes by, with what they needed and
// what the file has. The published figures built in are no file the user
// wrote: a scenario none of them applies to computes by its roofline, as
// its title and compute note say.
func calibrationsUsed(cmd string, files []scenarios.CalibrationFile, rs []*scenarios.Resolved) error {
	for _, f := range files {
		if f.Path == scenarios.Published {
			continue
		}
		var want []string
		used := false
		for _, r := range rs {
			used = used || r.CalibratedBy == f.Path
			if w := fmt.Sprintf("%s on %s at %s", r.Mdl.Name, r.Device.Name, r.Precision); !slices.Contains(want, w) {
				want = append(want, w)
			}
		}
		if !used {
			what := "the scenario (it needs"
			if len(rs) > 1 {
				what = fmt.Sprintf("any of the %d scenarios (they need", len(rs))
			}
			return fmt.Errorf("%s: calibration %s: no throughput entry applies to %s %s; the file has: %s)",
				cmd, f.Path, what, strings.Join(want, ", "), f.Entries())
		}
	}
	return nil
}

func catalogCommand() *cli.Command {
	return &cli.Command{
		Name:      "catalog",
		Usage:     "list systems, devices, models, recipes and scenarios",
		ArgsUsage: " ",
		Description: "Lists what the hardware catalogue, the model profiles and the shipped scenarios\n" +
			"hold, as one table each. Extra entries come from --catalog and --profiles files.\n\n" +
			"Examples:\n" +
			"   scaleplan catalog\n" +
			"   scaleplan catalog --format md\n" +
			"   scaleplan --catalog mycluster.yaml catalog show mycluster",
		Flags: []cli.Flag{formatFlag()},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("catalog takes no argument (did you mean `catalog show %s`?)", c.Args().First())
			}
			if err := checkFormat(c.String("format")); err != nil {
				return err
			}
			cat, prof, err := loadCatalogAndProfiles(c)
			if err != nil {
				return err
			}
			return tables.Write(c.App.Writer, c.String("format"), catalogTables(cat, prof))
		},
		Subcommands: []*cli.Command{{
			Name:      "show",
			Usage:     "every field of one entry, with its unit",
			ArgsUsage: "NAME",
			Description: "Prints the entry called NAME (a system, node, device, model, dataset, recipe or\n" +
				"scenario) as YAML, every quantity with its unit. A system is shown with its node\n" +
				"and device. A device may also be named as CUDA names it (nvidia-smi,\n" +
				"torch.cuda.get_device_name), ignoring case.\n\n" +
				"Examples:\n" +
				"   scaleplan catalog show tsubame3\n" +
				"   scaleplan catalog show 'NVIDIA H100 80GB HBM3'",
			// withArgs, so that a flag after the name is refused as a
			// flag and not counted as a second name.
			Action: withArgs(func(c *cli.Context, args []string) error {
				if len(args) != 1 {
					return usagef("catalog show takes one NAME, got %d arguments", len(args))
				}
				cat, prof, err := loadCatalogAndProfiles(c)
				if err != nil {
					return err
				}
				return showEntry(c.App.Writer, args[0], cat, prof, scenarioOptions(c))
			}),
		}},
	}
}

// catalogTables builds the tables `scaleplan catalog` prints.
func catalogTables(cat *hw.Catalog, prof *model.Profiles) []tables.Named {
	sys := tables.Table{Title: "Systems", Header: []string{"system", "node", "max nodes", "devices/node", "device", "fabric", "transports", "$/device-h"}}
	for _, name := range cat.SystemNames() {
		s := cat.Systems[name]
		row := []string{name, s.Node, strconv.Itoa(s.MaxNodes), "", "", "-", strings.Join(sortedKeys(s.Transports), ","), "-"}
		if n, ok := cat.Nodes[s.Node]; ok {
			row[3], row[4] = strconv.Itoa(n.Devices), n.Device
		}
		if s.Fabric.Kind != "" {
			row[5] = fmt.Sprintf("%s %v", s.Fabric.Kind, s.Fabric.Bandwidth)
		}
		if s.PricePerDeviceHour > 0 {
			row[7] = strconv.FormatFloat(s.PricePerDeviceHour, 'f', 2, 64)
		}
		sys.Rows = append(sys.Rows, row)
	}
	dev := tables.Table{Title: "Devices", Header: []string{"device", "vendor", "kind", "fp32", "fp16", "memory", "memory bw", "TDP"}}
	for _, name := range cat.DeviceNames() {
		d := cat.Devices[name]
		dev.Rows = append(dev.Rows, []string{name, d.Vendor, string(d.Kind), orDash(d.Peak.FP32), orDash(d.Peak.FP16), orDash(d.Memory), orDash(d.MemoryBandwidth), orDash(d.TDP)})
	}
	mdl := tables.Table{Title: "Models", Header: []string{"model", "task", "dataset", "params", "forward/sample", "class"}}
	for _, name := range prof.ModelNames() {
		m := prof.Models[name]
		mdl.Rows = append(mdl.Rows, []string{name, m.Task, m.Dataset, strconv.FormatInt(m.Params, 10), m.ForwardFLOPs.String(), string(m.Class)})
	}
	rcp := tables.Table{Title: "Recipes", Header: []string{"recipe", "model", "optimizer", "devices", "batch/device", "global batch", "length", "target"}}
	for _, name := range prof.RecipeNames() {
		r := prof.Recipes[name]
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
		target := "-"
		if len(r.Targets) > 0 {
			tg := r.Target()
			target = fmt.Sprintf("%s %g", tg.Metric, tg.Value)
		}
		rcp.Rows = append(rcp.Rows, []string{name, r.Model, string(r.Optimizer), strconv.Itoa(r.Devices), strconv.FormatInt(r.PerDeviceBatch, 10), strconv.FormatInt(r.GlobalBatch, 10), length, target})
	}
	sc := tables.Table{Title: "Scenarios", Header: []string{"scenario", "description"}}
	for _, name := range scenarios.Names() {
		s, err := scenarios.Load(name, scenarios.Options{})
		desc := ""
		if err != nil {
			desc = "error: " + err.Error()
		} else {
			desc = s.Description
		}
		sc.Rows = append(sc.Rows, []string{name, desc})
	}
	return []tables.Named{{Key: "systems", T: &sys}, {Key: "devices", T: &dev}, {Key: "models", T: &mdl}, {Key: "recipes", T: &rcp}, {Key: "scenarios", T: &sc}}
}

// showEntry prints every entry called name, as YAML with units.
func showEntry(w io.Writer, name string, cat *hw.Catalog, prof *model.Profiles, opt scenarios.Options) error {
	type section struct {
		kind  string
		value any
	}
	var found []section
	if s, ok := cat.Systems[name]; ok {
		found = append(found, section{"system", s})
		if n, ok := cat.Nodes[s.Node]; ok && s.Node != name {
			found = append(found, section{"node " + s.Node, n})
		}
	}
	if n, ok := cat.Nodes[name]; ok {
		found = append(found, section{"node", n})
	}
	if len(found) > 0 {
		last := found[len(found)-1].value.(*hw.Node)
		if d, ok := cat.Devices[last.Device]; ok {
			found = append(found, section{"device " + last.Device, d})
		}
	} else if d, ok := cat.Devices[name]; ok {
		found = append(found, section{"device", d})
	} else if d := cat.DeviceCalled(name); d != nil {
		// CUDA's name for it, as nvidia-smi and the logs print it.
		found = append(found, section{"device " + d.Name, d})
	}
	if m, ok := prof.Models[name]; ok {
		found = append(found, section{"model", m})
	}
	if d, ok := prof.Datasets[name]; ok {
		found = append(found, section{"dataset", d})
	}
	if r, ok := prof.Recipes[name]; ok {
		found = append(found, section{"recipe", r})
	}
	if slices.Contains(scenarios.Names(), name) {
		s, err := scenarios.Load(name, opt)
		if err != nil {
			return err
		}
		sc := s.Scenario
		sc.Catalog, sc.Profiles = nil, nil
		found = append(found, section{"scenario (defaults filled in)", sc})
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
		return errors.New(config.Unknown("entry", name, slices.Compact(all)))
	}
	for i, s := range found {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "# %s\n", strings.TrimSpace(s.kind+" "+entryName(s.kind, name)))
		var doc yaml.Node
		if err := doc.Encode(s.value); err != nil {
			return err
		}
		if !strings.HasPrefix(s.kind, "scenario") {
			markNotGiven(&doc)
		}
		b, err := yaml.Marshal(&doc)
		if err != nil {
			return err
		}
		w.Write(b)
	}
	return nil
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

func orDash[T interface {
	~float64
	String() string
}](v T) string {
	if v == 0 {
		return "-"
	}
	return v.String()
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
