package progress

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a fake time source that tests move by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time               { return c.t }
func (c *clock) step(d time.Duration)         { c.t = c.t.Add(d) }
func newClock() *clock                        { return &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }
func fake(c *clock, d time.Duration) *Options { return &Options{Terminal: true, Delay: d, Now: c.now} }

// TestDraw follows a bar on a fake terminal through its life: nothing
// before the delay, then lines redrawn in place with the count, the item
// and the elapsed time, at most every Interval, and the line erased by
// Done.
func TestDraw(t *testing.T) {
	c := newClock()
	var w bytes.Buffer
	b := New(&w, "simulate", 4, fake(c, time.Second))
	b.Item("1 device")
	b.Add(1)
	c.step(500 * time.Millisecond)
	b.Add(1)
	if w.Len() != 0 {
		t.Fatalf("drew before the delay: %q", w.String())
	}
	c.step(600 * time.Millisecond) // 1.1 s
	b.Item("32 devices")
	want := "\rsimulate [###############---------------]  2/4  32 devices  1.1 s\x1b[K"
	if w.String() != want {
		t.Fatalf("first drawing\n got %q\nwant %q", w.String(), want)
	}
	w.Reset()
	c.step(50 * time.Millisecond) // within Interval: no redraw
	b.Add(1)
	if w.Len() != 0 {
		t.Errorf("redrew within Interval: %q", w.String())
	}
	c.step(60 * time.Millisecond)
	b.Item("128 devices")
	want = "\rsimulate [######################--------]  3/4  128 devices  1.2 s\x1b[K"
	if w.String() != want {
		t.Errorf("second drawing\n got %q\nwant %q", w.String(), want)
	}
	w.Reset()
	b.Done()
	if w.String() != "\r\x1b[K" {
		t.Errorf("Done wrote %q, want the line erased", w.String())
	}
	w.Reset()
	c.step(time.Second)
	b.Add(1)
	b.Done()
	if w.Len() != 0 {
		t.Errorf("drew after Done: %q", w.String())
	}
}

// TestQuiet checks the cases that must draw nothing: a writer that is not
// a terminal, a run shorter than the delay, and a nil bar.
func TestQuiet(t *testing.T) {
	c := newClock()
	var w bytes.Buffer
	b := New(&w, "x", 2, &Options{Delay: -1, Now: c.now}) // not a terminal
	b.Add(1)
	b.Done()
	if w.Len() != 0 {
		t.Errorf("a buffer is not a terminal, but the bar drew %q", w.String())
	}
	b = New(&w, "x", 2, fake(c, time.Second))
	c.step(900 * time.Millisecond)
	b.Add(2)
	b.Done()
	if w.Len() != 0 {
		t.Errorf("a run shorter than the delay drew %q", w.String())
	}
	var nb *Bar
	nb.Add(1)
	nb.Item("x")
	nb.Total(3)
	nb.Done()
}

// TestLine checks the counts and item text: clamped counts, a total
// changed on the way, and an item cut to MaxWidth.
func TestLine(t *testing.T) {
	c := newClock()
	var w bytes.Buffer
	for _, tc := range []struct {
		name  string
		total int
		do    func(b *Bar)
		want  string
	}{
		{"empty", 3, func(b *Bar) {}, "[------------------------------]  0/3  0.0 s"},
		{"over", 3, func(b *Bar) { b.Add(7) }, "[##############################]  3/3  0.0 s"},
		{"under", 3, func(b *Bar) { b.Add(-2) }, "[------------------------------]  0/3  0.0 s"},
		{"zero-total", 0, func(b *Bar) { b.Add(1) }, "[##############################]  1/1  0.0 s"},
		{"retotal", 2, func(b *Bar) { b.Add(2); b.Total(8) }, "[#######-----------------------]  2/8  0.0 s"},
		{"long-item", 10, func(b *Bar) { b.Item(strings.Repeat("é", 100)) },
			"[------------------------------]  0/10  " + strings.Repeat("é", 31) + "…  0.0 s"},
	} {
		w.Reset()
		b := New(&w, "", tc.total, fake(c, -1))
		tc.do(b)
		got := b.line(c.now())
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
		if n := len([]rune(got)); n > MaxWidth {
			t.Errorf("%s: %d characters, more than %d", tc.name, n, MaxWidth)
		}
	}
}

// TestIsTerminal checks the detection on what is certainly not a
// terminal: a buffer, a regular file, a pipe and a nil file.
func TestIsTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer pw.Close()
	var nilFile *os.File
	for name, w := range map[string]any{"buffer": &bytes.Buffer{}, "file": f, "pipe": pw, "nil file": nilFile} {
		if IsTerminal(w.(interface{ Write([]byte) (int, error) })) {
			t.Errorf("%s is taken for a terminal", name)
		}
	}
}

// syncBuffer is a buffer safe for the ticking goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestTick checks that a bar on the wall clock redraws by itself while no
// work is counted, and stops at Done.
func TestTick(t *testing.T) {
	var w syncBuffer
	b := New(&w, "x", 2, &Options{Terminal: true, Delay: -1})
	// Two drawings without any call: wait for them, a loaded machine may
	// be slow to run the ticker.
	for deadline := time.Now().Add(5 * time.Second); strings.Count(w.String(), "\rx [-") < 2; {
		if time.Now().After(deadline) {
			t.Fatalf("no redrawing in 5 s: %q", w.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.Done()
	out := w.String()
	if !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("Done did not erase the line last: %q", out)
	}
	time.Sleep(2 * Interval)
	if w.String() != out {
		t.Errorf("drew after Done: %q", strings.TrimPrefix(w.String(), out))
	}
}

// TestConcurrent adds from several goroutines; run with -race it checks
// the locking, and the count must come out whole.
func TestConcurrent(t *testing.T) {
	var w bytes.Buffer
	b := New(&w, "x", 400, &Options{Terminal: true, Delay: -1})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				b.Add(1)
			}
		}()
	}
	wg.Wait()
	if b.done != 400 {
		t.Errorf("counted %d, want 400", b.done)
	}
	b.Done()
}

// TestPrintf checks that a line printed through the bar appears above
// it: before the delay as plain text, after it with the bar erased first
// and drawn again below; on a writer that is not a terminal, plain text.
func TestPrintf(t *testing.T) {
	c := newClock()
	var w bytes.Buffer
	b := New(&w, "bench", 2, fake(c, time.Second))
	b.Printf("first %d", 1)
	if w.String() != "first 1\n" {
		t.Fatalf("before the delay: %q", w.String())
	}
	w.Reset()
	c.step(2 * time.Second)
	b.Add(1)
	w.Reset()
	b.Printf("second\n")
	want := "\r\x1b[Ksecond\n\rbench [###############---------------]  1/2  2.0 s\x1b[K"
	if w.String() != want {
		t.Errorf("after the delay\n got %q\nwant %q", w.String(), want)
	}
	w.Reset()
	b.Done()
	b.Printf("after")
	if w.String() != "\r\x1b[Kafter\n" {
		t.Errorf("after Done: %q", w.String())
	}

	var p bytes.Buffer
	q := New(&p, "x", 2, &Options{Delay: -1, Now: c.now}) // not a terminal
	q.Add(1)
	q.Printf("line")
	q.Done()
	if p.String() != "line\n" {
		t.Errorf("not a terminal: %q", p.String())
	}
}
