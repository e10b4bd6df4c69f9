package event

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"scaleplan/internal/units"
)

// BenchmarkScheduler measures the hold model: a queue of n pending events
// in which each event, when it runs, schedules one more a random delay
// later, so the queue keeps n events. It reports events per second.
func BenchmarkScheduler(b *testing.B) {
	for _, n := range []int{1e3, 1e4, 1e5, 1e6} {
		b.Run(fmt.Sprintf("pending=%d", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			var s Scheduler
			var hold func()
			hold = func() { s.After(units.Seconds(rng.Float64()), hold) }
			for range n {
				s.At(units.Seconds(rng.Float64()), hold)
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := s.Events()
			for range b.N {
				s.Step()
			}
			b.ReportMetric(float64(s.Events()-start)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
