// Package progress draws progress bars on a terminal.
//
// A Bar counts finished units of work out of a total and draws itself on
// one line of its writer, redrawn in place with a carriage return:
//
//	simulate [##############----------------]  2/4  32 devices  1.4 s
//
// It draws only when the writer is a terminal, so that output redirected
// to a file or a pipe, and the tests' buffers, stay clean: IsTerminal
// reports whether the writer is an *os.File whose Stat mode is a
// character device (os.ModeCharDevice). It also waits Delay (one second
// by default) after New before the first drawing, so that a run shorter
// than that shows no bar at all, and redraws at most every Interval. On
// the wall clock a goroutine also redraws it every Interval, so that the
// elapsed time keeps moving during one long unit of work. Done erases the
// line, leaving the terminal as it found it, and stops the goroutine:
// call it when the work ends.
//
// A Countdown is the line of a long command instead of a bar, the items
// done with the time left from the mean time per item so far:
//
//	measured 7 of 24 configurations, about 3 min 10 s left
//
// It draws on a terminal only too, at once and at most every 200 ms, and
// shares the Bar's drawing: one place erases, throttles and redraws the
// line.
//
// A nil *Bar is a valid bar that draws nothing, and a Bar or a Countdown
// is safe for use by several goroutines at once.
package progress
