// Package timeq is a priority queue of indices keyed by a time and a
// sequence number, for discrete-event simulation: the event scheduler's
// pending events and the network's finish times of moving flows.
//
// A Queue is a calendar queue (R. Brown, "Calendar queues: a fast O(1)
// priority queue implementation for the simulation event set problem",
// Communications of the ACM 31(10), 1988, pp. 1220–1227): a ring of
// buckets, each an interval of width seconds, in which an entry at time t
// lies in the bucket of its virtual bucket number
//
//	v(t) = ⌊t/width⌋, bucket v mod len(buckets)
//
// each bucket kept in (time, sequence) order. v is monotone in t (the
// product of t by 1/width rounds monotonically, and a cap keeps it in
// range), so the earliest entry is the head of the first bucket, from the
// current virtual bucket on, whose head has that virtual number: the queue
// pops exactly the entry a heap or a sorted list would, ties included.
// With about two entries a bucket a push, a pop or a removal costs a
// constant, where a binary heap of n entries costs log2 n levels, each a
// likely cache miss once n is in the thousands. A bucket is a list linked
// both ways by index through one array of nodes, so the queue holds no
// pointer for the garbage collector to scan, allocates only as it grows,
// and removes an entry through the Handle its push returned without
// searching its bucket (flows that finish together share one).
//
// The queue measures the spread of its entries for the width, sorting
// them into fresh buckets, when their number leaves [len/8, 2·len] for
// len buckets, and when its operations have stepped over or moved more
// than a few entries each on average over a window. The width depends only
// on the entries, so the queue is deterministic.
//
// UseSorted makes a queue keep its entries in one sorted slice instead:
// the same order by definition, at a cost linear in the number of
// entries. It is the reference the calendar is tested against, and the
// simulator's tests run whole simulations on both.
package timeq

import (
	"cmp"
	"slices"
)

// Entry is an index V (of an event, of a flow) with its key: time T,
// then sequence number Seq.
type Entry struct {
	T   float64
	Seq uint64
	V   int32
}

func compare(a, b Entry) int {
	return cmp.Or(cmp.Compare(a.T, b.T), cmp.Compare(a.Seq, b.Seq))
}

// Queue holds entries in (time, sequence) order. The zero value is an
// empty calendar queue. Keys must be unique and times not NaN; a time
// may be earlier than the entries already popped.
type Queue struct {
	sorted bool    // UseSorted was called
	ref    []Entry // UseSorted: the entries, latest first

	first, last []int32 // by bucket: its first and last node, or -1
	nodes       []node
	free        int32 // first node of the free list, or -1 (with nodes)
	mask        uint64
	inv         float64 // 1/width
	cur         uint64  // no entry has a smaller virtual bucket
	n           int

	// Work since the last rebuild or the last check: buckets stepped
	// over and entries passed, against the operations they served, and
	// the operations before the next check.
	work, ops, left int
	ids             []int32 // scratch for rebuild
}

// Handle names a pushed entry, for Remove.
type Handle struct {
	t    float64
	seq  uint64
	node int32
}

// node is an entry in its bucket's list, or on the free list.
type node struct {
	t          float64
	seq        uint64
	v          int32
	next, prev int32 // the neighbours in its list, or -1; prev freed if free
}

// freed marks a node on the free list.
const freed = -2

func (k *node) entry() Entry { return Entry{k.t, k.seq, k.v} }

// precedes reports whether e precedes k in (time, sequence) order.
func (e *Entry) precedes(k *node) bool {
	return e.T < k.t || e.T == k.t && e.Seq < k.seq
}

const (
	// minBuckets is the fewest buckets of the ring.
	minBuckets = 16
	// vMax caps a virtual bucket number, so that its conversion from
	// float64 is defined (Go leaves it to the implementation past the
	// integer's range); the cap keeps v monotone.
	vMax = 1 << 62
	// maxWork is the steps an operation may take on average, over a
	// window, before the queue measures its width again.
	maxWork = 6
	// window is the fewest operations of a window.
	window = 4096
)

// Len returns the number of entries.
func (q *Queue) Len() int {
	if q.sorted {
		return len(q.ref)
	}
	return q.n
}

// Sorted reports whether UseSorted was called.
func (q *Queue) Sorted() bool { return q.sorted }

// UseSorted makes q keep its entries, those it holds included, in a
// sorted slice: the reference implementation. Handles of entries pushed
// before stay valid.
func (q *Queue) UseSorted() {
	if q.sorted {
		return
	}
	var all []Entry
	for _, f := range q.first {
		for k := f; k >= 0; k = q.nodes[k].next {
			all = append(all, q.nodes[k].entry())
		}
	}
	slices.SortFunc(all, func(a, b Entry) int { return compare(b, a) })
	*q = Queue{sorted: true, ref: all}
}

// v returns the virtual bucket number of time t.
func (q *Queue) v(t float64) uint64 {
	x := t * q.inv
	if !(x > 0) {
		return 0
	}
	if x >= vMax {
		return vMax
	}
	return uint64(x)
}

// Push adds v at time t with sequence number seq and returns its handle.
func (q *Queue) Push(t float64, seq uint64, v int32) Handle {
	e := Entry{t, seq, v}
	if q.sorted {
		i, _ := slices.BinarySearchFunc(q.ref, e, func(a, b Entry) int { return compare(b, a) })
		q.ref = slices.Insert(q.ref, i, e)
		return Handle{t, seq, -1}
	}
	if q.first == nil {
		q.resize(minBuckets)
		q.free, q.inv = -1, 1
	}
	k := q.free
	if k < 0 {
		k = int32(len(q.nodes))
		q.nodes = append(q.nodes, node{})
	} else {
		q.free = q.nodes[k].next
	}
	q.nodes[k] = node{t: t, seq: seq, v: v}
	vb := q.v(t)
	q.cur = min(q.cur, vb)
	q.link(vb&q.mask, k)
	q.n++
	q.ops++
	if q.n > 2*len(q.first) {
		q.rebuild(2 * len(q.first))
	}
	return Handle{t, seq, k}
}

// link puts node k into bucket b at its place.
func (q *Queue) link(b uint64, k int32) {
	e := q.nodes[k].entry()
	p, nx := q.last[b], int32(-1) // k goes between p and nx
	if p >= 0 && e.precedes(&q.nodes[p]) {
		if f := q.first[b]; e.precedes(&q.nodes[f]) {
			p, nx = -1, f
		} else {
			for nx = p; e.precedes(&q.nodes[p]); p = q.nodes[p].prev {
				nx = p
				q.work++
			}
		}
	}
	q.join(b, p, k)
	q.join(b, k, nx)
}

// join makes node a, or the start of bucket b if a < 0, precede node c,
// or the end of b if c < 0.
func (q *Queue) join(b uint64, a, c int32) {
	if a < 0 {
		q.first[b] = c
	} else {
		q.nodes[a].next = c
	}
	if c < 0 {
		q.last[b] = a
	} else {
		q.nodes[c].prev = a
	}
}

// Min returns the earliest entry, and false if the queue is empty.
func (q *Queue) Min() (Entry, bool) {
	if q.sorted {
		if len(q.ref) == 0 {
			return Entry{}, false
		}
		return q.ref[len(q.ref)-1], true
	}
	if q.n == 0 {
		return Entry{}, false
	}
	return q.nodes[q.first[q.head()]].entry(), true
}

// head returns the bucket whose first node is the earliest entry; q must
// not be empty.
func (q *Queue) head() uint64 {
	for stepped := 0; ; stepped++ {
		if stepped == len(q.first) {
			q.cur = q.earliest()
		}
		b := q.cur & q.mask
		if f := q.first[b]; f >= 0 && q.v(q.nodes[f].t) == q.cur {
			q.work += stepped
			return b
		}
		q.cur++
	}
}

// earliest returns the smallest virtual bucket of a bucket's first entry.
func (q *Queue) earliest() uint64 {
	best := uint64(vMax)
	for _, f := range q.first {
		if f >= 0 {
			best = min(best, q.v(q.nodes[f].t))
		}
	}
	return best
}

// Pop removes and returns the earliest entry; q must not be empty.
func (q *Queue) Pop() Entry {
	if q.sorted {
		k := len(q.ref) - 1
		e := q.ref[k]
		q.ref = q.ref[:k]
		return e
	}
	b := q.head()
	f := q.first[b]
	e := q.nodes[f].entry()
	q.unlink(b, f)
	return e
}

// unlink takes node k out of bucket b and frees it.
func (q *Queue) unlink(b uint64, k int32) {
	q.join(b, q.nodes[k].prev, q.nodes[k].next)
	q.nodes[k].next, q.nodes[k].prev, q.free = q.free, freed, k
	q.n--
	if q.ops++; q.ops >= q.left || q.n < len(q.first)/8 {
		q.check()
	}
}

// Remove removes the entry h names and reports whether it was there.
func (q *Queue) Remove(h Handle) bool {
	if q.sorted {
		key := Entry{T: h.t, Seq: h.seq}
		i, ok := slices.BinarySearchFunc(q.ref, key, func(a, b Entry) int { return compare(b, a) })
		if ok {
			q.ref = slices.Delete(q.ref, i, i+1)
		}
		return ok
	}
	k := h.node
	if k < 0 || int(k) >= len(q.nodes) {
		return false
	}
	if nd := &q.nodes[k]; nd.prev == freed || nd.seq != h.seq || nd.t != h.t {
		return false
	}
	q.unlink(q.v(h.t)&q.mask, k)
	return true
}

// check rebuilds the ring after a pop or removal when it has 8 times
// more buckets than entries, or at the end of a window of operations
// whose work shows a width that no longer fits the entries.
func (q *Queue) check() {
	switch {
	case q.n < len(q.first)/8 && len(q.first) > minBuckets:
		q.rebuild(len(q.first) / 2)
	case q.ops < q.left:
	case q.work > maxWork*q.ops:
		q.rebuild(len(q.first))
	default:
		q.work, q.ops, q.left = 0, 0, max(window, q.n)
	}
}

// resize empties the ring into nb empty buckets; the nodes stay.
func (q *Queue) resize(nb int) {
	q.first = slices.Grow(q.first[:0], nb)[:nb]
	q.last = slices.Grow(q.last[:0], nb)[:nb]
	for i := range nb {
		q.first[i], q.last[i] = -1, -1
	}
	q.mask = uint64(nb - 1)
}

// rebuild links the entries' nodes, which keep their indices (handles
// stay valid), into nb buckets of a width measured on them: about two
// entries a bucket over the middle 80 % of their times.
func (q *Queue) rebuild(nb int) {
	ids := q.ids[:0]
	for _, f := range q.first {
		for k := f; k >= 0; k = q.nodes[k].next {
			ids = append(ids, k)
		}
	}
	slices.SortFunc(ids, func(a, b int32) int {
		return compare(q.nodes[a].entry(), q.nodes[b].entry())
	})
	if k := len(ids) / 10; len(ids) >= 2 {
		lo, hi := q.nodes[ids[k]].t, q.nodes[ids[len(ids)-1-k]].t
		if w := 2 * (hi - lo) / float64(len(ids)-2*k); w > 0 && 1/w < vMax {
			q.inv = 1 / w
		}
	}
	q.resize(nb)
	q.cur = vMax
	for _, k := range ids { // in order: each is the latest of its bucket
		vb := q.v(q.nodes[k].t)
		q.cur = min(q.cur, vb)
		q.link(vb&q.mask, k)
	}
	q.work, q.ops, q.left = 0, 0, max(window, q.n)
	q.ids = ids[:0]
}
