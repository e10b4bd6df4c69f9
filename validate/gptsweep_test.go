package validate

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"scaleplan/predict"
)

// TestGPTSweepQuoted checks docs/torchbench-measured.md's table of the
// GPT-3 shapes measured on an H200 (testdata/measurements/h200-2026-11-30-gpt):
// at each group's largest batch, the measured samples/s and peak memory,
// the uncalibrated prediction and its error, the simulator's footprint
// there and its largest batch; the mean absolute error over every row;
// the range of the measured peaks over the footprints, with and without
// the loss's transient buffers; and the bytes a logit the measured peak
// grows by beyond the stored activations the model counts.
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
	lo0, hi0 := math.Inf(1), math.Inf(-1)
	var bf16 []float64          // the largest batch's error of each bf16 group
	const logits = 2048 * 50257 // a sequence's
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
		r0 := (float64(last.Footprint) - 8*logits*float64(last.Batch)) / float64(last.PeakMemory)
		lo0, hi0 = min(lo0, r0), max(hi0, r0)
		if g.Model == "gpt3-125m" {
			// The growth of the peak from half the largest batch to it,
			// beyond that of the footprint less its 8 bytes a logit.
			var half MeasuredRow
			for _, r := range g.Rows {
				if r.Batch == last.Batch/2 {
					half = r
				}
			}
			dPeak := float64(last.PeakMemory - half.PeakMemory)
			dFoot := float64(last.Footprint - half.Footprint)
			say(fmt.Sprintf("%.1f bytes a logit from %d to %d (%s)", (dPeak-dFoot)/(logits*float64(last.Batch-half.Batch))+8,
				half.Batch, last.Batch, map[string]string{"amp-bf16": "bf16", "tf32": "tf32"}[g.Precision]))
		}
		if g.Precision == "amp-bf16" {
			bf16 = append(bf16, last.Error())
		}
		say(fmt.Sprintf("| %s | %s | %d–%d | %.1f | %.1f GB | %.1f | %s | %.1f GB | %d |", g.Model, g.Precision, first, last.Batch,
			last.SamplesPerSec, float64(last.PeakMemory)/1e9, last.Predicted, signed(pct(last.Error())), float64(last.Footprint)/1e9, g.PredictedMax))
	}
	say(fmt.Sprintf("over its %d rows %.1f %%", n, pct(sum/float64(n))))
	say(fmt.Sprintf("In bf16 each group's largest batch is predicted %s to %s", signed(pct(slices.Max(bf16))), signed(pct(slices.Min(bf16)))))
	say(fmt.Sprintf("The measured peaks are %.2f to %.2f times the simulator's footprint", lo, hi))
	say(fmt.Sprintf("Without the transient the footprint is %.2f to %.2f of the peak", lo0, hi0))
}
