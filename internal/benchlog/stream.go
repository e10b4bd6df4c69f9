package benchlog

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
)

// Stream is a log written record by record as the records are made (a
// File), so that a run interrupted or failing half-way keeps what it
// measured. A Stream without a path writes nothing.
type Stream struct {
	f   *File
	run string
	who string // the command, for messages
	n   int    // records written
}

// NewStream starts the log of run at path for the command named who, or
// a Stream that writes nothing if path is "".
func NewStream(path, run, who string) (*Stream, error) {
	s := &Stream{run: run, who: who}
	if path == "" {
		return s, nil
	}
	f, err := Create(path)
	if err != nil {
		return nil, err
	}
	s.f = f
	return s, nil
}

// Add writes recs.
func (s *Stream) Add(recs ...Record) error {
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

// Abort ends the log with an end record that marks it incomplete, puts it
// in place, says so on w and returns cause, the error that stopped the
// run: the reason is "interrupted" when ctx is done, else "error: " and
// the first line of the error, cut to 300 bytes.
func (s *Stream) Abort(ctx context.Context, w io.Writer, cause error) error {
	if s.f == nil {
		return cause
	}
	reason := "interrupted"
	if ctx.Err() == nil {
		line, _, _ := strings.Cut(cause.Error(), "\n")
		reason = "error: " + cut(line, 300)
	}
	if err := s.f.CloseIncomplete(s.run, reason); err != nil {
		return errors.Join(cause, err)
	}
	noun := "records"
	if s.n == 1 {
		noun = "record"
	}
	fmt.Fprintf(w, "%s: %s holds the %d %s written before it stopped, marked incomplete (%s)\n", s.who, s.f.Path(), s.n, noun, reason)
	return cause
}

// Discard deletes the log written so far, for the whole log to be written
// in its place; it does nothing after Abort.
func (s *Stream) Discard() {
	if s.f != nil {
		s.f.Remove()
	}
}

// Header returns the header record of run, written by tool on machine m,
// with config, the run's configuration, as its Config: config's JSON
// object, integers beyond 2^53 (a 64-bit seed) digit for digit.
func Header(run, tool string, m *Machine, config any) (Record, error) {
	b, err := json.Marshal(config)
	if err != nil {
		return Record{}, fmt.Errorf("benchlog: header of %s: %w", run, err)
	}
	// UseNumber keeps the digits; Writer writes json.Number as it is.
	var c map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&c); err != nil {
		return Record{}, fmt.Errorf("benchlog: header of %s: the configuration is not a JSON object: %w", run, err)
	}
	return Record{Kind: KindHeader, Run: run, Tool: tool, Machine: m, Config: c}, nil
}

// ThisMachine describes the computer the program runs on as far as the
// standard library can tell: host name, operating system, architecture
// and logical CPUs. The caller adds the CPU model, framework and backend.
func ThisMachine() *Machine {
	host, _ := os.Hostname()
	return &Machine{Host: host, OS: runtime.GOOS, Arch: runtime.GOARCH, Cores: runtime.NumCPU()}
}

// Encode returns recs as a bench log, validating each (Writer.Write).
func Encode(recs []Record) ([]byte, error) {
	var b bytes.Buffer
	w := NewWriter(&b)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}
