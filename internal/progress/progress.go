package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Drawing defaults.
const (
	// DefaultDelay is the time a Bar waits after New before it first
	// draws.
	DefaultDelay = time.Second
	// Interval is the shortest time between two drawings.
	Interval = 100 * time.Millisecond
	// Cells is the width of the bar itself, in characters.
	Cells = 30
	// MaxWidth is the widest line a Bar draws, in characters; the item
	// text is cut to fit.
	MaxWidth = 79
)

// IsTerminal reports whether w is a terminal: an *os.File whose mode is a
// character device. Anything else (a buffer, a pipe, a regular file) is
// not.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Options change how a Bar draws. The zero value, like a nil *Options,
// draws on a terminal only, after DefaultDelay, with the wall clock.
type Options struct {
	// Terminal makes the Bar draw even when its writer is not a terminal
	// (tests, or a caller that knows better). Default false.
	Terminal bool
	// Delay is the time after New before the first drawing; 0 means
	// DefaultDelay and a negative Delay draws at once.
	Delay time.Duration
	// Now returns the current time; default time.Now.
	Now func() time.Time
}

// Bar is a progress bar: done units of work out of a total, with a label
// in front and the item in hand after the count.
type Bar struct {
	mu    sync.Mutex
	scr   screen
	label string
	item  string
	total int
	done  int
	stop  chan struct{}
}

// New returns a Bar of total units labelled label, drawing on w. A total
// below 1 is taken as 1. opt may be nil. When the Bar draws with the wall
// clock (Options.Now nil), a goroutine redraws it every Interval, so that
// the elapsed time moves during a long unit of work, until Done: call Done
// when the work ends.
func New(w io.Writer, label string, total int, opt *Options) *Bar {
	var o Options
	if opt != nil {
		o = *opt
	}
	wall := o.Now == nil
	if wall {
		o.Now = time.Now
	}
	if o.Delay == 0 {
		o.Delay = DefaultDelay
	}
	b := &Bar{label: label, total: max(total, 1)}
	b.scr = newScreen(w, o.Terminal || IsTerminal(w), o.Delay, Interval, o.Now, b.line)
	if b.scr.on && wall {
		b.stop = make(chan struct{})
		go b.tick(b.stop)
	}
	return b
}

// tick redraws b every Interval until stop closes (Done).
func (b *Bar) tick(stop <-chan struct{}) {
	t := time.NewTicker(Interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			b.mu.Lock()
			b.scr.draw(false)
			b.mu.Unlock()
		}
	}
}

// Add counts n more units done and redraws if it is time to.
func (b *Bar) Add(n int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done = min(max(b.done+n, 0), b.total)
	b.scr.draw(false)
}

// Item says what is being worked on, shown after the count, e.g.
// "128 devices"; it redraws if it is time to.
func (b *Bar) Item(s string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.item = s
	b.scr.draw(false)
}

// Total changes the number of units, for work whose size is learnt on
// the way. A total below 1 is taken as 1.
func (b *Bar) Total(n int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total = max(n, 1)
	b.done = min(b.done, b.total)
	b.scr.draw(false)
}

// Printf writes a line of text (a newline is added if it has none) to
// the bar's writer above the bar: it erases the bar if drawn, writes the
// line and draws the bar again below it. A nil Bar cannot print: use
// fmt.Fprintf on the writer instead.
func (b *Bar) Printf(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	line := fmt.Sprintf(format, args...)
	if !strings.HasSuffix(line, "\n") {
		line += "\n"
	}
	b.scr.print(line)
}

// Done erases the bar's line if it drew one; later calls draw nothing.
func (b *Bar) Done() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.scr.end()
	if b.stop != nil {
		close(b.stop)
		b.stop = nil
	}
}

// line is the text of the bar at time t.
func (b *Bar) line(t time.Time) string {
	full := b.done * Cells / b.total
	var s strings.Builder
	if b.label != "" {
		s.WriteString(b.label + " ")
	}
	fmt.Fprintf(&s, "[%s%s]  %d/%d", strings.Repeat("#", full), strings.Repeat("-", Cells-full), b.done, b.total)
	tail := fmt.Sprintf("  %.1f s", t.Sub(b.scr.start).Seconds())
	if b.item != "" {
		room := MaxWidth - len([]rune(s.String())) - len(tail) - 2
		if item := []rune(b.item); room > 0 {
			if len(item) > room {
				item = append(item[:max(room-1, 0)], '…')
			}
			s.WriteString("  " + string(item))
		}
	}
	s.WriteString(tail)
	return s.String()
}
