package netsim

import "scaleplan/internal/units"

// NCCLHopLatency returns the latency of NCCL's LL ring hop inside a node
// that NCCLConfig.HopLatency calibrates, as NCCL's tuning model has it
// (tuning.cc's hwLatencies, see nccl.go): 0.6 us on NVLink, 1 us on PCIe
// (pci).
func NCCLHopLatency(pci bool) units.Seconds {
	cls := hwNVLink
	if pci {
		cls = hwPCI
	}
	return units.Seconds(ncclHW[cls][tRing][0] * 1e-6)
}
