package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplaces(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.txt")
	if err := WriteBytes(p, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(p, []byte("two")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "two" {
		t.Fatalf("got %q, %v; want \"two\"", b, err)
	}
}

func TestWriteFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.txt")
	if err := WriteBytes(p, []byte("old")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(p, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	b, _ := os.ReadFile(p)
	if string(b) != "old" {
		t.Fatalf("file = %q after failed write, want \"old\"", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("temporary file left behind: %v", ents)
	}
}

// An empty path and a directory are refused before a temporary file is
// made, with a message that says so (the rename's "file exists" did not).
func TestWriteRefusesNoFileName(t *testing.T) {
	dir := t.TempDir()
	for path, want := range map[string]string{
		"":                               "write: no file name given",
		dir:                              "write " + dir + ": is a directory; want a file name",
		dir + string(filepath.Separator): "write " + dir + string(filepath.Separator) + ": is a directory; want a file name",
	} {
		called := false
		err := Write(path, func(io.Writer) error { called = true; return nil })
		if err == nil || err.Error() != want || called {
			t.Errorf("Write(%q): %v (fn called: %v); want %q", path, err, called, want)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestSame: the same file by path, by a path through .., by a hard link, and
// a path not yet made; not another file or a directory.
func TestSame(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	if err := os.WriteFile(a, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard")
	if err := os.Link(a, hard); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		x, y string
		same bool
	}{
		{a, a, true},
		{a, filepath.Join(sub, "..", "a"), true},
		{a, hard, true},
		{a, filepath.Join(dir, "b"), false},
		{filepath.Join(dir, "new"), filepath.Join(dir, ".", "new"), true},
		{sub, a, false},
	} {
		if got := Same(tc.x, tc.y); got != tc.same {
			t.Errorf("Same(%s, %s) = %v, want %v", tc.x, tc.y, got, tc.same)
		}
	}
}
