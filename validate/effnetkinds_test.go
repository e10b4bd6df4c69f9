package validate

import (
	"fmt"
	"strings"
	"testing"

	"scaleplan/compute"
	"scaleplan/model"
	"scaleplan/predict"
)

// TestEfficientNetKinds checks docs/validation-efficientnet.md's table of
// where a step goes: for each one-GPU row of
// testdata/measurements/published-dle-efficientnet-b4.csv, the operator
// model's device time per image of each kind (compute.KindTimes over the
// operators validate lists for the row), the predicted time per image
// (1/samples/s of CompareMeasured's prediction) and the measured one.
func TestEfficientNetKinds(t *testing.T) {
	quote := docQuote(t, "validation-efficientnet.md")
	cat, prof := defaults(t)
	short := map[string]string{"a100-sxm4-80gb": "A100", "v100-sxm2-16gb": "V100", "v100-sxm2-32gb": "V100"}
	fw := map[string]string{"torch": "PyTorch", "tensorflow": "TensorFlow"}
	rows := 0
	for _, m := range measuredFile(t, cat, prof, "../testdata/measurements/published-dle-efficientnet-b4.csv") {
		if m.Devices != 1 {
			continue
		}
		d, err := cat.Device(m.Device)
		if err != nil {
			t.Fatal(err)
		}
		c, ops, _, err := operatorList(&m, d, prof)
		if err != nil {
			t.Fatalf("%s: %v", m.Source, err)
		}
		kt, err := compute.KindTimes(&c, ops)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := CompareMeasured([]Measured{m}, cat, prof, predict.Options{})
		if err != nil {
			t.Fatalf("%s: %v", m.Source, err)
		}
		pred := rep.Groups[0].Rows[0].Predicted
		ms := func(k model.OpKind) string { return fmt.Sprintf("%.2f", 1000*float64(kt[k])/float64(m.Batch)) }
		prec := strings.ToUpper(strings.TrimSuffix(m.Precision, "-fp16"))
		quote(fmt.Sprintf("| %s, %s %s | %d | %s | %s | %s | %s | %s | %.2f | %.2f |",
			short[m.Device], fw[m.Framework], prec, m.Batch,
			ms(model.Conv), ms(model.GroupedConv), ms(model.Elementwise), ms(model.Norm), ms(model.Pool),
			1000/pred, 1000/m.SamplesPerSec))
		rows++
	}
	if rows != 8 {
		t.Errorf("%d one-GPU rows, want the file's 8", rows)
	}
}
