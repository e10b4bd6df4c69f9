package timeq

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// linear is the test's reference: entries in no order, the least found by
// a scan.
type linear []Entry

func (l linear) least() int {
	m := -1
	for i := range l {
		if m < 0 || l[i].T < l[m].T || l[i].T == l[m].T && l[i].Seq < l[m].Seq {
			m = i
		}
	}
	return m
}

// TestQueueMatchesScan drives calendar and sorted queues with random
// pushes (ties broken by sequence numbers in no order, far times, times
// before those popped, a change of scale that leaves the measured width
// far off), removals of present and absent
// keys, and pops through growth and shrinking, and requires every Min,
// Pop, Remove and Len to agree with a linear scan.
func TestQueueMatchesScan(t *testing.T) {
	for _, sorted := range []bool{false, true} {
		for seed := range uint64(3) {
			t.Run(fmt.Sprintf("sorted=%v/%d", sorted, seed), func(t *testing.T) {
				var q Queue
				if sorted {
					q.UseSorted()
				}
				checkAgainstScan(t, &q, rand.New(rand.NewPCG(seed, 5)))
			})
		}
	}
}

func checkAgainstScan(t *testing.T, q *Queue, rng *rand.Rand) {
	var ref linear
	var seq uint64
	handles := map[uint64]Handle{} // by Seq, of every entry pushed
	now, scale := 0.0, 1.0
	for round := range 8 {
		if round == 5 {
			scale = 1e-7
		}
		grow := 100 << (2 * (round % 4))
		for op := range 3 * grow {
			switch k := rng.IntN(10); {
			case op < grow || k < 4: // push
				seq++
				tm := now + pick(rng, scale)
				key := seq * 0x9e3779b97f4a7c15 // unique, in no order
				handles[seq] = q.Push(tm, key, int32(seq))
				ref = append(ref, Entry{tm, key, int32(seq)})
			case k < 6 && len(ref) > 0: // remove one present, or one gone
				i := rng.IntN(len(ref))
				h, present := handles[uint64(ref[i].V)], true
				if rng.IntN(4) == 0 {
					h, present = handles[1+rng.Uint64N(seq)], false
					for _, e := range ref {
						present = present || e.Seq == h.seq
					}
				}
				if present {
					i = slices.IndexFunc(ref, func(e Entry) bool { return e.Seq == h.seq })
					ref[i] = ref[len(ref)-1]
					ref = ref[:len(ref)-1]
				}
				if got := q.Remove(h); got != present {
					t.Fatalf("Remove(%+v) = %v, want %v", h, got, present)
				}
			case len(ref) > 0: // pop
				i := ref.least()
				want := ref[i]
				if m, ok := q.Min(); !ok || m != want {
					t.Fatalf("Min() = %v, %v, want %v", m, ok, want)
				}
				if got := q.Pop(); got != want {
					t.Fatalf("Pop() = %v, want %v", got, want)
				}
				ref[i] = ref[len(ref)-1]
				ref = ref[:len(ref)-1]
				now = want.T
			}
			if q.Len() != len(ref) {
				t.Fatalf("Len() = %d, want %d", q.Len(), len(ref))
			}
		}
		for len(ref) > 40*(round%2) { // drain, or nearly
			i := ref.least()
			if got := q.Pop(); got != ref[i] {
				t.Fatalf("draining: Pop() = %v, want %v", got, ref[i])
			}
			now = ref[i].T
			ref[i] = ref[len(ref)-1]
			ref = ref[:len(ref)-1]
		}
	}
	if _, ok := q.Min(); ok != (len(ref) > 0) {
		t.Fatalf("Min() reports %v with %d entries", ok, len(ref))
	}
}

// pick draws a delay: zero, a coarse grid of equal times, six decades of
// spread, a far time, or one before the present (allowed in a Queue).
func pick(rng *rand.Rand, scale float64) float64 {
	switch k := rng.IntN(10); {
	case k < 1:
		return 0
	case k < 4:
		return float64(rng.IntN(8)) * scale
	case k < 6:
		return scale * math.Pow(10, 6*rng.Float64()-3)
	case k < 7:
		return 1e4 * (1 + rng.Float64())
	case k < 8:
		return -scale * rng.Float64()
	}
	return scale * rng.Float64()
}

// TestUseSortedKeeps checks that UseSorted keeps a calendar's entries.
func TestUseSortedKeeps(t *testing.T) {
	var q Queue
	for i := range 100 {
		q.Push(float64(100-i%50), uint64(i+1), int32(i))
	}
	q.UseSorted()
	if !q.Sorted() || q.Len() != 100 {
		t.Fatalf("Sorted() = %v, Len() = %d after UseSorted, want true, 100", q.Sorted(), q.Len())
	}
	for k := range 100 {
		tm := 51 + k/2
		want := Entry{float64(tm), uint64(100 - tm + 50*(k%2) + 1), int32(100 - tm + 50*(k%2))}
		if e := q.Pop(); e != want {
			t.Fatalf("pop %d: %v, want %v", k, e, want)
		}
	}
}

// TestVirtualBucket checks the virtual bucket numbers' bounds: 0 for time
// 0 and below, capped at vMax where t/width leaves the integers, and
// monotone.
func TestVirtualBucket(t *testing.T) {
	q := Queue{inv: 1e300}
	if v := q.v(0); v != 0 {
		t.Errorf("v(0) = %d, want 0", v)
	}
	if v := q.v(-1); v != 0 {
		t.Errorf("v(-1) = %d, want 0", v)
	}
	if v := q.v(1); v != vMax {
		t.Errorf("v(1) with width 1e-300 = %d, want the cap %d", v, uint64(vMax))
	}
	q.inv = 1e6
	prev := uint64(0)
	for _, tm := range []float64{1e-7, 1e-6, 1.5e-6, 2e-6 - 1e-22, 2e-6, 3, 1e12, 1e13, math.Inf(1)} {
		v := q.v(tm)
		if v < prev {
			t.Errorf("v(%v) = %d, below %d for an earlier time", tm, v, prev)
		}
		prev = v
	}
	if v := q.v(1.5e-6); v != 1 {
		t.Errorf("v(1.5e-6) with width 1e-6 = %d, want 1", v)
	}
}

// TestTiesOutOfOrder pushes entries at three times, with sequence numbers
// in shuffled order (a flow whose finish time changes keeps its start
// order), into one bucket and then into many, and requires them back in
// (time, sequence) order.
func TestTiesOutOfOrder(t *testing.T) {
	for _, n := range []int{30, 3000} {
		rng := rand.New(rand.NewPCG(uint64(n), 1))
		var q Queue
		var want []Entry
		for i, seq := range rng.Perm(n) {
			e := Entry{[]float64{0.25, 0.5, 0.75}[rng.IntN(3)], uint64(seq), int32(i)}
			q.Push(e.T, e.Seq, e.V)
			want = append(want, e)
		}
		slices.SortFunc(want, compare)
		for i, w := range want {
			if got := q.Pop(); got != w {
				t.Fatalf("n=%d: pop %d = %+v, want %+v", n, i, got, w)
			}
		}
	}
}
