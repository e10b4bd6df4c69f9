package predict

import (
	"testing"

	"scaleplan/scenarios"
)

// BenchmarkDefaultStudy times what `scaleplan predict` computes with no
// argument: three scenarios loaded and 24 configurations simulated, 1 to
// 512 GPUs.
func BenchmarkDefaultStudy(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		if _, err := DefaultStudy().Run(scenarios.Options{}, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckExchange times predict's latency-bound note on the case
// that shows it, a flat ring over 64 DGX H100 nodes: one bucket's
// all-reduce, one byte's, and four other algorithms', each alone on the
// network (the prediction itself is made once, outside the timing).
func BenchmarkCheckExchange(b *testing.B) {
	p := dgxH100Prediction(b, "ring", 40, 512)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if p.CheckExchange() == nil {
			b.Fatal("no check")
		}
	}
}
