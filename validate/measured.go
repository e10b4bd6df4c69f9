package validate

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"scaleplan/compute"
	"scaleplan/hw"
	"scaleplan/internal/calib"
	"scaleplan/internal/config"
	"scaleplan/internal/units"
	"scaleplan/model"
	"scaleplan/predict"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// Measured is one measurement of data-parallel training, as a log that
// fit reads records it (scaleplan bench, engine/torchbench, Horovod,
// torchvision, ...): the throughput at one per-device batch, or the batch
// at which the device ran out of memory.
type Measured struct {
	// Host is the host costs of the machine that measured (a table of
	// scripts/torchhost.py's, compute.ReadHostTable), which the operator
	// model charges its eager PyTorch steps. nil: compute.MeasuredHost and
	// the published figures.
	Host *compute.HostCosts
	// TimerEvents is the CUDA timing events the measuring program
	// recorded each step (TorchbenchTimerEvents for engine/torchbench on
	// CUDA; compute.Config.TimerEvents), charged where Host measured an
	// event's cost. Default 0.
	TimerEvents int
	// Device is the device as the log names it: a catalogue key or one of
	// a device's names (its CUDA name, hw.Device.Is). Required.
	Device string
	// Model is a model profile's name. Required.
	Model string
	// Precision is the precision trained at: fp32, tf32, fp16, bf16, or
	// the mixed precisions amp-fp16 (or amp) and amp-bf16, which store
	// and compute in fp16 or bf16 with fp32 master weights. Required.
	Precision string
	// Batch is the per-device batch in the log's samples. Required,
	// positive.
	Batch int
	// Devices is the number of devices the throughput was measured over,
	// each a data-parallel replica. Default 1.
	Devices int
	// Nodes is the number of nodes of System the Devices were spread
	// over, as many on each. Default 0: whole nodes of System (part of
	// one when fewer).
	Nodes int
	// System is the catalogue's system the devices were in: it gives the
	// node's links between them and the fabric between its nodes, and the
	// host that decoded the input (DecodeWorkers). Required when Devices
	// is more than 1 or DecodeWorkers is set; not used otherwise.
	System string
	// Transport and IntraTransport are the transports of System that
	// carried the gradients between nodes and inside a node, as a
	// scenario's parallelism.transport and intra_transport name them.
	// Default "": those a scenario on the system takes by default.
	Transport, IntraTransport string
	// NCCLP2PDisable says the devices ran with NCCL_P2P_DISABLE=1 (a CSV's
	// nccl_p2p_disable column, 1): they exchanged through host memory
	// (scenarios.Parallelism.NCCLP2PDisable). Default false.
	NCCLP2PDisable bool
	// FusedAttention says attention ran as one fused kernel that keeps no
	// s² scores (a record's attention label, sdpa: PyTorch's
	// scaled_dot_product_attention), whatever the model's transformer
	// shape says (compute.Config.FusedAttention). Default false: the
	// shape's.
	FusedAttention bool
	// MaskRoIs is the positive RoIs of one image Mask R-CNN's mask head
	// ran on (a record's positive_rois label); 0: the generator's
	// default (model.Shape.MaskRoIs).
	MaskRoIs int
	// Accumulation is the number of micro-batches of Batch per optimizer
	// step (gradient accumulation). Default 1.
	Accumulation int
	// SampleScale is the number of the profile's samples in one of the
	// log's (a sentence pair of 128 source and 128 target tokens is 128
	// of transformer-base's token pairs). Default 1.
	SampleScale float64
	// SeqLen is the tokens of each sample of a model profiled per
	// sequence (a CSV's seq_len column: BERT pre-trained on 128 or 512
	// tokens, fine-tuned on 384), which its operators are listed at.
	// Default 0: the profile's dataset's sequence length.
	SeqLen int
	// WorkShare is the share of a sample padded to SeqLen that one of the
	// log's samples costs, where the program pads less (a CSV's
	// work_share column: sequence binning, each batch padded to its
	// longest sequence only). The prediction, of padded samples, is
	// divided by it. Default 0: 1, every sample padded.
	WorkShare float64
	// Optimizer is the training algorithm, for the update time and the
	// optimizer state. Default model.Momentum.
	Optimizer model.Optimizer
	// AMP is how a PyTorch row of a mixed precision ran it (a CSV's amp
	// column): AMPApexO2, or "" for PyTorch's autocast (AMPAutocast).
	AMP string
	// ClipNorm says the program clipped the gradients' global norm each
	// step, reading it on the host (a CSV's clip column, ClipGlobalNorm;
	// compute.Config.ClipNorm).
	ClipNorm bool
	// Trainer is the training program whose step the prediction adds
	// beyond the operators, the optimizer and the exchange (a CSV's
	// trainer column): TrainerDLEFairseq, or "" for none (fairseqStep).
	Trainer string
	// ZeroGrad says the program zeroed its gradients after each step
	// rather than freeing them, so that the backward pass added into them
	// (a CSV's zero_grad column, ZeroGradZero; compute.Config.ZeroGrad).
	ZeroGrad bool
	// Loader is the program's input loader where its step waits for it (a
	// CSV's loader column): LoaderHybrid, or "" for a loader outside the
	// training process or synthetic input.
	Loader string
	// FuseBNReLU says the program runs each batch norm with the ReLU and
	// residual add after it as one kernel (a CSV's fuse column,
	// FuseBNReLU; compute.Config.FuseBNReLU).
	FuseBNReLU bool
	// StepsCounted and StepsTimed are the optimizer steps the log's
	// throughput counts and the steps its timed region ran, where they
	// differ (CSV columns steps_counted and steps_timed): the prediction
	// is multiplied by StepsCounted/StepsTimed. Default 0: the same.
	StepsCounted, StepsTimed int
	// SamplesPerSec is the measured throughput in the log's samples, over
	// all Devices; 0 for an out-of-memory record.
	SamplesPerSec float64
	// PeakMemory is the measured peak of device memory; 0 when not
	// measured.
	PeakMemory units.Bytes
	// OOM marks a record of a batch that ran out of device memory.
	OOM bool
	// Variant says how the model was run beyond its precision, as the
	// log's labels say (calib.RunVariant: "channels_last compile"); ""
	// for the framework's defaults. Measurements of another variant are a
	// group of their own; the prediction does not depend on it, since the
	// catalogue's efficiencies do not model memory formats or compilers.
	Variant string
	// Framework is the framework the log's header names, such as
	// "torch 2.11.0+cu130", or a CSV row's framework column ("torch",
	// "tensorflow", "mxnet"); "" when it does not say. PyTorch keeps
	// activations channels-first unless Variant says channels_last
	// (measuredNCHW).
	Framework string
	// Mode is the framework mode the row's source states it ran in (a
	// CSV's mode column: eager, cuda-graphs or compiled); "" takes it from
	// Variant and Framework (measuredMode).
	Mode compute.Mode
	// DecodeWorkers is the number of processes per device that decoded
	// and augmented the input on the host's cores, as the run's data
	// loader was configured (PyTorch's DataLoader num_workers; a CSV's
	// decode_workers column). The prediction then decodes the model's
	// dataset on System's node (measuredInput). Default 0: the input is
	// not modelled (synthetic data, decoding on the device, or not
	// known).
	DecodeWorkers int
	// Source says where the record is (file:line); free text.
	Source string
}

// MeasuredRow is one measurement against the prediction from the
// catalogue alone.
type MeasuredRow struct {
	Measured
	// Predicted is the simulated samples/s in the log's samples, with
	// compute from the operator model or the roofline (no calibration); 0
	// for an out-of-memory record.
	Predicted float64
	// ByOperators marks a prediction whose compute came from the operator
	// model (package compute) rather than the roofline or a calibration.
	ByOperators bool
	// Operators says where the operator model's figures came from when a
	// calibration's operators entry gave them: "fitted on H200" (the
	// row's own device kind; Fitted when the entry's source names the
	// row's log) or "carried from H200" (another device's efficiencies on
	// this device's peaks, bandwidth and SMs); "" for the published
	// constants.
	Operators string
	// Footprint is the memory the simulator gives one device at the batch
	// (sim.Config.PeakFootprint).
	Footprint units.Bytes
	// Exchange names the transports the prediction's gradient exchange
	// used on System ("nccl", "nccl, verbs"); "" for one device.
	Exchange string
	// Calibration names the calibration file whose measured law the
	// prediction computed by (CompareCalibrated), and the entry's source;
	// "" for the roofline.
	Calibration string
	// Fitted marks a row that the calibration's law was fitted to, as far
	// as the calibration says (calibratedBy): its prediction is not one,
	// and the errors leave it out.
	Fitted bool
	// MeasuredScaling and PredictedScaling are the scaling efficiency of
	// a row of several devices against one device: its samples/s over
	// Devices times those of a row of one device of the same kind, model,
	// precision, variant, batch and accumulation, as measured and as
	// predicted. NaN for a row of one device, one that ran out of memory,
	// or one the report has no such row of one device for.
	MeasuredScaling, PredictedScaling float64
}

// Error returns (Predicted − SamplesPerSec)/SamplesPerSec, NaN for an
// out-of-memory record.
func (r *MeasuredRow) Error() float64 {
	if r.OOM || !(r.SamplesPerSec > 0) {
		return math.NaN()
	}
	return (r.Predicted - r.SamplesPerSec) / r.SamplesPerSec
}

// MeasuredGroup gathers the rows of one device, model, precision,
// variant, device count and system.
type MeasuredGroup struct {
	Device    string // the catalogue's key of the device
	Model     string
	Precision string // as the log gives it
	Variant   string // Measured.Variant
	Devices   int    // Measured.Devices, at least 1
	System    string // the catalogue's key of Measured.System; "" for one device
	Rows      []MeasuredRow

	// MAE is the mean of |MeasuredRow.Error| over the rows that ran and
	// were not fitted.
	MAE float64
	// LargestError is MeasuredRow.Error at LargestRun, where the device
	// is busiest and the fixed costs of a step weigh least; NaN when no
	// batch ran or the row there was fitted.
	LargestError float64
	// LargestRun is the largest batch that ran; 0 when none did.
	LargestRun int
	// FirstOOM is the smallest batch that ran out of memory; 0 when none
	// did.
	FirstOOM int
	// PredictedMax is the largest batch, in the log's samples, that the
	// simulator's memory model fits on the device; −1 when nothing bounds
	// it (the device gives no memory size).
	PredictedMax int
}

// MemoryAgrees reports whether the predicted largest batch is within one
// power-of-two step of the measured limit, which lies between LargestRun
// and FirstOOM: LargestRun/2 ≤ PredictedMax < 2·FirstOOM (without an
// out-of-memory record, only the lower bound). It is false when no batch
// ran or nothing bounds the prediction.
func (g *MeasuredGroup) MemoryAgrees() bool {
	if g.LargestRun == 0 || g.PredictedMax < 0 {
		return false
	}
	if 2*g.PredictedMax < g.LargestRun {
		return false
	}
	return g.FirstOOM == 0 || g.PredictedMax < 2*g.FirstOOM
}

// MeasuredReport is CompareMeasured's result.
type MeasuredReport struct {
	Groups []MeasuredGroup // by device, model, precision, variant, then devices and system
	// MAE is the mean of |MeasuredRow.Error| over every row that ran and
	// was not fitted, and Interval their ErrorInterval: the 10th and the
	// 90th percentile of MeasuredRow.Error (NaN, NaN under
	// IntervalMinRows rows).
	MAE      float64
	Interval [2]float64
	// Rows counts the rows that ran and were not fitted: the predictions.
	Rows int
	// Fitted counts the rows that ran and that a calibration was fitted
	// to (MeasuredRow.Fitted).
	Fitted int
	// ScalingRows counts the rows with a scaling efficiency
	// (MeasuredRow.MeasuredScaling not NaN), and ScalingError is the mean
	// of |PredictedScaling − MeasuredScaling| over them (NaN when none):
	// the error of the predicted loss to the exchange, whatever the error
	// of the compute that both rows share.
	ScalingRows  int
	ScalingError float64
	// CalibrationsUsed says, for each calibration file given to
	// CompareCalibrated, whether its law computed a measurement.
	CalibrationsUsed []bool
	// Ratios compares the kinds of device the report measured, one
	// configuration at a time (deviceRatios); RatioError is the mean of
	// |DeviceRatio.Error| over them, NaN when there are none.
	Ratios     []DeviceRatio
	RatioError float64
	// Sources gives the errors of each source file's predictions
	// (sourceErrors), in the order of the files' names; All those of
	// every file together, whose Rows and Interval are the report's and
	// whose OneMAE and SeveralMAE split its error between the predictions
	// of one device and of several.
	Sources []SourceError
	All     SourceError
}

// DeviceRatio compares two kinds of device on one configuration: the same
// model, precision, variant and accumulation on one device of each, at the
// largest batch that ran on both and was not fitted by a calibration.
// Where the two differ only in what the catalogue says of them (the same
// framework, program and host), the measured ratio is the speed-up a
// buyer of B over A would see, and the predicted one what the catalogue
// promises.
type DeviceRatio struct {
	Model     string
	Precision string
	Variant   string
	Batch     int    // per device, in the log's samples
	A, B      string // the catalogue's keys of the two devices, A before B
	// MeasuredA, MeasuredB, PredictedA and PredictedB are the samples/s of
	// the two rows compared, as measured and as predicted.
	MeasuredA, MeasuredB   float64
	PredictedA, PredictedB float64
	// Bandwidth is B's memory bandwidth over A's where the two share
	// every compute figure of the catalogue (sameCompute) and differ in
	// bandwidth (bandwidthPair); 0 otherwise. Then each speed-up splits
	// A's step into the share the bandwidth bounds and the rest
	// (BandwidthShare).
	Bandwidth float64
}

// Measured returns the measured samples/s on B over those on A.
func (r *DeviceRatio) Measured() float64 { return r.MeasuredB / r.MeasuredA }

// Predicted returns the predicted samples/s on B over those on A.
func (r *DeviceRatio) Predicted() float64 { return r.PredictedB / r.PredictedA }

// Error returns (Predicted − Measured)/Measured: how far the catalogue's
// speed-up of B over A is from the measured one.
func (r *DeviceRatio) Error() float64 { return r.Predicted()/r.Measured() - 1 }

// deviceRatios compares every two groups of one device that differ in
// their device alone, in the order of groups: at the largest batch (then
// the smallest accumulation) that ran on both and that no calibration was
// fitted to, the first row of each there.
func deviceRatios(groups []MeasuredGroup) []DeviceRatio {
	type at struct{ batch, accum int }
	ran := make([]map[at]*MeasuredRow, len(groups)) // each group of one device's rows by batch
	for i := range groups {
		if groups[i].Devices != 1 {
			continue
		}
		ran[i] = map[at]*MeasuredRow{}
		for j := range groups[i].Rows {
			r := &groups[i].Rows[j]
			a := at{r.Batch, max(r.Accumulation, 1)}
			if _, ok := ran[i][a]; !ok && !r.OOM && !r.Fitted {
				ran[i][a] = r
			}
		}
	}
	var out []DeviceRatio
	for i := range groups {
		a := &groups[i]
		for j := i + 1; j < len(groups) && ran[i] != nil; j++ {
			b := &groups[j]
			if ran[j] == nil || b.Device == a.Device || b.Model != a.Model || b.Precision != a.Precision || b.Variant != a.Variant {
				continue
			}
			var best at
			found := false
			for k := range ran[i] {
				if ran[j][k] != nil && (!found || k.batch > best.batch || k.batch == best.batch && k.accum < best.accum) {
					best, found = k, true
				}
			}
			if !found {
				continue
			}
			x, y := ran[i][best], ran[j][best]
			out = append(out, DeviceRatio{Model: a.Model, Precision: a.Precision, Variant: a.Variant, Batch: best.batch, A: a.Device, B: b.Device,
				MeasuredA: x.SamplesPerSec, MeasuredB: y.SamplesPerSec, PredictedA: x.Predicted, PredictedB: y.Predicted})
		}
	}
	return out
}

// measuredPrecisions maps a log's precision to the simulator's compute
// precision, as scenarios.PrecisionApplies does for calibrations (amp-fp16
// and amp compute at fp16, amp-bf16 at bf16), the storage precision of
// that compute, and the master weights' precision: fp32 under automatic
// mixed precision, else the storage's.
func measuredPrecisions(p string) (compute hw.Precision, storage, master model.Precision, err error) {
	for _, hp := range hw.Precisions {
		if hp == hw.FP64 || p == "" || !scenarios.PrecisionApplies(p, string(hp)) {
			continue
		}
		sp, err := sim.StoragePrecision(hp)
		if err != nil {
			return "", "", "", err
		}
		if p != string(hp) { // automatic mixed precision
			return hp, sp, model.FP32, nil
		}
		return hp, sp, sp, nil
	}
	valid := slices.DeleteFunc(scenarios.MeasuredPrecisionNames(), func(n string) bool { return n == string(hw.FP64) })
	return "", "", "", errors.New(config.Unknown("precision", p, valid))
}

// measuredConfig is the simulator's configuration of one device training
// m at batch b (in the profile's samples) of sentences of seq tokens (0:
// the model's default), with the device's memory as capacity: compute from the operator model where it covers m and d
// (compute.Covers; the framework's mode from the log's variant,
// measuredMode), else from the roofline.
func measuredConfig(m *model.Model, d *hw.Device, ms *Measured, b, seq int, eff *compute.Efficiencies) (sim.Config, error) {
	prec, sp, master, err := measuredPrecisions(ms.Precision)
	if err != nil {
		return sim.Config{}, err
	}
	mem, err := atSeqLen(m, ms.SeqLen, ms.FusedAttention, ms.Framework)
	if err != nil {
		return sim.Config{}, err
	}
	opt := cmp.Or(ms.Optimizer, model.Momentum)
	cp := sim.Compute{Update: measuredUpdate(m, d, ms, sp, master)}
	if compute.Covers(d, m.Name) {
		c, err := operatorConfig(d, ms, seq, eff)
		if err != nil {
			return sim.Config{}, err
		}
		l, err := compute.LawAt(c, m.Name, b)
		if err != nil {
			return sim.Config{}, err
		}
		cp.PerSample, cp.Fixed, cp.ForwardFraction = l.PerSample, l.Fixed, l.ForwardFraction
	} else if cp.PerSample, err = sim.Roofline(m, d, prec); err != nil {
		return sim.Config{}, err
	}
	return sim.Config{
		Name:           fmt.Sprintf("%s on one %s at %s, batch %d", m.Name, d.Name, ms.Precision, ms.Batch),
		Nodes:          1,
		DevicesPerNode: 1,
		MicroBatch:     b,
		Accumulation:   max(ms.Accumulation, 1),
		Compute:        cp,
		Memory:         sim.ModelMemory(mem, d, opt, sp, master),
		Comm:           sim.Comm{Algorithm: sim.Ring, Layers: sim.GradientLayers(m, gradientBytes(ms, prec, sp)), NoOverlap: mirrored(ms)},
	}, nil
}

// mirrored reports whether ms's program is DeepLearningExamples'
// TensorFlow 2 Mask R-CNN (the model maskrcnn-r50-fpn with a tensorflow
// framework, as model.Shape.Framework selects it), which trains with
// Keras' fit under tf.distribute.MirroredStrategy
// (TensorFlow2/Segmentation/MaskRCNN/mrcnn_tf2/runtime/run.py:17 at
// 729963dd). Its strategy's cross-device ops on a node's GPUs are
// NcclAllReduce(num_packs=1) (tensorflow/python/distribute/
// cross_device_ops.py, select_cross_device_ops), which concatenates every
// gradient of a device into one pack and all-reduces it in one collective
// (_do_batch_all_reduce, _pack_tensors): the exchange starts once the
// backward pass has produced the last gradient (sim.Comm.NoOverlap). Under
// Keras' mixed_float16 policy the variables, and so their gradients, stay
// float32 (tensorflow.org/guide/mixed_precision), which gradientBytes
// counts.
func mirrored(ms *Measured) bool {
	return ms.Model == "maskrcnn-r50-fpn" && isTensorFlow(ms)
}

// gradientBytes returns the bytes of one gradient value that ms's
// data-parallel exchange carries: 4 under PyTorch's autocast (a torch row
// of a mixed precision, amp-fp16 or amp-bf16), which casts its operators'
// inputs and leaves the module's parameters, and so their .grad, float32
// (pytorch.org/docs/stable/amp.html), and DistributedDataParallel (apex's
// too) all-reduces the .grad as it is; 4 for a row of mirrored's program
// (Keras' float32 variables); else the storage precision's (under
// AMPApexO2 the model's own fp16 gradients).
func gradientBytes(ms *Measured, prec hw.Precision, sp model.Precision) float64 {
	if isTorch(ms) && ms.Precision != string(prec) && ms.AMP != AMPApexO2 || mirrored(ms) {
		return 4
	}
	return sp.Size()
}

// trainerStep adds to cfg the step of m's training program beyond its
// operators (fairseqStep), with the gradient exchange's bytes a value.
func trainerStep(cfg *sim.Config, mdl *model.Model, d *hw.Device, m *Measured) error {
	prec, sp, _, err := measuredPrecisions(m.Precision)
	if err != nil {
		return err
	}
	return fairseqStep(cfg, mdl, d, m, gradientBytes(m, prec, sp))
}

// atSeqLen returns m with its stored activations at samples of seq tokens
// (0: the shape's length), with fused attention where fused or where the
// program framework names fuses it (model.TransformerShape.RunBy): the
// profile's, at its transformer shape's length and attention, scaled by
// what one layer of the shape keeps at seq against at that length
// (model.TransformerShape.ActivationBytesPerLayer at each precision:
// linear in the tokens, attention's scores in their square, none under
// fused attention), and the loss's transient buffers, linear in the
// tokens. It returns m itself where neither changes, or m has no
// transformer shape.
func atSeqLen(m *model.Model, seq int, fused bool, framework string) (*model.Model, error) {
	t, err := model.LookupTransformer(m.Name)
	if err != nil {
		return m, nil
	}
	ft := t.RunBy(framework)
	ft.FusedAttention = ft.FusedAttention || fused
	if (seq == 0 || seq == t.SeqLen) && (!ft.FusedAttention || t.FusedAttention) {
		return m, nil
	}
	// ratio is what a layer keeps at seq over what it keeps at the
	// shape's length, at precision p: the masks stay 1 byte a value
	// whatever the activations' precision, so each precision has its own.
	ratio := func(p model.Precision) (float64, error) {
		at, err := ft.ActivationBytesPerLayer(model.TransformerStep{Batch: 1, SeqLen: seq, Precision: p})
		if err != nil {
			return 0, err
		}
		ref, err := t.ActivationBytesPerLayer(model.TransformerStep{Batch: 1, Precision: p})
		if err != nil {
			return 0, err
		}
		return float64(at) / float64(ref), nil
	}
	r32, err := ratio(model.FP32)
	if err != nil {
		return nil, err
	}
	r16, err := ratio(model.FP16)
	if err != nil {
		return nil, err
	}
	c := *m
	c.Activations.FP32 = units.Bytes(float64(m.Activations.FP32) * r32)
	c.Activations.FP16 = units.Bytes(float64(m.Activations.FP16) * r16)
	if seq > 0 {
		// The loss's buffers are a sequence's logits: linear in its tokens.
		c.Activations.Transient = units.Bytes(float64(m.Activations.Transient) * float64(seq) / float64(t.SeqLen))
	}
	return &c, nil
}

// operatorConfig is the operator model's configuration of ms on d
// (measuredCompute at the log's compute precision and optimizer), with
// sentences of seq tokens (0: the model's default) and a calibration's
// efficiencies (nil: the published constants).
func operatorConfig(d *hw.Device, ms *Measured, seq int, eff *compute.Efficiencies) (compute.Config, error) {
	prec, _, _, err := measuredPrecisions(ms.Precision)
	if err != nil {
		return compute.Config{}, err
	}
	c := measuredCompute(ms, d, prec, cmp.Or(ms.Optimizer, model.Momentum), seq)
	c.Eff = eff
	return c, nil
}

// measuredShape returns the batch of m in mdl's samples and the tokens per
// sentence its attention spans (0: the model's default), checking m's
// sample scale: a log's sentence of a model profiled per token is scale
// tokens.
func measuredShape(m *Measured, mdl *model.Model, prof *model.Profiles) (b, seq int, err error) {
	scale := m.SampleScale
	if scale == 0 {
		scale = 1
	}
	if !(scale > 0) || math.IsInf(scale, 0) || scale != math.Trunc(scale) {
		return 0, 0, fmt.Errorf("sample scale %v: must be a positive whole number of %s's samples", m.SampleScale, mdl.Name)
	}
	unit, err := prof.SampleUnit(mdl.Name)
	if err != nil {
		return 0, 0, err
	}
	if unit == model.Token && scale > 1 {
		seq = int(scale)
	}
	if m.SeqLen != 0 {
		if m.SeqLen < 1 || unit != model.Sentence {
			return 0, 0, fmt.Errorf("sequence length %d: want a positive number of tokens, of a model profiled per sentence (%s is profiled per %s)", m.SeqLen, mdl.Name, cmp.Or(unit, model.Image))
		}
		if t, err := model.LookupTransformer(mdl.Name); err == nil && t.PositionLimit() > 0 && m.SeqLen > t.PositionLimit() {
			return 0, 0, fmt.Errorf("sequence length %d: %s's learned positions hold at most %d tokens", m.SeqLen, mdl.Name, t.PositionLimit())
		}
		seq = m.SeqLen
	}
	return int(float64(m.Batch) * scale), seq, nil
}

// measuredCompute returns the operator model's configuration of ms on d
// at compute precision prec with optimizer opt: the program, mode and
// layout of its framework and variant (measuredMode, measuredNCHW), and for
// PyTorch's logs its host's optimizer step, autocast under automatic
// mixed precision, the gradient scaler under amp-fp16 and the fairseq
// trainer's read of the loss (TrainerDLEFairseq).
func measuredCompute(ms *Measured, d *hw.Device, prec hw.Precision, opt model.Optimizer, seq int) compute.Config {
	c := compute.Config{Device: d, Precision: prec, Mode: measuredMode(ms), NCHW: measuredNCHW(ms), SeqLen: seq, Framework: ms.Framework, FusedAttention: ms.FusedAttention, MaskRoIs: ms.MaskRoIs, FuseBNReLU: ms.FuseBNReLU, Host: ms.Host, TimerEvents: ms.TimerEvents}
	if isTorch(ms) {
		amp := ms.Precision != string(prec) // amp-fp16, amp, amp-bf16
		c.Optimizer, c.Autocast, c.ClipNorm, c.ZeroGrad = opt, amp, ms.ClipNorm, ms.ZeroGrad
		c.GradScaler = amp && prec == hw.FP16
		c.LossSync = ms.Trainer == TrainerDLEFairseq // utils.item(loss.data) before the backward pass
		if ms.Loader == LoaderHybrid {
			c.LoaderHost = model.HybridLoadHost + ms.Host.CallsTime(model.HybridTargets)
		}
		if amp && ms.AMP == AMPApexO2 {
			c.Autocast = false // a fp16 model; apex's scaler as GradScaler
		}
	}
	return c
}

// The values of Measured.AMP, of a CSV's clip column and of its loader column.
const (
	// LoaderHybrid is DeepLearningExamples' PyTorch Mask R-CNN hybrid
	// loader (DATALOADER.HYBRID, coco.py's HybridDataLoader), which reads
	// and decodes each image of the next batch in the training process
	// between two steps and builds its targets (compute.Config.LoaderHost:
	// model.HybridLoadHost and model.HybridTargets' calls).
	LoaderHybrid = "hybrid"
	// FuseBNReLU is a fuse column's value for a program that runs each
	// batch norm with the ReLU after it, and a residual block's last one
	// with the add and ReLU, as one kernel: MXNet's --fuse-bn-relu and
	// --fuse-bn-add-relu (model.Shape.FuseBNReLU).
	FuseBNReLU = "bn-relu"
	// fuseBNModel is the model whose rows may name FuseBNReLU.
	fuseBNModel = "resnet50"
	// hybridLoaderModel is the model whose rows may name LoaderHybrid.
	hybridLoaderModel = "maskrcnn-r50-fpn"

	// AMPAutocast is PyTorch's autocast with torch.amp.GradScaler, the
	// default of a PyTorch row of a mixed precision.
	AMPAutocast = "autocast"
	// AMPApexO2 is apex's amp at opt_level O2 (NVIDIA apex, amp.initialize;
	// DeepLearningExamples' BERT run_squad.py): the model cast to fp16
	// once, its batch norms too under keep_batchnorm_fp32=False, so no
	// operator runs in float32 and no weight is cast per step; fp16
	// gradients, which apex's DistributedDataParallel all-reduces; fp32
	// master weights the optimizer updates. Each step its dynamic loss
	// scaler unscales the fp16 gradients into the master ones (read 2,
	// write 4 bytes a value) and reads the overflow flag on the host
	// (apex/amp/scaler.py, update_scale: _overflow_buf.item()), and after
	// the optimizer the master weights are copied into the model (read 4,
	// write 2).
	AMPApexO2 = "apex-o2"
	// ClipGlobalNorm is a clip column's value for clipping the gradients'
	// global norm each step with a host read of the norm.
	ClipGlobalNorm = "global-norm"
	// ZeroGradZero is a zero_grad column's value for a program whose
	// optimizer.zero_grad() zeroes the gradients in place rather than
	// setting them to None: torch.optim's before PyTorch 2.0
	// (set_to_none=False by default) and apex amp's under O2
	// (apex/amp/_process_optimizer.py, new_zero_grad).
	ZeroGradZero = "zero"
)

// workShare returns ms.WorkShare, 1 where it is 0.
func (ms *Measured) workShare() float64 {
	if ms.WorkShare == 0 {
		return 1
	}
	return ms.WorkShare
}

// timedShare returns the steps ms's timed region ran per step its
// throughput counts: StepsTimed/StepsCounted, 1 where they are not given.
func (ms *Measured) timedShare() float64 {
	if ms.StepsCounted == 0 {
		return 1
	}
	return float64(ms.StepsTimed) / float64(ms.StepsCounted)
}

// logShare returns what turns the time of a step of padded samples, the
// operators' and the simulator's, into the step the log's throughput
// counts: workShare (the samples' share of the padded work) times
// timedShare (the steps timed per step counted).
func (ms *Measured) logShare() float64 { return ms.workShare() * ms.timedShare() }

// measuredUpdate returns the optimizer update's device time of m trained
// as ms on d, gradients in sp and master weights in master: the
// optimizer's bytes (sim.UpdateTime) and those of the step's program
// around it (programUpdateBytes).
func measuredUpdate(m *model.Model, d *hw.Device, ms *Measured, sp, master model.Precision) units.Seconds {
	t := sim.UpdateTime(m, d, cmp.Or(ms.Optimizer, model.Momentum), sp, master)
	if b := programUpdateBytes(ms, sp, master); b > 0 && d.MemoryBandwidth > 0 {
		t += units.Seconds(float64(m.Params) * b / float64(d.MemoryBandwidth))
	}
	return t
}

// programUpdateBytes returns the bytes per parameter ms's program moves
// besides the optimizer's: under AMPApexO2 the unscaling into the master
// gradients (sp read, master written) and the copy of the master weights
// into the model, whose read (master) sim.UpdateBytesPerParam does not
// count (it counts the write); with ClipNorm the norm's read of the
// master gradients and the scale's read and write of them. A PyTorch
// program's torch.optim step reads and writes its master-precision lists
// once a kernel (compute.OptimizerPasses), beyond the one pass
// sim.UpdateBytes counts; under autocast in fp16, GradScaler's
// unscale_ reads and writes the float32 gradients once more
// (_amp_foreach_non_finite_check_and_unscale_).
func programUpdateBytes(ms *Measured, sp, master model.Precision) float64 {
	var b float64
	if ms.AMP == AMPApexO2 && sp != master {
		b += sp.Size() + 2*master.Size()
	}
	if isTorch(ms) {
		o := cmp.Or(ms.Optimizer, model.Momentum)
		if n := compute.OptimizerPasses(o); n > 0 {
			b += max(0, float64(n)*master.Size()-sim.UpdateBytes(o, sp, master))
		}
		if ms.AMP != AMPApexO2 && sp == model.FP16 && master == model.FP32 {
			b += 2 * master.Size()
		}
	}
	if ms.ClipNorm {
		b += 3 * master.Size()
	}
	return b
}

// isTorch reports whether ms's framework is PyTorch.
func isTorch(ms *Measured) bool { return strings.HasPrefix(ms.Framework, "torch") }

// isTensorFlow reports whether ms's log or CSV names TensorFlow as its
// framework, in any case ("tensorflow 2.4", "TensorFlow").
func isTensorFlow(ms *Measured) bool {
	return strings.HasPrefix(strings.ToLower(ms.Framework), "tensorflow")
}

// measuredMode returns the framework mode of a log: the row's own where
// it states one (a CSV's mode column, Measured.Mode), compiled where its
// variant's labels say "compile" or "compile=…" (torch.compile, XLA),
// else its framework's (compute.FrameworkMode: compiled for MXNet's and
// TensorFlow's graphs, eager for PyTorch or a log that does not name its
// framework).
func measuredMode(ms *Measured) compute.Mode {
	if ms.Mode != "" {
		return ms.Mode
	}
	for _, f := range strings.Fields(ms.Variant) {
		if f == "compile" || strings.HasPrefix(f, "compile=") {
			return compute.Compiled
		}
	}
	return compute.FrameworkMode(ms.Framework)
}

// measuredNCHW reports whether ms's activations were channels-first:
// PyTorch's default memory format, in a log whose header names torch and
// whose variant does not say channels_last. Logs of other frameworks, or
// that do not name theirs, are taken as NHWC (MXNet's and TensorFlow's
// tensor-core programs, the published tables).
func measuredNCHW(ms *Measured) bool {
	return isTorch(ms) && !slices.Contains(strings.Fields(ms.Variant), "channels_last")
}

// placeMeasured spreads cfg, one device of kind d, over the ms.Devices
// devices of system ms.System: ms.Nodes nodes of it where it says, else
// whole nodes (part of one when fewer), with the node's links and the
// fabric under ms's transports, by default those a scenario on the system
// takes (scenarios.Network), and the links the fabric entries of cals
// give in place of the catalogue's. It returns
// the system's key, the transports used and the levels calibrated.
func placeMeasured(cfg *sim.Config, cat *hw.Catalog, d *hw.Device, ms *Measured, cals []scenarios.CalibrationFile) (system, exchange string, applied []scenarios.Applied, err error) {
	sys, node, err := systemOf(cat, ms.System, d)
	if err != nil {
		return "", "", nil, err
	}
	n := ms.Devices
	per := min(n, node.Devices)
	if ms.Nodes > 0 {
		if per = n / ms.Nodes; n%ms.Nodes != 0 || per > node.Devices {
			return "", "", nil, fmt.Errorf("%d devices on %d nodes: not as many on each, up to the %d of a node of system %s", n, ms.Nodes, node.Devices, sys.Name)
		}
	}
	if n%per != 0 {
		return "", "", nil, fmt.Errorf("%d devices are not whole nodes of system %s, whose nodes hold %d", n, sys.Name, node.Devices)
	}
	cfg.Name = fmt.Sprintf("%s on %d devices of %s at %s, batch %d", ms.Model, n, sys.Name, ms.Precision, ms.Batch)
	cfg.Comm.Interference = scenarios.DefaultInterference(d, node) // as a scenario on the system
	par := scenarios.Parallelism{Transport: ms.Transport, IntraTransport: ms.IntraTransport, NCCLP2PDisable: ms.NCCLP2PDisable}
	exchange, applied, err = onNodes(cat, sys, n, per, par, cals, cfg)
	return sys.Name, exchange, applied, err
}

// sharedHost sets cfg's compute law, for a TensorFlow row on several
// devices of a node, with the node's cores shared by its devices' host
// operators (compute.Config.HostCores): DeepLearningExamples' TensorFlow
// 2 Mask R-CNN, whose program alone has host operators, drives every GPU
// of a node from one process (tf.distribute.MirroredStrategy,
// mrcnn_tf2/runtime/run.py), whose CPU kernels share its thread pools.
// A node's cores count their second hardware threads at
// scenarios.SMTYield, as its decoding does (sim.Input.DecodeParallelism).
// Other rows keep the law of one device.
func sharedHost(cfg *sim.Config, cat *hw.Catalog, mdl *model.Model, d *hw.Device, ms *Measured, b, seq int, eff *compute.Efficiencies) error {
	if !isTensorFlow(ms) || cfg.DevicesPerNode < 2 {
		return nil
	}
	_, node, err := systemOf(cat, ms.System, d)
	if err != nil {
		return err
	}
	cpu := sim.Input{Cores: node.CPU.Cores(), Threads: node.CPU.Threads(), Workers: node.CPU.Threads(), SMTYield: scenarios.SMTYield}
	cores := cpu.DecodeParallelism()
	if !(cores > 0) {
		return nil // a node without a CPU in the catalogue: as one device
	}
	c, err := operatorConfig(d, ms, seq, eff)
	if err != nil {
		return err
	}
	c.HostCores = cores / float64(cfg.DevicesPerNode)
	l, err := compute.LawAt(c, mdl.Name, b)
	if err != nil {
		return err
	}
	cfg.Compute.PerSample, cfg.Compute.Fixed, cfg.Compute.ForwardFraction = l.PerSample, l.Fixed, l.ForwardFraction
	return nil
}

// measuredInput gives cfg the input pipeline of a measurement whose host
// decoded its samples (ms.DecodeWorkers > 0): each node of ms.System
// decodes the model's dataset on its cores (scenarios.HostDecode), with
// at most DecodeWorkers × devices processes at once, from host memory (a
// benchmark's epochs of ImageNet stay in the page cache), and each device
// copies its decoded samples as bytes (the data loader collates uint8
// pixels and normalises them on the device). It leaves cfg as it is for
// other measurements and for a dataset that costs no decoding.
func measuredInput(cfg *sim.Config, cat *hw.Catalog, prof *model.Profiles, mdl *model.Model, d *hw.Device, ms *Measured) error {
	if ms.DecodeWorkers == 0 {
		return nil
	}
	if ms.DecodeWorkers < 0 || ms.DecodeWorkers > 4096 {
		return fmt.Errorf("decode workers %d: want 1 to 4096 processes per device (0: input not modelled)", ms.DecodeWorkers)
	}
	if ms.System == "" {
		return fmt.Errorf("%d decode workers per device: name the system whose host decoded the input", ms.DecodeWorkers)
	}
	_, node, err := systemOf(cat, ms.System, d)
	if err != nil {
		return err
	}
	data, err := prof.Dataset(mdl.Dataset)
	if err != nil {
		return err
	}
	hd := node.HostBandwidth(d)
	if hd == 0 {
		return fmt.Errorf("device %s of node %s has no host-to-device bandwidth for its input", d.Name, node.Name)
	}
	in := sim.Input{Storage: sim.Cached, SampleBytes: data.BytesPerSample, Copy: units.Bytes(data.InputElements()), HostToDevice: hd}
	scenarios.HostDecode(&in, data, node, ms.DecodeWorkers*cfg.DevicesPerNode)
	if in.Decode > 0 {
		cfg.Input = in
	}
	return nil
}

// systemOf returns the catalogue's system named system and its node, and
// an error when the node's device is not d (nil: any device).
func systemOf(cat *hw.Catalog, system string, d *hw.Device) (*hw.System, *hw.Node, error) {
	sys, node, dev, err := cat.Resolve(system)
	if err != nil {
		return nil, nil, err
	}
	if d != nil && dev.Name != d.Name {
		return nil, nil, fmt.Errorf("measured on %s, but system %s's nodes hold %s", d.Name, sys.Name, dev.Name)
	}
	return sys, node, nil
}

// onNodes places n devices on n/per nodes of sys, per on each, in cfg
// (Nodes, DevicesPerNode) and builds cfg's network as a scenario on sys
// would (scenarios.Network, with par's transports or the system's
// defaults, and its NCCLP2PDisable), and returns the links and transports
// the exchange crosses: "nccl" inside one node ("nccl over shm" with
// NCCLP2PDisable), "nccl, verbs" across nodes, followed by the
// levels the fabric entries of fabric set (scenarios.ApplyFabric):
// "nccl, verbs (calibrated: inter from f.yaml)", and those levels. More
// nodes than sys has is an error.
func onNodes(cat *hw.Catalog, sys *hw.System, n, per int, par scenarios.Parallelism, fabric []scenarios.CalibrationFile, cfg *sim.Config) (exchange string, applied []scenarios.Applied, err error) {
	if nodes := n / per; nodes > sys.MaxNodes {
		return "", nil, fmt.Errorf("%d devices need %d nodes of %d; system %s has %d", n, nodes, per, sys.Name, sys.MaxNodes)
	}
	p := scenarios.Point{Devices: n, Nodes: n / per, DevicesPerNode: per, Replicas: n,
		BatchPerDevice: cfg.MicroBatch, GlobalBatch: cfg.MicroBatch * n * cfg.Accumulation}
	cfg.Nodes, cfg.DevicesPerNode = p.Nodes, p.DevicesPerNode
	inter, usedIntra, err := scenarios.Network(cat, sys.Name, par, cfg, p)
	if err != nil {
		return "", nil, err // it names the system
	}
	var used []string
	switch {
	case per > 1 && par.NCCLP2PDisable:
		used = append(used, cmp.Or(usedIntra, "the node's link")+" over shm")
	case per > 1:
		used = append(used, cmp.Or(usedIntra, "the node's link"))
	}
	if inter != "" {
		used = append(used, inter)
	}
	exchange = strings.Join(used, ", ")
	if applied = scenarios.ApplyFabric(fabric, sys.Name, inter, usedIntra, &cfg.Network, p); len(applied) > 0 {
		exchange += " (calibrated: " + scenarios.FabricText(applied) + ")"
	}
	return exchange, applied, nil
}

// scaling sets the scaling efficiencies of the rows of several devices in
// groups against the first row of one device that ran at the same batch
// and accumulation in the group of one device of the same kind, model,
// precision and variant.
func scaling(groups map[measuredKey]*MeasuredGroup) {
	type at struct {
		g            measuredKey
		batch, accum int
	}
	one := map[at]*MeasuredRow{}
	for k, g := range groups {
		if g.Devices != 1 {
			continue
		}
		for i := range g.Rows {
			r := &g.Rows[i]
			a := at{k, r.Batch, max(r.Accumulation, 1)}
			if _, ok := one[a]; !ok && !r.OOM {
				one[a] = r
			}
		}
	}
	for k, g := range groups {
		for i := range g.Rows {
			r := &g.Rows[i]
			r.MeasuredScaling, r.PredictedScaling = math.NaN(), math.NaN()
			if g.Devices == 1 || r.OOM {
				continue
			}
			k1 := k
			k1.devices, k1.system = 1, ""
			if o := one[at{k1, r.Batch, max(r.Accumulation, 1)}]; o != nil {
				n := float64(g.Devices)
				r.MeasuredScaling = r.SamplesPerSec / (n * o.SamplesPerSec)
				r.PredictedScaling = r.Predicted / (n * o.Predicted)
			}
		}
	}
}

// measuredKey names a MeasuredGroup.
type measuredKey struct {
	dev, model, prec, variant string
	devices                   int
	system                    string
}

// CompareMeasured predicts every measurement in ms from the catalogue
// alone: devices of the measured kind, the model's roofline (no
// calibration) and the simulator's memory model; a measurement of several
// devices adds its system's network (placed as scenarios.Network does,
// under the measurement's transports or the system's defaults; a ring
// all-reduce in DefaultBucket buckets overlapping backward). Input is
// synthetic: the prediction is of the devices and their gradient
// exchange, not of a data pipeline. Each row's prediction is the
// simulated samples/s at the measured batch and device count, converted
// to the log's samples with SampleScale, and one device's footprint at
// that batch; each group adds the largest batch the memory model fits. A
// row the simulator cannot run, an unknown device, model or system, a
// system without the device or with too few of it, or a bad field is an
// error that names the row's Source.
func CompareMeasured(ms []Measured, cat *hw.Catalog, prof *model.Profiles, opt predict.Options) (*MeasuredReport, error) {
	return CompareCalibrated(ms, cat, prof, nil, opt)
}

// calibrate replaces cfg's compute, that of one device of kind d training
// mdl for m, by the law cals give it, if any, and says which (the law's
// source and its file's index in cals, −1 for none) and whether m is a
// measurement the law was fitted to.
func calibrate(cfg *sim.Config, cals []scenarios.CalibrationFile, prof *model.Profiles, mdl *model.Model, d *hw.Device, m *Measured) (source string, from int, fitted bool, err error) {
	if len(cals) == 0 {
		return "", -1, false, nil
	}
	prec, _, _, err := measuredPrecisions(m.Precision)
	if err != nil {
		return "", -1, false, err
	}
	unit, err := prof.SampleUnit(mdl.Name)
	if err != nil {
		return "", -1, false, err
	}
	e, from := scenarios.PickEntry(cals, mdl.Name, unit, d, string(prec))
	if e == nil {
		return "", -1, false, nil
	}
	cal, err := scenarios.EntryCalibration(cals[from].Path, e)
	if err != nil {
		return "", -1, false, err
	}
	cfg.Compute = cal.Compute(cfg.Compute.Update)
	return cal.Source, from, calibratedBy(e, cals[from].Path, m), nil
}

// publishedPoints returns the configurations, {devices, batch per device},
// of the built-in validation cases that a published entry's source names
// ("validate case A with B: ..."): those its law was fitted to. A name that
// is not a built-in case, or whose scenario does not load, gives none.
func publishedPoints(source string) [][2]int {
	names, ok := strings.CutPrefix(source, "validate case ")
	if !ok {
		return nil
	}
	names, _, _ = strings.Cut(names, ":")
	points := builtinPoints()
	var pts [][2]int
	for _, name := range strings.Split(names, " with ") {
		name, _, _ = strings.Cut(strings.TrimSpace(name), " ") // "case (what it is)"
		if pt, ok := points[name]; ok {
			pts = append(pts, pt)
		}
	}
	return pts
}

// builtinPoints maps the built-in validation cases to their
// configurations, {devices, batch per device}, where a case gives both
// (the batch from its set, or else its shipped scenario's). The cases are
// embedded, so the map is made once, not for every measurement checked.
var builtinPoints = sync.OnceValue(func() map[string][2]int {
	points := map[string][2]int{}
	for _, c := range BuiltinCases().Cases {
		n, _ := c.devices()
		b, ok := c.Set["batch"]
		if !ok && c.Scenario.Ref != "" {
			if r, err := scenarios.Load(c.Scenario.Ref, scenarios.Options{}); err == nil {
				b = r.BatchPerDevice
			}
		}
		if n > 0 && b > 0 {
			points[c.Name] = [2]int{n, b}
		}
	}
	return points
})

// calibratedBy reports whether entry e of the calibration file at path
// was fitted to measurement m, as far as e says: m ran on e's device
// count, at a global batch within e's batches where e records them, and
// comes from a log e's source names, or from any log when path is
// scenarios.Published (whose sources are figures, not files). A published
// entry solved from two cases (v0 and t) was fitted to m, too, when m ran
// on the device count and batch per device of either (publishedPoints).
func calibratedBy(e *calib.ThroughputEntry, path string, m *Measured) bool {
	if path == scenarios.Published && e.Points > 1 {
		return slices.Contains(publishedPoints(e.Source), [2]int{max(m.Devices, 1), m.Batch})
	}
	if max(m.Devices, 1) != e.Devices {
		return false
	}
	if len(e.Batches) == 2 {
		g := m.Batch * max(m.Devices, 1) * max(m.Accumulation, 1)
		if g < e.Batches[0] || g > e.Batches[1] {
			return false
		}
	}
	if path == scenarios.Published {
		return true
	}
	file := m.Source
	if i := strings.LastIndexByte(file, ':'); i >= 0 && strings.Trim(file[i+1:], "0123456789") == "" {
		file = file[:i]
	}
	for _, src := range strings.Split(e.Source, ",") {
		if s := strings.TrimSpace(src); s != "" && filepath.Base(s) == filepath.Base(file) {
			return true
		}
	}
	return false
}

// CompareCalibrated is CompareMeasured with the compute of every
// measurement whose model, device kind and precision a throughput entry of
// cals measured taken from that entry's law (scenarios.PickEntry, as a
// scenario takes it: per device v0 = V0/Devices, the roofline's update
// carved out of t), and the roofline's for the rest. A row that the entry
// was fitted to is marked Fitted and left out of the errors: one on the
// entry's device count, at a global batch within the entry's batches where
// it records them, from a log the entry's source names (a file that `fit
// --out` wrote names its logs; the file's base name is compared), or from
// any log for the published calibrations (scenarios.Published), whose
// sources are figures, not files. An entry that did not bound v0 is an
// error.
func CompareCalibrated(ms []Measured, cat *hw.Catalog, prof *model.Profiles, cals []scenarios.CalibrationFile, opt predict.Options) (*MeasuredReport, error) {
	groups := map[measuredKey]*MeasuredGroup{}
	used := make([]bool, len(cals))
	for i := range ms {
		m := &ms[i]
		where := cmp.Or(m.Source, fmt.Sprintf("measurement %d", i+1))
		d := cat.DeviceCalled(m.Device)
		if d == nil {
			return nil, fmt.Errorf("%s: %s", where, config.Unknown("device", m.Device, cat.DeviceNames()))
		}
		mdl, err := prof.Model(m.Model)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if m.Batch < 1 {
			return nil, fmt.Errorf("%s: batch %d: must be at least 1", where, m.Batch)
		}
		if m.Devices < 0 || m.Accumulation < 0 {
			return nil, fmt.Errorf("%s: devices %d, accumulation %d: must be at least 1 (0 for 1)", where, m.Devices, m.Accumulation)
		}
		b, seq, err := measuredShape(m, mdl, prof)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		scale := float64(b) / float64(m.Batch)
		eff, opText, opFitted, opFrom, err := operatorsApplied(cals, d, m)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if opFrom >= 0 && compute.Covers(d, mdl.Name) {
			used[opFrom] = true
		} else {
			opText, opFitted = "", false
		}
		cfg, err := measuredConfig(mdl, d, m, b, seq, eff)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		calSource, from, fitted, err := calibrate(&cfg, cals, prof, mdl, d, m)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if from >= 0 {
			used[from] = true
		}
		if calSource == "" && strings.HasPrefix(opText, "carried") {
			src, err := carryLaw(&cfg, cals, cat, mdl, d, m, b, seq)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			if src != "" {
				opText += ", scaling the law measured on " + src
			}
		}
		devices, system, transport := max(m.Devices, 1), "", ""
		if devices > 1 {
			if m.System == "" {
				return nil, fmt.Errorf("%s: %d devices: name the system they ran on, for its links between them", where, devices)
			}
			var applied []scenarios.Applied
			if system, transport, applied, err = placeMeasured(&cfg, cat, d, m, cals); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			for i, f := range cals {
				if slices.ContainsFunc(applied, func(a scenarios.Applied) bool { return a.Path == f.Path }) {
					used[i] = true
				}
			}
			if calSource == "" && !strings.HasPrefix(opText, "carried") && compute.Covers(d, mdl.Name) {
				if err := sharedHost(&cfg, cat, mdl, d, m, b, seq, eff); err != nil {
					return nil, fmt.Errorf("%s: %w", where, err)
				}
			}
		}
		if err := trainerStep(&cfg, mdl, d, m); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if err := measuredInput(&cfg, cat, prof, mdl, d, m); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		k := measuredKey{d.Name, mdl.Name, m.Precision, m.Variant, devices, system}
		g := groups[k]
		if g == nil {
			g = &MeasuredGroup{Device: d.Name, Model: mdl.Name, Precision: m.Precision, Variant: m.Variant, Devices: devices, System: system}
			if b := cfg.LargestMicroBatch(); b >= 0 {
				g.PredictedMax = int(float64(b) / scale)
			} else {
				g.PredictedMax = -1
			}
			groups[k] = g
		}
		row := MeasuredRow{Measured: *m, Exchange: transport, Calibration: calSource, Fitted: fitted && !m.OOM,
			ByOperators: calSource == "" && compute.Covers(d, mdl.Name)}
		if row.ByOperators {
			row.Operators = opText
			row.Fitted = row.Fitted || opFitted && !m.OOM
		}
		f, _ := cfg.PeakFootprint()
		row.Footprint = f.Total()
		if m.OOM {
			if g.FirstOOM == 0 || m.Batch < g.FirstOOM {
				g.FirstOOM = m.Batch
			}
		} else {
			if !(m.SamplesPerSec > 0) || math.IsInf(m.SamplesPerSec, 0) {
				return nil, fmt.Errorf("%s: samples/s %v: must be positive", where, m.SamplesPerSec)
			}
			run := cfg
			run.Memory.Capacity = 0 // predict the throughput even where the memory model says it does not fit
			run.Steps = opt.SimSteps()
			res, err := sim.Run(run)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			row.Predicted = res.SamplesPerSec / scale / m.logShare()
			g.LargestRun = max(g.LargestRun, m.Batch)
		}
		g.Rows = append(g.Rows, row)
	}
	scaling(groups)
	rep := &MeasuredReport{CalibrationsUsed: used}
	var sum float64
	order := slices.SortedFunc(maps.Keys(groups), func(a, b measuredKey) int {
		return cmp.Or(strings.Compare(a.dev, b.dev), strings.Compare(a.model, b.model), strings.Compare(a.prec, b.prec), strings.Compare(a.variant, b.variant),
			cmp.Compare(a.devices, b.devices), strings.Compare(a.system, b.system))
	})
	for _, k := range order {
		g := groups[k]
		slices.SortStableFunc(g.Rows, func(a, b MeasuredRow) int { return cmp.Compare(a.Batch, b.Batch) })
		var gs float64
		n := 0
		g.LargestError = math.NaN()
		for i := range g.Rows {
			if g.Rows[i].Fitted {
				rep.Fitted++
				continue
			}
			if e := g.Rows[i].Error(); !math.IsNaN(e) {
				gs += math.Abs(e)
				n++
				if g.Rows[i].Batch == g.LargestRun {
					g.LargestError = e
				}
			}
		}
		g.MAE = math.NaN()
		if n > 0 {
			g.MAE = gs / float64(n)
		}
		sum += gs
		rep.Rows += n
		rep.Groups = append(rep.Groups, *g)
	}
	rep.MAE, rep.ScalingError = math.NaN(), math.NaN()
	rep.Sources, rep.All = sourceErrors(rep.Groups)
	rep.Interval = rep.All.Interval
	if rep.Rows > 0 {
		rep.MAE = sum / float64(rep.Rows)
	}
	var scaled float64
	for _, g := range rep.Groups {
		for _, r := range g.Rows {
			if !math.IsNaN(r.MeasuredScaling) {
				scaled += math.Abs(r.PredictedScaling - r.MeasuredScaling)
				rep.ScalingRows++
			}
		}
	}
	if rep.ScalingRows > 0 {
		rep.ScalingError = scaled / float64(rep.ScalingRows)
	}
	rep.Ratios, rep.RatioError = deviceRatios(rep.Groups), math.NaN()
	for i := range rep.Ratios {
		rep.Ratios[i].Bandwidth = bandwidthPair(cat, &rep.Ratios[i])
	}
	if len(rep.Ratios) > 0 {
		var sum float64
		for i := range rep.Ratios {
			sum += math.Abs(rep.Ratios[i].Error())
		}
		rep.RatioError = sum / float64(len(rep.Ratios))
	}
	return rep, nil
}
