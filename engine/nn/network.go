package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"scaleplan/engine/tensor"
)

// ParamInfo locates one parameter tensor of a Network in its flat buffers,
// so that an optimizer can treat each tensor on its own (LARS trust
// ratios) or skip some kinds (no weight decay on biases and norms).
type ParamInfo struct {
	// Name is "<layer index>.<param name>", such as "0.weight" or
	// "3.bias", as in PyTorch's nn.Sequential.
	Name string

	// Layer is the index of the owning layer in Network.Layers.
	Layer int

	// Kind classifies the tensor; Kind.Decay says whether weight decay
	// conventionally applies.
	Kind Kind

	// Shape is the tensor's shape (see the layer docs for layouts).
	Shape []int

	// Offset is the index of the tensor's first element in
	// Network.Params and Network.Grads (Network.State for Kind Running).
	Offset int

	// Len is the number of elements.
	Len int

	// Params is the tensor's values, Network.Params[Offset:Offset+Len]
	// (a view of Network.State for Kind Running).
	Params []float32

	// Grads is the tensor's gradient, Network.Grads[Offset:Offset+Len];
	// nil for Kind Running.
	Grads []float32
}

// Network is a sequential stack of layers whose trainable parameters and
// gradients are each one contiguous slice, so that a data-parallel worker
// can all-reduce its whole gradient (or buckets of it) in place.
//
// Parameters are laid out layer by layer in forward order, each layer's
// tensors in the order of its Params method. Backward finishes the layers
// in reverse, so the gradient becomes final from the end of Grads towards
// the start; GradReady reports each finished range.
//
// A Network is not safe for concurrent use; use Clone for replicas.
type Network struct {
	// Layers are applied in order by Forward.
	Layers []Layer

	// Params holds every trainable parameter (kinds Weight, Bias, Norm);
	// each layer's tensors are views of it.
	Params []float32

	// Grads holds dL/dParams with the same layout as Params. Backward
	// adds into it; ZeroGrad clears it.
	Grads []float32

	// State holds the non-trained state (kind Running: BatchNorm running
	// means and variances); empty if the network has none.
	State []float32

	// InputGrad makes Backward compute and return dL/dx for the network
	// input. Default false: the input gradient is skipped, which saves
	// the first layer's largest product.
	InputGrad bool

	// GradReady, if not nil, is called during Backward after each layer
	// with trainable parameters has finished, with the range
	// Grads[lo:hi] that is now final for this step. Ranges arrive in
	// decreasing order and together cover Grads. Default nil.
	GradReady func(lo, hi int)

	params []ParamInfo // trainable tensors, in layout order
	state  []ParamInfo // Running tensors
	ranges [][2]int    // per layer, its range of Params

	// firstParam is the index of the first layer with trainable
	// parameters (len(Layers) if none): layers up to it need not
	// compute input gradients.
	firstParam int
}

// NewNetwork stacks layers into a Network, allocates the flat parameter,
// gradient and state buffers, binds every layer's Params to views of them
// and initialises them in layout order with draws from rng, so two
// networks built from identically seeded sources are bit-identical. It
// panics if rng is nil or a layer already belongs to a network.
func NewNetwork(rng *rand.Rand, layers ...Layer) *Network {
	if rng == nil {
		panic(badRNG)
	}
	n := build(layers)
	for _, l := range n.Layers {
		for _, p := range l.Params() {
			initParam(p, rng)
		}
	}
	return n
}

// build allocates the buffers of a network over layers and binds the
// layers' parameters, leaving them zero.
func build(layers []Layer) *Network {
	n := &Network{Layers: layers, ranges: make([][2]int, len(layers)), firstParam: len(layers)}
	var np, ns int
	for _, l := range layers {
		for _, p := range l.Params() {
			if p.Value != nil {
				panic(badBound)
			}
			if p.Kind.Trainable() {
				np += p.Len()
			} else {
				ns += p.Len()
			}
		}
	}
	n.Params = tensor.Alloc(np)
	n.Grads = tensor.Alloc(np)
	n.State = make([]float32, ns)
	var op, os int
	for i, l := range layers {
		n.ranges[i][0] = op
		for _, p := range l.Params() {
			m := p.Len()
			info := ParamInfo{
				Name:  fmt.Sprintf("%d.%s", i, p.Name),
				Layer: i,
				Kind:  p.Kind,
				Shape: append([]int(nil), p.Shape...),
				Len:   m,
			}
			if p.Kind.Trainable() {
				p.Value = n.Params[op : op+m : op+m]
				p.Grad = n.Grads[op : op+m : op+m]
				info.Offset, info.Params, info.Grads = op, p.Value, p.Grad
				n.params = append(n.params, info)
				op += m
			} else {
				p.Value = n.State[os : os+m : os+m]
				info.Offset, info.Params = os, p.Value
				n.state = append(n.state, info)
				os += m
			}
		}
		n.ranges[i][1] = op
		if f, ok := l.(flatBinder); ok {
			r := n.ranges[i]
			f.bindFlat(n.Params[r[0]:r[1]:r[1]], n.Grads[r[0]:r[1]:r[1]])
		}
		if op > n.ranges[i][0] && n.firstParam == len(layers) {
			n.firstParam = i
		}
	}
	return n
}

// flatBinder is implemented by layers that use their trainable
// parameters as one slice (in Params order), such as Conv2D, whose kernel
// and bias together form one matrix.
type flatBinder interface {
	bindFlat(params, grads []float32)
}

// initParam fills p.Value as p.Init says.
func initParam(p *Param, rng *rand.Rand) {
	switch p.Init {
	case Zeros:
		clear(p.Value)
	case Ones:
		for i := range p.Value {
			p.Value[i] = 1
		}
	case HeNormal:
		std := math.Sqrt(2 / float64(max(1, p.FanIn)))
		for i := range p.Value {
			p.Value[i] = float32(std * rng.NormFloat64())
		}
	default:
		panic(badConfig)
	}
}

// ParamGroups returns one entry per trainable parameter tensor, in layout
// order; the entries tile Params and Grads without gaps. The caller may
// keep and modify the returned slice; its Params and Grads fields are
// views of the network's buffers.
func (n *Network) ParamGroups() []ParamInfo { return append([]ParamInfo(nil), n.params...) }

// StateGroups returns one entry per tensor of State (BatchNorm running
// statistics), in layout order, or nil if there are none.
func (n *Network) StateGroups() []ParamInfo { return append([]ParamInfo(nil), n.state...) }

// NumParams returns the number of trainable parameters, len(Params).
func (n *Network) NumParams() int { return len(n.Params) }

// Forward runs the layers in order on the batch x, whose leading dimension
// is the batch, and returns the output, owned by the last layer and valid
// until the next Forward. train selects training-mode behaviour. x must
// not change until Backward has run.
func (n *Network) Forward(x *tensor.T, train bool) *tensor.T {
	for _, l := range n.Layers {
		x = l.Forward(x, train)
	}
	return x
}

// Backward propagates dy = dL/dy for the output of the most recent Forward
// through the layers in reverse, adding the parameter gradients into
// Grads, and calling GradReady as each layer finishes. It returns dL/dx
// for the network input if InputGrad is set, and nil otherwise. Layers
// before the first one with parameters are skipped unless InputGrad is
// set, and so is the input gradient of that first layer.
func (n *Network) Backward(dy *tensor.T) *tensor.T {
	// A layer's input gradient is needed only if a layer before it has
	// parameters, or the caller asked for dL/dx; layers before the first
	// with parameters then have nothing to do.
	stop := n.firstParam
	if n.InputGrad {
		stop = 0
	}
	for i := len(n.Layers) - 1; i >= stop; i-- {
		dy = n.Layers[i].Backward(dy, i > n.firstParam || n.InputGrad)
		if r := n.ranges[i]; n.GradReady != nil && r[1] > r[0] {
			n.GradReady(r[0], r[1])
		}
	}
	if !n.InputGrad {
		return nil
	}
	return dy
}

// ZeroGrad sets every element of Grads to 0.
func (n *Network) ZeroGrad() { clear(n.Grads) }

// Loss runs one batch through the network and the loss ce, returning the
// mean loss and the number of samples whose largest logit is at their
// label. With train set it runs Forward in training mode and then
// Backward, adding the gradient of the mean loss into Grads (call
// ZeroGrad first unless accumulating); otherwise it runs Forward in
// evaluation mode only.
func (n *Network) Loss(ce *CrossEntropy, x *tensor.T, labels []int, train bool) (loss float64, correct int) {
	y := n.Forward(x, train)
	loss = ce.Forward(y, labels)
	correct = Correct(y, labels)
	if train {
		n.Backward(ce.Backward())
	}
	return loss, correct
}

// Clone returns a deep copy of n: new layers with the same configuration
// and their own buffers, and copies of Params, Grads and State. The copy's
// GradReady is nil; InputGrad is copied.
func (n *Network) Clone() *Network {
	layers := make([]Layer, len(n.Layers))
	for i, l := range n.Layers {
		layers[i] = l.Clone()
	}
	c := build(layers)
	copy(c.Params, n.Params)
	copy(c.Grads, n.Grads)
	copy(c.State, n.State)
	c.InputGrad = n.InputGrad
	return c
}

// CopyFrom copies src's Params and State into n, which must have the same
// layout (typically a Clone of src). It panics otherwise.
func (n *Network) CopyFrom(src *Network) {
	if len(n.Params) != len(src.Params) || len(n.State) != len(src.State) || len(n.params) != len(src.params) {
		panic(badNetworkDst)
	}
	copy(n.Params, src.Params)
	copy(n.State, src.State)
}

// String lists the layers, one per line, with the parameter count.
func (n *Network) String() string {
	var b strings.Builder
	for i, l := range n.Layers {
		fmt.Fprintf(&b, "%d: %s\n", i, l)
	}
	fmt.Fprintf(&b, "%d parameters", len(n.Params))
	return b.String()
}
