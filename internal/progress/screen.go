package progress

import (
	"io"
	"time"
)

// screen is the one line that a Bar or a Countdown draws on its writer:
// the one place that throttles, erases and redraws it in place. Its owner
// holds its lock around every call.
type screen struct {
	w        io.Writer
	on       bool          // drawing is allowed: a terminal, not yet ended
	delay    time.Duration // before the first drawing; at most 0: at once
	interval time.Duration // the shortest time between two drawings
	now      func() time.Time
	text     func(t time.Time) string // the line at time t
	start    time.Time
	last     time.Time // of the last drawing
	drawn    bool      // something is on the line
}

// newScreen returns the line on w, drawing if on, text at time now().
func newScreen(w io.Writer, on bool, delay, interval time.Duration, now func() time.Time, text func(time.Time) string) screen {
	return screen{w: w, on: on, delay: delay, interval: interval, now: now, text: text, start: now()}
}

// draw writes the line if drawing is on, the delay has passed and,
// unless force, the last drawing is at least interval old.
func (s *screen) draw(force bool) {
	if !s.on {
		return
	}
	t := s.now()
	if s.delay > 0 && t.Sub(s.start) < s.delay || !force && s.drawn && t.Sub(s.last) < s.interval {
		return
	}
	s.last, s.drawn = t, true
	io.WriteString(s.w, "\r"+s.text(t)+"\x1b[K")
}

// print writes text above the line: it erases the line if drawn, writes
// text and draws the line again at once below it. It returns the bytes
// of text written.
func (s *screen) print(text string) (int, error) {
	erase := ""
	if s.drawn {
		erase = "\r\x1b[K"
		s.drawn = false
	}
	n, err := io.WriteString(s.w, erase+text)
	s.draw(true)
	return max(n-len(erase), 0), err
}

// end erases the line if drawn; later calls draw nothing.
func (s *screen) end() {
	if s.drawn {
		io.WriteString(s.w, "\r\x1b[K")
		s.drawn = false
	}
	s.on = false
}
