package hw

import (
	"errors"
	"fmt"
	"strings"

	"scaleplan/internal/units"
)

// Kind is the kind of a compute device.
type Kind string

// Device kinds.
const (
	GPU Kind = "gpu"
	IPU Kind = "ipu"
	CPU Kind = "cpu"
)

// Precision names an arithmetic precision of a peak rate.
type Precision string

// Precisions with a peak rate in Peak.
const (
	FP64 Precision = "fp64"
	FP32 Precision = "fp32"
	TF32 Precision = "tf32"
	FP16 Precision = "fp16"
	BF16 Precision = "bf16"
	// FP8 is the 8-bit floating-point tensor-core rate (E4M3 and E5M2
	// run at the same rate) of Hopper and later GPUs. It is not one of
	// Precisions: scenarios and calibrations do not compute at it; the
	// LLM planner runs Transformer Engine's FP8 matrix products at it.
	FP8 Precision = "fp8"
)

// Precisions lists the precisions of Peak that scenarios and calibrations
// compute at, in a fixed order; Peak also has FP8 (PeakPrecisions).
var Precisions = []Precision{FP64, FP32, TF32, FP16, BF16}

// PeakPrecisions lists every precision of Peak: Precisions and FP8.
var PeakPrecisions = []Precision{FP64, FP32, TF32, FP16, BF16, FP8}

// NetKind is the kind of a network: a cluster fabric or a node's NIC.
type NetKind string

// Network kinds.
const (
	InfiniBandEDR NetKind = "infiniband-edr" // 100 Gbit/s InfiniBand
	InfiniBandHDR NetKind = "infiniband-hdr" // 200 Gbit/s InfiniBand
	InfiniBandNDR NetKind = "infiniband-ndr" // 400 Gbit/s InfiniBand
	OmniPath      NetKind = "omni-path"      // Intel Omni-Path, 100 Gbit/s
	Ethernet      NetKind = "ethernet"       // Ethernet (TCP, or RDMA as RoCE)
	IPULinkNet    NetKind = "ipu-link"       // Graphcore IPU-Link cables between IPU-Machines
)

// LinkKind is the kind of the link between the devices of one node.
type LinkKind string

// Intra-node link kinds.
const (
	NVLink  LinkKind = "nvlink"   // NVIDIA NVLink, directly or through NVSwitch
	PCIe    LinkKind = "pcie"     // PCI Express, through switches or the host
	IPULink LinkKind = "ipu-link" // Graphcore IPU-Link inside an IPU-Machine
	Memory  LinkKind = "memory"   // copies through host memory (localhost workers)
)

// StorageKind is the kind of a node's local drives.
type StorageKind string

// Local storage kinds.
const (
	NVMe StorageKind = "nvme"
	SSD  StorageKind = "ssd" // SATA or SAS flash
	HDD  StorageKind = "hdd"
)

// Transport names accepted as keys of System.Transports.
//
// verbs, ipoib, tcp, tcpxo and grpc carry traffic between nodes over the fabric;
// their efficiency applies to the fabric's bandwidth. nccl and gcl are
// collective libraries that work inside a node and, where the fabric allows,
// between nodes; shm is shared memory between workers of one host. Inside a
// node the efficiency applies to the node's intra-node link. See
// Transport.Scope.
const (
	Verbs = "verbs" // RDMA verbs (InfiniBand, Omni-Path, RoCE)
	IPoIB = "ipoib" // TCP/IP over InfiniBand or Omni-Path
	TCP   = "tcp"   // TCP/IP over Ethernet
	// TCPXO is Google's GPUDirect-TCPX and TCPXO: NCCL's net plugin over
	// Ethernet, moving payload between GPU memory and every GPU NIC of a
	// node at once (cloud.google.com/compute/docs/gpus/gpudirect), where
	// tcp is one kernel TCP stream through one NIC.
	TCPXO = "tcpxo"
	GRPC  = "grpc" // gRPC over TCP (TensorFlow parameter servers)
	NCCL  = "nccl" // NVIDIA NCCL over NVLink or PCIe
	GCL   = "gcl"  // Graphcore Communication Library over IPU-Links
	SHM   = "shm"  // shared memory between workers of one host
)

// Peak holds a device's peak rates by precision. A zero rate means the
// precision is not supported (or not published).
//
// FP64 and FP32 are the vector (non-tensor) rates. TF32, FP16, BF16 and FP8
// are dense matrix rates (tensor cores, without sparsity); FP16 is the vector rate
// on devices without matrix units (P100).
//
// A device's rates other than 0 lie within 1 MFLOP/s to 1 EFLOP/s, a
// system's published ones within 1 MFLOP/s to 10,000 EFLOP/s (Validate).
type Peak struct {
	FP64 units.FLOPsPerSec `yaml:"fp64"` // FLOP/s; default 0 (unsupported)
	FP32 units.FLOPsPerSec `yaml:"fp32"` // FLOP/s; required for a device, 1 MFLOP/s to 1 EFLOP/s
	TF32 units.FLOPsPerSec `yaml:"tf32"` // FLOP/s; default 0 (unsupported)
	FP16 units.FLOPsPerSec `yaml:"fp16"` // FLOP/s; default 0 (unsupported)
	BF16 units.FLOPsPerSec `yaml:"bf16"` // FLOP/s; default 0 (unsupported)
	FP8  units.FLOPsPerSec `yaml:"fp8"`  // FLOP/s; default 0 (unsupported)
}

// Of returns the peak rate at precision p. It panics if p is not one of
// PeakPrecisions.
func (pk Peak) Of(p Precision) units.FLOPsPerSec {
	switch p {
	case FP64:
		return pk.FP64
	case FP32:
		return pk.FP32
	case TF32:
		return pk.TF32
	case FP16:
		return pk.FP16
	case BF16:
		return pk.BF16
	case FP8:
		return pk.FP8
	}
	panic(badPrecision)
}

// ParsePrecision returns the precision named s, or an error naming the valid ones.
func ParsePrecision(s string) (Precision, error) {
	for _, p := range Precisions {
		if string(p) == s {
			return p, nil
		}
	}
	return "", errors.New(unknownMsg("precision", s, PrecisionNames()))
}

// PrecisionNames returns the names of Precisions, in their order.
func PrecisionNames() []string {
	ns := make([]string, len(Precisions))
	for i, p := range Precisions {
		ns[i] = string(p)
	}
	return ns
}

// HostLink is a device's link to its host, normally PCI Express.
type HostLink struct {
	Gen   int `yaml:"gen"`   // PCIe generation 1 to 6; default 0 (not PCIe, or none)
	Lanes int `yaml:"lanes"` // PCIe lanes: 1, 2, 4, 8, 16 or 32; required when Gen > 0

	// Bandwidth is per direction, in bytes/s, 1 MB/s to 1 PB/s. Default:
	// PCIeBandwidth(Gen, Lanes).
	Bandwidth units.BytesPerSec `yaml:"bandwidth"`
}

// PCIeBandwidth returns the raw bandwidth per direction of a PCI Express
// link of the given generation and width, after line encoding:
//
//	gen 1, 2: 2.5, 5 GT/s per lane, 8b/10b encoding
//	gen 3, 4, 5: 8, 16, 32 GT/s per lane, 128b/130b encoding
//	gen 6: 64 GT/s per lane, PAM4 with FLIT encoding, counted as 242/256
//
// so a Gen3 x16 link carries 15.75 GB/s each way. It returns 0 for a
// generation outside 1 to 6 or a non-positive width.
func PCIeBandwidth(gen, lanes int) units.BytesPerSec {
	if lanes <= 0 {
		return 0
	}
	var gts, eff float64
	switch gen {
	case 1:
		gts, eff = 2.5, 8.0/10
	case 2:
		gts, eff = 5, 8.0/10
	case 3:
		gts, eff = 8, 128.0/130
	case 4:
		gts, eff = 16, 128.0/130
	case 5:
		gts, eff = 32, 128.0/130
	case 6:
		gts, eff = 64, 242.0/256
	default:
		return 0
	}
	return units.BytesPerSec(gts * 1e9 * eff * float64(lanes) / 8)
}

// Device is one compute device: a GPU, an IPU or a CPU socket.
type Device struct {
	Name   string `yaml:"-"`      // catalogue key, filled in by the loader
	Model  string `yaml:"model"`  // product name, such as "Tesla P100 SXM2 16GB"; required
	Vendor string `yaml:"vendor"` // such as "NVIDIA"; required
	Kind   Kind   `yaml:"kind"`   // gpu, ipu or cpu; required

	// Names are other names of the device as tools report it, such as
	// CUDA's device name ("NVIDIA A100-SXM4-80GB", what
	// torch.cuda.get_device_name and nvidia-smi print and benchmark logs
	// carry): a calibration entry measured under one of them applies to
	// the device (Is). No two devices share a name. Default none.
	Names []string `yaml:"names"`

	Peak Peak `yaml:"peak"` // peak rates per precision

	// Memory is the capacity a step's weights, gradients, optimizer state and
	// activations must fit in: HBM or GDDR for a GPU, In-Processor-Memory
	// (SRAM) for an IPU. Bytes, 1 MiB to 100 TiB; required for GPUs and
	// IPUs; 0 for a CPU means the node's host memory.
	Memory units.Bytes `yaml:"memory"`

	// MemoryBandwidth is the bandwidth of Memory, bytes/s; required, 1 MB/s
	// to 1 PB/s. For a CPU, that of one socket's memory channels.
	MemoryBandwidth units.BytesPerSec `yaml:"memory_bandwidth"`

	// SMs is a GPU's streaming multiprocessors, from its datasheet or
	// architecture whitepaper: the units NCCL's kernels take one per
	// channel from compute. Default 0 (not given), else 1 to 65536.
	SMs int `yaml:"sms"`

	// NCCLChannels is the ring channels NCCL opens between GPUs of this
	// model on an NVLink node, each one thread block on one SM, as its
	// topology search (src/graph/search.cc) and channel duplication
	// (src/graph/connect.cc) give them. Default 0 (not given), else 1 to
	// 64 (NCCL's MAXCHANNELS).
	NCCLChannels int `yaml:"nccl_channels"`

	// NCCLArch is the row of NCCL's per-architecture tuning tables
	// (src/graph/tuning.cc, compCapIndex) the GPU takes by its compute
	// capability: volta below 8.0, ampere for 8.x, hopper for 9.x,
	// blackwell from 10.0. Default "" (not given: no per-architecture cap).
	NCCLArch string `yaml:"nccl_arch,omitempty"`

	// ConvEfficiency is the fraction of the peak that an implicit-GEMM
	// convolution reaches on this device's full waves of tiles, from a
	// published measurement of the device; default none (a convolution
	// reaches what a matrix product does).
	ConvEfficiency ConvEfficiency `yaml:"conv_efficiency,omitempty"`
	// GEMMEfficiency is the fraction of the peak that a large dense
	// matrix product reaches on this device's tensor cores, or at fp32 on
	// its CUDA cores, from a published measurement of the device or of its
	// chip; default none (the operator model's EffGEMM, NVIDIA's A100
	// figure).
	GEMMEfficiency GEMMEfficiency `yaml:"gemm_efficiency,omitempty"`
	// MisalignedGEMM is how many times longer a product on the tensor
	// cores takes whose matrices have a leading dimension that is not a
	// multiple of 16 bytes (compute.AlignBytes: a language model's output
	// projection over an unpadded vocabulary), where cuBLAS falls back
	// from its own kernels to slower CUTLASS ones, from a measurement of
	// the device or of its chip; default 0 (no slower: the V100's cuBLAS
	// ran DeepBench's misaligned fp16 products at full speed).
	MisalignedGEMM float64 `yaml:"misaligned_gemm,omitempty"`
	// OddGEMM is MisalignedGEMM for a 16-bit product whose leading
	// dimension is an odd number of values, aligned to 2 bytes only
	// (GPT-2's vocabulary of 50,257), where cuBLAS falls back further,
	// to CUTLASS's align1 kernels; default 0: MisalignedGEMM.
	OddGEMM float64 `yaml:"odd_gemm,omitempty"`
	// NCHWBatchNorm is how fast cuDNN's batch norm kernels for
	// channels-first feature maps run on the device where they are bound
	// by its SMs rather than by its bandwidth: values a second (the bytes
	// a batch norm's passes read and write over the value's size) per
	// FLOP/s of the fp32 peak, from a measurement of the device or of its
	// chip; default 0 (they move their bytes as every memory-bound
	// operator does).
	NCHWBatchNorm float64 `yaml:"nchw_batch_norm,omitempty"`
	// Winograd is how fast the device runs the 3×3 stride-1 dense
	// convolutions at fp32 that cuDNN runs by Winograd's minimal
	// filtering, from a published measurement of the device; default none
	// (they run as implicit GEMMs).
	Winograd Winograd `yaml:"winograd,omitempty"`
	// L2Bandwidth is the peak read bandwidth of a GPU's L2 cache, bytes/s:
	// the bytes per clock of its architecture whitepaper times the boost
	// clock. Only the operator model's depthwise weight gradient uses it
	// (compute's EffL2 scales it to what a kernel measures). Default 0
	// (not given: that pass is timed as the other depthwise passes), else
	// 1 MB/s to 1 PB/s and at least MemoryBandwidth.
	L2Bandwidth units.BytesPerSec `yaml:"l2_bandwidth,omitempty"`

	SRAM     units.Bytes `yaml:"sram"`      // on-chip memory (IPU In-Processor-Memory), bytes; default 0, else 1 KiB to 100 TiB
	TDP      units.Watts `yaml:"tdp"`       // thermal design power, watts; default 0 (unpublished), else 1 W to 1 GW
	HostLink HostLink    `yaml:"host_link"` // link to the host; default none
	Source   string      `yaml:"source"`    // where the figures come from; default ""
}

// ConvEfficiency is how much of a peak a device's dense convolutions
// reach, measured on full waves of tiles (the tile and wave quantisation
// of the measured problem divided out), by the units that run them.
type ConvEfficiency struct {
	// Tensor is a convolution on the tensor cores, as a fraction of the
	// precision's tensor peak; default 0 (not measured), else in (0, 1].
	Tensor float64 `yaml:"tensor"`
	// CUDA is a convolution at fp32 on the CUDA cores, as a fraction of
	// the fp32 peak; default 0 (not measured), else in (0, 1].
	CUDA float64 `yaml:"cuda"`
}

// Of returns the efficiency of a convolution on the tensor cores (tensor)
// or on the CUDA cores; 0 where the device gives none.
func (e ConvEfficiency) Of(tensor bool) float64 {
	if tensor {
		return e.Tensor
	}
	return e.CUDA
}

// GEMMEfficiency is how much of its peak a device's large dense matrix
// products reach, measured on full waves of tiles (the tile and wave
// quantisation of the measured products divided out), by the units that
// run them.
type GEMMEfficiency struct {
	// Tensor is a large product on the tensor cores, as a fraction of the
	// precision's tensor peak; default 0 (not measured), else in (0, 1].
	Tensor float64 `yaml:"tensor"`
	// CUDA is a large product at fp32 on the CUDA cores, as a fraction of
	// the fp32 peak; default 0 (not measured), else in (0, 1].
	CUDA float64 `yaml:"cuda,omitempty"`
}

// Winograd is how fast a device runs a 3×3 stride-1 dense convolution at
// fp32 by Winograd's minimal filtering F(4×4, 3×3) (Lavin and Gray 2016,
// "Fast Algorithms for Convolutional Neural Networks", CVPR: 36
// multiplications per 4×4 output tile and channel pair where the direct
// convolution does 144), per pass: the forward pass, the input gradient
// and the weight gradient.
type Winograd struct {
	Forward    WinogradPass `yaml:"forward"`
	GradInput  WinogradPass `yaml:"grad_input"`
	GradWeight WinogradPass `yaml:"grad_weight"`
}

// WinogradPass is one pass's rate, counted in the direct convolution's
// FLOPs (2 per multiply-add of the direct convolution): a convolution of
// C input and K output channels whose output tiles are all full runs at
//
//	rate = Rate · fp32 peak / (1 + Channels · (1/C + 1/K))
//
// the tiles' element-wise products growing as C·K and the input's and
// output's transforms as C and K.
type WinogradPass struct {
	// Rate is the rate of a convolution of many channels, a multiple of
	// the fp32 peak; default 0 (not measured), else in (0, 4] (4 is the
	// multiplications F(4×4, 3×3) saves).
	Rate float64 `yaml:"rate"`
	// Channels is the transforms' cost in channels: at C = K = 2·Channels
	// the rate is half of Rate; default 0, else in [0, 4096].
	Channels float64 `yaml:"channels"`
}

// Measured reports whether p gives a rate.
func (p WinogradPass) Measured() bool { return p.Rate > 0 }

// Is reports whether name names d: its catalogue key or one of its Names,
// ignoring case and surrounding space.
func (d *Device) Is(name string) bool {
	name = strings.TrimSpace(name)
	if strings.EqualFold(name, d.Name) {
		return true
	}
	for _, n := range d.Names {
		if strings.EqualFold(name, strings.TrimSpace(n)) {
			return true
		}
	}
	return false
}

// PeakFLOPs returns d's peak rate at precision p; zero if unsupported.
// It panics if p is not one of Precisions.
func (d *Device) PeakFLOPs(p Precision) units.FLOPsPerSec { return d.Peak.Of(p) }

// HostCPU describes the host processors of a node.
type HostCPU struct {
	Model          string      `yaml:"model"`            // product name; required
	Device         string      `yaml:"device"`           // catalogue device (kind cpu) with per-socket peaks; default "" (none)
	Sockets        int         `yaml:"sockets"`          // required, 1 to 64
	CoresPerSocket int         `yaml:"cores_per_socket"` // physical cores; required, 1 to 65536
	Clock          units.Hertz `yaml:"clock"`            // base clock, Hz; required, 1 MHz to 100 GHz
	Boost          units.Hertz `yaml:"boost_clock"`      // maximum boost (turbo) clock of a lightly loaded processor, Hz, at least Clock; default Clock
	ThreadsPerCore int         `yaml:"threads_per_core"` // hardware threads of a core (SMT, Hyper-Threading); default 1, at most 8
}

// Cores returns the node's total number of CPU cores.
func (c HostCPU) Cores() int { return c.Sockets * c.CoresPerSocket }

// Threads returns the node's hardware threads: Cores times
// ThreadsPerCore (1 where not given).
func (c HostCPU) Threads() int { return c.Cores() * max(c.ThreadsPerCore, 1) }

// ClockAt returns the clock of each of busy cores of the node while the
// rest idle: the boost clock with one busy core, the base clock with all
// of them, and in between linearly,
//
//	f(k) = Boost − (Boost − Clock)·(k − 1)/(Cores − 1),  1 ≤ k ≤ Cores
//
// Datasheets give the two ends (the base clock every core sustains, the
// maximum boost of a lightly loaded processor); the straight line between
// them stands for the turbo bins a vendor publishes per number of active
// cores, which fall as more cores run. busy is clamped to [1, Cores]; a
// processor without a boost clock runs at Clock.
func (c HostCPU) ClockAt(busy int) units.Hertz {
	n := c.Cores()
	if c.Boost <= c.Clock || n <= 1 {
		return c.Clock
	}
	k := min(max(busy, 1), n)
	drop := units.Hertz(float64((c.Boost - c.Clock) * units.Hertz(float64(k-1)/float64(n-1))))
	return c.Boost - drop
}

// Storage is a set of identical local drives of a node.
type Storage struct {
	Kind     StorageKind       `yaml:"kind"`     // nvme, ssd or hdd; required
	Count    int               `yaml:"count"`    // number of drives; required, 1 to 1024
	Capacity units.Bytes       `yaml:"capacity"` // per drive, bytes; required, 1 MiB to 1 PiB
	Read     units.BytesPerSec `yaml:"read"`     // sequential read per drive, bytes/s; required, 1 MB/s to 1 PB/s
	Write    units.BytesPerSec `yaml:"write"`    // sequential write per drive, bytes/s; required, 1 MB/s to 1 PB/s
}

// TotalCapacity returns the capacity of all drives.
func (s Storage) TotalCapacity() units.Bytes { return s.Capacity * units.Bytes(s.Count) }

// ReadBandwidth returns the read bandwidth of all drives striped together.
func (s Storage) ReadBandwidth() units.BytesPerSec { return s.Read * units.BytesPerSec(s.Count) }

// WriteBandwidth returns the write bandwidth of all drives striped together.
func (s Storage) WriteBandwidth() units.BytesPerSec { return s.Write * units.BytesPerSec(s.Count) }

// Link is the link between the devices of one node.
type Link struct {
	Kind LinkKind `yaml:"kind"` // nvlink, pcie, ipu-link or memory; required

	// Bandwidth is what one device can send (and at once receive) to its
	// peers in the node, per direction, bytes/s; required, 1 MB/s to 1 PB/s.
	Bandwidth units.BytesPerSec `yaml:"bandwidth"`

	Latency units.Seconds `yaml:"latency"` // per message, seconds; default 0, at most 1 s

	// PeerToPeer reports whether devices exchange data directly. Without it,
	// transfers are staged through host memory over each device's host link.
	// Default false.
	PeerToPeer bool `yaml:"peer_to_peer"`

	// InNetworkReduction says the node's switch reduces in the network:
	// NVLink SHARP on third-generation (and later) NVSwitch, which NCCL
	// 2.17 and later drive as its NVLS algorithm (NCCL_NVLS_ENABLE, on by
	// default where the switch supports it). Only an NVLink link with
	// peer-to-peer may set it. Default false.
	InNetworkReduction bool `yaml:"in_network_reduction,omitempty"`
}

// NIC is a group of identical network adapters of a node.
type NIC struct {
	Count     int              `yaml:"count"`     // adapters; required, 1 to 1024
	Ports     int              `yaml:"ports"`     // ports per adapter, at most 64; default 0, meaning 1
	Kind      NetKind          `yaml:"kind"`      // network kind; required
	Bandwidth units.BitsPerSec `yaml:"bandwidth"` // per port and direction, bits/s; required, 1 Mbit/s to 1 Pbit/s

	// Host says the adapters carry the host's own traffic (a cloud node's
	// host NIC beside its GPU NICs), not the devices' exchange: the
	// fabric's ports leave them out. Default false.
	Host bool `yaml:"host,omitempty"`

	// DeviceLocal says the ports are spread evenly over the node's
	// devices, each behind its device's own PCIe switch (GPUDirect RDMA),
	// so that a job using d of the node's D devices uses only the
	// ceil(ports·d/D) ports local to them (Node.LocalPorts): NCCL builds
	// each host's topology from the communicator's GPUs alone (NVIDIA/nccl
	// v2.30.7 src/graph/topo.cc, ncclTopoGetSystem) and its graph search
	// (src/graph/search.cc, ncclTopoCompute) widens the GPU-to-NIC path
	// type past PXN only while it has no graph, so the NICs behind the
	// host bridge (PHB, SYS) stay unused. Default false: the job gets every
	// port whatever devices it uses. A node with a pcie_tree whose
	// nics_per_switch is set gets the same from its switches.
	DeviceLocal bool `yaml:"device_local,omitempty"`
}

// PortCount returns Count × Ports, with Ports 0 counted as 1.
func (n NIC) PortCount() int { return n.Count * max(n.Ports, 1) }

// LocalPorts returns how many of ports, a count of n's fabric ports of
// kind k, a job using used of n's devices reaches: ports when any of
// those NICs is not DeviceLocal or used is n.Devices or more, else
//
//	ceil(ports · used / n.Devices)
//
// and at least 1.
func (n *Node) LocalPorts(k NetKind, ports, used int) int {
	if used >= n.Devices || n.Devices < 1 {
		return ports
	}
	for _, nic := range n.NICs {
		if nic.Kind == k && !nic.Host && !nic.DeviceLocal {
			return ports
		}
	}
	return max(1, min(ports, (ports*max(used, 0)+n.Devices-1)/n.Devices))
}

// Node is one server of a cluster.
type Node struct {
	Name    string `yaml:"-"`       // catalogue key, filled in by the loader
	Model   string `yaml:"model"`   // server model, such as "PRIMERGY GX2570 M5"; required
	Device  string `yaml:"device"`  // catalogue name of its compute devices; required
	Devices int    `yaml:"devices"` // number of those devices; required, 1 to 4096

	CPU        HostCPU     `yaml:"cpu"`         // host processors
	HostMemory units.Bytes `yaml:"host_memory"` // bytes; required, 1 MiB to 100 TiB
	Storage    []Storage   `yaml:"storage"`     // local drives; default none
	Link       Link        `yaml:"link"`        // between the node's devices

	// HostToDevice is the host-to-device bandwidth of each device, per
	// direction, bytes/s, 1 MB/s to 1 PB/s. Default: the device's HostLink
	// bandwidth.
	HostToDevice units.BytesPerSec `yaml:"host_to_device"`

	// SHMBandwidth is what NCCL's shared-memory transport moves per
	// device and direction between two of the node's devices that do not
	// use peer-to-peer (a link without it, or NCCL_P2P_DISABLE=1), bytes/s,
	// 1 MB/s to 1 PB/s, with every device sending and receiving at once,
	// as in a ring. Default 0: DefaultSHMBandwidth.
	SHMBandwidth units.BytesPerSec `yaml:"shm_bandwidth"`
	// SHMCrossSocket is the share of that rate the transport moves between
	// devices on different CPU sockets (the node's devices fill its
	// cpu.sockets in turn), in (0, 1]. Default 0: DefaultSHMCrossSocket on
	// an AMD host, else 1 (SHMCrossShare).
	SHMCrossSocket float64 `yaml:"shm_cross_socket"`

	NICs  []NIC       `yaml:"nics"`  // network adapters; default none
	Power units.Watts `yaml:"power"` // whole node, maximum, watts; default 0 (unpublished), else 1 W to 1 GW

	// PCIeTree is how the devices and NICs hang off the CPUs; default
	// nil: not modelled, every pair of devices at the link's bandwidth.
	// On a PCIe link it routes the devices' traffic; on an NVLink link
	// the devices talk over NVLink and the tree routes their traffic to
	// the NICs.
	PCIeTree *PCIeTree `yaml:"pcie_tree"`
}

// PCIeTree is a node's PCIe topology: its devices, in order, behind PCIe
// switches of DevicesPerSwitch, each switch with one uplink to a CPU
// socket (switch s of m on socket s·sockets/m), the sockets joined by
// inter-socket links (QPI, UPI, Infinity Fabric). NCCL uses peer-to-peer
// only under a common switch by default, so transfers between switches,
// and to NICs not under the device's switch, are staged through host
// memory (docs/network.md, "Links and transports").
type PCIeTree struct {
	DevicesPerSwitch int               `yaml:"devices_per_switch"` // required, 1 to the node's devices
	Uplink           units.BytesPerSec `yaml:"uplink"`             // per switch and direction, bytes/s; required, 1 MB/s to 1 PB/s
	// InterSocket is the bandwidth between two sockets per direction,
	// bytes/s, 1 MB/s to 1 PB/s; required when cpu.sockets is above 1.
	InterSocket units.BytesPerSec `yaml:"inter_socket"`
	// NICsPerSwitch puts the node's fabric NIC ports, in order, behind
	// the switches, NICsPerSwitch to a switch (port i under switch
	// i/NICsPerSwitch), where a device reaches a port under its own
	// switch without crossing the uplink (GPUDirect RDMA). Default 0:
	// the ports hang off the root complex, reached through host memory.
	NICsPerSwitch int    `yaml:"nics_per_switch"`
	Source        string `yaml:"source"` // where the figures come from; default ""
}

// NetworkBandwidth returns the sum over n's NIC ports of kind k of their
// bandwidth per direction.
func (n *Node) NetworkBandwidth(k NetKind) units.BitsPerSec {
	var sum units.BitsPerSec
	for _, nic := range n.NICs {
		if nic.Kind == k {
			sum += nic.Bandwidth * units.BitsPerSec(nic.PortCount())
		}
	}
	return sum
}

// Fabric is the network between the nodes of a system.
type Fabric struct {
	Kind      NetKind          `yaml:"kind"`      // required
	Bandwidth units.BitsPerSec `yaml:"bandwidth"` // per link and direction, bits/s; required, 1 Mbit/s to 1 Pbit/s
	Latency   units.Seconds    `yaml:"latency"`   // end-to-end, small message, seconds; default 0, at most 1 s

	// Oversubscription is the ratio of the bandwidth nodes can inject to the
	// bisection bandwidth: 1 for a full fat tree. Default 0, meaning 1;
	// otherwise 1 to 1000.
	Oversubscription float64 `yaml:"oversubscription"`

	// RailOptimized puts NIC j of every node on rail j's leaf switch:
	// traffic between NICs of the same index stays on its leaf, traffic
	// between rails crosses the spine, which Oversubscription then
	// describes. Default false: one fabric core.
	RailOptimized bool `yaml:"rail_optimized"`
}

// Transport is how one communication layer uses a link: messages of n
// bytes cost
//
//	Overhead + n / (Efficiency × bandwidth)
//
// where bandwidth is the fabric's (verbs, ipoib, tcp, grpc) or the intra-node
// link's (nccl, gcl, shm).
type Transport struct {
	Efficiency float64       `yaml:"efficiency"` // fraction of link bandwidth reached, in (0, 1]; required
	Overhead   units.Seconds `yaml:"overhead"`   // per message on top of the link latency, seconds; default 0, at most 1 s

	// PerFlow is the most one stream of the transport moves between nodes
	// (one TCP connection served by one core, a cloud network's cap on one
	// flow), bits/s, however fast the NIC; 1 Mbit/s to 1 Pbit/s. Default 0:
	// no limit but the NIC's.
	PerFlow units.BitsPerSec `yaml:"per_flow"`
	// Streams is the number of streams a device stripes each transfer to
	// another node over (NCCL's socket transport: NCCL_SOCKET_NTHREADS ×
	// NCCL_NSOCKS_PERTHREAD sockets), 1 to 64; a transfer moves at most
	// Streams × PerFlow. Default 0, meaning 1.
	Streams int `yaml:"streams"`
	// NCCLProtocols are the NCCL protocols (ll, ll128, simple) NCCL may run
	// over the transport between nodes, as its net plugin restricts them:
	// aws-ofi-nccl sets NCCL_PROTO=simple where EFA does not deliver
	// 128-byte lines in order, which LL and LL128 need. Default none:
	// NCCL's defaults.
	NCCLProtocols []string `yaml:"nccl_protocols,omitempty"`
	// NCCLBuffSize is NCCL_BUFFSIZE as the net plugin's environment sets
	// it (GPUDirect-TCPXO's profile: 8 MiB), bytes, at most 1 GiB: NCCL
	// moves a tree call with Simple in chunks of an eighth of it. Default
	// 0: NCCL's 4 MiB.
	NCCLBuffSize units.Bytes `yaml:"nccl_buffsize,omitempty"`
	// NCCLNoNVLS says the net plugin's environment turns NCCL's NVLS
	// algorithms off (NCCL_NVLS_ENABLE=0, as GPUDirect-TCPXO's profiles
	// did up to August 2025), whatever the node's switch can do. Default
	// false.
	NCCLNoNVLS bool `yaml:"nccl_no_nvls,omitempty"`

	// Scope says where the transport can carry traffic: ScopeNode (between
	// the devices of a node), ScopeFabric (between nodes) or ScopeBoth.
	// Default: DefaultScope of the transport's name.
	Scope string `yaml:"scope"`

	Source string `yaml:"source"` // where the figures come from; default ""
}

// Transport scopes.
const (
	ScopeNode   = "node"   // inside a node only, over its intra-node link
	ScopeFabric = "fabric" // between nodes only, over the fabric
	ScopeBoth   = "both"   // both; the intra-node link inside a node, the fabric between nodes
)

// DefaultScope returns the scope of the transport named name when the
// catalogue gives none: ScopeFabric for verbs, ipoib, tcp, tcpxo and grpc,
// ScopeBoth for nccl and gcl, ScopeNode for shm.
func DefaultScope(name string) string {
	switch name {
	case NCCL, GCL:
		return ScopeBoth
	case SHM:
		return ScopeNode
	}
	return ScopeFabric
}

// InNode reports whether t can carry traffic between the devices of a node.
func (t Transport) InNode() bool { return t.Scope == ScopeNode || t.Scope == ScopeBoth }

// BetweenNodes reports whether t can carry traffic between nodes.
func (t Transport) BetweenNodes() bool { return t.Scope == ScopeFabric || t.Scope == ScopeBoth }

// SharedStorage is a file server all nodes read from.
type SharedStorage struct {
	Kind      string            `yaml:"kind"`       // such as "lustre" or "nfs"; default ""
	Aggregate units.BytesPerSec `yaml:"aggregate"`  // all clients together, bytes/s; required, 1 MB/s to 1 PB/s
	PerClient units.BytesPerSec `yaml:"per_client"` // one node, bytes/s; required, 1 MB/s to Aggregate
	Latency   units.Seconds     `yaml:"latency"`    // per request (open/read), seconds; default 0, at most 1 s
}

// System is a cluster of identical nodes.
type System struct {
	Name        string `yaml:"-"`           // catalogue key, filled in by the loader
	Description string `yaml:"description"` // one line; default ""
	Node        string `yaml:"node"`        // catalogue name of its nodes; required
	MaxNodes    int    `yaml:"max_nodes"`   // largest node count; required, 1 to 131072 (2^17)

	Fabric Fabric `yaml:"fabric"` // between nodes; required when MaxNodes > 1

	// Transports maps a transport name (Verbs, IPoIB, TCP, GRPC, NCCL, GCL,
	// SHM) to its figures; at least one is required.
	Transports map[string]Transport `yaml:"transports"`

	SharedStorage *SharedStorage `yaml:"shared_storage"` // default nil (data on local drives only)

	// PricePerDeviceHour is a comparable public on-demand cloud price, US
	// dollars per device-hour, at most 10,000; default 0 (unknown).
	PricePerDeviceHour float64 `yaml:"price_per_device_hour"`
	PriceSource        string  `yaml:"price_source"` // where the price comes from; default ""

	Power units.Watts `yaml:"power"` // whole system, watts; default 0 (unpublished), else 1 W to 1 GW

	// PublishedPeak holds system-wide peak rates as published by the
	// operator, for cross-checks; default zero (none).
	PublishedPeak Peak `yaml:"published_peak"`
}

// Transport returns s's transport named name, its Scope defaulted by
// DefaultScope if empty, or an error with a did-you-mean suggestion.
func (s *System) Transport(name string) (Transport, error) {
	if t, ok := s.Transports[name]; ok {
		if t.Scope == "" {
			t.Scope = DefaultScope(name)
		}
		return t, nil
	}
	return Transport{}, fmt.Errorf("system %q: %s", s.Name, unknownMsg("transport", name, sortedKeys(s.Transports)))
}

// Catalog holds devices, nodes and systems by name.
type Catalog struct {
	Devices map[string]*Device `yaml:"devices"`
	Nodes   map[string]*Node   `yaml:"nodes"`
	Systems map[string]*System `yaml:"systems"`
}

const badPrecision = "hw: unknown precision"

// DefaultSHMBandwidth is the rate per device and direction of NCCL's
// shared-memory transport (SHM: each device writes into host memory, its
// peer reads from there) while every device sends and receives at once:
// the 3.9 GB/s all-reduce bus bandwidth NVIDIA/nccl issue 384 measures
// between two GPUs on PCIe Gen3 x16 with NCCL_P2P_DISABLE=1, where a
// broadcast, which moves data one way, reaches 10.3 GB/s. NCCL's author
// answers there that some components, in particular some CPUs, do not
// handle bidirectional traffic well: the limit is the host's, not the
// link's, so the figure is not scaled by a device's PCIe generation.
const DefaultSHMBandwidth units.BytesPerSec = 3.9e9

// DefaultSHMCrossSocket is the share of the shared-memory rate NCCL's
// SHM transport moves between two AMD sockets: on a host of eight A40s on
// two sockets, NCCL 2.16.2 with NCCL_P2P_DISABLE=1 reaches 4.02 GB/s of
// all-reduce bus bandwidth between two GPUs of one socket (2 GiB) and
// 1.44 GB/s on a ring of four whose hops cross the sockets twice (1 GiB):
// 1.44/4.02 (eugenesiow/LLM-Insights, infrastructure/hardware/README.md,
// 2023-10-26; docs/network-shm.md), the one table found of a ring across
// sockets. Its CPU is not stated; every report of SHM slowed across
// sockets found names AMD EPYC hosts and their NPS setting
// (NVIDIA/nccl-tests#74, NVIDIA/nccl#841, #1285), so SHMCrossShare gives
// it to AMD hosts.
const DefaultSHMCrossSocket = 1.44 / 4.02

// SHMCrossShare returns n's SHMCrossSocket; where it gives none,
// DefaultSHMCrossSocket on a host whose CPU model names AMD, else 1: no
// report of SHM slowed between Intel sockets was found, and Lambda's
// eight V100s on an Intel host keep the whole rate across its sockets
// (docs/network-shm.md).
func (n *Node) SHMCrossShare() float64 {
	switch {
	case n.SHMCrossSocket > 0:
		return n.SHMCrossSocket
	case strings.HasPrefix(strings.ToUpper(strings.TrimSpace(n.CPU.Model)), "AMD"):
		return DefaultSHMCrossSocket
	}
	return 1
}

// SHMRate returns n's SHMBandwidth, or DefaultSHMBandwidth where it
// gives none.
func (n *Node) SHMRate() units.BytesPerSec {
	if n.SHMBandwidth > 0 {
		return n.SHMBandwidth
	}
	return DefaultSHMBandwidth
}

// HostBandwidth returns the host-to-device bandwidth per direction of each of
// n's devices: HostToDevice if set, otherwise d's host link bandwidth, where
// d is n's device.
func (n *Node) HostBandwidth(d *Device) units.BytesPerSec {
	if n.HostToDevice > 0 {
		return n.HostToDevice
	}
	return d.HostLink.Bandwidth
}
