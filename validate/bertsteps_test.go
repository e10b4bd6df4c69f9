package validate

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestBERTStepsPage checks the figures docs/validation-mlperf-steps.md
// derives from the BERT throughput cases, each recomputed here from the
// cases and read from the page: per run, the step measured (the global
// batch over the log's samples/s) and predicted (over the predicted
// samples/s), the calibrated compute (the per-device batch over the
// round's one-node v0 per device), what each step holds beyond it (of the
// predicted step, the exposed exchange) and the mean absolute error over
// the runs. The step's error is the predicted step over the measured, less 1.
func TestBERTStepsPage(t *testing.T) {
	quote := docQuote(t, "validation-mlperf-steps.md")
	f := BuiltinCases()
	isStep := func(c Case) bool { return strings.HasSuffix(c.Name, "-bert-throughput") && !c.Calibrates }
	var calibrators []string
	for _, c := range f.Cases {
		if isStep(c) {
			calibrators = append(calibrators, c.CalibratedBy...)
		}
	}
	f.Cases = slices.DeleteFunc(f.Cases, func(c Case) bool { return !isStep(c) && !slices.Contains(calibrators, c.Name) })
	rep := CompareCases(f, Options{})
	if rep.Failed != 0 {
		t.Fatalf("%d of %d cases failed", rep.Failed, len(rep.Results))
	}
	fitted := map[string]Params{}
	for _, r := range rep.Results {
		if r.Case.Calibrates {
			fitted[r.Case.Name] = r.Fitted
		}
	}
	ms := func(s float64) string { return fmt.Sprintf("%.1f", 1000*s) }
	var abs float64
	n := 0
	for _, r := range rep.Results {
		c := r.Case
		if !isStep(*c) {
			continue
		}
		cal, ok := fitted[c.CalibratedBy[0]]
		if !ok || cal.Devices == 0 {
			t.Fatalf("%s: no fitted calibration from %v", c.Name, c.CalibratedBy)
		}
		gpus, batch := c.Set["gpus"], c.Set["batch"]
		global := float64(gpus * batch)
		measured, predicted := global/r.Published.Value, global/r.Predicted
		compute := float64(batch) / (cal.V0 / float64(cal.Devices))
		if !(predicted > compute) {
			t.Errorf("%s: predicted step %v s not above its compute %v s", c.Name, predicted, compute)
		}
		e := r.Predicted/r.Published.Value - 1
		abs += math.Abs(e)
		n++
		quote(fmt.Sprintf("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s |", c.Name, gpus, batch,
			ms(measured), ms(predicted), ms(compute), ms(measured-compute), ms(predicted-compute),
			signed(pct(predicted/measured-1)), signed(pct(e))))
	}
	if n == 0 {
		t.Fatal("no BERT throughput case")
	}
	quote(fmt.Sprintf("mean absolute error of the samples/s over the %d runs is %.1f %%", n, pct(abs/float64(n))))
}
