package nn

import (
	"fmt"
	"math"

	"scaleplan/engine/tensor"
)

// GroupNorm is group normalisation (Wu & He 2018) over inputs whose last
// dimension is the channel, [N, ..., C] (NHWC for images, [N, C] after a
// Dense). The C channels are split into G groups of C/G consecutive
// channels; each sample and group is normalised over its S·C/G elements
// (S the product of the middle dimensions) and then scaled and shifted per
// channel:
//
//	μ, σ² = mean and (biased) variance of x over the group
//	x̂ = (x - μ) / sqrt(σ² + ε)
//	y = γ_c · x̂ + β_c
//
// It behaves the same in training and evaluation and does not depend on
// the batch, which makes it a common choice for small per-replica batches.
// γ (scale) starts at 1 and β (shift) at 0; both are of kind Norm.
type GroupNorm struct {
	groups, c int
	// Eps is ε in the formula above. Default 1e-5.
	Eps float64

	gamma, beta *Param

	x          *tensor.T
	y, dx      tensor.T
	mean, rstd []float64 // per sample and group
	part       []float64 // per sample: Σdy·x̂ and Σdy per channel
	gsum       []float64 // per sample and group: Σdx̂ and Σdx̂·x̂
}

// NewGroupNorm returns a GroupNorm of c channels in groups groups. It
// panics unless groups >= 1 divides c.
func NewGroupNorm(groups, c int) *GroupNorm {
	if groups < 1 || c < 1 || c%groups != 0 {
		panic(badConfig)
	}
	return &GroupNorm{
		groups: groups, c: c, Eps: 1e-5,
		gamma: newParam("scale", Norm, Ones, 1, c),
		beta:  newParam("shift", Norm, Zeros, 1, c),
	}
}

// Params returns the scale γ [C] and the shift β [C].
func (l *GroupNorm) Params() []*Param { return []*Param{l.gamma, l.beta} }

// Forward normalises x. It panics unless x has rank >= 2 and last
// dimension C.
func (l *GroupNorm) Forward(x *tensor.T, train bool) *tensor.T {
	if x.Rank() < 2 {
		panic(badRank)
	}
	if x.Dim(-1) != l.c {
		panic(badInput)
	}
	n := x.Shape[0]
	l.x = x
	l.y.Resize(x.Shape...)
	g, c, cg := l.groups, l.c, l.c/l.groups
	in := x.Len() / max(1, n)
	s := in / c
	mean, rstd := grow64(&l.mean, n*g), grow64(&l.rstd, n*g)
	gamma, beta := l.gamma.Value, l.beta.Value
	tensor.Parallel(n, 1, func(lo, hi int) {
		for sm := lo; sm < hi; sm++ {
			xs, ys := x.Data[sm*in:(sm+1)*in], l.y.Data[sm*in:(sm+1)*in]
			mu, rs := mean[sm*g:(sm+1)*g], rstd[sm*g:(sm+1)*g]
			clear(mu)
			clear(rs)
			for p := range s {
				row := xs[p*c : (p+1)*c]
				for gi := range g {
					var a float64
					for _, v := range row[gi*cg : (gi+1)*cg] {
						a += float64(v)
					}
					mu[gi] += a
				}
			}
			m := float64(s * cg)
			for gi := range g {
				mu[gi] /= m
			}
			for p := range s {
				row := xs[p*c : (p+1)*c]
				for gi := range g {
					var a float64
					for _, v := range row[gi*cg : (gi+1)*cg] {
						d := float64(v) - mu[gi]
						a += d * d
					}
					rs[gi] += a
				}
			}
			for gi := range g {
				rs[gi] = 1 / math.Sqrt(rs[gi]/m+l.Eps)
			}
			for p := range s {
				for ch := range c {
					gi := ch / cg
					xh := (float64(xs[p*c+ch]) - mu[gi]) * rs[gi]
					ys[p*c+ch] = float32(xh)*gamma[ch] + beta[ch]
				}
			}
		}
	})
	return &l.y
}

// Backward accumulates dγ and dβ and returns dx if inputGrad is set:
//
//	dx̂ = dy · γ
//	dx = (dx̂ - mean(dx̂) - x̂ · mean(dx̂ · x̂)) / sqrt(σ² + ε)
//
// with the means over each sample's group.
func (l *GroupNorm) Backward(dy *tensor.T, inputGrad bool) *tensor.T {
	if l.x == nil {
		panic(badOrder)
	}
	checkGrad(dy, &l.y)
	x := l.x
	n := x.Shape[0]
	g, c, cg := l.groups, l.c, l.c/l.groups
	in := x.Len() / max(1, n)
	s := in / c
	if inputGrad {
		l.dx.Resize(x.Shape...)
	}
	part := grow64(&l.part, n*2*c)
	gsum := grow64(&l.gsum, n*2*g)
	gamma := l.gamma.Value
	tensor.Parallel(n, 1, func(lo, hi int) {
		for sm := lo; sm < hi; sm++ {
			sums := [2][]float64{gsum[sm*2*g : sm*2*g+g], gsum[sm*2*g+g : (sm+1)*2*g]}
			xs, dys := x.Data[sm*in:(sm+1)*in], dy.Data[sm*in:(sm+1)*in]
			mu, rs := l.mean[sm*g:(sm+1)*g], l.rstd[sm*g:(sm+1)*g]
			dg, db := part[sm*2*c:sm*2*c+c], part[sm*2*c+c:(sm+1)*2*c]
			clear(dg)
			clear(db)
			clear(sums[0])
			clear(sums[1])
			for p := range s {
				for ch := range c {
					gi := ch / cg
					xh := (float64(xs[p*c+ch]) - mu[gi]) * rs[gi]
					d := float64(dys[p*c+ch])
					dg[ch] += d * xh
					db[ch] += d
					dxh := d * float64(gamma[ch])
					sums[0][gi] += dxh
					sums[1][gi] += dxh * xh
				}
			}
			if !inputGrad {
				continue
			}
			m := float64(s * cg)
			dxs := l.dx.Data[sm*in : (sm+1)*in]
			for p := range s {
				for ch := range c {
					gi := ch / cg
					xh := (float64(xs[p*c+ch]) - mu[gi]) * rs[gi]
					dxh := float64(dys[p*c+ch]) * float64(gamma[ch])
					dxs[p*c+ch] = float32((dxh - sums[0][gi]/m - xh*sums[1][gi]/m) * rs[gi])
				}
			}
		}
	})
	for ch := range c {
		var a, b float64
		for sm := range n {
			a += part[sm*2*c+ch]
			b += part[sm*2*c+c+ch]
		}
		l.gamma.Grad[ch] += float32(a)
		l.beta.Grad[ch] += float32(b)
	}
	if !inputGrad {
		return nil
	}
	return &l.dx
}

// Clone returns an unbound GroupNorm with the same configuration.
func (l *GroupNorm) Clone() Layer {
	c := NewGroupNorm(l.groups, l.c)
	c.Eps = l.Eps
	return c
}

// String returns "groupnorm(G groups, C channels)".
func (l *GroupNorm) String() string {
	return fmt.Sprintf("groupnorm(%d groups, %d channels)", l.groups, l.c)
}

// BatchNorm is batch normalisation (Ioffe & Szegedy 2015) over inputs
// whose last dimension is the channel, [N, ..., C]; every other dimension
// (batch and, for NHWC images, space) is reduced:
//
//	x̂ = (x - μ_c) / sqrt(σ²_c + ε)
//	y = γ_c · x̂ + β_c
//
// In training mode μ and σ² are the mean and biased variance of the
// current batch, and the running statistics are updated as PyTorch does:
//
//	running_mean ← (1 - momentum)·running_mean + momentum·μ
//	running_var  ← (1 - momentum)·running_var + momentum·σ²·M/(M-1)
//
// with M the number of elements per channel (the unbiased correction is
// skipped when M = 1). In evaluation mode the running statistics are used.
//
// Data-parallel replicas each normalise with the statistics of their own
// local batch, as PyTorch's DistributedDataParallel does without
// SyncBatchNorm; their running statistics therefore drift apart slightly
// and live in Network.State, outside the all-reduced gradient.
//
// γ (scale) starts at 1 and β (shift) at 0, both of kind Norm; the running
// mean starts at 0 and the running variance at 1, both of kind Running.
type BatchNorm struct {
	c int
	// Momentum is the weight of the current batch in the running
	// statistics. Default 0.1.
	Momentum float64
	// Eps is ε in the formula above. Default 1e-5.
	Eps float64

	gamma, beta, rmean, rvar *Param

	x          *tensor.T
	train      bool
	y, dx      tensor.T
	mean, rstd []float64 // per channel, as used by the last Forward
	part       []float64 // per row chunk and channel
}

// NewBatchNorm returns a BatchNorm of c channels. It panics if c < 1.
func NewBatchNorm(c int) *BatchNorm {
	if c < 1 {
		panic(badConfig)
	}
	return &BatchNorm{
		c: c, Momentum: 0.1, Eps: 1e-5,
		gamma: newParam("scale", Norm, Ones, 1, c),
		beta:  newParam("shift", Norm, Zeros, 1, c),
		rmean: newParam("mean", Running, Zeros, 1, c),
		rvar:  newParam("var", Running, Ones, 1, c),
	}
}

// Params returns the scale γ [C], the shift β [C], the running mean [C]
// and the running variance [C].
func (l *BatchNorm) Params() []*Param { return []*Param{l.gamma, l.beta, l.rmean, l.rvar} }

// channelSums adds f(row, sums) over fixed chunks of rows into per-chunk
// float64 slots of width w and returns their ordered total.
func (l *BatchNorm) channelSums(rows, w int, f func(lo, hi int, acc []float64)) []float64 {
	grain := max(1, rowGrain/l.c)
	nc := tensor.Chunks(rows, grain)
	part := grow64(&l.part, (nc+1)*w)
	tensor.Parallel(rows, grain, func(lo, hi int) {
		acc := part[(lo/grain)*w : (lo/grain+1)*w]
		clear(acc)
		f(lo, hi, acc)
	})
	tot := part[nc*w : (nc+1)*w]
	clear(tot)
	for k := range nc {
		for j, v := range part[k*w : (k+1)*w] {
			tot[j] += v
		}
	}
	return tot
}

// Forward normalises x with batch statistics (train) or running
// statistics. It panics unless x has rank >= 2 and last dimension C.
func (l *BatchNorm) Forward(x *tensor.T, train bool) *tensor.T {
	if x.Rank() < 2 {
		panic(badRank)
	}
	if x.Dim(-1) != l.c {
		panic(badInput)
	}
	c := l.c
	rows := x.Len() / c
	l.x, l.train = x, train
	l.y.Resize(x.Shape...)
	mean, rstd := grow64(&l.mean, c), grow64(&l.rstd, c)
	if train {
		tot := l.channelSums(rows, c, func(lo, hi int, acc []float64) {
			for i := lo; i < hi; i++ {
				for j, v := range x.Data[i*c : (i+1)*c] {
					acc[j] += float64(v)
				}
			}
		})
		m := float64(max(1, rows))
		for j := range c {
			mean[j] = tot[j] / m
		}
		tot = l.channelSums(rows, c, func(lo, hi int, acc []float64) {
			for i := lo; i < hi; i++ {
				for j, v := range x.Data[i*c : (i+1)*c] {
					d := float64(v) - mean[j]
					acc[j] += d * d
				}
			}
		})
		mom := l.Momentum
		for j := range c {
			v := tot[j] / m
			rstd[j] = 1 / math.Sqrt(v+l.Eps)
			unbiased := v
			if rows > 1 {
				unbiased = v * m / (m - 1)
			}
			l.rmean.Value[j] = float32((1-mom)*float64(l.rmean.Value[j]) + mom*mean[j])
			l.rvar.Value[j] = float32((1-mom)*float64(l.rvar.Value[j]) + mom*unbiased)
		}
	} else {
		for j := range c {
			mean[j] = float64(l.rmean.Value[j])
			rstd[j] = 1 / math.Sqrt(float64(l.rvar.Value[j])+l.Eps)
		}
	}
	gamma, beta := l.gamma.Value, l.beta.Value
	tensor.Parallel(rows, max(1, elemGrain/c), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			ys := l.y.Data[i*c : (i+1)*c]
			for j, v := range x.Data[i*c : (i+1)*c] {
				ys[j] = float32((float64(v)-mean[j])*rstd[j])*gamma[j] + beta[j]
			}
		}
	})
	return &l.y
}

// Backward accumulates dγ and dβ and returns dx if inputGrad is set. After
// a training-mode Forward
//
//	dx = γ/sqrt(σ² + ε) · (dy - mean(dy) - x̂ · mean(dy · x̂))
//
// with the means per channel over the batch; after an evaluation-mode
// Forward the statistics are constants and dx = γ·dy/sqrt(σ² + ε).
func (l *BatchNorm) Backward(dy *tensor.T, inputGrad bool) *tensor.T {
	if l.x == nil {
		panic(badOrder)
	}
	checkGrad(dy, &l.y)
	c, x := l.c, l.x
	rows := x.Len() / c
	mean, rstd := l.mean, l.rstd
	tot := l.channelSums(rows, 2*c, func(lo, hi int, acc []float64) {
		for i := lo; i < hi; i++ {
			xs, ds := x.Data[i*c:(i+1)*c], dy.Data[i*c:(i+1)*c]
			for j, d := range ds {
				acc[j] += float64(d)
				acc[c+j] += float64(d) * (float64(xs[j]) - mean[j]) * rstd[j]
			}
		}
	})
	sdy, sdyx := tot[:c], tot[c:2*c]
	for j := range c {
		l.beta.Grad[j] += float32(sdy[j])
		l.gamma.Grad[j] += float32(sdyx[j])
	}
	if !inputGrad {
		return nil
	}
	l.dx.Resize(x.Shape...)
	m := float64(max(1, rows))
	train := l.train
	gamma := l.gamma.Value
	tensor.Parallel(rows, max(1, elemGrain/c), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			xs, ds, dxs := x.Data[i*c:(i+1)*c], dy.Data[i*c:(i+1)*c], l.dx.Data[i*c:(i+1)*c]
			for j, d := range ds {
				g := float64(d)
				if train {
					xh := (float64(xs[j]) - mean[j]) * rstd[j]
					g -= sdy[j]/m + xh*sdyx[j]/m
				}
				dxs[j] = float32(float64(gamma[j]) * rstd[j] * g)
			}
		}
	})
	return &l.dx
}

// Clone returns an unbound BatchNorm with the same configuration.
func (l *BatchNorm) Clone() Layer {
	c := NewBatchNorm(l.c)
	c.Momentum, c.Eps = l.Momentum, l.Eps
	return c
}

// String returns "batchnorm(C channels)".
func (l *BatchNorm) String() string { return fmt.Sprintf("batchnorm(%d channels)", l.c) }
