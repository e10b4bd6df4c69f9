package progress

import (
	"fmt"
	"io"
	"math"
	"sync"
	"time"
)

// Countdown is the progress line of a long piece of work:
//
//	measured 7 of 24 configurations, about 3 min 10 s left
//
// redrawn in place as items finish, with the time left from the mean time
// per item so far. Like a Bar it draws only when its writer is a terminal
// (IsTerminal), never on a pipe, a file or a test's buffer, but at once,
// with no delay, and at most every 200 ms. Lines printed through Printf
// go above it. Its Bar is a Bar that counts the same items and prints
// through the Countdown without drawing, for code that takes a Bar.
type Countdown struct {
	// Bar counts the same items and prints above the countdown; it never
	// draws.
	Bar *Bar

	mu         sync.Mutex
	scr        screen
	verb, noun string
	total      *int // items; a caller may raise it through the pointer
	done       int
	restored   bool // the line was drawn again under a printed line, maybe before its count changed
}

// countdownInterval is the shortest time between two drawings of a
// Countdown.
const countdownInterval = 200 * time.Millisecond

// NewCountdown returns the countdown of *total items on w, e.g. verb
// "measured", noun "configurations"; the caller may raise the total
// later through the pointer, or with Total. Call Done when the work ends.
func NewCountdown(w io.Writer, label, verb, noun string, total *int) *Countdown {
	return newCountdown(w, IsTerminal(w), label, verb, noun, total, time.Now)
}

// newCountdown is NewCountdown on w, drawing if term, timed by now.
func newCountdown(w io.Writer, term bool, label, verb, noun string, total *int, now func() time.Time) *Countdown {
	d := &Countdown{verb: verb, noun: noun, total: total}
	d.scr = newScreen(w, term, -1, countdownInterval, now, d.line)
	// The Bar writes its lines through d and never draws: d is no
	// terminal.
	d.Bar = New(lineWriter{d}, label, *total, nil)
	return d
}

// lineWriter writes lines above a countdown's line.
type lineWriter struct{ d *Countdown }

func (l lineWriter) Write(b []byte) (int, error) {
	d := l.d
	d.mu.Lock()
	defer d.mu.Unlock()
	n, err := d.scr.print(string(b))
	d.restored = d.scr.drawn
	return n, err
}

// Item says what is in hand (the Bar keeps it for nothing else).
func (d *Countdown) Item(s string) { d.Bar.Item(s) }

// Total sets the number of items.
func (d *Countdown) Total(n int) {
	d.mu.Lock()
	*d.total = n
	d.mu.Unlock()
	d.Bar.Total(n)
}

// Add counts n more items done and redraws: at once after a printed
// line, else if the last drawing is at least 200 ms old.
func (d *Countdown) Add(n int) {
	d.Bar.Add(n)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.done += n
	d.scr.draw(d.restored)
	d.restored = false
}

// Printf prints a line above the countdown (a newline is added if it has
// none).
func (d *Countdown) Printf(format string, args ...any) { d.Bar.Printf(format, args...) }

// Done erases the line; later calls draw nothing.
func (d *Countdown) Done() {
	d.Bar.Done()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.scr.end()
}

// line is the countdown's text at time t.
func (d *Countdown) line(t time.Time) string {
	return etaText(d.verb, d.noun, d.done, *d.total, t.Sub(d.scr.start))
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
