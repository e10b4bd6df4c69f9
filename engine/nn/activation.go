package nn

import (
	"fmt"
	"math"

	"scaleplan/engine/tensor"
)

// ReLU is the rectifier
//
//	y = max(x, 0)      dx = dy · [y > 0]
//
// applied element by element to inputs of any shape.
type ReLU struct {
	// InPlace makes Forward rectify x in place and return x, and
	// Backward mask dy in place and return dy, as PyTorch's
	// ReLU(inplace=True): two fewer buffers and passes over memory. Set it
	// only when x is the output of a previous layer that does not need
	// that output in Backward (true of every layer in this package) and
	// never on a tensor the caller still needs. MLP and SmallCNN set it.
	// Default false.
	InPlace bool

	y       *tensor.T // the output of the last Forward: &own, or x in place
	own, dx tensor.T
}

// NewReLU returns a ReLU layer with its own output buffer.
func NewReLU() *ReLU { return &ReLU{} }

// newReLUInPlace returns a ReLU layer that works in place.
func newReLUInPlace() *ReLU { return &ReLU{InPlace: true} }

// Params returns nil: ReLU has no parameters.
func (l *ReLU) Params() []*Param { return nil }

// Forward returns max(x, 0).
func (l *ReLU) Forward(x *tensor.T, train bool) *tensor.T {
	l.y = x
	if !l.InPlace {
		l.own.Resize(x.Shape...)
		l.y = &l.own
	}
	y := l.y.Data
	tensor.Parallel(len(y), elemGrain, func(lo, hi int) {
		xs, ys := x.Data[lo:hi], y[lo:hi]
		for i, v := range xs {
			ys[i] = max(v, 0)
		}
	})
	return l.y
}

// Backward returns dy masked by the positive outputs if inputGrad is set.
func (l *ReLU) Backward(dy *tensor.T, inputGrad bool) *tensor.T {
	if l.y == nil {
		panic(badOrder)
	}
	checkGrad(dy, l.y)
	if !inputGrad {
		return nil
	}
	dx := dy
	if !l.InPlace {
		l.dx.Resize(l.y.Shape...)
		dx = &l.dx
	}
	y := l.y.Data
	tensor.Parallel(len(y), elemGrain, func(lo, hi int) {
		// Branch-free: the signs are random, so a branch mispredicts
		// half the time. y >= +0 always (max(x, 0) never gives -0), and
		// y > 0 exactly when its bits, as a signed integer, are > 0.
		ys, gs, ds := y[lo:hi], dy.Data[lo:hi], dx.Data[lo:hi]
		for i, g := range gs {
			keep := ^uint32((int32(math.Float32bits(ys[i])) - 1) >> 31)
			ds[i] = math.Float32frombits(math.Float32bits(g) & keep)
		}
	})
	return dx
}

// Clone returns a new ReLU layer with the same InPlace setting.
func (l *ReLU) Clone() Layer { return &ReLU{InPlace: l.InPlace} }

// String returns "relu" or "relu(in place)".
func (l *ReLU) String() string {
	if l.InPlace {
		return "relu(in place)"
	}
	return "relu"
}

// view is the shared machinery of Reshape and Flatten: it gives each
// sample a new shape without moving data.
type view struct {
	inShape []int
	y, dx   tensor.T
}

// forward returns x viewed as [N, shape...]. It panics if a sample of x
// does not hold as many elements as shape.
func (v *view) forward(x *tensor.T, shape []int) *tensor.T {
	if x.Rank() < 1 {
		panic(badRank)
	}
	n := x.Shape[0]
	per := 1
	for _, d := range shape {
		per *= d
	}
	if n*per != x.Len() {
		panic(badInput)
	}
	v.inShape = append(v.inShape[:0], x.Shape...)
	v.y.Shape = append(append(v.y.Shape[:0], n), shape...)
	v.y.Data = x.Data
	return &v.y
}

// backward returns dy viewed with the input's shape, or nil.
func (v *view) backward(dy *tensor.T, inputGrad bool) *tensor.T {
	if v.inShape == nil {
		panic(badOrder)
	}
	checkGrad(dy, &v.y)
	if !inputGrad {
		return nil
	}
	v.dx.Shape = append(v.dx.Shape[:0], v.inShape...)
	v.dx.Data = dy.Data
	return &v.dx
}

// Reshape gives each sample a new shape without moving data: [N, ...]
// becomes [N, shape...]. SmallCNN starts with NewReshape(28, 28, 1) so that
// it takes flat [N, 784] images as MLP does.
type Reshape struct {
	shape []int
	v     view
}

// NewReshape returns a layer that reshapes every sample to shape. It
// panics if a dimension is below 1.
func NewReshape(shape ...int) *Reshape {
	for _, d := range shape {
		if d < 1 {
			panic(badConfig)
		}
	}
	return &Reshape{shape: append([]int(nil), shape...)}
}

// Params returns nil: Reshape has no parameters.
func (l *Reshape) Params() []*Param { return nil }

// Forward returns a view of x with shape [N, shape...]. It panics if a
// sample of x does not hold as many elements as shape.
func (l *Reshape) Forward(x *tensor.T, train bool) *tensor.T { return l.v.forward(x, l.shape) }

// Backward returns a view of dy with the input's shape if inputGrad is
// set.
func (l *Reshape) Backward(dy *tensor.T, inputGrad bool) *tensor.T {
	return l.v.backward(dy, inputGrad)
}

// Clone returns a Reshape to the same shape.
func (l *Reshape) Clone() Layer { return NewReshape(l.shape...) }

// String returns "reshape(d1×d2×...)".
func (l *Reshape) String() string { return fmt.Sprintf("reshape(%s)", dims(l.shape)) }

// Flatten turns [N, d1, d2, ...] into [N, d1·d2·...] without moving data.
// After an NHWC convolution stack the features are ordered (h, w, c).
type Flatten struct {
	shape [1]int
	v     view
}

// NewFlatten returns a Flatten layer.
func NewFlatten() *Flatten { return &Flatten{} }

// Params returns nil: Flatten has no parameters.
func (l *Flatten) Params() []*Param { return nil }

// Forward returns a view of x with shape [N, d1·d2·...]. It panics if x
// has rank 0.
func (l *Flatten) Forward(x *tensor.T, train bool) *tensor.T {
	if x.Rank() < 1 {
		panic(badRank)
	}
	l.shape[0] = 1
	for _, d := range x.Shape[1:] {
		l.shape[0] *= d
	}
	return l.v.forward(x, l.shape[:])
}

// Backward returns a view of dy with the input's shape if inputGrad is
// set.
func (l *Flatten) Backward(dy *tensor.T, inputGrad bool) *tensor.T {
	return l.v.backward(dy, inputGrad)
}

// Clone returns a new Flatten layer.
func (l *Flatten) Clone() Layer { return NewFlatten() }

// String returns "flatten".
func (l *Flatten) String() string { return "flatten" }

// dims formats a shape as "28×28×1".
func dims(shape []int) string {
	s := ""
	for i, d := range shape {
		if i > 0 {
			s += "×"
		}
		s += fmt.Sprint(d)
	}
	return s
}
