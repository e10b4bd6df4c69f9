package netsim

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"scaleplan/internal/units"
)

// This file is NCCL's choice of algorithm and protocol per call, written
// from NCCL's public tuning model: NVIDIA/nccl v2.30.7,
// src/graph/tuning.cc (ncclTopoTuneModel, ncclTopoGetAlgoTime), the line
// formats of src/include/device.h and src/device/prims_ll128.h, and the
// point-to-point protocol choice of src/enqueue.cc. The constants below
// are NCCL's; the model around them is ours (see the package
// documentation, "NCCL").

// Protocol is one of NCCL's three protocols (NCCL_PROTO).
type Protocol int

const (
	// ProtoAuto lets the tuning model choose the protocol.
	ProtoAuto Protocol = iota
	// LL is NCCL's low-latency protocol: 16-byte lines of two 4-byte data
	// words, each with a 4-byte flag (src/include/device.h,
	// union ncclLLFifoLine), so half of the wire carries the payload.
	LL
	// LL128 is NCCL's 128-byte-line protocol: 120 bytes of payload and 8
	// of flag per line (src/device/prims_ll128.h, NCCL_LL128_LINEELEMS 16
	// words of which NCCL_LL128_DATAELEMS 15).
	LL128
	// Simple is NCCL's bulk protocol: the whole link carries payload, with
	// a memory fence per step.
	Simple
)

var protocolNames = [...]string{"auto", "ll", "ll128", "simple"}

// String returns the protocol's name as ParseProtocol reads it.
func (p Protocol) String() string {
	if p < 0 || int(p) >= len(protocolNames) {
		return fmt.Sprintf("Protocol(%d)", int(p))
	}
	return protocolNames[p]
}

// ParseProtocol returns the protocol named s: ll, ll128 or simple, or
// auto (also "") for the tuning model's choice.
func ParseProtocol(s string) (Protocol, error) {
	if s == "" {
		return ProtoAuto, nil
	}
	for i, n := range protocolNames {
		if s == n {
			return Protocol(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown NCCL protocol %q; want one of %q", ErrCollective, s, protocolNames[:])
}

// wire returns the bytes the protocol puts on the wire per payload byte.
func (p Protocol) wire() float64 {
	switch p {
	case LL:
		return 2 // 8 of 16 bytes are flags
	case LL128:
		return 128.0 / 120 // 8 of 128 bytes are flags
	}
	return 1
}

// NCCLAlgorithm is one of NCCL's collective algorithms (NCCL_ALGO).
type NCCLAlgorithm int

const (
	// NCCLAuto lets the tuning model choose the algorithm.
	NCCLAuto NCCLAlgorithm = iota
	// NCCLRing is NCCL's ring, one channel per NIC as Ring's.
	NCCLRing
	// NCCLTree is NCCL's tree all-reduce: a chain inside each node and a
	// double binary tree between the nodes' first ranks.
	NCCLTree
	// NCCLNVLS is NVLink SHARP: the NVSwitch reduces (one node, where
	// NCCLConfig.NVLS says the switch can).
	NCCLNVLS
	// NCCLCollNet is CollNet Direct: a reduce-scatter inside each node,
	// the fabric's switches reduce each rank's share (InfiniBand SHARP,
	// where NCCLConfig.CollNet says they can), an all-gather inside each
	// node.
	NCCLCollNet
	// NCCLNVLSTree is NVLS tree (NCCL 2.18 and later): NVLS reduces inside
	// each node, a tree between the nodes carries each rank's share of the
	// node's sum, NVLS multicasts the result (several nodes, each with
	// NVLS).
	NCCLNVLSTree
)

var ncclAlgorithmNames = [...]string{"auto", "ring", "tree", "nvls", "collnet", "nvlstree"}

// String returns the algorithm's name as ParseNCCLAlgorithm reads it.
func (a NCCLAlgorithm) String() string {
	if a < 0 || int(a) >= len(ncclAlgorithmNames) {
		return fmt.Sprintf("NCCLAlgorithm(%d)", int(a))
	}
	return ncclAlgorithmNames[a]
}

// ParseNCCLAlgorithm returns the algorithm named s: ring, tree, nvls,
// collnet or nvlstree, or auto (also "") for the tuning model's choice.
func ParseNCCLAlgorithm(s string) (NCCLAlgorithm, error) {
	if s == "" {
		return NCCLAuto, nil
	}
	for i, n := range ncclAlgorithmNames {
		if s == n {
			return NCCLAlgorithm(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown NCCL algorithm %q; want one of %q", ErrCollective, s, ncclAlgorithmNames[:])
}

// NCCLConfig is what the NCCL algorithm needs to know of the fabric, and
// the caller's overrides. The zero value is an NVLink node, no in-network
// reduction, NCCL's choice.
type NCCLConfig struct {
	// IntraPCI says the devices of a node talk over PCIe (NCCL's PCI link
	// class) rather than NVLink. It sets the hop latencies and disables
	// LL128 by default, as NCCL does beyond NVLink. Default false.
	IntraPCI bool
	// NVLS says the node's NVSwitch reduces in the network (NVLink SHARP,
	// NVSwitch 3: H100, H200 and B200 nodes). Default false.
	NVLS bool
	// CollNet says the fabric between nodes reduces in the network
	// (InfiniBand SHARP). Default false.
	CollNet bool
	// Algorithm and Protocol fix the choice, as NCCL_ALGO and NCCL_PROTO
	// do; default NCCLAuto and ProtoAuto, the tuning model's choice.
	Algorithm NCCLAlgorithm
	Protocol  Protocol
	// HopLatency is a fabric calibration's latency of a ring hop inside a
	// node with LL; tuning.cc's other hop latencies of the node's link
	// class scale with it. Default 0: tuning.cc's own.
	HopLatency units.Seconds
	// NetProtocols are the protocols the transport between nodes lets
	// NCCL run, as its net plugin restricts them (aws-ofi-nccl sets
	// NCCL_PROTO=simple where EFA does not deliver 128-byte lines in
	// order); on calls whose ranks span nodes they are the protocols the
	// tuning model may choose, LL128 included beyond NVLink, as NCCL_PROTO
	// enables what it lists, unless Protocol fixes one (the plugin leaves
	// a user's NCCL_PROTO alone). Default nil: NCCL's defaults.
	NetProtocols []Protocol
	// Channels is the number of channels NCCL opens between the ranks of
	// one node (the device's catalogue nccl_channels), 1 to 64: on one
	// node a ring or tree call runs on as many of them as its size fills
	// (ncclChannelsUsed). Default 0: unknown, every call on all.
	Channels int
	// BuffSize is NCCL_BUFFSIZE, the Simple protocol's buffer per
	// connection, as the net plugin's environment profile sets it: NCCL
	// 2.20 and later move a tree call with Simple in chunks of
	// BuffSize/NCCL_STEPS (ncclTreeChunk). At most MaxBuffSize. Default 0:
	// NCCL's 4 MiB, whose 512 KiB chunks are DefaultTreeChunk.
	BuffSize units.Bytes
	// Arch is the GPUs' architecture, the row of tuning.cc's cap on the
	// LL protocol's bus bandwidth on one node (ncclLLMax). Default
	// ArchUnknown: no cap.
	Arch Arch
}

// Arch is a GPU architecture as tuning.cc indexes its per-architecture
// tables (compCapIndex: compute capability 7.x, 8.x, 9.x, 10.x and up).
type Arch int

const (
	// ArchUnknown applies none of tuning.cc's per-architecture caps.
	ArchUnknown Arch = iota
	// Volta is compute capability 7.x (V100).
	Volta
	// Ampere is compute capability 8.x (A100).
	Ampere
	// Hopper is compute capability 9.x (H100, H200).
	Hopper
	// Blackwell is compute capability 10.0 and up (B200).
	Blackwell
)

var archNames = [...]string{"", "volta", "ampere", "hopper", "blackwell"}

// String returns the architecture's name as ParseArch reads it.
func (a Arch) String() string {
	if a < 0 || int(a) >= len(archNames) {
		return fmt.Sprintf("Arch(%d)", int(a))
	}
	return archNames[a]
}

// ParseArch returns the architecture named s: volta, ampere, hopper or
// blackwell, or ArchUnknown for "".
func ParseArch(s string) (Arch, error) {
	for i, n := range archNames {
		if s == n {
			return Arch(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown GPU architecture %q; want one of %q", ErrConfig, s, archNames[1:])
}

// ncclLLMax is the first column of llMaxBws in NCCL's tuning.cc
// (NVIDIA/nccl master 5067397, src/graph/tuning.cc, the tuner constants:
// "Volta-N1", "Ampere-N1", "Hopper-N1", "Blackwell-N1"), GB/s, by Arch:
// the most bus bandwidth ncclTopoTuneModel gives the LL ring (busBw =
// min(llMaxBw, busBw·0.5)) and the LL tree (min(busBw/3.8, llMaxBw)) on
// one node. Its columns for two nodes and more are indexed by the host
// CPU's vendor instead; they are not applied (see the package
// documentation, "NCCL").
var ncclLLMax = [...]float64{0, 39.0, 87.7, 141.0, 2 * 141.0}

// ncclLLMaxBus returns tuning.cc's llMaxBw on g, bytes/s: on one node of
// a known architecture ncclLLMax's, else +Inf.
func ncclLLMaxBus(g ncclGeom) float64 {
	if g.nodes != 1 || g.arch <= ArchUnknown || int(g.arch) >= len(ncclLLMax) {
		return math.Inf(1)
	}
	return ncclLLMax[g.arch] * 1e9
}

// MaxBuffSize bounds NCCLConfig.BuffSize: 1 GiB, far above the 4 MiB
// NCCL defaults to and the 8 MiB GPUDirect-TCPXO's profile sets.
const MaxBuffSize = units.GiB

// ncclSteps is NCCL_STEPS, the slots a connection's buffer is divided
// into (NVIDIA/nccl src/include/device.h, v2.21.5 line 22: #define
// NCCL_STEPS 8). NCCL's default Simple buffer is 4 MiB (src/init.cc, line
// 544: DEFAULT_BUFFSIZE), a step 512 KiB: DefaultTreeChunk.
const ncclSteps = 8

func (c NCCLConfig) validate() []error {
	var errs []error
	if c.Algorithm < 0 || int(c.Algorithm) >= len(ncclAlgorithmNames) {
		errs = append(errs, fmt.Errorf("%w: unknown NCCL algorithm %d; want one of %q", ErrConfig, int(c.Algorithm), ncclAlgorithmNames[:]))
	}
	if c.Protocol < 0 || int(c.Protocol) >= len(protocolNames) {
		errs = append(errs, fmt.Errorf("%w: unknown NCCL protocol %d; want one of %q", ErrConfig, int(c.Protocol), protocolNames[:]))
	}
	if !nonNegative(float64(c.HopLatency)) {
		errs = append(errs, fmt.Errorf("%w: NCCL hop latency %v is not a finite time >= 0", ErrConfig, float64(c.HopLatency)))
	}
	if c.Arch < 0 || int(c.Arch) >= len(archNames) {
		errs = append(errs, fmt.Errorf("%w: unknown GPU architecture %d; want one of %q", ErrConfig, int(c.Arch), archNames[1:]))
	}
	if c.Channels < 0 || c.Channels > ncclMaxChannels {
		errs = append(errs, fmt.Errorf("%w: NCCL channels %d: want 0 (unknown) to %d", ErrConfig, c.Channels, ncclMaxChannels))
	}
	if !nonNegative(float64(c.BuffSize)) || c.BuffSize > MaxBuffSize {
		errs = append(errs, fmt.Errorf("%w: NCCL buffer size %v: want 0 (NCCL's default) to %v", ErrConfig, float64(c.BuffSize), MaxBuffSize))
	}
	for _, p := range c.NetProtocols {
		if p <= ProtoAuto || int(p) >= len(protocolNames) {
			errs = append(errs, fmt.Errorf("%w: NCCL net protocol %d: want one of %q", ErrConfig, int(p), protocolNames[1:]))
		}
	}
	return errs
}

// NCCL's link classes, algorithms and protocols as tuning.cc indexes its
// tables.
const (
	hwNVLink = iota
	hwPCI
	hwNet
)

const (
	tTree = iota
	tRing
	tCollNet
	tNVLS
	tNVLSTree
)

// ncclBase is baseLatencies of tuning.cc (v2.30.7), microseconds, by
// algorithm (tree, ring, CollNet Direct, NVLS, NVLS tree) and protocol
// (LL, LL128, Simple).
var ncclBase = [5][3]float64{{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}}

// ncclHW is hwLatencies of tuning.cc (v2.30.7), microseconds per hop, by
// link class (NVLink, PCI, network), algorithm and protocol.
var ncclHW = [3][5][3]float64{
	{{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 25}, {0, 0, 25}},
	{{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 0}, {0, 0, 0}},
	{{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 18}, {0, 0, 20.9}},
}

// ncclTreeCorrection is treeCorrectionFactor of tuning.cc (v2.30.7): the
// tree all-reduce's bandwidth factor by protocol and log2(S/64), S from
// 64 B to 256 MiB.
var ncclTreeCorrection = [3][23]float64{
	{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
	{1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
	{.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
}

// Other constants of tuning.cc (v2.30.7) and enqueue.cc.
const (
	ncclNetOverhead  = 1.0   // getNetOverhead, µs, x86 Intel default; ×3 for Simple
	ncclRingPlateau  = 1.4   // ring Simple all-reduce latency factor between nodes, compute capability ≥ 8.0
	ncclNVLSEff      = 0.85  // nvlsEfficiency, Hopper
	ncclCollNetArity = 0.4   // CollNet Direct's arity serialization, µs per local rank
	ncclP2PLLMax     = 16384 // NCCL_P2P_LL_THRESHOLD: point-to-point uses LL up to this many bytes per peer and channel
)

// NCCL's channels and threads per channel (v2.30.7): MAXCHANNELS
// (src/include/device.h), the most threads a channel runs by protocol,
// NCCL_LL_MAX_NTHREADS, NCCL_LL128_MAX_NTHREADS and
// NCCL_SIMPLE_MAX_NTHREADS (device.h), and the bytes each thread must
// have before another channel or thread is used, NCCL_LL_THREAD_THRESHOLD
// (× the ranks for the ring), NCCL_LL128_THREAD_THRESHOLD and
// NCCL_SIMPLE_THREAD_THRESHOLD (src/include/comm.h; tuning.cc sets
// threadThresholds from them).
const ncclMaxChannels = 64

var (
	ncclThreads         = [3]float64{512, 640, 512}
	ncclThreadThreshold = [3]float64{8, 8, 64}
)

// ncclChannelsUsed is the number of the node's C channels NCCL runs a
// ring or tree call of S bytes on with protocol pr (src/enqueue.cc,
// topoGetAlgoInfo): it drops one channel at a time while S is under
// nc·nt·threshold, down to one, so nc = min(C, max(1, ⌊S/(nt·threshold)⌋)).
// The threads it then drops on the last channel are not modelled.
func ncclChannelsUsed(a, pr int, g ncclGeom, S float64, C int) int {
	per := ncclThreads[pr] * ncclThreadThreshold[pr]
	if a == tRing && pr == 0 {
		per *= float64(g.p)
	}
	return min(C, max(1, int(S/per)))
}

// ncclNVLSTreeMax is perChMaxNVLSTreeBws of tuning.cc (v2.30.7), Hopper,
// bytes/s: the most one channel of the NVLS tree moves (bus bandwidth) on
// two nodes (index 0) and on more (index 1).
var ncclNVLSTreeMax = [2]float64{57.7e9, 45.5e9}

// ncclSpeedsIntra and ncclSpeedsInter are sm90SpeedArrayIntra and
// sm90SpeedArrayInter of NCCL v2.30.7 src/graph/search.cc, GB/s: the
// bandwidths per channel NCCL's graph search tries for a graph inside a
// node and across the network, fastest first.
var (
	ncclSpeedsIntra = []float64{60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3}
	ncclSpeedsInter = []float64{48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12}
)

// NCCLChoice is the algorithm and protocol of one NCCL call and the time
// NCCL's tuning model predicts for it.
type NCCLChoice struct {
	Algorithm NCCLAlgorithm
	Protocol  Protocol
	Predicted units.Seconds
}

// ncclGeom is what the tuning model reads of the ranks and the topology.
type ncclGeom struct {
	p, nodes, k, c int     // ranks, nodes, ranks per node, channels between nodes
	intra, net     float64 // bandwidth of a rank's port in the node, and of a NIC
	bus, busTree   float64 // the ring's and the tree's bus bandwidth (ncclBus)
	netLat         float64 // the network's own latency, µs (ncclInterLat)
	hop            float64 // factor on hwLatencies inside a node (NCCLConfig.HopLatency)
	cls            int     // link class inside a node
	even           bool    // every node holds as many of the ranks
	arch           Arch    // the GPUs' architecture (NCCLConfig.Arch)
}

// ncclGeometry returns the geometry of ranks on t.
func (t *Topology) ncclGeometry(ranks []int) ncclGeom {
	index := make(map[int]int)
	for _, r := range ranks {
		index[t.Node(r)]++
	}
	g := ncclGeom{p: len(ranks), nodes: len(index), cls: hwNVLink, arch: t.cfg.NCCL.Arch}
	g.k = g.p / g.nodes
	g.even = g.k*g.nodes == g.p
	for _, n := range index {
		g.even = g.even && n == g.k
	}
	if t.cfg.NCCL.IntraPCI || t.cfg.NoPeerToPeer {
		g.cls = hwPCI
	}
	g.intra = float64(t.cfg.Intra.Bandwidth)
	g.hop = 1
	if l := float64(t.cfg.NCCL.HopLatency); l > 0 {
		g.hop = l * 1e6 / ncclHW[g.cls][tRing][0]
	}
	if t.cfg.NoPeerToPeer {
		g.intra = float64(t.cfg.PCIe.Bandwidth)
		if shm := float64(t.cfg.SHM); shm > 0 {
			g.intra = min(g.intra, shm)
			if t.spansSockets(ranks) {
				g.intra = min(g.intra, t.cfg.SHMCrossSocket*shm)
			}
		}
	}
	if g.nodes > 1 {
		g.c = max(1, min(t.cfg.NICsPerNode, g.k))
		g.net = float64(float64(t.cfg.NIC.Bandwidth) * t.cfg.Efficiency)
		g.netLat = float64(t.cfg.NIC.Latency+t.cfg.FabricLatency+t.cfg.Overhead) * 1e6
	}
	g.bus, g.busTree = ncclBus(g)
	return g
}

// ncclBus returns the bus bandwidth tuning.cc gives the ring and the tree:
// nChannels·bw of their graphs, bw the graph's bwIntra up to two nodes and
// its bwInter beyond. NCCL's graph search (src/graph/search.cc,
// ncclTopoCompute) gives a ring graph bwIntra = bwInter, so across nodes
// the ring's is the least of the port and the c NICs; in its second pass
// it raises a tree graph's bwIntra up to twice its bwInter ("increase
// bwIntra for trees (2 nodes or collnet)"), as a tree between two nodes
// moves S, not 2(p−1)/p·S, through each node's NICs: on two nodes the
// tree's is the least of the port and 2c NICs. On one node both are the
// port's; with one rank a node, the NICs'.
func ncclBus(g ncclGeom) (ring, tree float64) {
	if g.nodes < 2 {
		return g.intra, g.intra
	}
	nics := float64(g.c) * g.net
	port := g.intra
	if g.k == 1 {
		port = math.Inf(1)
	}
	ring, tree = min(port, nics), min(port, nics)
	if g.nodes == 2 {
		tree = min(port, 2*nics)
	}
	return ring, tree
}

// ncclCandidates returns the (algorithm, protocol) pairs op may run with
// on g, in the order tuning.cc tries them (tree, ring, CollNet, NVLS;
// LL, LL128, Simple), with the caller's overrides applied.
func (t *Topology) ncclCandidates(op Op, g ncclGeom) ([][2]int, error) {
	cfg := t.cfg.NCCL
	var out [][2]int
	nvls := op == OpAllReduce && cfg.NVLS && g.k > 1 && g.cls == hwNVLink
	for _, a := range []int{tTree, tRing, tCollNet, tNVLS, tNVLSTree} {
		switch {
		case a == tTree && (op != OpAllReduce || !g.even),
			a == tCollNet && (op != OpAllReduce || !cfg.CollNet || g.nodes < 2 || !g.even),
			a == tNVLS && (!nvls || g.nodes > 1),
			a == tNVLSTree && (!nvls || g.nodes < 2 || !g.even),
			cfg.Algorithm != NCCLAuto && ncclAlgOf(a) != cfg.Algorithm:
			continue
		}
		for pr := range 3 {
			if (a == tCollNet || a == tNVLS || a == tNVLSTree) && pr != 2 || !t.ncclProtoEnabled(g, pr) {
				continue
			}
			out = append(out, [2]int{a, pr})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: NCCL %v on %d ranks over %d nodes cannot run as algorithm %v with protocol %v (tree is an all-reduce's on nodes holding as many of the ranks; nvls needs one node with NVLS, nvlstree several such nodes holding as many of the ranks, collnet an all-reduce over such nodes with CollNet; nvls, nvlstree and collnet run simple only)",
			ErrCollective, op, g.p, g.nodes, cfg.Algorithm, cfg.Protocol)
	}
	return out, nil
}

// ncclProtoEnabled reports whether protocol pr may run on g: the caller's
// Protocol when it fixes one; when the ranks span nodes and the transport
// lists NetProtocols, those (as the plugin's NCCL_PROTO enables what it
// lists, LL128 included); else all but LL128 beyond NVLink (tuning.cc,
// protoEnable: LL128 on by default only up to NVLink).
func (t *Topology) ncclProtoEnabled(g ncclGeom, pr int) bool {
	cfg := t.cfg.NCCL
	switch {
	case cfg.Protocol != ProtoAuto:
		return Protocol(pr+1) == cfg.Protocol
	case g.nodes > 1 && len(cfg.NetProtocols) > 0:
		return slices.Contains(cfg.NetProtocols, Protocol(pr+1))
	}
	return pr != 1 || g.cls == hwNVLink || g.k == 1
}

func ncclAlgOf(a int) NCCLAlgorithm {
	return [...]NCCLAlgorithm{NCCLTree, NCCLRing, NCCLCollNet, NCCLNVLS, NCCLNVLSTree}[a]
}

// ncclInterLat is tuning.cc's latency of a hop between nodes by algorithm
// a and protocol pr, µs: hwLatencies' network figure (the tree's with one
// rank a node) plus the network's own latency, which NCCL takes from its
// net plugin's properties (graph latencyInter, search.cc) and adds once
// more for Simple's flush; here the NIC's, the fabric's and the
// transport's per-message latency of the catalogue.
func ncclInterLat(a, pr int, g ncclGeom) float64 {
	l := ncclHW[hwNet][a][pr]
	if g.k == 1 {
		l = ncclHW[hwNet][tTree][pr]
	}
	l += g.netLat
	if pr == 2 {
		l += g.netLat
	}
	return l
}

// ncclLatency is tuning.cc's latency of op by algorithm a and protocol
// pr on g, in seconds.
func ncclLatency(op Op, a, pr int, g ncclGeom) float64 {
	base := ncclBase[a][pr]
	intraLat := ncclHW[g.cls][a][pr] * g.hop
	interLat := ncclInterLat(a, pr, g)
	var l float64
	switch a {
	case tRing:
		if op == OpBroadcast {
			l = base + ncclHopLat(pr, g) // one hop: NCCL counts the chain's latency once
			break
		}
		steps, inter := ncclRingSteps(op, g)
		l = base + float64(steps-inter)*ncclIntraRingLat(pr, g) + float64(inter)*interLat
	case tTree:
		l = base + 2*(float64(g.k-1)*intraLat+float64(bits.Len(uint(g.nodes))-1)*interLat)
	case tCollNet:
		l = 2*(float64(min(1, g.k-1))*intraLat+float64(g.k-1)*ncclCollNetArity) + interLat
	case tNVLS:
		l = intraLat
	case tNVLSTree:
		l = base + intraLat + 2*float64(bits.Len(uint(g.nodes))-1)*interLat
	}
	return l * 1e-6
}

// ncclHopLat is the ring's latency of one hop, µs: between nodes
// ncclInterLat, else the node's link class's.
func ncclHopLat(pr int, g ncclGeom) float64 {
	if g.nodes > 1 {
		return ncclInterLat(tRing, pr, g)
	}
	return ncclHW[g.cls][tRing][pr] * g.hop
}

// ncclRingSteps returns the steps of a ring and how many of them cross
// between nodes.
func ncclRingSteps(op Op, g ncclGeom) (steps, inter int) {
	steps, inter = g.p-1, g.nodes-1
	if op == OpAllReduce {
		steps, inter = 2*steps, 2*inter
	}
	if g.nodes == 1 {
		inter = 0
	}
	return steps, inter
}

// ncclIntraRingLat is the ring's hop latency inside a node, µs: at least
// the network's post overhead when the ring crosses nodes.
func ncclIntraRingLat(pr int, g ncclGeom) float64 {
	l := ncclHW[g.cls][tRing][pr] * g.hop
	if g.nodes > 1 {
		o := ncclNetOverhead
		if pr == 2 {
			o *= 3
		}
		l = max(l, o)
	}
	return l
}

// ncclBandwidth is tuning.cc's algorithm bandwidth of op by algorithm a
// and protocol pr on g, bytes/s, before the tree's size correction.
func ncclBandwidth(op Op, a, pr int, g ncclGeom) float64 {
	bus := g.bus
	switch a {
	case tRing:
		bus *= [3]float64{0.5, 0.92, 1}[pr]
		if pr == 0 {
			bus = min(bus, ncclLLMaxBus(g))
		}
		steps, _ := ncclRingSteps(op, g)
		if op == OpBroadcast {
			steps = g.p
		}
		return bus * float64(g.p) / float64(steps)
	case tTree:
		bus = 0.92 * g.busTree
		switch pr {
		case 0:
			bus = min(bus/3.8, ncclLLMaxBus(g))
		case 1:
			if g.nodes == 1 {
				bus *= 7.0 / 9
			} else {
				bus *= 120.0 / 128
			}
		}
		return bus / 2
	case tCollNet:
		if g.k > 1 {
			bus = g.intra
		}
		r := float64(g.k) / float64(g.c) // GPUs per NIC
		return bus / (r - (r-1)/2) / 2
	default: // NVLS and the NVLS tree: k channels, one a GPU
		bus = float64(g.k) * ncclNVLSChannel(a, g)
	}
	return bus * float64(g.p) / float64(2*(g.p-1))
}

// ncclNVLSChannel is the bus bandwidth of one channel of NCCL's NVLS
// graph, bytes/s, for NVLS on one node (a = tNVLS) or the NVLS tree
// (tNVLSTree), as NCCL v2.30.7 src/graph/tuning.cc (lines 307-324)
// computes it:
//
//	min(2 · nvlsEfficiency · bwIntra · (k−1)/k, m · bwInter, perChMaxNVLSTreeBw)
//
// (the reduce and the multicast pipelined; m = 2 for the NVLS tree on two
// nodes, as for the tree, else 1; no cap for NVLS), times the graph's
// channels for the bus bandwidth (line 324): one a GPU, as search.cc
// gives the NVLS graph as many channels as GPUs (line 1127) and on one
// node forces all of them (line 1136).
//
// bwIntra is the fastest of search.cc's speeds that a port carries k + 1
// times (ncclTopoSearchTryNvls: the head's port twice, every other GPU's
// once). On one node search.cc then raises bwInter, which no link checks
// there, from bwIntra one speed at a time while it is under 2·bwIntra
// (lines 1274-1277: "tmpGraph.bwInter < tmpGraph.bwIntra * 2"): the slowest
// speed of at least 2·bwIntra, or the fastest. Between nodes bwInter is
// the fastest inter speed not above a NIC's rate.
func ncclNVLSChannel(a int, g ncclGeom) float64 {
	k := float64(g.k)
	intra := ncclSpeed(ncclSpeedsIntra, g.intra/(k+1))
	inter, most := ncclSpeedAtLeast(ncclSpeedsIntra, 2*intra), math.Inf(1)
	if a == tNVLSTree {
		inter, most = ncclSpeed(ncclSpeedsInter, g.net), ncclNVLSTreeMax[1]
		if g.nodes <= 2 {
			inter, most = 2*inter, ncclNVLSTreeMax[0]
		}
	}
	return min(2*ncclNVLSEff*intra*(k-1)/k, inter, most)
}

// ncclSpeedAtLeast returns the slowest of speeds (GB/s, fastest first)
// not below bw bytes/s, in bytes/s; the fastest when none is.
func ncclSpeedAtLeast(speeds []float64, bw float64) float64 {
	for i := len(speeds) - 1; i >= 0; i-- {
		if speeds[i]*1e9 >= bw {
			return speeds[i] * 1e9
		}
	}
	return speeds[0] * 1e9
}

// ncclSpeed returns the fastest of speeds (GB/s, fastest first) not above
// bw bytes/s, in bytes/s; the slowest when none is.
func ncclSpeed(speeds []float64, bw float64) float64 {
	for _, s := range speeds {
		if s*1e9 <= bw {
			return s * 1e9
		}
	}
	return speeds[len(speeds)-1] * 1e9
}

// ncclPlateau is the factor on the latency of the ring's Simple
// all-reduce between nodes once each rank's share per channel reaches 64
// bytes (tuning.cc's "plateau effect of ring"), else 1.
func ncclPlateau(op Op, a, pr int, g ncclGeom, S float64) float64 {
	if a == tRing && pr == 2 && g.nodes > 1 && op == OpAllReduce && S/float64(g.c*g.p) >= 64 {
		return ncclRingPlateau
	}
	return 1
}

// ncclTreeCorr is treeCorrectionFactor of tuning.cc for protocol pr and
// S bytes: the fraction of its bandwidth NCCL's tree reaches at that size
// (1 below 64 B and from 512 MiB up).
func ncclTreeCorr(pr int, S float64) float64 {
	if ls := bits.Len64(uint64(S)>>6) - 1; ls >= 0 && ls < len(ncclTreeCorrection[pr]) {
		return ncclTreeCorrection[pr][ls]
	}
	return 1
}

// ncclTime is ncclTopoGetAlgoTime for one operation of S bytes.
func ncclTime(op Op, a, pr int, g ncclGeom, S float64) float64 {
	lat, bw := ncclLatency(op, a, pr, g), ncclBandwidth(op, a, pr, g)
	if a == tTree {
		bw *= ncclTreeCorr(pr, S)
	}
	return lat*ncclPlateau(op, a, pr, g, S) + S/bw
}

// NCCLChoose returns the algorithm and protocol NCCL's tuning model picks
// for op of bytes S on ranks (nil means all), with the topology's
// NCCLConfig overrides: the least predicted time, ties to the first
// tried. All-to-all and send/recv are point-to-point: always the ring's
// hops, LL up to 16 KiB per peer, else Simple. It returns an error
// wrapping ErrCollective when the request is invalid or the overrides
// leave nothing to run.
func (t *Topology) NCCLChoose(op Op, bytes units.Bytes, ranks []int) (NCCLChoice, error) {
	if !nonNegative(float64(bytes)) {
		return NCCLChoice{}, fmt.Errorf("%w: %v: bytes %v is not a non-negative finite number", ErrCollective, op, float64(bytes))
	}
	_, ranks, err := t.rankKey(ranks)
	if err != nil {
		return NCCLChoice{}, err
	}
	c, _, err := t.ncclChoose(op, float64(bytes), ranks)
	return c, err
}

func (t *Topology) ncclChoose(op Op, S float64, ranks []int) (NCCLChoice, ncclGeom, error) {
	g := t.ncclGeometry(ranks)
	if op == OpAllToAll || op == OpSendRecv {
		return t.ncclP2PChoice(op, S, g)
	}
	cands, err := t.ncclCandidates(op, g)
	if err != nil {
		return NCCLChoice{}, g, err
	}
	best, bt := cands[0], math.Inf(1)
	for _, c := range cands {
		if x := ncclTime(op, c[0], c[1], g, S); x < bt {
			best, bt = c, x
		}
	}
	return NCCLChoice{Algorithm: ncclAlgOf(best[0]), Protocol: Protocol(best[1] + 1), Predicted: units.Seconds(bt)}, g, nil
}

// ncclP2PChoice is the protocol of NCCL's point-to-point operations: LL when
// each peer gets at most ncclP2PLLMax bytes (enqueue.cc, one channel) and
// the transport lets LL run, else Simple; the algorithm is the ring's.
func (t *Topology) ncclP2PChoice(op Op, S float64, g ncclGeom) (NCCLChoice, ncclGeom, error) {
	cfg := t.cfg.NCCL
	if cfg.Algorithm != NCCLAuto && cfg.Algorithm != NCCLRing {
		return NCCLChoice{}, g, fmt.Errorf("%w: NCCL %v is point-to-point; algorithm %v does not apply (want auto or ring)", ErrCollective, op, cfg.Algorithm)
	}
	per := S
	if op == OpAllToAll {
		per = S / float64(g.p)
	}
	pr := Simple
	switch {
	case cfg.Protocol == LL128:
		return NCCLChoice{}, g, fmt.Errorf("%w: NCCL %v runs LL or simple, not ll128", ErrCollective, op)
	case cfg.Protocol != ProtoAuto:
		pr = cfg.Protocol
	case per <= ncclP2PLLMax && t.ncclProtoEnabled(g, 0):
		pr = LL
	}
	return NCCLChoice{Algorithm: NCCLRing, Protocol: pr}, g, nil
}
