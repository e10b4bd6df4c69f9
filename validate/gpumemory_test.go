package validate

import (
	"fmt"
	"testing"

	"scaleplan/predict"
)

// TestGPUMemoryQuoted checks docs/validation-gpus.md's memory point
// against our H100 logs (testdata/measurements/h100-2026-11-26*): the
// groups with an out-of-memory record whose memory model's largest batch
// lies between the largest batch that ran and the first that did not,
// and the Transformer's footprint against its measured peak at 512 in
// half precision.
func TestGPUMemoryQuoted(t *testing.T) {
	cat, prof := defaults(t)
	say := docSay(t, "validation-gpus.md")
	ms := measuredGlob(t, cat, prof, "../testdata/measurements/h100-2026-11-26*/*.jsonl")
	rep, err := CompareMeasured(ms, cat, prof, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var within, oom int
	for _, g := range rep.Groups {
		if g.FirstOOM == 0 {
			continue
		}
		oom++
		if g.PredictedMax >= g.LargestRun && g.PredictedMax < g.FirstOOM {
			within++
		}
		if g.Model == "transformer-base" && g.Precision == "amp-fp16" {
			for _, r := range g.Rows {
				if r.Batch == 512 {
					say(fmt.Sprintf("%.2f GB modelled against a measured peak of %.2f GB at 512 on the H100",
						float64(r.Footprint)/1e9, float64(r.PeakMemory)/1e9))
				}
			}
		}
	}
	n := map[int]string{7: "seven", 8: "eight", 9: "nine"}
	what := fmt.Sprintf("%s of %s groups", n[within], n[oom])
	if within == oom {
		what = fmt.Sprintf("all %s groups", n[oom])
	}
	say("the first that did not in " + what)
}
