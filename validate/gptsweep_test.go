package validate

import (
	"fmt"
	"math"
	"testing"

	"scaleplan/predict"
)

// TestGPTSweepQuoted checks docs/torchbench-measured.md's table of the
// GPT-3 shapes measured on an H200 (testdata/measurements/h200-2026-11-30-gpt):
// at each group's largest batch, the measured samples/s and peak memory,
// the uncalibrated prediction and its error, the simulator's footprint
// there and its largest batch; the mean absolute error over every row;
// and the range of the measured peaks over the footprints.
func TestGPTSweepQuoted(t *testing.T) {
	cat, prof := defaults(t)
	say := docSay(t, "torchbench-measured.md")
	ms := measuredGlob(t, cat, prof, "../testdata/measurements/h200-2026-11-30-gpt/*.jsonl")
	rep, err := CompareMeasured(ms, cat, prof, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	var n int
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, g := range rep.Groups {
		var last MeasuredRow
		first := 0
		for _, r := range g.Rows {
			if r.OOM {
				continue
			}
			if first == 0 || r.Batch < first {
				first = r.Batch
			}
			if r.Batch > last.Batch {
				last = r
			}
			sum += math.Abs(r.Error())
			n++
		}
		r := float64(last.PeakMemory) / float64(last.Footprint)
		lo, hi = min(lo, r), max(hi, r)
		say(fmt.Sprintf("| %s | %s | %d–%d | %.1f | %.1f GB | %.1f | %s | %.1f GB | %d |", g.Model, g.Precision, first, last.Batch,
			last.SamplesPerSec, float64(last.PeakMemory)/1e9, last.Predicted, signed(pct(last.Error())), float64(last.Footprint)/1e9, g.PredictedMax))
	}
	say(fmt.Sprintf("over its %d rows %.1f %%", n, pct(sum/float64(n))))
	say(fmt.Sprintf("The measured peaks are %.1f to %.1f times the simulator's footprint", lo, hi))
}
