package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// naiveGemm is the serial reference: a triple loop in float64 over the
// textbook definition of C = alpha*op(A)*op(B) + beta*C.
func naiveGemm(transA, transB bool, m, n, k int, alpha float64, a []float32, lda int, b []float32, ldb int, beta float64, c []float32, ldc int) []float64 {
	out := make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				var aip, bpj float32
				if transA {
					aip = a[p*lda+i]
				} else {
					aip = a[i*lda+p]
				}
				if transB {
					bpj = b[j*ldb+p]
				} else {
					bpj = b[p*ldb+j]
				}
				s += float64(aip) * float64(bpj)
			}
			cij := 0.0
			if beta != 0 {
				cij = beta * float64(c[i*ldc+j])
			}
			out[i*n+j] = alpha*s + cij
		}
	}
	return out
}

func TestGemmAgainstNaive(t *testing.T) {
	shapes := []struct{ m, n, k, pad int }{
		{1, 1, 1, 0},
		{2, 3, 4, 0},
		{7, 5, 3, 2},
		{17, 33, 9, 0},
		{64, 64, 64, 0},
		{65, 130, 257, 3}, // above gonum's parallel threshold on one axis, odd sizes
		{130, 400, 70, 2}, // 3 × 3 tiles of 64×192 under gonum, the last of each partial
		{300, 20, 50, 1},
		{5, 0, 4, 0},
		{0, 5, 4, 0},
		{3, 4, 0, 0},
	}
	scales := []struct{ alpha, beta float32 }{{1, 0}, {0.5, 1}, {-2, 0.25}, {0, 3}}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range shapes {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for _, sc := range scales {
					name := fmt.Sprintf("m=%d,n=%d,k=%d,pad=%d,tA=%t,tB=%t,alpha=%g,beta=%g", s.m, s.n, s.k, s.pad, tA, tB, sc.alpha, sc.beta)
					ra, ca := s.m, s.k
					if tA {
						ra, ca = s.k, s.m
					}
					rb, cb := s.k, s.n
					if tB {
						rb, cb = s.n, s.k
					}
					lda, ldb, ldc := max(1, ca+s.pad), max(1, cb+s.pad), max(1, s.n+s.pad)
					a := randSlice(rng, max(0, ra*lda))
					b := randSlice(rng, max(0, rb*ldb))
					c := randSlice(rng, max(0, s.m*ldc))
					if sc.beta == 0 && len(c) > 0 {
						c[0] = float32(math.NaN()) // beta = 0 must ignore C, NaN included
					}
					orig := append([]float32(nil), c...)
					want := naiveGemm(tA, tB, s.m, s.n, s.k, float64(sc.alpha), a, lda, b, ldb, float64(sc.beta), c, ldc)
					Gemm(tA, tB, s.m, s.n, s.k, sc.alpha, a, lda, b, ldb, sc.beta, c, ldc)
					// float32 accumulation: error grows like sqrt(k) times eps times the magnitudes.
					tol := 1e-5 * math.Sqrt(float64(max(1, s.k))) * 4
					for i := range s.m {
						for j := 0; j < ldc; j++ {
							got := c[i*ldc+j]
							if j >= s.n {
								if got != orig[i*ldc+j] && !(math.IsNaN(float64(got)) && math.IsNaN(float64(orig[i*ldc+j]))) {
									t.Fatalf("%s: padding element (%d,%d) changed", name, i, j)
								}
								continue
							}
							w := want[i*s.n+j]
							if d := math.Abs(float64(got) - w); d > tol*max(1, math.Abs(w)) || math.IsNaN(float64(got)) {
								t.Fatalf("%s: C[%d,%d] = %v, want %v", name, i, j, got, w)
							}
						}
					}
				}
			}
		}
	}
}

func TestMatMul(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		ar, ac, br, bc int
		tA, tB         bool
	}{
		{3, 4, 4, 5, false, false},
		{4, 3, 4, 5, true, false},
		{3, 4, 5, 4, false, true},
		{4, 3, 5, 4, true, true},
		{1, 1, 1, 1, false, false},
	} {
		a := FromData(randSlice(rng, tc.ar*tc.ac), tc.ar, tc.ac)
		b := FromData(randSlice(rng, tc.br*tc.bc), tc.br, tc.bc)
		var c T
		MatMul(&c, a, b, tc.tA, tc.tB)
		m, k := tc.ar, tc.ac
		if tc.tA {
			m, k = k, m
		}
		n := tc.bc
		if tc.tB {
			n = tc.br
		}
		if c.Rank() != 2 || c.Shape[0] != m || c.Shape[1] != n {
			t.Fatalf("%+v: shape %v, want [%d %d]", tc, c.Shape, m, n)
		}
		want := naiveGemm(tc.tA, tc.tB, m, n, k, 1, a.Data, tc.ac, b.Data, tc.bc, 0, nil, n)
		for i, w := range want {
			if math.Abs(float64(c.Data[i])-w) > 1e-5*max(1, math.Abs(w)) {
				t.Fatalf("%+v: element %d = %v, want %v", tc, i, c.Data[i], w)
			}
		}
	}
}

func TestGemmPanics(t *testing.T) {
	a := make([]float32, 6)
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"negative m", func() { Gemm(false, false, -1, 2, 3, 1, a, 3, a, 2, 0, a, 2) }},
		{"short lda", func() { Gemm(false, false, 2, 2, 3, 1, a, 2, a, 2, 0, a, 2) }},
		{"short ldc", func() { Gemm(false, false, 2, 3, 1, 1, a, 1, a, 3, 0, a, 2) }},
		{"short a", func() { Gemm(false, false, 3, 2, 3, 1, a, 3, a, 2, 0, a, 2) }},
		{"short c", func() { Gemm(false, false, 2, 4, 1, 1, a, 1, a, 4, 0, a, 4) }},
		{"matmul inner", func() { var c T; MatMul(&c, New(2, 3), New(2, 3), false, false) }},
		{"matmul rank", func() { var c T; MatMul(&c, New(2, 3, 1), New(3, 2), false, false) }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			tc.f()
		}()
	}
}

// TestGemmSplit checks that Gemm, on any number of threads, matches
// GemmSerial to rounding (under gonum, whose tiles do not depend on the
// thread count, bit for bit), and that it is reproducible bit for bit for
// a given number of threads.
func TestGemmSplit(t *testing.T) {
	defer SetThreads(0)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, s := range []struct {
		tA, tB  bool
		m, n, k int
	}{
		{false, false, 301, 67, 129},
		{true, false, 77, 250, 90},
		{false, true, 40, 333, 64},
		{true, true, 257, 31, 100},
	} {
		ra, ca := s.m, s.k
		if s.tA {
			ra, ca = s.k, s.m
		}
		rb, cb := s.k, s.n
		if s.tB {
			rb, cb = s.n, s.k
		}
		a, b := randSlice(rng, ra*ca), randSlice(rng, rb*cb)
		c0 := randSlice(rng, s.m*s.n)
		serial := append([]float32(nil), c0...)
		GemmSerial(s.tA, s.tB, s.m, s.n, s.k, 1.5, a, ca, b, cb, 0.5, serial, s.n)
		for _, th := range []int{1, 2, 3, 8} {
			SetThreads(th)
			var first []float32
			for range 2 {
				got := append([]float32(nil), c0...)
				Gemm(s.tA, s.tB, s.m, s.n, s.k, 1.5, a, ca, b, cb, 0.5, got, s.n)
				if first == nil {
					first = got
					for i := range got {
						if d := math.Abs(float64(got[i] - serial[i])); d > 1e-5*max(1, math.Abs(float64(serial[i]))) ||
							Backend() == "gonum" && got[i] != serial[i] {
							t.Fatalf("%+v threads=%d: element %d = %v, serial %v", s, th, i, got[i], serial[i])
						}
					}
					continue
				}
				for i := range got {
					if got[i] != first[i] {
						t.Fatalf("%+v threads=%d: element %d = %v, then %v", s, th, i, first[i], got[i])
					}
				}
			}
		}
	}
}
