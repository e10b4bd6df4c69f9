package cmd

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/urfave/cli/v2"

	"scaleplan/engine/tensor"
	"scaleplan/fit"
	"scaleplan/fit/logs"
	"scaleplan/hw"
	"scaleplan/internal/atomicfile"
	"scaleplan/internal/benchlog"
	"scaleplan/internal/tables"
)

// warnBackend warns when an OpenBLAS build runs without
// OPENBLAS_CORETYPE, which OpenBLAS reads before the program starts.
func warnBackend(w io.Writer) {
	if tensor.Backend() == "openblas" && os.Getenv("OPENBLAS_CORETYPE") == "" {
		fmt.Fprintf(w, "bench: warning: OPENBLAS_CORETYPE is not set, and OpenBLAS chose core %q at start-up;\n"+
			"bench: a wrong choice costs up to 10-20x: rerun with OPENBLAS_CORETYPE=SkylakeX on AVX-512 Xeons\n", tensor.CoreName())
	}
}

// benchMachine describes this machine for the header record of an
// engine run: benchlog.ThisMachine with the CPU model (hw, from
// /proc/cpuinfo), the Go version and the tensor backend (engine/tensor),
// which internal/benchlog may not import.
func benchMachine() *benchlog.Machine {
	m := benchlog.ThisMachine()
	m.Framework, m.Backend = "scaleplan engine "+runtime.Version(), tensor.BackendDetail()
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		if info, err := hw.ParseCPUInfo(f); err == nil {
			m.CPU = info.Model
		}
		f.Close()
	}
	return m
}

// writeLog writes the log to --out atomically, if set, and returns the
// name to call it by.
func writeLog(c *cli.Context, b []byte) (string, error) {
	out := c.String("out")
	if out == "" {
		return "the bench log", nil
	}
	return out, atomicfile.WriteBytes(out, b)
}

// finish writes the log to --out, the table to stdout and, with --plot,
// the charts of the log's fit, in that order, so that a failure later
// loses nothing written before it.
func finish(c *cli.Context, log []byte, t *tables.Table, format string) error {
	name, err := writeLog(c, log)
	if err != nil {
		return err
	}
	if err := t.Write(c.App.Writer, format); err != nil {
		return err
	}
	dir := c.String("plot")
	if dir == "" {
		return nil
	}
	lg, err := logs.Read(bytes.NewReader(log), name)
	if err != nil {
		return fmt.Errorf("bench: --plot: %w", err)
	}
	rep, err := fit.Fit([]*logs.Log{lg}, &fit.Options{})
	if err != nil {
		return fmt.Errorf("bench: --plot: %w", err)
	}
	return writeFitCharts(c, "bench", dir, rep, []*logs.Log{lg})
}
