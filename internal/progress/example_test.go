package progress_test

import (
	"fmt"
	"strings"
	"time"

	"scaleplan/internal/progress"
)

// A bar on a fake terminal with a fixed clock, drawing at once. On a real
// run the options are nil: the bar draws only when its writer is a
// terminal and the work has run for a second.
func Example() {
	var w strings.Builder
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := progress.New(&w, "simulate", 4, &progress.Options{Terminal: true, Delay: -1, Now: func() time.Time { return t0 }})
	b.Item("32 devices")
	b.Done()
	fmt.Printf("%q\n", w.String())
	fmt.Println(progress.IsTerminal(&w))
	// Output:
	// "\rsimulate [------------------------------]  0/4  32 devices  0.0 s\x1b[K\r\x1b[K"
	// false
}

// A countdown of 2 items on a writer that is not a terminal: it draws no
// line, and only the lines printed through it appear.
func ExampleCountdown() {
	var w strings.Builder
	total := 2
	d := progress.NewCountdown(&w, "bench", "measured", "configurations", &total)
	d.Item("batch 16")
	d.Printf("bench: batch 16: %d samples/s", 100)
	d.Add(1)
	d.Done()
	fmt.Printf("%q\n", w.String())
	// Output:
	// "bench: batch 16: 100 samples/s\n"
}
