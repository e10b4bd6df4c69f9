package tensor

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkSgemm measures C = A*B for square n×n operands and reports the
// rate in GFLOP/s (2n³ operations per product) of wall time, and per
// second of process CPU time (GFLOP/cpu-s), which is less disturbed by
// other processes on a shared machine.
func BenchmarkSgemm(b *testing.B) {
	b.Logf("backend: %s", BackendDetail())
	for _, n := range []int{256, 512, 1024} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, uint64(n)))
			x, y, z := randSlice(rng, n*n), randSlice(rng, n*n), make([]float32, n*n)
			b.ResetTimer()
			c0 := cpuTime()
			for range b.N {
				Gemm(false, false, n, n, n, 1, x, n, y, n, 0, z, n)
			}
			flop := 2 * float64(n) * float64(n) * float64(n) * float64(b.N)
			b.ReportMetric(flop/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			if cpu := cpuTime() - c0; cpu > 0 {
				b.ReportMetric(flop/cpu.Seconds()/1e9, "GFLOP/cpu-s")
			}
		})
	}
}

func randSlice(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(rng.NormFloat64())
	}
	return s
}
