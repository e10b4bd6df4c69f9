package dist

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"runtime"
	"time"

	"scaleplan/engine/data"
	"scaleplan/engine/nn"
	"scaleplan/engine/optim"
	"scaleplan/engine/tensor"
)

// Phases splits one step's wall time on a worker. All-reduces overlapped
// with backward count in both Backward and AllReduce, so the phases may
// add up to more than the step; DataWait + Forward + Backward + Wait +
// Update is the step.
type Phases struct {
	// DataWait is the time spent waiting for the loader's next batch.
	DataWait time.Duration
	// Forward is the time of the forward passes and the loss.
	Forward time.Duration
	// Backward is the time of the backward passes (with Overlap, queuing
	// the buckets included).
	Backward time.Duration
	// AllReduce is the time from the start of the first bucket's
	// all-reduce to the end of the last one's.
	AllReduce time.Duration
	// Wait is the all-reduce time not hidden behind backward: from the end
	// of backward to the end of the last all-reduce. Without Overlap it
	// equals AllReduce.
	Wait time.Duration
	// Update is the time of the optimizer step and of zeroing the
	// gradients.
	Update time.Duration
}

// add adds q's phases to p's.
func (p *Phases) add(q Phases) {
	p.DataWait += q.DataWait
	p.Forward += q.Forward
	p.Backward += q.Backward
	p.AllReduce += q.AllReduce
	p.Wait += q.Wait
	p.Update += q.Update
}

// StepStats is one optimizer step as worker 0 saw it.
type StepStats struct {
	// Step is the 0-based index of the step.
	Step int
	// Time is the step's wall time, data wait to end of update;
	// evaluations are not included.
	Time time.Duration
	// Phases splits Time.
	Phases Phases
	// Loss is worker 0's mean training loss over its micro-batches.
	Loss float64
}

// EvalResult is one evaluation on the held-out set.
type EvalResult struct {
	// Step is the number of optimizer steps done before it.
	Step int
	// Accuracy is the fraction of held-out samples classified correctly.
	Accuracy float64
	// Loss is the mean cross-entropy over the held-out set.
	Loss float64
	// Time is worker 0's wall time from the start of the first step to the
	// end of the evaluation.
	Time time.Duration
}

// Result is what Run returns: worker 0's account of the run.
type Result struct {
	// Config is the run's configuration with defaults filled in.
	Config Config
	// Params are the final parameters. All workers hold the same bits;
	// Run checks this with ParamsHash.
	Params []float32
	// ParamsHash is the FNV-1a hash of Params' bytes (little-endian).
	ParamsHash uint64
	// Steps has one entry per step run.
	Steps []StepStats
	// Evals has one entry per evaluation.
	Evals []EvalResult
	// StepsPerEpoch is the number of global batches per epoch.
	StepsPerEpoch int
	// StepsToTarget is the step count at the first evaluation whose
	// accuracy reached Eval.Target; 0 if none did.
	StepsToTarget int
	// Diverged reports that an evaluation found a non-finite training
	// loss on some worker.
	Diverged bool
	// Time is worker 0's wall time from the first step to the end of the
	// last step or evaluation.
	Time time.Duration
}

// FinalAccuracy returns the accuracy of the last evaluation, or 0 if
// there was none.
func (r *Result) FinalAccuracy() float64 {
	if len(r.Evals) == 0 {
		return 0
	}
	return r.Evals[len(r.Evals)-1].Accuracy
}

// plan holds the step counts a configuration implies for a data set.
type plan struct {
	perEpoch int // global batches per epoch
	steps    int // optimizer steps to run
	epochs   int // epochs the loader must deliver
}

// makePlan works out c's step counts on ds.
func makePlan(c *Config, ds *datasets) (plan, error) {
	s := data.Sampler{N: ds.train.N, Batch: c.GlobalBatch(), Workers: c.Workers, DropLast: true, Shuffle: true, Seed: c.Seed}
	if err := s.Validate(); err != nil {
		return plan{}, fmt.Errorf("global batch %d of %d workers on %d training samples: %w", c.GlobalBatch(), c.Workers, ds.train.N, err)
	}
	p := plan{perEpoch: s.Batches(), steps: c.Steps}
	if p.steps == 0 {
		p.steps = max(1, optim.EpochsToSteps(c.Epochs, p.perEpoch))
		if p.steps > maxSteps {
			return plan{}, fmt.Errorf("%g epochs of %d steps exceed %d steps", c.Epochs, p.perEpoch, maxSteps)
		}
	}
	p.epochs = (p.steps + p.perEpoch - 1) / p.perEpoch
	return p, nil
}

// runRank trains worker rank of the run c (defaults filled in, valid) on
// ds, exchanging gradients over tr. Every rank returns a Result with
// Params and ParamsHash; worker 0's also has the steps and evaluations.
func runRank(ctx context.Context, c *Config, rank int, tr Transport, ds *datasets) (res *Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("worker %d: panic: %v", rank, p)
		}
	}()
	// When every worker is single-threaded and has a CPU to itself, each
	// runs bound to its CPU (the rank-th of the process's), as launchers
	// bind ranks to cores: unbound, the workers' goroutines and those of
	// their loaders and all-reduces move between the cores, and two
	// in-process workers on two cores ran 10–40 % slower at small batches
	// (docs/performance.md). With more workers than CPUs they stay
	// unbound, so that the system can move a runnable worker to a core
	// whose workers wait. Best effort: where the system refuses, the
	// worker runs unbound. Such a worker also brings a spare P for the
	// goroutines that serve it (spareProc).
	if c.Workers > 1 && c.Threads == 1 && c.Workers <= runtime.NumCPU() {
		defer spareProc()()
		if release, err := bindThread(rank); err == nil {
			defer release()
		}
	}
	pl, err := makePlan(c, ds)
	if err != nil {
		return nil, err
	}
	net := c.build()
	upd, err := newUpdater(net, c.Optimizer)
	if err != nil {
		return nil, err
	}
	sched, err := optim.NewSchedule(c.Schedule, pl.perEpoch)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	sampler := data.Sampler{N: ds.train.N, Batch: c.GlobalBatch(), Workers: c.Workers, DropLast: true, Shuffle: true, Seed: c.Seed}
	loader, err := data.NewLoader(ctx, ds.train, sampler, data.LoaderConfig{Worker: rank, Epochs: pl.epochs, Prefetch: c.Prefetch, Recycle: true})
	if err != nil {
		return nil, err
	}
	defer loader.Close()
	// One worker has nothing to exchange: its all-reduce does nothing.
	overlap := c.Overlap && c.Workers > 1
	red := newReducer(tr, net.Grads, max(1, c.BucketBytes/4), overlap)
	if c.InStep {
		// Workers in step meet where exchanging ones all-reduce: over
		// one value of their own, after backward.
		overlap = false
		red = newReducer(tr, make([]float32, 1), 1, false)
	}
	defer red.Close()

	res = &Result{Config: *c, StepsPerEpoch: pl.perEpoch}
	ev := newEvaluator(c, rank, ds.eval)
	// Each micro-batch's loss gradient is its share of the mean over the
	// global batch, so the all-reduce only sums; an independent worker's
	// is its share of the mean over its own samples.
	mean := c.GlobalBatch()
	if c.Independent {
		mean /= c.Workers
	}
	ce := &nn.CrossEntropy{Smoothing: c.Smoothing, MeanOver: mean}
	b := c.Batch
	chunks := chunkCount(b, chunkLimit(c, net))
	nonFinite := false
	nextEval := c.Eval.Every
	// Collect the garbage of loading the data and building the replica
	// now, rather than in a collection that would start during the steps
	// and take a core from them for tens of milliseconds (the MLP's
	// first steps at batch 1024 met one; a step allocates a few kB, so
	// none follows).
	runtime.GC()
	start := time.Now()
	for s := range pl.steps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var ph Phases
		t0 := time.Now()
		batch, ok := loader.Next()
		ph.DataWait = time.Since(t0)
		if !ok {
			return nil, fmt.Errorf("worker %d: loader stopped at step %d: %w", rank, s, errors.Join(loader.Err(), ctx.Err()))
		}
		var loss float64
		for m := range c.Accumulate {
			for j := range chunks {
				lo, hi := m*b+j*b/chunks, m*b+(j+1)*b/chunks
				x := tensor.FromData(batch.X[lo*inputDim:hi*inputDim], hi-lo, inputDim)
				tf := time.Now()
				y := net.Forward(x, true)
				l := ce.Forward(y, batch.Labels[lo:hi])
				tb := time.Now()
				ph.Forward += tb.Sub(tf)
				net.GradReady = nil
				if overlap && m == c.Accumulate-1 && j == chunks-1 {
					net.GradReady = red.Ready
				}
				net.Backward(ce.Backward())
				ph.Backward += time.Since(tb)
				loss += l * float64(hi-lo) / float64(b)
				nonFinite = nonFinite || !finite(l)
			}
		}
		net.GradReady = nil
		ta := time.Now()
		if overlap {
			ph.AllReduce, err = red.Wait()
			ph.Wait = time.Since(ta)
		} else {
			err = red.Reduce()
			ph.AllReduce = time.Since(ta)
			ph.Wait = ph.AllReduce
		}
		if err != nil {
			// A cancelled run closes the transport under the ring:
			// say so rather than only what the closed link reported.
			return nil, fmt.Errorf("worker %d: step %d: all-reduce: %w", rank, s, errors.Join(err, ctx.Err()))
		}
		tu := time.Now()
		upd.Step(sched.LR(s))
		ph.Update = time.Since(tu)
		st := StepStats{Step: s, Time: time.Since(t0), Phases: ph, Loss: loss / float64(c.Accumulate)}
		if rank == 0 {
			res.Steps = append(res.Steps, st)
			if c.Progress != nil {
				c.Progress(st)
			}
		}
		if c.Eval.Every > 0 && (s+1 >= nextEval || s == pl.steps-1) {
			nextEval = max(s+1+c.Eval.Every, int(math.Ceil(float64(s+1)*(1+c.Eval.Growth))))
			e, diverged, err := ev.run(net, tr, s+1, nonFinite)
			if err != nil {
				return nil, fmt.Errorf("worker %d: evaluation after step %d: %w", rank, s+1, errors.Join(err, ctx.Err()))
			}
			nonFinite = false
			e.Time = time.Since(start)
			res.Evals = append(res.Evals, e)
			if rank == 0 && c.EvalProgress != nil {
				c.EvalProgress(e)
			}
			res.Diverged = res.Diverged || diverged
			reached := c.Eval.Target > 0 && e.Accuracy >= c.Eval.Target
			if reached && res.StepsToTarget == 0 {
				res.StepsToTarget = s + 1
			}
			if c.Eval.Stop && (reached || diverged) {
				break
			}
		}
	}
	res.Time = time.Since(start)
	res.Params = append([]float32(nil), net.Params...)
	res.ParamsHash = hashParams(net.Params)
	return res, nil
}

// evaluator measures accuracy on one worker's W-th of the held-out set.
type evaluator struct {
	ds     *data.Dataset
	lo, hi int // the worker's samples
	n      int // samples over all workers
	batch  int
	idx    []int
	x      []float32
	y      []int
	ce     nn.CrossEntropy
}

func newEvaluator(c *Config, rank int, ds *data.Dataset) *evaluator {
	return &evaluator{ds: ds, lo: rank * ds.N / c.Workers, hi: (rank + 1) * ds.N / c.Workers, n: ds.N, batch: c.Eval.Batch}
}

// run evaluates net on the worker's samples and all-reduces the counts
// (correct, summed loss, non-finite training loss flag), so that every
// worker returns the same result.
func (e *evaluator) run(net *nn.Network, tr Transport, step int, nonFinite bool) (EvalResult, bool, error) {
	var correct, lossSum float64
	for lo := e.lo; lo < e.hi; lo += e.batch {
		hi := min(lo+e.batch, e.hi)
		e.idx = e.idx[:0]
		for i := lo; i < hi; i++ {
			e.idx = append(e.idx, i)
		}
		e.x, e.y = e.ds.Gather(e.x, e.y, e.idx)
		out := net.Forward(tensor.FromData(e.x, hi-lo, inputDim), false)
		lossSum += e.ce.Forward(out, e.y) * float64(hi-lo)
		correct += float64(nn.Correct(out, e.y))
	}
	flag := float32(0)
	if nonFinite {
		flag = 1
	}
	// Counts below 2^24 are exact in float32; the loss only informs.
	v := []float32{float32(correct), float32(lossSum), flag}
	if err := AllReduce(tr, v, 1); err != nil {
		return EvalResult{}, false, err
	}
	return EvalResult{Step: step, Accuracy: float64(v[0]) / float64(e.n), Loss: float64(v[1]) / float64(e.n)}, v[2] > 0, nil
}

// hashParams returns the FNV-1a hash of p's little-endian bytes.
func hashParams(p []float32) uint64 {
	h := fnv.New64a()
	var b [4096]byte
	for len(p) > 0 {
		n := min(len(p), len(b)/4)
		for i, v := range p[:n] {
			u := math.Float32bits(v)
			b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
		}
		h.Write(b[:4*n])
		p = p[n:]
	}
	return h.Sum64()
}
