package event

import (
	"math"

	"scaleplan/internal/units"
)

const (
	badTime  = "event: time is NaN or infinite"
	pastTime = "event: time before now"
	nilFunc  = "event: nil function"
)

// Scheduler is a discrete-event clock and queue. The zero value is an
// empty scheduler at time 0, ready to use.
type Scheduler struct {
	now    units.Seconds
	seq    uint64
	events int64
	heap   []entry // a 4-ary heap by time, then scheduling order
	free   []*item
}

// entry is a queued item with its key, kept in the heap so that ordering
// the heap reads no item.
type entry struct {
	t   units.Seconds
	seq uint64
	it  *item
}

// item is one pending event.
type item struct {
	t   units.Seconds
	seq uint64
	fn  func()
	ev  Event
	idx int // position in the heap, -1 when not queued
}

// Event is an action to run at a simulated time. Scheduling a pointer
// that implements Event with AtEvent does not allocate, where a method
// value passed to At does.
type Event interface {
	Fire()
}

// Handle names a scheduled event so that it can be cancelled. The zero
// Handle names no event.
type Handle struct {
	it  *item
	seq uint64
}

// Now returns the current simulated time: the time of the event running or
// last run, or the time given to RunUntil if that is later.
func (s *Scheduler) Now() units.Seconds { return s.now }

// Events returns the number of events run so far.
func (s *Scheduler) Events() int64 { return s.events }

// Len returns the number of pending events.
func (s *Scheduler) Len() int { return len(s.heap) }

// Next returns the time of the earliest pending event, and false if there
// is none.
func (s *Scheduler) Next() (units.Seconds, bool) {
	if len(s.heap) == 0 {
		return 0, false
	}
	return s.heap[0].t, true
}

// At schedules fn to run at time t, which must not be before Now. Events at
// equal times run in the order they were scheduled.
func (s *Scheduler) At(t units.Seconds, fn func()) Handle {
	if math.IsNaN(float64(t)) || math.IsInf(float64(t), 0) {
		panic(badTime)
	}
	if t < s.now {
		panic(pastTime)
	}
	if fn == nil {
		panic(nilFunc)
	}
	return s.push(t, fn, nil)
}

// AtEvent schedules e.Fire to run at time t, as At does.
func (s *Scheduler) AtEvent(t units.Seconds, e Event) Handle {
	if math.IsNaN(float64(t)) || math.IsInf(float64(t), 0) {
		panic(badTime)
	}
	if t < s.now {
		panic(pastTime)
	}
	if e == nil {
		panic(nilFunc)
	}
	return s.push(t, nil, e)
}

// AfterEvent schedules e.Fire to run d seconds after Now, as After does.
func (s *Scheduler) AfterEvent(d units.Seconds, e Event) Handle {
	if d < 0 {
		panic(pastTime)
	}
	return s.AtEvent(s.now+d, e)
}

func (s *Scheduler) push(t units.Seconds, fn func(), e Event) Handle {
	var it *item
	if n := len(s.free); n > 0 {
		it = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		it = new(item)
	}
	s.seq++
	it.t, it.seq, it.fn, it.ev = t, s.seq, fn, e
	s.heap = append(s.heap, entry{t, s.seq, it})
	s.up(len(s.heap) - 1)
	return Handle{it: it, seq: it.seq}
}

// After schedules fn to run d seconds after Now; d must not be negative.
func (s *Scheduler) After(d units.Seconds, fn func()) Handle {
	if d < 0 {
		panic(pastTime)
	}
	return s.At(s.now+d, fn)
}

// Pending reports whether the event named by h is still queued.
func (s *Scheduler) Pending(h Handle) bool {
	return h.it != nil && h.it.seq == h.seq && h.it.idx >= 0
}

// Cancel removes the event named by h from the queue. It returns false if
// the event has already run or been cancelled.
func (s *Scheduler) Cancel(h Handle) bool {
	if !s.Pending(h) {
		return false
	}
	it := h.it
	s.remove(it.idx)
	s.release(it)
	return true
}

// Step runs the earliest pending event, advancing the clock to its time.
// It returns false if there was none.
func (s *Scheduler) Step() bool {
	if len(s.heap) == 0 {
		return false
	}
	it := s.heap[0].it
	s.remove(0)
	s.now = it.t
	s.events++
	fn, e := it.fn, it.ev
	s.release(it)
	if e != nil {
		e.Fire()
	} else {
		fn()
	}
	return true
}

// Run runs events until none is pending.
func (s *Scheduler) Run() {
	for s.Step() {
	}
}

// RunUntil runs every event at or before time t, then sets the clock to t.
// t must not be before Now.
func (s *Scheduler) RunUntil(t units.Seconds) {
	if math.IsNaN(float64(t)) || math.IsInf(float64(t), 0) {
		panic(badTime)
	}
	if t < s.now {
		panic(pastTime)
	}
	for len(s.heap) > 0 && s.heap[0].t <= t {
		s.Step()
	}
	s.now = t
}

func (s *Scheduler) release(it *item) {
	it.fn, it.ev = nil, nil
	it.idx = -1
	s.free = append(s.free, it)
}

// remove takes the entry at position i out of the heap.
func (s *Scheduler) remove(i int) {
	last := len(s.heap) - 1
	e := s.heap[last]
	s.heap[last] = entry{}
	s.heap = s.heap[:last]
	if i == last {
		return
	}
	s.set(i, e)
	s.down(i)
	s.up(e.it.idx)
}

func less(a, b *entry) bool {
	return a.t < b.t || (a.t == b.t && a.seq < b.seq)
}

// set puts e at position i of the heap.
func (s *Scheduler) set(i int, e entry) {
	s.heap[i] = e
	e.it.idx = i
}

// up moves the entry at i toward the root while it precedes its parent.
func (s *Scheduler) up(i int) {
	h := s.heap
	e := h[i]
	for i > 0 {
		p := (i - 1) / 4
		if !less(&e, &h[p]) {
			break
		}
		s.set(i, h[p])
		i = p
	}
	s.set(i, e)
}

// down moves the entry at i toward the leaves while a child precedes it.
func (s *Scheduler) down(i int) {
	h := s.heap
	n := len(h)
	e := h[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for j := c + 1; j < min(c+4, n); j++ {
			if less(&h[j], &h[m]) {
				m = j
			}
		}
		if !less(&h[m], &e) {
			break
		}
		s.set(i, h[m])
		i = m
	}
	s.set(i, e)
}
