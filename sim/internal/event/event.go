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
//
// A pending event lives in a slot: its heap position in pos and its
// action in acts, dense arrays indexed by slot that freed slots are
// reused from, so that moving an entry in the heap writes 4 bytes of a
// small array rather than a record somewhere in the heap of the program.
//
// An event scheduled at the current time skips the heap: it joins a queue
// of such events, in scheduling order, and Step takes the queue's first
// unless the heap's earliest precedes it (same time, scheduled before).
// The order of events is the heap's alone would give.
type Scheduler struct {
	now    units.Seconds
	seq    uint64
	events int64
	heap   []entry  // a 4-ary heap by time, then scheduling order
	pos    []int32  // by slot: position in heap, nowAt-i in nowq, or -1
	acts   []action // by slot: what it runs
	free   []int32  // slots not in use

	nowq    []entry // events scheduled at now, in order; slot -1 if cancelled
	nowHead int     // first entry of nowq not run
	nowLive int     // entries of nowq neither run nor cancelled
}

// nowAt is the pos of the first entry of nowq; entry i's is nowAt-i.
const nowAt = -2

// entry is a queued event with its key, kept in the heap so that
// ordering the heap reads nothing else.
type entry struct {
	t    units.Seconds
	seq  uint64
	slot int32
}

// action is what a pending event runs: fn, or ev.Fire when ev is set.
type action struct {
	fn func()
	ev Event
}

// Event is an action to run at a simulated time. Scheduling a pointer
// that implements Event with AtEvent does not allocate, where a method
// value passed to At does.
type Event interface {
	Fire()
}

// Handle names a scheduled event so that it can be cancelled. The zero
// Handle names no event (scheduling numbers start at 1).
type Handle struct {
	slot int32
	seq  uint64
}

// Now returns the current simulated time: the time of the event running or
// last run, or the time given to RunUntil if that is later.
func (s *Scheduler) Now() units.Seconds { return s.now }

// Events returns the number of events run so far.
func (s *Scheduler) Events() int64 { return s.events }

// Len returns the number of pending events.
func (s *Scheduler) Len() int { return len(s.heap) + s.nowLive }

// Next returns the time of the earliest pending event, and false if there
// is none.
func (s *Scheduler) Next() (units.Seconds, bool) {
	if s.nowLive > 0 {
		return s.now, true
	}
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
	var slot int32
	if n := len(s.free); n > 0 {
		slot = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		slot = int32(len(s.pos))
		s.pos = append(s.pos, -1)
		s.acts = append(s.acts, action{})
	}
	s.seq++
	s.acts[slot] = action{fn, e}
	if t == s.now {
		s.pos[slot] = nowAt - int32(len(s.nowq))
		s.nowq = append(s.nowq, entry{t, s.seq, slot})
		s.nowLive++
	} else {
		s.heap = append(s.heap, entry{t, s.seq, slot})
		s.up(len(s.heap) - 1)
	}
	return Handle{slot: slot, seq: s.seq}
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
	if h.seq == 0 || int(h.slot) >= len(s.pos) {
		return false
	}
	i := s.pos[h.slot]
	if i <= nowAt {
		return s.nowq[nowAt-i].seq == h.seq
	}
	return i >= 0 && s.heap[i].seq == h.seq
}

// Cancel removes the event named by h from the queue. It returns false if
// the event has already run or been cancelled.
func (s *Scheduler) Cancel(h Handle) bool {
	if !s.Pending(h) {
		return false
	}
	if i := s.pos[h.slot]; i <= nowAt {
		s.nowq[nowAt-i].slot = -1
		if s.nowLive--; s.nowLive == 0 {
			s.nowq, s.nowHead = s.nowq[:0], 0
		}
	} else {
		s.remove(int(i))
	}
	s.release(h.slot)
	return true
}

// Step runs the earliest pending event, advancing the clock to its time.
// It returns false if there was none.
func (s *Scheduler) Step() bool {
	top, ok := s.pop()
	if !ok {
		return false
	}
	s.now = top.t
	s.events++
	a := s.acts[top.slot]
	s.release(top.slot)
	if a.ev != nil {
		a.ev.Fire()
	} else {
		a.fn()
	}
	return true
}

// pop takes the earliest pending event out of the queue.
func (s *Scheduler) pop() (entry, bool) {
	if s.nowLive > 0 {
		for s.nowq[s.nowHead].slot < 0 {
			s.nowHead++
		}
		e := s.nowq[s.nowHead]
		if len(s.heap) == 0 || !less(&s.heap[0], &e) {
			s.nowHead++
			if s.nowLive--; s.nowLive == 0 {
				s.nowq, s.nowHead = s.nowq[:0], 0
			}
			return e, true
		}
	}
	if len(s.heap) == 0 {
		return entry{}, false
	}
	e := s.heap[0]
	s.remove(0)
	return e, true
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
	for {
		if next, ok := s.Next(); !ok || next > t {
			break
		}
		s.Step()
	}
	s.now = t
}

func (s *Scheduler) release(slot int32) {
	s.acts[slot] = action{}
	s.pos[slot] = -1
	s.free = append(s.free, slot)
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
	s.up(int(s.pos[e.slot]))
}

func less(a, b *entry) bool {
	return a.t < b.t || (a.t == b.t && a.seq < b.seq)
}

// set puts e at position i of the heap.
func (s *Scheduler) set(i int, e entry) {
	s.heap[i] = e
	s.pos[e.slot] = int32(i)
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
