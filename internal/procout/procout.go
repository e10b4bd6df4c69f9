package procout

import (
	"io"
	"sync"
)

// Locked serialises writes to W. The zero value is not usable: set W.
type Locked struct {
	mu sync.Mutex
	W  io.Writer
}

// Write writes b to W while holding the lock.
func (l *Locked) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.W.Write(b)
}

// Tail keeps the last Max bytes written to it; it is safe for concurrent
// use. A Max of 0 or less keeps nothing.
type Tail struct {
	Max int

	mu  sync.Mutex
	buf []byte
}

// Write appends b and drops what falls out of the last Max bytes. It
// never fails.
func (t *Tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if n := len(t.buf) - max(t.Max, 0); n > 0 {
		t.buf = append(t.buf[:0], t.buf[n:]...)
	}
	return len(b), nil
}

// String returns the bytes kept.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
