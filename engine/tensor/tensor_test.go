package tensor

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestShapes(t *testing.T) {
	x := New(2, 3, 4)
	if x.Len() != 24 || x.Rank() != 3 || x.Dim(-1) != 4 || x.Dim(0) != 2 {
		t.Fatalf("New(2,3,4): len %d rank %d dims %d %d", x.Len(), x.Rank(), x.Dim(0), x.Dim(-1))
	}
	for i := range x.Data {
		x.Data[i] = float32(i)
	}
	// Row-major: element (1,2,3) is at 1*12 + 2*4 + 3 = 23.
	if x.Data[23] != 23 {
		t.Fatal("layout")
	}
	y := x.Reshape(6, 4)
	y.Data[0] = 100
	if x.Data[0] != 100 {
		t.Fatal("Reshape must share data")
	}
	if !x.Reshape(2, 3, 4).SameShape(x) || x.SameShape(y) {
		t.Fatal("SameShape")
	}
	c := x.Clone()
	c.Data[1] = -1
	if x.Data[1] == -1 {
		t.Fatal("Clone must copy data")
	}
	var r T
	r.Resize(4, 5)
	if r.Len() != 20 {
		t.Fatalf("Resize: len %d", r.Len())
	}
	p := &r.Data[0]
	r.Resize(2, 5)
	if r.Len() != 10 || &r.Data[0] != p {
		t.Fatal("Resize to a smaller shape must reuse storage")
	}
	r.Resize(4, 5)
	if &r.Data[0] != p {
		t.Fatal("Resize back within capacity must reuse storage")
	}
	s := New()
	if s.Len() != 1 {
		t.Fatalf("rank-0 tensor holds %d elements, want 1", s.Len())
	}
	z := New(0, 3)
	if z.Len() != 0 {
		t.Fatal("zero dimension")
	}
	for _, f := range []func(){
		func() { New(2, -1) },
		func() { FromData(make([]float32, 5), 2, 3) },
		func() { x.Reshape(5, 5) },
		func() { x.CopyFrom(New(3)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		}()
	}
}

func TestParallel(t *testing.T) {
	for _, tc := range []struct{ n, grain, threads int }{
		{0, 4, 2}, {1, 4, 2}, {10, 3, 2}, {10, 3, 1}, {100, 1, 4}, {7, 0, 3}, {1000, 64, 8},
	} {
		SetThreads(tc.threads)
		var mu sync.Mutex
		seen := make([]int, tc.n)
		var chunks [][2]int
		Parallel(tc.n, tc.grain, func(lo, hi int) {
			mu.Lock()
			defer mu.Unlock()
			chunks = append(chunks, [2]int{lo, hi})
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		for i, s := range seen {
			if s != 1 {
				t.Fatalf("%+v: index %d visited %d times", tc, i, s)
			}
		}
		if len(chunks) != Chunks(tc.n, tc.grain) {
			t.Fatalf("%+v: %d chunks, Chunks says %d", tc, len(chunks), Chunks(tc.n, tc.grain))
		}
		g := max(1, tc.grain)
		for _, c := range chunks {
			if c[0]%g != 0 || c[1] != min(c[0]+g, tc.n) {
				t.Fatalf("%+v: chunk %v not aligned to grain", tc, c)
			}
		}
	}
	// Worker indices stay below Workers and are never used by two calls
	// at once.
	for _, th := range []int{1, 2, 4} {
		SetThreads(th)
		n, grain := 50, 3
		busy := make([]int32, Workers(n, grain))
		var mu sync.Mutex
		ParallelWorkers(n, grain, func(w, lo, hi int) {
			mu.Lock()
			if w < 0 || w >= len(busy) || busy[w] != 0 {
				mu.Unlock()
				t.Errorf("threads=%d: worker %d out of range or busy", th, w)
				return
			}
			busy[w] = 1
			mu.Unlock()
			mu.Lock()
			busy[w] = 0
			mu.Unlock()
		})
		if want := min(th, Chunks(n, grain)); Workers(n, grain) != want {
			t.Errorf("threads=%d: Workers = %d, want %d", th, Workers(n, grain), want)
		}
	}
	SetThreads(0)
	if Threads() < 1 {
		t.Fatal("Threads")
	}
}

// Calls that run at the same time, calls inside calls, and calls after
// the helpers have parked each visit every index once, with worker
// indices in range and each used by one goroutine at a time.
func TestParallelConcurrent(t *testing.T) {
	defer SetThreads(0)
	defer spinFor.Store(spinFor.Load())
	SetThreads(3)
	check := func(n, grain int, nested bool) error {
		seen := make([]atomic.Int32, n)
		busy := make([]atomic.Bool, Workers(n, grain))
		var bad atomic.Bool
		ParallelWorkers(n, grain, func(w, lo, hi int) {
			if w < 0 || w >= len(busy) || !busy[w].CompareAndSwap(false, true) {
				bad.Store(true)
				return
			}
			defer busy[w].Store(false)
			if nested {
				Parallel(hi-lo, 1, func(a, b int) {
					for i := lo + a; i < lo+b; i++ {
						seen[i].Add(1)
					}
				})
				return
			}
			for i := lo; i < hi; i++ {
				seen[i].Add(1)
			}
		})
		if bad.Load() {
			return fmt.Errorf("n=%d grain=%d: a worker index out of range or in use twice", n, grain)
		}
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				return fmt.Errorf("n=%d grain=%d nested=%v: index %d visited %d times", n, grain, nested, i, c)
			}
		}
		return nil
	}
	for _, spin := range []time.Duration{time.Millisecond, 0} {
		spinFor.Store(int64(spin))
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 200 {
					if err := check(1+(i*7+g)%97, 1+i%5, i%3 == 0); err != nil {
						errs <- err
						return
					}
					if spin == 0 && i%50 == 0 {
						time.Sleep(100 * time.Microsecond) // let the helpers park
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
}

func TestAddScaled(t *testing.T) {
	for _, n := range []int{0, 1, 3, 4, 7, 16, 33, 100} {
		dst := make([]float32, n)
		s := make([]float32, n)
		want := make([]float32, n)
		for i := range n {
			dst[i] = float32(i)
			s[i] = float32(2*i + 1)
			want[i] = dst[i] - 0.5*s[i] // exact in float32 for these values
		}
		AddScaled(dst, -0.5, s)
		for i := range n {
			if dst[i] != want[i] {
				t.Fatalf("n=%d: dst[%d] = %v, want %v", n, i, dst[i], want[i])
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("no panic on length mismatch")
		}
	}()
	AddScaled(make([]float32, 2), 1, make([]float32, 3))
}

// A loop body that panics on the calling goroutine leaves the helpers
// usable by the next loop.
func TestParallelAfterPanic(t *testing.T) {
	defer SetThreads(0)
	SetThreads(2)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("no panic")
			}
		}()
		ParallelWorkers(4, 1, func(w, lo, hi int) {
			if w == 0 {
				panic("body")
			}
		})
	}()
	if !helpers.TryLock() {
		t.Fatal("the helper pool is still held after the panic")
	}
	helpers.Unlock()
	var n atomic.Int32
	Parallel(100, 1, func(lo, hi int) { n.Add(int32(hi - lo)) })
	if n.Load() != 100 {
		t.Errorf("after the panic: %d of 100 indices visited", n.Load())
	}
}
