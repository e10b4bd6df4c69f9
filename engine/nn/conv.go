package nn

import (
	"fmt"

	"scaleplan/engine/tensor"
)

// colBudget bounds the im2col buffer of one worker of a Conv2D, in bytes:
// each worker lowers as many whole samples at a time as fit, so that the
// columns stay in its core's cache between im2col and the product. A
// variable so that tests can force one sample at a time.
var colBudget = 1 << 20

// maxGroups is the number of sample groups a Conv2D splits a batch into
// (fewer if the batch is smaller): the unit of parallel work, and of the
// partial kernel gradients that are summed in order at the end.
const maxGroups = 16

// Conv2D is a two-dimensional convolution (cross-correlation, as in every
// deep-learning framework) over NHWC inputs [N, H, W, InC] with square
// k×k kernels, a stride and symmetric zero padding, giving
// [N, OH, OW, OutC] with
//
//	OH = (H + 2·pad - k)/stride + 1    (floor; likewise OW)
//	y[n,i,j,o] = b[o] + Σ_{p,q,c} x[n, i·stride+p-pad, j·stride+q-pad, c] · W[p,q,c,o]
//
// The kernel W is stored [k, k, InC, OutC] (HWIO, TensorFlow's layout).
// The layer lowers the convolution to matrix products (im2col): each
// output position becomes a row of the column matrix X̂ [rows, k·k·InC+1],
// ordered like W's leading dimensions and ending in a 1, so that with the
// bias as W's last row (it follows the kernel in Network.Params anyway)
//
//	forward   Y  = X̂·[W; b]          (sgemm NN)
//	backward  [dW; db] += X̂ᵀ·dY      (sgemm TN)
//	          dX̂ = dY·Wᵀ             (sgemm NT), then col2im adds dX̂ into dx
//
// In NHWC the product's rows are already the output's layout, so no
// result is transposed. The batch is split into up to 16 groups of
// consecutive samples that run in parallel; within a group a worker lowers
// a few samples at a time into its own cache-sized buffer (1 MiB) and
// multiplies on its own core. Backward recomputes the columns rather than
// keeping them for the whole batch, sums each group's kernel gradient
// separately and adds the group sums in order, so results do not depend
// on the number of threads. A 1×1 kernel with stride 1 and no padding
// uses x itself as X̂ (without the column of ones; the bias then takes
// separate passes).
//
// A 3×3 kernel of stride 1 over at least 8 input channels (SmallCNN's
// second layer) takes Winograd's F(2×2, 3×3) instead (winograd.go): 16
// products per group over the input's 4×4 tiles, each with 2.25 times
// fewer multiply-adds than the column matrix's, grouped, recomputed in
// backward and summed in order the same way.
//
// W is initialised HeNormal with fan-in k·k·InC, b to zero.
type Conv2D struct {
	inC, outC, k, stride, pad int
	w, b                      *Param

	// wb and gwb are the kernel and the bias as one [k·k·InC+1, OutC]
	// matrix, and its gradient: views of the network's buffers, where
	// the bias directly follows the kernel.
	wb, gwb []float32

	x                *tensor.T
	y, dx            tensor.T
	col, dcol, tile  [][]float32 // per worker
	part, colbuf     []float32
	u, zero          []float32 // Winograd: transformed kernel, zeros
	n, h, wd, oh, ow int
}

// bindFlat records the kernel and bias as one matrix.
func (l *Conv2D) bindFlat(params, grads []float32) { l.wb, l.gwb = params, grads }

// NewConv2D returns a convolution from inC to outC channels with a k×k
// kernel, the given stride and zero padding of pad on every side. It
// panics if a size or the stride is below 1 or pad is negative.
func NewConv2D(inC, outC, k, stride, pad int) *Conv2D {
	if inC < 1 || outC < 1 || k < 1 || stride < 1 || pad < 0 {
		panic(badConfig)
	}
	kd := k * k * inC
	return &Conv2D{
		inC: inC, outC: outC, k: k, stride: stride, pad: pad,
		w: newParam("weight", Weight, HeNormal, kd, k, k, inC, outC),
		b: newParam("bias", Bias, Zeros, kd, outC),
	}
}

// Params returns the kernel [k, k, InC, OutC] and the bias [OutC].
func (l *Conv2D) Params() []*Param { return []*Param{l.w, l.b} }

// identity reports whether the column matrix is the input itself.
func (l *Conv2D) identity() bool { return l.k == 1 && l.stride == 1 && l.pad == 0 }

// geometry returns the positions per sample p, the kernel rows kd, the
// width of a column row ld (kd+1 with the column of ones), the input and
// output elements per sample, the samples per group and the samples
// lowered at once.
func (l *Conv2D) geometry() (p, kd, ld, in, out, group, sub int) {
	p = l.oh * l.ow
	kd = l.k * l.k * l.inC
	ld = kd + 1
	if l.identity() {
		ld = kd
	}
	in = l.h * l.wd * l.inC
	out = p * l.outC
	group = max(1, (l.n+maxGroups-1)/maxGroups)
	sub = max(1, min(group, colBudget/(4*p*ld)))
	return
}

// perWorker returns bufs with at least workers entries; call it before a
// parallel loop, whose worker w then grows only bufs[w].
func perWorker(bufs [][]float32, workers int) [][]float32 {
	for len(bufs) < workers {
		bufs = append(bufs, nil)
	}
	return bufs
}

// Forward convolves x. It panics unless x has shape [N, H, W, InC] with
// H + 2·pad >= k and W + 2·pad >= k.
func (l *Conv2D) Forward(x *tensor.T, train bool) *tensor.T {
	if x.Rank() != 4 {
		panic(badRank)
	}
	if x.Shape[3] != l.inC {
		panic(badInput)
	}
	n, h, w := x.Shape[0], x.Shape[1], x.Shape[2]
	if h+2*l.pad < l.k || w+2*l.pad < l.k {
		panic(badSpatial)
	}
	l.x, l.n, l.h, l.wd = x, n, h, w
	l.oh = (h+2*l.pad-l.k)/l.stride + 1
	l.ow = (w+2*l.pad-l.k)/l.stride + 1
	l.y.Resize(n, l.oh, l.ow, l.outC)
	if l.winograd() {
		l.forwardWinograd()
		return &l.y
	}
	p, kd, ld, in, out, group, sub := l.geometry()
	l.col = perWorker(l.col, tensor.Workers(n, group))
	tensor.ParallelWorkers(n, group, func(wk, lo, hi int) {
		if l.identity() {
			fillRows(l.y.Data[lo*out:hi*out], l.b.Value, (hi-lo)*p)
			tensor.GemmSerial(false, false, (hi-lo)*p, l.outC, kd, 1, x.Data[lo*in:hi*in], kd, l.w.Value, l.outC, 1, l.y.Data[lo*out:hi*out], l.outC)
			return
		}
		for s0 := lo; s0 < hi; s0 += sub {
			nc := min(sub, hi-s0)
			col := grow(&l.col[wk], sub*p*ld)[:nc*p*ld]
			l.im2col(col, s0, nc)
			tensor.GemmSerial(false, false, nc*p, l.outC, ld, 1, col, ld, l.wb, l.outC, 0, l.y.Data[s0*out:(s0+nc)*out], l.outC)
		}
	})
	return &l.y
}

// im2col writes the column matrix of samples [n0, n0+nc) into col, each
// row ending in a 1.
func (l *Conv2D) im2col(col []float32, n0, nc int) {
	p, kd, k, c := l.oh*l.ow, l.k*l.k*l.inC, l.k, l.inC
	ld := kd + 1
	h, w, s, pad := l.h, l.wd, l.stride, l.pad
	for r := range nc * p {
		xs := l.x.Data[(n0+r/p)*h*w*c:]
		q := r % p
		i0, j0 := (q/l.ow)*s-pad, (q%l.ow)*s-pad
		dst := col[r*ld : (r+1)*ld]
		dst[kd] = 1
		for ki := range k {
			d := dst[ki*k*c : (ki+1)*k*c]
			ih := i0 + ki
			if ih < 0 || ih >= h {
				clear(d)
				continue
			}
			if j0 >= 0 && j0+k <= w {
				copy(d, xs[(ih*w+j0)*c:(ih*w+j0+k)*c])
				continue
			}
			for kj := range k {
				iw := j0 + kj
				if iw < 0 || iw >= w {
					clear(d[kj*c : (kj+1)*c])
				} else {
					copy(d[kj*c:(kj+1)*c], xs[(ih*w+iw)*c:(ih*w+iw+1)*c])
				}
			}
		}
	}
}

// col2im sets dx for samples [n0, n0+nc) to the sum of the column
// gradients dcol [rows, k·k·InC] over every position each input element
// was copied to.
func (l *Conv2D) col2im(dcol []float32, n0, nc int) {
	p, kd, k, c := l.oh*l.ow, l.k*l.k*l.inC, l.k, l.inC
	h, w, s, pad := l.h, l.wd, l.stride, l.pad
	in := h * w * c
	dx := l.dx.Data[n0*in : (n0+nc)*in]
	clear(dx)
	for r := range nc * p {
		dxs := dx[(r/p)*in : (r/p+1)*in]
		src := dcol[r*kd : (r+1)*kd]
		q := r % p
		i0, j0 := (q/l.ow)*s-pad, (q%l.ow)*s-pad
		for ki := range k {
			ih := i0 + ki
			if ih < 0 || ih >= h {
				continue
			}
			sr := src[ki*k*c : (ki+1)*k*c]
			if j0 >= 0 && j0+k <= w {
				tensor.AddScaled(dxs[(ih*w+j0)*c:(ih*w+j0+k)*c], 1, sr)
				continue
			}
			for kj := range k {
				if iw := j0 + kj; iw >= 0 && iw < w {
					tensor.AddScaled(dxs[(ih*w+iw)*c:(ih*w+iw+1)*c], 1, sr[kj*c:(kj+1)*c])
				}
			}
		}
	}
}

// Backward accumulates dW and db and returns dx if inputGrad is set.
func (l *Conv2D) Backward(dy *tensor.T, inputGrad bool) *tensor.T {
	if l.x == nil {
		panic(badOrder)
	}
	checkGrad(dy, &l.y)
	n := l.n
	if inputGrad {
		l.dx.Resize(l.x.Shape...)
	}
	if l.winograd() {
		l.backwardWinograd(dy, inputGrad)
		if !inputGrad {
			return nil
		}
		return &l.dx
	}
	p, kd, ld, in, out, group, sub := l.geometry()
	if l.identity() {
		addColSums(l.b.Grad, dy.Data, n*p, l.outC, &l.colbuf)
	}
	// Each group's gradient of [W; b] (of W alone for the identity).
	wsize := ld * l.outC
	groups := tensor.Chunks(n, group)
	part := grow(&l.part, groups*wsize)
	workers := tensor.Workers(n, group)
	l.col, l.dcol = perWorker(l.col, workers), perWorker(l.dcol, workers)
	tensor.ParallelWorkers(n, group, func(wk, lo, hi int) {
		pw := part[(lo/group)*wsize : (lo/group+1)*wsize]
		for s0 := lo; s0 < hi; s0 += sub {
			nc := min(sub, hi-s0)
			rows := nc * p
			var col []float32
			if l.identity() {
				col = l.x.Data[s0*in : (s0+nc)*in]
			} else {
				col = grow(&l.col[wk], sub*p*ld)[:rows*ld]
				l.im2col(col, s0, nc)
			}
			dyc := dy.Data[s0*out : (s0+nc)*out]
			beta := float32(1)
			if s0 == lo {
				beta = 0
			}
			tensor.GemmSerial(true, false, ld, l.outC, rows, 1, col, ld, dyc, l.outC, beta, pw, l.outC)
			if !inputGrad {
				continue
			}
			if l.identity() {
				tensor.GemmSerial(false, true, rows, kd, l.outC, 1, dyc, l.outC, l.w.Value, l.outC, 0, l.dx.Data[s0*in:(s0+nc)*in], kd)
				continue
			}
			dcol := grow(&l.dcol[wk], sub*p*kd)[:rows*kd]
			tensor.GemmSerial(false, true, rows, kd, l.outC, 1, dyc, l.outC, l.w.Value, l.outC, 0, dcol, kd)
			l.col2im(dcol, s0, nc)
		}
	})
	addGroupSums(l.gwb[:wsize], part, groups)
	if !inputGrad {
		return nil
	}
	return &l.dx
}

// Clone returns an unbound Conv2D with the same configuration.
func (l *Conv2D) Clone() Layer { return NewConv2D(l.inC, l.outC, l.k, l.stride, l.pad) }

// String returns "conv2d(InC→OutC, k×k, stride s, pad p)".
func (l *Conv2D) String() string {
	return fmt.Sprintf("conv2d(%d→%d, %d×%d, stride %d, pad %d)", l.inC, l.outC, l.k, l.k, l.stride, l.pad)
}

// addGroupSums adds the groups' partial sums, part's consecutive blocks of
// len(dst) values, into dst in group order, so that the result does not
// depend on how many threads computed them; the blocks are split over the
// threads, each adding every group into its own range of dst.
func addGroupSums(dst, part []float32, groups int) {
	if groups < 1 {
		return
	}
	size := len(dst)
	tensor.Parallel(size, elemGrain/max(1, groups), func(lo, hi int) {
		for g := range groups {
			tensor.AddScaled(dst[lo:hi], 1, part[g*size+lo:g*size+hi])
		}
	})
}
