package dist

import (
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMeasureHandoff(t *testing.T) {
	if _, err := MeasureHandoff(0); err == nil || !strings.Contains(err.Error(), "0 round trips") {
		t.Errorf("0 round trips: %v", err)
	}
	prev := runtime.GOMAXPROCS(1)
	_, err := MeasureHandoff(10)
	runtime.GOMAXPROCS(prev)
	if err == nil || !strings.Contains(err.Error(), "GOMAXPROCS") {
		t.Errorf("GOMAXPROCS 1: %v", err)
	}
	if runtime.NumCPU() < 2 || prev < 2 {
		t.Skipf("%d CPUs, GOMAXPROCS %d", runtime.NumCPU(), prev)
	}
	// A handoff moves one cache line between two cores: from about ten
	// nanoseconds (cores sharing a cache) to a microsecond or two (across
	// sockets); far below the millisecond a parked goroutine's wake-up
	// would take, which would mean the sides were not spinning at once.
	// The fastest of three probes is taken: a probe during which the
	// system ran something else on one of the two cores holds that too.
	var ds []time.Duration
	for range 3 {
		d, err := MeasureHandoff(2000)
		if err != nil {
			t.Fatal(err)
		}
		if d <= 0 {
			t.Errorf("handoff %v, want more than 0", d)
		}
		ds = append(ds, d)
	}
	if d := slices.Min(ds); d > 50*time.Microsecond {
		t.Errorf("handoffs %v, want the fastest at most 50µs", ds)
	}
}
