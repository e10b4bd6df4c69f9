package benchlog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A Stream cut short by an error puts the records written so far in
// place, ending with an end record whose reason is the error's first
// line, says so, and returns the error.
func TestStreamAbortError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	s, err := NewStream(path, "r", "bench steps")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add(Record{Kind: KindHeader, Run: "r"}, Record{Kind: KindMeasurement, Run: "r", Batch: 16, StepTime: 0.01}); err != nil {
		t.Fatal(err)
	}
	cause := errors.New("worker 1: " + strings.Repeat("x", 400) + "\nsecond line")
	var msg strings.Builder
	if got := s.Abort(context.Background(), &msg, cause); got != cause {
		t.Errorf("Abort returned %v, want the cause", got)
	}
	recs := readAll(t, path)
	if len(recs) != 3 {
		t.Fatalf("%d records, want the two written and an end record", len(recs))
	}
	reason, ok := recs[2].Incomplete()
	if want := "error: worker 1: " + strings.Repeat("x", 300-len("worker 1: ")) + "..."; !ok || reason != want {
		t.Errorf("end reason %q (incomplete %v), want %q", reason, ok, want)
	}
	if want := "bench steps: " + path + " holds the 2 records written before it stopped, marked incomplete (" + reason + ")\n"; msg.String() != want {
		t.Errorf("message %q, want %q", msg.String(), want)
	}
	s.Discard() // nothing after Abort
	if len(readAll(t, path)) != 3 {
		t.Error("Discard after Abort removed the log")
	}
}

// A Stream interrupted (its context done) gives "interrupted" as the
// reason and counts one record in the singular.
func TestStreamAbortInterrupted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	s, err := NewStream(path, "r", "validate --engine")
	if err != nil {
		t.Fatal(err)
	}
	s.Add(Record{Kind: KindHeader, Run: "r"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var msg strings.Builder
	s.Abort(ctx, &msg, context.Canceled)
	recs := readAll(t, path)
	if reason, ok := recs[len(recs)-1].Incomplete(); len(recs) != 2 || !ok || reason != "interrupted" {
		t.Errorf("records %+v, want the header and an end record, interrupted", recs)
	}
	if !strings.Contains(msg.String(), " holds the 1 record written before it stopped, marked incomplete (interrupted)") {
		t.Errorf("message %q", msg.String())
	}
}

// Discard leaves nothing at the path; a Stream without a path writes
// nothing, and Abort returns the cause without a word.
func TestStreamDiscardNoPath(t *testing.T) {
	dir := t.TempDir()
	s, err := NewStream(filepath.Join(dir, "run.jsonl"), "r", "bench")
	if err != nil {
		t.Fatal(err)
	}
	s.Add(Record{Kind: KindHeader, Run: "r"})
	s.Discard()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("Discard left %v", entries)
	}
	none, err := NewStream("", "r", "bench")
	if err != nil {
		t.Fatal(err)
	}
	if err := none.Add(Record{Kind: "bogus"}); err != nil {
		t.Errorf("Add without a path: %v", err)
	}
	cause := errors.New("boom")
	var msg strings.Builder
	if got := none.Abort(context.Background(), &msg, cause); got != cause || msg.Len() != 0 {
		t.Errorf("Abort without a path: %v, %q", got, msg.String())
	}
	if _, err := NewStream(dir, "r", "bench"); err == nil {
		t.Error("a stream to a directory started")
	}
}

// Header keeps a 64-bit seed digit for digit, and refuses a
// configuration that is not a JSON object.
func TestHeader(t *testing.T) {
	m := &Machine{Cores: 2}
	h, err := Header("r", "scaleplan-engine", m, struct {
		Seed uint64 `json:"seed"`
	}{1<<53 + 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Encode([]Record{h})
	if want := `{"kind":"header","run":"r","tool":"scaleplan-engine","machine":{"cores":2},"config":{"seed":9007199254740993}}` + "\n"; err != nil || string(b) != want {
		t.Errorf("header %s (%v), want %s", b, err, want)
	}
	for _, bad := range []any{[]int{1}, func() {}} {
		if _, err := Header("r", "t", nil, bad); err == nil || !strings.Contains(err.Error(), "header of r") {
			t.Errorf("Header of %T: error %v", bad, err)
		}
	}
}

// Encode validates every record.
func TestEncode(t *testing.T) {
	if _, err := Encode([]Record{{Kind: KindHeader}, {Kind: "bogus"}}); err == nil {
		t.Error("a record of an unknown kind encoded")
	}
	if b, err := Encode(nil); err != nil || len(b) != 0 {
		t.Errorf("Encode(nil) = %q, %v", b, err)
	}
}

// ThisMachine describes the running machine as the os and runtime
// packages do.
func TestThisMachine(t *testing.T) {
	host, _ := os.Hostname()
	m := ThisMachine()
	if m.Host != host || m.OS != runtime.GOOS || m.Arch != runtime.GOARCH || m.Cores != runtime.NumCPU() || m.Cores < 1 {
		t.Errorf("machine %+v", m)
	}
}
