package sim

import (
	"testing"

	"scaleplan/internal/units"
)

// TestNCCLHop checks the NCCL hop latency a network takes: a calibrated
// one as set, else tuning.cc's (v2.30.7, hwLatencies) LL ring hop, 0.6 us
// on NVLink and 1 us on PCIe or without peer-to-peer.
func TestNCCLHop(t *testing.T) {
	for _, c := range []struct {
		n    Network
		want units.Seconds
	}{
		{Network{}, 0.6e-6},
		{Network{IntraPCI: true}, 1e-6},
		{Network{NoPeerToPeer: true}, 1e-6},
		{Network{NCCLHopLatency: 2e-6, IntraPCI: true}, 2e-6},
	} {
		if got := c.n.NCCLHop(); got != c.want {
			t.Errorf("%+v: %v, want %v", c.n, got, c.want)
		}
	}
}
