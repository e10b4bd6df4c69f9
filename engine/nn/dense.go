package nn

import (
	"fmt"

	"scaleplan/engine/tensor"
)

// Dense is a fully connected layer
//
//	y = x·W + b
//
// on inputs of shape [N, In], giving [N, Out]. W is stored In×Out
// row-major (TensorFlow's kernel layout, the transpose of PyTorch's
// Linear.weight) so that the forward product needs no transposition:
//
//	forward   y  = x·W        (sgemm NN, bias pre-loaded into y)
//	backward  dW += xᵀ·dy     (sgemm TN)
//	          db += Σ_n dy
//	          dx = dy·Wᵀ      (sgemm NT)
//
// W is initialised HeNormal with fan-in In, b to zero.
type Dense struct {
	in, out int
	w, b    *Param

	x      *tensor.T
	y, dx  tensor.T
	colbuf []float32
}

// NewDense returns a Dense layer with in inputs and out outputs. It panics
// if either is below 1.
func NewDense(in, out int) *Dense {
	if in < 1 || out < 1 {
		panic(badConfig)
	}
	return &Dense{
		in:  in,
		out: out,
		w:   newParam("weight", Weight, HeNormal, in, in, out),
		b:   newParam("bias", Bias, Zeros, in, out),
	}
}

// Params returns the weight [In, Out] and the bias [Out].
func (l *Dense) Params() []*Param { return []*Param{l.w, l.b} }

// Forward computes x·W + b. It panics unless x has shape [N, In].
func (l *Dense) Forward(x *tensor.T, train bool) *tensor.T {
	if x.Rank() != 2 {
		panic(badRank)
	}
	if x.Shape[1] != l.in {
		panic(badInput)
	}
	n := x.Shape[0]
	l.x = x
	l.y.Resize(n, l.out)
	fillRows(l.y.Data, l.b.Value, n)
	tensor.Gemm(false, false, n, l.out, l.in, 1, x.Data, l.in, l.w.Value, l.out, 1, l.y.Data, l.out)
	return &l.y
}

// Backward accumulates dW and db and returns dx if inputGrad is set.
func (l *Dense) Backward(dy *tensor.T, inputGrad bool) *tensor.T {
	if l.x == nil {
		panic(badOrder)
	}
	checkGrad(dy, &l.y)
	n := l.x.Shape[0]
	tensor.Gemm(true, false, l.in, l.out, n, 1, l.x.Data, l.in, dy.Data, l.out, 1, l.w.Grad, l.out)
	addColSums(l.b.Grad, dy.Data, n, l.out, &l.colbuf)
	if !inputGrad {
		return nil
	}
	l.dx.Resize(n, l.in)
	tensor.Gemm(false, true, n, l.in, l.out, 1, dy.Data, l.out, l.w.Value, l.out, 0, l.dx.Data, l.in)
	return &l.dx
}

// Clone returns an unbound Dense layer of the same size.
func (l *Dense) Clone() Layer { return NewDense(l.in, l.out) }

// String returns "dense(In→Out)".
func (l *Dense) String() string { return fmt.Sprintf("dense(%d→%d)", l.in, l.out) }
