package validate

import (
	"strings"
	"testing"

	"scaleplan/hw"
	"scaleplan/model"
)

// TestZeroGradLabel checks the zero_grad column: zero sets
// compute.Config.ZeroGrad on a PyTorch row, none and an absent column
// leave it unset, and another value is refused with the valid ones named.
func TestZeroGradLabel(t *testing.T) {
	d := &hw.Device{Name: "d", SMs: 1}
	for v, want := range map[string]bool{"zero": true, "none": false, "": false} {
		m := Measured{Framework: "torch", Precision: "tf32"}
		if err := programLabels(&m, map[string]string{"zero_grad": v}); err != nil {
			t.Fatalf("zero_grad %q: %v", v, err)
		}
		if c := measuredCompute(&m, d, hw.TF32, model.BertAdam, 0); c.ZeroGrad != want {
			t.Errorf("zero_grad %q: ZeroGrad %v, want %v", v, c.ZeroGrad, want)
		}
	}
	var m Measured
	if err := programLabels(&m, map[string]string{"zero_grad": "none-set"}); err == nil || !strings.Contains(err.Error(), "zero_grad \"none-set\": want zero or none") {
		t.Errorf("zero_grad none-set: %v, want the valid values named", err)
	}
}
