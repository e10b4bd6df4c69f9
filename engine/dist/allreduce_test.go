package dist

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"
	"time"
)

// ringFold is the reference for AllReduce, written from its documented
// order: element i of chunk c is the float32 left fold over the ranks
// c, c+1, ..., c−1 (mod W), then multiplied by scale.
func ringFold(bufs [][]float32, scale float32) []float32 {
	w, n := len(bufs), len(bufs[0])
	out := make([]float32, n)
	for c := range w {
		for i := c * n / w; i < (c+1)*n/w; i++ {
			s := bufs[c][i]
			for k := 1; k < w; k++ {
				s += bufs[(c+k)%w][i]
			}
			if scale != 1 {
				s *= scale
			}
			out[i] = s
		}
	}
	return out
}

// tcpRing connects w ranks of this process over loopback TCP.
func tcpRing(t *testing.T, w int, timeout time.Duration) []Transport {
	t.Helper()
	ts, err := NewLoopbackRing(context.Background(), w, timeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, tr := range ts {
			tr.Close()
		}
	})
	return ts
}

// allReduceAll runs AllReduce on every rank's copy of bufs at once and
// returns the results and errors, failing the test if it takes longer
// than limit (a hang).
func allReduceAll(t *testing.T, ts []Transport, bufs [][]float32, scale float32, limit time.Duration) ([][]float32, []error) {
	t.Helper()
	out := make([][]float32, len(ts))
	errs := make([]error, len(ts))
	done := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for r := range ts {
			out[r] = slices.Clone(bufs[r])
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[r] = AllReduce(ts[r], out[r], scale)
			}()
		}
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("all-reduce did not finish within %v", limit)
	}
	return out, errs
}

func TestAllReduceMatchesRingFold(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, transport := range Transports {
		for w := 1; w <= 5; w++ {
			var ts []Transport
			if transport == "tcp" {
				ts = tcpRing(t, w, 5*time.Second)
			} else {
				ts = NewInprocRing(w)
			}
			for _, n := range []int{0, 1, 2, 3, 7, 64, 1001} {
				for _, scale := range []float32{1, 0.25, 1.0 / 3} {
					bufs := make([][]float32, w)
					for r := range bufs {
						bufs[r] = make([]float32, n)
						for i := range bufs[r] {
							bufs[r][i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(7)-3)))
						}
					}
					want := ringFold(bufs, scale)
					got, errs := allReduceAll(t, ts, bufs, scale, 10*time.Second)
					for r := range w {
						if errs[r] != nil {
							t.Fatalf("%s W=%d n=%d: rank %d: %v", transport, w, n, r, errs[r])
						}
						for i := range want {
							if math.Float32bits(got[r][i]) != math.Float32bits(want[i]) {
								t.Fatalf("%s W=%d n=%d scale %g: rank %d element %d = %g, want %g (ring fold)", transport, w, n, scale, r, i, got[r][i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

// TestAllReduceSum checks the sum against float64 arithmetic, within the
// float32 rounding of W−1 additions.
func TestAllReduceSum(t *testing.T) {
	const w, n = 4, 100
	bufs := make([][]float32, w)
	exact := make([]float64, n)
	for r := range bufs {
		bufs[r] = make([]float32, n)
		for i := range bufs[r] {
			bufs[r][i] = float32(r*n+i) / 7
			exact[i] += float64(bufs[r][i]) / w
		}
	}
	got, errs := allReduceAll(t, NewInprocRing(w), bufs, 1.0/w, 5*time.Second)
	for r := range w {
		if errs[r] != nil {
			t.Fatal(errs[r])
		}
		for i, v := range got[r] {
			if math.Abs(float64(v)-exact[i]) > 4*math.Abs(exact[i])*0x1p-23 {
				t.Errorf("rank %d element %d = %g, want mean %g", r, i, v, exact[i])
			}
		}
	}
}

func TestBuckets(t *testing.T) {
	for _, tc := range []struct {
		n, size int
		want    [][2]int
	}{
		{0, 4, nil},
		{10, 0, [][2]int{{0, 10}}},
		{10, 10, [][2]int{{0, 10}}},
		{10, 20, [][2]int{{0, 10}}},
		{10, 4, [][2]int{{6, 10}, {2, 6}, {0, 2}}},
		{12, 4, [][2]int{{8, 12}, {4, 8}, {0, 4}}},
		{3, 1, [][2]int{{2, 3}, {1, 2}, {0, 1}}},
	} {
		if got := Buckets(tc.n, tc.size); !slices.Equal(got, tc.want) {
			t.Errorf("Buckets(%d, %d) = %v, want %v", tc.n, tc.size, got, tc.want)
		}
	}
}

// A rank that passes a different length gets a protocol error, and the
// other ranks an error too, instead of hanging or mixing data.
func TestAllReduceMismatch(t *testing.T) {
	for _, transport := range Transports {
		ts := NewInprocRing(3)
		if transport == "tcp" {
			ts = tcpRing(t, 3, 2*time.Second)
		}
		bufs := [][]float32{make([]float32, 9), make([]float32, 12), make([]float32, 9)}
		_, errs := allReduceAll(t, ts, bufs, 1, 10*time.Second)
		protocol := 0
		for r, err := range errs {
			if err == nil {
				t.Errorf("%s: rank %d: no error", transport, r)
			}
			if errors.Is(err, errProtocol) {
				protocol++
			}
		}
		if protocol == 0 {
			t.Errorf("%s: no rank reports a protocol error: %v", transport, errs)
		}
		if transport == "inproc" {
			// An aborted ring stays aborted.
			if err := ts[0].SendRecv([]float32{1}, []float32{0}, true); !errors.Is(err, ErrAborted) {
				t.Errorf("after abort: %v, want ErrAborted", err)
			}
		}
	}
}

// A TCP peer that stays silent makes SendRecv fail after the timeout; one
// that closes its end makes it fail at once.
func TestTCPSilentAndClosedPeer(t *testing.T) {
	ts := tcpRing(t, 2, 200*time.Millisecond)
	t0 := time.Now()
	err := ts[0].SendRecv(make([]float32, 4), make([]float32, 4), true)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("silent peer: %v, want a deadline error", err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("silent peer: gave up after %v, timeout 200ms", d)
	}
	ts = tcpRing(t, 2, time.Minute)
	ts[1].Close()
	t0 = time.Now()
	if err := ts[0].SendRecv(make([]float32, 4), make([]float32, 4), false); err == nil {
		t.Error("closed peer: no error")
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("closed peer: gave up after %v", d)
	}
}

// Once an in-process ring is aborted, every SendRecv returns ErrAborted,
// even when a message is waiting for it and its own link has room: a
// select among ready cases picks at random, so the abort must be checked
// before and after it.
func TestInprocAbortWins(t *testing.T) {
	for i := range 200 {
		r := newInprocRing(3)
		r.links[2] <- offer{seq: 0, data: make([]float32, 4), ack: make(chan struct{}, 1)}
		r.Abort()
		if err := r.transport(0).SendRecv(make([]float32, 1), make([]float32, 1), true); !errors.Is(err, ErrAborted) {
			t.Fatalf("try %d: %v, want ErrAborted", i, err)
		}
	}
}
