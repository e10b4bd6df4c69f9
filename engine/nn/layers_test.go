package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"scaleplan/engine/tensor"
)

// Forward passes are compared with direct float64 evaluations of the
// defining formulas (serial loops written from the layer docs).

func closeTo(t *testing.T, label string, got []float32, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", label, len(got), len(want))
	}
	for i, w := range want {
		if d := math.Abs(float64(got[i]) - w); d > tol*max(1, math.Abs(w)) || math.IsNaN(float64(got[i])) {
			t.Fatalf("%s: element %d = %v, want %v", label, i, got[i], w)
		}
	}
}

func TestDenseForward(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 1))
	l := NewDense(5, 3)
	NewNetwork(rng, l)
	for i := range l.b.Value {
		l.b.Value[i] = float32(i) - 1
	}
	x := randTensor(rng, 4, 5)
	y := l.Forward(x, false)
	want := make([]float64, 4*3)
	for n := range 4 {
		for o := range 3 {
			s := float64(l.b.Value[o])
			for i := range 5 {
				s += float64(x.Data[n*5+i]) * float64(l.w.Value[i*3+o])
			}
			want[n*3+o] = s
		}
	}
	closeTo(t, "dense", y.Data, want, 1e-5)
}

// naiveConv evaluates the convolution sum of the Conv2D doc directly.
func naiveConv(x *tensor.T, w, b []float32, outC, k, stride, pad int) ([]float64, []int) {
	n, h, wd, c := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	oh, ow := (h+2*pad-k)/stride+1, (wd+2*pad-k)/stride+1
	out := make([]float64, n*oh*ow*outC)
	for s := range n {
		for i := range oh {
			for j := range ow {
				for o := range outC {
					sum := float64(b[o])
					for p := range k {
						for q := range k {
							ih, iw := i*stride+p-pad, j*stride+q-pad
							if ih < 0 || ih >= h || iw < 0 || iw >= wd {
								continue
							}
							for ch := range c {
								sum += float64(x.Data[((s*h+ih)*wd+iw)*c+ch]) * float64(w[((p*k+q)*c+ch)*outC+o])
							}
						}
					}
					out[((s*oh+i)*ow+j)*outC+o] = sum
				}
			}
		}
	}
	return out, []int{n, oh, ow, outC}
}

func TestConv2DForward(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 2))
	for _, tc := range []struct {
		n, h, w, inC, outC, k, stride, pad int
		budget                             int // colBudget in bytes; 0 keeps the default
	}{
		{2, 5, 5, 1, 2, 3, 1, 0, 0},
		{3, 6, 7, 3, 4, 3, 1, 1, 0},
		{2, 7, 7, 2, 3, 3, 2, 1, 0},
		{2, 8, 6, 2, 3, 3, 2, 0, 0},
		{1, 4, 4, 2, 2, 4, 1, 0, 0}, // kernel as large as the input: 1×1 output
		{2, 3, 3, 2, 2, 5, 1, 1, 0}, // kernel larger than the input, padding makes it fit
		{3, 4, 5, 3, 2, 1, 1, 0, 0}, // 1×1 fast path
		{5, 6, 6, 2, 3, 3, 1, 1, 1}, // one sample per chunk
		{7, 6, 6, 2, 3, 3, 2, 0, 400},
		{1, 28, 28, 1, 32, 3, 1, 0, 0}, // SmallCNN's first layer
	} {
		label := fmt.Sprintf("%+v", tc)
		old := colBudget
		if tc.budget > 0 {
			colBudget = tc.budget
		}
		l := NewConv2D(tc.inC, tc.outC, tc.k, tc.stride, tc.pad)
		NewNetwork(rng, l)
		for i := range l.b.Value {
			l.b.Value[i] = float32(rng.NormFloat64())
		}
		x := randTensor(rng, tc.n, tc.h, tc.w, tc.inC)
		y := l.Forward(x, true)
		want, shape := naiveConv(x, l.w.Value, l.b.Value, tc.outC, tc.k, tc.stride, tc.pad)
		if !sameShape(y.Shape, shape...) {
			t.Fatalf("%s: shape %v, want %v", label, y.Shape, shape)
		}
		colBudget = old
		closeTo(t, label, y.Data, want, 1e-5)
	}
}

func TestMaxPoolForward(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 3))
	for _, tc := range []struct{ n, h, w, c, k, s int }{{2, 4, 4, 3, 2, 2}, {1, 5, 7, 2, 2, 2}, {2, 5, 5, 1, 3, 1}, {1, 24, 24, 64, 2, 2}} {
		l := NewMaxPool(tc.k, tc.s)
		x := randTensor(rng, tc.n, tc.h, tc.w, tc.c)
		y := l.Forward(x, false)
		oh, ow := (tc.h-tc.k)/tc.s+1, (tc.w-tc.k)/tc.s+1
		if !sameShape(y.Shape, tc.n, oh, ow, tc.c) {
			t.Fatalf("%+v: shape %v", tc, y.Shape)
		}
		want := make([]float64, 0, y.Len())
		for s := range tc.n {
			for i := range oh {
				for j := range ow {
					for ch := range tc.c {
						m := math.Inf(-1)
						for p := range tc.k {
							for q := range tc.k {
								m = max(m, float64(x.Data[((s*tc.h+i*tc.s+p)*tc.w+j*tc.s+q)*tc.c+ch]))
							}
						}
						want = append(want, m)
					}
				}
			}
		}
		closeTo(t, fmt.Sprintf("%+v", tc), y.Data, want, 0)
	}
}

// TestMaxPoolTies checks max pooling on values with many ties and signed
// zeros against a direct reference: y is the window's maximum and the
// gradient goes to the first element of the window, in row-major order,
// that equals it; a NaN in a window makes its output NaN.
func TestMaxPoolTies(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 9))
	for _, tc := range []struct{ n, h, w, c, k, s int }{{2, 6, 6, 5, 2, 2}, {1, 7, 6, 3, 3, 1}, {1, 24, 24, 64, 2, 2}} {
		x := tensor.New(tc.n, tc.h, tc.w, tc.c)
		for i := range x.Data {
			x.Data[i] = float32(rng.IntN(3)) - 2 // -2, -1 or 0
			if x.Data[i] == 0 && rng.IntN(2) == 0 {
				x.Data[i] = float32(math.Copysign(0, -1))
			}
		}
		l := NewMaxPool(tc.k, tc.s)
		y := l.Forward(x, true)
		dy := tensor.New(y.Shape...)
		for i := range dy.Data {
			dy.Data[i] = float32(i%7 + 1)
		}
		dx := l.Backward(dy, true)
		oh, ow := (tc.h-tc.k)/tc.s+1, (tc.w-tc.k)/tc.s+1
		want := make([]float32, x.Len())
		for s := range tc.n {
			for i := range oh {
				for j := range ow {
					for ch := range tc.c {
						o := ((s*oh+i)*ow+j)*tc.c + ch
						m := float32(math.Inf(-1))
						for p := range tc.k {
							for q := range tc.k {
								m = max(m, x.Data[((s*tc.h+i*tc.s+p)*tc.w+j*tc.s+q)*tc.c+ch])
							}
						}
						if y.Data[o] != m {
							t.Fatalf("%+v: y[%d] = %v, want %v", tc, o, y.Data[o], m)
						}
					first:
						for p := range tc.k {
							for q := range tc.k {
								if a := ((s*tc.h+i*tc.s+p)*tc.w+j*tc.s+q)*tc.c + ch; x.Data[a] == m {
									want[a] += dy.Data[o]
									break first
								}
							}
						}
					}
				}
			}
		}
		for i := range want {
			if dx.Data[i] != want[i] {
				t.Fatalf("%+v: dx[%d] = %v, want %v", tc, i, dx.Data[i], want[i])
			}
		}
	}
	// A NaN anywhere in the window makes the output NaN.
	for pos := range 4 {
		x := tensor.New(1, 2, 2, 1)
		copy(x.Data, []float32{1, 2, 3, 4})
		x.Data[pos] = float32(math.NaN())
		if y := NewMaxPool(2, 2).Forward(x, false); !math.IsNaN(float64(y.Data[0])) {
			t.Errorf("NaN at %d: y = %v, want NaN", pos, y.Data[0])
		}
	}
}

func TestNormForward(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 4))
	// GroupNorm on [N, H, W, C].
	n, h, w, c, g := 3, 2, 3, 6, 3
	gn := NewGroupNorm(g, c)
	NewNetwork(rng, gn)
	for i := range c {
		gn.gamma.Value[i] = float32(rng.NormFloat64())
		gn.beta.Value[i] = float32(rng.NormFloat64())
	}
	x := randTensor(rng, n, h, w, c)
	for i := range x.Data {
		x.Data[i] = 3 + 2*x.Data[i] // offset and scale: normalisation must remove them
	}
	y := gn.Forward(x, true)
	want := make([]float64, x.Len())
	cg, s := c/g, h*w
	for sm := range n {
		for gi := range g {
			var sum, sq float64
			for p := range s {
				for ch := gi * cg; ch < (gi+1)*cg; ch++ {
					sum += float64(x.Data[(sm*s+p)*c+ch])
				}
			}
			mu := sum / float64(s*cg)
			for p := range s {
				for ch := gi * cg; ch < (gi+1)*cg; ch++ {
					d := float64(x.Data[(sm*s+p)*c+ch]) - mu
					sq += d * d
				}
			}
			sd := math.Sqrt(sq/float64(s*cg) + 1e-5)
			for p := range s {
				for ch := gi * cg; ch < (gi+1)*cg; ch++ {
					i := (sm*s+p)*c + ch
					want[i] = float64(gn.gamma.Value[ch])*(float64(x.Data[i])-mu)/sd + float64(gn.beta.Value[ch])
				}
			}
		}
	}
	closeTo(t, "groupnorm", y.Data, want, 1e-5)

	// BatchNorm on [N, H, W, C]: statistics per channel over N·H·W, and
	// the running statistics after two training steps.
	bn := NewBatchNorm(c)
	NewNetwork(rng, bn)
	for i := range c {
		bn.gamma.Value[i] = float32(rng.NormFloat64())
		bn.beta.Value[i] = float32(rng.NormFloat64())
	}
	rm, rv := make([]float64, c), make([]float64, c)
	for i := range rv {
		rv[i] = 1
	}
	for step := range 2 {
		x := randTensor(rng, n, h, w, c)
		for i := range x.Data {
			x.Data[i] = float32(step) + 2*x.Data[i]
		}
		y := bn.Forward(x, true)
		m := n * h * w
		for ch := range c {
			var sum, sq float64
			for r := range m {
				sum += float64(x.Data[r*c+ch])
			}
			mu := sum / float64(m)
			for r := range m {
				d := float64(x.Data[r*c+ch]) - mu
				sq += d * d
			}
			v := sq / float64(m)
			for r := range m {
				want[r*c+ch] = float64(bn.gamma.Value[ch])*(float64(x.Data[r*c+ch])-mu)/math.Sqrt(v+1e-5) + float64(bn.beta.Value[ch])
			}
			rm[ch] = 0.9*rm[ch] + 0.1*mu
			rv[ch] = 0.9*rv[ch] + 0.1*v*float64(m)/float64(m-1)
		}
		closeTo(t, fmt.Sprintf("batchnorm train step %d", step), y.Data, want[:x.Len()], 1e-5)
	}
	closeTo(t, "running mean", bn.rmean.Value, rm, 1e-6)
	closeTo(t, "running var", bn.rvar.Value, rv, 1e-6)
	// Evaluation uses the running statistics and leaves them alone.
	x = randTensor(rng, 2, c)
	y = bn.Forward(x, false)
	for r := range 2 {
		for ch := range c {
			want[r*c+ch] = float64(bn.gamma.Value[ch])*(float64(x.Data[r*c+ch])-rm[ch])/math.Sqrt(rv[ch]+1e-5) + float64(bn.beta.Value[ch])
		}
	}
	closeTo(t, "batchnorm eval", y.Data, want[:2*c], 1e-5)
	closeTo(t, "running mean after eval", bn.rmean.Value, rm, 1e-6)
}

func TestCrossEntropyValue(t *testing.T) {
	// Two samples, three classes, hand-computed.
	z := tensor.FromData([]float32{1, 2, 3, 0, 0, 0}, 2, 3)
	labels := []int{2, 0}
	lse := math.Log(math.Exp(1) + math.Exp(2) + math.Exp(3))
	for _, tc := range []struct{ eps, want float64 }{
		{0, ((lse - 3) + math.Log(3)) / 2},
		// q = (1-ε)·onehot + ε/3: -Σq log p = lse - Σ q z.
		{0.3, ((lse - (0.7*3 + 0.1*(1+2+3))) + math.Log(3)) / 2},
	} {
		ce := &CrossEntropy{Smoothing: tc.eps}
		if got := ce.Forward(z, labels); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("ε=%g: loss %v, want %v", tc.eps, got, tc.want)
		}
		// Gradient rows sum to zero: Σ(p - q) = 0.
		g := ce.Backward()
		for r := range 2 {
			s := float64(g.Data[r*3]) + float64(g.Data[r*3+1]) + float64(g.Data[r*3+2])
			if math.Abs(s) > 1e-7 {
				t.Errorf("ε=%g: gradient row %d sums to %v", tc.eps, r, s)
			}
		}
	}
	// Huge logits must not overflow.
	big := tensor.FromData([]float32{1e30, -1e30, 0}, 1, 3)
	if l := (&CrossEntropy{}).Forward(big, []int{0}); l != 0 {
		t.Errorf("loss of a certain prediction: %v, want 0", l)
	}
	if c := Correct(z, labels); c != 2 { // row 2 ties: first maximum (class 0) wins
		t.Errorf("Correct = %d, want 2", c)
	}
	if c := Correct(z, []int{1, 1}); c != 0 {
		t.Errorf("Correct = %d, want 0", c)
	}
}

func TestPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"dense rank", func() { NewNetwork(rng0(), NewDense(3, 2)).Forward(tensor.New(2, 3, 1), false) }},
		{"dense width", func() { NewNetwork(rng0(), NewDense(3, 2)).Forward(tensor.New(2, 4), false) }},
		{"conv channels", func() { NewNetwork(rng0(), NewConv2D(2, 2, 3, 1, 0)).Forward(tensor.New(1, 5, 5, 3), false) }},
		{"conv too small", func() { NewNetwork(rng0(), NewConv2D(1, 2, 3, 1, 0)).Forward(tensor.New(1, 2, 5, 1), false) }},
		{"conv config", func() { NewConv2D(1, 1, 3, 0, 0) }},
		{"pool too small", func() { NewMaxPool(3, 1).Forward(tensor.New(1, 2, 2, 1), false) }},
		{"groups", func() { NewGroupNorm(4, 6) }},
		{"reshape size", func() { NewReshape(2, 2).Forward(tensor.New(2, 5), false) }},
		{"backward first", func() { NewReLU().Backward(tensor.New(2), true) }},
		{"grad shape", func() {
			l := NewReLU()
			l.Forward(tensor.New(2, 3), true)
			l.Backward(tensor.New(3, 2), true)
		}},
		{"label range", func() { (&CrossEntropy{}).Forward(tensor.New(1, 3), []int{3}) }},
		{"label count", func() { (&CrossEntropy{}).Forward(tensor.New(2, 3), []int{0}) }},
		{"smoothing", func() { (&CrossEntropy{Smoothing: 1}).Forward(tensor.New(1, 3), []int{0}) }},
		{"shared layer", func() {
			l := NewDense(2, 2)
			NewNetwork(rng0(), l)
			NewNetwork(rng0(), l)
		}},
		{"nil rng", func() { NewNetwork(nil, NewDense(2, 2)) }},
		{"mlp sizes", func() { MLP(rng0(), 784) }},
	} {
		func() {
			defer func() {
				r := recover()
				if r == nil {
					t.Errorf("%s: no panic", tc.name)
					return
				}
				if s, ok := r.(string); !ok || s[:4] != "nn: " {
					t.Errorf("%s: panic %v, want an \"nn: \" message", tc.name, r)
				}
			}()
			tc.f()
		}()
	}
}

func rng0() *rand.Rand { return rand.New(rand.NewPCG(0, 0)) }
