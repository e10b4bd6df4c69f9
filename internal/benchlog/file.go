package benchlog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// File writes a bench log record by record, so that a run that stops
// early keeps what it measured. Records go to a temporary file next to
// the log's path, each written through to the operating system as it
// comes; Close renames the file into place, CloseIncomplete first ends it
// with an end record that marks it incomplete, and Remove deletes it. A
// reader never sees a log at the path that is half written: only a whole
// log, or one whose end record says it was cut short.
type File struct {
	path string
	f    *os.File
	w    *Writer
}

// Create starts the log that will be at path. An empty path, or one
// that names a directory, is an error before anything is written.
func Create(path string) (*File, error) {
	dir, base := filepath.Split(path)
	if path == "" || base == "" {
		return nil, fmt.Errorf("benchlog: create %q: want a file name", path)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("benchlog: create %s: is a directory; want a file name", path)
	}
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("benchlog: create %s: %w", path, err)
	}
	return &File{path: path, f: f, w: NewWriter(f)}, nil
}

// Path returns the path the log will have.
func (f *File) Path() string { return f.path }

// Write validates r and writes it as one line, unbuffered.
func (f *File) Write(r Record) error {
	if f.f == nil {
		return fmt.Errorf("benchlog: write %s: closed", f.path)
	}
	if err := f.w.Write(r); err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	return nil
}

// Close syncs the log and renames it into place.
func (f *File) Close() error {
	if f.f == nil {
		return fmt.Errorf("benchlog: close %s: closed", f.path)
	}
	tmp := f.f.Name()
	err := f.f.Sync()
	err = errors.Join(err, f.f.Close())
	f.f = nil
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, f.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("benchlog: write %s: %w", f.path, err)
	}
	return nil
}

// CloseIncomplete ends the log with the end record of run that marks it
// incomplete for reason, and renames it into place.
func (f *File) CloseIncomplete(run, reason string) error {
	if err := f.Write(End(run, false, reason)); err != nil {
		f.Remove()
		return err
	}
	return f.Close()
}

// Remove closes and deletes the temporary file; the path is left as it
// was. It does nothing after Close.
func (f *File) Remove() {
	if f.f == nil {
		return
	}
	f.f.Close()
	os.Remove(f.f.Name())
	f.f = nil
}
