package sim

import (
	"fmt"
	"math"

	"scaleplan/internal/units"
)

// EvalMetricBytes is the size of the metric an evaluation pass all-reduces
// at its end: two 8-byte counters, as NVIDIA's MLPerf ResNet-50
// all-reduces [correct-count, total-count] before it logs eval_stop
// (mlcommons/training_results_v3.0, NVIDIA/benchmarks/resnet/
// implementations/mxnet/common/fit.py, "acc = mpiwrapper.allreduce(acc)").
const EvalMetricBytes = 16 * units.Byte

// Evaluation is one pass over an evaluation set: forward-only steps of
// every replica at the evaluation batch, with no gradient exchange, then
// an all-reduce of the metric and the host's scoring.
type Evaluation struct {
	// Samples is the evaluation set, in the dataset's unit. Required, at
	// least 1.
	Samples int64
	// Batch is the per-device evaluation batch. Required, at least 1.
	Batch int
	// MetricBytes is the metric all-reduced at the end; default
	// EvalMetricBytes.
	MetricBytes units.Bytes
	// Scoring is the host's time to score the pass (COCO mAP, BLEU), after
	// the all-reduce. Default 0.
	Scoring units.Seconds
	// HostPerSample is each rank's host time per evaluation sample after
	// its forward passes, serial (the predictions converted to the
	// metric's format before training resumes). Default 0.
	HostPerSample units.Seconds
}

// EvalPassTime returns the time of one evaluation pass on the devices of
// c. Each of the R = Ranks/Stages replicas runs forward-only steps at the
// evaluation batch b, each costing the forward share of a training
// micro-batch's compute, f·(b·PerSample + Fixed), split over the S
// pipeline stages (the first step fills the pipeline), unless the node's
// input is slower: its P = DecodeParallelism() cores' worth of processes
// decode the D·b samples of its D devices at Decode each, and each device
// copies b·Copy bytes to itself, both overlapping the forward passes
// through the prefetch queue:
//
//	step = max(f·(b·PerSample + Fixed)/S, D·b·Decode/P, b·Copy/HostToDevice)
//	pass = (⌈Samples/(R·b)⌉ + S − 1) · step + ⌈Samples/R⌉ · HostPerSample
//	       + all-reduce(MetricBytes) + Scoring
//
// The all-reduce is c's own (a ring under a parameter server, which has
// no collective). c is the training configuration; its micro-batch and
// memory are not used, and storage reads are not counted (the evaluation
// set is small and read once per pass).
func EvalPassTime(c Config, e Evaluation) (units.Seconds, error) {
	if e.Samples < 1 || e.Batch < 1 || e.Batch > MaxBatch {
		return 0, fmt.Errorf("%w: evaluation of %d samples at batch %d; want at least 1 of each, batch at most %d", ErrConfig, e.Samples, e.Batch, MaxBatch)
	}
	if !nonNegative(float64(e.Scoring)) || !nonNegative(float64(e.HostPerSample)) || !nonNegativeB(e.MetricBytes) {
		return 0, fmt.Errorf("%w: evaluation scoring %v, host time per sample %v and metric bytes %v must be non-negative finite numbers",
			ErrConfig, float64(e.Scoring), float64(e.HostPerSample), float64(e.MetricBytes))
	}
	c.MicroBatch, c.Accumulation, c.Steps, c.TraceSteps = e.Batch, 1, 1, 0
	c.Memory = Memory{}
	if err := c.validate(); err != nil {
		return 0, err
	}
	S := c.Stages
	perStep := float64(e.Batch) * float64(c.Replicas())
	steps := math.Ceil(float64(e.Samples)/perStep) + float64(S-1)
	fwd := c.Compute.ForwardFraction * (float64(e.Batch)*float64(c.Compute.PerSample) + float64(c.Compute.Fixed)) / float64(S)
	step := max(fwd, evalInputStep(&c, e.Batch))
	share := math.Ceil(float64(e.Samples) / float64(c.Replicas()))
	t := units.Seconds(steps*step+share*float64(e.HostPerSample)) + e.Scoring
	if c.Ranks() > 1 {
		if c.Comm.Algorithm == ParameterServer || c.Comm.Algorithm == AsyncParameterServer {
			c.Comm.Algorithm = Ring
		}
		size := e.MetricBytes
		if size == 0 {
			size = EvalMetricBytes
		}
		ar, err := AllReduceTime(c, size)
		if err != nil {
			return 0, err
		}
		t += ar
	}
	return t, nil
}

// evalInputStep returns the host's time to decode one evaluation step's
// samples on a node and a device's time to copy its batch, the larger.
func evalInputStep(c *Config, batch int) float64 {
	in := &c.Input
	var decode, copyT float64
	if p := in.DecodeParallelism(); in.Decode > 0 && p > 0 {
		decode = float64(c.DevicesPerNode) * float64(batch) * float64(in.Decode) / p
	}
	if in.Copy > 0 && in.HostToDevice > 0 {
		copyT = float64(batch) * float64(in.Copy) / float64(in.HostToDevice)
	}
	return max(decode, copyT)
}
