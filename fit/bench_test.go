package fit

import (
	"fmt"
	"math/rand/v2"
	"scaleplan/fit/logs"
	"testing"

	"scaleplan/internal/benchlog"
)

// benchLog returns a log of points measurement records in groups groups:
// each group is a model with its own (v0, t), measured at 20 batch sizes
// from 8 to 160 with 2 % noise.
func benchLog(groups, points int) *logs.Log {
	rng := rand.New(rand.NewPCG(5, 5))
	lg := &logs.Log{Name: "bench", Format: logs.Benchlog}
	per := points / groups
	for g := range groups {
		v0, t := 100+10*float64(g), 0.01+0.001*float64(g)
		for i := range per {
			b := 8 * (1 + i%20)
			lg.Records = append(lg.Records, benchlog.Record{
				Kind: benchlog.KindMeasurement, Model: fmt.Sprintf("m%03d", g), Device: "d", Workers: 1,
				Batch: b, GlobalBatch: b, SamplesPerSec: law(float64(b), v0, t) * (1 + 0.02*rng.NormFloat64()),
			})
			lg.Lines = append(lg.Lines, len(lg.Records))
		}
	}
	return lg
}

// BenchmarkFit fits the throughput law to every group of a log, outlier
// test included. The target: 10,000 points in 100 groups in under
// a second.
func BenchmarkFit(b *testing.B) {
	for _, s := range []struct{ groups, points int }{{1, 100}, {10, 1000}, {100, 10000}} {
		lg := benchLog(s.groups, s.points)
		b.Run(fmt.Sprintf("groups=%d/points=%d", s.groups, s.points), func(b *testing.B) {
			for b.Loop() {
				rep, err := Fit([]*logs.Log{lg}, nil)
				if err != nil || len(rep.Groups) != s.groups || rep.Groups[0].Fit == nil {
					b.Fatal(err)
				}
			}
		})
	}
}
