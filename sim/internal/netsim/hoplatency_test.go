package netsim

import (
	"fmt"
	"testing"

	"scaleplan/internal/units"
)

// TestNCCLHopLatency: a calibrated LL ring hop latency h inside a node
// scales every hop latency of tuning.cc's NVLink row by h / 0.6 µs, and
// leaves the base latencies as they are: NCCL's ring over 8 ranks of a
// node then takes base + steps·refNVRing·h/0.6 µs plus the payload's time,
// for each protocol and op; the default (0) is tuning.cc's own.
func TestNCCLHopLatency(t *testing.T) {
	const h = 1.5e-6
	node := twoLevel(8, 8, 1, 1)
	node.NCCL.HopLatency = h
	scale := h * 1e6 / refNVRing[0]
	for i, pr := range refProtocols {
		for _, S := range ncclSizes {
			s := float64(S)
			for _, op := range []Op{OpAllReduce, OpAllGather} {
				steps := 7.0
				if op == OpAllReduce {
					steps = 14
				}
				got := runNCCL(t, ncclCfg(node, NCCLRing, pr), op, S)
				want := (refBaseRing[i]+steps*refNVRing[i]*scale)*1e-6 + steps/8*s*refWire[i]/float64(intraBW)
				checkForm(t, fmt.Sprintf("hop %v: %v %v %v", units.Seconds(h), op, pr, S), float64(got.Time()), want)
			}
		}
	}
	bad := twoLevel(8, 8, 1, 1)
	bad.NCCL.HopLatency = -1e-6
	if cfgErr := bad.NCCL.validate(); len(cfgErr) == 0 {
		t.Error("hop latency -1 us: accepted, want an error")
	}
}

// TestNCCLHopLatencyDefault: the LL ring hop latency a calibration starts
// from is tuning.cc's (v2.30.7, hwLatencies): 0.6 us on NVLink, 1 us on
// PCIe.
func TestNCCLHopLatencyDefault(t *testing.T) {
	for _, c := range []struct {
		pci  bool
		want units.Seconds
	}{{false, units.Seconds(refNVRing[0] * 1e-6)}, {true, 1e-6}} {
		if got := NCCLHopLatency(c.pci); got != c.want {
			t.Errorf("pci %v: %v, want %v", c.pci, got, c.want)
		}
	}
}
