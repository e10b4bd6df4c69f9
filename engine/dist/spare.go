package dist

import (
	"runtime"
	"sync"
)

// spare counts the bound workers of this process and the Ps that
// spareProc added to GOMAXPROCS for them.
var spare struct {
	sync.Mutex
	workers int // bound workers running
	added   int // Ps added to GOMAXPROCS while they run
}

// spareProc makes sure that every bound worker of the process has a
// spare P beside its own, raising GOMAXPROCS to twice the number of bound
// workers if it is lower, until the returned function has been called
// for every one of them; then GOMAXPROCS is lowered by what was added.
//
// A single-threaded worker that has a CPU to itself computes without a
// pause from its first step to its last, and so holds one of the Go
// scheduler's Ps (GOMAXPROCS of them, one per CPU by default) for the
// whole run, on its locked thread. With as many such workers as Ps, as
// with two in-process workers on two cores, the goroutines that serve
// them — each worker's loader and its overlapped all-reduce — find no P
// free: they wait until the scheduler preempts a worker, which it does
// after 10 ms, and each bucket of the all-reduce waits for that on both
// ranks. With spare Ps their threads are scheduled by the operating
// system between the workers' threads, as an MPI progress thread or a
// PyTorch data-loader process is. A worker process of a TCP run, one
// bound worker on a machine of two or more CPUs, already has one.
//
// GOMAXPROCS is process-wide: while bound workers run, code of the same
// process that sizes itself by it sees the raised value.
func spareProc() (release func()) {
	spare.Lock()
	spare.workers++
	if need, have := 2*spare.workers, runtime.GOMAXPROCS(0); have < need {
		runtime.GOMAXPROCS(need)
		spare.added += need - have
	}
	spare.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			spare.Lock()
			defer spare.Unlock()
			spare.workers--
			if spare.workers == 0 && spare.added > 0 {
				runtime.GOMAXPROCS(max(1, runtime.GOMAXPROCS(0)-spare.added))
				spare.added = 0
			}
		})
	}
}
