package cmd

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/calibrate"
	"scaleplan/internal/benchlog"
	"scaleplan/internal/tables"
)

// replayFlags are the flags of validate --engine that say what to
// measure: the log of --engine-from says it instead.
var replayFlags = []string{"engine-model", "engine-batch", "engine-workers", "engine-transport", "engine-threads", "engine-steps",
	"engine-warmup", "engine-rounds", "engine-warm-rounds", "engine-data", "engine-out", "engine-core-guard"}

// replayEngine writes the report of the validate --engine run whose
// --engine-out log is path, measuring nothing (calibrate.Replay); with
// --engine-calibration, as that calibration.
func replayEngine(c *cli.Context, format, path string) error {
	for _, name := range replayFlags {
		if c.IsSet(name) {
			return usagef("validate --engine-from: --%s: the log says what was measured; leave it out", name)
		}
	}
	mode, err := calibrationMode(c)
	if err != nil {
		return err
	}
	if !c.IsSet("engine-calibration") {
		mode = "" // as the log was measured
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("validate --engine-from: %w", err)
	}
	defer f.Close()
	var recs []benchlog.Record
	rd := benchlog.NewReader(f)
	for {
		r, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("validate --engine-from: %s: %w", path, err)
		}
		recs = append(recs, r)
	}
	stderr := c.App.ErrWriter
	rep, err := calibrate.Replay(recs, calibrate.ReplayOptions{Path: path, Mode: mode, Notes: stderr})
	if err != nil {
		return err
	}
	run := rep.Header
	fmt.Fprintf(stderr, "validate --engine-from: %s: %d measurements and %d link probes of %d rounds, measured by %s; nothing measured now\n",
		path, rep.Logged, run.Rounds*len(run.Transports), run.Rounds, tables.Machine(recs[0].Machine))
	for _, w := range calibrate.UnboundedWarnings(rep.Calibration, run.Batches) {
		fmt.Fprintln(stderr, w)
	}
	backend, cores := "", 0
	if m := recs[0].Machine; m != nil {
		backend, _, _ = strings.Cut(m.Backend, " ")
		cores = m.Cores
	}
	return writeEngineReport(c, format, tables.EngineTitle(run.Engine.ModelName(), backend, cores), rep.Calibration, rep.Rows)
}
