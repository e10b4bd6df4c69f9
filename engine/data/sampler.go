package data

import (
	"fmt"
	"math/rand/v2"
)

// Sampler splits each epoch of a data set into global batches and each
// global batch into one contiguous shard per data-parallel worker.
//
// Epoch e visits the samples in the order Order(e): a permutation that is a
// pure function of (Seed, e) when Shuffle is set, and 0, 1, ..., N−1
// otherwise. Global batch k of an epoch is positions [kB, min((k+1)B, N))
// of that order, r samples; worker w of W gets its positions
//
//	[kB + ⌊w·r/W⌋, kB + ⌊(w+1)·r/W⌋)
//
// so a full batch gives every worker exactly B/W samples, and the shards of
// workers 0, 1, ..., W−1 concatenated are the global batch in order: with
// gradients summed per sample and divided by the global batch size,
// data-parallel training computes what serial training on batch B does.
//
// The last batch of an epoch is partial when B does not divide N. With
// DropLast it is left out (the samples it would hold differ from epoch to
// epoch when shuffling), and every batch has exactly B samples, which the
// data-parallel-equals-serial property needs when gradients are averaged
// per worker. Without DropLast every sample is seen exactly once per epoch;
// the partial batch's r samples are split as evenly as the formula gives
// (shard sizes differ by at most one, and are 0 for some workers when
// r < W), so workers must weight their gradients by shard size.
type Sampler struct {
	// N is the number of samples in the data set; no default.
	N int
	// Batch is the global batch size B in samples, a multiple of
	// Workers; no default.
	Batch int
	// Workers is the number of data-parallel workers W ≥ 1; no default.
	Workers int
	// DropLast drops the partial global batch at the end of each epoch;
	// default false.
	DropLast bool
	// Shuffle permutes the samples every epoch; default false (data-set
	// order, as for evaluation).
	Shuffle bool
	// Seed seeds the permutations; default 0.
	Seed uint64
}

// Validate reports an unusable configuration.
func (s Sampler) Validate() error {
	switch {
	case s.N < 1:
		return fmt.Errorf("sampler: %d samples", s.N)
	case s.Workers < 1:
		return fmt.Errorf("sampler: %d workers", s.Workers)
	case s.Batch < 1 || s.Batch%s.Workers != 0:
		return fmt.Errorf("sampler: global batch %d not a positive multiple of %d workers", s.Batch, s.Workers)
	case s.DropLast && s.Batch > s.N:
		return fmt.Errorf("sampler: global batch %d exceeds %d samples with drop-last: no batches", s.Batch, s.N)
	}
	return nil
}

func (s Sampler) check() {
	if err := s.Validate(); err != nil {
		panic(errPlan + err.Error())
	}
}

// Batches returns the number of global batches per epoch:
//
//	⌊N/B⌋ with DropLast,   ⌈N/B⌉ without.
func (s Sampler) Batches() int {
	s.check()
	if s.DropLast {
		return s.N / s.Batch
	}
	return (s.N + s.Batch - 1) / s.Batch
}

// Order returns the order in which epoch e visits the samples: a fresh
// slice holding a permutation of 0, ..., N−1.
func (s Sampler) Order(epoch int) []int {
	s.check()
	p := make([]int, s.N)
	for i := range p {
		p[i] = i
	}
	if s.Shuffle {
		// Fisher–Yates with a stream keyed by the epoch, so that epoch e
		// can be produced without the ones before it.
		r := rand.New(rand.NewPCG(s.Seed^keyShuffle, uint64(epoch)))
		for i := len(p) - 1; i > 0; i-- {
			j := r.IntN(i + 1)
			p[i], p[j] = p[j], p[i]
		}
	}
	return p
}

// GlobalLen returns the number of samples r in global batch k.
func (s Sampler) GlobalLen(k int) int {
	if k < 0 || k >= s.Batches() {
		panic(errShard)
	}
	return min(s.Batch, s.N-k*s.Batch)
}

// Bounds returns the positions [lo, hi) within an epoch's order that
// worker w reads in global batch k.
func (s Sampler) Bounds(k, w int) (lo, hi int) {
	r := s.GlobalLen(k)
	if w < 0 || w >= s.Workers {
		panic(errShard)
	}
	start := k * s.Batch
	return start + w*r/s.Workers, start + (w+1)*r/s.Workers
}

// Shard returns the sample indices worker w reads in global batch k of an
// epoch with the given order, aliasing order.
func (s Sampler) Shard(order []int, k, w int) []int {
	if len(order) != s.N {
		panic(errShard)
	}
	lo, hi := s.Bounds(k, w)
	return order[lo:hi:hi]
}
