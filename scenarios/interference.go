package scenarios

import "scaleplan/hw"

// Measured compute slowdowns with communication overlapped, from S. Lee et
// al., "Characterizing Compute-Communication Overlap in GPU-Accelerated
// Distributed Deep Learning: Performance and Power Implications", arXiv
// 2507.03114 (2025), abstract and section 1: GPT and LLaMA training on
// four A100, H100, MI250 and MI210 GPUs, compute overlapped with its
// collectives against the same compute alone.
const (
	// MeasuredMeanInterference is their average slowdown, 18.9 %.
	MeasuredMeanInterference = 0.189
	// MeasuredMaxInterference is their largest slowdown, 40.0 %.
	MeasuredMaxInterference = 0.400
)

// pcieChannels is the ring channels NCCL opens between GPUs that reach
// each other over PCIe: its topology search (github.com/NVIDIA/nccl,
// src/graph/search.cc, ncclTopoCompute) finds one channel at the first
// speed of its array under the PCIe path's bandwidth (src/graph/topo.h:
// PCI_BW 12 GB/s for Gen3 x16, 24 for Gen4), does not duplicate it below
// 25 GB/s (ncclTopoDupChannels), and ncclTopoPostset doubles it
// (src/graph/connect.cc): 2.
const pcieChannels = 2

// DefaultInterference returns the share s of dev's compute rate a
// gradient exchange in flight takes, in the node's link: NCCL runs each
// channel of a collective as one thread block resident on one SM for the
// collective's duration, so a GPU computes on SMs − channels of its SMs:
//
//	s = min(channels/SMs, 0.40)
//
// with the device's NCCLChannels on an NVLink node and pcieChannels
// otherwise, capped at the largest slowdown measured
// (MeasuredMaxInterference). A GPU whose catalogue entry lacks its SMs or
// (on NVLink) its channels gets the measured mean,
// MeasuredMeanInterference. IPUs and CPUs get 0: no measurement of their
// collectives' interference is published, and an IPU exchanges data in
// phases of its own, apart from compute.
func DefaultInterference(dev *hw.Device, node *hw.Node) float64 {
	if dev.Kind != hw.GPU {
		return 0
	}
	ch := pcieChannels
	if node.Link.Kind == hw.NVLink {
		ch = dev.NCCLChannels
	}
	if dev.SMs <= 0 || ch <= 0 {
		return MeasuredMeanInterference
	}
	return min(float64(ch)/float64(dev.SMs), MeasuredMaxInterference)
}
