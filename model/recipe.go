package model

import (
	"math"

	"scaleplan/internal/units"
)

// Optimizer names a training algorithm.
type Optimizer string

// The optimizers.
const (
	SGD       Optimizer = "sgd"       // plain stochastic gradient descent
	Momentum  Optimizer = "momentum"  // SGD with (heavy-ball) momentum
	Nesterov  Optimizer = "nesterov"  // SGD with Nesterov momentum
	LARS      Optimizer = "lars"      // momentum SGD with layer-wise adaptive rate scaling
	RMSProp   Optimizer = "rmsprop"   // RMSProp with momentum
	Adam      Optimizer = "adam"      // Adam
	FusedAdam Optimizer = "fusedadam" // Adam in one fused kernel (NVIDIA apex); same state as Adam
	AdamW     Optimizer = "adamw"     // Adam with decoupled weight decay
	// LAMB is Adam's update scaled per layer by the trust ratio
	// ‖w‖/‖update‖ (You et al. 2020, "Large batch optimization for deep
	// learning: training BERT in 76 minutes", Algorithm 2), MLPerf BERT's
	// optimizer; Adam's state.
	LAMB Optimizer = "lamb"
	// BertAdam is DeepLearningExamples' BertAdam (PyTorch/LanguageModeling/
	// BERT/optimization.py at 729963dd): Adam without bias correction,
	// the weight decay added to the update, each parameter tensor's
	// gradient clipped to norm 1 first (clip_grad_norm_), in a Python loop
	// of single kernels over the tensors (BertAdamKernels); Adam's state.
	BertAdam Optimizer = "bertadam"
)

var optimizers = []string{string(SGD), string(Momentum), string(Nesterov), string(LARS), string(RMSProp), string(Adam), string(FusedAdam), string(AdamW), string(LAMB), string(BertAdam)}

// StateValues returns how many values of optimizer state the optimizer
// keeps per parameter, besides any master copy of the weights:
//
//	sgd 0; momentum, nesterov, lars 1; rmsprop, adam, fusedadam, adamw, lamb, bertadam 2
//
// (RMSProp's two are the mean square and the momentum.)
// It returns 0 for an unknown optimizer.
func (o Optimizer) StateValues() int {
	switch o {
	case Momentum, Nesterov, LARS:
		return 1
	case RMSProp, Adam, FusedAdam, AdamW, LAMB, BertAdam:
		return 2
	}
	return 0
}

func (o Optimizer) usesMomentum() bool {
	return o == Momentum || o == Nesterov || o == LARS
}

// isAdam reports whether o keeps Adam's moments and takes its β and ε.
func (o Optimizer) isAdam() bool {
	return o == Adam || o == FusedAdam || o == AdamW || o == LAMB || o == BertAdam
}

// BertAdamKernels is the kernels BertAdam.step launches per parameter
// tensor in the weight-decay group, and BertAdamKernelsNoDecay in the
// other (biases and LayerNorms), read from optimization.py and PyTorch
// 1.13's torch/nn/utils/clip_grad.py: clip_grad_norm_ of one tensor (its
// norm, torch.stack, the norm of the norms, + 1e-6, the division, the
// clamp, the gradient's mul_: 7), the moments (mul_, add_, mul_,
// addcmul_: 4), next_m / (next_v.sqrt() + ε) (3), the decay (decay · p
// and update +=: 2, decay group only), lr · update, its negation and
// p.add_ (3).
const (
	BertAdamKernels        = 19
	BertAdamKernelsNoDecay = 17
)

// ScheduleKind names a learning-rate schedule.
type ScheduleKind string

// The learning-rate schedules, applied after warm-up.
const (
	Constant    ScheduleKind = "constant"    // lr stays at BaseLR
	Step        ScheduleKind = "step"        // lr·Factor every EveryEpochs or EverySteps, from StartStep
	MultiStep   ScheduleKind = "multistep"   // lr·Factor at each milestone
	Exponential ScheduleKind = "exponential" // lr·Factor^(t/interval), continuously
	Cosine      ScheduleKind = "cosine"      // half cosine from BaseLR to EndLR
	Polynomial  ScheduleKind = "polynomial"  // (BaseLR-EndLR)·(1-t/T)^Power + EndLR
	InvSqrt     ScheduleKind = "invsqrt"     // BaseLR·sqrt(warm-up steps / step) after warm-up (fairseq inverse_sqrt)
)

var scheduleKinds = []string{string(Constant), string(Step), string(MultiStep), string(Exponential), string(Cosine), string(Polynomial), string(InvSqrt)}

// Schedule is a learning-rate schedule. Which fields apply depends on Kind.
type Schedule struct {
	// Kind is the schedule. Required.
	Kind ScheduleKind `yaml:"kind"`
	// Power is the polynomial schedule's exponent. Required for polynomial.
	Power float64 `yaml:"power"`
	// Factor multiplies the learning rate at each decay (step, multistep,
	// exponential), in (0, 1). Required for those.
	Factor float64 `yaml:"factor"`
	// EveryEpochs is the interval between decays in epochs (step,
	// exponential). Default 0; exactly one of EveryEpochs and EverySteps.
	EveryEpochs float64 `yaml:"every_epochs"`
	// EverySteps is the interval between decays in steps (step, exponential).
	EverySteps int64 `yaml:"every_steps"`
	// MilestoneEpochs are the epochs at which multistep decays, ascending.
	MilestoneEpochs []float64 `yaml:"milestone_epochs"`
	// MilestoneSteps are the steps at which multistep decays, ascending.
	MilestoneSteps []int64 `yaml:"milestone_steps"`
	// StartStep is the step at which decay begins (step). Default 0.
	StartStep int64 `yaml:"start_step"`
	// MaxDecays caps the number of decays (step). Default 0: no cap.
	MaxDecays int `yaml:"max_decays"`
	// EndLR is the final learning rate of polynomial and cosine schedules.
	// Default 0.
	EndLR float64 `yaml:"end_lr"`
}

// Warmup is a learning-rate warm-up at the start of training.
type Warmup struct {
	// Epochs is the warm-up length in epochs. Default 0; at most one of
	// Epochs and Steps.
	Epochs float64 `yaml:"epochs"`
	// Steps is the warm-up length in steps (updates). Default 0.
	Steps int64 `yaml:"steps"`
	// Method is how the rate rises: linear, exponential, mlperf_linear or
	// constant. Default linear.
	Method string `yaml:"method"`
	// StartFactor is the fraction of the base rate at step 0. Default 0.
	StartFactor float64 `yaml:"start_factor"`
}

var warmupMethods = []string{"linear", "exponential", "mlperf_linear", "constant"}

// AdamParams are Adam's moment coefficients.
type AdamParams struct {
	// Beta1 is the first-moment decay, in [0, 1). Required.
	Beta1 float64 `yaml:"beta1"`
	// Beta2 is the second-moment decay, in [0, 1). Required.
	Beta2 float64 `yaml:"beta2"`
	// Epsilon is the denominator's guard, positive. Required.
	Epsilon float64 `yaml:"epsilon"`
}

// Metric names a quality measure.
type Metric string

// The quality metrics. All but BLEU are fractions in (0, 1].
const (
	Top1     Metric = "top1"     // top-1 classification accuracy
	Top5     Metric = "top5"     // top-5 classification accuracy
	Accuracy Metric = "accuracy" // plain accuracy
	MAP      Metric = "map"      // COCO box mAP at IoU 0.50:0.95 (single-metric detectors)
	BoxMAP   Metric = "map-box"  // COCO box mAP at IoU 0.50:0.95
	MaskMAP  Metric = "map-mask" // COCO mask mAP at IoU 0.50:0.95
	BLEU     Metric = "bleu"     // BLEU score, 0 to 100
)

var metrics = []string{string(Top1), string(Top5), string(Accuracy), string(MAP), string(BoxMAP), string(MaskMAP), string(BLEU)}

// Target is a quality a training run must reach.
type Target struct {
	// Metric is the measure. Required.
	Metric Metric `yaml:"metric"`
	// Value is the value to reach: a fraction for accuracy and mAP
	// (0.759, not 75.9), a score for BLEU. Required.
	Value float64 `yaml:"value"`
	// Spread is the reported run-to-run spread (±) of the value reached, in
	// the metric's unit. Default 0 (not reported).
	Spread float64 `yaml:"spread"`
}

// Shortfall is a known loss of quality past the largest good batch.
type Shortfall struct {
	// GlobalBatch is the global batch at which the loss was seen. Required.
	GlobalBatch int64 `yaml:"global_batch"`
	// ComparedTo is the global batch it was compared with. Required.
	ComparedTo int64 `yaml:"compared_to"`
	// Drop is how far below the smaller batch's final value the run ended,
	// in the primary target's unit. Required, positive.
	Drop float64 `yaml:"drop"`
}

// Reached is where published runs of a recipe met its targets, for a
// recipe whose Epochs or Iterations is a configured maximum that runs stop
// short of: MLPerf's stop at the first evaluation that meets the target.
type Reached struct {
	// Epochs or Iterations, at the recipe's GlobalBatch, before the
	// evaluation that met the targets. Exactly one is required.
	Epochs     float64 `yaml:"epochs"`
	Iterations int64   `yaml:"iterations"`
	// Source cites the runs and says how many reached the targets there.
	// Required.
	Source string `yaml:"source"`
}

// Measurement is a published time to train.
type Measurement struct {
	// System names the machine it was measured on, as in the hardware
	// catalogue. Required.
	System string `yaml:"system"`
	// Devices is the number of accelerators. Required.
	Devices int `yaml:"devices"`
	// GlobalBatch is the global batch of the run. Default: the recipe's.
	GlobalBatch int64 `yaml:"global_batch"`
	// Setup names the software setup when a source compares several.
	// Default empty.
	Setup string `yaml:"setup"`
	// Time is the time to train. Required.
	Time units.Seconds `yaml:"time"`
	// UpperBound marks a time the source gives only as "under". Default false.
	UpperBound bool `yaml:"upper_bound"`
	// Note qualifies the figure (extrapolated, ...). Default empty.
	Note string `yaml:"note"`
}

// Recipe is a reference training configuration: the hyperparameters with
// which a model is known to reach a quality target, and where they come from.
type Recipe struct {
	// Name is the recipe's key in its profile file.
	Name string `yaml:"-"`
	// Model names the model trained. Required.
	Model string `yaml:"model"`
	// Dataset names the dataset trained on. Default: the model's.
	Dataset string `yaml:"dataset"`
	// Source cites where the figures come from (seed document and table).
	// Required.
	Source string `yaml:"source"`
	// Optimizer is the training algorithm. Required.
	Optimizer Optimizer `yaml:"optimizer"`
	// PerDeviceBatch is the micro-batch one replica processes per forward
	// pass, in samples of the dataset's unit. Required.
	PerDeviceBatch int64 `yaml:"per_device_batch"`
	// Devices is the number of accelerators of the reference run. Required.
	Devices int `yaml:"devices"`
	// PipelineStages is the number of devices one replica is pipelined
	// over. Default 1.
	PipelineStages int `yaml:"pipeline_stages"`
	// GradientAccumulation is the number of micro-batches accumulated per
	// update. Default 1.
	GradientAccumulation int `yaml:"gradient_accumulation"`
	// GlobalBatch is the samples per update:
	//	PerDeviceBatch · Devices/PipelineStages · GradientAccumulation
	// Default that product; when given it must equal it.
	GlobalBatch int64 `yaml:"global_batch"`
	// BatchUnit is the unit of the batch sizes; it must be the dataset's
	// sample unit. Default the dataset's.
	BatchUnit SampleUnit `yaml:"batch_unit"`
	// EvalBatch is the per-device evaluation batch. Default 0 (not given).
	EvalBatch int64 `yaml:"eval_batch"`
	// Precision is the arithmetic precision of compute and gradients.
	// Default fp32.
	Precision Precision `yaml:"precision"`
	// MasterWeights is the precision of the optimizer's copy of the
	// weights. Default fp32.
	MasterWeights Precision `yaml:"master_weights"`
	// BaseLR is the peak learning rate after warm-up. Required unless
	// listed in Unknown.
	BaseLR float64 `yaml:"base_lr"`
	// Schedule is the learning-rate schedule. Required.
	Schedule Schedule `yaml:"schedule"`
	// Warmup is the learning-rate warm-up. Default none.
	Warmup Warmup `yaml:"warmup"`
	// WeightDecay is the L2 weight-decay coefficient. Default 0.
	WeightDecay float64 `yaml:"weight_decay"`
	// Momentum is the momentum coefficient, in [0, 1). Required for
	// momentum, nesterov and lars unless listed in Unknown.
	Momentum float64 `yaml:"momentum"`
	// LARSEta is LARS's trust coefficient. Required for lars unless listed
	// in Unknown.
	LARSEta float64 `yaml:"lars_eta"`
	// Adam holds Adam's coefficients. Default nil: not given by the source.
	Adam *AdamParams `yaml:"adam"`
	// LabelSmoothing is the label-smoothing value, in [0, 1). Default 0.
	LabelSmoothing float64 `yaml:"label_smoothing"`
	// Epochs is the number of passes over the dataset to the target.
	// Exactly one of Epochs and Iterations is required.
	Epochs float64 `yaml:"epochs"`
	// Iterations is the number of updates (steps) to the target at
	// GlobalBatch.
	Iterations int64 `yaml:"iterations"`
	// Reached is where published runs of the recipe met its targets, when
	// that is before Epochs or Iterations; Steps counts it in their place.
	// Default nil: the runs train Epochs or Iterations.
	Reached *Reached `yaml:"reached"`
	// TimedRegion is what MLPerf's timing counts besides the steps: the
	// evaluation cadence and the start-up after run_start. Default nil:
	// no evaluations or start-up counted.
	TimedRegion *TimedRegion `yaml:"timed_region"`
	// Targets are the qualities to reach; the first is the primary one.
	// At least one is required.
	Targets []Target `yaml:"targets"`
	// MaxGlobalBatch is the largest global batch with which this recipe is
	// known to reach its targets. Default 0: unknown.
	MaxGlobalBatch int64 `yaml:"max_global_batch"`
	// Shortfall is a known quality loss beyond MaxGlobalBatch. Default nil.
	Shortfall *Shortfall `yaml:"shortfall"`
	// TimeToTrain lists published times to train with this recipe.
	TimeToTrain []Measurement `yaml:"time_to_train"`
	// Unknown lists hyperparameters the source does not give, so that
	// their absence is not an error: base_lr, momentum, lars_eta,
	// weight_decay, adam, schedule.milestones, schedule.end_lr.
	Unknown []string `yaml:"unknown"`
	// Notes qualify the recipe; free text, default empty.
	Notes string `yaml:"notes"`

	trainSamples int64 // the dataset's TrainSamples, set by Profiles
}

var unknownKeys = []string{"base_lr", "momentum", "lars_eta", "weight_decay", "adam", "schedule.milestones", "schedule.end_lr"}

// IsUnknown reports whether the recipe lists key as not given by its source.
func (r *Recipe) IsUnknown(key string) bool {
	for _, u := range r.Unknown {
		if u == key {
			return true
		}
	}
	return false
}

// Target returns the primary target, the first of Targets, or the zero
// Target when there is none.
func (r *Recipe) Target() Target {
	if len(r.Targets) == 0 {
		return Target{}
	}
	return r.Targets[0]
}

// TrainSamples returns the size of the recipe's training set, in its batch
// unit, as the profiles that loaded it give it; 0 for a recipe not loaded
// from profiles.
func (r *Recipe) TrainSamples() int64 { return r.trainSamples }

// StepsPerEpoch returns the updates of one epoch over trainSamples samples
// at globalBatch samples per update. Frameworks run the last, partial batch
// of an epoch (PyTorch's DataLoader with drop_last false, MXNet's padded
// round_batch), so it rounds up:
//
//	⌈trainSamples / globalBatch⌉
//
// It panics if globalBatch or trainSamples is not positive.
func (r *Recipe) StepsPerEpoch(globalBatch int, trainSamples int) int {
	return int(stepsPerEpoch(int64(globalBatch), int64(trainSamples)))
}

func stepsPerEpoch(b, n int64) int64 {
	if b <= 0 {
		panic(badGlobalBatch)
	}
	if n <= 0 {
		panic(badTrainSamples)
	}
	return (n + b - 1) / b
}

// Steps returns the updates the recipe takes to its target at globalBatch.
// A recipe given in epochs runs each whole epoch with StepsPerEpoch updates
// and a fraction f of a last epoch with ⌈f · StepsPerEpoch⌉:
//
//	⌊Epochs⌋ · ⌈N/B⌉ + ⌈(Epochs - ⌊Epochs⌋) · ⌈N/B⌉⌉
//
// with N the dataset's training samples and B = globalBatch. A recipe given
// in iterations keeps the samples it sees, Iterations · GlobalBatch, fixed:
//
//	⌈Iterations · GlobalBatch / B⌉
//
// Either way this is the same number of epochs as the reference run, which
// is what seed 000 defines updates by (epochs × dataset / batch); whether
// that still reaches the target at another batch is MaxGlobalBatch's
// question. With Reached set its epochs or iterations take the place of
// the recipe's, by the same rules. Steps panics if globalBatch is not
// positive or if the recipe was not obtained from a Profiles (which
// resolves its dataset).
func (r *Recipe) Steps(globalBatch int) int {
	b := int64(globalBatch)
	if b <= 0 {
		panic(badGlobalBatch)
	}
	epochs, iterations := r.Length()
	if epochs > 0 {
		if r.trainSamples <= 0 {
			panic(unlinkedRecipe)
		}
		spe := stepsPerEpoch(b, r.trainSamples)
		whole, frac := math.Modf(epochs)
		return int(int64(whole)*spe + int64(math.Ceil(frac*float64(spe))))
	}
	// Validate bounds Iterations and GlobalBatch to 1e9: the product fits.
	return int((iterations*r.GlobalBatch + b - 1) / b)
}

// Length returns the epochs or the iterations at GlobalBatch (the other
// is 0) that Steps counts: Reached's when it is set, else the recipe's.
func (r *Recipe) Length() (epochs float64, iterations int64) {
	if r.Reached != nil {
		return r.Reached.Epochs, r.Reached.Iterations
	}
	return r.Epochs, r.Iterations
}
