package nn

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"scaleplan/engine/tensor"
)

var benchBatches = []int{16, 32, 64, 128, 256, 512, 1024}

// benchStep measures one training step (ZeroGrad, forward, loss,
// backward; no optimizer) and reports samples per second of wall time,
// and per second of process CPU time (samples/cpu-s), which is less
// disturbed by other processes on a shared machine; on an idle machine
// with P cores and perfect scaling samples/s ≈ P · samples/cpu-s.
func benchStep(b *testing.B, build func(*rand.Rand) *Network) {
	b.Logf("backend: %s", tensor.BackendDetail())
	for _, n := range benchBatches {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, uint64(n)))
			net := build(rng)
			x := randTensor(rng, n, 784)
			labels := make([]int, n)
			for i := range labels {
				labels[i] = rng.IntN(10)
			}
			ce := &CrossEntropy{Smoothing: 0.1}
			net.ZeroGrad()
			net.Loss(ce, x, labels, true) // warm the buffers
			b.ReportAllocs()
			b.ResetTimer()
			c0 := cpuTime()
			for range b.N {
				net.ZeroGrad()
				net.Loss(ce, x, labels, true)
			}
			samples := float64(n) * float64(b.N)
			b.ReportMetric(samples/b.Elapsed().Seconds(), "samples/s")
			if cpu := cpuTime() - c0; cpu > 0 {
				b.ReportMetric(samples/cpu.Seconds(), "samples/cpu-s")
			}
		})
	}
}

// BenchmarkMLPStep is a training step of MLP(784, 1024, 1024, 10).
func BenchmarkMLPStep(b *testing.B) {
	benchStep(b, func(rng *rand.Rand) *Network { return MLP(rng, 784, 1024, 1024, 10) })
}

// BenchmarkCNNStep is a training step of SmallCNN.
func BenchmarkCNNStep(b *testing.B) { benchStep(b, SmallCNN) }

// BenchmarkColSums is the bias gradient of a dense layer at batch 1024
// with 1024 outputs: the column sums of a 1024×1024 matrix (4 MiB).
func BenchmarkColSums(b *testing.B) {
	const rows, cols = 1024, 1024
	x := randTensor(rand.New(rand.NewPCG(1, 2)), rows, cols)
	dst := make([]float32, cols)
	var scratch []float32
	b.SetBytes(4 * rows * cols)
	for range b.N {
		addColSums(dst, x.Data, rows, cols, &scratch)
	}
}
