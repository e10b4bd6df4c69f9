package dist

import (
	"fmt"
	"time"
)

// AllReduce replaces buf on every rank of t's ring by the scaled sum of
// all ranks' buf,
//
//	buf ← scale · Σ_r buf_r
//
// with the ring algorithm: buf is cut into W chunks,
//
//	chunk c = buf[⌊c·n/W⌋ : ⌊(c+1)·n/W⌋],   n = len(buf),
//
// a reduce-scatter of W−1 steps leaves rank r with the sum of chunk
// (r+1) mod W (in step s, rank r sends chunk r−s and adds what it
// receives into chunk r−s−1, indices mod W), the owner multiplies it by
// scale, and an all-gather of W−1 steps passes each finished chunk round
// the ring. Each rank sends and receives 2(W−1)/W·n values.
//
// The summation order is fixed: chunk c is summed as the left fold
//
//	(((buf_c + buf_{c+1}) + buf_{c+2}) + ... ) + buf_{c−1}
//
// over the ranks in ring order from rank c, and every rank ends with the
// owner's bits. The result is therefore the same, bit for bit, on every
// rank, on every run and over every transport, for a given W and n; it
// differs in the last bits from a serial sum in another order. With W = 1
// AllReduce only scales. Every rank must call AllReduce with the same n.
func AllReduce(t Transport, buf []float32, scale float32) error {
	w, r, n := t.Size(), t.Rank(), len(buf)
	if w == 1 || n == 0 {
		scaleBy(buf, scale)
		return nil
	}
	chunk := func(c int) []float32 {
		c = ((c % w) + w) % w
		return buf[c*n/w : (c+1)*n/w]
	}
	for s := range w - 1 {
		if err := t.SendRecv(chunk(r-s), chunk(r-s-1), true); err != nil {
			return fmt.Errorf("reduce-scatter step %d: %w", s, err)
		}
	}
	scaleBy(chunk(r+1), scale)
	for s := range w - 1 {
		if err := t.SendRecv(chunk(r+1-s), chunk(r-s), false); err != nil {
			return fmt.Errorf("all-gather step %d: %w", s, err)
		}
	}
	return nil
}

// scaleBy multiplies x by s in place; s = 1 leaves x untouched.
func scaleBy(x []float32, s float32) {
	if s == 1 {
		return
	}
	for i := range x {
		x[i] *= s
	}
}

// Buckets cuts n gradient values into consecutive buckets of size values,
// counted from the end of the gradient, where backward finishes first:
//
//	bucket k = [max(0, n − (k+1)·size), n − k·size),   k = 0, 1, ...
//
// in the order they are all-reduced. The first bucket of the gradient
// (the last in the list) may be shorter. size <= 0 or size >= n gives one
// bucket; n = 0 gives none.
func Buckets(n, size int) [][2]int {
	if n <= 0 {
		return nil
	}
	if size <= 0 || size >= n {
		return [][2]int{{0, n}}
	}
	var b [][2]int
	for hi := n; hi > 0; hi -= size {
		b = append(b, [2]int{max(0, hi-size), hi})
	}
	return b
}

// reducer sums one rank's gradient with the other ranks' (an AllReduce
// with scale 1: the loss gradient already carries the global batch's
// mean) in buckets, either after
// backward (Reduce) or overlapped with it (Ready during backward, then
// Wait): a goroutine of its own then runs each bucket's all-reduce as
// soon as backward has finished the bucket's values. The buckets go
// through the ring in the same order in both modes, so the results are
// bit-identical.
type reducer struct {
	t       Transport
	grads   []float32
	buckets [][2]int

	// Overlap state. next is the next bucket to queue; queue feeds the
	// goroutine; done receives the step's outcome after its last bucket.
	next  int
	queue chan int
	done  chan reduceResult
	quit  chan struct{}
}

// reduceResult is the outcome of one step's all-reduces.
type reduceResult struct {
	err         error
	first, last time.Time // start of the first bucket, end of the last
}

// newReducer returns a reducer of grads over t; with overlap it starts
// its goroutine (Close stops it).
func newReducer(t Transport, grads []float32, bucketValues int, overlap bool) *reducer {
	r := &reducer{t: t, grads: grads, buckets: Buckets(len(grads), bucketValues)}
	if overlap && len(r.buckets) > 0 {
		r.queue = make(chan int, len(r.buckets))
		r.done = make(chan reduceResult, 1)
		r.quit = make(chan struct{})
		go r.loop()
	}
	return r
}

// loop runs the queued buckets' all-reduces in order and reports each
// step's outcome after its last bucket. After an error it skips the
// step's remaining buckets.
func (r *reducer) loop() {
	var res reduceResult
	for {
		select {
		case k := <-r.queue:
			if res.err == nil {
				t0 := time.Now()
				if k == 0 {
					res.first = t0
				}
				b := r.buckets[k]
				if err := AllReduce(r.t, r.grads[b[0]:b[1]], 1); err != nil {
					res.err = fmt.Errorf("bucket [%d, %d): %w", b[0], b[1], err)
				}
				res.last = time.Now()
			}
			if k == len(r.buckets)-1 {
				r.done <- res
				res = reduceResult{}
			}
		case <-r.quit:
			return
		}
	}
}

// Ready is the Network.GradReady hook of an overlapped step: Grads[lo:]
// is final, so every bucket that lies in it is queued.
func (r *reducer) Ready(lo, hi int) {
	for r.next < len(r.buckets) && r.buckets[r.next][0] >= lo {
		r.queue <- r.next
		r.next++
	}
}

// Wait waits for the overlapped all-reduces of a step and returns their
// span (first start to last end).
func (r *reducer) Wait() (time.Duration, error) {
	if r.queue == nil {
		return 0, nil
	}
	if r.next != len(r.buckets) {
		panic(badBackward)
	}
	r.next = 0
	res := <-r.done
	return res.last.Sub(res.first), res.err
}

// Reduce all-reduces every bucket in order on the calling goroutine.
func (r *reducer) Reduce() error {
	for _, b := range r.buckets {
		if err := AllReduce(r.t, r.grads[b[0]:b[1]], 1); err != nil {
			return fmt.Errorf("bucket [%d, %d): %w", b[0], b[1], err)
		}
	}
	return nil
}

// Close stops the overlap goroutine, if any.
func (r *reducer) Close() {
	if r.quit != nil {
		close(r.quit)
	}
}
