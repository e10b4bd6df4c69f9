package nn

import (
	"fmt"

	"scaleplan/engine/tensor"
)

const (
	badRank       = "nn: input has the wrong number of dimensions"
	badInput      = "nn: input shape does not match the layer"
	badGrad       = "nn: output gradient shape does not match the last forward output"
	badOrder      = "nn: backward called before forward"
	badConfig     = "nn: invalid layer configuration"
	badSpatial    = "nn: input smaller than the kernel"
	badBound      = "nn: layer already belongs to a network"
	badRNG        = "nn: nil random source"
	badLabels     = "nn: number of labels does not match the batch"
	badLabel      = "nn: label out of range"
	badSmoothing  = "nn: label smoothing outside [0, 1)"
	badMeanOver   = "nn: negative MeanOver"
	badNetworkDst = "nn: networks have different layouts"
)

// Kind classifies a parameter tensor for optimizers and for the layout of a
// Network's flat buffers.
type Kind int

const (
	// Weight marks weight matrices and convolution kernels: the tensors
	// that weight decay and LARS trust ratios conventionally apply to.
	Weight Kind = iota
	// Bias marks additive biases.
	Bias
	// Norm marks the scale (gamma) and shift (beta) of normalisation layers.
	Norm
	// Running marks running statistics of BatchNorm: state that is updated
	// in training mode but not trained, so it lives in Network.State and
	// has no gradient.
	Running
)

// String returns "weight", "bias", "norm" or "running".
func (k Kind) String() string {
	switch k {
	case Weight:
		return "weight"
	case Bias:
		return "bias"
	case Norm:
		return "norm"
	case Running:
		return "running"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Trainable reports whether parameters of kind k have gradients and live
// in Network.Params (every kind but Running).
func (k Kind) Trainable() bool { return k != Running }

// Decay reports whether weight decay and LARS layer-wise scaling
// conventionally apply to parameters of kind k: true for Weight only;
// biases and normalisation parameters are excluded (Goyal et al. 2017,
// You et al. 2017).
func (k Kind) Decay() bool { return k == Weight }

// Init says how NewNetwork initialises a parameter tensor.
type Init int

const (
	// Zeros sets every element to 0.
	Zeros Init = iota
	// Ones sets every element to 1.
	Ones
	// HeNormal draws every element from the normal distribution
	//
	//	N(0, 2/FanIn)
	//
	// (He et al. 2015, "kaiming_normal" with fan-in mode), which keeps the
	// activation variance constant through ReLU layers.
	HeNormal
)

// Param describes one parameter tensor of a layer. A layer creates its
// Params with Shape, Kind, Init and FanIn set; NewNetwork (and
// Network.Clone) sets Value and Grad to views of the network's flat
// buffers.
type Param struct {
	// Name identifies the tensor within its layer: "weight", "bias",
	// "scale", "shift", "mean" or "var".
	Name string

	// Kind classifies the tensor.
	Kind Kind

	// Shape is the tensor's shape; its product is len(Value).
	Shape []int

	// Init is the initialisation NewNetwork applies.
	Init Init

	// FanIn is the number of inputs per output unit, used by HeNormal.
	FanIn int

	// Value holds the elements: a view of Network.Params, or of
	// Network.State for Kind Running. Nil until bound.
	Value []float32

	// Grad holds the accumulated gradient dL/dValue: a view of
	// Network.Grads; nil for Kind Running and until bound.
	Grad []float32
}

// Len returns the number of elements of the tensor p describes.
func (p *Param) Len() int {
	n := 1
	for _, d := range p.Shape {
		n *= d
	}
	return n
}

// Layer is one stage of a sequential network. The leading dimension of
// every input and output is the batch; any batch size >= 1 is accepted, and
// a layer reuses its buffers across calls, growing them only when the batch
// grows.
//
// A layer is not safe for concurrent use; replicas for data parallelism
// are made with Network.Clone.
type Layer interface {
	// Params returns the layer's parameter tensors in layout order; a
	// layer without parameters returns nil.
	Params() []*Param

	// Forward computes the output for the batch x. The result is owned
	// by the layer and stays valid until the next call to Forward; the
	// layer keeps a reference to x for Backward, so x must not change in
	// between. train selects training-mode behaviour (batch statistics
	// in BatchNorm).
	Forward(x *tensor.T, train bool) *tensor.T

	// Backward takes dy = dL/dy for the output of the most recent
	// Forward, adds dL/dθ into the Grad of each of the layer's Params
	// (gradients accumulate until Network.ZeroGrad), and returns dL/dx if
	// inputGrad is true, or nil otherwise. The result is owned by the
	// layer and may share storage with dy.
	Backward(dy *tensor.T, inputGrad bool) *tensor.T

	// Clone returns a layer with the same configuration, its own buffers,
	// and new, unbound Params.
	Clone() Layer

	// String describes the layer, such as "conv2d(1→32, 3×3, stride 1, pad 0)".
	String() string
}

// newParam returns an unbound parameter descriptor.
func newParam(name string, kind Kind, init Init, fanIn int, shape ...int) *Param {
	return &Param{Name: name, Kind: kind, Init: init, FanIn: fanIn, Shape: shape}
}

// sameShape reports whether a has exactly the dimensions dims.
func sameShape(a []int, dims ...int) bool {
	if len(a) != len(dims) {
		return false
	}
	for i, d := range dims {
		if a[i] != d {
			return false
		}
	}
	return true
}

// checkGrad panics unless dy has the shape of the forward output y.
func checkGrad(dy, y *tensor.T) {
	if !dy.SameShape(y) {
		panic(badGrad)
	}
}
