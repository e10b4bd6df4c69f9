package event

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"scaleplan/internal/units"
)

// TestOrder checks events against a reference: the (time, sequence) sort of
// everything scheduled, computed with slices.SortStableFunc.
func TestOrder(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 42} {
		rng := rand.New(rand.NewPCG(seed, seed))
		var s Scheduler
		type rec struct {
			t  units.Seconds
			id int
		}
		var want, got []rec
		const n = 2000
		for i := range n {
			// Coarse times so that many events tie.
			tm := units.Seconds(rng.IntN(50)) * 0.25
			want = append(want, rec{tm, i})
			s.At(tm, func() { got = append(got, rec{s.Now(), i}) })
		}
		slices.SortStableFunc(want, func(a, b rec) int {
			switch {
			case a.t < b.t:
				return -1
			case a.t > b.t:
				return 1
			}
			return 0
		})
		s.Run()
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: event order differs from the (time, sequence) sort", seed)
		}
		if s.Events() != n {
			t.Errorf("seed %d: Events() = %d, want %d", seed, s.Events(), n)
		}
	}
}

// TestMonotone runs a random self-scheduling workload with cancellations and
// asserts that simulated time never decreases and that each event runs at
// the time it was scheduled for.
func TestMonotone(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var s Scheduler
	var handles []Handle
	prev := units.Seconds(math.Inf(-1))
	ran, cancelled := 0, 0
	var spawn func(depth int)
	spawn = func(depth int) {
		at := s.Now() + units.Seconds(rng.Float64())*1e-3
		h := s.At(at, func() {
			if s.Now() < prev {
				t.Fatalf("time went back from %v to %v", prev, s.Now())
			}
			if s.Now() != at {
				t.Fatalf("event for %v ran at %v", at, s.Now())
			}
			prev = s.Now()
			ran++
			if depth < 6 {
				for range rng.IntN(3) {
					spawn(depth + 1)
				}
			}
			if len(handles) > 0 && rng.IntN(4) == 0 {
				if s.Cancel(handles[rng.IntN(len(handles))]) {
					cancelled++
				}
			}
		})
		handles = append(handles, h)
	}
	for range 200 {
		spawn(0)
	}
	s.Run()
	if ran+cancelled != len(handles) {
		t.Errorf("ran %d + cancelled %d != scheduled %d", ran, cancelled, len(handles))
	}
	if cancelled == 0 {
		t.Errorf("the workload cancelled nothing; the test does not exercise Cancel")
	}
}

func TestCancel(t *testing.T) {
	var s Scheduler
	var got []int
	h1 := s.At(1, func() { got = append(got, 1) })
	h2 := s.At(2, func() { got = append(got, 2) })
	s.At(3, func() { got = append(got, 3) })
	if !s.Cancel(h2) {
		t.Fatal("Cancel of a pending event returned false")
	}
	if s.Cancel(h2) {
		t.Error("second Cancel of the same event returned true")
	}
	s.Run()
	if !slices.Equal(got, []int{1, 3}) {
		t.Errorf("ran %v, want [1 3]", got)
	}
	// h1 ran; its item has been reused by nothing yet, and a later event
	// reusing it must not be cancellable through the stale handle.
	h4 := s.At(4, func() { got = append(got, 4) })
	if s.Cancel(h1) {
		t.Error("Cancel through a handle of an event that already ran returned true")
	}
	if !s.Pending(h4) {
		t.Error("event 4 is not pending")
	}
	s.Run()
	if !slices.Equal(got, []int{1, 3, 4}) {
		t.Errorf("ran %v, want [1 3 4]", got)
	}
	var zero Handle
	if s.Cancel(zero) || s.Pending(zero) {
		t.Error("the zero Handle is pending")
	}
}

func TestRunUntil(t *testing.T) {
	var s Scheduler
	var got []units.Seconds
	for _, tm := range []units.Seconds{0.5, 1, 1.5, 2} {
		s.At(tm, func() { got = append(got, s.Now()) })
	}
	s.RunUntil(1)
	if !slices.Equal(got, []units.Seconds{0.5, 1}) || s.Now() != 1 {
		t.Fatalf("RunUntil(1) ran %v and left now %v", got, s.Now())
	}
	s.RunUntil(1.75)
	if s.Now() != 1.75 || len(got) != 3 {
		t.Fatalf("RunUntil(1.75) ran %v and left now %v", got, s.Now())
	}
	if next, ok := s.Next(); !ok || next != 2 {
		t.Errorf("Next() = %v, %v; want 2, true", next, ok)
	}
	h := s.After(0.25, func() { got = append(got, s.Now()) })
	if !s.Pending(h) || s.Len() != 2 {
		t.Errorf("After: pending %v, Len %d", s.Pending(h), s.Len())
	}
	s.Run()
	if !slices.Equal(got, []units.Seconds{0.5, 1, 1.5, 2, 2}) {
		t.Errorf("ran at %v", got)
	}
}

func TestPanics(t *testing.T) {
	var s Scheduler
	s.RunUntil(5)
	for _, c := range []struct {
		name string
		fn   func()
		msg  string
	}{
		{"past", func() { s.At(4, func() {}) }, pastTime},
		{"negative delay", func() { s.After(-1, func() {}) }, pastTime},
		{"NaN", func() { s.At(units.Seconds(math.NaN()), func() {}) }, badTime},
		{"Inf", func() { s.At(units.Seconds(math.Inf(1)), func() {}) }, badTime},
		{"nil", func() { s.At(6, nil) }, nilFunc},
		{"RunUntil past", func() { s.RunUntil(1) }, pastTime},
	} {
		func() {
			defer func() {
				if r := recover(); r != c.msg {
					t.Errorf("%s: panic %v, want %q", c.name, r, c.msg)
				}
			}()
			c.fn()
		}()
	}
}

type recorder struct {
	got *[]int
	id  int
}

func (r *recorder) Fire() { *r.got = append(*r.got, r.id) }

// TestAtEvent: events given as Event values and as funcs share one
// (time, sequence) order, and both can be cancelled.
func TestAtEvent(t *testing.T) {
	var s Scheduler
	var got []int
	s.AtEvent(1, &recorder{&got, 1})
	s.At(1, func() { got = append(got, 2) })
	h := s.AtEvent(1, &recorder{&got, 3})
	s.AfterEvent(0.5, &recorder{&got, 0})
	s.At(0.5, func() { got = append(got, -1) })
	if !s.Cancel(h) {
		t.Fatal("Cancel of an Event returned false")
	}
	s.Run()
	if !slices.Equal(got, []int{0, -1, 1, 2}) {
		t.Errorf("ran %v, want [0 -1 1 2]", got)
	}
	for _, c := range []struct {
		name string
		fn   func()
		msg  string
	}{
		{"nil event", func() { s.AtEvent(2, nil) }, nilFunc},
		{"past event", func() { s.AtEvent(0, &recorder{&got, 9}) }, pastTime},
		{"negative delay event", func() { s.AfterEvent(-1, &recorder{&got, 9}) }, pastTime},
		{"NaN event", func() { s.AtEvent(units.Seconds(math.NaN()), &recorder{&got, 9}) }, badTime},
	} {
		func() {
			defer func() {
				if r := recover(); r != c.msg {
					t.Errorf("%s: panic %v, want %q", c.name, r, c.msg)
				}
			}()
			c.fn()
		}()
	}
}

// TestNowOrder checks events that schedule others at the current time
// (which skip the queue), later, or cancel pending ones, against a serial
// reference: a list searched for its least (time, sequence) at each step.
func TestNowOrder(t *testing.T) {
	for _, seed := range []uint64{1, 5, 9} {
		rng := rand.New(rand.NewPCG(seed, 11))
		type ref struct {
			t    units.Seconds
			seq  int
			live bool
		}
		var (
			s       Scheduler
			refs    []ref
			handles []Handle
			got     []int
		)
		var spawn func(at units.Seconds)
		act := func(id int) {
			got = append(got, id)
			for range 1 + rng.IntN(2) {
				switch rng.IntN(3) {
				case 0:
					spawn(s.Now())
				default:
					spawn(s.Now() + units.Seconds(rng.IntN(3)))
				}
			}
			if rng.IntN(3) == 0 {
				i := rng.IntN(len(handles))
				pending := refs[i].live
				if s.Pending(handles[i]) != pending {
					t.Fatalf("seed %d: Pending of event %d = %v, want %v", seed, i, !pending, pending)
				}
				if s.Cancel(handles[i]) != pending {
					t.Fatalf("seed %d: Cancel of event %d disagrees with the reference", seed, i)
				}
				refs[i].live = false
			}
		}
		spawn = func(at units.Seconds) {
			if len(refs) >= 3000 {
				return
			}
			id := len(refs)
			refs = append(refs, ref{at, id, true})
			handles = append(handles, s.At(at, func() { refs[id].live = false; act(id) }))
		}
		for range 20 {
			spawn(units.Seconds(rng.IntN(4)))
		}
		var want []int
		for s.Len() > 0 {
			best, live := -1, 0
			for i, r := range refs {
				if r.live {
					live++
				}
				if r.live && (best < 0 || r.t < refs[best].t) {
					best = i
				}
			}
			if s.Len() != live {
				t.Fatalf("seed %d: Len = %d, want %d", seed, s.Len(), live)
			}
			want = append(want, best)
			if next, _ := s.Next(); next != refs[best].t {
				t.Fatalf("seed %d: Next = %v, want %v", seed, next, refs[best].t)
			}
			s.Step()
		}
		if len(got) < 1000 || !slices.Equal(got, want) {
			t.Fatalf("seed %d: ran %d events, order equal to the reference's: %v", seed, len(got), slices.Equal(got, want))
		}
	}
}
