package validate

import (
	"math"
	"testing"

	"scaleplan/compute"
)

// TestNativeBatchNormRate recomputes compute.EffNativeBatchNorm from our
// H200's ResNet-50 in channels_last (testdata/measurements/
// h200-2026-11-26-tuned): at the largest batch both ran, the amp-bf16
// step less the amp-fp16 one is what PyTorch's own batch norm kernels
// (bfloat16) take beyond cuDNN's (float16), the operator model's other
// kinds being alike in the two precisions. With T the fp16 batch norms'
// time at EffMemory, the native kernels' share of the bandwidth is
// EffMemory · T / (T + the difference).
func TestNativeBatchNormRate(t *testing.T) {
	cat, prof := defaults(t)
	dir := "../testdata/measurements/h200-2026-11-26-tuned/"
	bf := measuredFile(t, cat, prof, dir+"resnet50-cl-amp-bf16.jsonl")
	fp := measuredFile(t, cat, prof, dir+"resnet50-cl-amp-fp16.jsonl")
	step := func(ms []Measured, b int) (float64, *Measured) {
		for i := range ms {
			if ms[i].Batch == b && !ms[i].OOM && ms[i].SamplesPerSec > 0 {
				return float64(b) / ms[i].SamplesPerSec, &ms[i]
			}
		}
		return 0, nil
	}
	b := 0
	for i := range bf {
		if s, _ := step(fp, bf[i].Batch); s > 0 && bf[i].Batch > b && !bf[i].OOM {
			b = bf[i].Batch
		}
	}
	sb, _ := step(bf, b)
	sf, mf := step(fp, b)
	d := *cat.DeviceCalled(mf.Device)
	cfg, ops, _, err := operatorList(mf, &d, prof)
	if err != nil {
		t.Fatal(err)
	}
	var bn float64
	for i := range ops {
		if ops[i].BatchNorm {
			tm, err := compute.OpTime(&cfg, &ops[i])
			if err != nil {
				t.Fatal(err)
			}
			bn += float64(tm)
		}
	}
	e := compute.EffMemory * bn / (bn + sb - sf)
	t.Logf("batch %d: bf16 step %.1f ms, fp16 %.1f ms; fp16 batch norms %.1f ms: native share %.3f", b, 1e3*sb, 1e3*sf, 1e3*bn, e)
	if math.Abs(e-compute.EffNativeBatchNorm) > 0.005 {
		t.Errorf("EffNativeBatchNorm %v, our H200's ResNet-50 gives %.3f", compute.EffNativeBatchNorm, e)
	}
}
