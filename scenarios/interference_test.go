package scenarios

import (
	"testing"

	"scaleplan/hw"
	"scaleplan/sim"
)

func ptr[T any](v T) *T { return &v }

// TestDefaultInterference checks s = min(channels/SMs, 0.40) for the
// catalogue's GPUs against the figures their entries cite (SMs from the
// datasheets and whitepapers, channels from NCCL's search: 24 on an H100
// as NCCL's kernel shows 24 blocks there), 2 channels on PCIe, the
// measured mean for a GPU without SMs, the cap, and 0 for IPUs and CPUs.
func TestDefaultInterference(t *testing.T) {
	cat, err := hw.Default()
	if err != nil {
		t.Fatal(err)
	}
	nvlink := &hw.Node{Link: hw.Link{Kind: hw.NVLink}}
	pcie := &hw.Node{Link: hw.Link{Kind: hw.PCIe}}
	for _, c := range []struct {
		dev  string
		node *hw.Node
		want float64
	}{
		{"h100-sxm5-80gb", nvlink, 24.0 / 132},
		{"h200-sxm-141gb", nvlink, 24.0 / 132},
		{"a100-sxm4-80gb", nvlink, 24.0 / 108},
		{"b200-sxm-180gb", nvlink, 32.0 / 148},
		{"v100-sxm2-16gb", nvlink, 12.0 / 80},
		{"v100-sxm2-32gb", nvlink, 12.0 / 80},
		{"p100-sxm2", nvlink, 8.0 / 56},
		{"t4", pcie, 2.0 / 40},
		{"v100s-pcie-32gb", pcie, 2.0 / 80},
		{"rtx6000-ada", pcie, 2.0 / 142},
		{"t4", nvlink, 0.189}, // no NVLink channels given: the measured mean
		{"gc200", nvlink, 0},
		{"epyc-7742", pcie, 0},
	} {
		d, err := cat.Device(c.dev)
		if err != nil {
			t.Fatal(err)
		}
		if got := DefaultInterference(d, c.node); got != c.want {
			t.Errorf("%s on %s: interference %v, want %v", c.dev, c.node.Link.Kind, got, c.want)
		}
	}
	big := &hw.Device{Kind: hw.GPU, SMs: 100, NCCLChannels: 64}
	if got := DefaultInterference(big, nvlink); got != 0.40 {
		t.Errorf("64 channels on 100 SMs: %v, want the measured maximum 0.40", got)
	}
	if got := DefaultInterference(&hw.Device{Kind: hw.GPU}, pcie); got != 0.189 {
		t.Errorf("a GPU without SMs: %v, want the measured mean 0.189", got)
	}
}

// TestInterferenceSetting checks that parallelism.interference reaches
// sim.Comm, 0 turning it off, that without it the device's default is
// used, and that parameter servers get none.
func TestInterferenceSetting(t *testing.T) {
	const name = "dgx-h100-resnet50-mlperf-v3.0"
	if c := buildFirst(t, name, nil); c.Comm.Interference != 24.0/132 {
		t.Errorf("default: %v, want 24/132", c.Comm.Interference)
	}
	for _, s := range []float64{0, 0.15} {
		c := buildFirst(t, name, func(sc *Scenario) { sc.Parallelism.Interference = ptr(s) })
		if c.Comm.Interference != s {
			t.Errorf("interference: %v gives %v", s, c.Comm.Interference)
		}
	}
	if c := buildFirst(t, "tsubame3-resnet50-tensorflow-ps", nil); c.Comm.Algorithm != sim.ParameterServer || c.Comm.Interference != 0 {
		t.Errorf("parameter server: %v with interference %v, want 0", c.Comm.Algorithm, c.Comm.Interference)
	}
}
