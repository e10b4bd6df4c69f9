package validate

import (
	"fmt"
	"math"
	"testing"

	"scaleplan/predict"
)

// TestBandwidthShareGPUs checks what docs/validation-gpus.md says of the
// bandwidth-bound share of the H100's step between our H100 and H200
// logs: its range over the configurations at tensor-core precisions and
// at fp32, measured and predicted, from the pairs CompareMeasured makes,
// and the model's share above the measured one in every configuration at
// a tensor-core precision.
func TestBandwidthShareGPUs(t *testing.T) {
	cat, prof := defaults(t)
	ms := measuredGlob(t, cat, prof, "../testdata/measurements/h100-2026-11-26*/*.jsonl", "../testdata/measurements/h200-2026-11-26*/*.jsonl")
	rep, err := CompareMeasured(ms, cat, prof, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	type span struct{ lo, hi float64 }
	widen := func(s *span, v float64) { s.lo, s.hi = math.Min(s.lo, v), math.Max(s.hi, v) }
	var meas, pred [2]span // tensor cores, fp32
	for i := range meas {
		meas[i], pred[i] = span{math.Inf(1), math.Inf(-1)}, span{math.Inf(1), math.Inf(-1)}
	}
	n := 0
	for i := range rep.Ratios {
		r := &rep.Ratios[i]
		if r.Bandwidth == 0 || r.Model == "mlp" { // the MLP's steps are its hosts'
			continue
		}
		k := 0
		if r.Precision == "fp32" {
			k = 1
		}
		m, p := 100*r.BandwidthShare(r.Measured()), 100*r.BandwidthShare(r.Predicted())
		widen(&meas[k], m)
		widen(&pred[k], p)
		if k == 0 && !(p > m) {
			t.Errorf("%s %s: predicted share %.1f %%, measured %.1f %%: the page says the model's is above the measured one in every configuration at a tensor-core precision", r.Model, r.Precision, p, m)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no pair of one compute among the H100 and H200 logs")
	}
	docQuote(t, "validation-gpus.md")(fmt.Sprintf("the model puts %.1f to %.1f %% of the H100's step on its bandwidth, where the measured ratios give %.1f to %.1f %%; at fp32 the two are %.1f to %.1f %% and %.1f to %.1f %%",
		pred[0].lo, pred[0].hi, meas[0].lo, meas[0].hi, pred[1].lo, pred[1].hi, meas[1].lo, meas[1].hi))
}
