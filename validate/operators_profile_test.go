package validate

import (
	"math"
	"strings"
	"testing"

	"scaleplan/compute"
	"scaleplan/fit/logs"
	"scaleplan/hw"
	"scaleplan/internal/units"
)

// TestFitProfiles fits two profiles of an H100 made by hand: in amp-fp16 a
// product of 1e12 FLOPs and a convolution of 2e12 whose device times are
// those at 40 % of the fp16 peak, in fp32 a product at 70 % of the fp32
// peak; the host times add up to 68 µs over 6 calls of classed operators.
// The fit gives those efficiencies, 68/6 µs per kernel, and leaves the
// classes no operator timed undetermined.
func TestFitProfiles(t *testing.T) {
	cat, _ := defaults(t)
	d, err := cat.Device("h100-sxm5-80gb")
	if err != nil {
		t.Fatal(err)
	}
	p16, p32 := float64(d.PeakFLOPs(hw.FP16)), float64(d.PeakFLOPs(hw.FP32))
	ps := []logs.Profile{
		{Device: "NVIDIA H100 80GB HBM3", Model: "resnet50", Precision: "amp-fp16", Batch: 8, Source: "a.profile.json#1", Ops: []logs.OpProfile{
			{Name: "aten::addmm", Class: "matmul", Calls: 2, SelfCPU: 20e-6, SelfDevice: units.Seconds(1e12 / (p16 * 0.4)), FLOPs: 1e12},
			{Name: "aten::cudnn_convolution", Class: "conv", Calls: 1, SelfCPU: 30e-6, SelfDevice: units.Seconds(2e12 / (p16 * 0.4)), FLOPs: 2e12},
			{Name: "aten::relu", Class: "elementwise", Calls: 2, SelfCPU: 10e-6, SelfDevice: 1e-3},
			{Name: "Optimizer.step#SGD.step", Calls: 1, SelfCPU: 500e-6},
		}},
		{Device: "h100-sxm5-80gb", Model: "mlp", Precision: "fp32", Batch: 8, Source: "b.profile.json#1", Ops: []logs.OpProfile{
			{Name: "aten::mm", Class: "matmul", Calls: 1, SelfCPU: 8e-6, SelfDevice: units.Seconds(1e11 / (p32 * 0.7)), FLOPs: 1e11},
		}},
	}
	fits, err := FitProfiles(ps, cat)
	if err != nil {
		t.Fatal(err)
	}
	if len(fits) != 1 || fits[0].Device != "h100-sxm5-80gb" || fits[0].Mode != compute.Eager {
		t.Fatalf("fits %+v", fits)
	}
	f := fits[0].Fit
	want := map[string]float64{string(compute.TensorFP16): 0.4, string(compute.CUDACore): 0.7, "launch": 68.0 / 6}
	for i, p := range f.Params {
		w, determined := want[p.Name]
		if f.Undetermined[i] == determined {
			t.Errorf("%s: undetermined %v", p.Name, f.Undetermined[i])
		}
		if determined && math.Abs(f.Values[i]/w-1) > 1e-9 {
			t.Errorf("%s = %v, want %v", p.Name, f.Values[i], w)
		}
	}
	// Before: the device's published figures (the H100's gemm_efficiency
	// on the tensor cores, EffGEMM 0.8 on the CUDA cores) time the fp16
	// operators in e16/0.4 of their time and the fp32 one in 7/8 of it.
	e16 := compute.DeviceEfficiency(cat.DeviceCalled("h100-sxm5-80gb"), compute.TensorFP16)
	before := (2*math.Abs(0.4/e16-1) + 0.125) / 3
	if f.Rows != 3 || f.Error > 1e-9 || math.Abs(f.ErrorBefore-before) > 1e-12 {
		t.Errorf("rows %d, error %v (before %v): want 3 operators timed exactly, %v before", f.Rows, f.Error, f.ErrorBefore, before)
	}
	e := fits[0].Entry
	if e.Source != "a.profile.json#1,b.profile.json#1" || strings.Join(e.Models, " ") != "mlp resnet50" {
		t.Errorf("entry source %q, models %v", e.Source, e.Models)
	}
	if _, err := FitProfiles([]logs.Profile{{Device: "cpu", Source: "c.json"}}, cat); err == nil || !strings.Contains(err.Error(), `device "cpu"`) {
		t.Errorf("a CPU profile: %v", err)
	}
}
