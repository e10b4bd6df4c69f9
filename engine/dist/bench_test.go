package dist

import (
	"context"
	"fmt"
	"testing"

	"scaleplan/engine/tensor"
)

// benchTrain measures full training steps (data wait, forward, backward,
// all-reduce, momentum SGD update) of model on synthetic data, for one
// and two in-process workers at per-worker batches 16 to 1024. It
// reports ns/op as the mean step time of the timed steps (setup and
// warm-up steps excluded) and samples/s over all workers.
func benchTrain(b *testing.B, model string) {
	b.Logf("backend: %s", tensor.BackendDetail())
	for _, w := range []int{1, 2} {
		for _, batch := range []int{16, 32, 64, 128, 256, 512, 1024} {
			b.Run(fmt.Sprintf("workers=%d/batch=%d", w, batch), func(b *testing.B) {
				c := Config{Model: model, Workers: w, Batch: batch, Overlap: true, Prefetch: 2, Seed: 1}
				c.Schedule.Base = 0.01
				m, err := Measure(context.Background(), c, 2, b.N)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(m.StepTime*1e9, "ns/op")
				b.ReportMetric(m.SamplesPerSec, "samples/s")
			})
		}
	}
}

// BenchmarkTrainMLP is the reference MLP 784-1024-1024-10.
func BenchmarkTrainMLP(b *testing.B) { benchTrain(b, "mlp") }

// BenchmarkTrainCNN is the small CNN.
func BenchmarkTrainCNN(b *testing.B) { benchTrain(b, "cnn") }

// BenchmarkAllReduce measures the ring all-reduce of the MLP's gradient
// (1,863,690 values, 7.5 MB) in 1 MiB buckets over both transports.
func BenchmarkAllReduce(b *testing.B) {
	const n = 1863690
	for _, transport := range Transports {
		for _, w := range []int{2, 4} {
			b.Run(fmt.Sprintf("%s/workers=%d", transport, w), func(b *testing.B) {
				var ts []Transport
				if transport == "tcp" {
					ts = tcpRing(&testing.T{}, w, DefaultTimeout)
				} else {
					ts = NewInprocRing(w)
				}
				bufs := make([][]float32, w)
				for r := range bufs {
					bufs[r] = make([]float32, n)
				}
				b.SetBytes(4 * n)
				b.ResetTimer()
				done := make(chan error, w)
				for range b.N {
					for r := range w {
						go func() {
							for _, bk := range Buckets(n, DefaultBucketBytes/4) {
								if err := AllReduce(ts[r], bufs[r][bk[0]:bk[1]], 1); err != nil {
									done <- err
									return
								}
							}
							done <- nil
						}()
					}
					for range w {
						if err := <-done; err != nil {
							b.Fatal(err)
						}
					}
				}
				b.StopTimer()
				if transport == "tcp" {
					for _, t := range ts {
						t.Close()
					}
				}
			})
		}
	}
}

// BenchmarkLinkProbe runs the link probe of validate --engine (two ranks,
// 16 KiB and 4 MiB, 7 steps each) over both transports, with the messages
// left in the cache between steps (evict=0) and written out of it before
// every step (evict=64MiB, more than this machine's last-level cache on
// the 2-core guests of docs/validation.md), and reports the fitted
// bandwidth and latency of the last probe.
func BenchmarkLinkProbe(b *testing.B) {
	for _, transport := range Transports {
		for _, evict := range []int{0, 64 << 20} {
			b.Run(fmt.Sprintf("%s/evict=%dMiB", transport, evict>>20), func(b *testing.B) {
				var ts []Transport
				if transport == "tcp" {
					ts = tcpRing(&testing.T{}, 2, DefaultTimeout)
					defer func() {
						for _, t := range ts {
							t.Close()
						}
					}()
				} else {
					ts = NewInprocRing(2)
				}
				var k Link
				for range b.N {
					var err error
					if k, err = MeasureLink(ts, LinkProbe{Small: 4 << 10, Large: 1 << 20, Reps: 7, Evict: evict}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(k.Bandwidth/1e9, "GB/s")
				b.ReportMetric(k.Latency*1e6, "latency-µs")
			})
		}
	}
}
