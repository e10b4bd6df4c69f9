package optim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// sgdMomentum64 is the momentum step computed in float64 and rounded once
// per stored value: the reference for the float32 loop.
func sgdMomentum64(p, g, buf []float32, wd, lr, mu, damp float64) {
	for i, w32 := range p {
		w := float64(w32)
		b := mu*float64(buf[i]) + damp*(float64(g[i])+wd*w)
		buf[i] = float32(b)
		p[i] = float32(w - lr*b)
	}
}

func randVec(rng *rand.Rand, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(scale * rng.NormFloat64())
	}
	return v
}

// TestSGDFloat32 checks the unrolled float32 loops, at lengths that leave
// 0 to 3 elements for the tail, against float64 arithmetic: ten steps may
// differ only by float32 rounding.
func TestSGDFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 64, 1001} {
		p := randVec(rng, n, 0.1)
		p64 := append([]float32(nil), p...)
		buf, buf64 := make([]float32, n), make([]float32, n)
		for range 10 {
			g := randVec(rng, n, 0.01)
			sgdMomentum(p, g, buf, 1e-4, 0.05, 0.9, 0.8)
			sgdMomentum64(p64, g, buf64, 1e-4, 0.05, 0.9, 0.8)
		}
		for i := range p {
			if d := math.Abs(float64(p[i] - p64[i])); d > 1e-6*math.Max(1e-2, math.Abs(float64(p64[i]))) {
				t.Errorf("n=%d: w[%d] = %.9g, float64 gives %.9g", n, i, p[i], p64[i])
			}
			if d := math.Abs(float64(buf[i] - buf64[i])); d > 1e-5*math.Max(1e-3, math.Abs(float64(buf64[i]))) {
				t.Errorf("n=%d: b[%d] = %.9g, float64 gives %.9g", n, i, buf[i], buf64[i])
			}
		}
	}
}

// BenchmarkSGD measures one momentum step over n parameters with the
// float32 loop and, as a peer in the same run, the float64 reference.
func BenchmarkSGD(b *testing.B) {
	for _, n := range []int{1 << 16, 1 << 21} {
		rng := rand.New(rand.NewPCG(1, uint64(n)))
		p, g, buf := randVec(rng, n, 0.1), randVec(rng, n, 0.01), randVec(rng, n, 0.01)
		for _, impl := range []struct {
			name string
			f    func(p, g, buf []float32, wd, lr, mu, damp float64)
		}{{"float32", sgdMomentum}, {"float64", sgdMomentum64}} {
			b.Run(fmt.Sprintf("n=%d/%s", n, impl.name), func(b *testing.B) {
				b.SetBytes(int64(20 * n)) // read w, g, b; write w, b
				for range b.N {
					impl.f(p, g, buf, 1e-4, 1e-3, 0.9, 1)
				}
			})
		}
	}
}
