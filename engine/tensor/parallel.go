package tensor

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
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
//
// The calling goroutine runs chunks itself, and the other workers are
// helper goroutines that live between calls (see pool) rather than new
// goroutines per call. A call made while another is using the helpers
// (concurrent or nested calls) starts goroutines of its own.
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
	j := &job{f: f, n: n, grain: grain, chunks: chunks, workers: workers}
	if helpers.TryLock() {
		defer helpers.Unlock() // also if f panics, so that the pool stays usable
		helpers.run(j)
		return
	}
	var wg sync.WaitGroup
	wg.Add(workers - 1)
	for w := 1; w < workers; w++ {
		go func() {
			defer wg.Done()
			j.run(w)
		}()
	}
	j.run(0)
	wg.Wait()
}

// job is one ParallelWorkers call: its chunks are claimed one at a time
// by whichever worker comes first.
type job struct {
	f                         func(w, lo, hi int)
	n, grain, chunks, workers int
	next                      atomic.Int64 // next chunk to claim
	active                    atomic.Int64 // helpers that may still call f
}

// run claims and computes chunks as worker w until none is left.
func (j *job) run(w int) {
	for {
		c := int(j.next.Add(1)) - 1
		if c >= j.chunks {
			return
		}
		lo := c * j.grain
		j.f(w, lo, min(lo+j.grain, j.n))
	}
}

// spinFor is how long an idle helper keeps looking for the next job
// before it parks. Waking a parked goroutine on an idle core costs the
// time the operating system (and, in a virtual machine, the hypervisor)
// takes to run its thread again: 85–130 µs on the 2-core KVM guests of
// docs/performance.md, against gaps of a few to a few hundred
// microseconds between the parallel loops of a training step. Spinning
// through those gaps keeps the second core in the next loop from its
// start, as OpenMP runtimes do; a spinning helper yields to any other
// runnable goroutine (runtime.Gosched) and parks after spinFor of
// nothing to do. The clock decides only when a helper parks, never which
// chunks run or what they compute. Nanoseconds; a variable for tests.
var spinFor atomic.Int64

func init() { spinFor.Store(int64(time.Millisecond)) }

// helpers is the pool of helper goroutines that ParallelWorkers uses.
var helpers pool

// pool is a set of helper goroutines, worker indices 1, 2, ...; a
// ParallelWorkers call holds its mutex while it uses them. A job is
// published by storing it and then advancing seq; every helper watches
// seq, spinning for spinFor after its last job and then parked on its
// wake channel.
type pool struct {
	sync.Mutex
	seq     atomic.Uint64
	cur     atomic.Pointer[job]
	helpers []*helper // helper w is helpers[w-1]
}

// helper is the state a helper goroutine shares with the publisher.
type helper struct {
	parked atomic.Bool   // set while the helper is (about to be) blocked on wake
	wake   chan struct{} // the publisher's token for a parked helper, capacity 1
}

// run computes j with the caller as worker 0 and helpers 1 to
// j.workers−1, starting helpers that do not exist yet. It returns once
// every chunk is done; a helper that arrives after that finds no chunk
// left and does not call f.
func (p *pool) run(j *job) {
	for len(p.helpers)+1 < j.workers {
		h := &helper{wake: make(chan struct{}, 1)}
		p.helpers = append(p.helpers, h)
		go p.serve(len(p.helpers), p.seq.Load(), h)
	}
	p.cur.Store(j)
	p.seq.Add(1)
	for _, h := range p.helpers[:j.workers-1] {
		if h.parked.CompareAndSwap(true, false) {
			h.wake <- struct{}{}
		}
	}
	j.run(0)
	// Every chunk is claimed; wait for the helpers computing one. A helper
	// counts itself active before it claims, so none is missed.
	for j.active.Load() > 0 {
		runtime.Gosched()
	}
}

// serve is the body of helper goroutine w: it runs every job published
// after seq last that has a place for it, and never returns.
func (p *pool) serve(w int, last uint64, h *helper) {
	for {
		s := p.seq.Load()
		if s == last {
			s = p.await(last, h)
		}
		last = s
		j := p.cur.Load()
		if w >= j.workers {
			continue
		}
		j.active.Add(1)
		j.run(w)
		j.active.Add(-1)
	}
}

// await waits for seq to move past last, spinning for spinFor and then
// parked, and returns its new value.
func (p *pool) await(last uint64, h *helper) uint64 {
	until := time.Now().Add(time.Duration(spinFor.Load()))
	for {
		if s := p.seq.Load(); s != last {
			return s
		}
		if time.Now().After(until) {
			break
		}
		runtime.Gosched()
	}
	for {
		h.parked.Store(true)
		if s := p.seq.Load(); s != last {
			if !h.parked.CompareAndSwap(true, false) {
				<-h.wake // the publisher saw us parked: take its token
			}
			return s
		}
		<-h.wake
		if s := p.seq.Load(); s != last {
			return s
		}
	}
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
