package validate

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"scaleplan/predict"
)

// TestPCIeRowsQuoted checks what docs/validation-published.md says of the
// one-GPU rows of the catalogue's PCIe cards (A100, H100, RTX 6000 Ada):
// the range of the error of samples/s of the ResNet-50 rows and of the
// BERT SQuAD rows, and the RTX 6000 Ada's two SQuAD rows in FP16.
func TestPCIeRowsQuoted(t *testing.T) {
	cat, prof := defaults(t)
	rep, err := CompareMeasured(measuredFile(t, cat, prof, "../testdata/measurements/published-lambda-pcie.csv"), cat, prof, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ada []float64 // the RTX 6000 Ada's SQuAD rows in FP16
	lo := map[bool]float64{false: math.Inf(1), true: math.Inf(1)}
	hi := map[bool]float64{false: math.Inf(-1), true: math.Inf(-1)}
	for _, g := range rep.Groups {
		squad := strings.HasSuffix(g.Model, "-squad")
		for _, r := range g.Rows {
			e := 100 * r.Error()
			lo[squad], hi[squad] = math.Min(lo[squad], e), math.Max(hi[squad], e)
			if squad && g.Device == "rtx6000-ada" && g.Precision == "amp-fp16" {
				ada = append(ada, e)
			}
		}
	}
	quote := docQuote(t, "validation-published.md")
	signed := func(v float64, prec int) string {
		s := fmt.Sprintf("%+.*f", prec, v)
		return strings.Replace(s, "-", "−", 1)
	}
	for _, want := range []string{
		fmt.Sprintf("ResNet-50 %s to %s %%", signed(lo[false], 1), signed(hi[false], 1)),
		fmt.Sprintf("BERT SQuAD %s to %s %%", signed(lo[true], 0), signed(hi[true], 0)),
		fmt.Sprintf("(%s and %s %%)", signed(slices.Min(ada), 0), signed(slices.Max(ada), 0)),
	} {
		quote(want)
	}
}
