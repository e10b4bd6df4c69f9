package nn

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"scaleplan/engine/tensor"
)

// Gradient checks compare each analytic gradient with the central
// difference
//
//	g ≈ (L(θ + h) - L(θ - h)) / ((θ + h) - (θ - h))
//
// where the denominator is taken from the float32 values actually stored
// (so it is exact), L is evaluated in float64 from the layer's float32
// outputs as L = Σ_i w_i·y_i with fixed random weights w (so dL/dy = w),
// and h = 1e-2 (3e-3 for the whole network, whose batch-normalised,
// many-ReLU loss has more curvature and more kinks). A coordinate passes
// when
//
//	|g_fd - g| <= tol · max(|g|, |g_fd|, floor)
//
// with tol = 1e-3 and floor = 0.1·max|g| over all tensors of the check:
// the rounding noise of a float32 forward pass, divided by 2h, is 1e-5 to
// 1e-4 of the largest gradient, so coordinates far below the largest (the
// bias of a Dense layer followed by BatchNorm has gradient exactly 0) are
// compared in absolute terms. Coordinates whose perturbation moves a ReLU
// across zero or changes a max-pool winner are skipped (the function has a
// kink there); inputs are chosen so that this is rare, and the test fails
// if more than a fifth of all coordinates, or every coordinate of one
// tensor, is skipped.

const (
	fdStep    = 1e-2
	fdStepNet = 3e-3 // whole network: more kinks and curvature, see TestGradNetwork
	fdTol     = 1e-3
	fdFloor   = 0.1
	fdMax     = 60 // coordinates checked per tensor (a deterministic sample)
)

// gradProblem is a function of a float32 vector under test: eval returns L
// and a kink signature; grad returns the analytic gradient.
type gradProblem struct {
	name  string
	value []float32 // coordinates to perturb
	grad  []float64 // analytic gradient of L wrt value
}

// checkProblems perturbs each problem's coordinates and compares.
func checkProblems(t *testing.T, label string, h float32, probs []gradProblem, eval func() (float64, uint64)) {
	t.Helper()
	_, sig0 := eval()
	gmax := 0.0
	for _, p := range probs {
		for _, g := range p.grad {
			gmax = max(gmax, math.Abs(g))
		}
	}
	floor := max(fdFloor*gmax, 1e-6)
	total, totalSkipped := 0, 0
	for _, p := range probs {
		idx := sampleIndices(len(p.value), fdMax)
		skipped, worst := 0, 0.0
		for _, i := range idx {
			v0 := p.value[i]
			vp, vm := v0+h, v0-h
			p.value[i] = vp
			lp, sp := eval()
			p.value[i] = vm
			lm, sm := eval()
			p.value[i] = v0
			if sp != sig0 || sm != sig0 {
				skipped++
				continue
			}
			fd := (lp - lm) / (float64(vp) - float64(vm))
			g := p.grad[i]
			rel := math.Abs(fd-g) / max(math.Abs(g), math.Abs(fd), floor)
			worst = max(worst, rel)
			if rel > fdTol {
				t.Errorf("%s: %s[%d]: analytic %.6g, finite difference %.6g (relative error %.2g)", label, p.name, i, g, fd, rel)
			}
		}
		if skipped == len(idx) && len(idx) > 0 {
			t.Errorf("%s: %s: all %d coordinates crossed a kink", label, p.name, skipped)
		}
		total += len(idx)
		totalSkipped += skipped
		t.Logf("%s: %s: %d coordinates, worst relative error %.2g, %d skipped", label, p.name, len(idx)-skipped, worst, skipped)
	}
	if totalSkipped*5 > total {
		t.Errorf("%s: %d of %d coordinates crossed a kink", label, totalSkipped, total)
	}
}

// sampleIndices returns up to k indices spread over [0, n), always
// including the first and last.
func sampleIndices(n, k int) []int {
	if n <= k {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	idx := make([]int, k)
	for i := range idx {
		idx[i] = i * (n - 1) / (k - 1)
	}
	return idx
}

// signature hashes the activation pattern of the layers: ReLU signs and
// max-pool winners.
func signature(layers []Layer) uint64 {
	h := fnv.New64a()
	var b [4]byte
	for _, l := range layers {
		switch l := l.(type) {
		case *ReLU:
			for _, v := range l.y.Data {
				if v > 0 {
					b[0] = 1
				} else {
					b[0] = 0
				}
				h.Write(b[:1])
			}
		case *MaxPool:
			for _, a := range l.arg {
				b[0], b[1], b[2], b[3] = byte(a), byte(a>>8), byte(a>>16), byte(a>>24)
				h.Write(b[:])
			}
		}
	}
	return h.Sum64()
}

func randTensor(rng *rand.Rand, shape ...int) *tensor.T {
	t := tensor.New(shape...)
	for i := range t.Data {
		t.Data[i] = float32(rng.NormFloat64())
	}
	return t
}

func to64(s []float32) []float64 {
	d := make([]float64, len(s))
	for i, v := range s {
		d[i] = float64(v)
	}
	return d
}

// checkLayer checks dL/dx and dL/dθ of a single layer for L = Σ w·y.
// Parameters are set to random values (norm scales around 1), and so is
// the state (running means normal, running variances in [0.5, 1.5)).
func checkLayer(t *testing.T, label string, l Layer, x *tensor.T, train bool, rng *rand.Rand) {
	t.Helper()
	net := NewNetwork(rng, l)
	for _, p := range net.ParamGroups() {
		for i := range p.Params {
			p.Params[i] = float32(0.5 * rng.NormFloat64())
			if p.Kind == Norm && p.Name[len(p.Name)-5:] == "scale" {
				p.Params[i] += 1
			}
		}
	}
	for _, p := range net.StateGroups() {
		for i := range p.Params {
			if p.Name[len(p.Name)-3:] == "var" {
				p.Params[i] = 0.5 + float32(rng.Float64())
			} else {
				p.Params[i] = float32(rng.NormFloat64())
			}
		}
	}
	y := l.Forward(x, train)
	w := randTensor(rng, y.Shape...)
	net.ZeroGrad()
	dx := l.Backward(w, true)
	probs := []gradProblem{{name: "x", value: x.Data, grad: to64(dx.Data)}}
	for _, p := range net.ParamGroups() {
		probs = append(probs, gradProblem{name: p.Name, value: p.Params, grad: to64(p.Grads)})
	}
	// Backward without the input gradient must give the same parameter
	// gradients and return nil.
	want := append([]float32(nil), net.Grads...)
	net.ZeroGrad()
	l.Forward(x, train)
	if r := l.Backward(w, false); r != nil {
		t.Errorf("%s: Backward(dy, false) returned a tensor", label)
	}
	for i, g := range net.Grads {
		if g != want[i] {
			t.Fatalf("%s: parameter gradient %d differs without input gradient: %v vs %v", label, i, g, want[i])
		}
	}
	eval := func() (float64, uint64) {
		y := l.Forward(x, train)
		var s float64
		for i, v := range y.Data {
			s += float64(w.Data[i]) * float64(v)
		}
		return s, signature([]Layer{l})
	}
	checkProblems(t, label, fdStep, probs, eval)
}

func TestGradDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct{ n, in, out int }{{1, 1, 1}, {3, 5, 4}, {7, 12, 9}} {
		checkLayer(t, fmt.Sprintf("dense n=%d %d→%d", tc.n, tc.in, tc.out), NewDense(tc.in, tc.out), randTensor(rng, tc.n, tc.in), true, rng)
	}
}

func TestGradConv2D(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, tc := range []struct{ n, h, w, inC, outC, k, stride, pad int }{
		{2, 5, 5, 2, 3, 3, 1, 0},
		{2, 5, 6, 2, 3, 3, 1, 1},
		{2, 7, 7, 3, 2, 3, 2, 0},
		{1, 6, 5, 2, 2, 3, 2, 1},
		{2, 4, 4, 3, 4, 1, 1, 0}, // 1×1: the column matrix is the input itself
		{1, 5, 5, 1, 2, 2, 2, 1},
	} {
		label := fmt.Sprintf("conv2d %+v", tc)
		checkLayer(t, label, NewConv2D(tc.inC, tc.outC, tc.k, tc.stride, tc.pad), randTensor(rng, tc.n, tc.h, tc.w, tc.inC), true, rng)
	}
}

// TestConv2DChunks lowers one sample at a time (a tiny column budget)
// and compares with lowering whole groups, for a batch large enough to
// form several groups.
func TestConv2DChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	l := NewConv2D(2, 3, 3, 2, 1)
	net := NewNetwork(rng, l)
	x := randTensor(rng, 37, 6, 6, 2)
	w := randTensor(rng, 37, 3, 3, 3)
	run := func(budget int) ([]float32, []float32, []float32) {
		old := colBudget
		colBudget = budget
		defer func() { colBudget = old }()
		net.ZeroGrad()
		y := l.Forward(x, true).Clone()
		dx := l.Backward(w, true).Clone()
		return y.Data, dx.Data, append([]float32(nil), net.Grads...)
	}
	y1, dx1, g1 := run(1 << 20)
	y2, dx2, g2 := run(1)
	closeTo(t, "y", y2, to64(y1), 1e-6)
	closeTo(t, "dx", dx2, to64(dx1), 1e-6)
	closeTo(t, "grads", g2, to64(g1), 1e-5)
}

// distinctTensor fills a tensor with a random permutation of values spaced
// 0.05 apart, so that maxima are separated by more than 2h.
func distinctTensor(rng *rand.Rand, shape ...int) *tensor.T {
	t := tensor.New(shape...)
	for i, j := range rng.Perm(len(t.Data)) {
		t.Data[i] = float32(j)*0.05 - float32(len(t.Data))*0.025
	}
	return t
}

func TestGradMaxPool(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, tc := range []struct{ n, h, w, c, k, stride int }{
		{2, 4, 4, 3, 2, 2},
		{1, 5, 5, 2, 2, 2}, // odd size: last row and column dropped
		{2, 5, 5, 2, 3, 1}, // overlapping windows
	} {
		checkLayer(t, fmt.Sprintf("maxpool %+v", tc), NewMaxPool(tc.k, tc.stride), distinctTensor(rng, tc.n, tc.h, tc.w, tc.c), true, rng)
	}
}

// awayFromZero returns normal values with |x| >= 0.1, so that a 1e-2 step
// never crosses the ReLU kink.
func awayFromZero(rng *rand.Rand, shape ...int) *tensor.T {
	t := randTensor(rng, shape...)
	for i, v := range t.Data {
		if math.Abs(float64(v)) < 0.1 {
			t.Data[i] = float32(math.Copysign(0.1, float64(v))) + v
		}
	}
	return t
}

func TestGradReLUFlattenReshape(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	checkLayer(t, "relu", NewReLU(), awayFromZero(rng, 3, 4, 2), true, rng)

	checkLayer(t, "flatten", NewFlatten(), randTensor(rng, 2, 3, 2, 2), true, rng)
	checkLayer(t, "reshape", NewReshape(2, 3), randTensor(rng, 2, 6), true, rng)
}

func TestGradGroupNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	checkLayer(t, "groupnorm 2 groups NHWC", NewGroupNorm(2, 4), randTensor(rng, 3, 3, 2, 4), true, rng)
	checkLayer(t, "groupnorm 1 group [N,C]", NewGroupNorm(1, 6), randTensor(rng, 2, 6), true, rng)
	checkLayer(t, "groupnorm C groups", NewGroupNorm(3, 3), randTensor(rng, 2, 2, 2, 3), false, rng)
}

func TestGradBatchNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	checkLayer(t, "batchnorm train [N,C]", NewBatchNorm(4), randTensor(rng, 6, 4), true, rng)
	checkLayer(t, "batchnorm train NHWC", NewBatchNorm(3), randTensor(rng, 2, 3, 2, 3), true, rng)
	// Evaluation mode: the running statistics (set at random by
	// checkLayer) are constants.
	checkLayer(t, "batchnorm eval", NewBatchNorm(3), randTensor(rng, 4, 3), false, rng)
}

func TestGradCrossEntropy(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, eps := range []float64{0, 0.1, 0.5} {
		ce := &CrossEntropy{Smoothing: eps}
		z := randTensor(rng, 5, 7)
		for i := range z.Data {
			z.Data[i] *= 2
		}
		labels := []int{0, 6, 3, 3, 1}
		ce.Forward(z, labels)
		g := to64(ce.Backward().Data)
		eval := func() (float64, uint64) { return ce.Forward(z, labels), 0 }
		checkProblems(t, fmt.Sprintf("cross-entropy ε=%g", eps), fdStep, []gradProblem{{name: "logits", value: z.Data, grad: g}}, eval)
	}
}

// A batch cut into parts, each with MeanOver the whole batch's size, gives
// every sample the gradient row that the whole batch gives it, and each
// part's Forward still returns the part's own mean loss.
func TestCrossEntropyMeanOver(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	z := randTensor(rng, 6, 5)
	labels := []int{4, 0, 2, 2, 1, 3}
	whole := &CrossEntropy{Smoothing: 0.1}
	whole.Forward(z, labels)
	want := whole.Backward().Data
	for _, cut := range [][]int{{0, 2, 6}, {0, 3, 6}, {0, 1, 2, 3, 4, 5, 6}} {
		for i := range len(cut) - 1 {
			lo, hi := cut[i], cut[i+1]
			part := tensor.FromData(z.Data[lo*5:hi*5], hi-lo, 5)
			ce := &CrossEntropy{Smoothing: 0.1, MeanOver: 6}
			loss := ce.Forward(part, labels[lo:hi])
			own := (&CrossEntropy{Smoothing: 0.1}).Forward(part, labels[lo:hi])
			if loss != own {
				t.Errorf("cut %v, part %d: loss %g, want the part's mean %g", cut, i, loss, own)
			}
			for j, g := range ce.Backward().Data {
				if g != want[lo*5+j] {
					t.Fatalf("cut %v, part %d: gradient element %d is %g, want %g", cut, i, j, g, want[lo*5+j])
				}
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("negative MeanOver: no panic")
		}
	}()
	(&CrossEntropy{MeanOver: -1}).Forward(z, labels)
}

// TestGradNetwork checks every parameter of a small network that chains
// all layer kinds, trained through Network.Loss with label smoothing.
func TestGradNetwork(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	net := NewNetwork(rng,
		NewReshape(6, 6, 2),
		NewConv2D(2, 4, 3, 1, 1), NewGroupNorm(2, 4), NewReLU(), // 6×6×4
		NewMaxPool(2, 2),                    // 3×3×4
		NewConv2D(4, 3, 3, 2, 1), NewReLU(), // 2×2×3
		NewFlatten(),
		NewDense(12, 6), NewBatchNorm(6), NewReLU(),
		NewDense(6, 3),
	)
	net.InputGrad = true
	x := randTensor(rng, 4, 72)
	labels := []int{0, 2, 1, 2}
	ce := &CrossEntropy{Smoothing: 0.1}
	net.ZeroGrad()
	net.Loss(ce, x, labels, true)
	dx := net.Backward(ce.Backward()) // second backward: gradients double
	for i := range net.Grads {
		net.Grads[i] /= 2
	}
	probs := []gradProblem{{name: "x", value: x.Data, grad: to64(dx.Data)}}
	for _, p := range net.ParamGroups() {
		probs = append(probs, gradProblem{name: p.Name, value: p.Params, grad: to64(p.Grads)})
	}
	eval := func() (float64, uint64) {
		l := ce.Forward(net.Forward(x, true), labels)
		return l, signature(net.Layers)
	}
	checkProblems(t, "network", fdStepNet, probs, eval)
}

// withWinograd runs f with every 3×3 convolution of stride 1 on the
// Winograd path (winoMinChannels 1) and its tiles transformed budget bytes
// at a time (one sample at a time for a small budget).
func withWinograd(budget int, f func()) {
	oldC, oldB := winoMinChannels, winoBudget
	winoMinChannels, winoBudget = 1, budget
	defer func() { winoMinChannels, winoBudget = oldC, oldB }()
	f()
}

// TestGradConv2DWinograd checks the gradients of the F(2×2, 3×3) path by
// finite differences, with even and odd outputs, with and without padding.
func TestGradConv2DWinograd(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 5))
	withWinograd(1<<20, func() {
		for _, tc := range []struct{ n, h, w, inC, outC, pad int }{
			{2, 6, 6, 2, 3, 0}, // 4×4 output: whole tiles
			{2, 5, 6, 2, 3, 1}, // 5×6 output: a row of half tiles
			{1, 7, 5, 3, 2, 0}, // 5×3 output: half tiles in both directions
			{2, 4, 4, 2, 2, 2}, // 6×6 output, tiles reading the padding on every side
			{1, 3, 3, 1, 1, 0}, // one output, one tile of four positions past the edge
		} {
			l := NewConv2D(tc.inC, tc.outC, 3, 1, tc.pad)
			if !l.winograd() {
				t.Fatalf("%+v: not on the Winograd path", tc)
			}
			checkLayer(t, fmt.Sprintf("winograd %+v", tc), l, randTensor(rng, tc.n, tc.h, tc.w, tc.inC), true, rng)
		}
	})
}

// TestConv2DWinogradMatchesIm2col compares the two paths of one layer,
// forward and backward, at SmallCNN's second layer (26×26×32 → 64) and at
// a padded odd size, with several groups of samples and with one sample
// transformed at a time.
func TestConv2DWinogradMatchesIm2col(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, tc := range []struct{ n, h, w, inC, outC, pad, budget int }{
		{3, 26, 26, 32, 64, 0, 1 << 20},
		{37, 7, 9, 8, 5, 1, 1 << 20},
		{37, 7, 9, 8, 5, 1, 1},
	} {
		l := NewConv2D(tc.inC, tc.outC, 3, 1, tc.pad)
		net := NewNetwork(rng, l)
		for i := range l.b.Value {
			l.b.Value[i] = float32(rng.NormFloat64())
		}
		x := randTensor(rng, tc.n, tc.h, tc.w, tc.inC)
		oh, ow := tc.h+2*tc.pad-2, tc.w+2*tc.pad-2
		dy := randTensor(rng, tc.n, oh, ow, tc.outC)
		run := func() (y, dx, g []float32) {
			net.ZeroGrad()
			y = l.Forward(x, true).Clone().Data
			dx = l.Backward(dy, true).Clone().Data
			return y, dx, append([]float32(nil), net.Grads...)
		}
		old := winoMinChannels
		winoMinChannels = 1 << 30
		y1, dx1, g1 := run()
		winoMinChannels = old
		var y2, dx2, g2 []float32
		withWinograd(tc.budget, func() { y2, dx2, g2 = run() })
		label := fmt.Sprintf("%+v", tc)
		// Sums of up to 32·9 products, and the kernel gradient of up to
		// 3·576 positions: the transforms round differently.
		closeTo(t, label+" y", y2, to64(y1), 1e-4)
		closeTo(t, label+" dx", dx2, to64(dx1), 1e-4)
		closeTo(t, label+" grads", g2, to64(g1), 1e-4)
	}
}

// TestConv2DWinogradThreads runs the Winograd path with 1, 2 and 5
// threads: its groups and their in-order sum do not depend on the thread
// count, so the outputs and gradients are bit-identical.
func TestConv2DWinogradThreads(t *testing.T) {
	defer tensor.SetThreads(0)
	rng := rand.New(rand.NewPCG(4, 5))
	x := randTensor(rng, 37, 7, 6, 8)
	dy := randTensor(rng, 37, 7, 6, 5)
	var want [][]float32
	for _, th := range []int{2, 1, 5} {
		tensor.SetThreads(th)
		l := NewConv2D(8, 5, 3, 1, 1)
		net := NewNetwork(rand.New(rand.NewPCG(5, 5)), l)
		if !l.winograd() {
			t.Fatal("not on the Winograd path")
		}
		y := l.Forward(x, true).Clone().Data
		dx := l.Backward(dy, true).Clone().Data
		got := [][]float32{y, dx, net.Grads}
		if want == nil {
			want = got
			continue
		}
		for i, name := range []string{"y", "dx", "grads"} {
			if !slices.Equal(got[i], want[i]) {
				t.Fatalf("threads=%d: %s differs from threads=2", th, name)
			}
		}
	}
}
