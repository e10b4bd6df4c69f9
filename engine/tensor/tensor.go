package tensor

const (
	badShape    = "tensor: negative dimension"
	badData     = "tensor: data length does not match shape"
	badReshape  = "tensor: reshape changes the number of elements"
	badSize     = "tensor: tensor sizes do not match"
	badMatrix   = "tensor: matrix operand is not two-dimensional"
	badMatMul   = "tensor: matrix dimensions do not match"
	badGemm     = "tensor: gemm operand too short for its dimensions"
	badLeading  = "tensor: gemm leading dimension too small"
	badGemmDims = "tensor: negative gemm dimension"
)

// T is a dense float32 tensor stored in row-major order: the last dimension
// varies fastest, so the element at index (i0, i1, ..., ik) of a tensor with
// shape (d0, d1, ..., dk) is
//
//	Data[((i0*d1 + i1)*d2 + ...)*dk + ik]
//
// The zero value is an empty tensor with no dimensions and no data; Resize
// gives it a shape. Several tensors may share one Data slice (see Reshape
// and FromData); T never copies behind the caller's back.
type T struct {
	// Shape is the extent of each dimension, outermost first.
	// A rank-0 tensor (empty Shape) holds one element.
	Shape []int

	// Data holds the elements; len(Data) is the product of Shape.
	Data []float32
}

// New returns a zeroed tensor with the given shape. It panics if a
// dimension is negative.
func New(shape ...int) *T {
	n := size(shape)
	return &T{Shape: append([]int(nil), shape...), Data: make([]float32, n)}
}

// FromData returns a tensor with the given shape that uses data as its
// storage (no copy). It panics if len(data) is not the product of shape.
func FromData(data []float32, shape ...int) *T {
	if len(data) != size(shape) {
		panic(badData)
	}
	return &T{Shape: append([]int(nil), shape...), Data: data}
}

// size returns the number of elements of a tensor with the given shape.
func size(shape []int) int {
	n := 1
	for _, d := range shape {
		if d < 0 {
			panic(badShape)
		}
		n *= d
	}
	return n
}

// Len returns the number of elements of t, the product of its shape.
func (t *T) Len() int { return len(t.Data) }

// Rank returns the number of dimensions of t.
func (t *T) Rank() int { return len(t.Shape) }

// Dim returns the extent of dimension i. Negative i counts from the end:
// Dim(-1) is the innermost dimension.
func (t *T) Dim(i int) int {
	if i < 0 {
		i += len(t.Shape)
	}
	return t.Shape[i]
}

// Reshape returns a tensor that shares t's data with a new shape. It panics
// if the new shape holds a different number of elements.
func (t *T) Reshape(shape ...int) *T {
	if size(shape) != len(t.Data) {
		panic(badReshape)
	}
	return &T{Shape: append([]int(nil), shape...), Data: t.Data}
}

// Resize gives t the shape in place, reusing t's storage when its capacity
// suffices and allocating new storage otherwise. The contents after Resize
// are unspecified; it exists so that layers can keep one buffer across steps
// whose batch size varies. It panics if a dimension is negative.
func (t *T) Resize(shape ...int) {
	n := size(shape)
	t.Shape = append(t.Shape[:0], shape...)
	if cap(t.Data) >= n {
		t.Data = t.Data[:n]
		return
	}
	t.Data = Alloc(n)
}

// SameShape reports whether t and u have identical shapes.
func (t *T) SameShape(u *T) bool {
	if len(t.Shape) != len(u.Shape) {
		return false
	}
	for i, d := range t.Shape {
		if u.Shape[i] != d {
			return false
		}
	}
	return true
}

// Clone returns a deep copy of t.
func (t *T) Clone() *T {
	return &T{
		Shape: append([]int(nil), t.Shape...),
		Data:  append([]float32(nil), t.Data...),
	}
}

// CopyFrom copies the elements of src into t. It panics if the two hold a
// different number of elements; shapes are not compared.
func (t *T) CopyFrom(src *T) {
	if len(src.Data) != len(t.Data) {
		panic(badSize)
	}
	copy(t.Data, src.Data)
}

// Zero sets every element of t to 0.
func (t *T) Zero() { clear(t.Data) }

// Alloc returns a new zeroed slice of n values. On Linux the whole 2 MiB
// pages inside it are advised to the kernel for transparent huge pages
// (see adviseHuge), so that the matrix products that stream through a
// large operand miss the TLB less.
func Alloc(n int) []float32 {
	s := make([]float32, n)
	adviseHuge(s)
	return s
}
