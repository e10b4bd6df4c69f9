package event

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"scaleplan/internal/units"
)

// record is what a workload observed: an event run (id ≥ 0) at a time,
// or a query's answer (id < 0).
type record struct {
	t  units.Seconds
	id int
	n  int
}

// workload drives s with a random mix of what the simulator does, from
// one seed: events that schedule others at the current time, a few
// nanoseconds to a millisecond later, on a coarse grid of equal times,
// spread over six decades, or far in the future; bursts that grow the queue to tens of thousands of
// events and drains that shrink it; a change of time scale; cancellations
// of pending and of run events; Next, Len and RunUntil. Its record is a
// function of the order in which s runs the events alone.
func workload(s *Scheduler, seed uint64, n int) []record {
	rng := rand.New(rand.NewPCG(seed, 99))
	var log []record
	var handles []Handle
	ids := 0
	scale := 1e-3
	var spawn func()
	spawn = func() {
		id := ids
		ids++
		var d units.Seconds
		switch k := rng.IntN(20); {
		case k < 2:
			d = 0
		case k < 6:
			d = units.Seconds(rng.Float64() * 1e-6 * scale)
		case k < 10:
			d = units.Seconds(float64(rng.IntN(8)) * scale) // many equal times
		case k == 10:
			d = units.Seconds(1e3 + rng.Float64()*1e3) // far beyond the ring
		case k < 14:
			d = units.Seconds(scale * math.Pow(10, 6*rng.Float64()-3)) // over every year
		default:
			d = units.Seconds(rng.Float64() * scale)
		}
		fire := func() {
			log = append(log, record{s.Now(), id, s.Len()})
			if ids < n {
				for range rng.IntN(3) {
					spawn()
				}
			}
			if len(handles) > 0 && rng.IntN(3) == 0 {
				if s.Cancel(handles[rng.IntN(len(handles))]) {
					log = append(log, record{s.Now(), -1, s.Len()})
				}
			}
		}
		if rng.IntN(2) == 0 {
			handles = append(handles, s.After(d, fire))
		} else {
			handles = append(handles, s.AfterEvent(d, funcEvent(fire)))
		}
	}
	for round := range 6 {
		for range 1 << (8 + 2*round%6) {
			spawn()
		}
		if round == 3 {
			scale = 1e-9 // the width measured so far is now far too wide
		}
		for range 5 {
			next, ok := s.Next()
			log = append(log, record{next, -2, s.Len()})
			if !ok {
				break
			}
			s.RunUntil(next + units.Seconds(rng.Float64()*2*scale))
			log = append(log, record{s.Now(), -3, s.Len()})
		}
		for range rng.IntN(5000) {
			s.Step()
		}
	}
	s.Run()
	return append(log, record{s.Now(), -4, int(s.Events())})
}

type funcEvent func()

func (f funcEvent) Fire() { f() }

// TestCalendarMatchesSorted runs the same random workloads on the
// calendar queue and on a sorted list (UseSortedQueue), a serial
// reference, and requires the same events at the same times in the same
// order, and the same answers to every query.
func TestCalendarMatchesSorted(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			var cal, ref Scheduler
			ref.UseSortedQueue()
			got, want := workload(&cal, seed, 60000), workload(&ref, seed, 60000)
			if len(want) < 60000 {
				t.Fatalf("the workload ran only %d records", len(want))
			}
			if i := firstDiff(got, want); i >= 0 {
				t.Fatalf("record %d of %d: calendar %+v, sorted %+v", i, len(want), got[i], want[i])
			}
		})
	}
}

func firstDiff(a, b []record) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// TestUseSortedQueueMoves checks that UseSortedQueue keeps the events already pending
// in the calendar queue, cancelled ones excepted, in their order.
func TestUseSortedQueueMoves(t *testing.T) {
	var s Scheduler
	var got []int
	var hs []Handle
	for i := range 100 {
		hs = append(hs, s.At(units.Seconds(100-i%50), func() { got = append(got, i) }))
	}
	for _, h := range hs[:10] {
		s.Cancel(h)
	}
	s.UseSortedQueue()
	if s.Len() != 90 {
		t.Fatalf("Len() = %d after UseSortedQueue, want 90", s.Len())
	}
	s.Run()
	var want []int
	for tm := 51; tm <= 100; tm++ {
		for i := 10; i < 100; i++ {
			if 100-i%50 == tm {
				want = append(want, i)
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("ran %v, want %v", got, want)
	}
}
