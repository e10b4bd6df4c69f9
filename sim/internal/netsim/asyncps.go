package netsim

import (
	"fmt"

	"scaleplan/internal/units"
)

// AsyncConfig describes an asynchronous parameter-server run.
type AsyncConfig struct {
	// Workers are the ranks that train; nil means all ranks.
	Workers []int
	// Compute is each worker's compute time per iteration, in the order of
	// Workers, or a single value for all of them.
	Compute []units.Seconds
	// Bytes is the size S of the gradients pushed and of the parameters
	// pulled, split evenly over the Config.Servers shards.
	Bytes units.Bytes
	// Updates is the number of updates to apply before stopping; at least 1.
	Updates int
}

// AsyncResult is the outcome of an asynchronous parameter-server run.
type AsyncResult struct {
	Updates       int           // updates applied
	Start         units.Seconds // when AsyncPS was called
	End           units.Seconds // when the last update was applied
	Throughput    float64       // updates per second: Updates / (End − Start); 0 if End = Start
	MeanStaleness float64       // mean over updates of their staleness
	MaxStaleness  int           // largest staleness of an update
	PerWorker     []int         // updates applied by each worker, in the order of Workers
}

// AsyncPS runs an asynchronous parameter server: from the scheduler's
// current time, every worker loops without a barrier
//
//	pull S/k from each of the k shards; compute; push S/k to each shard
//
// and an update is applied when the last shard has received its push. A
// worker's k pulls (and its k pushes) move as one flow group, a path of k
// routes whose streams share a rate: the shards are alike (each on its own
// server NIC of the same bandwidth, the same hops away) and every worker
// talks to all of them at once, so under max-min sharing the k transfers
// would get equal rates and finish together anyway, and the network
// allocates over one flow per worker instead of k. An
// update's staleness is the number of updates applied after the worker's
// pull began and before the update itself; with N identical workers in
// lockstep it is N−1 in the steady state. Workers start no iteration once
// Updates iterations have been started; done (if not nil) is called when
// the last update is applied. It returns an error wrapping ErrCollective if
// the request is invalid; then nothing is scheduled.
func (t *Topology) AsyncPS(cfg AsyncConfig, done func(*AsyncResult)) error {
	k := t.cfg.Servers
	if k == 0 {
		return fmt.Errorf("%w: asynchronous parameter server needs servers; the topology has 0", ErrCollective)
	}
	_, workers, err := t.rankKey(cfg.Workers)
	if err != nil {
		return err
	}
	if cfg.Updates < 1 {
		return fmt.Errorf("%w: updates %d is less than 1", ErrCollective, cfg.Updates)
	}
	if !nonNegative(float64(cfg.Bytes)) {
		return fmt.Errorf("%w: bytes %v is not a non-negative finite number", ErrCollective, float64(cfg.Bytes))
	}
	if len(cfg.Compute) != 1 && len(cfg.Compute) != len(workers) {
		return fmt.Errorf("%w: %d compute times for %d workers", ErrCollective, len(cfg.Compute), len(workers))
	}
	for i, c := range cfg.Compute {
		if !nonNegative(float64(c)) {
			return fmt.Errorf("%w: compute time %d is %v", ErrCollective, i, float64(c))
		}
	}
	a := &asyncRun{t: t, bytes: units.Bytes(float64(cfg.Bytes) / float64(k)), updates: cfg.Updates, done: done,
		res: &AsyncResult{Start: t.s.Now(), PerWorker: make([]int, len(workers))}, label: t.net.Label}
	for i, r := range workers {
		w := &asyncWorker{a: a, i: i, compute: cfg.Compute[0]}
		if len(cfg.Compute) > 1 {
			w.compute = cfg.Compute[i]
		}
		w.pull = t.cached(fmt.Sprintf("from-servers/%d", r), func() {
			for s := range k {
				t.fromServer(s, r)
			}
		})
		w.push = t.cached(fmt.Sprintf("to-servers/%d", r), func() {
			for s := range k {
				t.toServer(r, s)
			}
		})
		w.pulledFn, w.pushedFn, w.computedFn = w.pulled, w.pushed, w.computed
		a.workers = append(a.workers, w)
	}
	for _, w := range a.workers {
		w.iterate()
	}
	return nil
}

type asyncRun struct {
	t       *Topology
	bytes   units.Bytes // per shard
	updates int
	workers []*asyncWorker
	issued  int
	version int
	stale   int
	done    func(*AsyncResult)
	res     *AsyncResult
	label   string // the network's Label when AsyncPS was called
}

type asyncWorker struct {
	a                  *asyncRun
	i                  int
	compute            units.Seconds
	pull, push         *Path // flow groups of one route per shard
	read               int   // version the current pull read
	pulledFn, pushedFn func(*Flow)
	computedFn         func()
}

func (w *asyncWorker) iterate() {
	a := w.a
	if a.issued >= a.updates {
		return
	}
	a.issued++
	w.read = a.version
	a.t.net.transfer(w.pull, a.bytes, a.label, w.pulledFn, true)
}

func (w *asyncWorker) pulled(*Flow) { w.a.t.s.After(w.compute, w.computedFn) }

func (w *asyncWorker) computed() {
	a := w.a
	a.t.net.transfer(w.push, a.bytes, a.label, w.pushedFn, true)
}

func (w *asyncWorker) pushed(*Flow) {
	a := w.a
	s := a.version - w.read
	a.version++
	a.stale += s
	r := a.res
	r.MaxStaleness = max(r.MaxStaleness, s)
	r.PerWorker[w.i]++
	r.Updates++
	if r.Updates == a.updates {
		r.End = a.t.s.Now()
		r.MeanStaleness = float64(a.stale) / float64(r.Updates)
		if d := r.End - r.Start; d > 0 {
			r.Throughput = float64(r.Updates) / float64(d)
		}
		if a.done != nil {
			a.done(r)
		}
		return
	}
	w.iterate()
}
