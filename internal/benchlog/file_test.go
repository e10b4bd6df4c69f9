package benchlog

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readAll reads every record of the file at path.
func readAll(t *testing.T, path string) []Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []Record
	r := NewReader(f)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return recs
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
}

// A log cut short holds the records written before, then an end record
// that says so and why; nothing is at the path until then, and no
// temporary file is left.
func TestFileIncomplete(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.jsonl")
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	hdr := Record{Kind: KindHeader, Run: "r"}
	m := Record{Kind: KindMeasurement, Run: "r", Batch: 16, StepTime: 0.01}
	for _, r := range []Record{hdr, m} {
		if err := f.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the log is at its path before it is closed (stat: %v)", err)
	}
	// Each record is written through: the temporary file holds both.
	tmps, _ := filepath.Glob(filepath.Join(dir, ".run.jsonl.tmp*"))
	if len(tmps) != 1 {
		t.Fatalf("temporary files %q, want one", tmps)
	}
	if got := readAll(t, tmps[0]); len(got) != 2 {
		t.Errorf("temporary file holds %d records before closing, want 2", len(got))
	}
	if err := f.CloseIncomplete("r", "interrupted"); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, path)
	if len(got) != 3 || got[1].StepTime != 0.01 {
		t.Fatalf("records %+v, want the header, the measurement and an end record", got)
	}
	if reason, ok := got[2].Incomplete(); !ok || reason != "interrupted" {
		t.Errorf("last record %+v: Incomplete() = %q, %v; want \"interrupted\", true", got[2], reason, ok)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, ".run.jsonl.tmp*")); len(tmps) != 0 {
		t.Errorf("temporary files left: %q", tmps)
	}
	b, _ := os.ReadFile(path)
	if last := strings.TrimSpace(string(b[strings.LastIndexByte(strings.TrimSpace(string(b)), '\n')+1:])); last != `{"kind":"end","run":"r","complete":false,"reason":"interrupted"}` {
		t.Errorf("end line %s", last)
	}
}

// Close puts a complete log in place; Remove leaves the path as it was.
func TestFileCloseRemove(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.jsonl")
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(Record{Kind: KindHeader, Run: "r"})
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, path); len(got) != 1 || got[0].Kind != KindHeader {
		t.Errorf("records %+v, want the header", got)
	}
	if err := f.Write(Record{Kind: KindHeader}); err == nil {
		t.Error("Write after Close succeeded")
	}
	os.WriteFile(filepath.Join(dir, "b.jsonl"), []byte("old\n"), 0o644)
	g, err := Create(filepath.Join(dir, "b.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	g.Write(Record{Kind: KindHeader, Run: "r"})
	g.Remove()
	if b, _ := os.ReadFile(filepath.Join(dir, "b.jsonl")); string(b) != "old\n" {
		t.Errorf("after Remove the path holds %q, want the old %q", b, "old\n")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("%d files in the directory, want 2 (no temporary file left)", len(entries))
	}
	for _, bad := range []string{"", dir, dir + "/"} {
		if _, err := Create(bad); err == nil {
			t.Errorf("Create(%q) succeeded", bad)
		}
	}
}

// End records need "complete"; other records may not have it; a record
// that says complete is not Incomplete, nor is any other kind.
func TestEndRecord(t *testing.T) {
	for _, v := range []struct {
		line string
		err  string // "" for valid
		inc  bool
	}{
		{`{"kind":"end","complete":false,"reason":"interrupted"}`, "", true},
		{`{"kind":"end","complete":true}`, "", false},
		{`{"kind":"end"}`, `end record without "complete"`, false},
		{`{"kind":"measurement","batch":1,"step_time_s":1,"complete":true}`, "only end records", false},
		{`{"kind":"header","reason":"x"}`, "only end records", false},
		{`{"kind":"header"}`, "", false},
	} {
		r, err := Decode([]byte(v.line))
		if v.err == "" && err != nil || v.err != "" && (err == nil || !strings.Contains(err.Error(), v.err)) {
			t.Errorf("%s: error %v, want %q", v.line, err, v.err)
			continue
		}
		if _, inc := r.Incomplete(); err == nil && inc != v.inc {
			t.Errorf("%s: Incomplete %v, want %v", v.line, inc, v.inc)
		}
	}
	b, _ := encodeOne(End("r", false, "error: x"))
	if want := `{"kind":"end","run":"r","complete":false,"reason":"error: x"}` + "\n"; b != want {
		t.Errorf("End encodes as %s, want %s", b, want)
	}
}

func encodeOne(r Record) (string, error) {
	var s strings.Builder
	err := NewWriter(&s).Write(r)
	return s.String(), err
}
