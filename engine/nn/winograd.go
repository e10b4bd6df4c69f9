package nn

import "scaleplan/engine/tensor"

// The minimal filtering algorithm F(2×2, 3×3) of Winograd, as Lavin and
// Gray apply it to convolutional networks ("Fast Algorithms for
// Convolutional Neural Networks", CVPR 2016). A 2×2 block of outputs of a
// 3×3 kernel g over a 4×4 tile d of the input is
//
//	Y = Aᵀ [ (G g Gᵀ) ⊙ (Bᵀ d B) ] A
//
//	     ⎡1  0 -1  0⎤        ⎡ 1    0    0 ⎤
//	Bᵀ = ⎢0  1  1  0⎥    G = ⎢1/2  1/2  1/2⎥    Aᵀ = ⎡1  1  1  0⎤
//	     ⎢0 -1  1  0⎥        ⎢1/2 -1/2  1/2⎥         ⎣0  1 -1 -1⎦
//	     ⎣0  1  0 -1⎦        ⎣ 0    0    1 ⎦
//
// 16 multiplications where the direct sum takes 36. Over channels the
// element-wise product becomes, for each of the 16 positions ξ of the
// 4×4 transforms, one matrix product over the tiles t:
//
//	M_ξ[t, o] = Σ_c V_ξ[t, c] · U_ξ[c, o]    V = Bᵀ d B,  U = G g Gᵀ
//
// The gradients are those of this same computation (Y is linear in U and
// in V), three products per position as for the direct convolution:
//
//	dM = A dY Aᵀ        (per tile and output channel)
//	dU_ξ = V_ξᵀ · dM_ξ  dg = Gᵀ dU G
//	dV_ξ = dM_ξ · U_ξᵀ  dd = B dV Bᵀ, added into dx over the tile (tiles overlap by 2)
//
// Each product has 2.25 times fewer multiply-adds than im2col's, at the
// price of the transforms, which are additions. The transforms' rounding
// differs from the direct sum's by a few units in the last place of
// float32; the entries of Bᵀ, G and Aᵀ are 0, ±1 and ±1/2.

// winoBudget bounds the transformed input and output tiles of one worker
// of a Winograd convolution, in bytes: as many whole samples are
// transformed at a time as fit, so that the tiles stay in the core's cache
// between the transforms and the products. A variable so that tests can
// force one sample at a time.
var winoBudget = 1 << 20

// winoMinChannels is the fewest input channels for which a 3×3
// convolution of stride 1 uses F(2×2, 3×3); below it Conv2D lowers to
// im2col. The inner dimension of the transformed products is the input
// channels: for SmallCNN's first layer, one channel, it is 1 against
// im2col's 10. BenchmarkConv2DPaths (64 output channels, 26×26, batch
// 64) puts the crossover at 8 under OpenBLAS, where the two paths are
// level (Winograd about twice as slow at 1 channel, 1.5 times as fast at
// 32), and at 4 in pure Go. A variable so that tests can choose the path.
var winoMinChannels = 8

// winograd reports whether the layer convolves with F(2×2, 3×3).
func (l *Conv2D) winograd() bool {
	return l.k == 3 && l.stride == 1 && l.inC >= winoMinChannels
}

// winoGeometry returns the tiles per sample tp and per tile row tw, the
// samples per group and the samples transformed at once.
func (l *Conv2D) winoGeometry() (tp, tw, group, sub int) {
	th := (l.oh + 1) / 2
	tw = (l.ow + 1) / 2
	tp = th * tw
	group = max(1, (l.n+maxGroups-1)/maxGroups)
	sub = max(1, min(group, winoBudget/(4*16*tp*(l.inC+l.outC))))
	return
}

// winoStride is the distance, in floats, between the 16 matrices of
// [tiles, width] that a transform writes or reads together: one cache line
// more than a matrix. The transforms touch the 16 at once, and at the
// sizes of a convolutional network a matrix is often a multiple of 4 KiB
// (SmallCNN's 144 tiles by 64 channels are 9 × 4 KiB): 16 streams that far
// apart fall into the same sets of the L1 cache, more of them than it has
// ways, and every access misses. Measured (BenchmarkCNNStep, batch 64):
// without the line the transforms took 2.7 times the products' CPU time.
func winoStride(tiles, width int) int { return tiles*width + 16 }

// winoKernel sets l.u to the transformed kernel, U_ξ = (G g Gᵀ)_ξ as 16
// row-major [InC, OutC] matrices.
func (l *Conv2D) winoKernel() {
	co := l.inC * l.outC
	u := grow(&l.u, 16*co)
	w := l.w.Value[:9*co] // [3, 3, InC, OutC]
	for i := range co {
		var t [4][3]float32 // G·g
		for q := range 3 {
			g0, g1, g2 := w[q*co+i], w[(3+q)*co+i], w[(6+q)*co+i]
			t[0][q] = g0
			t[1][q] = 0.5 * (g0 + g1 + g2)
			t[2][q] = 0.5 * (g0 - g1 + g2)
			t[3][q] = g2
		}
		for r := range 4 {
			a0, a1, a2 := t[r][0], t[r][1], t[r][2]
			u[(4*r)*co+i] = a0
			u[(4*r+1)*co+i] = 0.5 * (a0 + a1 + a2)
			u[(4*r+2)*co+i] = 0.5 * (a0 - a1 + a2)
			u[(4*r+3)*co+i] = a2
		}
	}
}

// winoBlock is what one worker transforms at once: samples [s0, s0+nc),
// tiles = nc·tp tiles of them, and the worker's buffers for them.
type winoBlock struct {
	s0, nc, tiles int
	tp, tw        int       // tiles per sample and per row of tiles
	v, m          []float32 // 16 [tiles, InC] matrices sv apart, and 16 [tiles, OutC] sm apart
	sv, sm        int
	tmp           []float32 // 16 vectors of max(InC, OutC): the transforms' two passes
	zero, past    []float32 // such a vector of zeros (shared, read) and one written past an edge (never read)
}

// winoWorkers sizes the per-worker buffers and the shared zeros for a
// parallel loop over the batch with this many workers.
func (l *Conv2D) winoWorkers(workers int) {
	l.col, l.dcol, l.tile = perWorker(l.col, workers), perWorker(l.dcol, workers), perWorker(l.tile, workers)
	if w := max(l.inC, l.outC); len(l.zero) < w {
		l.zero = make([]float32, w)
	}
}

// winoBlock returns worker wk's block of samples [s0, s0+nc), at most sub
// of them, on its buffers.
func (l *Conv2D) winoBlock(wk, s0, nc, sub, tp, tw int) winoBlock {
	c, o, w := l.inC, l.outC, max(l.inC, l.outC)
	tiles := nc * tp
	sv, sm := winoStride(tiles, c), winoStride(tiles, o)
	scratch := grow(&l.tile[wk], 17*w)
	return winoBlock{
		s0: s0, nc: nc, tiles: tiles, tp: tp, tw: tw,
		v:  grow(&l.col[wk], 16*winoStride(sub*tp, c))[:16*sv],
		m:  grow(&l.dcol[wk], 16*winoStride(sub*tp, o))[:16*sm],
		sv: sv, sm: sm,
		tmp: scratch[:16*w], zero: l.zero[:w], past: scratch[16*w:],
	}
}

// inputTile sets d to the 16 positions of the 4×4 input tile t of the
// samples from s0 (tp tiles per sample, tw per row of tiles) in data, the
// values of an [N, H, W, InC] tensor: slices of InC values where the tile
// lies inside the input, outside where it does not.
func (l *Conv2D) inputTile(d *[16][]float32, data []float32, s0, t, tp, tw int, outside []float32) {
	c, h, w := l.inC, l.h, l.wd
	xs := data[(s0+t/tp)*h*w*c:][:h*w*c]
	q := t % tp
	i0, j0 := (q/tw)*2-l.pad, (q%tw)*2-l.pad
	for a := range 4 {
		for b := range 4 {
			if ih, iw := i0+a, j0+b; ih < 0 || ih >= h || iw < 0 || iw >= w {
				d[4*a+b] = outside
			} else {
				d[4*a+b] = xs[(ih*w+iw)*c:][:c]
			}
		}
	}
}

// outputTile sets g to the 4 positions of the 2×2 output tile t of the
// samples from s0 in data, the values of an [N, OH, OW, OutC] tensor:
// slices of OutC values inside the output, outside past its edge.
func (l *Conv2D) outputTile(g *[4][]float32, data []float32, s0, t, tp, tw int, outside []float32) {
	o, oh, ow := l.outC, l.oh, l.ow
	ys := data[(s0+t/tp)*oh*ow*o:][:oh*ow*o]
	q := t % tp
	i0, j0 := (q/tw)*2, (q%tw)*2
	for a := range 2 {
		for b := range 2 {
			if i0+a < oh && j0+b < ow {
				g[2*a+b] = ys[((i0+a)*ow+j0+b)*o:][:o]
			} else {
				g[2*a+b] = outside
			}
		}
	}
}

// The four transforms run over the channels of a tile in two passes
// through tmp, 16 vectors of the channels: the first combines the tile's
// rows (or columns), the second the results' columns (or rows). Each
// inner loop then reads four vectors and writes at most four, which the
// compiler keeps in registers with their bounds checks hoisted; one pass
// over 16 inputs and 16 outputs at once took 1.45 times as long.

// winoInput writes V = Bᵀ d B of every tile of blk into blk.v, reading
// zeros outside the input.
func (l *Conv2D) winoInput(blk *winoBlock) {
	c, st, v, tmp := l.inC, blk.sv, blk.v, blk.tmp[:16*l.inC]
	var d [16][]float32
	for t := range blk.tiles {
		l.inputTile(&d, l.x.Data, blk.s0, t, blk.tp, blk.tw, blk.zero[:c])
		for j := range 4 { // Bᵀ d, column j: tmp[4i+j]
			x0 := d[j]
			x1, x2, x3 := d[4+j][:len(x0)], d[8+j][:len(x0)], d[12+j][:len(x0)]
			r0, r1, r2, r3 := tmp[j*c:][:len(x0)], tmp[(4+j)*c:][:len(x0)], tmp[(8+j)*c:][:len(x0)], tmp[(12+j)*c:][:len(x0)]
			for ch, a := range x0 {
				b, e, f := x1[ch], x2[ch], x3[ch]
				r0[ch], r1[ch], r2[ch], r3[ch] = a-e, b+e, e-b, b-f
			}
		}
		for i := range 4 { // (Bᵀ d) B, row i
			x0 := tmp[4*i*c:][:c]
			x1, x2, x3 := tmp[(4*i+1)*c:][:len(x0)], tmp[(4*i+2)*c:][:len(x0)], tmp[(4*i+3)*c:][:len(x0)]
			o0, o1 := v[4*i*st+t*c:][:len(x0)], v[(4*i+1)*st+t*c:][:len(x0)]
			o2, o3 := v[(4*i+2)*st+t*c:][:len(x0)], v[(4*i+3)*st+t*c:][:len(x0)]
			for ch, a := range x0 {
				b, e, f := x1[ch], x2[ch], x3[ch]
				o0[ch], o1[ch], o2[ch], o3[ch] = a-e, b+e, e-b, b-f
			}
		}
	}
}

// winoOutput writes Y = Aᵀ M A plus the bias for every tile of blk from
// blk.m, leaving out the outputs past the edge of an odd-sized output.
func (l *Conv2D) winoOutput(blk *winoBlock) {
	o, st, m, tmp := l.outC, blk.sm, blk.m, blk.tmp[:8*l.outC]
	bias := l.b.Value[:o]
	var dst [4][]float32
	for t := range blk.tiles {
		l.outputTile(&dst, l.y.Data, blk.s0, t, blk.tp, blk.tw, blk.past[:o])
		for j := range 4 { // Aᵀ M, column j: tmp[j] and tmp[4+j]
			m0 := m[j*st+t*o:][:len(bias)]
			m1, m2, m3 := m[(4+j)*st+t*o:][:len(bias)], m[(8+j)*st+t*o:][:len(bias)], m[(12+j)*st+t*o:][:len(bias)]
			r0, r1 := tmp[j*o:][:len(bias)], tmp[(4+j)*o:][:len(bias)]
			for oc, a := range m0 {
				b, e, f := m1[oc], m2[oc], m3[oc]
				r0[oc], r1[oc] = a+b+e, b-e-f
			}
		}
		for a := range 2 { // (Aᵀ M) A, row a
			x0, x1 := tmp[4*a*o:][:len(bias)], tmp[(4*a+1)*o:][:len(bias)]
			x2, x3 := tmp[(4*a+2)*o:][:len(bias)], tmp[(4*a+3)*o:][:len(bias)]
			y0, y1 := dst[2*a][:len(bias)], dst[2*a+1][:len(bias)]
			for oc, bv := range bias {
				b, e := x1[oc], x2[oc]
				y0[oc], y1[oc] = x0[oc]+b+e+bv, b-e-x3[oc]+bv
			}
		}
	}
}

// winoGradOutput writes dM = A dY Aᵀ of every tile of blk into blk.m,
// reading zeros for the outputs past the edge.
func (l *Conv2D) winoGradOutput(blk *winoBlock, dy []float32) {
	o, st, dm, tmp := l.outC, blk.sm, blk.m, blk.tmp[:8*l.outC]
	var g [4][]float32
	for t := range blk.tiles {
		l.outputTile(&g, dy, blk.s0, t, blk.tp, blk.tw, blk.zero[:o])
		for b := range 2 { // A dY, column b: tmp[2i+b]
			x0 := g[b][:o]
			x1 := g[2+b][:len(x0)]
			r0, r1, r2, r3 := tmp[b*o:][:len(x0)], tmp[(2+b)*o:][:len(x0)], tmp[(4+b)*o:][:len(x0)], tmp[(6+b)*o:][:len(x0)]
			for oc, p := range x0 {
				e := x1[oc]
				r0[oc], r1[oc], r2[oc], r3[oc] = p, p+e, p-e, -e
			}
		}
		for i := range 4 { // (A dY) Aᵀ, row i
			x0 := tmp[2*i*o:][:o]
			x1 := tmp[(2*i+1)*o:][:len(x0)]
			o0, o1 := dm[4*i*st+t*o:][:len(x0)], dm[(4*i+1)*st+t*o:][:len(x0)]
			o2, o3 := dm[(4*i+2)*st+t*o:][:len(x0)], dm[(4*i+3)*st+t*o:][:len(x0)]
			for oc, p := range x0 {
				e := x1[oc]
				o0[oc], o1[oc], o2[oc], o3[oc] = p, p+e, p-e, -e
			}
		}
	}
}

// winoGradInput sets dx of blk's samples to the sum over their tiles of
// dd = B dV Bᵀ from blk.v, which holds dV, leaving out the positions
// outside the input.
func (l *Conv2D) winoGradInput(blk *winoBlock) {
	c, st, dv, tmp := l.inC, blk.sv, blk.v, blk.tmp[:16*l.inC]
	in := l.h * l.wd * c
	clear(l.dx.Data[blk.s0*in : (blk.s0+blk.nc)*in])
	var d [16][]float32
	for t := range blk.tiles {
		l.inputTile(&d, l.dx.Data, blk.s0, t, blk.tp, blk.tw, blk.past[:c])
		for j := range 4 { // B dV, column j: tmp[4i+j]
			x0 := dv[j*st+t*c:][:c]
			x1, x2, x3 := dv[(4+j)*st+t*c:][:len(x0)], dv[(8+j)*st+t*c:][:len(x0)], dv[(12+j)*st+t*c:][:len(x0)]
			r0, r1, r2, r3 := tmp[j*c:][:len(x0)], tmp[(4+j)*c:][:len(x0)], tmp[(8+j)*c:][:len(x0)], tmp[(12+j)*c:][:len(x0)]
			for ch, a := range x0 {
				b, e, f := x1[ch], x2[ch], x3[ch]
				r0[ch], r1[ch], r2[ch], r3[ch] = a, b-e+f, b+e-a, -f
			}
		}
		for i := range 4 { // (B dV) Bᵀ, row i, added into the tile
			x0 := tmp[4*i*c:][:c]
			x1, x2, x3 := tmp[(4*i+1)*c:][:len(x0)], tmp[(4*i+2)*c:][:len(x0)], tmp[(4*i+3)*c:][:len(x0)]
			o0, o1, o2, o3 := d[4*i][:len(x0)], d[4*i+1][:len(x0)], d[4*i+2][:len(x0)], d[4*i+3][:len(x0)]
			for ch, a := range x0 {
				b, e, f := x1[ch], x2[ch], x3[ch]
				o0[ch] += a
				o1[ch] += b - e + f
				o2[ch] += b + e - a
				o3[ch] -= f
			}
		}
	}
}

// addWinoKernelGrad adds dg = Gᵀ dU G, for the 16 row-major [InC, OutC]
// matrices of du, to the kernel's gradient [3, 3, InC, OutC].
func (l *Conv2D) addWinoKernelGrad(du []float32) {
	co := l.inC * l.outC
	du = du[:16*co]
	gw := l.gwb[:9*co]
	for i := range co {
		var q [3][4]float32 // Gᵀ dU
		for j := range 4 {
			u0, u1, u2, u3 := du[j*co+i], du[(4+j)*co+i], du[(8+j)*co+i], du[(12+j)*co+i]
			q[0][j] = u0 + 0.5*(u1+u2)
			q[1][j] = 0.5 * (u1 - u2)
			q[2][j] = 0.5*(u1+u2) + u3
		}
		for p := range 3 {
			a0, a1, a2, a3 := q[p][0], q[p][1], q[p][2], q[p][3]
			gw[(3*p)*co+i] += a0 + 0.5*(a1+a2)
			gw[(3*p+1)*co+i] += 0.5 * (a1 - a2)
			gw[(3*p+2)*co+i] += 0.5*(a1+a2) + a3
		}
	}
}

// forwardWinograd is Forward for a layer that convolves with F(2×2, 3×3).
// The batch is split into groups as im2col's is; within a group a worker
// transforms a few samples at a time into its own buffers.
func (l *Conv2D) forwardWinograd() {
	tp, tw, group, sub := l.winoGeometry()
	c, o := l.inC, l.outC
	l.winoKernel()
	l.winoWorkers(tensor.Workers(l.n, group))
	tensor.ParallelWorkers(l.n, group, func(wk, lo, hi int) {
		for s0 := lo; s0 < hi; s0 += sub {
			b := l.winoBlock(wk, s0, min(sub, hi-s0), sub, tp, tw)
			l.winoInput(&b)
			for xi := range 16 {
				tensor.GemmSerial(false, false, b.tiles, o, c, 1, b.v[xi*b.sv:], c, l.u[xi*c*o:], o, 0, b.m[xi*b.sm:], o)
			}
			l.winoOutput(&b)
		}
	})
}

// backwardWinograd is Backward for a layer that convolves with
// F(2×2, 3×3): it recomputes V from the input, as im2col's path recomputes
// the columns, sums each group's dU separately and adds the group sums in
// order, so that results do not depend on the number of threads.
func (l *Conv2D) backwardWinograd(dy *tensor.T, inputGrad bool) {
	tp, tw, group, sub := l.winoGeometry()
	c, o := l.inC, l.outC
	addColSums(l.b.Grad, dy.Data, l.n*l.oh*l.ow, o, &l.colbuf)
	usize := 16 * c * o
	groups := tensor.Chunks(l.n, group)
	part := grow(&l.part, groups*usize)
	l.winoWorkers(tensor.Workers(l.n, group))
	tensor.ParallelWorkers(l.n, group, func(wk, lo, hi int) {
		pu := part[(lo/group)*usize : (lo/group+1)*usize]
		for s0 := lo; s0 < hi; s0 += sub {
			b := l.winoBlock(wk, s0, min(sub, hi-s0), sub, tp, tw)
			l.winoInput(&b)
			l.winoGradOutput(&b, dy.Data)
			beta := float32(1)
			if s0 == lo {
				beta = 0
			}
			for xi := range 16 {
				tensor.GemmSerial(true, false, c, o, b.tiles, 1, b.v[xi*b.sv:], c, b.m[xi*b.sm:], o, beta, pu[xi*c*o:], o)
			}
			if !inputGrad {
				continue
			}
			for xi := range 16 { // dV overwrites V, no longer needed
				tensor.GemmSerial(false, true, b.tiles, c, o, 1, b.m[xi*b.sm:], o, l.u[xi*c*o:], o, 0, b.v[xi*b.sv:], c)
			}
			l.winoGradInput(&b)
		}
	})
	// dU: the first group's partial, with the others added in order.
	du := part[:usize]
	addGroupSums(du, part[usize:], groups-1)
	l.addWinoKernelGrad(du)
}
