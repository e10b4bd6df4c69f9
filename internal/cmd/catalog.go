package cmd

import (
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"scaleplan/compute"
	"scaleplan/hw"
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
	return &cli.StringSliceFlag{Name: "calibration", Usage: "calibration `FILE` written by `scaleplan fit --out`, or published (the published figures built in: ResNet-50 at fp16 on the V100, A100 and H100): a scenario whose model, device and precision it measured computes by its law, in place of its roofline or calibration; its fabric entries set the links of the system they name, and a comm entry of the scenario's model its all-reduce; repeatable"}
}

// hostFlag is --host of the commands that predict or simulate scenarios.
func hostFlag() cli.Flag {
	return &cli.StringFlag{Name: "host", Usage: "host costs `FILE` of the machines that run the scenarios, a table of `scaleplan bench host --out FILE` (scripts/torchhost.py) run on such a machine (with a CUDA device it also measures a small operator's dispatch and launch, cuda_op, a synchronisation, cuda_sync, and a timing event, cuda_event): the operator model charges a scenario's eager PyTorch steps these in place of its defaults (docs/compute-calibration.md, \"The host's own costs\")"}
}

// readHost reads the table of --host at path, if any, into opt.
func readHost(cmd, path string, opt *scenarios.Options) error {
	h, err := hostTable(cmd, path)
	if err != nil {
		return err
	}
	opt.Host = h
	return nil
}

// hostTable reads the table of command cmd's --host at path; nil for
// none.
func hostTable(cmd, path string) (*compute.HostCosts, error) {
	if path == "" {
		return nil, nil
	}
	h, err := compute.ReadHostFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: --host: %w", cmd, err)
	}
	return &h, nil
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
// calibrations in opt, fails as scenarios.CalibrationsUsed does when one of them
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
	if err := scenarios.CalibrationsUsed(opt.Calibrations, rs); err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	return rs, nil
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
			return tables.Write(c.App.Writer, c.String("format"), tables.Catalog(cat, prof))
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
				var sc *scenarios.Scenario
				if slices.Contains(scenarios.Names(), args[0]) {
					r, err := scenarios.Load(args[0], scenarioOptions(c))
					if err != nil {
						return err
					}
					sc = &r.Scenario
				}
				text, err := tables.CatalogEntry(args[0], cat, prof, sc)
				if err != nil {
					return err
				}
				_, err = c.App.Writer.Write(text)
				return err
			}),
		}},
	}
}
