package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"scaleplan/engine/tensor"
)

func TestReferenceNetworks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		net    *Network
		params int      // closed-form counts from the layer sizes
		kinds  []Kind   // per tensor
		names  []string // per tensor
	}{
		{
			name:   "MLP",
			net:    MLP(rng0(), 784, 1024, 1024, 10),
			params: 784*1024 + 1024 + 1024*1024 + 1024 + 1024*10 + 10,
			kinds:  []Kind{Weight, Bias, Weight, Bias, Weight, Bias},
			names:  []string{"1.weight", "1.bias", "3.weight", "3.bias", "5.weight", "5.bias"},
		},
		{
			name:   "SmallCNN",
			net:    SmallCNN(rng0()),
			params: 9*32 + 32 + 9*32*64 + 64 + 9216*128 + 128 + 128*10 + 10,
			kinds:  []Kind{Weight, Bias, Weight, Bias, Weight, Bias, Weight, Bias},
			names:  []string{"1.weight", "1.bias", "3.weight", "3.bias", "7.weight", "7.bias", "9.weight", "9.bias"},
		},
	} {
		n := tc.net
		if n.NumParams() != tc.params || len(n.Grads) != tc.params {
			t.Errorf("%s: %d parameters, want %d", tc.name, n.NumParams(), tc.params)
		}
		groups := n.ParamGroups()
		off := 0
		for i, g := range groups {
			if g.Offset != off || g.Len != len(g.Params) || g.Len != len(g.Grads) {
				t.Errorf("%s: group %s at %d+%d, want offset %d", tc.name, g.Name, g.Offset, g.Len, off)
			}
			if &g.Params[0] != &n.Params[off] || &g.Grads[0] != &n.Grads[off] {
				t.Errorf("%s: group %s is not a view of the flat buffers", tc.name, g.Name)
			}
			if g.Kind != tc.kinds[i] || g.Name != tc.names[i] {
				t.Errorf("%s: group %d is %s (%v), want %s (%v)", tc.name, i, g.Name, g.Kind, tc.names[i], tc.kinds[i])
			}
			off += g.Len
		}
		if off != len(n.Params) {
			t.Errorf("%s: groups cover %d of %d parameters", tc.name, off, len(n.Params))
		}
		// He initialisation: the sample standard deviation of each
		// weight tensor is sqrt(2/fan-in) within 5% (or 4 standard
		// errors for small tensors); biases start at zero.
		for _, g := range groups {
			var s, sq float64
			for _, v := range g.Params {
				s += float64(v)
				sq += float64(v) * float64(v)
			}
			if g.Kind == Bias {
				if sq != 0 {
					t.Errorf("%s: %s not zero", tc.name, g.Name)
				}
				continue
			}
			fanIn := g.Len / g.Shape[len(g.Shape)-1]
			want := math.Sqrt(2 / float64(fanIn))
			got := math.Sqrt(sq/float64(g.Len) - (s/float64(g.Len))*(s/float64(g.Len)))
			tol := max(0.05, 4/math.Sqrt(2*float64(g.Len)))
			if math.Abs(got/want-1) > tol {
				t.Errorf("%s: %s std %.4g, want %.4g", tc.name, g.Name, got, want)
			}
		}
		// Both take [N, 784] and [N, 28, 28, 1].
		rng := rand.New(rand.NewPCG(1, 1))
		x := randTensor(rng, 3, 784)
		y1 := n.Forward(x, false).Clone()
		y2 := n.Forward(x.Reshape(3, 28, 28, 1), false)
		if !sameShape(y1.Shape, 3, 10) || !slices.Equal(y1.Data, y2.Data) {
			t.Errorf("%s: output %v differs between input shapes", tc.name, y1.Shape)
		}
	}
}

func TestDeterministicInit(t *testing.T) {
	a := SmallCNN(rand.New(rand.NewPCG(7, 11)))
	b := SmallCNN(rand.New(rand.NewPCG(7, 11)))
	c := SmallCNN(rand.New(rand.NewPCG(7, 12)))
	if !slices.Equal(a.Params, b.Params) {
		t.Error("same seed, different parameters")
	}
	if slices.Equal(a.Params, c.Params) {
		t.Error("different seeds, same parameters")
	}
}

// testNet has every layer kind, BatchNorm state included.
func testNet(rng *rand.Rand) *Network {
	return NewNetwork(rng,
		NewReshape(8, 8, 1),
		NewConv2D(1, 4, 3, 1, 1), NewGroupNorm(2, 4), NewReLU(),
		NewConv2D(4, 6, 3, 2, 0), NewBatchNorm(6), NewReLU(), // 3×3×6
		NewMaxPool(2, 1),
		NewFlatten(),
		NewDense(24, 5),
	)
}

func TestClone(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	a := testNet(rng)
	x := randTensor(rng, 5, 64)
	labels := []int{0, 1, 2, 3, 4}
	ce := &CrossEntropy{Smoothing: 0.1}
	a.Loss(ce, x, labels, true) // non-zero grads and running stats
	b := a.Clone()
	if !slices.Equal(a.Params, b.Params) || !slices.Equal(a.Grads, b.Grads) || !slices.Equal(a.State, b.State) {
		t.Fatal("clone buffers differ")
	}
	if len(b.State) != 12 {
		t.Fatalf("state has %d elements, want 12 (BatchNorm mean and var of 6 channels)", len(b.State))
	}
	// Same computation, bit for bit.
	a.ZeroGrad()
	b.ZeroGrad()
	la, _ := a.Loss(ce, x, labels, true)
	lb, _ := b.Loss(ce, x, labels, true)
	if la != lb || !slices.Equal(a.Grads, b.Grads) || !slices.Equal(a.State, b.State) {
		t.Fatal("clone computes differently")
	}
	// Independent storage.
	b.Params[0]++
	b.Grads[0]++
	b.State[0]++
	if a.Params[0] == b.Params[0] || a.Grads[0] == b.Grads[0] || a.State[0] == b.State[0] {
		t.Fatal("clone shares storage")
	}
	ga, gb := a.ParamGroups(), b.ParamGroups()
	if &ga[0].Params[0] == &gb[0].Params[0] {
		t.Fatal("clone's groups view the original")
	}
	b.CopyFrom(a)
	if !slices.Equal(a.Params, b.Params) || !slices.Equal(a.State, b.State) {
		t.Fatal("CopyFrom")
	}
}

// TestBatchIndependence runs each sample alone and inside batches of
// different sizes, reusing the layers' buffers as the batch shrinks and
// grows. Without BatchNorm the outputs agree to rounding (the sgemm may
// block differently per batch size).
func TestBatchIndependence(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	for _, net := range []*Network{MLP(rng, 784, 32, 10), SmallCNN(rng)} {
		x := randTensor(rng, 7, 784)
		full := net.Forward(x, true).Clone()
		for _, n := range []int{1, 3, 7, 2} {
			y := net.Forward(tensor.FromData(x.Data[:n*784], n, 784), true)
			closeTo(t, "batch", y.Data, to64(full.Data[:n*10]), 1e-5)
		}
		for i := range 7 {
			y := net.Forward(tensor.FromData(x.Data[i*784:(i+1)*784], 1, 784), false)
			closeTo(t, "single", y.Data, to64(full.Data[i*10:(i+1)*10]), 1e-5)
		}
	}
}

func TestGradAccumulationAndHooks(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 7))
	net := testNet(rng)
	x := randTensor(rng, 4, 64)
	labels := []int{1, 0, 4, 2}
	ce := &CrossEntropy{}
	net.ZeroGrad()
	var ranges [][2]int
	var snaps [][]float32
	net.GradReady = func(lo, hi int) {
		ranges = append(ranges, [2]int{lo, hi})
		snaps = append(snaps, append([]float32(nil), net.Grads[lo:hi]...))
	}
	net.Loss(ce, x, labels, true)
	// The ranges tile Grads from the end, and each was final when reported.
	end := len(net.Grads)
	for i, r := range ranges {
		if r[1] != end || r[0] >= r[1] {
			t.Fatalf("range %d is %v, want one ending at %d", i, r, end)
		}
		if !slices.Equal(snaps[i], net.Grads[r[0]:r[1]]) {
			t.Fatalf("range %v changed after GradReady", r)
		}
		end = r[0]
	}
	if end != 0 {
		t.Fatalf("ranges stop at %d", end)
	}
	// Accumulation: a second pass doubles the gradient.
	once := append([]float32(nil), net.Grads...)
	net.GradReady = nil
	net.Loss(ce, x, labels, true)
	for i, g := range net.Grads {
		if math.Abs(float64(g-2*once[i])) > 1e-6*max(1, math.Abs(float64(g))) {
			t.Fatalf("grad %d: %v after two passes, want %v", i, g, 2*once[i])
		}
	}
	// Evaluation mode does not touch the gradient.
	before := append([]float32(nil), net.Grads...)
	net.Loss(ce, x, labels, false)
	if !slices.Equal(before, net.Grads) {
		t.Fatal("evaluation changed the gradient")
	}
}

// TestTrainingReducesLoss takes plain SGD steps on a fixed batch: the loss
// must fall, and the network must fit the batch.
func TestTrainingReducesLoss(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	net := testNet(rng)
	x := randTensor(rng, 16, 64)
	labels := make([]int, 16)
	for i := range labels {
		labels[i] = i % 5
	}
	ce := &CrossEntropy{}
	var first, last float64
	var correct int
	for step := range 60 {
		net.ZeroGrad()
		last, correct = net.Loss(ce, x, labels, true)
		if step == 0 {
			first = last
		}
		for i, g := range net.Grads {
			net.Params[i] -= 0.1 * g
		}
	}
	if !(last < first/4) || correct < 14 {
		t.Errorf("loss %.3f → %.3f, %d/16 correct", first, last, correct)
	}
}

// TestReLUInPlace compares a network whose ReLUs work in place with the
// same network using separate buffers: identical outputs, gradients and
// input gradients.
func TestReLUInPlace(t *testing.T) {
	build := func(inPlace bool) *Network {
		return NewNetwork(rand.New(rand.NewPCG(5, 5)),
			NewDense(6, 8), &ReLU{InPlace: inPlace}, NewDense(8, 3), &ReLU{InPlace: inPlace})
	}
	a, b := build(false), build(true)
	a.InputGrad, b.InputGrad = true, true
	rng := rand.New(rand.NewPCG(6, 6))
	x := randTensor(rng, 4, 6)
	dy := randTensor(rng, 4, 3)
	ya := a.Forward(x, true).Clone()
	yb := b.Forward(x, true).Clone()
	dxa := a.Backward(dy.Clone())
	dxb := b.Backward(dy.Clone())
	if !slices.Equal(ya.Data, yb.Data) || !slices.Equal(dxa.Data, dxb.Data) || !slices.Equal(a.Grads, b.Grads) {
		t.Fatal("in-place ReLU computes differently")
	}
	if b.Layers[1].String() != "relu(in place)" || b.Layers[1].Clone().String() != "relu(in place)" {
		t.Fatal("String or Clone loses InPlace")
	}
}

// TestThreadIndependence runs the same training step with 1, 2 and 5
// threads. The layers' own loops and reductions do not depend on the
// thread count, so a network whose products are too small to be split
// gives bit-identical results; the MLP's large products are split per
// thread under the openblas backend and agree to rounding, and bit for bit
// on a repeat with the same thread count.
func TestThreadIndependence(t *testing.T) {
	defer tensor.SetThreads(0)
	rng := rand.New(rand.NewPCG(10, 10))
	x := randTensor(rng, 37, 64)
	labels := make([]int, 37)
	for i := range labels {
		labels[i] = i % 5
	}
	var want *Network
	for _, th := range []int{2, 1, 5} {
		tensor.SetThreads(th)
		net := testNet(rand.New(rand.NewPCG(11, 11)))
		net.Loss(&CrossEntropy{Smoothing: 0.1}, x, labels, true)
		if want == nil {
			want = net
			continue
		}
		if !slices.Equal(net.Grads, want.Grads) || !slices.Equal(net.State, want.State) {
			t.Fatalf("threads=%d: results differ from threads=2", th)
		}
	}
	x = randTensor(rng, 70, 784)
	labels = make([]int, 70)
	var ref []float32
	for _, th := range []int{2, 1, 3} {
		tensor.SetThreads(th)
		var first []float32
		for range 2 {
			net := MLP(rand.New(rand.NewPCG(12, 12)), 784, 300, 10)
			net.Loss(&CrossEntropy{}, x, labels, true)
			if first == nil {
				first = net.Grads
				continue
			}
			if !slices.Equal(net.Grads, first) {
				t.Fatalf("MLP threads=%d: gradients differ between two runs", th)
			}
		}
		if ref == nil {
			ref = first
			continue
		}
		closeTo(t, fmt.Sprintf("MLP threads=%d", th), first, to64(ref), 1e-5)
	}
}

// TestEmptyBatch runs a batch of zero samples through every layer kind.
func TestEmptyBatch(t *testing.T) {
	net := testNet(rand.New(rand.NewPCG(13, 13)))
	net.InputGrad = true
	loss, correct := net.Loss(&CrossEntropy{}, tensor.New(0, 64), nil, true)
	if loss != 0 || correct != 0 {
		t.Fatalf("empty batch: loss %v, %d correct", loss, correct)
	}
	for _, g := range net.Grads {
		if g != 0 {
			t.Fatal("empty batch changed the gradient")
		}
	}
}

// TestPoolReLUCommute checks SmallCNN's order (pool, then ReLU) against
// the order of PyTorch's example (ReLU, then pool) on the same weights.
func TestPoolReLUCommute(t *testing.T) {
	a := SmallCNN(rand.New(rand.NewPCG(14, 14)))
	l := a.Layers
	if _, ok := l[4].(*MaxPool); !ok {
		t.Fatalf("layer 4 is %s, want maxpool", l[4])
	}
	b := NewNetwork(rand.New(rand.NewPCG(14, 14)),
		NewReshape(28, 28, 1),
		NewConv2D(1, 32, 3, 1, 0), NewReLU(),
		NewConv2D(32, 64, 3, 1, 0), NewReLU(),
		NewMaxPool(2, 2),
		NewFlatten(),
		NewDense(12*12*64, 128), NewReLU(),
		NewDense(128, 10),
	)
	if !slices.Equal(a.Params, b.Params) {
		t.Fatal("same seed, different parameters")
	}
	rng := rand.New(rand.NewPCG(15, 15))
	x := randTensor(rng, 3, 784)
	labels := []int{1, 5, 9}
	la, _ := a.Loss(&CrossEntropy{}, x, labels, true)
	lb, _ := b.Loss(&CrossEntropy{}, x, labels, true)
	if la != lb || !slices.Equal(a.Grads, b.Grads) {
		t.Fatalf("losses %v and %v; gradients equal: %t", la, lb, slices.Equal(a.Grads, b.Grads))
	}
}
