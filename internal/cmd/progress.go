package cmd

import (
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"scaleplan/internal/progress"
)

// countdown is the progress line of a long command (bench throughput,
// steps and train, validate --engine) on stderr:
//
//	measured 7 of 24 configurations, about 3 min 10 s left
//
// redrawn in place as items finish, with the time left from the mean time
// per item so far (etaText). It draws only when stderr is a terminal
// (progress.IsTerminal: an *os.File whose mode is a character device),
// never on a pipe, a file or a test's buffer. Lines printed through Printf
// go above it. Its Bar is a progress.Bar that counts the same items and
// prints through the countdown without drawing, for the code that takes
// a Bar (the core guard).
type countdown struct {
	Bar *progress.Bar

	mu         sync.Mutex
	w          io.Writer
	verb, noun string
	total      *int // items; the core guard adds those it repeats
	done       int
	on         bool // drawing: a terminal, not yet Done
	drawn      bool // the line is on the screen
	restored   bool // and was drawn again under a printed line, maybe before its count changed
	now        func() time.Time
	start      time.Time
	last       time.Time // of the last drawing
}

// countdownInterval is the shortest time between two drawings.
const countdownInterval = 200 * time.Millisecond

// newCountdown returns the countdown of total items (which the caller may
// raise later through the pointer) on c's stderr, e.g. verb "measured",
// noun "configurations". Call Done when the work ends.
func newCountdown(c *cli.Context, label, verb, noun string, total *int) *countdown {
	return startCountdown(c.App.ErrWriter, progress.IsTerminal(c.App.ErrWriter), label, verb, noun, total, time.Now)
}

// startCountdown is newCountdown on w, drawing if term, timed by now.
func startCountdown(w io.Writer, term bool, label, verb, noun string, total *int, now func() time.Time) *countdown {
	d := &countdown{w: w, verb: verb, noun: noun, total: total, on: term, now: now, start: now()}
	// The Bar writes its lines through d and never draws: d is no
	// terminal.
	d.Bar = progress.New(lineWriter{d}, label, *total, nil)
	return d
}

// lineWriter writes lines above a countdown's line.
type lineWriter struct{ d *countdown }

func (l lineWriter) Write(b []byte) (int, error) {
	d := l.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.drawn {
		io.WriteString(d.w, "\r\x1b[K")
		d.drawn = false
	}
	n, err := d.w.Write(b)
	d.draw(true)
	d.restored = d.drawn
	return n, err
}

// Item says what is in hand (the Bar keeps it for nothing else).
func (d *countdown) Item(s string) { d.Bar.Item(s) }

// Total sets the number of items.
func (d *countdown) Total(n int) {
	d.mu.Lock()
	*d.total = n
	d.mu.Unlock()
	d.Bar.Total(n)
}

// Add counts n more items done and redraws.
func (d *countdown) Add(n int) {
	d.Bar.Add(n)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.done += n
	d.draw(d.restored)
	d.restored = false
}

// Printf prints a line above the countdown.
func (d *countdown) Printf(format string, args ...any) { d.Bar.Printf(format, args...) }

// Done erases the line; later calls draw nothing.
func (d *countdown) Done() {
	d.Bar.Done()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.drawn {
		io.WriteString(d.w, "\r\x1b[K")
		d.drawn = false
	}
	d.on = false
}

// draw writes the line if drawing is on and, unless now, the last
// drawing is at least countdownInterval old.
func (d *countdown) draw(now bool) {
	if !d.on {
		return
	}
	t := d.now()
	if !now && d.drawn && t.Sub(d.last) < countdownInterval {
		return
	}
	d.last, d.drawn = t, true
	io.WriteString(d.w, "\r"+etaText(d.verb, d.noun, d.done, *d.total, t.Sub(d.start))+"\x1b[K")
}

// etaText is the countdown's line after done of total items in elapsed:
// "measured 7 of 24 configurations, about 3 min 10 s left", the time left
// being the mean time per item so far times the items left,
//
//	left = elapsed / done · (total − done)
//
// and without an estimate before the first item is done or after the
// last; under half a second it says "under a second left".
func etaText(verb, noun string, done, total int, elapsed time.Duration) string {
	s := fmt.Sprintf("%s %d of %d %s", verb, done, total, noun)
	if done < 1 || done >= total {
		return s
	}
	left := elapsed.Seconds() / float64(done) * float64(total-done)
	if left < 0.5 {
		return s + ", under a second left"
	}
	return s + ", about " + approxDuration(left) + " left"
}

// approxDuration writes a number of seconds to the second below a
// minute, in minutes and seconds below an hour, in hours and minutes
// above: "45 s", "3 min 10 s", "2 h 5 min".
func approxDuration(sec float64) string {
	s := int64(math.Round(sec))
	switch {
	case s < 60:
		return fmt.Sprintf("%d s", s)
	case s < 3600:
		return fmt.Sprintf("%d min %d s", s/60, s%60)
	}
	m := (s + 30) / 60
	return fmt.Sprintf("%d h %d min", m/60, m%60)
}
