package dist

import (
	"context"
	"runtime"
	"sync"
	"testing"
)

// spareProc gives every bound worker a spare P: GOMAXPROCS becomes at
// least twice the number of bound workers running and returns to its
// value when the last one ends, in any order; a release counts once.
func TestSpareProc(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	check := func(when string, want int) {
		t.Helper()
		if got := runtime.GOMAXPROCS(0); got != want {
			t.Errorf("%s: GOMAXPROCS %d, want %d", when, got, want)
		}
	}
	r1 := spareProc()
	check("one worker", 2)
	r2 := spareProc()
	check("two workers", 4)
	r1()
	r1()
	check("one of two ended (released twice)", 4)
	r2()
	check("both ended", 1)

	runtime.GOMAXPROCS(8)
	r3 := spareProc()
	check("one worker, 8 Ps already", 8)
	r3()
	check("ended, 8 Ps", 8)

	runtime.GOMAXPROCS(3)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			release := spareProc()
			if n := runtime.GOMAXPROCS(0); n < 2 {
				t.Errorf("GOMAXPROCS %d with a bound worker running", n)
			}
			release()
		})
	}
	wg.Wait()
	check("16 concurrent workers ended", 3)
}

// A run of bound in-process workers leaves GOMAXPROCS as it found it.
func TestRunRestoresProcs(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: workers are not bound")
	}
	before := runtime.GOMAXPROCS(0)
	c := tiny()
	c.Workers, c.Threads, c.Steps = 2, 1, 3
	if _, err := Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("GOMAXPROCS %d after the run, %d before", got, before)
	}
}
