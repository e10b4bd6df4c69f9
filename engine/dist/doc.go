// Package dist trains scaleplan's reference networks with synchronous data
// parallelism: W workers, each a replica of the network in its own
// goroutine or process, average their gradients with a ring all-reduce
// every step and apply the same update, so that the replicas stay
// bit-identical. It also measures what a step costs and writes the
// measurements as bench log records (internal/benchlog) for fit.
//
// # Training step
//
// Each optimizer step processes a global batch of
//
//	B = W · M · b
//
// samples: every worker takes its contiguous shard of M·b samples of the
// global batch (data.Sampler with DropLast), runs forward and backward on
// M micro-batches of b samples (gradient accumulation: the gradients add
// up in nn.Network.Grads), all-reduces the gradient and applies the
// optimizer. Each micro-batch's loss gradient is its share of the mean
// over the global batch (nn.CrossEntropy.MeanOver = B), so the all-reduce
// only sums, and the update uses the mean gradient over the global batch,
// as serial training on batch B does;
// tests check that W = 1, 2 and 4 workers (and M = 2) give the weights of
// serial training to 1e-5 after 20 steps. A micro-batch of a
// convolutional network runs in chunks of at most Config.Chunk samples
// (32 for the small CNN by default), one after another, so that the
// activations passed between its layers stay in the cache; the chunks'
// gradients add up to the micro-batch's, and the same tests train in
// chunks too. The update runs in parallel
// over pieces of the parameters, each with its own optimizer instance,
// which gives the bits of one optimizer over all of them.
//
// # Ring all-reduce
//
// AllReduce runs on a ring of W ranks, each sending to the next and
// receiving from the previous. The buffer of n values is cut into W
// chunks; a reduce-scatter of W−1 steps leaves each rank with the sum of
// one chunk, which it scales, and an all-gather of W−1 steps passes the
// finished chunks round the ring. Each rank sends
//
//	2(W−1)/W · n values in 2(W−1) messages,
//
// the bandwidth-optimal volume; on a network with latency α and
// bandwidth β per link the time is 2(W−1)·α + 2(W−1)/W · 4n/β.
//
// # Buckets and overlap
//
// The gradient is all-reduced in buckets of Config.BucketBytes (default
// 1 MiB), counted from the end of Grads: backward finishes the last layers
// first (nn.Network.GradReady reports each finished range), so with
// Config.Overlap a goroutine per worker starts a bucket's all-reduce as
// soon as backward has passed it, while backward continues on the
// earlier layers. The step then waits only for what is left. Phases
// reports both the time the all-reduces were in flight (AllReduce) and
// the part not hidden behind backward (Wait).
//
// # Determinism
//
// The same configuration (seed, worker count, bucket size, threads) gives
// bit-identical weights on every run, over either transport, with or
// without overlap, and whether the workers are goroutines or processes.
// Everything that could vary is fixed: the initial weights come from a
// PCG stream of the seed; each epoch's order is a pure function of the
// seed and the epoch (data.Sampler); the layers' reductions use fixed
// chunks (tensor.Parallel); and the all-reduce sums each value in ring
// order, as the left fold
//
//	(((g_c + g_{c+1}) + g_{c+2}) + ...) + g_{c−1}
//
// over the ranks from c, the index of the value's chunk, after which every
// rank holds the owner's bits. Run checks at the end that every replica's
// parameters hash alike (FNV-1a). Results differ in the last bits between
// worker counts, since the order of summation differs, and under the
// OpenBLAS backend between thread counts (see engine/tensor).
//
// The engine reads the clock only to time steps and to bound waits.
//
// # Transports
//
// A Transport connects a rank to its ring neighbours with one operation,
// SendRecv. Two are provided:
//
//   - inproc: the workers are goroutines of one process; a message is the
//     sender's own slice, handed over a channel, combined by the receiver
//     and acknowledged, so nothing is copied twice.
//   - tcp: loopback TCP connections on 127.0.0.1 with ephemeral ports; a
//     message is an 8-byte header (sequence number, length) followed by
//     the values as little-endian float32, written and read in place.
//     Every read and write has a deadline (Config.Timeout).
//
// Config.Independent gives each in-process worker a ring of its own, so
// that W workers train W replicas at once and exchange nothing: the
// compute of W workers on shared cores, without their communication, which
// is how scaleplan's validate --engine calibrates a worker on a loaded
// machine. Their measurements are logged with transport "none".
// Config.InStep keeps such workers in step: once a step, where exchanging
// workers all-reduce their gradient, they all-reduce one value over a
// ring they share (in-process or TCP), so that each step waits for the
// slowest and workers that share cores take turns on them as exchanging
// workers do; the records add the label in_step, the transport they met
// over.
//
// With Transport "tcp", Run sets the ring up through a rendezvous: worker
// 0 listens on a coordinator port; the other workers connect, say their
// rank and their own ring port, and receive the job (the Config as JSON)
// and every worker's address; each then dials its successor and accepts
// its predecessor, and after training reports its status and parameter
// hash. The other workers are goroutines of this process, or, with
// Config.Spawn, processes: Run starts W−1 copies of a program (by default
// this one, os.Executable) with EnvCoordinator, EnvRank and EnvToken set,
// and the program calls RunWorker. The environment is passed on
// (OPENBLAS_CORETYPE included).
//
// The rendezvous listens on 127.0.0.1 only, and every greeting, the
// coordinator's JSON hello and the ring's binary one, carries the run's
// token: 32 bytes from crypto/rand that Run draws for each run and hands
// to worker processes in their environment (EnvToken), which only their
// user and root can read (/proc/PID/environ), never on their command
// line, which ps shows to everyone. Tokens are compared in constant time.
// The coordinator sends the job only to a connection that presented the
// token. A connection that sends garbage or a wrong token, sends nothing
// within a few seconds, or closes early is dropped with one line on
// Config.Log, and the rendezvous keeps waiting for the workers until
// Config.Timeout: a stray connection cannot pose as a worker, read the
// job, or abort the run.
//
// On Linux, when every worker is single-threaded (Config.Threads 1) and
// there are at least as many CPUs as workers, each worker runs on a
// locked OS thread bound to its own CPU (the rank-th of the process's),
// whatever the transport, as MPI and PyTorch launchers bind ranks to
// cores; binding is best effort and ends with the worker. While such
// workers run, GOMAXPROCS is at least twice their number in the process,
// so that each worker's loader and all-reduce goroutines have a P of
// their own rather than waiting for the scheduler to preempt a worker.
//
// A run cannot hang: every wait is bounded by Config.Timeout; a worker
// that fails aborts the ring, so the others fail at once; a process that
// exits early ends the run with its exit status and the end of its
// output; the processes are killed when Run returns with an error or its
// context is done, on Linux when this process dies (Pdeathsig), and in any
// case when their coordinator connection closes.
//
// # Measurements
//
// Measure runs warm-up and timed steps and summarises the timed ones
// (mean and standard deviation of the step time, samples per second,
// mean phases). SearchLR finds, per global batch, the learning rate that
// reaches a target accuracy in the fewest steps (Shallue et al. 2019),
// evaluating every Eval.Every steps (growing with Eval.Growth);
// StepsSearch plans and runs that search over a list of global batches
// (`scaleplan bench steps`), and Training trains a configuration to a
// target accuracy evaluating every epoch (`scaleplan bench train`). All
// return bench log records; `scaleplan bench` writes them and
// docs/bench.md lists measurements. MeasureLink times one ring step of
// a transport at two message sizes and fits a latency and a bandwidth to
// them, the simulator's model of a link; with LinkProbe.Evict every step
// finds its buffers out of the cache, as an all-reduce does after
// backward (docs/validation.md).
//
// # Errors
//
// Run returns errors for bad configurations (Validate lists every
// problem), unreadable data, failed workers and timeouts; programmer
// errors panic with messages starting "dist: ".
package dist
