package cmd

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/fit/logs"
	"scaleplan/hw"
	"scaleplan/internal/calib"
	"scaleplan/internal/tables"
	"scaleplan/scenarios"
	"scaleplan/sim"
	"scaleplan/validate"
)

// measuredFabricFromFlag is validate's --fabric-from.
func measuredFabricFromFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "fabric-from", Usage: "with --measured nccl-tests logs and --system: fit the links of the system to the collective tests of nccl-tests log `FILE` (FILE:LINE: its one test whose table starts at LINE, as validate names it) as `fit --system` does, and predict the --measured tests with that fit in place of the catalogue's links (before any --calibration): calibrate on one table, predict another; repeatable"}
}

// fabricFrom fits the links of --system to the collective tests of the
// --fabric-from logs with the exchange alg (validate.FitFabric) and
// returns the fit as a calibration file named after the logs, and a note
// a line a fitted level; nil without --fabric-from. A fit that sets no
// level is an error.
func fabricFrom(c *cli.Context, cat *hw.Catalog, alg sim.Algorithm) ([]scenarios.CalibrationFile, []string, error) {
	names := c.StringSlice("fabric-from")
	if len(names) == 0 {
		return nil, nil, nil
	}
	system := c.String("system")
	if system == "" {
		return nil, nil, usagef("validate: --fabric-from fits the links of a catalogue system; give it with --system")
	}
	none, err := deviceRenamer("validate", "")
	if err != nil {
		return nil, nil, err
	}
	files, lines, err := fabricFromLines(names)
	if err != nil {
		return nil, nil, err
	}
	lgs, err := readLogs(files, func(*logs.Log) {}, none)
	if err != nil {
		return nil, nil, fmt.Errorf("validate: --fabric-from: %w", err)
	}
	for i, lg := range lgs {
		if l := lines[i]; l > 0 {
			lg.Collectives = slices.DeleteFunc(lg.Collectives, func(c logs.Collective) bool { return c.Line != l })
			if len(lg.Collectives) == 0 {
				return nil, nil, usagef("validate: --fabric-from %s: no collective test starts at line %d of %s", names[i], l, files[i])
			}
		}
	}
	if !slices.ContainsFunc(lgs, func(lg *logs.Log) bool { return len(lg.Collectives) > 0 }) {
		return nil, nil, usagef("validate: --fabric-from %s: no collective test (nccl-tests output) to fit the links of %s to", strings.Join(names, ", "), system)
	}
	fc, err := validate.FitFabric(cat, system, lgs, alg, sim.CollectiveTime)
	if err != nil {
		return nil, nil, fmt.Errorf("validate: --fabric-from: %w", err)
	}
	entries := fc.Entries()
	if len(entries) == 0 {
		return nil, nil, fmt.Errorf("validate: --fabric-from %s: no level of %s could be fitted: %s", strings.Join(names, ", "), system, strings.Join(tables.FabricLines(fc), "; "))
	}
	path := "fit of " + strings.Join(names, ", ")
	var notes []string
	for _, e := range entries {
		notes = append(notes, fabricNote(path, e))
	}
	return []scenarios.CalibrationFile{{Path: path, Cal: &calib.Calibration{Fabric: entries}}}, notes, nil
}

// fabricFromLines splits each --fabric-from name into its file and, for
// FILE:LINE, the line its one test starts at (0: every test of the file).
func fabricFromLines(names []string) (files []string, lines []int, err error) {
	for _, n := range names {
		file, line := n, 0
		if i := strings.LastIndex(n, ":"); i > 0 {
			if l, err := strconv.Atoi(n[i+1:]); err == nil {
				if l < 1 {
					return nil, nil, usagef("validate: --fabric-from %s: line %d: want a line >= 1 where a test starts", n, l)
				}
				file, line = n[:i], l
			}
		}
		files, lines = append(files, file), append(lines, line)
	}
	return files, lines, nil
}

// fabricNote describes a fitted level: "intra of aws-p5 fitted to FILE:
// 250.5 GB/s, 735 ns a message (nccl), mean error 9.9% over 32 sizes".
func fabricNote(path string, e calib.FabricEntry) string {
	s := fmt.Sprintf("%s: %s of %s, %v, %v a message (%s), mean error %.1f%% over its %d sizes", path, e.Level, e.System, e.Bandwidth, e.Latency, e.Algorithm, 100*e.Error, e.Sizes)
	if len(e.Undetermined) > 0 {
		s += fmt.Sprintf("; %s not determined by its sizes", strings.Join(e.Undetermined, " and "))
	}
	return s
}
