package dist

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"time"

	"scaleplan/engine/data"
	"scaleplan/engine/nn"
	"scaleplan/engine/optim"
)

// Panic messages for programmer errors.
const (
	badSelfSend = "dist: SendRecv on a ring of one rank"
	badBackward = "dist: backward did not report every bucket"
	badConfig   = "dist: invalid configuration: "
)

// Models lists the networks Config.Model accepts.
var Models = []string{"mlp", "cnn"}

// Transports lists the values Config.Transport accepts.
var Transports = []string{"inproc", "tcp"}

// Defaults of Config fields whose zero value is not usable.
const (
	DefaultBucketBytes = 1 << 20         // 1 MiB, 262,144 float32 values
	DefaultTimeout     = 2 * time.Minute // longest wait for a peer
	DefaultEvalBatch   = 500             // samples per evaluation forward pass
	DefaultLR          = 0.05            // base learning rate when Schedule.Base is 0
	// Limits that keep a mistyped configuration from exhausting memory:
	// a CNN replica needs about 2 MB per sample of its micro-batch.
	maxWorkers = 64               // workers
	maxBatch   = 8192             // per-worker micro-batch, samples
	maxHidden  = 8192             // MLP hidden width
	maxSteps   = 1 << 30          // optimizer steps
	maxEpochs  = 1e6              // epochs
	minTimeout = time.Millisecond // shortest usable timeout
)

// Config describes one data-parallel training run: the network, the
// data, the optimizer and how the W workers exchange gradients. Its zero
// value is not usable: Batch and Steps (or Epochs) must be set. Config
// is sent as JSON to worker processes, so every field that matters is
// exported and serialisable.
type Config struct {
	// Model is the network, one of Models: "mlp" (Hidden layers,
	// default the reference 784-1024-1024-10) or "cnn" (nn.SmallCNN).
	// Default "mlp".
	Model string `json:"model"`

	// Hidden are the hidden layer widths of the MLP; default 1024, 1024.
	// Ignored for the CNN.
	Hidden []int `json:"hidden,omitempty"`

	// Data says where the samples come from; default synthetic data
	// (data.DefaultSynthetic).
	Data Data `json:"data"`

	// Workers is the number of data-parallel workers W; default 1.
	Workers int `json:"workers"`

	// Batch is the per-worker micro-batch b in samples; no default. A
	// step processes the global batch B = W·Accumulate·b.
	Batch int `json:"batch"`

	// Accumulate is the number M of micro-batches whose gradients each
	// worker adds up before the all-reduce (gradient accumulation);
	// default 1.
	Accumulate int `json:"accumulate"`

	// Chunk is the most samples a worker runs forward and backward at
	// once. A larger micro-batch runs in ceil(b/Chunk) chunks of nearly
	// equal size, one after another, whose gradients add up to the
	// micro-batch's (the same step, to rounding), so that the
	// activations passed from layer to layer stay in the cache rather
	// than go to memory and back. Default 0: for a network with a
	// convolution, the most samples whose layer outputs fit in
	// DefaultChunkBytes, rounded down to a power of two (32 for the small
	// CNN), and whole micro-batches for a network of dense layers;
	// negative: every micro-batch whole. A network with batch
	// normalization, whose statistics are over the micro-batch, always
	// runs it whole.
	Chunk int `json:"chunk,omitempty"`

	// Steps is the number of optimizer steps to run; default
	// round(Epochs · batches per epoch).
	Steps int `json:"steps"`

	// Epochs is the training length in passes over the training set,
	// used when Steps is 0; default 0.
	Epochs float64 `json:"epochs,omitempty"`

	// Seed seeds the initial weights and the shuffling; default 0.
	Seed uint64 `json:"seed"`

	// Optimizer is the optimizer; default optim.Defaults("sgd")
	// (momentum 0.9, weight decay 1e-4).
	Optimizer optim.Settings `json:"optimizer"`

	// Schedule is the learning-rate schedule, lengths in epochs; default
	// constant at DefaultLR. A zero Base is DefaultLR.
	Schedule optim.ScheduleSettings `json:"schedule"`

	// Smoothing is the label smoothing ε of the cross-entropy loss, in
	// [0, 1); default 0.
	Smoothing float64 `json:"smoothing,omitempty"`

	// Eval says when to measure accuracy on the held-out set; default
	// never.
	Eval Eval `json:"eval"`

	// Transport is how workers exchange gradients, one of Transports:
	// "inproc" (goroutines of this process, slices handed over through
	// channels) or "tcp" (loopback TCP connections, between goroutines of
	// this process, or between processes if Spawn is set). Default
	// "inproc".
	Transport string `json:"transport"`

	// Independent makes the workers exchange nothing: each trains its
	// own replica on its shard of every global batch, with no all-reduce,
	// as W copies of a one-worker run at once (bound to cores as the
	// workers of an exchanging run are). It is for measuring throughput
	// (Measure): the compute of W workers on the cores they share,
	// without their communication. The replicas drift apart, so it is not
	// for training. It needs Transport "inproc". Default false.
	Independent bool `json:"independent,omitempty"`

	// InStep keeps Independent workers in step: where workers that
	// exchange their gradient all-reduce it, each all-reduces one value
	// over the Transport's ring shared by all of them, so that every step
	// waits for the slowest worker and workers that share cores take
	// turns on them step by step, as exchanging workers do; they
	// exchange nothing else. It needs Independent; with it, Transport may
	// be "tcp". Default false (each worker on a ring of its own, in
	// this process).
	InStep bool `json:"in_step,omitempty"`

	// BucketBytes is the size of a gradient bucket in bytes (4 per
	// value); default DefaultBucketBytes. The gradient is all-reduced
	// bucket by bucket, from its end.
	BucketBytes int `json:"bucket_bytes"`

	// Overlap starts each bucket's all-reduce during backward, as soon as
	// the layers behind it have finished (nn.Network.GradReady); default
	// false (all-reduce after backward). Results are bit-identical
	// either way.
	Overlap bool `json:"overlap"`

	// Threads is the number of goroutines each worker's tensor
	// operations use (tensor.SetThreads); default max(1, NumCPU/W). The
	// same value is used in every process, so that results do not depend
	// on where the workers run.
	Threads int `json:"threads"`

	// Prefetch is the number of batches each worker's loader prepares
	// ahead (data.LoaderConfig.Prefetch); default 0.
	Prefetch int `json:"prefetch"`

	// Timeout bounds every wait for another worker (a TCP message, a
	// worker process joining); default DefaultTimeout.
	Timeout time.Duration `json:"timeout"`

	// Spawn, if set with Transport "tcp", runs workers 1 to W−1 as
	// processes; worker 0 runs in the calling process. Default nil:
	// every worker is a goroutine of this process.
	Spawn *Spawn `json:"-"`

	// Log, if set, receives one line for each connection that a TCP
	// run's rendezvous drops because it did not greet as a worker of the
	// run (garbage, a wrong token, nothing within a few seconds, an early
	// close). Default nil: discarded. Worker processes write theirs to
	// their standard error (see RunWorker).
	Log io.Writer `json:"-"`

	// Progress, if set, is called on worker 0 after every step. Default
	// nil.
	Progress func(StepStats) `json:"-"`

	// EvalProgress, if set, is called on worker 0 after every
	// evaluation. Default nil.
	EvalProgress func(EvalResult) `json:"-"`
}

// Data says where the training and evaluation samples come from.
type Data struct {
	// Dir is a directory with an MNIST-shaped IDX data set (data.Load),
	// such as data.FashionMNISTDir; default "": synthetic data.
	Dir string `json:"dir,omitempty"`

	// Synthetic configures the synthetic data set used when Dir is "";
	// a zero value is data.DefaultSynthetic().
	Synthetic data.SyntheticConfig `json:"synthetic"`

	// Validation, if positive, holds out the last Validation training
	// samples as the evaluation set (and trains on the others); default
	// 0: evaluate on the test set.
	Validation int `json:"validation,omitempty"`
}

// Eval says when a run measures accuracy on the held-out set. Each
// worker evaluates a contiguous W-th of the set; the counts are summed
// by an all-reduce, so every worker sees the same accuracy and takes the
// same decision.
type Eval struct {
	// Every is the evaluation period in steps; default 0: never. The last
	// step is always evaluated when Every > 0.
	Every int `json:"every,omitempty"`

	// Growth makes the period grow with the step count: after an
	// evaluation at step s the next is at
	//
	//	max(s + Every, ⌈s·(1 + Growth)⌉)
	//
	// so that the step count at which a target is first seen is known to
	// a relative precision of about Growth at any length of run. Default
	// 0: a fixed period.
	Growth float64 `json:"growth,omitempty"`

	// Target is the accuracy, a fraction in (0, 1], whose first crossing
	// Result.StepsToTarget reports; default 0: none.
	Target float64 `json:"target,omitempty"`

	// Stop ends the run at the first evaluation that reaches Target, or
	// finds the training loss not finite (diverged); default false.
	Stop bool `json:"stop,omitempty"`

	// Batch is the number of samples per evaluation forward pass; default
	// DefaultEvalBatch.
	Batch int `json:"batch,omitempty"`
}

// Spawn says how to start the worker processes of a run. Each is started
// as Path Args..., with the environment of this process plus Env and the
// variables EnvCoordinator, EnvRank and EnvToken (the run's secret,
// passed in the environment rather than on the command line, which other
// users can read); the program must call RunWorker when it sees them
// (IsWorker).
type Spawn struct {
	// Path is the executable; default os.Executable(), this program.
	Path string
	// Args are the arguments that make the program call RunWorker, such
	// as {"bench", "worker"}; default none.
	Args []string
	// Env are extra environment variables, "KEY=value"; default none.
	Env []string
	// Stderr receives the workers' standard error and output, each line
	// prefixed with "worker R: "; default: discarded (the end of it is
	// quoted in errors).
	Stderr io.Writer
}

// WithDefaults returns c with the defaults of its zero fields filled in,
// as Run uses it.
func (c Config) WithDefaults() Config {
	if c.Model == "" {
		c.Model = "mlp"
	}
	if c.Model == "mlp" && len(c.Hidden) == 0 {
		c.Hidden = []int{1024, 1024}
	}
	if c.Data.Dir == "" && c.Data.Synthetic == (data.SyntheticConfig{}) {
		c.Data.Synthetic = data.DefaultSynthetic()
	}
	if c.Workers == 0 {
		c.Workers = 1
	}
	if c.Accumulate == 0 {
		c.Accumulate = 1
	}
	if c.Optimizer.Kind == "" {
		c.Optimizer, _ = optim.Defaults("sgd")
	}
	if c.Schedule.Kind == "" {
		c.Schedule.Kind = "constant"
	}
	if c.Schedule.Base == 0 {
		c.Schedule.Base = DefaultLR
	}
	if c.Eval.Batch == 0 {
		c.Eval.Batch = DefaultEvalBatch
	}
	if c.Transport == "" {
		c.Transport = "inproc"
	}
	if c.BucketBytes == 0 {
		c.BucketBytes = DefaultBucketBytes
	}
	if c.Threads == 0 && c.Workers > 0 {
		c.Threads = Threads(runtime.NumCPU(), c.Workers)
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	return c
}

// Validate reports every problem of c (after defaults) at once, or nil.
func (c Config) Validate() error {
	c = c.WithDefaults()
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !slices.Contains(Models, c.Model) {
		bad("unknown model %q (valid: %s)", c.Model, strings.Join(Models, ", "))
	}
	for _, h := range c.Hidden {
		if h < 1 || h > maxHidden {
			bad("hidden width %d not in [1, %d]", h, maxHidden)
		}
	}
	if c.Workers < 1 || c.Workers > maxWorkers {
		bad("workers %d not in [1, %d]", c.Workers, maxWorkers)
	}
	if c.Batch < 1 || c.Batch > maxBatch {
		bad("batch %d not in [1, %d]", c.Batch, maxBatch)
	}
	if c.Accumulate < 1 || c.Accumulate > maxSteps {
		bad("accumulate %d not in [1, %d]", c.Accumulate, maxSteps)
	}
	if c.Chunk > maxBatch {
		bad("chunk %d above %d", c.Chunk, maxBatch)
	}
	switch {
	case c.Steps < 0 || c.Steps > maxSteps:
		bad("steps %d not in [1, %d]", c.Steps, maxSteps)
	case c.Steps == 0 && c.Epochs == 0:
		bad("neither steps nor epochs set")
	case c.Steps == 0 && !(c.Epochs > 0 && c.Epochs <= maxEpochs):
		bad("epochs %g not in (0, %g]", c.Epochs, maxEpochs)
	}
	if _, err := optim.New(c.Optimizer); err != nil {
		bad("optimizer: %w", err)
	}
	if _, err := optim.NewSchedule(c.Schedule, 1000); err != nil {
		bad("schedule: %w", err)
	}
	if !(c.Smoothing >= 0 && c.Smoothing < 1) {
		bad("label smoothing %g not in [0, 1)", c.Smoothing)
	}
	if c.Eval.Every < 0 {
		bad("evaluation period %d steps negative", c.Eval.Every)
	}
	if !(c.Eval.Growth >= 0 && c.Eval.Growth <= 10) {
		bad("evaluation growth %g not in [0, 10]", c.Eval.Growth)
	}
	if !(c.Eval.Target >= 0 && c.Eval.Target <= 1) {
		bad("target accuracy %g not in [0, 1]", c.Eval.Target)
	}
	if c.Eval.Batch < 1 || c.Eval.Batch > maxBatch {
		bad("evaluation batch %d not in [1, %d]", c.Eval.Batch, maxBatch)
	}
	if c.Data.Dir == "" {
		if err := c.Data.Synthetic.Validate(); err != nil {
			bad("%w", err)
		}
	}
	if c.Data.Validation < 0 {
		bad("validation samples %d negative", c.Data.Validation)
	}
	if !slices.Contains(Transports, c.Transport) {
		bad("unknown transport %q (valid: %s)", c.Transport, strings.Join(Transports, ", "))
	}
	if c.Independent && !c.InStep && c.Transport != "inproc" {
		bad("independent workers run in this process: transport inproc, not %q (or in step, over any)", c.Transport)
	}
	if c.InStep && !c.Independent {
		bad("in step applies to independent workers; exchanging workers are in step already")
	}
	if c.Spawn != nil && c.Transport != "tcp" {
		bad("worker processes need transport tcp, not %q", c.Transport)
	}
	if c.BucketBytes < 4 {
		bad("bucket size %d bytes below one value (4 bytes)", c.BucketBytes)
	}
	if c.Threads < 1 || c.Threads > 4096 {
		bad("threads %d not in [1, 4096]", c.Threads)
	}
	if c.Prefetch < 0 || c.Prefetch > 1024 {
		bad("prefetch %d not in [0, 1024]", c.Prefetch)
	}
	if c.Timeout < minTimeout {
		bad("timeout %v below %v", c.Timeout, minTimeout)
	}
	return errors.Join(errs...)
}

// GlobalBatch returns the samples per optimizer step, W·M·b.
func (c Config) GlobalBatch() int {
	c = c.WithDefaults()
	return c.Workers * c.Accumulate * c.Batch
}

// build returns the network c describes, initialised from seed.
func (c *Config) build() *nn.Network {
	rng := rand.New(rand.NewPCG(c.Seed, keyInit))
	switch c.Model {
	case "cnn":
		return nn.SmallCNN(rng)
	case "mlp":
		sizes := append(append([]int{784}, c.Hidden...), 10)
		return nn.MLP(rng, sizes...)
	}
	panic(badConfig + "model " + c.Model)
}

// Key separating the weight-initialisation stream from others drawn from
// the same seed.
const keyInit = 0x5d1b3a7f09c4e628

// finite reports whether x is neither NaN nor infinite.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Threads is the number of cores each of w workers computes on when they
// share cores alike: max(1, cores/w), Config's default.
func Threads(cores, w int) int { return max(1, cores/w) }

// checkSearch returns an error, naming what, unless e evaluates
// periodically against a target accuracy in (0, 1]: what a search of
// steps to target needs.
func (e Eval) checkSearch(what string) error {
	if e.Every < 1 || !(e.Target > 0 && e.Target <= 1) {
		return fmt.Errorf("dist: %s needs an evaluation period (%d steps) and a target accuracy (%g) in (0, 1]", what, e.Every, e.Target)
	}
	return nil
}
