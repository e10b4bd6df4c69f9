package nn

import (
	"fmt"

	"scaleplan/engine/tensor"
)

// MaxPool is two-dimensional max pooling over NHWC inputs [N, H, W, C]
// with a k×k window, a stride and no padding ("valid"), giving
// [N, OH, OW, C] with
//
//	OH = (H - k)/stride + 1    (floor; likewise OW)
//	y[n,i,j,c] = max_{p,q < k} x[n, i·stride+p, j·stride+q, c]
//
// Backward routes each output gradient to the input element that held the
// maximum (the first one in row-major window order on ties), adding where
// windows overlap.
type MaxPool struct {
	k, stride int

	x     *tensor.T
	y, dx tensor.T
	arg   []int32 // per output element, the offset of its maximum within the sample
}

// NewMaxPool returns a k×k max pooling with the given stride (2, 2 for
// the usual halving). It panics if k or stride is below 1.
func NewMaxPool(k, stride int) *MaxPool {
	if k < 1 || stride < 1 {
		panic(badConfig)
	}
	return &MaxPool{k: k, stride: stride}
}

// Params returns nil: max pooling has no parameters.
func (l *MaxPool) Params() []*Param { return nil }

// Forward pools x. It panics unless x has shape [N, H, W, C] with H and W
// at least k.
func (l *MaxPool) Forward(x *tensor.T, train bool) *tensor.T {
	if x.Rank() != 4 {
		panic(badRank)
	}
	n, h, w, c := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	if h < l.k || w < l.k {
		panic(badSpatial)
	}
	oh, ow := (h-l.k)/l.stride+1, (w-l.k)/l.stride+1
	l.x = x
	l.y.Resize(n, oh, ow, c)
	out := oh * ow * c
	if cap(l.arg) < n*out {
		l.arg = make([]int32, n*out)
	}
	l.arg = l.arg[:n*out]
	in := h * w * c
	tensor.Parallel(n, max(1, elemGrain/max(1, in)), func(lo, hi int) {
		for s := lo; s < hi; s++ {
			xs := x.Data[s*in : (s+1)*in]
			for i := range oh {
				for j := range ow {
					o := ((s*oh+i)*ow + j) * c
					ys, as := l.y.Data[o:o+c], l.arg[o:o+c]
					base := (i*l.stride*w + j*l.stride) * c
					copy(ys, xs[base:base+c])
					for ch := range as {
						as[ch] = int32(base + ch)
					}
					for p := range l.k {
						for q := range l.k {
							if p == 0 && q == 0 {
								continue
							}
							off := ((i*l.stride+p)*w + j*l.stride + q) * c
							src := xs[off : off+c]
							ys, as := ys[:len(src)], as[:len(src)]
							for ch, v := range src {
								// Written for conditional moves: the
								// comparisons are data-dependent and a
								// branch would mispredict often.
								m, a := ys[ch], as[ch]
								if v > m {
									a = int32(off + ch)
								}
								as[ch] = a
								ys[ch] = max(m, v)
							}
						}
					}
				}
			}
		}
	})
	return &l.y
}

// Backward returns dx if inputGrad is set; max pooling has no parameters.
func (l *MaxPool) Backward(dy *tensor.T, inputGrad bool) *tensor.T {
	if l.x == nil {
		panic(badOrder)
	}
	checkGrad(dy, &l.y)
	if !inputGrad {
		return nil
	}
	l.dx.Resize(l.x.Shape...)
	n := l.x.Shape[0]
	in := l.x.Len() / max(1, n)
	out := l.y.Len() / max(1, n)
	tensor.Parallel(n, max(1, elemGrain/max(1, in)), func(lo, hi int) {
		for s := lo; s < hi; s++ {
			dx := l.dx.Data[s*in : (s+1)*in]
			clear(dx)
			for o, a := range l.arg[s*out : (s+1)*out] {
				dx[a] += dy.Data[s*out+o]
			}
		}
	})
	return &l.dx
}

// Clone returns a MaxPool with the same window and stride.
func (l *MaxPool) Clone() Layer { return NewMaxPool(l.k, l.stride) }

// String returns "maxpool(k×k, stride s)".
func (l *MaxPool) String() string {
	return fmt.Sprintf("maxpool(%d×%d, stride %d)", l.k, l.k, l.stride)
}
