package cmd

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"scaleplan/fit/logs"
	"scaleplan/internal/calib"
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
