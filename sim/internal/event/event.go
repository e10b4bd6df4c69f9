package event

import (
	"math"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/timeq"
)

const (
	badTime  = "event: time is NaN or infinite"
	pastTime = "event: time before now"
	nilFunc  = "event: nil function"
)

// Scheduler is a discrete-event clock and queue. The zero value is an
// empty scheduler at time 0, ready to use.
//
// A pending event lives in a slot: its action, sequence number and handle
// in dense arrays indexed by slot that freed slots are reused from.
// Events later than now wait in q, a calendar queue of slots (package
// timeq). An event scheduled at the current time skips it: it joins a
// queue of such events, in scheduling order, and Step takes the queue's
// first unless q's earliest precedes it (same time, scheduled before).
// The order of events is the one q's alone would give.
type Scheduler struct {
	now    units.Seconds
	seq    uint64
	events int64
	q      timeq.Queue    // slots of the events after now
	acts   []action       // by slot: what it runs
	sseq   []uint64       // by slot: its event's sequence number, 0 if free
	qh     []timeq.Handle // by slot: its event's handle in q
	where  []int32        // by slot: its index in nowq, or -1 in q
	free   []int32        // slots not in use

	nowq    []entry // events scheduled at now, in order; slot -1 if cancelled
	nowHead int     // first entry of nowq not run
	nowLive int     // entries of nowq neither run nor cancelled
}

// UseSortedQueue makes s keep its events in a sorted list rather than a
// calendar queue (timeq.Queue.UseSorted): the same events in the same
// order, at a cost linear in the number pending. It is the reference the
// calendar queue is tested against; the events pending move over.
func (s *Scheduler) UseSortedQueue() { s.q.UseSorted() }

// SortedQueue reports whether UseSortedQueue was called, for a model
// whose own queues follow the scheduler's choice.
func (s *Scheduler) SortedQueue() bool { return s.q.Sorted() }

// entry is an event scheduled at the current time.
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
func (s *Scheduler) Len() int { return s.q.Len() + s.nowLive }

// Next returns the time of the earliest pending event, and false if there
// is none.
func (s *Scheduler) Next() (units.Seconds, bool) {
	if s.nowLive > 0 {
		return s.now, true
	}
	if e, ok := s.q.Min(); ok {
		return units.Seconds(e.T), true
	}
	return 0, false
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
		slot = int32(len(s.acts))
		s.acts = append(s.acts, action{})
		s.sseq = append(s.sseq, 0)
		s.qh = append(s.qh, timeq.Handle{})
		s.where = append(s.where, -1)
	}
	s.seq++
	s.acts[slot] = action{fn, e}
	s.sseq[slot] = s.seq
	if t == s.now {
		s.where[slot] = int32(len(s.nowq))
		s.nowq = append(s.nowq, entry{t, s.seq, slot})
		s.nowLive++
	} else {
		s.where[slot] = -1
		s.qh[slot] = s.q.Push(float64(t), s.seq, slot)
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
	return h.seq != 0 && int(h.slot) < len(s.sseq) && s.sseq[h.slot] == h.seq
}

// Cancel removes the event named by h from the queue. It returns false if
// the event has already run or been cancelled.
func (s *Scheduler) Cancel(h Handle) bool {
	if !s.Pending(h) {
		return false
	}
	if i := s.where[h.slot]; i >= 0 {
		s.nowq[i].slot = -1
		if s.nowLive--; s.nowLive == 0 {
			s.nowq, s.nowHead = s.nowq[:0], 0
		}
	} else {
		s.q.Remove(s.qh[h.slot])
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
		if m, ok := s.q.Min(); !ok || !(m.T < float64(e.t) || m.T == float64(e.t) && m.Seq < e.seq) {
			s.nowHead++
			if s.nowLive--; s.nowLive == 0 {
				s.nowq, s.nowHead = s.nowq[:0], 0
			}
			return e, true
		}
	}
	if s.q.Len() == 0 {
		return entry{}, false
	}
	e := s.q.Pop()
	return entry{units.Seconds(e.T), e.Seq, e.V}, true
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
	s.sseq[slot] = 0
	s.free = append(s.free, slot)
}
