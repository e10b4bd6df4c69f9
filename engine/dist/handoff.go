package dist

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// MeasureHandoff returns the mean one-way time of handing a value between
// two goroutines on the first two CPUs of the process's affinity set (bound
// to them on Linux, as workers are), over n round trips: each waits,
// spinning, for the other's store to a shared word and answers with its
// own, so every handoff moves one cache line from one core to the other.
// The figure says whether the two cores share a cache: tens of
// nanoseconds when they share the last level, several times that when
// the line crosses between core complexes or sockets, which a virtual
// machine's host may decide from one second to the next
// (docs/validation.md, "Cores apart"). It reads the clock to time the
// round trips and to give up after a second without an answer.
//
// It needs two CPUs and GOMAXPROCS of at least 2; n must be at least 1.
func MeasureHandoff(n int) (time.Duration, error) {
	switch {
	case n < 1:
		return 0, fmt.Errorf("dist: handoff probe of %d round trips", n)
	case runtime.NumCPU() < 2 || runtime.GOMAXPROCS(0) < 2:
		return 0, fmt.Errorf("dist: handoff probe needs two CPUs and GOMAXPROCS >= 2 (%d CPUs, GOMAXPROCS %d)", runtime.NumCPU(), runtime.GOMAXPROCS(0))
	}
	const timeout = time.Second
	var (
		word    atomic.Int64 // side 0 stores the odd values, side 1 the even ones
		abort   atomic.Bool
		wg      sync.WaitGroup
		errs    [2]error
		elapsed time.Duration
	)
	start := time.Now()
	for side := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := bindThread(side)
			if err != nil {
				errs[side] = err
				abort.Store(true)
				return
			}
			defer release()
			// One untimed round trip, so that neither side's start-up is
			// timed; side 0 then times 2n handoffs, from seeing 2 to
			// seeing 2n+2.
			last := 2 * int64(n+1)
			wait := func(v int64) bool {
				for spins := 1; word.Load() != v; spins++ {
					if spins%(1<<12) == 0 && (abort.Load() || time.Since(start) > timeout) {
						abort.Store(true)
						errs[side] = fmt.Errorf("dist: handoff probe: no answer from the other CPU within %v", timeout)
						return false
					}
				}
				return true
			}
			var t0 time.Time
			for v := int64(side); v < last; v += 2 {
				if !wait(v) {
					return
				}
				if v == 2 {
					t0 = time.Now()
				}
				word.Store(v + 1)
			}
			if side == 0 && wait(last) {
				elapsed = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		return 0, err
	}
	return elapsed / time.Duration(2*n), nil
}
