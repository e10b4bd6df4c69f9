// Package hw is scaleplan's hardware catalogue: compute devices, the nodes
// that hold them and the systems (clusters) built from those nodes, with
// every figure a typed quantity from internal/units.
//
// # Entries
//
// A Device is one GPU, IPU or CPU socket: peak FLOP/s per precision (zero
// when unsupported), memory capacity and bandwidth, on-chip SRAM, TDP, its
// PCIe host link, and for a GPU its SMs (for package compute's operator
// model and NCCL's share of them), the NCCL channels its NVLink board
// gets and, where published, the efficiency its convolutions and its large
// matrix products were measured at (ConvEfficiency, GEMMEfficiency), how
// much longer its misaligned products and its channels-first batch norms
// take (MisalignedGEMM, OddGEMM, NCHWBatchNorm), and its
// L2 cache's read bandwidth (L2Bandwidth). A Node is one server: Devices of one Device, host CPUs,
// host memory, local drives, the intra-node Link between its devices, the
// host-to-device bandwidth of each device, and its NICs. A System is up to
// MaxNodes identical nodes joined by a Fabric, with the Transports that can
// carry traffic, an optional shared file server, price and power.
//
// The catalogue is YAML with three maps keyed by name:
//
//	devices:
//	  p100-sxm2: {model: ..., kind: gpu, peak: {fp64: 5.3 TFLOP/s, ...}, memory: 16 GiB, ...}
//	nodes:
//	  tsubame3: {device: p100-sxm2, devices: 4, cpu: {...}, link: {...}, nics: [...], ...}
//	systems:
//	  tsubame3: {node: tsubame3, max_nodes: 540, fabric: {...}, transports: {...}, ...}
//
// Names are lowercase letters, digits, '-' and '_'. Quantities carry their
// units ("100 Gbit/s", "256 GiB", "5 us"); a bare number other than 0 is an
// error. docs/catalog.md lists every built-in entry and the source of each
// figure.
//
// # Loading
//
// Default returns the built-in catalogue: the YAML files embedded from
// hw/catalog, plus the "localhost" device, node and system that Localhost
// builds from this machine at run time. Parse and ReadFile read a
// self-contained catalogue. Load reads Default and merges files and
// directories in order, as the --catalog flag does: an entry adds to the
// catalogue or replaces the entry of the same name, whole. Decoding is
// strict (unknown fields are errors), and Validate reports every problem at
// once, each with its YAML path and, when read from a file, its file and
// line:
//
//	my.yaml: line 12: systems.my-cluster.fabric.bandwidth: must be > 0
//
// Unknown names, in lookups and in references between entries, come with a
// suggestion:
//
//	unknown system "tsubame"; did you mean "tsubame3"?
//
// # Communication
//
// A message of n bytes over a transport costs
//
//	latency + Overhead + n / (Efficiency × bandwidth)
//
// where latency and bandwidth are the fabric's between nodes and the
// intra-node link's inside a node, and Overhead and Efficiency are the
// transport's. Transport.Scope says which of the two a transport can use: on
// TSUBAME 3.0, NCCL works inside a node only and verbs or IPoIB between
// nodes. Bandwidths of links and NICs are per direction. The transport
// figures are documented assumptions, to be replaced by calibration.
//
// # Localhost
//
// The reference engine runs its workers as goroutines on this machine's
// CPU. Localhost describes that CPU as one device of kind cpu whose peak is
//
//	fp32 = physical cores × clock × FLOPsPerCycle, fp64 = fp32 / 2
//
// with FLOPsPerCycle 64 with AVX-512 and FMA, 32 with AVX2 and FMA, 8
// otherwise, and the clock, model and flags read from /proc/cpuinfo (see
// ParseCPUInfo), falling back to documented assumptions where there is none.
package hw
