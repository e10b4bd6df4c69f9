package tensor

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// threads is the number of goroutines Parallel uses; 0 means GOMAXPROCS.
var threads atomic.Int64

// Threads returns the number of goroutines that Parallel runs work on: the
// value last given to SetThreads, or runtime.GOMAXPROCS(0) if none was.
func Threads() int {
	if n := int(threads.Load()); n > 0 {
		return n
	}
	return runtime.GOMAXPROCS(0)
}

// SetThreads sets the number of goroutines that Parallel uses and that
// Gemm splits a product over; n <= 0 restores the default, GOMAXPROCS.
// Use it when several replicas compute at once, so that together they do
// not oversubscribe the cores.
func SetThreads(n int) {
	threads.Store(int64(max(n, 0)))
}

// Parallel calls f(lo, hi) for the consecutive chunks
//
//	[0, grain), [grain, 2*grain), ..., [k*grain, n)
//
// of the index range [0, n), running up to Threads() calls at once and
// returning when all are done. The chunk boundaries depend only on n and
// grain, never on the number of threads, so a computation that reduces each
// chunk into its own slot (slot lo/grain) and then combines the slots in
// order gives bit-identical results on any machine. f must be safe to call
// concurrently on disjoint ranges. A grain below 1 is taken as 1.
func Parallel(n, grain int, f func(lo, hi int)) {
	ParallelWorkers(n, grain, func(_, lo, hi int) { f(lo, hi) })
}

// ParallelWorkers is Parallel with the index w of the goroutine running
// each call passed to f, 0 <= w < Workers(n, grain), so that f can use
// per-worker scratch space. Which chunks a worker gets varies from run to
// run; results must not depend on it.
func ParallelWorkers(n, grain int, f func(w, lo, hi int)) {
	if n <= 0 {
		return
	}
	if grain < 1 {
		grain = 1
	}
	chunks := (n + grain - 1) / grain
	workers := min(Threads(), chunks)
	if workers <= 1 {
		for lo := 0; lo < n; lo += grain {
			f(0, lo, min(lo+grain, n))
		}
		return
	}
	var next atomic.Int64
	run := func(w int) {
		for {
			c := int(next.Add(1)) - 1
			if c >= chunks {
				return
			}
			lo := c * grain
			f(w, lo, min(lo+grain, n))
		}
	}
	var wg sync.WaitGroup
	wg.Add(workers - 1)
	for w := 1; w < workers; w++ {
		go func() {
			defer wg.Done()
			run(w)
		}()
	}
	run(0)
	wg.Wait()
}

// Workers returns the number of goroutines Parallel(n, grain, f) runs f
// on: min(Threads(), Chunks(n, grain)).
func Workers(n, grain int) int { return min(Threads(), Chunks(n, grain)) }

// Chunks returns the number of chunks Parallel(n, grain, f) calls f on, so
// that a caller can size one partial-result slot per chunk.
func Chunks(n, grain int) int {
	if n <= 0 {
		return 0
	}
	if grain < 1 {
		grain = 1
	}
	return (n + grain - 1) / grain
}
