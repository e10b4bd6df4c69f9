package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/engine/tensor"
	"scaleplan/fit"
	"scaleplan/fit/logs"
	"scaleplan/hw"
	"scaleplan/internal/atomicfile"
	"scaleplan/internal/benchlog"
	"scaleplan/internal/tables"
)

// logStream is a bench log written record by record to --out as the
// records are made (benchlog.File), so that a run interrupted or failing
// half-way keeps what it measured; without --out it writes nothing.
type logStream struct {
	f   *benchlog.File
	run string
	who string // the command, for messages
	n   int    // records written
}

// startLog starts the log of run at path for command who, or none if
// path is "".
func startLog(path, run, who string) (*logStream, error) {
	s := &logStream{run: run, who: who}
	if path == "" {
		return s, nil
	}
	f, err := benchlog.Create(path)
	if err != nil {
		return nil, err
	}
	s.f = f
	return s, nil
}

// add writes recs.
func (s *logStream) add(recs ...benchlog.Record) error {
	if s.f == nil {
		return nil
	}
	for _, r := range recs {
		if err := s.f.Write(r); err != nil {
			return err
		}
		s.n++
	}
	return nil
}

// abort ends the log with an end record that marks it incomplete, puts it
// in place, says so on w and returns cause, the error that stopped the
// run: the reason is "interrupted" when ctx is done, else the error.
func (s *logStream) abort(ctx context.Context, w io.Writer, cause error) error {
	if s.f == nil {
		return cause
	}
	reason := "interrupted"
	if ctx.Err() == nil {
		reason = "error: " + cutLine(cause.Error(), 300)
	}
	if err := s.f.CloseIncomplete(s.run, reason); err != nil {
		return errors.Join(cause, err)
	}
	fmt.Fprintf(w, "%s: %s holds the %d %s written before it stopped, marked incomplete (%s)\n", s.who, s.f.Path(), s.n, tables.Plural(s.n, "record", "records"), reason)
	return cause
}

// discard deletes the log written so far, for the whole log to be written
// in its place; it does nothing after abort.
func (s *logStream) discard() {
	if s.f != nil {
		s.f.Remove()
	}
}

// cutLine returns the first line of s, cut to n bytes.
func cutLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}

// warnBackend warns when an OpenBLAS build runs without
// OPENBLAS_CORETYPE, which OpenBLAS reads before the program starts.
func warnBackend(w io.Writer) {
	if tensor.Backend() == "openblas" && os.Getenv("OPENBLAS_CORETYPE") == "" {
		fmt.Fprintf(w, "bench: warning: OPENBLAS_CORETYPE is not set, and OpenBLAS chose core %q at start-up;\n"+
			"bench: a wrong choice costs up to 10-20x: rerun with OPENBLAS_CORETYPE=SkylakeX on AVX-512 Xeons\n", tensor.CoreName())
	}
}

// benchMachine describes this machine for the header record.
func benchMachine() *benchlog.Machine {
	host, _ := os.Hostname()
	m := &benchlog.Machine{Host: host, OS: runtime.GOOS, Arch: runtime.GOARCH, Cores: runtime.NumCPU(),
		Framework: "scaleplan engine " + runtime.Version(), Backend: tensor.BackendDetail()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		if info, err := hw.ParseCPUInfo(f); err == nil {
			m.CPU = info.Model
		}
		f.Close()
	}
	return m
}

// header returns the header record of run with its configuration.
func header(run string, config any) (benchlog.Record, error) {
	b, err := json.Marshal(config)
	if err != nil {
		return benchlog.Record{}, err
	}
	// UseNumber keeps integers beyond 2^53 (a 64-bit seed) digit for
	// digit; benchlog writes json.Number as it is.
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return benchlog.Record{}, err
	}
	return benchlog.Record{Kind: benchlog.KindHeader, Run: run, Tool: benchTool, Machine: benchMachine(), Config: m}, nil
}

// encodeLog returns the records as a bench log.
func encodeLog(recs []benchlog.Record) ([]byte, error) {
	var b bytes.Buffer
	bw := benchlog.NewWriter(&b)
	for _, r := range recs {
		if err := bw.Write(r); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
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
