package dist

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"scaleplan/engine/tensor"
	"scaleplan/internal/procout"
)

// Environment variables that tell a program started by Spawn that it is
// worker EnvRank of the run whose coordinator listens at EnvCoordinator.
const (
	EnvCoordinator = "SCALEPLAN_DIST_COORDINATOR"
	EnvRank        = "SCALEPLAN_DIST_RANK"
)

// Run trains the network c describes with c.Workers data-parallel
// workers and returns worker 0's account. Worker 0 runs on the calling
// goroutine; the others run in goroutines of this process, or, with
// Transport "tcp" and Spawn set, in processes that Run starts and waits
// for. Run sets tensor.SetThreads(c.Threads) for its duration.
//
// Run returns an error for an invalid configuration, a data set that
// cannot be read or is too small for one global batch, a worker that
// fails, a peer silent for longer than c.Timeout, replicas whose final
// parameters differ, or ctx being done. No goroutine or process it
// started outlives it.
func Run(ctx context.Context, c Config) (*Result, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("dist: %w", err)
	}
	c = c.WithDefaults()
	ds, err := loadData(c.Data)
	if err != nil {
		return nil, fmt.Errorf("dist: %w", err)
	}
	if _, err := makePlan(&c, ds); err != nil {
		return nil, fmt.Errorf("dist: %w", err)
	}
	prev := tensor.Threads()
	tensor.SetThreads(c.Threads)
	defer tensor.SetThreads(prev)
	var res *Result
	switch {
	case c.Workers == 1 || c.Transport == "inproc":
		res, err = runInproc(ctx, &c, ds)
	default:
		res, err = runTCP(ctx, &c, ds)
	}
	if err != nil {
		return nil, fmt.Errorf("dist: %w", err)
	}
	return res, nil
}

// runInproc runs every worker in a goroutine over an in-process ring, or,
// if c.Independent, each over a ring of its own.
func runInproc(ctx context.Context, c *Config, ds *datasets) (*Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ring := newInprocRing(c.Workers)
	stop := context.AfterFunc(ctx, ring.Abort)
	defer stop()
	results := make([]*Result, c.Workers)
	errs := make([]error, c.Workers)
	var wg sync.WaitGroup
	run := func(r int) {
		var tr Transport = ring.transport(r)
		if c.Independent && !c.InStep {
			tr = newInprocRing(1).transport(0) // nothing to exchange
		}
		results[r], errs[r] = runRank(ctx, c, r, tr, ds)
		if errs[r] != nil {
			ring.Abort()
			cancel() // independent workers do not see the ring
		}
	}
	for r := 1; r < c.Workers; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(r)
		}()
	}
	run(0)
	wg.Wait()
	if err := firstCause(errs); err != nil {
		return nil, err
	}
	for r, res := range results[1:] {
		if !c.Independent && res.ParamsHash != results[0].ParamsHash {
			return nil, fmt.Errorf("worker %d: parameters hash to %016x, worker 0's to %016x: replicas diverged", r+1, res.ParamsHash, results[0].ParamsHash)
		}
	}
	return results[0], nil
}

// firstCause returns the error that most likely caused the others: the
// first that is not an abort or a cancellation, else the first.
func firstCause(errs []error) error {
	var first error
	for _, err := range errs {
		if err == nil {
			continue
		}
		if !errors.Is(err, ErrAborted) && !errors.Is(err, context.Canceled) {
			return err
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// runTCP runs worker 0 here and the others in goroutines or processes,
// all connected by a ring of loopback TCP connections set up through a
// coordinator that worker 0 runs.
func runTCP(ctx context.Context, c *Config, ds *datasets) (res *Result, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tok, err := newToken()
	if err != nil {
		return nil, err
	}
	if c.Log != nil {
		c.Log = &procout.Locked{W: c.Log} // every rank's rendezvous logs to it
	}
	ringLn, err := listenLoopback("ring")
	if err != nil {
		return nil, err
	}
	defer ringLn.Close()
	coord, err := newCoordinator(c.Workers, ringLn.Addr().String(), tok, c.Log)
	if err != nil {
		return nil, err
	}
	defer coord.Close()

	// Start the other workers.
	var record func(error) // notes the first failure of goroutine workers
	if c.Spawn != nil {
		ps, serr := spawn(ctx, cancel, c.Spawn, coord.Addr(), tok, c.Workers)
		if serr != nil {
			return nil, serr
		}
		defer func() {
			if err != nil {
				cancel() // kills the processes
			}
			// A process that failed on its own is the likely cause of
			// worker 0's error: report it first.
			if werr := ps.wait(); werr != nil {
				if err != nil {
					werr = fmt.Errorf("%w\n(worker 0: %w)", werr, err)
				}
				res, err = nil, werr
			}
		}()
	} else {
		// The first worker to fail is the likely cause of the others'
		// errors (broken connections).
		var first struct {
			sync.Mutex
			err error
		}
		record = func(err error) {
			first.Lock()
			if first.err == nil {
				first.err = err
			}
			first.Unlock()
			cancel()
		}
		var wg sync.WaitGroup
		for r := 1; r < c.Workers; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := runMember(ctx, coord.Addr(), r, tok, c.Timeout, c.Log); err != nil {
					record(err)
				}
			}()
		}
		defer func() {
			if err != nil {
				coord.Close()
			}
			wg.Wait()
			if first.err != nil {
				res, err = nil, first.err
			}
		}()
	}

	res, err = runZero(ctx, c, ds, coord, ringLn, record)
	if err != nil && record != nil {
		record(err)
	}
	return res, err
}

// runZero is worker 0 of a TCP run: it hands out the job, connects to the
// ring, trains and collects the other workers' status. If fail is not
// nil, it learns of a failure before the ring is closed.
func runZero(ctx context.Context, c *Config, ds *datasets, coord *coordinator, ringLn *net.TCPListener, fail func(error)) (res *Result, err error) {
	if err := coord.gather(ctx, c.Timeout); err != nil {
		return nil, err
	}
	if err := coord.start(*c, c.Timeout); err != nil {
		return nil, err
	}
	tr, err := connectRing(ctx, ringLn, coord.ring, 0, c.Timeout, coord.tok, c.Log)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	stop := context.AfterFunc(ctx, func() { tr.Close() })
	defer stop()
	defer func() {
		if err != nil && fail != nil {
			fail(err) // before the deferred Close breaks the ring
		}
	}()
	res, err = runRank(ctx, c, 0, tr, ds)
	if err != nil {
		return nil, err
	}
	if err := coord.finish(res.ParamsHash, !c.Independent, c.Timeout); err != nil {
		return nil, err
	}
	return res, nil
}

// runMember is worker rank > 0 of a TCP run: it joins the coordinator at
// addr with the run's token, receives the job, connects to its ring
// neighbours, trains and reports its status. It gives up when the
// coordinator's connection closes, after timeout without news, or when
// ctx is done. Stray connections to its ring listener are logged to log.
func runMember(ctx context.Context, addr string, rank int, tok token, timeout time.Duration, log io.Writer) (err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m, err := join(ctx, addr, rank, tok, timeout)
	if err != nil {
		return err
	}
	defer m.Close()
	c := m.job.Config
	// Report the outcome, then watch the coordinator: its closing the
	// connection (worker 0 failed or exited) ends this worker.
	var hash uint64
	defer func() {
		st := status{Hash: hash}
		if err != nil {
			st = status{Error: err.Error()}
		}
		m.conn.send(st, time.Now().Add(timeout))
	}()
	m.conn.c.SetReadDeadline(time.Time{})
	go func() {
		var b [1]byte
		m.conn.r.Read(b[:])
		cancel()
	}()
	if err := c.Validate(); err != nil {
		return fmt.Errorf("worker %d: job: %w", rank, err)
	}
	c = c.WithDefaults()
	ds, err := loadData(c.Data)
	if err != nil {
		return fmt.Errorf("worker %d: %w", rank, err)
	}
	tensor.SetThreads(c.Threads)
	tr, err := connectRing(ctx, m.ln, m.job.Ring, rank, c.Timeout, tok, log)
	if err != nil {
		return err
	}
	defer tr.Close()
	stop := context.AfterFunc(ctx, func() { tr.Close() })
	defer stop()
	res, err := runRank(ctx, &c, rank, tr, ds)
	if err != nil {
		return err
	}
	hash = res.ParamsHash
	return nil
}

// IsWorker reports whether this process was started by Run as a worker
// process (EnvCoordinator is set).
func IsWorker() bool { return os.Getenv(EnvCoordinator) != "" }

// RunWorker is the body of a worker process started by Run through Spawn:
// it reads EnvCoordinator, EnvRank and EnvToken, joins the run, trains its
// share and returns. Connections to its ring listener that are not from
// the run's workers are dropped, each with a line on log (nil:
// discarded). It returns an error if the variables are missing or
// malformed, or if the run fails; the coordinator learns of the failure
// too. A worker ends as soon as worker 0's process closes its connection
// or exits.
func RunWorker(ctx context.Context, log io.Writer) error {
	addr, rs := os.Getenv(EnvCoordinator), os.Getenv(EnvRank)
	rank, err := strconv.Atoi(rs)
	if addr == "" || err != nil || rank < 1 || rank >= maxWorkers {
		return fmt.Errorf("dist: worker needs %s=HOST:PORT and %s in [1, %d), got %q and %q", EnvCoordinator, EnvRank, maxWorkers, addr, rs)
	}
	tok, err := parseToken(os.Getenv(EnvToken))
	if err != nil {
		return fmt.Errorf("dist: worker needs the run's token in %s: %w", EnvToken, err)
	}
	if err := runMember(ctx, addr, rank, tok, DefaultTimeout, log); err != nil {
		return fmt.Errorf("dist: %w", err)
	}
	return nil
}
