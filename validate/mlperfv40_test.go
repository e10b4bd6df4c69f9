package validate

import (
	"fmt"
	"testing"

	"scaleplan/predict"
)

// TestMLPerfV40RowsQuoted checks what docs/validation-published.md says
// of published-mlperf-v4.0-resnet50.csv against validate's predictions of
// it: the error of each row, the H200's speed over the H100's on one
// node, measured and predicted (samples/s of the one-node rows), and the
// share of the H100's step each puts on the memory bandwidth
// (DeviceRatio.BandwidthShare).
func TestMLPerfV40RowsQuoted(t *testing.T) {
	cat, prof := defaults(t)
	rep, err := CompareMeasured(measuredFile(t, cat, prof, "../testdata/measurements/published-mlperf-v4.0-resnet50.csv"), cat, prof, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	errs := map[string]float64{}
	node := map[string]*MeasuredRow{}
	for _, g := range rep.Groups {
		for i := range g.Rows {
			r := &g.Rows[i]
			errs[fmt.Sprintf("%s/%d", g.Device, r.Devices)] = r.Error()
			if r.Devices == 8 {
				node[g.Device] = r
			}
		}
	}
	h100, h200 := node["h100-sxm5-80gb"], node["h200-sxm-141gb"]
	if len(errs) != 3 || h100 == nil || h200 == nil {
		t.Fatalf("rows %v: want the H100 on 8 and 64 devices and the H200 on 8", errs)
	}
	ratio := DeviceRatio{A: "h100-sxm5-80gb", B: "h200-sxm-141gb", Precision: "amp-fp16"}
	if ratio.Bandwidth = bandwidthPair(cat, &ratio); !(ratio.Bandwidth > 1) {
		t.Fatalf("H100 and H200 at amp-fp16: bandwidth ratio %v, want a pair of one compute", ratio.Bandwidth)
	}
	quote := docQuote(t, "validation-published.md")
	for _, want := range []string{
		fmt.Sprintf("The one-node H100 row is predicted %s, the eight-node one %s, the one-node H200 row %s",
			signed(pct(errs["h100-sxm5-80gb/8"])), signed(pct(errs["h100-sxm5-80gb/64"])), signed(pct(errs["h200-sxm-141gb/8"]))),
		fmt.Sprintf("runs %.3f times as fast on the H200 as on the H100 at 400 images a GPU, where the operator model puts %.3f",
			h200.SamplesPerSec/h100.SamplesPerSec, h200.Predicted/h100.Predicted),
		fmt.Sprintf("%.1f %% of the H100's measured step moves with the bandwidth, %.1f %% of the model's",
			100*ratio.BandwidthShare(h200.SamplesPerSec/h100.SamplesPerSec), 100*ratio.BandwidthShare(h200.Predicted/h100.Predicted)),
	} {
		quote(want)
	}
	docQuote(t, "validation-gpus.md")(fmt.Sprintf("gives r = %.3f, a third (`published-mlperf-v4.0-resnet50.csv`, where the model puts %.3f",
		h200.SamplesPerSec/h100.SamplesPerSec, h200.Predicted/h100.Predicted))
}
