package dist

import (
	"errors"
	"fmt"
	"sync"

	"scaleplan/engine/tensor"
)

// Transport connects one rank of a ring of Size ranks to its two
// neighbours: it sends to rank (Rank+1) mod Size and receives from rank
// (Rank−1) mod Size. The ring all-reduce is built on its one operation,
// SendRecv. A Transport is used by one goroutine at a time.
type Transport interface {
	// Rank returns this rank's position r in the ring, 0 <= r < Size.
	Rank() int

	// Size returns the number of ranks W in the ring.
	Size() int

	// SendRecv sends src to the next rank and, at the same time, receives
	// len(dst) values from the previous rank and combines them into dst,
	//
	//	dst[i] += v[i]   if add
	//	dst[i]  = v[i]   otherwise
	//
	// where v is what the previous rank passed as its src in the same
	// call (every rank calls SendRecv the same number of times, with
	// matching lengths). It returns once src has been delivered and dst
	// is complete; src must not change until then. src and dst must not
	// overlap. An error leaves dst unspecified and the ring unusable.
	SendRecv(src, dst []float32, add bool) error

	// Close releases the transport's resources. A neighbour that still
	// communicates with a closed TCP transport gets an error.
	Close() error
}

// ErrAborted is returned by transports of a ring that was aborted because
// another rank failed or the run was cancelled.
var ErrAborted = errors.New("dist: ring aborted")

// combine applies a received message v to dst as SendRecv describes.
// tensor.AddScaled with alpha 1 computes dst[i] + 1·v[i] = dst[i] + v[i]
// exactly, so every transport combines with the same bits.
func combine(dst, v []float32, add bool) {
	if add {
		tensor.AddScaled(dst, 1, v)
	} else {
		copy(dst, v)
	}
}

// inprocRing is the in-process transport: W ranks in one process, each
// running in its own goroutine, exchanging slices through channels
// without copying them first. A message is an offer of the sender's own
// slice; the receiver combines it into its buffer and acknowledges, and
// the sender's SendRecv returns only after that acknowledgement, so the
// sender's buffer is never read after SendRecv returns.
type inprocRing struct {
	size  int
	links []chan offer // links[r] carries offers from rank r to rank r+1
	abort chan struct{}
	once  sync.Once
}

// offer is one message on an in-process link.
type offer struct {
	seq  uint64
	data []float32
	ack  chan struct{}
}

// NewInprocRing returns the ends of an in-process ring of size ranks,
// indexed by rank, for goroutines of one process. Their Close does
// nothing.
func NewInprocRing(size int) []Transport {
	r := newInprocRing(size)
	ts := make([]Transport, size)
	for i := range ts {
		ts[i] = r.transport(i)
	}
	return ts
}

// newInprocRing returns the in-process ring of size ranks.
func newInprocRing(size int) *inprocRing {
	r := &inprocRing{size: size, links: make([]chan offer, size), abort: make(chan struct{})}
	for i := range r.links {
		r.links[i] = make(chan offer, 1)
	}
	return r
}

// Abort makes every pending and future SendRecv of the ring return
// ErrAborted. It may be called more than once and from any goroutine.
func (r *inprocRing) Abort() { r.once.Do(func() { close(r.abort) }) }

// aborted reports whether Abort has been called.
func (r *inprocRing) aborted() bool {
	select {
	case <-r.abort:
		return true
	default:
		return false
	}
}

// transport returns rank's end of the ring.
func (r *inprocRing) transport(rank int) *inprocTransport {
	return &inprocTransport{ring: r, rank: rank, ack: make(chan struct{}, 1)}
}

// inprocTransport is one rank's end of an inprocRing.
type inprocTransport struct {
	ring *inprocRing
	rank int
	ack  chan struct{} // acknowledgements of this rank's offers
	seq  uint64
}

func (t *inprocTransport) Rank() int { return t.rank }
func (t *inprocTransport) Size() int { return t.ring.size }

func (t *inprocTransport) SendRecv(src, dst []float32, add bool) error {
	r := t.ring
	if r.size == 1 {
		panic(badSelfSend)
	}
	// A select among ready cases picks one at random, so an aborted ring
	// is looked at before each step: a message still waiting, or room on
	// the link, must not win over the abort.
	if r.aborted() {
		return ErrAborted
	}
	seq := t.seq
	t.seq++
	out := r.links[t.rank]
	in := r.links[(t.rank+r.size-1)%r.size]
	select {
	case out <- offer{seq: seq, data: src, ack: t.ack}:
	case <-r.abort:
		return ErrAborted
	}
	var o offer
	select {
	case o = <-in:
	case <-r.abort:
		return ErrAborted
	}
	if r.aborted() {
		return ErrAborted
	}
	if o.seq != seq || len(o.data) != len(dst) {
		r.Abort()
		return fmt.Errorf("dist: rank %d: message %d of %d values from rank %d, want message %d of %d values: %w",
			t.rank, o.seq, len(o.data), (t.rank+r.size-1)%r.size, seq, len(dst), errProtocol)
	}
	combine(dst, o.data, add)
	o.ack <- struct{}{}
	select {
	case <-t.ack:
		return nil
	case <-r.abort:
		return ErrAborted
	}
}

// Close does nothing: an in-process ring is aborted as a whole, by Run,
// when a rank fails.
func (t *inprocTransport) Close() error { return nil }
