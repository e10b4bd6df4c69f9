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

// BenchmarkConv2DPaths is forward and backward of a 3×3 convolution of
// stride 1 from C channels to 64 over 26×26 inputs, batch 64 (SmallCNN's
// second layer at C = 32), by im2col and by Winograd's F(2×2, 3×3): where
// between them the Winograd path starts to pay, which winoMinChannels
// encodes.
func BenchmarkConv2DPaths(b *testing.B) {
	for _, c := range []int{1, 2, 4, 8, 16, 32} {
		for _, path := range []string{"im2col", "winograd"} {
			b.Run(fmt.Sprintf("c=%d/%s", c, path), func(b *testing.B) {
				old := winoMinChannels
				defer func() { winoMinChannels = old }()
				winoMinChannels = 1 << 30
				if path == "winograd" {
					winoMinChannels = 1
				}
				rng := rand.New(rand.NewPCG(1, uint64(c)))
				l := NewConv2D(c, 64, 3, 1, 0)
				NewNetwork(rng, l)
				x, dy := randTensor(rng, 64, 26, 26, c), randTensor(rng, 64, 24, 24, 64)
				l.Forward(x, true) // size the buffers
				l.Backward(dy, true)
				b.ResetTimer()
				for range b.N {
					l.Forward(x, true)
					l.Backward(dy, true)
				}
			})
		}
	}
}
