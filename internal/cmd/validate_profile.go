package cmd

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/fit/logs"
	"scaleplan/hw"
	"scaleplan/internal/tables"
	"scaleplan/validate"
)

// profileFlags are validate's --profile and --carry-to.
func profileFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "profile", Usage: "compare the per-operator profile `FILE` with the operator model, operator kind by operator kind (docs/validation-profiles.md): what bench --framework torch --profile writes, NAME.profile.json beside its bench log NAME.jsonl, whose record of the same configuration says how it ran; repeatable"},
		&cli.StringFlag{Name: "carry-to", Usage: "with --profile: predict each profiled step on the catalogue's device `NAME` from the profile, each operator kind's measured time scaled by the operator model's ratio of its time there to the profiled device's"},
	}
}

// profileLog returns the bench log beside the profile file path: its name
// with .jsonl for .profile.json.
func profileLog(path string) string { return strings.TrimSuffix(path, ".profile.json") + ".jsonl" }

// runValidateProfiles is `validate --profile FILE...`: each profile's
// device time per operator kind against the operator model's, and with
// --carry-to the step each predicts on that device.
func runValidateProfiles(c *cli.Context, format string) error {
	cat, prof, err := loadCatalogAndProfiles(c)
	if err != nil {
		return err
	}
	var to *hw.Device
	if name := c.String("carry-to"); name != "" {
		if to, err = cat.Device(name); err != nil {
			return usagef("validate: --carry-to: %v", err)
		}
	}
	in := &validate.LogReader{Catalog: cat}
	var rows []*validate.ProfileKinds
	for _, path := range c.StringSlice("profile") {
		ps, err := readProfileFile(path)
		if err != nil {
			return fmt.Errorf("validate: --profile: %w", err)
		}
		lg, err := logs.ReadFile(profileLog(path))
		if err != nil {
			return fmt.Errorf("validate: --profile %s: its bench log: %w", path, err)
		}
		ms, err := in.Measurements(lg, prof, map[string]int{})
		if err != nil {
			return fmt.Errorf("validate: --profile %s: %w", path, err)
		}
		for i := range ps {
			p := &ps[i]
			m := profiledRecord(p, ms)
			if m == nil {
				return fmt.Errorf("validate: --profile %s: %s has no record of %s %s at batch %d (a Chrome trace names no configuration: profile with bench --framework torch --profile)",
					p.Source, profileLog(path), p.Model, p.Precision, p.Batch)
			}
			pk, err := validate.CompareProfile(p, m, cat, prof)
			if err != nil {
				return fmt.Errorf("validate: --profile: %w", err)
			}
			rows = append(rows, pk)
		}
	}
	t, err := tables.Profiles(rows, to)
	if err != nil {
		return fmt.Errorf("validate: --carry-to: %w", err)
	}
	lines := []string{"device time per step of each profile's aten operators, by operator kind, against the operator model's at the catalogue's figures (docs/validation-profiles.md)"}
	return tables.WriteReport(c.App.Writer, format, []tables.Named{{Key: "profiles", T: t}}, nil, lines)
}

// profiledRecord returns the record of ms that profile p profiled: its
// model, precision and batch; nil for none.
func profiledRecord(p *logs.Profile, ms []validate.Measured) *validate.Measured {
	for i := range ms {
		if m := &ms[i]; m.Model == p.Model && m.Precision == p.Precision && m.Batch == p.Batch && !m.OOM {
			return m
		}
	}
	return nil
}
