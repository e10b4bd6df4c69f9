package validate

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"scaleplan/predict"
)

// TestSQuADGapByPrecision checks what docs/validation-transformer.md says
// of the published SQuAD rows on one V100 (Lambda's and
// DeepLearningExamples', their sequences/s as the CSVs hold them): the
// measured step less the predicted one, batch/measured − batch/predicted,
// lies below zero in fp32 (the model slow) and reaches above it in
// amp-fp16; the page prints each.
func TestSQuADGapByPrecision(t *testing.T) {
	cat, prof := defaults(t)
	var ms []Measured
	for _, f := range []string{"published-lambda-bert.csv", "published-dle-bert-large.csv"} {
		for _, m := range measuredFile(t, cat, prof, "../testdata/measurements/"+f) {
			if m.Devices == 1 && strings.HasPrefix(m.Device, "v100") && strings.HasSuffix(m.Model, "-squad") {
				ms = append(ms, m)
			}
		}
	}
	rep, err := CompareMeasured(ms, cat, prof, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := map[string]float64{}, map[string]float64{}
	for _, g := range rep.Groups {
		for _, r := range g.Rows {
			gap := 1e3 * float64(r.Batch) * (1/r.SamplesPerSec - 1/r.Predicted)
			p := g.Precision
			if _, ok := lo[p]; !ok {
				lo[p], hi[p] = gap, gap
			}
			lo[p], hi[p] = math.Min(lo[p], gap), math.Max(hi[p], gap)
		}
	}
	if len(lo) != 2 || !(hi["fp32"] < 0) || !(hi["amp-fp16"] > 0) {
		t.Errorf("one V100's SQuAD gap, ms a step: fp32 %v to %v, amp-fp16 %v to %v; want fp32 below 0 and amp-fp16 reaching above it", lo["fp32"], hi["fp32"], lo["amp-fp16"], hi["amp-fp16"])
	}
	page, err := os.ReadFile("../docs/validation-transformer.md")
	if err != nil {
		t.Fatal(err)
	}
	signed := func(v float64) string {
		if v < 0 {
			return fmt.Sprintf("−%.0f", -v)
		}
		return fmt.Sprintf("+%.0f", v)
	}
	for _, p := range []string{"fp32", "amp-fp16"} {
		want := signed(lo[p]) + " to " + signed(hi[p]) + " ms in " + p
		if !strings.Contains(string(page), want) {
			t.Errorf("docs/validation-transformer.md lacks %q", want)
		}
	}
}

// TestSQuADFixedTimeDLE checks what docs/validation-transformer.md says
// of DeepLearningExamples' two SQuAD rows of one A100 (32 sequences, TF32
// and mixed precision): the measured step as k times the predicted one
// plus C, solved from the two rows.
func TestSQuADFixedTimeDLE(t *testing.T) {
	cat, prof := defaults(t)
	rep, err := CompareMeasured(measuredFile(t, cat, prof, "../testdata/measurements/published-dle-bert-large.csv"), cat, prof, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	measured, predicted := map[string]float64{}, map[string]float64{}
	for _, g := range rep.Groups {
		if g.Model != "bert-large-squad" || g.Device != "a100-sxm4-80gb" || g.Devices != 1 {
			continue
		}
		for _, r := range g.Rows {
			measured[g.Precision] = float64(r.Batch) / r.SamplesPerSec
			predicted[g.Precision] = float64(r.Batch) / r.Predicted
		}
	}
	mt, ma, pt, pa := measured["tf32"], measured["amp-fp16"], predicted["tf32"], predicted["amp-fp16"]
	if mt == 0 || ma == 0 {
		t.Fatalf("rows %v", measured)
	}
	k := (mt - ma) / (pt - pa)
	c := ma - k*pa
	docQuote(t, "validation-transformer.md")(fmt.Sprintf("give k = (%.4f − %.4f)/(%.4f − %.4f) = %.2f and C = %.3f s", mt, ma, pt, pa, k, c))
}
