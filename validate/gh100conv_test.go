package validate

import (
	"math"
	"testing"

	"scaleplan/compute"
	"scaleplan/internal/units"
	"scaleplan/model"
)

// TestGH100CUDAConvEfficiency recomputes the GH100 devices'
// conv_efficiency.cuda (hw/catalog/devices.yaml) from our H200's
// measurements of ResNet-50 at batch 256 in NCHW: the fp32 step
// (testdata/measurements/h200-2026-11-26/resnet50.jsonl) less the device
// time that the tf32 profile (h200-2026-11-30-profile) gives every kind
// but the convolutions, which run the same kernels at fp32 in both (the
// batch norms, the activations, the pools, the optimizer), is the fp32
// convolutions' time; the efficiency is the one at which the operator
// model's fp32 convolutions take that time.
func TestGH100CUDAConvEfficiency(t *testing.T) {
	cat, prof := defaults(t)
	_, pk := readProfile(t, cat, prof, h200Profile("resnet50-tf32-prof"))
	var rest units.Seconds
	for k, v := range pk.Measured {
		if k != model.Conv {
			rest += v
		}
	}
	var m *Measured
	ms := measuredFile(t, cat, prof, "../testdata/measurements/h200-2026-11-26/resnet50.jsonl")
	for i := range ms {
		if ms[i].Precision == "fp32" && ms[i].Batch == pk.Batch && ms[i].Variant == "" {
			m = &ms[i]
		}
	}
	if m == nil {
		t.Fatalf("no fp32 record at batch %d", pk.Batch)
	}
	step := float64(m.Batch) / m.SamplesPerSec
	conv := step - float64(rest)
	d := *cat.DeviceCalled(m.Device)
	cfg, ops, _, err := operatorList(m, &d, prof)
	if err != nil {
		t.Fatal(err)
	}
	convTime := func(e float64) float64 {
		d.ConvEfficiency.CUDA = e
		cfg.Device = &d
		var s float64
		for i := range ops {
			if ops[i].Kind == model.Conv {
				tm, err := compute.OpTime(&cfg, &ops[i])
				if err != nil {
					t.Fatal(err)
				}
				s += float64(tm)
			}
		}
		return s
	}
	lo, hi := 0.05, 1.0 // convTime falls as e grows
	for range 60 {
		if mid := (lo + hi) / 2; convTime(mid) > conv {
			lo = mid
		} else {
			hi = mid
		}
	}
	e := (lo + hi) / 2
	t.Logf("fp32 step %.1f ms, tf32 profile's other kinds %.1f ms: convolutions %.1f ms, at %.3f of the fp32 peak on full waves", 1e3*step, 1e3*float64(rest), 1e3*conv, e)
	for _, name := range []string{"h100-sxm5-80gb", "h100-pcie-80gb", "h200-sxm-141gb"} {
		if got := cat.DeviceCalled(name).ConvEfficiency.CUDA; math.Abs(got-e) > 0.005 {
			t.Errorf("%s: conv_efficiency.cuda %v, our H200's ResNet-50 gives %.3f", name, got, e)
		}
	}
}
