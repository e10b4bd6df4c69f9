package model

import (
	"fmt"

	"scaleplan/internal/units"
)

// This file holds the layer builders the image models' and the engine's
// operator generators share (convolution, linear layer, normalisation,
// activations, pooling, residual additions, the classifier's softmax and
// loss).
//
// Conventions, for every operator these builders make:
//
//   - FLOPs of convolutions and matrix products are 2 per multiply-add,
//     the convention of the published counts (torchvision's "GFLOPS",
//     the papers' tables, which count multiply-adds); bias additions are
//     left out, as they are there. The backward pass of a convolution or
//     linear layer is two operators of one forward's FLOPs each, the
//     gradient of the input (grad_input, left out where no gradient flows
//     into the input: the first layer, frozen layers) and of the weights
//     (grad_weight). A bias is added in a kernel of its own and its
//     gradient summed in another (biasAdd).
//   - Memory-bound operators count the arithmetic of their textbook
//     formula per element (the flops* constants below); they are a few
//     percent of a convnet's FLOPs and their time is their bytes.
//   - Read and Write are the bytes of the inputs and weights read and of
//     the outputs written, each once, at the shape's precision (4 bytes
//     for fp32, 2 for fp16 and bf16); normalisation scales and statistics
//     are counted at that size too (they are per channel, negligible).
//     Where the framework's kernels read a tensor again, so do the
//     counts: a training batch norm's two passes (batchNorm), a broadcast
//     product's backward (scale), a bias added after the convolution
//     (biasAdd).
//   - Saved is the activation bytes an autograd framework keeps for the
//     backward pass (PyTorch's saved tensors): a convolution's or linear
//     layer's input, a batch norm's input, a ReLU's or sigmoid's output, a
//     SiLU's input, both inputs of a product, a max-pool's input and its
//     int64 indices, a dropout's byte mask, the log-softmax's output. A
//     tensor several operators keep (a ReLU's output that the next
//     convolution keeps too) is counted once, on the first.
//   - The update is momentum SGD with weight decay, one operator per
//     layer that owns parameters, in the order the backward pass releases
//     their gradients: per parameter 6 FLOPs (decay, momentum, step: a
//     multiply-add each) and, with fp32 master weights and momentum,
//     reads of the gradient (at the step's precision), the weight and the
//     momentum, writes of the weight and the momentum, and under mixed
//     precision a write of the low-precision working copy.

// convNet records each layer's forward operator as it is added, the
// operators of its backward pass, and the optimizer's update of its
// parameters; ops returns them in step order: the forward pass, the
// backward pass in reverse layer order, then the update.
type convNet struct {
	size  float64 // bytes per activation and working weight
	fwd   []Op
	bwd   [][]Op // backward operators, grouped per forward layer, in forward order
	upd   []Op   // update operators, in forward order
	batch int64
	// maskRoIs is the positive RoIs of one image a detector's mask head
	// runs on (Mask R-CNN; Shape.MaskRoIs, else mrcnnMaskRoIs).
	maskRoIs int64
}

// fmap is an activation tensor: batch × channels × height × width (a
// vector of c features when h = w = 1). It is shared by the operators
// that read it, so that the bytes kept for backward are counted once.
type fmap struct {
	n, c, h, w int64
	grad       bool // whether the backward pass computes its gradient
	kept       bool // whether some operator already keeps it for backward
}

// Per-element FLOPs of the memory-bound operators, forward and backward,
// counted from their formulas (one FLOP per addition, multiplication,
// comparison or exponential).
const (
	flopsReLU       = 1  // max(x, 0); backward: select dy by the saved output's sign
	flopsAdd        = 1  // x + y; backward: the gradients of a tensor used twice are summed
	flopsBNFwd      = 7  // mean (1), variance (2), normalise (2), scale and shift (2)
	flopsBNBwd      = 10 // dβ = Σdy (1), dγ = Σdy·x̂ (2), x̂ again (2), dx = γσ⁻¹(dy − dβ/N − x̂·dγ/N) (5)
	flopsAffine     = 2  // a frozen batch norm: scale and shift
	flopsSigmoid    = 3  // 1/(1+exp(−x)); backward: dy·s·(1−s)
	flopsSiLUFwd    = 4  // x·sigmoid(x)
	flopsSiLUBwd    = 6  // dy·s·(1 + x·(1−s)), s recomputed
	flopsMul        = 1  // x·s; backward dx = dy·s (1) and ds = Σ dy·x (2)
	flopsDropout    = 2  // draw and compare; backward: the mask's product
	flopsSoftmaxFwd = 5  // log-softmax: max, subtract, exp, sum, log
	flopsSoftmaxBwd = 3  // dx = dy − exp(y)·Σdy
	flopsLoss       = 2  // negative log-likelihood: pick and add, per sample
	flopsUpdate     = 6  // momentum SGD with weight decay, per parameter
	indexBytes      = 8  // a max-pool's int64 index per output element
	maskBytes       = 1  // a dropout's bool mask per element
	masterBytes     = 4  // fp32 master weight and momentum per parameter
)

// newConvNet starts a network at precision p for a batch of n samples.
func newConvNet(p Precision, n int) *convNet {
	const layers = 256 // ResNet-50 has 200 forward operators
	return &convNet{size: p.Size(), batch: int64(n),
		fwd: make([]Op, 0, layers), bwd: make([][]Op, 0, layers), upd: make([]Op, 0, layers/2)}
}

// input returns the network's input, c × h × w per sample, which needs no
// gradient.
func (b *convNet) input(c, h, w int) *fmap {
	return &fmap{n: b.batch, c: int64(c), h: int64(h), w: int64(w)}
}

func (t *fmap) elems() int64 { return t.n * t.c * t.h * t.w }

// bytes returns the size of t's elements at the net's precision.
func (b *convNet) bytes(t *fmap) units.Bytes { return units.Bytes(float64(t.elems()) * b.size) }

// values returns the bytes of v values at the net's precision.
func (b *convNet) values(v int64) units.Bytes { return units.Bytes(float64(v) * b.size) }

// keep returns the bytes of t that the caller keeps for backward: t's
// size the first time, 0 after.
func (b *convNet) keep(t *fmap) units.Bytes {
	if t.kept {
		return 0
	}
	t.kept = true
	return b.bytes(t)
}

// like returns a new tensor of t's shape that needs a gradient when t does.
func like(t *fmap) *fmap { return &fmap{n: t.n, c: t.c, h: t.h, w: t.w, grad: t.grad} }

// push records a forward operator and its backward ones.
func (b *convNet) push(f Op, back ...Op) {
	f.Pass = Forward
	b.fwd = append(b.fwd, f)
	for i := range back {
		back[i].Pass = Backward
	}
	b.bwd = append(b.bwd, back)
	if f.Params > 0 {
		p := float64(f.Params)
		master := 0.0 // a low-precision working copy to rewrite
		if b.size < masterBytes {
			master = b.size
		}
		b.upd = append(b.upd, Op{
			Name: f.Name + ".update", Kind: Update, Pass: UpdatePass, FLOPs: flopsUpdate * p,
			Read:  units.Bytes(p * (b.size + 2*masterBytes)),
			Write: units.Bytes(p * (2*masterBytes + master)),
		})
	}
}

// float32Last marks the last forward operator and its backward ones as
// running in float32 under automatic mixed precision (Op.Float32).
func (b *convNet) float32Last() {
	b.fwd[len(b.fwd)-1].Float32 = true
	for i := range b.bwd[len(b.bwd)-1] {
		b.bwd[len(b.bwd)-1][i].Float32 = true
	}
}

// ops returns the step's operators: forward, backward in reverse, update
// in the order the backward pass releases the gradients.
func (b *convNet) ops() []Op {
	out := make([]Op, 0, 2*len(b.fwd)+len(b.upd)+len(b.bwd))
	out = append(out, b.fwd...)
	for i := len(b.bwd) - 1; i >= 0; i-- {
		out = append(out, b.bwd[i]...)
	}
	for i := len(b.upd) - 1; i >= 0; i-- {
		out = append(out, b.upd[i])
	}
	return out
}

// convSpec is one convolution: kernel k×k, stride, padding, groups,
// whether it has a bias, whether its weights are trained (frozen: not),
// and whether they are shared with an earlier operator that counts them
// (a detection head applied to every pyramid level: its weight gradient
// is computed on each level, its parameters and update counted once).
type convSpec struct {
	cout, k, stride, pad, groups int
	bias, frozen, shared         bool
}

// outSize returns a convolution's output extent for an input extent h.
func (s convSpec) outSize(h int64) int64 {
	return (h+2*int64(s.pad)-int64(s.k))/int64(s.stride) + 1
}

// conv adds a convolution (Conv, or GroupedConv when groups > 1) and
// returns its output. Its matrix product is the implicit GEMM M = batch ×
// output pixels, N = output channels per group, K = input channels per
// group × kernel area, Groups = groups; grad_input's is the transposed
// product per stride phase, grad_weight's M = output channels per group,
// N = input channels per group × kernel area, K = batch × output pixels.
func (b *convNet) conv(name string, x *fmap, s convSpec) *fmap {
	g := int64(max(s.groups, 1))
	kk := int64(s.k * s.k)
	y := &fmap{n: x.n, c: int64(s.cout), h: s.outSize(x.h), w: s.outSize(x.w), grad: x.grad || !s.frozen}
	cin, cout := x.c/g, y.c/g
	weights := g * cout * cin * kk
	var params int64
	if !s.frozen && !s.shared {
		params = weights
		if s.bias {
			params += y.c
		}
	}
	pix := x.n * y.h * y.w
	flops := 2 * float64(pix) * float64(cout*cin*kk*g)
	kind := Conv
	if g > 1 {
		kind = GroupedConv
	}
	f := Op{Name: name, Kind: kind, FLOPs: flops, Params: params,
		Read: b.bytes(x) + b.values(weights), Write: b.bytes(y),
		M: pix, N: cout, K: cin * kk, Groups: g, Kernel: s.k, Stride: s.stride, OutH: y.h, OutW: y.w}
	var back []Op
	if !s.frozen {
		f.Saved = b.keep(x)
		back = append(back, Op{Name: name + ".grad_weight", Kind: kind, FLOPs: flops,
			Read: b.bytes(y) + b.bytes(x), Write: b.values(weights),
			M: cout, N: cin * kk, K: pix, Groups: g, Kernel: s.k, Stride: s.stride, OutH: y.h, OutW: y.w, GradWeight: true})
	}
	if x.grad {
		phase := int64(ceilDivInt(s.k, s.stride))
		back = append(back, Op{Name: name + ".grad_input", Kind: kind, FLOPs: flops,
			Read: b.bytes(y) + b.values(weights), Write: b.bytes(x),
			M: x.n * x.h * x.w, N: cin, K: cout * phase * phase, Groups: g, Kernel: s.k, Stride: s.stride, OutH: y.h, OutW: y.w})
	}
	b.push(f, back...)
	if s.bias {
		b.biasAdd(name, y, !s.frozen)
	}
	return y
}

// biasAdd adds the bias of a convolution whose output is y as PyTorch
// runs it with cuDNN (aten/src/ATen/native/Convolution.cpp): forward,
// output.add_(bias) after at::cudnn_convolution, a kernel of its own that
// reads and writes y; backward, convolution_backward's "bias gradients
// outside of the backend", grad_output.sum over the batch and pixels,
// which reads dy once more, for a trained bias. The addition reads the
// bias broadcast over the batch and the pixels (Op.Broadcast). It is part
// of the convolution's call (Untracked: no module call or autograd record
// of its own); the convolution owns the bias parameters.
func (b *convNet) biasAdd(name string, y *fmap, trained bool) {
	e := float64(y.elems())
	bias := b.values(y.c)
	f := Op{Name: name + ".bias", Kind: Elementwise, FLOPs: flopsAdd * e,
		Read: b.bytes(y) + bias, Write: b.bytes(y), Untracked: true, Broadcast: true}
	if !trained {
		b.push(f)
		return
	}
	b.push(f, Op{Name: name + ".grad_bias", Kind: Elementwise, FLOPs: flopsAdd * e,
		Read: b.bytes(y), Write: bias})
}

func ceilDivInt(a, b int) int { return (a + b - 1) / b }

// linear adds a fully connected layer of out features (with a bias) over
// x's c·h·w features per sample and returns its output, a vector. Its
// product is M = batch, N = out, K = in features.
func (b *convNet) linear(name string, x *fmap, out int) *fmap {
	return b.linearRows(name, x, x.n, x.c*x.h*x.w, out)
}

// linearRows adds a linear layer applied to rows vectors of in features
// (RoI heads apply one to every region) and returns rows × out values.
func (b *convNet) linearRows(name string, x *fmap, rows, in int64, out int) *fmap {
	o := int64(out)
	y := &fmap{n: rows, c: o, h: 1, w: 1, grad: true}
	flops := 2 * float64(rows) * float64(in*o)
	f := Op{Name: name, Kind: MatMul, FLOPs: flops, Params: in*o + o,
		Read: b.bytes(x) + b.values(in*o+o), Write: b.bytes(y), Saved: b.keep(x),
		M: rows, N: o, K: in, Groups: 1}
	back := []Op{{Name: name + ".grad_weight", Kind: MatMul, FLOPs: flops,
		Read: b.bytes(y) + b.bytes(x), Write: b.values(in*o + o), M: o, N: in, K: rows, Groups: 1}}
	if x.grad {
		back = append(back, Op{Name: name + ".grad_input", Kind: MatMul, FLOPs: flops,
			Read: b.bytes(y) + b.values(in*o), Write: b.bytes(x), M: rows, N: in, K: o, Groups: 1})
	}
	b.push(f, back...)
	return y
}

// pointwise adds a memory-bound operator of kind k that maps x to a
// tensor of its shape with fwd FLOPs per element forward and bwd per
// element backward, keeping saved bytes, and owning params parameters.
// Its backward operator reads the output's gradient and the kept bytes
// and writes the input's gradient; there is none when x needs no
// gradient and the operator has no parameters.
func (b *convNet) pointwise(name string, k OpKind, x *fmap, fwd, bwd float64, saved units.Bytes, params int64) *fmap {
	y := like(x)
	y.grad = x.grad || params > 0
	e := float64(x.elems())
	f := Op{Name: name, Kind: k, FLOPs: fwd * e, Params: params,
		Read: b.bytes(x) + b.values(params), Write: b.bytes(y), Saved: saved}
	var back []Op
	if y.grad {
		back = append(back, Op{Name: name + ".grad", Kind: k, FLOPs: bwd * e,
			Read: b.bytes(y) + saved + b.values(params), Write: b.bytes(x) + b.values(params)})
	}
	b.push(f, back...)
	return y
}

// batchNorm adds a training-mode batch norm with a scale and a shift per
// channel; it keeps its input. Each pass reads its inputs twice: the
// output needs the channel's statistics over the whole batch, so the
// forward pass reads x once for the mean and variance and again to
// normalise it, and the backward pass reads dy and x once for Σdy and
// Σdy·x̂ and again to form dx (PyTorch's batch_norm_stats and
// batch_norm_elemt forward, batch_norm_backward_reduce and
// batch_norm_backward_elemt backward, aten/src/ATen/native/cuda/
// Normalization.cu; cuDNN's training kernels face the same dependency).
// A tensor the L2 cache holds is read once from memory, which this
// count does not credit.
func (b *convNet) batchNorm(name string, x *fmap) *fmap {
	y := b.pointwise(name, Norm, x, flopsBNFwd, flopsBNBwd, b.keep(x), 2*x.c)
	f := &b.fwd[len(b.fwd)-1]
	f.Read += b.bytes(x)
	f.BatchNorm = true
	back := b.bwd[len(b.bwd)-1]
	back[0].Read += b.bytes(x) + b.bytes(y)
	back[0].BatchNorm = true
	return y
}

// batchNormReLU adds a training-mode batch norm that applies the ReLU
// after it in the same kernel, and adds addend first where it is not nil
// (MXNet's BatchNorm with act_type relu, and BatchNormAddRelu; NVIDIA's
// MXNet ResNet-50 programs run them with --fuse-bn-relu and
// --fuse-bn-add-relu): the batch norm's passes, no ReLU or add of their
// own. Forward it also reads addend; backward it also reads its output,
// whose sign selects the gradient, and writes addend's gradient. It keeps
// its input, as batchNorm does, and its output, as relu does.
func (b *convNet) batchNormReLU(name string, x, addend *fmap) *fmap {
	y := b.batchNorm(name, x)
	f := &b.fwd[len(b.fwd)-1]
	f.FLOPs += flopsReLU * float64(y.elems())
	f.Saved += b.keep(y)
	back := b.bwd[len(b.bwd)-1]
	back[0].FLOPs += flopsReLU * float64(y.elems())
	back[0].Read += b.bytes(y)
	if addend != nil {
		f.FLOPs += flopsAdd * float64(y.elems())
		f.Read += b.bytes(addend)
		back[0].Write += b.bytes(addend)
	}
	return y
}

// frozenNorm adds a frozen batch norm (torchvision's FrozenBatchNorm2d:
// a fixed scale and shift, no parameters).
func (b *convNet) frozenNorm(name string, x *fmap) *fmap {
	return b.pointwise(name, Elementwise, x, flopsAffine, flopsAffine, 0, 0)
}

// relu adds an in-place ReLU, which keeps its output.
func (b *convNet) relu(name string, x *fmap) *fmap {
	y := b.pointwise(name, Elementwise, x, flopsReLU, flopsReLU, 0, 0)
	if y.grad {
		b.fwd[len(b.fwd)-1].Saved = b.keep(y)
	}
	return y
}

// silu adds a SiLU (swish), which keeps its input.
func (b *convNet) silu(name string, x *fmap) *fmap {
	return b.pointwise(name, Elementwise, x, flopsSiLUFwd, flopsSiLUBwd, b.keep(x), 0)
}

// sigmoid adds a sigmoid, which keeps its output.
func (b *convNet) sigmoid(name string, x *fmap) *fmap {
	y := b.pointwise(name, Elementwise, x, flopsSigmoid, flopsSigmoid, 0, 0)
	b.fwd[len(b.fwd)-1].Saved = b.keep(y)
	return y
}

// dropout adds a dropout, which keeps a byte mask and draws it as it
// runs (Op.Random), as seqOps.dropout does.
func (b *convNet) dropout(name string, x *fmap) *fmap {
	y := b.pointwise(name, Elementwise, x, flopsDropout, 1, units.Bytes(x.elems()*maskBytes), 0)
	b.fwd[len(b.fwd)-1].Random = true
	return y
}

// convBN adds a convolution without bias followed by a batch norm.
func (b *convNet) convBN(name string, x *fmap, s convSpec) *fmap {
	return b.batchNorm(name+".bn", b.conv(name+".conv", x, s))
}

// add adds the residual sum x + y and returns it. Backward, the sum
// passes its gradient to both inputs unchanged; what costs is summing the
// gradients of a tensor two operators read, which fork records.
func (b *convNet) add(name string, x, y *fmap) *fmap {
	z := like(x)
	z.grad = x.grad || y.grad
	b.push(Op{Name: name, Kind: Elementwise, FLOPs: flopsAdd * float64(z.elems()),
		Read: b.bytes(x) + b.bytes(y), Write: b.bytes(z)})
	return z
}

// fork records that x is read by two branches: backward, their gradients
// of x are summed (read twice, written once). Call it before the
// branches, so that the sum follows both in the backward order.
func (b *convNet) fork(name string, x *fmap) {
	if !x.grad {
		return
	}
	b.bwd = append(b.bwd, []Op{{Name: name + ".grad_sum", Kind: Elementwise, Pass: Backward,
		FLOPs: flopsAdd * float64(x.elems()), Read: 2 * b.bytes(x), Write: b.bytes(x)}})
}

// maxPool adds a k×k max-pool of stride s and padding pad; it keeps its
// input and int64 indices of its output.
func (b *convNet) maxPool(name string, x *fmap, k, s, pad int) *fmap {
	spec := convSpec{k: k, stride: s, pad: pad}
	y := &fmap{n: x.n, c: x.c, h: spec.outSize(x.h), w: spec.outSize(x.w), grad: x.grad}
	f := Op{Name: name, Kind: Pool, FLOPs: float64(k*k) * float64(y.elems()),
		Read: b.bytes(x), Write: b.bytes(y)}
	var back []Op
	if x.grad {
		idx := units.Bytes(y.elems() * indexBytes)
		f.Saved = b.keep(x) + idx
		back = append(back, Op{Name: name + ".grad", Kind: Pool, FLOPs: float64(y.elems()),
			Read: b.bytes(y) + idx, Write: b.bytes(x)})
	}
	b.push(f, back...)
	return y
}

// avgPool adds a global average pool to one value per channel; it keeps
// nothing.
func (b *convNet) avgPool(name string, x *fmap) *fmap {
	y := &fmap{n: x.n, c: x.c, h: 1, w: 1, grad: x.grad}
	e := float64(x.elems())
	var back []Op
	if x.grad {
		back = append(back, Op{Name: name + ".grad", Kind: Pool, FLOPs: e, Read: b.bytes(y), Write: b.bytes(x)})
	}
	b.push(Op{Name: name, Kind: Pool, FLOPs: e, Read: b.bytes(x), Write: b.bytes(y)}, back...)
	return y
}

// scale adds the product of x and a per-channel factor s (squeeze and
// excitation: s is N×C×1×1, broadcast over x's pixels); it keeps both.
// Its backward pass is autograd's for a broadcast product (PyTorch's
// derivatives.yaml, mul.Tensor: each input's gradient is the output's
// gradient times the other input; the engine then sums a broadcast
// input's gradient down to its shape with at::sum_to), three kernels:
// dx = dy·s, the full-size product t = dy·x, and ds = Σ_{h,w} t, so that
// dy is read twice and t written and read once. The forward product and
// dx = dy·s read s broadcast over the pixels (Op.Broadcast); t and its
// sum read and write whole tensors.
func (b *convNet) scale(name string, x, s *fmap) *fmap {
	y := like(x)
	y.grad = x.grad || s.grad
	e := float64(x.elems())
	saved := b.keep(x) + b.keep(s)
	b.push(Op{Name: name, Kind: Elementwise, FLOPs: flopsMul * e,
		Read: b.bytes(x) + b.bytes(s), Write: b.bytes(y), Saved: saved, Broadcast: true},
		Op{Name: name + ".grad", Kind: Elementwise, FLOPs: flopsMul * e,
			Read: b.bytes(y) + b.bytes(s), Write: b.bytes(x), Broadcast: true},
		Op{Name: name + ".grad_scale", Kind: Elementwise, FLOPs: 2 * flopsMul * e,
			Read:    2*b.bytes(y) + b.bytes(x),
			Write:   b.bytes(x) + b.bytes(s),
			Kernels: scaleGradKernels})
	return y
}

// scaleGradKernels is the kernels of the gradient of scale's factor: the
// product t = dy·x and its sum over the pixels.
const scaleGradKernels = 2

// classifierLoss adds the log-softmax over x's c classes for each of its
// n rows and the negative log-likelihood loss over the rows.
func (b *convNet) classifierLoss(name string, x *fmap) {
	y := like(x)
	e := float64(x.elems())
	b.push(Op{Name: name + ".log_softmax", Kind: Softmax, FLOPs: flopsSoftmaxFwd * e,
		Read: b.bytes(x), Write: b.bytes(y), Saved: b.keep(y)},
		Op{Name: name + ".log_softmax.grad", Kind: Softmax, FLOPs: flopsSoftmaxBwd * e,
			Read: 2 * b.bytes(y), Write: b.bytes(x)})
	b.float32Last()
	rows := float64(x.n)
	b.push(Op{Name: name + ".nll", Kind: Loss, FLOPs: flopsLoss * rows,
		Read: units.Bytes(rows * (b.size + indexBytes)), Write: units.Bytes(b.size)},
		Op{Name: name + ".nll.grad", Kind: Loss, FLOPs: rows,
			Read: units.Bytes(rows * indexBytes), Write: b.bytes(y)})
	b.float32Last()
}

// elementLoss adds an element-wise loss over n predicted values and as
// many targets (smooth L1 on box offsets, binary cross-entropy on masks or
// objectness): fwd FLOPs per value forward and as many backward.
func (b *convNet) elementLoss(name string, n int64, fwd float64) {
	v := b.values(n)
	b.push(Op{Name: name, Kind: Loss, FLOPs: fwd * float64(n), Read: 2 * v, Write: units.Bytes(b.size)},
		Op{Name: name + ".grad", Kind: Loss, FLOPs: fwd * float64(n), Read: 2 * v, Write: v})
	b.float32Last()
}

// maxOpBatch is the largest batch the image generators take: a million
// samples per device, far past any that fits, and small enough that no
// tensor's element count overflows at the largest resolution.
const maxOpBatch = 1 << 20

// checkResolution returns the resolution to use: def when s.Resolution
// is 0, else s.Resolution when it is within lo (the smallest input the
// network's strides and valid convolutions take) and 32,768; and an
// error naming the model when it or the batch is out of range.
func checkResolution(model string, s Shape, def, lo int) (int, error) {
	if s.Batch > maxOpBatch {
		return 0, fmt.Errorf("model %s: batch %d: want at most %d", model, s.Batch, maxOpBatch)
	}
	r := s.Resolution
	if r == 0 {
		return def, nil
	}
	if r < lo || r > 1<<15 {
		return 0, fmt.Errorf("model %s: resolution %d: want 0 (the default, %d) or %d to %d pixels", model, r, def, lo, 1<<15)
	}
	return r, nil
}
