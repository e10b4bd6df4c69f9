package data

import (
	"slices"
	"strings"
	"testing"
)

func TestShardsCoverEpochOnce(t *testing.T) {
	for _, n := range []int{1, 7, 10, 60, 101} {
		for w := 1; w <= 4; w++ {
			for _, b := range []int{w, 2 * w, 3 * w, 8 * w, 32 * w} {
				for _, drop := range []bool{false, true} {
					s := Sampler{N: n, Batch: b, Workers: w, DropLast: drop, Shuffle: true, Seed: 42}
					if err := s.Validate(); err != nil {
						if drop && b > n {
							continue // no batches at all: Validate's business
						}
						t.Fatalf("%+v: %v", s, err)
					}
					serial := s
					serial.Workers = 1
					for e := range 2 {
						checkEpoch(t, s, serial, e)
					}
				}
			}
		}
	}
}

func checkEpoch(t *testing.T, s, serial Sampler, e int) {
	t.Helper()
	order := s.Order(e)
	seen := make([]int, s.N)
	total := 0
	for k := range s.Batches() {
		var cat []int
		for w := range s.Workers {
			sh := s.Shard(order, k, w)
			if s.GlobalLen(k) == s.Batch && len(sh) != s.Batch/s.Workers {
				t.Fatalf("%+v epoch %d batch %d worker %d: %d samples in a full batch, want %d", s, e, k, w, len(sh), s.Batch/s.Workers)
			}
			for _, i := range sh {
				seen[i]++
			}
			total += len(sh)
			cat = append(cat, sh...)
		}
		// The workers' shards in rank order are the serial batch.
		if want := serial.Shard(serial.Order(e), k, 0); !slices.Equal(cat, want) {
			t.Fatalf("%+v epoch %d batch %d: shards %v, serial batch %v", s, e, k, cat, want)
		}
		if len(cat) != s.GlobalLen(k) {
			t.Fatalf("%+v batch %d: %d samples, GlobalLen %d", s, k, len(cat), s.GlobalLen(k))
		}
	}
	if s.DropLast {
		if want := s.N / s.Batch * s.Batch; total != want {
			t.Fatalf("%+v: %d samples read with drop-last, want %d", s, total, want)
		}
		for i, c := range seen {
			if c > 1 {
				t.Fatalf("%+v epoch %d: sample %d read %d times", s, e, i, c)
			}
		}
		return
	}
	for i, c := range seen {
		if c != 1 {
			t.Fatalf("%+v epoch %d: sample %d read %d times, want 1", s, e, i, c)
		}
	}
}

func TestShardsOfShortBatch(t *testing.T) {
	// N = 10, B = 4, W = 4: batches 4, 4, 2; the last splits 0,1,0,1.
	s := Sampler{N: 10, Batch: 4, Workers: 4}
	order := s.Order(0)
	var got [][]int
	for w := range 4 {
		got = append(got, s.Shard(order, 2, w))
	}
	want := [][]int{{}, {8}, {}, {9}}
	for w := range 4 {
		if !slices.Equal(got[w], want[w]) {
			t.Errorf("worker %d: %v, want %v", w, got[w], want[w])
		}
	}
	if s.Batches() != 3 || s.GlobalLen(2) != 2 {
		t.Errorf("Batches %d GlobalLen(2) %d, want 3 and 2", s.Batches(), s.GlobalLen(2))
	}
	s.DropLast = true
	if s.Batches() != 2 {
		t.Errorf("drop-last Batches %d, want 2", s.Batches())
	}
}

func TestShuffle(t *testing.T) {
	s := Sampler{N: 100, Batch: 10, Workers: 1, Shuffle: true, Seed: 7}
	o0, o1 := s.Order(0), s.Order(1)
	if slices.Equal(o0, o1) {
		t.Error("epochs 0 and 1 have the same order")
	}
	for _, o := range [][]int{o0, o1} {
		if c := slices.Sorted(slices.Values(o)); !slices.Equal(c, (Sampler{N: 100, Batch: 1, Workers: 1}).Order(0)) {
			t.Errorf("order is not a permutation: %v", o)
		}
	}
	if again := (Sampler{N: 100, Batch: 50, Workers: 2, Shuffle: true, Seed: 7}).Order(1); !slices.Equal(again, o1) {
		t.Error("order of epoch 1 not reproducible from (seed, epoch)")
	}
	if other := (Sampler{N: 100, Batch: 10, Workers: 1, Shuffle: true, Seed: 8}).Order(1); slices.Equal(other, o1) {
		t.Error("seeds 7 and 8 give the same order")
	}
	plain := Sampler{N: 5, Batch: 5, Workers: 1}
	if o := plain.Order(3); !slices.Equal(o, []int{0, 1, 2, 3, 4}) {
		t.Errorf("unshuffled order %v", o)
	}
	// Pin the permutation so that a change of algorithm (and with it of
	// every recorded run) is noticed.
	if o := (Sampler{N: 10, Batch: 1, Workers: 1, Shuffle: true, Seed: 1}).Order(0); !slices.Equal(o, pinned) {
		t.Errorf("seed 1 epoch 0 order %v, want %v", o, pinned)
	}
	// Sample 0 lands in each of 5 positions with probability 1/5: over
	// 2000 epochs each count is 400 with standard deviation 17.9.
	var pos [5]int
	u := Sampler{N: 5, Batch: 5, Workers: 1, Shuffle: true, Seed: 3}
	for e := range 2000 {
		pos[slices.Index(u.Order(e), 0)]++
	}
	for p, c := range pos {
		if c < 320 || c > 480 {
			t.Errorf("sample 0 at position %d in %d of 2000 epochs, want 400 ± 80", p, c)
		}
	}
}

var pinned = []int{3, 0, 5, 1, 4, 9, 8, 7, 6, 2}

func TestSamplerValidate(t *testing.T) {
	for _, tc := range []struct {
		s   Sampler
		msg string
	}{
		{Sampler{N: 0, Batch: 1, Workers: 1}, "0 samples"},
		{Sampler{N: 10, Batch: 1, Workers: 0}, "0 workers"},
		{Sampler{N: 10, Batch: 6, Workers: 4}, "global batch 6 not a positive multiple of 4 workers"},
		{Sampler{N: 10, Batch: 0, Workers: 1}, "global batch 0"},
		{Sampler{N: 10, Batch: 12, Workers: 1, DropLast: true}, "no batches"},
	} {
		if err := tc.s.Validate(); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Validate(%+v) = %v, want error containing %q", tc.s, err, tc.msg)
		}
	}
	if err := (Sampler{N: 10, Batch: 12, Workers: 4}).Validate(); err != nil {
		t.Errorf("one partial batch larger than N: %v", err)
	}
}

func TestSamplerPanics(t *testing.T) {
	s := Sampler{N: 10, Batch: 4, Workers: 2}
	o := s.Order(0)
	for name, f := range map[string]func(){
		"batch":   func() { s.Shard(o, 3, 0) },
		"worker":  func() { s.Shard(o, 0, 2) },
		"order":   func() { s.Shard(o[:5], 0, 0) },
		"invalid": func() { Sampler{N: 1}.Order(0) },
		"sample":  func() { (&Dataset{N: 1, Rows: 1, Cols: 1, Pixels: []byte{0}, Labels: []byte{0}}).Image(1) },
	} {
		func() {
			defer func() {
				if r, _ := recover().(string); !strings.HasPrefix(r, "data: ") {
					t.Errorf("%s: panic %q, want a data: panic", name, r)
				}
			}()
			f()
		}()
	}
}
