package progress

import (
	"bytes"
	"testing"
	"time"
)

// etaText against times left worked out by hand: the mean time per item
// so far times the items left.
func TestETAText(t *testing.T) {
	for _, tc := range []struct {
		done, total int
		elapsed     time.Duration
		want        string
	}{
		// 7 items in 78.2 s: 11.17 s each, 17 left: 190 s.
		{7, 24, 78200 * time.Millisecond, "measured 7 of 24 configurations, about 3 min 10 s left"},
		{0, 24, 5 * time.Second, "measured 0 of 24 configurations"},
		{24, 24, time.Hour, "measured 24 of 24 configurations"},
		// 9 in 4 s, 1 left: 0.44 s.
		{9, 10, 4 * time.Second, "measured 9 of 10 configurations, under a second left"},
		// 1 in 2 s, 2 left: 4 s.
		{1, 3, 2 * time.Second, "measured 1 of 3 configurations, about 4 s left"},
		// 2 in 59.6 s, 2 left: 59.6 s, rounds to 60 s.
		{2, 4, 59600 * time.Millisecond, "measured 2 of 4 configurations, about 1 min 0 s left"},
		// 1 in 30 min, 4 left: 2 h.
		{1, 5, 30 * time.Minute, "measured 1 of 5 configurations, about 2 h 0 min left"},
		// 3 in 1 h 1 min 40 s, 1 left: 1233.3 s = 20 min 33 s.
		{3, 4, time.Hour + 100*time.Second, "measured 3 of 4 configurations, about 20 min 33 s left"},
		// 1 in 1 h 2 min 29 s, 1 left: 3749 s = 1 h 2 min 29 s, to the
		// minute 1 h 2 min.
		{1, 2, time.Hour + 149*time.Second, "measured 1 of 2 configurations, about 1 h 2 min left"},
	} {
		if got := etaText("measured", "configurations", tc.done, tc.total, tc.elapsed); got != tc.want {
			t.Errorf("etaText(%d, %d, %v) = %q, want %q", tc.done, tc.total, tc.elapsed, got, tc.want)
		}
	}
}

// On a terminal the countdown redraws one line in place, at most every
// countdownInterval unless a line printed above it left it behind its
// count, keeps printed lines above it and erases it at the end; elsewhere
// it draws nothing.
func TestCountdownDraws(t *testing.T) {
	clock := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	for _, term := range []bool{true, false} {
		var b bytes.Buffer
		total := 3
		d := newCountdown(&b, term, "bench", "measured", "configurations", &total, now)
		clock = clock.Add(2 * time.Second)
		d.Item("batch 16")
		d.Add(1)
		d.Printf("bench: batch 16: 100 samples/s")
		d.Add(1)   // drawn at once: the line above left it at 1
		d.Total(4) // the core guard repeats one
		d.Add(1)   // not drawn: too soon
		clock = clock.Add(time.Second)
		d.Printf("bench: batch 32: 200 samples/s")
		d.Done()
		d.Add(1)
		want := "bench: batch 16: 100 samples/s\nbench: batch 32: 200 samples/s\n"
		if term {
			want = "\rmeasured 1 of 3 configurations, about 4 s left\x1b[K" +
				"\r\x1b[Kbench: batch 16: 100 samples/s\n\rmeasured 1 of 3 configurations, about 4 s left\x1b[K" +
				"\rmeasured 2 of 3 configurations, about 1 s left\x1b[K" + // 2 in 2 s, 1 left
				"\r\x1b[Kbench: batch 32: 200 samples/s\n\rmeasured 3 of 4 configurations, about 1 s left\x1b[K" +
				"\r\x1b[K"
		}
		if got := b.String(); got != want {
			t.Errorf("terminal %v: wrote %q, want %q", term, got, want)
		}
	}
}
