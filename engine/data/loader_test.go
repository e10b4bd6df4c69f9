package data

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func smallSet(t *testing.T, n int) *Dataset {
	t.Helper()
	c := DefaultSynthetic()
	c.Train, c.Test, c.Rows, c.Cols = n, 1, 4, 3
	d, _, err := Synthetic(c)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// eventually polls cond for up to two seconds.
func eventually(cond func() bool) bool {
	for range 200 {
		if cond() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cond()
}

func TestLoaderBatches(t *testing.T) {
	ds := smallSet(t, 23)
	s := Sampler{N: 23, Batch: 6, Workers: 3, Shuffle: true, Seed: 5}
	for w := range 3 {
		l, err := NewLoader(context.Background(), ds, s, LoaderConfig{Worker: w, FirstEpoch: 2, Epochs: 2, Prefetch: 2})
		if err != nil {
			t.Fatal(err)
		}
		var got []Batch
		for b, ok := l.Next(); ok; b, ok = l.Next() {
			got = append(got, b)
		}
		l.Close()
		if l.Err() != nil {
			t.Errorf("Err after full run: %v", l.Err())
		}
		if len(got) != 2*4 {
			t.Fatalf("worker %d: %d batches, want 8", w, len(got))
		}
		for i, b := range got {
			e, k := 2+i/4, i%4
			idx := s.Shard(s.Order(e), k, w)
			x, y := ds.Gather(nil, nil, idx)
			if b.Epoch != e || b.Step != k || b.Global != s.GlobalLen(k) || !slices.Equal(b.Indices, idx) ||
				!slices.Equal(b.X, x) || !slices.Equal(b.Labels, y) || b.Len() != len(idx) {
				t.Errorf("worker %d batch %d: epoch %d step %d global %d indices %v", w, i, b.Epoch, b.Step, b.Global, b.Indices)
			}
			for j, v := range b.X {
				if want := float32(ds.Pixels[b.Indices[j/ds.Dim()]*ds.Dim()+j%ds.Dim()]) / 255; v != want || v < 0 || v > 1 {
					t.Fatalf("input %d = %g, want %g", j, v, want)
				}
			}
		}
		// The last batch holds 5 samples: shards of 1, 2, 2.
		if n := got[3].Len(); n != []int{1, 2, 2}[w] {
			t.Errorf("worker %d: last batch %d samples", w, n)
		}
	}
}

// With Recycle every batch, read before the next call to Next, is the
// batch the loader gives without it, and from the (Prefetch+2)-th batch
// on its inputs reuse an earlier batch's storage.
func TestLoaderRecycle(t *testing.T) {
	ds := smallSet(t, 40)
	s := Sampler{N: 40, Batch: 4, Workers: 2, Shuffle: true, Seed: 3}
	for _, depth := range []int{0, 1, 3} {
		var want []Batch
		l, err := NewLoader(context.Background(), ds, s, LoaderConfig{Worker: 1, Epochs: 2, Prefetch: depth})
		if err != nil {
			t.Fatal(err)
		}
		for b, ok := l.Next(); ok; b, ok = l.Next() {
			want = append(want, b)
		}
		l.Close()
		r, err := NewLoader(context.Background(), ds, s, LoaderConfig{Worker: 1, Epochs: 2, Prefetch: depth, Recycle: true})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[*float32]bool{}
		i, reused := 0, 0
		for b, ok := r.Next(); ok; b, ok = r.Next() {
			w := want[i]
			if b.Epoch != w.Epoch || b.Step != w.Step || b.Global != w.Global || !slices.Equal(b.Indices, w.Indices) ||
				!slices.Equal(b.X, w.X) || !slices.Equal(b.Labels, w.Labels) {
				t.Fatalf("depth %d batch %d: differs from the batch without Recycle", depth, i)
			}
			if seen[&b.X[0]] {
				reused++
			}
			seen[&b.X[0]] = true
			i++
		}
		r.Close()
		if i != len(want) {
			t.Errorf("depth %d: %d batches, want %d", depth, i, len(want))
		}
		if wantReused := len(want) - (depth + 2); reused != wantReused {
			t.Errorf("depth %d: %d batches reused storage, want %d", depth, reused, wantReused)
		}
	}
}

func TestLoaderDeterministic(t *testing.T) {
	ds := smallSet(t, 50)
	s := Sampler{N: 50, Batch: 8, Workers: 2, DropLast: true, Shuffle: true, Seed: 9}
	run := func() (out [][]int) {
		l, err := NewLoader(context.Background(), ds, s, LoaderConfig{Worker: 1, Epochs: 3, Prefetch: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		for b, ok := l.Next(); ok; b, ok = l.Next() {
			out = append(out, b.Indices)
		}
		return out
	}
	a, b := run(), run()
	if len(a) != 3*6 || !slices.EqualFunc(a, b, slices.Equal) {
		t.Errorf("two runs differ or wrong count: %d and %d batches", len(a), len(b))
	}
}

func TestLoaderPrefetchDepth(t *testing.T) {
	ds := smallSet(t, 100)
	s := Sampler{N: 100, Batch: 2, Workers: 1}
	for _, depth := range []int{0, 1, 3} {
		l, err := NewLoader(context.Background(), ds, s, LoaderConfig{Epochs: 1, Prefetch: depth})
		if err != nil {
			t.Fatal(err)
		}
		if !eventually(func() bool { return l.sent.Load() == int64(depth) && len(l.ch) == depth }) {
			t.Errorf("depth %d: %d batches queued, want %d", depth, l.sent.Load(), depth)
		}
		time.Sleep(20 * time.Millisecond)
		if n := l.sent.Load(); n != int64(depth) {
			t.Errorf("depth %d: producer ran ahead to %d batches with no consumer", depth, n)
		}
		for i := range 3 {
			if _, ok := l.Next(); !ok {
				t.Fatal("loader ended early")
			}
			if !eventually(func() bool { return l.sent.Load() == int64(depth+i+1) }) {
				t.Errorf("depth %d: after %d received, %d sent, want %d", depth, i+1, l.sent.Load(), depth+i+1)
			}
		}
		l.Close()
	}
}

func TestLoaderNoLeak(t *testing.T) {
	ds := smallSet(t, 40)
	s := Sampler{N: 40, Batch: 4, Workers: 2, Shuffle: true}
	before := runtime.NumGoroutine()
	var ls []*Loader
	for w := range 2 {
		for _, depth := range []int{0, 4} {
			l, err := NewLoader(context.Background(), ds, s, LoaderConfig{Worker: w, Epochs: 100, Prefetch: depth})
			if err != nil {
				t.Fatal(err)
			}
			l.Next() // abandon mid-epoch
			ls = append(ls, l)
		}
	}
	if runtime.NumGoroutine() < before+len(ls) {
		t.Errorf("%d goroutines with %d loaders running, started from %d", runtime.NumGoroutine(), len(ls), before)
	}
	for _, l := range ls {
		l.Close()
		l.Close() // idempotent
		if _, ok := l.Next(); ok {
			t.Error("Next after Close returned a batch")
		}
	}
	if !eventually(func() bool { return runtime.NumGoroutine() <= before }) {
		t.Errorf("%d goroutines after Close, %d before", runtime.NumGoroutine(), before)
	}
}

func TestLoaderCancel(t *testing.T) {
	ds := smallSet(t, 40)
	s := Sampler{N: 40, Batch: 4, Workers: 1}
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	l, err := NewLoader(ctx, ds, s, LoaderConfig{Epochs: 1000, Prefetch: 2})
	if err != nil {
		t.Fatal(err)
	}
	l.Next()
	cancel()
	n := 0
	for _, ok := l.Next(); ok; _, ok = l.Next() {
		if n++; n > 10 {
			t.Fatal("loader kept delivering after cancel")
		}
	}
	if !errors.Is(l.Err(), context.Canceled) {
		t.Errorf("Err = %v, want context.Canceled", l.Err())
	}
	if !eventually(func() bool { return runtime.NumGoroutine() <= before }) {
		t.Errorf("%d goroutines after cancel, %d before", runtime.NumGoroutine(), before)
	}
	l.Close()
}

func TestLoaderConfigErrors(t *testing.T) {
	ds := smallSet(t, 10)
	s := Sampler{N: 10, Batch: 2, Workers: 2}
	for _, tc := range []struct {
		s   Sampler
		c   LoaderConfig
		msg string
	}{
		{Sampler{N: 11, Batch: 2, Workers: 2}, LoaderConfig{Epochs: 1}, "sampler for 11 samples"},
		{Sampler{N: 10, Batch: 3, Workers: 2}, LoaderConfig{Epochs: 1}, "not a positive multiple"},
		{s, LoaderConfig{Worker: 2, Epochs: 1}, "worker 2 not in [0, 2)"},
		{s, LoaderConfig{Epochs: 0}, "0 epochs"},
		{s, LoaderConfig{Epochs: 1, FirstEpoch: -1}, "first epoch -1"},
		{s, LoaderConfig{Epochs: 1, Prefetch: -1}, "prefetch -1"},
	} {
		if _, err := NewLoader(context.Background(), ds, tc.s, tc.c); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("NewLoader(%+v, %+v) = %v, want error containing %q", tc.s, tc.c, err, tc.msg)
		}
	}
}
