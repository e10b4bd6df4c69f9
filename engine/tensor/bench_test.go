package tensor

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
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

// BenchmarkMLPProducts measures the five large matrix products of a
// training step of the MLP 784-1024-1024-10 at batch b, as nn.Dense issues
// them: the two hidden layers' forward products, the second layer's
// weight gradient (Hᵀ·dY) and input gradient (dY·Wᵀ), and the first
// layer's weight gradient (Xᵀ·dY; the first layer needs no input
// gradient). "all" runs the five in turn and reports their rate.
func BenchmarkMLPProducts(b *testing.B) {
	b.Logf("backend: %s", BackendDetail())
	for _, n := range []int{64, 256, 1024} {
		rng := rand.New(rand.NewPCG(3, uint64(n)))
		x, w1, h := randSlice(rng, n*784), randSlice(rng, 784*1024), randSlice(rng, n*1024)
		w2, dy := randSlice(rng, 1024*1024), randSlice(rng, n*1024)
		y, g := make([]float32, n*1024), make([]float32, 1024*1024)
		ops := []struct {
			name string
			flop float64
			run  func()
		}{
			{"forward1", 2 * float64(n) * 784 * 1024, func() { Gemm(false, false, n, 1024, 784, 1, x, 784, w1, 1024, 0, y, 1024) }},
			{"forward2", 2 * float64(n) * 1024 * 1024, func() { Gemm(false, false, n, 1024, 1024, 1, h, 1024, w2, 1024, 0, y, 1024) }},
			{"weightgrad2", 2 * float64(n) * 1024 * 1024, func() { Gemm(true, false, 1024, 1024, n, 1, h, 1024, dy, 1024, 0, g, 1024) }},
			{"inputgrad2", 2 * float64(n) * 1024 * 1024, func() { Gemm(false, true, n, 1024, 1024, 1, dy, 1024, w2, 1024, 0, y, 1024) }},
			{"weightgrad1", 2 * float64(n) * 784 * 1024, func() { Gemm(true, false, 784, 1024, n, 1, x, 784, dy, 1024, 0, g, 1024) }},
		}
		var total float64
		for _, o := range ops {
			total += o.flop
		}
		all := func() {
			for _, o := range ops {
				o.run()
			}
		}
		for _, o := range append(ops, struct {
			name string
			flop float64
			run  func()
		}{"all", total, all}) {
			b.Run(fmt.Sprintf("batch=%d/%s", n, o.name), func(b *testing.B) {
				for range b.N {
					o.run()
				}
				b.ReportMetric(o.flop*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkParallelAfterGap measures a parallel loop that follows a
// stretch of serial work on the calling goroutine, as the loops of a
// training step follow each other: each iteration busy-waits gap on the
// caller, then runs Parallel over two chunks of about 100 µs each.
// "region-µs" is the mean time of the parallel loop alone: about 100 µs
// when the second core joins at once, up to 200 µs when it joins late.
// spin=0 parks the helpers at once, so every loop wakes one, as the
// goroutine-per-call loops before the helper pool did.
func BenchmarkParallelAfterGap(b *testing.B) {
	defer SetThreads(0)
	defer spinFor.Store(spinFor.Load())
	SetThreads(2)
	work := func(d time.Duration) {
		for t := time.Now(); time.Since(t) < d; {
		}
	}
	for _, spin := range []time.Duration{0, time.Millisecond} {
		for _, gap := range []time.Duration{20 * time.Microsecond, 300 * time.Microsecond} {
			b.Run(fmt.Sprintf("spin=%v/gap=%v", spin, gap), func(b *testing.B) {
				spinFor.Store(int64(spin))
				var region time.Duration
				for range b.N {
					work(gap)
					t0 := time.Now()
					Parallel(2, 1, func(lo, hi int) { work(100 * time.Microsecond) })
					region += time.Since(t0)
				}
				b.ReportMetric(float64(region.Microseconds())/float64(b.N), "region-µs")
			})
		}
	}
}
