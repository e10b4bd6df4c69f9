package cmd

import (
	"fmt"
	"io"
	"slices"

	"github.com/urfave/cli/v2"

	"scaleplan/fit/logs"
	"scaleplan/internal/calib"
	"scaleplan/internal/config"
	"scaleplan/internal/tables"
	"scaleplan/validate"
)

// fitOperators fits the operator classes' efficiencies and the host's
// cost per kernel of each device and framework mode to the logs'
// measurements of one device (validate.FitOperators); nil without
// --operators.
func fitOperators(c *cli.Context, lgs []*logs.Log) ([]validate.OperatorsFit, error) {
	if !c.Bool("operators") {
		return nil, nil
	}
	cat, prof, err := loadCatalogAndProfiles(c)
	if err != nil {
		return nil, err
	}
	in := &validate.LogReader{Catalog: cat}
	if in.Host, err = hostTable("fit", c.String("host")); err != nil {
		return nil, err
	}
	var ms []validate.Measured
	left := map[string]int{}
	for _, lg := range lgs {
		m, err := in.Measurements(lg, prof, left)
		if err != nil {
			return nil, fmt.Errorf("fit: --operators: %w", err)
		}
		ms = append(ms, m...)
	}
	fits, err := validate.FitOperators(ms, cat, prof, nil)
	if err != nil {
		return nil, fmt.Errorf("fit: --operators: %w", err)
	}
	return fits, nil
}

// operatorEntries returns the calibration entries of fits.
func operatorEntries(fits []validate.OperatorsFit) []calib.OperatorsEntry {
	var es []calib.OperatorsEntry
	for _, f := range fits {
		es = append(es, f.Entry)
	}
	return es
}

// fitProfiles fits the operator classes of each device and mode to the
// per-operator profiles of --profile (validate.FitProfiles); nil without
// it.
func fitProfiles(c *cli.Context) ([]validate.OperatorsFit, error) {
	paths := c.StringSlice("profile")
	if len(paths) == 0 {
		return nil, nil
	}
	var ps []logs.Profile
	for _, p := range paths {
		got, err := readProfileFile(p)
		if err != nil {
			return nil, fmt.Errorf("fit: --profile: %w", err)
		}
		ps = append(ps, got...)
	}
	cat, err := loadCatalog(c)
	if err != nil {
		return nil, err
	}
	fits, err := validate.FitProfiles(ps, cat)
	if err != nil {
		return nil, fmt.Errorf("fit: --profile: %w", err)
	}
	return fits, nil
}

// readProfileFile returns the per-operator profiles of the file at path
// (logs.ReadProfiles), read within config.ReadFile's bound.
func readProfileFile(path string) ([]logs.Profile, error) {
	data, err := config.ReadFile(path, "profile")
	if err != nil {
		return nil, err
	}
	return logs.ReadProfiles(path, data)
}

// mergeOperators returns the fits of logs, then those of profiles of a
// device and mode the logs gave none, saying on w which it left out.
func mergeOperators(w io.Writer, fromLogs, fromProfiles []validate.OperatorsFit) []validate.OperatorsFit {
	out := slices.Clone(fromLogs)
	for _, f := range fromProfiles {
		if slices.ContainsFunc(fromLogs, func(g validate.OperatorsFit) bool { return g.Device == f.Device && g.Mode == f.Mode }) {
			fmt.Fprintf(w, "fit: --profile: %s %s is fitted to the logs' step times; its profiles' fit is left out\n", f.Device, f.Mode)
			continue
		}
		out = append(out, f)
	}
	return out
}

// runProfileFit is fit with --profile and no LOG: the operator classes of
// the profiles, and --out writes them.
func runProfileFit(c *cli.Context) error {
	format := c.String("format")
	if err := checkFormat(format); err != nil {
		return err
	}
	fits, err := fitProfiles(c)
	if err != nil {
		return err
	}
	if err := tables.Write(c.App.Writer, format, tables.OperatorsFit(fits)); err != nil {
		return err
	}
	out := c.String("out")
	if out == "" {
		return nil
	}
	cal := &calib.Calibration{Level: calib.DefaultLevel, Operators: operatorEntries(fits)}
	if err := cal.WriteFile(out); err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "fit: wrote %s: %d operators %s\n", out, len(cal.Operators), tables.Plural(len(cal.Operators), "entry", "entries"))
	return nil
}
