package model

import (
	"fmt"

	"scaleplan/internal/units"
)

// Programmer-error panic messages.
const (
	badBytesPerParam = "model: bytes per parameter must be positive"
	badPrecision     = "model: unknown precision"
	badGlobalBatch   = "model: global batch must be positive"
	badTrainSamples  = "model: training-set size must be positive"
	unlinkedRecipe   = "model: recipe not resolved against its dataset; obtain it from a Profiles"
)

// SampleUnit is what one sample of a dataset is, and so the unit of batch
// sizes and of the per-sample costs of the models trained on it.
type SampleUnit string

// The sample units.
const (
	Image    SampleUnit = "image"    // one picture
	Sentence SampleUnit = "sentence" // one source/target sentence pair
	Token    SampleUnit = "token"    // one source/target token pair
)

var sampleUnits = []string{string(Image), string(Sentence), string(Token)}

// Dataset is a training set as the input pipeline sees it.
type Dataset struct {
	// Name is the dataset's key in its profile file.
	Name string `yaml:"-"`
	// Description says what the dataset is; free text, default empty.
	Description string `yaml:"description"`
	// SampleUnit is what one sample is: image, sentence or token.
	// Default image.
	SampleUnit SampleUnit `yaml:"sample_unit"`
	// TrainSamples is the number of training samples in one epoch. Required.
	TrainSamples int64 `yaml:"train_samples"`
	// EvalSamples is the number of evaluation samples. Default 0 (none).
	EvalSamples int64 `yaml:"eval_samples"`
	// BytesPerSample is the mean stored size of one sample as read from
	// storage (a JPEG file, a record of token ids), in bytes. Required, 1 B
	// to 1 TiB.
	BytesPerSample units.Bytes `yaml:"bytes_per_sample"`
	// InputShape is the shape of one sample as fed to the model after
	// decoding and augmentation, outermost first (height, width,
	// channels for images; 1 for a token). Required.
	InputShape []int `yaml:"input_shape"`
	// CPUSecondsPerSample is the CPU time to decode and augment one sample,
	// in core-seconds on the reference core (one 2.5 GHz Xeon core running
	// libjpeg-turbo and the framework's augmentation). The input pipeline
	// divides it over the host's cores. Default 0 (free); else 1 ns to
	// 1000 s.
	CPUSecondsPerSample units.Seconds `yaml:"cpu_seconds_per_sample"`
}

// TrainBytes returns the stored size of the training set, TrainSamples ·
// BytesPerSample.
func (d *Dataset) TrainBytes() units.Bytes {
	return units.Bytes(float64(d.TrainSamples) * float64(d.BytesPerSample))
}

// InputElements returns the number of elements of one model input, the
// product of InputShape.
func (d *Dataset) InputElements() int64 {
	n := int64(1)
	for _, s := range d.InputShape {
		n *= int64(s)
	}
	return n
}

// Class is the kind of computation a model is made of, which sets its
// efficiency on a roofline.
type Class string

// The model classes.
const (
	DenseConv     Class = "dense-conv"     // ordinary convolutions (ResNet, SSD, Mask R-CNN)
	DepthwiseConv Class = "depthwise-conv" // depthwise and grouped convolutions (EfficientNet): memory-bound
	Transformer   Class = "transformer"    // attention and large matrix products
	RNN           Class = "rnn"            // recurrent layers (LSTM)
	MLP           Class = "mlp"            // dense layers only
)

var classes = []string{string(DenseConv), string(DepthwiseConv), string(Transformer), string(RNN), string(MLP)}

// DefaultEfficiency returns the fraction of a device's peak FLOP/s at the
// chosen precision that a model of class c reaches when no calibration
// exists. The figures are rough assumptions, documented in docs/models.md:
//
//	dense-conv      0.35  ResNet-50 on V100: about 0.6 of FP32 peak, 0.27 of FP16 tensor-core peak
//	depthwise-conv  0.10  memory-bound; the roofline's bytes term usually dominates
//	transformer     0.40
//	rnn             0.25
//	mlp             0.30  tiny models are bound by the host, not the device (seed 003)
//
// It returns 0 for an unknown class.
func (c Class) DefaultEfficiency() float64 {
	switch c {
	case DenseConv:
		return 0.35
	case DepthwiseConv:
		return 0.10
	case Transformer:
		return 0.40
	case RNN:
		return 0.25
	case MLP:
		return 0.30
	}
	return 0
}

// Precision is a number format for weights, gradients or activations.
type Precision string

// The precisions.
const (
	FP32 Precision = "fp32"
	FP16 Precision = "fp16"
	BF16 Precision = "bf16"
)

var precisions = []string{string(FP32), string(FP16), string(BF16)}

// ParsePrecision returns the precision named s.
func ParsePrecision(s string) (Precision, error) {
	p := Precision(s)
	if p.valid() {
		return p, nil
	}
	return "", fmt.Errorf("unknown precision %q (valid: fp32, fp16, bf16)", s)
}

func (p Precision) valid() bool { return p == FP32 || p == FP16 || p == BF16 }

// Size returns the bytes one value of precision p takes: 4 for fp32, 2 for
// fp16 and bf16. It panics for any other precision.
func (p Precision) Size() float64 {
	switch p {
	case FP32:
		return 4
	case FP16, BF16:
		return 2
	}
	panic(badPrecision)
}

// Layer is one entry of a model's gradient layout: a layer, block or
// parameter tensor whose gradient the backward pass releases at once.
type Layer struct {
	// Name is the layer's name, such as "layer4.2.conv3". Required.
	Name string `yaml:"name"`
	// Params is the number of trainable parameters. Required, positive.
	Params int64 `yaml:"params"`
	// NormOrBias marks normalization scales and shifts and biases, which
	// LARS and weight decay usually leave out. Default false.
	NormOrBias bool `yaml:"norm_or_bias"`
}

// Activations is the memory one training sample's stored activations take.
type Activations struct {
	// FP32 is the stored activation bytes per sample in fp32. Required, 1 B
	// to 1 TiB.
	FP32 units.Bytes `yaml:"fp32"`
	// FP16 is the stored activation bytes per sample in fp16 or bf16.
	// Default FP32/2; else 0.5 B to 1 TiB.
	FP16 units.Bytes `yaml:"fp16"`
	// Transient is the bytes per sample the backward pass allocates
	// beyond the stored activations at its peak, whatever the precision:
	// PyTorch's cross-entropy over a language model's logits allocates
	// two float32 tensors of them, nll_loss's gradient and log_softmax's
	// (8·s·V a sequence of s tokens over V logits). Held for one
	// micro-batch at a time, by the device holding the loss. Default 0;
	// else 1 B to 1 TiB.
	Transient units.Bytes `yaml:"transient"`
}

// Model is a hardware-independent cost profile of one neural network.
type Model struct {
	// Name is the model's key in its profile file.
	Name string `yaml:"-"`
	// Description says what the model is; free text, default empty.
	Description string `yaml:"description"`
	// Task is what the model does, such as "image-classification". Required.
	Task string `yaml:"task"`
	// Dataset names the dataset the model is profiled on; the per-sample
	// figures below are for its samples. Required.
	Dataset string `yaml:"dataset"`
	// Params is the number of trainable parameters, the ones that get a
	// gradient. Required, positive.
	Params int64 `yaml:"params"`
	// FrozenParams is the number of further parameters that are stored but
	// not trained (a frozen backbone stem). Default 0.
	FrozenParams int64 `yaml:"frozen_params"`
	// ForwardFLOPs is the forward pass's floating-point operations per
	// sample, counting a multiply-add as 2 FLOPs. Required, 1 to 1e18.
	ForwardFLOPs units.FLOPs `yaml:"forward_flops"`
	// Activations is the stored activation memory per training sample.
	Activations Activations `yaml:"activations"`
	// Class is the model class for the roofline. Required.
	Class Class `yaml:"class"`
	// Efficiency is the fraction of a device's peak FLOP/s the model reaches,
	// 0.001 to 1. Default (0) Class.DefaultEfficiency().
	Efficiency float64 `yaml:"efficiency"`
	// Layers is the gradient layout in backward order (last layer first);
	// the parameters sum to Params. Default: one layer holding all Params.
	Layers []Layer `yaml:"layers"`
}

// GradientBytes returns the size of one full gradient in precision p:
//
//	Params · p.Size()
//
// It panics if p is not a known precision.
func (m *Model) GradientBytes(p Precision) units.Bytes {
	return units.Bytes(float64(m.Params) * p.Size())
}

// WeightBytes returns the size of all weights, trained and frozen, in
// precision p. It panics if p is not a known precision.
func (m *Model) WeightBytes(p Precision) units.Bytes {
	return units.Bytes(float64(m.Params+m.FrozenParams) * p.Size())
}

// TrainFLOPsPerSample returns the floating-point operations of one training
// sample: a forward pass and a backward pass that costs about twice the
// forward (a gradient for the activations and one for the weights):
//
//	3 · ForwardFLOPs
func (m *Model) TrainFLOPsPerSample() units.FLOPs {
	return 3 * m.ForwardFLOPs
}

// ActivationBytes returns the stored activation bytes of one training
// sample in precision p: Activations.FP32 for fp32, Activations.FP16 (or
// half of FP32 when that is unset) for fp16 and bf16. It panics if p is
// not a known precision.
func (m *Model) ActivationBytes(p Precision) units.Bytes {
	switch p {
	case FP32:
		return m.Activations.FP32
	case FP16, BF16:
		if m.Activations.FP16 > 0 {
			return m.Activations.FP16
		}
		return m.Activations.FP32 / 2
	}
	panic(badPrecision)
}

// TrainMemoryTraffic estimates the device-memory bytes one training sample
// moves, for the memory term of a roofline: each stored activation is
// written in the forward pass and read in the backward pass, and its
// gradient is written and read once:
//
//	4 · ActivationBytes(p)
//
// Weight traffic is left out; it is shared by the whole batch.
func (m *Model) TrainMemoryTraffic(p Precision) units.Bytes {
	return 4 * m.ActivationBytes(p)
}

// EffectiveEfficiency returns Efficiency, or the class default when it is
// unset.
func (m *Model) EffectiveEfficiency() float64 {
	if m.Efficiency > 0 {
		return m.Efficiency
	}
	return m.Class.DefaultEfficiency()
}

// layout returns the gradient layout, or one layer of all parameters when
// none is given.
func (m *Model) layout() []Layer {
	if len(m.Layers) > 0 {
		return m.Layers
	}
	return []Layer{{Name: m.Name, Params: m.Params}}
}

// Buckets groups the gradient layout, in backward order, into all-reduce
// buckets of about size bytes with bytesPerParam bytes per gradient value,
// and returns each bucket's bytes in the order the backward pass fills
// them. A bucket closes when adding the next layer would take it over
// size; a layer larger than size is a bucket of its own. A size of 0 or
// less gives one bucket per layer. PyTorch DDP's smaller first bucket is
// not modelled.
//
// It panics if bytesPerParam is not positive.
func (m *Model) Buckets(size units.Bytes, bytesPerParam float64) []units.Bytes {
	if !(bytesPerParam > 0) {
		panic(badBytesPerParam)
	}
	var out []units.Bytes
	var cur units.Bytes
	open := false
	for _, l := range m.layout() {
		b := units.Bytes(float64(l.Params) * bytesPerParam)
		if open && cur+b > size {
			out = append(out, cur)
			cur, open = 0, false
		}
		cur += b
		open = true
	}
	if open {
		out = append(out, cur)
	}
	return out
}
