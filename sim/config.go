package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/netsim"
)

// ErrConfig is wrapped by every error Run returns for a configuration it
// cannot simulate.
var ErrConfig = errors.New("bad simulation config")

// ErrMemory is wrapped by the error Run returns when a configuration does
// not fit in device memory.
var ErrMemory = errors.New("out of device memory")

// Limits on a configuration, so that no input can make a simulation run
// for hours or exhaust memory.
const (
	MaxSteps        = 1000    // Config.Steps
	MaxAccumulation = 1 << 12 // Config.Accumulation
	MaxBatch        = 1 << 30 // Config.MicroBatch
	MaxJitter       = 10.0    // Config.Jitter
	MaxRanks        = netsim.MaxRanks
	// MaxWork bounds ranks × steps × micro-batches per step, about the
	// number of compute tasks a run simulates.
	MaxWork = 1 << 22
	// MaxCollectives bounds gradient buckets × steps × stages.
	MaxCollectives = 1 << 16
	// MaxBytes, MaxTime and MinRate bound sizes, durations and non-zero
	// bandwidths, so that every simulated time stays finite.
	MaxBytes = 1e18 * units.Byte
	MaxTime  = 1e9 * units.Second
	MinRate  = units.BytesPerSec(1)
)

// Defaults of Config fields left zero.
const (
	DefaultSteps    = 6
	DefaultBucket   = 25 * units.MiB
	DefaultPrefetch = 2
	// DefaultForwardFraction is the forward pass's share of a micro-batch's
	// compute time: the backward pass costs about twice the forward.
	DefaultForwardFraction = 1.0 / 3
)

// Algorithm is the gradient exchange between the replicas of a stage.
type Algorithm int

// The gradient exchanges. The names are those of a scenario's
// parallelism.allreduce.
const (
	Ring                 Algorithm = iota // ring all-reduce
	HalvingDoubling                       // Rabenseifner's recursive halving and doubling
	Tree                                  // pipelined binary tree
	DoubleTree                            // NCCL's double binary tree
	Hierarchical                          // reduce-scatter in the node, all-reduce between nodes, all-gather
	Torus2D                               // IPU-POD 2D ring
	ParameterServer                       // synchronous parameter servers
	AsyncParameterServer                  // asynchronous parameter servers: no barrier
	HostStaged                            // through host memory, for devices without peer-to-peer access
	NCCL                                  // NCCL's algorithm and protocol per call, from its tuning model (Comm.NCCLAlgo, Comm.NCCLProto)
)

var algorithmNames = [...]string{"ring", "halving-doubling", "tree", "double-tree", "hierarchical", "torus-2d", "ps", "async-ps", "host-staged", "nccl"}

// String returns the algorithm's name as ParseAlgorithm reads it.
func (a Algorithm) String() string {
	if a < 0 || int(a) >= len(algorithmNames) {
		return fmt.Sprintf("Algorithm(%d)", int(a))
	}
	return algorithmNames[a]
}

// MarshalText returns the algorithm's name.
func (a Algorithm) MarshalText() ([]byte, error) {
	if a < 0 || int(a) >= len(algorithmNames) {
		return nil, fmt.Errorf("%w: unknown algorithm %d", ErrConfig, int(a))
	}
	return []byte(a.String()), nil
}

// ParseAlgorithm returns the algorithm named s: ring, halving-doubling,
// tree, double-tree, hierarchical, torus-2d, ps, async-ps, host-staged or
// nccl.
func ParseAlgorithm(s string) (Algorithm, error) {
	for i, n := range algorithmNames {
		if s == n {
			return Algorithm(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown all-reduce algorithm %q; want one of %q", ErrConfig, s, algorithmNames[:])
}

// netsim returns the collective that carries a synchronous exchange.
func (a Algorithm) netsim() netsim.Algorithm {
	switch a {
	case HalvingDoubling:
		return netsim.HalvingDoubling
	case Tree:
		return netsim.Tree
	case DoubleTree:
		return netsim.DoubleTree
	case Hierarchical:
		return netsim.Hierarchical
	case Torus2D:
		return netsim.Torus2D
	case ParameterServer, AsyncParameterServer:
		return netsim.ParameterServer
	case HostStaged:
		return netsim.HostStaged
	case NCCL:
		return netsim.NCCL
	}
	return netsim.Ring
}

// Schedule is a pipeline schedule.
type Schedule int

// The pipeline schedules.
const (
	// OneFOneB is PipeDream-Flush: stage s runs min(S−s−1, M) forwards,
	// then alternates one forward and one backward, then drains the
	// remaining backwards.
	OneFOneB Schedule = iota
	// GPipe runs every micro-batch's forward, then every backward.
	GPipe
)

// String returns "1f1b" or "gpipe".
func (s Schedule) String() string {
	switch s {
	case OneFOneB:
		return "1f1b"
	case GPipe:
		return "gpipe"
	}
	return fmt.Sprintf("Schedule(%d)", int(s))
}

// MarshalText returns the schedule's name.
func (s Schedule) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// ParseSchedule returns the schedule named s: gpipe or 1f1b.
func ParseSchedule(s string) (Schedule, error) {
	switch s {
	case "1f1b":
		return OneFOneB, nil
	case "gpipe":
		return GPipe, nil
	}
	return 0, fmt.Errorf("%w: unknown pipeline schedule %q; want gpipe or 1f1b", ErrConfig, s)
}

// Storage is where the input pipeline reads samples from.
type Storage int

// The storage kinds.
const (
	// Synthetic samples are made on the device: no read, decode or copy.
	Synthetic Storage = iota
	// Local reads each node's drives.
	Local
	// Shared reads many small files from the shared file server.
	Shared
	// SharedDB reads one database file on the shared file server, whose
	// readers serialize.
	SharedDB
	// Cached samples are in host memory already (the page cache): no read;
	// decoding and copying apply.
	Cached
)

var storageNames = [...]string{"synthetic", "local", "shared", "shared-db", "cached"}

// String returns the storage's name as ParseStorage reads it.
func (s Storage) String() string {
	if s < 0 || int(s) >= len(storageNames) {
		return fmt.Sprintf("Storage(%d)", int(s))
	}
	return storageNames[s]
}

// MarshalText returns the storage's name.
func (s Storage) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// ParseStorage returns the storage named s: synthetic, local, shared,
// shared-db or cached.
func ParseStorage(s string) (Storage, error) {
	for i, n := range storageNames {
		if s == n {
			return Storage(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown storage %q; want one of %q", ErrConfig, s, storageNames[:])
}

// Link is the bandwidth and latency of one kind of link, per direction.
type Link struct {
	Bandwidth units.BytesPerSec // bytes/s; 0 means absent
	Latency   units.Seconds     // per message, seconds; default 0
}

// Config is one configuration to simulate, in plain numbers: how many
// devices, how the work is split, what a device computes in how long, the
// links between devices, and the input pipeline. Zero values take the
// defaults given with each field. The helpers Roofline, UpdateTime and
// ModelMemory map a model onto a device; package scenarios fills a Config
// from a scenario.
type Config struct {
	// Name labels the configuration in errors; default "".
	Name string

	// Nodes is the number of nodes. Required, at least 1.
	Nodes int
	// DevicesPerNode is the number of devices used in each node. Required,
	// at least 1.
	DevicesPerNode int
	// Placement is the number of devices used on each node, for
	// placements with different numbers per node (1, 2, 3, 4): node i
	// holds the next Placement[i] devices in rank order, each entry in
	// [1, MaxRanks]. It overrides Nodes and DevicesPerNode: validation
	// sets Nodes to its length and DevicesPerNode to its largest entry,
	// and drops it when all entries are equal. Default nil: Nodes nodes of
	// DevicesPerNode.
	Placement []int
	// Stages is the number of pipeline stages one replica spans, on
	// consecutive devices; it must divide Nodes·DevicesPerNode. Default 1.
	Stages int
	// MicroBatch is the samples one replica processes per micro-batch.
	// Required, at least 1.
	MicroBatch int
	// Accumulation is the number of micro-batches per optimizer step.
	// Default 1.
	Accumulation int
	// Schedule is the pipeline schedule; default OneFOneB.
	Schedule Schedule
	// Recompute recomputes activations in the backward pass: backward
	// costs an extra forward and stores fewer activations. Default false.
	Recompute bool

	Compute Compute
	Memory  Memory
	Comm    Comm
	Network Network
	Input   Input

	// Jitter is the coefficient of variation of a device's compute time
	// per step, ≥ 0. Default 0.
	Jitter float64
	// Seed seeds the jitter draws. Default 0 (a valid seed).
	Seed uint64
	// Steps is the number of optimizer steps simulated, in [1, MaxSteps];
	// the first fills the prefetch queue and the rest give the steady
	// state. Default DefaultSteps.
	Steps int
	// TraceSteps is the number of steps, counted back from the last, that
	// Result.Trace records; 0 records none. Default 0.
	TraceSteps int
}

// Compute is the time a device takes to compute. A device holding the
// whole model runs a micro-batch of b samples, forward and backward, in
//
//	b·PerSample + Fixed
//
// and applies the optimizer once per step in Update. A pipeline stage
// takes 1/Stages of each (equal stages).
type Compute struct {
	// PerSample is 1/v0, seconds per sample at infinite batch. Required,
	// > 0.
	PerSample units.Seconds
	// Fixed is the time of a micro-batch that does not grow with its size
	// (kernel launches, framework overhead), seconds. Default 0.
	Fixed units.Seconds
	// Update is the optimizer update per step, seconds. Default 0.
	Update units.Seconds
	// ForwardFraction is the forward pass's share of b·PerSample + Fixed,
	// in (0, 1). Default DefaultForwardFraction.
	ForwardFraction float64
}

// Memory is what a device must hold, for the whole model; a pipeline
// stage holds 1/Stages of the weights, gradients, optimizer state, master
// copy and per-sample activations. ModelMemory fills it from a model.
type Memory struct {
	// Capacity is each device's memory, bytes; 0 means not checked.
	Capacity units.Bytes
	// Model and Device name the model and device in the out-of-memory
	// error; default "".
	Model, Device string

	Weights     units.Bytes // weights in the compute precision, bytes
	Gradients   units.Bytes // gradients, bytes
	Optimizer   units.Bytes // optimizer state, bytes
	Master      units.Bytes // master copy of the weights under mixed precision, bytes; default 0
	Activations units.Bytes // stored activations per sample, bytes
	// Transient is the bytes per sample the backward pass allocates
	// beyond the stored activations at its peak, on the stage holding the
	// loss, for the micro-batch being run (model.Activations.Transient).
	// Default 0.
	Transient units.Bytes
	// Layers is the number of layers activations are stored for, which
	// sets what recomputation saves (see Footprint). Default 1.
	Layers int
}

// Comm is the gradient exchange and the traffic between pipeline stages.
type Comm struct {
	// Algorithm is the gradient exchange; default Ring.
	Algorithm Algorithm
	// InterNode is Hierarchical's algorithm between nodes: Ring,
	// HalvingDoubling, Tree or DoubleTree. Default Ring.
	InterNode Algorithm
	// Servers is the number of parameter-server shards (ParameterServer,
	// AsyncParameterServer), each on its own host. Default 0.
	Servers int
	// TorusX is Torus2D's first dimension; default as netsim's.
	TorusX int
	// Layers is the gradient bytes of each layer in backward order (last
	// layer first); default one layer of Memory.Gradients.
	Layers []units.Bytes
	// Bucket is the gradient bucket size: a bucket's all-reduce may start
	// once the backward pass has produced it. Default DefaultBucket.
	Bucket units.Bytes
	// NoOverlap exchanges the whole gradient in one collective after the
	// backward pass, as frameworks that reduce through the host do.
	// Default false.
	NoOverlap bool
	// Boundary is the bytes per sample sent between adjacent pipeline
	// stages: activations forward, their gradients backward. Default 0.
	Boundary units.Bytes
	// NCCLAlgo and NCCLProto fix NCCL's algorithm (ring, tree, nvls,
	// collnet, nvlstree) and protocol (ll, ll128, simple) for the NCCL exchange, as
	// NCCL_ALGO and NCCL_PROTO do. Default "": NCCL's tuning model
	// chooses per call.
	NCCLAlgo, NCCLProto string
	// Interference is the share s of a device's compute rate that its
	// gradient exchange takes while a bucket's collective is in flight:
	// the backward pass then progresses at 1 − s of its rate (NCCL's
	// kernels occupy SMs and memory bandwidth; see docs/simulator.md).
	// In [0, 1); default 0, no interference.
	Interference float64
}

// Network is the cluster's links; see netsim for the topology they form.
type Network struct {
	// Intra is each device's port into the node's peer-to-peer fabric, as
	// the intra-node transport sees it: bandwidth after the transport's
	// efficiency, latency with its per-message overhead. Required with
	// more than one device per node, unless NoPeerToPeer.
	Intra Link
	// NoPeerToPeer stages every transfer between devices through host
	// memory. Default false.
	NoPeerToPeer bool
	// PCIe is each device's link to host memory. Required with
	// NoPeerToPeer or HostStaged.
	PCIe Link
	// HostMemory is each node's host-memory bandwidth for staged copies
	// and host reductions, bytes/s. Required with NoPeerToPeer or
	// HostStaged.
	HostMemory units.BytesPerSec
	// SHM is, with NoPeerToPeer, the most each device moves per direction
	// to and from another device of its node through host memory (NCCL's
	// shared-memory transport, netsim.Config.SHM), bytes/s; copies for
	// the NICs and host-staged exchanges keep PCIe's rate. Default 0: no
	// limit but PCIe.
	SHM units.BytesPerSec
	// SHMSocketDevices is, with SHM, how many devices of a node sit on
	// one CPU socket, in rank order; a shared-memory transfer between
	// sockets moves at SHMCrossSocket of SHM, shared by the node's
	// transfers from one socket to another (netsim.Config.SHMSocketDevices).
	// Default 0: one socket.
	SHMSocketDevices int
	// SHMCrossSocket is that share, in (0, 1]; required with
	// SHMSocketDevices.
	SHMCrossSocket float64
	// NICs is the number of NICs per node that carry gradient traffic, at
	// most DevicesPerNode. Default 1.
	NICs int
	// NIC is each NIC's line rate and latency. Required with more than one
	// node or with servers.
	NIC Link
	// FabricLatency is the switch latency between nodes; default 0.
	FabricLatency units.Seconds
	// Oversubscription is the fabric's, ≥ 1; default 1.
	Oversubscription float64
	// Rails makes the fabric rail-optimised: NIC j of every node on rail
	// j's leaf, traffic between different rails through a spine
	// oversubscribed by Oversubscription (netsim.Config.Rails). Default
	// false: one core.
	Rails bool
	// Efficiency is the inter-node transport's fraction of the NIC line
	// rate, in (0, 1]; default 1.
	Efficiency float64
	// Overhead is the inter-node transport's per-message overhead;
	// default 0.
	Overhead units.Seconds
	// DevicesPerSwitch, SwitchUplink, Sockets and InterSocket are each
	// node's PCIe tree (netsim.Config has their model): devices behind
	// switches of DevicesPerSwitch, one uplink per switch to its socket,
	// the sockets joined by InterSocket. Default 0: no tree.
	DevicesPerSwitch int
	SwitchUplink     Link // per switch and direction; required with DevicesPerSwitch
	Sockets          int  // CPU sockets per node, 1 to 8; default 1
	InterSocket      Link // between two sockets, per direction; required with Sockets > 1 and a tree
	// NICsPerSwitch puts each node's NICs behind its PCIe switches
	// (netsim.Config.NICsPerSwitch); default 0, on the root complex.
	NICsPerSwitch int
	// IntraBypassesTree says the devices of a node talk over Intra (an
	// NVLink fabric) whatever their switches, the tree carrying only
	// their NIC traffic (netsim.Config.IntraBypassesTree); default false.
	IntraBypassesTree bool
	// PerFlow is the most one stream of the inter-node transport moves
	// (one TCP connection, one cloud flow), bytes/s, not scaled by
	// Efficiency; default 0, no limit.
	PerFlow units.BytesPerSec
	// Streams is the number of streams a device stripes each transfer to
	// another node over, in [1, 64]; a transfer moves at most
	// Streams·PerFlow. Default 1.
	Streams int
	// NetProtocols are the NCCL protocols (ll, ll128, simple) the
	// inter-node transport lets the NCCL exchange run on calls across
	// nodes when Comm.NCCLProto fixes none (netsim.NCCLConfig). Default
	// nil: NCCL's defaults.
	NetProtocols []string
	// NCCLChannels is the number of channels NCCL opens between the
	// devices of a node (the device's nccl_channels on NVLink), 0 to 64:
	// on one node the NCCL exchange runs a call on as many as its size
	// fills (netsim.NCCLConfig.Channels). Default 0: unknown, all.
	NCCLChannels int
	// NCCLBuffSize is NCCL_BUFFSIZE as the inter-node transport's net
	// plugin sets it, at most 1 GiB: a tree call with Simple moves chunks
	// of an eighth of it (netsim.NCCLConfig.BuffSize). Default 0: NCCL's
	// 4 MiB.
	NCCLBuffSize units.Bytes
	// NCCLArch is the GPUs' row of NCCL's per-architecture tuning tables:
	// volta, ampere, hopper or blackwell (netsim.NCCLConfig.Arch). Default
	// "": none of their caps.
	NCCLArch string
	// ServerNIC is each parameter server's NIC line rate; default NIC.
	ServerNIC units.BytesPerSec
	// IntraPCI says the devices of a node talk over PCIe, NCCL's PCI link
	// class (its hop latencies; no LL128 by default); default false,
	// NVLink. Used by the NCCL exchange.
	IntraPCI bool
	// NVLS says the node's NVSwitch reduces in the network (NVLink SHARP),
	// CollNet that the fabric between nodes does (InfiniBand SHARP); the
	// NCCL exchange may then choose them. Default false; scenarios sets
	// NVLS from the node's link.in_network_reduction (hw.Link).
	NVLS, CollNet bool
	// NCCLHopLatency is the latency of one NCCL ring hop inside a node
	// with the LL protocol, as a fabric calibration fits it; NCCL's other
	// hop latencies inside a node (every algorithm and protocol of
	// tuning.cc's hwLatencies for the node's link class) scale with it.
	// Default 0: tuning.cc's own (0.6 us on NVLink, 1 us on PCIe).
	NCCLHopLatency units.Seconds
}

// Input is the input pipeline: each node's loader reads, decodes and
// copies one micro-batch for each of its devices that consume input (the
// first stage of each replica), up to Prefetch micro-batches ahead.
type Input struct {
	// Storage is where samples come from; default Synthetic.
	Storage Storage
	// SampleBytes is the stored size of one sample, bytes. Required unless
	// Synthetic.
	SampleBytes units.Bytes
	// Samples is the size of an epoch in samples, for epoch accounting;
	// default 0 (unbounded).
	Samples int64
	// Local is a node's local read bandwidth, bytes/s. Required for Local.
	Local units.BytesPerSec
	// Shared is the shared file server. Required for Shared and SharedDB.
	Shared SharedStorage
	// DB is the shared database file's serialized read service. Used by
	// SharedDB.
	DB DB
	// Decode is the CPU time to decode and augment one sample, in seconds
	// of one of this node's cores; default 0.
	Decode units.Seconds
	// Cores is the number of CPU cores per node that decode. Required when
	// Decode > 0.
	Cores int
	// Workers is the number of decoding processes a node runs, all of its
	// devices' together (PyTorch's DataLoader runs num_workers per device):
	// a sample decodes on one process (DecodeParallelism). Default 0: one
	// on each of the Cores.
	Workers int
	// Threads is the node's hardware threads that decoding processes may
	// run on, at least Cores (two per core with SMT); default Cores.
	Threads int
	// SMTYield is the extra throughput of a core that runs a second
	// decoding process on its second hardware thread, a fraction of one
	// process alone, in [0, 1]; default 0.
	SMTYield float64
	// Copy is the bytes per sample copied from host to device; default 0.
	Copy units.Bytes
	// HostToDevice is each device's host-to-device bandwidth, bytes/s.
	// Required when Copy > 0.
	HostToDevice units.BytesPerSec
	// Prefetch is how many micro-batches the loader may run ahead, ≥ 1.
	// Default DefaultPrefetch.
	Prefetch int
	// Staging copies the data set onto every node's drives before
	// training; default none.
	Staging Staging
	// CacheHit is the fraction of Local reads that the node's page cache
	// serves in the steady state, in [0, 1]: those samples cost no drive
	// read (decoding and copying still apply). Default 0: every read goes
	// to the drives. The first epoch reads everything from the drives;
	// Result.CacheWarmup is its extra time.
	CacheHit float64
}

// DecodeParallelism returns how many cores' worth of decoding a node's
// host does at once: its P = Workers processes (Cores when 0) run on
// b = min(P, max(Threads, Cores)) hardware threads, one per core first,
// and a core's second thread adds SMTYield of a core,
//
//	E = min(b, Cores) + SMTYield · max(0, b − Cores)
//
// so that a node decodes E samples per Decode seconds. It is 0 for a node
// without cores.
func (in *Input) DecodeParallelism() float64 {
	C := max(in.Cores, 0)
	p := in.Workers
	if p <= 0 {
		p = C
	}
	b := min(p, max(in.Threads, C))
	return float64(min(b, C)) + float64(in.SMTYield*float64(max(0, b-C))) // no fused multiply-add: the same bytes on every platform
}

// SharedStorage is a file server all nodes read from.
type SharedStorage struct {
	Aggregate units.BytesPerSec // all clients together, bytes/s
	PerClient units.BytesPerSec // one node, bytes/s
	Latency   units.Seconds     // per request (one per micro-batch read), seconds; default 0
}

// DB is the service model of one database file on the shared file server,
// whose reads serialize: the file's lock is held for
//
//	n·(Service + PerReader·(readers − 1))
//
// to read n samples, plus the transfer of their bytes, where readers is
// the number of nodes reading.
type DB struct {
	Service   units.Seconds // per sample, seconds
	PerReader units.Seconds // per sample and further reading node, seconds
}

// Staging is the one-time copy of the data set from the shared file
// server onto every node's drives before training.
type Staging struct {
	// Bytes is the data set's size; 0 means no staging.
	Bytes units.Bytes
	// Write is a node's local write bandwidth, bytes/s. Required when
	// Bytes > 0, with Input.Shared.
	Write units.BytesPerSec
	// NIC is a node's network bandwidth for the copy (all its ports at
	// line rate); default unlimited.
	NIC units.BytesPerSec
}

// Ranks returns the number of devices: Nodes·DevicesPerNode, or the sum
// of Placement when it is set.
func (c *Config) Ranks() int {
	if len(c.Placement) > 0 {
		n := 0
		for _, k := range c.Placement {
			n += k
		}
		return n
	}
	return c.Nodes * c.DevicesPerNode
}

// NodeDevices returns the first device of a node and the number of
// devices on it, of a validated configuration.
func (c *Config) NodeDevices(node int) (first, k int) {
	if len(c.Placement) == 0 {
		return node * c.DevicesPerNode, c.DevicesPerNode
	}
	for _, n := range c.Placement[:node] {
		first += n
	}
	return first, c.Placement[node]
}

// nodeOf returns the node of every device of a validated configuration.
func (c *Config) nodeOf() []int {
	out := make([]int, 0, c.Ranks())
	for a := range c.Nodes {
		_, k := c.NodeDevices(a)
		for range k {
			out = append(out, a)
		}
	}
	return out
}

// validatePlacement checks Placement and sets Nodes and DevicesPerNode
// from it; equal entries become Nodes × DevicesPerNode.
func (c *Config) validatePlacement(bad func(string, ...any)) {
	if len(c.Placement) > MaxRanks {
		bad("placement lists %d nodes; at most %d", len(c.Placement), MaxRanks)
		return
	}
	sum, most := 0, 0
	for i, k := range c.Placement {
		if k < 1 || k > MaxRanks {
			bad("placement[%d] %d devices is not in [1, %d]", i, k, MaxRanks)
			return
		}
		sum, most = sum+k, max(most, k)
	}
	if sum > MaxRanks {
		bad("placement %v holds %d devices; at most %d", c.Placement, sum, MaxRanks)
		return
	}
	c.Nodes, c.DevicesPerNode = len(c.Placement), most
	if slices.Min(c.Placement) == most {
		c.Placement = nil
		return
	}
	c.Placement = slices.Clone(c.Placement)
}

// Replicas returns the number of data-parallel replicas, Ranks/Stages.
func (c *Config) Replicas() int { return c.Ranks() / max(c.Stages, 1) }

// GlobalBatch returns the samples per optimizer step:
//
//	MicroBatch · Replicas · Accumulation
func (c *Config) GlobalBatch() int { return c.MicroBatch * c.Replicas() * max(c.Accumulation, 1) }

func finite(x float64) bool           { return !math.IsNaN(x) && !math.IsInf(x, 0) }
func nonNegative(x float64) bool      { return x >= 0 && finite(x) }
func positive(x float64) bool         { return x > 0 && finite(x) }
func nonNegativeB(x units.Bytes) bool { return nonNegative(float64(x)) }

// validate fills the defaults of c and returns every problem found,
// wrapped in ErrConfig.
func (c *Config) validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}
	if len(c.Placement) > 0 {
		c.validatePlacement(bad)
	}
	if c.Nodes < 1 || c.Nodes > MaxRanks {
		bad("nodes %d is not in [1, %d]", c.Nodes, MaxRanks)
	}
	if c.DevicesPerNode < 1 || c.DevicesPerNode > MaxRanks {
		bad("devices per node %d is not in [1, %d]", c.DevicesPerNode, MaxRanks)
	}
	ranksOK := len(errs) == 0 && (len(c.Placement) > 0 || c.Nodes <= MaxRanks/c.DevicesPerNode)
	if len(errs) == 0 && !ranksOK {
		bad("%d nodes of %d devices exceed %d devices", c.Nodes, c.DevicesPerNode, MaxRanks)
	}
	if c.Stages == 0 {
		c.Stages = 1
	}
	if c.Stages < 1 || (ranksOK && c.Stages > c.Ranks()) {
		bad("stages %d is not in [1, devices]", c.Stages)
	} else if ranksOK && c.Ranks()%c.Stages != 0 {
		bad("%d devices do not divide into %d pipeline stages", c.Ranks(), c.Stages)
	}
	if c.MicroBatch < 1 || c.MicroBatch > MaxBatch {
		bad("micro-batch %d is not in [1, %d]", c.MicroBatch, MaxBatch)
	}
	if c.Accumulation == 0 {
		c.Accumulation = 1
	}
	if c.Accumulation < 1 || c.Accumulation > MaxAccumulation {
		bad("accumulation %d is not in [1, %d]", c.Accumulation, MaxAccumulation)
	}
	if c.Schedule != OneFOneB && c.Schedule != GPipe {
		bad("unknown schedule %d", int(c.Schedule))
	}
	if c.Steps == 0 {
		c.Steps = DefaultSteps
	}
	if c.Steps < 1 || c.Steps > MaxSteps {
		bad("steps %d is not in [1, %d]", c.Steps, MaxSteps)
	}
	if c.TraceSteps < 0 {
		bad("trace steps %d is negative", c.TraceSteps)
	}
	if ranksOK && c.Steps >= 1 && c.Accumulation >= 1 && float64(c.Ranks())*float64(c.Steps)*float64(c.Accumulation) > MaxWork {
		bad("%d devices × %d steps × %d micro-batches is more than %d tasks to simulate; use fewer steps", c.Ranks(), c.Steps, c.Accumulation, MaxWork)
	}
	if !nonNegative(c.Jitter) || c.Jitter > MaxJitter {
		bad("jitter %v is not in [0, %g]", c.Jitter, MaxJitter)
	}

	cp := &c.Compute
	if !positive(float64(cp.PerSample)) {
		bad("time per sample %v is not a positive finite number", float64(cp.PerSample))
	}
	if !nonNegative(float64(cp.Fixed)) || !nonNegative(float64(cp.Update)) {
		bad("fixed time %v and update time %v must be non-negative finite numbers", float64(cp.Fixed), float64(cp.Update))
	}
	if cp.ForwardFraction == 0 {
		cp.ForwardFraction = DefaultForwardFraction
	}
	if !(cp.ForwardFraction > 0 && cp.ForwardFraction < 1) {
		bad("forward fraction %v is not in (0, 1)", cp.ForwardFraction)
	}

	m := &c.Memory
	for _, x := range []struct {
		name string
		v    units.Bytes
	}{{"memory capacity", m.Capacity}, {"weights", m.Weights}, {"gradients", m.Gradients}, {"optimizer state", m.Optimizer},
		{"master weights", m.Master}, {"activations per sample", m.Activations}, {"transient bytes per sample", m.Transient}, {"boundary bytes", c.Comm.Boundary}} {
		if !nonNegativeB(x.v) {
			bad("%s %v is not a non-negative finite number", x.name, float64(x.v))
		}
	}
	if m.Layers == 0 {
		m.Layers = 1
	}
	if m.Layers < 1 {
		bad("layers %d is negative", m.Layers)
	}

	cm := &c.Comm
	if cm.Algorithm < 0 || int(cm.Algorithm) >= len(algorithmNames) {
		bad("unknown algorithm %d", int(cm.Algorithm))
	}
	switch cm.InterNode {
	case Ring, HalvingDoubling, Tree, DoubleTree:
	default:
		bad("inter-node algorithm %v is not ring, halving-doubling, tree or double-tree", cm.InterNode)
	}
	if _, err := netsim.ParseNCCLAlgorithm(cm.NCCLAlgo); err != nil {
		bad("NCCL algorithm %q: want ring, tree, nvls, collnet or nvlstree", cm.NCCLAlgo)
	}
	if _, err := netsim.ParseProtocol(cm.NCCLProto); err != nil {
		bad("NCCL protocol %q: want ll, ll128 or simple", cm.NCCLProto)
	}
	if cm.Bucket == 0 {
		cm.Bucket = DefaultBucket
	}
	if !positive(float64(cm.Bucket)) {
		bad("bucket %v is not a positive finite number", float64(cm.Bucket))
	}
	if !(cm.Interference >= 0 && cm.Interference < 1) {
		bad("interference %v is not in [0, 1)", cm.Interference)
	}
	if len(cm.Layers) > 1<<20 {
		bad("%d gradient layers is more than %d", len(cm.Layers), 1<<20)
	}
	for i, l := range cm.Layers {
		if !nonNegativeB(l) {
			bad("gradient layer %d has %v bytes", i, float64(l))
			break
		}
	}
	if (cm.Algorithm == ParameterServer || cm.Algorithm == AsyncParameterServer) && cm.Servers < 1 {
		bad("%v needs at least one server, got %d", cm.Algorithm, cm.Servers)
	}
	if cm.Algorithm == AsyncParameterServer && c.Stages > 1 {
		bad("async-ps runs data parallelism only, not %d pipeline stages", c.Stages)
	}

	in := &c.Input
	if in.Prefetch == 0 {
		in.Prefetch = DefaultPrefetch
	}
	if in.Prefetch < 1 || in.Prefetch > 1<<16 {
		bad("prefetch %d is not in [1, %d]", in.Prefetch, 1<<16)
	}
	if in.Samples < 0 {
		bad("data set samples %d is negative", in.Samples)
	}
	for _, x := range []struct {
		name string
		v    float64
	}{{"sample bytes", float64(in.SampleBytes)}, {"local read bandwidth", float64(in.Local)}, {"shared aggregate bandwidth", float64(in.Shared.Aggregate)},
		{"shared per-client bandwidth", float64(in.Shared.PerClient)}, {"shared latency", float64(in.Shared.Latency)},
		{"database service time", float64(in.DB.Service)}, {"database time per reader", float64(in.DB.PerReader)},
		{"decode time", float64(in.Decode)}, {"copy bytes", float64(in.Copy)}, {"host-to-device bandwidth", float64(in.HostToDevice)},
		{"staging bytes", float64(in.Staging.Bytes)}, {"staging write bandwidth", float64(in.Staging.Write)}, {"staging NIC bandwidth", float64(in.Staging.NIC)}} {
		if !nonNegative(x.v) {
			bad("%s %v is not a non-negative finite number", x.name, x.v)
		}
	}
	if !(in.CacheHit >= 0 && in.CacheHit <= 1) {
		bad("page cache hit fraction %v is not in [0, 1]", in.CacheHit)
	} else if in.CacheHit > 0 && in.Storage != Local {
		bad("a page cache hit fraction applies to local storage only, not %v", in.Storage)
	}
	switch in.Storage {
	case Synthetic, Cached:
	case Local:
		if in.Local == 0 {
			bad("local storage needs a read bandwidth")
		}
	case Shared, SharedDB:
		if in.Shared.Aggregate == 0 || in.Shared.PerClient == 0 {
			bad("%v storage needs the file server's aggregate and per-client bandwidths", in.Storage)
		}
	default:
		bad("unknown storage %d", int(in.Storage))
	}
	if in.Storage != Synthetic {
		if in.Decode > 0 && in.Cores < 1 {
			bad("decoding needs at least one core, got %d", in.Cores)
		}
		if in.Workers < 0 || in.Workers > 1<<20 {
			bad("decoding workers %d is not in [0, %d]", in.Workers, 1<<20)
		}
		if in.Threads < 0 || in.Threads > 1<<20 || in.Threads > 0 && in.Threads < in.Cores {
			bad("hardware threads %d are not 0 (the cores) or %d cores to %d", in.Threads, in.Cores, 1<<20)
		}
		if !(in.SMTYield >= 0 && in.SMTYield <= 1) {
			bad("SMT yield %v is not in [0, 1]", in.SMTYield)
		}
		if in.Copy > 0 && in.HostToDevice == 0 {
			bad("copying %v per sample needs a host-to-device bandwidth", in.Copy)
		}
	}
	if in.Staging.Bytes > 0 && (in.Staging.Write == 0 || in.Shared.Aggregate == 0 || in.Shared.PerClient == 0) {
		bad("staging needs the file server's bandwidths and a local write bandwidth")
	}

	n := &c.Network
	for _, x := range []struct {
		name string
		v    float64
	}{{"intra-node bandwidth", float64(n.Intra.Bandwidth)}, {"intra-node latency", float64(n.Intra.Latency)},
		{"PCIe bandwidth", float64(n.PCIe.Bandwidth)}, {"PCIe latency", float64(n.PCIe.Latency)}, {"host memory bandwidth", float64(n.HostMemory)}, {"shared-memory bandwidth", float64(n.SHM)},
		{"NIC bandwidth", float64(n.NIC.Bandwidth)}, {"NIC latency", float64(n.NIC.Latency)}, {"fabric latency", float64(n.FabricLatency)},
		{"transport overhead", float64(n.Overhead)}, {"server NIC bandwidth", float64(n.ServerNIC)}, {"per-flow rate", float64(n.PerFlow)}} {
		if !nonNegative(x.v) {
			bad("%s %v is not a non-negative finite number", x.name, x.v)
		}
	}
	if n.NICs == 0 {
		n.NICs = 1
	}
	if n.NICs < 0 || (c.DevicesPerNode >= 1 && n.NICs > c.DevicesPerNode) {
		bad("NICs per node %d is not in [1, devices per node %d]; give one NIC their combined bandwidth instead", n.NICs, c.DevicesPerNode)
	}
	if n.Oversubscription == 0 {
		n.Oversubscription = 1
	}
	if !(n.Oversubscription >= 1) || !finite(n.Oversubscription) {
		bad("oversubscription %v is not a finite number of at least 1", n.Oversubscription)
	}
	if n.Efficiency == 0 {
		n.Efficiency = 1
	}
	if !(n.Efficiency >= 1e-6 && n.Efficiency <= 1) {
		bad("transport efficiency %v is not in [1e-6, 1]", n.Efficiency)
	}
	if n.Streams == 0 {
		n.Streams = 1
	}
	if n.Streams < 1 || n.Streams > netsim.MaxStreams {
		bad("streams %d is not in [1, %d]", n.Streams, netsim.MaxStreams)
	}
	if _, err := netsim.ParseArch(n.NCCLArch); err != nil {
		bad("NCCL architecture %q: want volta, ampere, hopper, blackwell or \"\"", n.NCCLArch)
	}
	if n.NCCLChannels < 0 || n.NCCLChannels > 64 {
		bad("NCCL channels %d is not in [0, 64]", n.NCCLChannels)
	}
	if !(n.NCCLBuffSize >= 0 && n.NCCLBuffSize <= netsim.MaxBuffSize) {
		bad("NCCL buffer size %v is not in [0, %v]", float64(n.NCCLBuffSize), netsim.MaxBuffSize)
	}
	for i, s := range n.NetProtocols {
		if p, err := netsim.ParseProtocol(s); err != nil || p == netsim.ProtoAuto {
			bad("NCCL net protocol %d %q: want ll, ll128 or simple", i, s)
		}
	}
	if n.Oversubscription > 1e6 {
		bad("oversubscription %v is more than 1e6", n.Oversubscription)
	}
	if n.SHMSocketDevices < 0 || n.SHMSocketDevices > netsim.MaxRanks {
		bad("devices a socket %d is not in [0, %d]", n.SHMSocketDevices, netsim.MaxRanks)
	}
	if n.SHMSocketDevices > 0 && !(n.SHMCrossSocket > 0 && n.SHMCrossSocket <= 1) {
		bad("shared-memory share between sockets %v is not in (0, 1]", n.SHMCrossSocket)
	}
	if !(n.NCCLHopLatency >= 0) || !finite(float64(n.NCCLHopLatency)) {
		bad("NCCL hop latency %v is not a finite time >= 0", float64(n.NCCLHopLatency))
	}
	c.checkRanges(bad)
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if nb := len(c.stageBuckets()); float64(nb)*float64(c.Steps)*float64(c.Stages) > MaxCollectives {
		bad("%d gradient buckets × %d steps × %d stages is more than %d collectives to simulate; use a larger bucket", nb, c.Steps, c.Stages, MaxCollectives)
	}
	if c.DevicesPerNode > 1 && !n.NoPeerToPeer && n.Intra.Bandwidth == 0 {
		bad("%d devices per node with peer-to-peer access need an intra-node bandwidth", c.DevicesPerNode)
	}
	if (n.NoPeerToPeer || cm.Algorithm == HostStaged) && (n.PCIe.Bandwidth == 0 || n.HostMemory == 0) {
		bad("staging through host memory needs PCIe and host memory bandwidths")
	}
	servers := cm.Algorithm == ParameterServer || cm.Algorithm == AsyncParameterServer
	if (c.Nodes > 1 || servers) && n.NIC.Bandwidth == 0 {
		bad("%d nodes need a NIC bandwidth", c.Nodes)
	}
	return errors.Join(errs...)
}

// checkRanges reports sizes over MaxBytes, times over MaxTime and
// non-zero bandwidths under MinRate.
func (c *Config) checkRanges(bad func(string, ...any)) {
	in, n, m := &c.Input, &c.Network, &c.Memory
	for _, x := range []struct {
		name string
		v    units.Seconds
	}{{"time per sample", c.Compute.PerSample}, {"fixed time", c.Compute.Fixed}, {"update time", c.Compute.Update},
		{"shared latency", in.Shared.Latency}, {"database service time", in.DB.Service}, {"database time per reader", in.DB.PerReader},
		{"decode time", in.Decode}, {"intra-node latency", n.Intra.Latency}, {"PCIe latency", n.PCIe.Latency}, {"NIC latency", n.NIC.Latency},
		{"fabric latency", n.FabricLatency}, {"transport overhead", n.Overhead}} {
		if x.v > MaxTime {
			bad("%s %v is more than %v", x.name, float64(x.v), float64(MaxTime))
		}
	}
	sizes := []struct {
		name string
		v    units.Bytes
	}{{"memory capacity", m.Capacity}, {"weights", m.Weights}, {"gradients", m.Gradients}, {"optimizer state", m.Optimizer},
		{"master weights", m.Master}, {"activations per sample", m.Activations}, {"transient bytes per sample", m.Transient}, {"boundary bytes", c.Comm.Boundary}, {"bucket", c.Comm.Bucket},
		{"sample bytes", in.SampleBytes}, {"copy bytes", in.Copy}, {"staging bytes", in.Staging.Bytes}}
	for _, l := range c.Comm.Layers {
		sizes = append(sizes, struct {
			name string
			v    units.Bytes
		}{"gradient layer", l})
	}
	for _, x := range sizes {
		if x.v > MaxBytes {
			bad("%s %v is more than %v bytes", x.name, float64(x.v), float64(MaxBytes))
			break
		}
	}
	for _, x := range []struct {
		name string
		v    units.BytesPerSec
	}{{"intra-node bandwidth", n.Intra.Bandwidth}, {"PCIe bandwidth", n.PCIe.Bandwidth}, {"host memory bandwidth", n.HostMemory}, {"shared-memory bandwidth", n.SHM},
		{"NIC bandwidth", n.NIC.Bandwidth}, {"server NIC bandwidth", n.ServerNIC}, {"per-flow rate", n.PerFlow}, {"local read bandwidth", in.Local},
		{"shared aggregate bandwidth", in.Shared.Aggregate}, {"shared per-client bandwidth", in.Shared.PerClient},
		{"host-to-device bandwidth", in.HostToDevice}, {"staging write bandwidth", in.Staging.Write}, {"staging NIC bandwidth", in.Staging.NIC}} {
		if x.v != 0 && x.v < MinRate {
			bad("%s %v is below %v bytes/s", x.name, float64(x.v), float64(MinRate))
		}
	}
}

// topology returns the netsim configuration of c.
func (c *Config) topology() netsim.Config {
	n := c.Network
	servers := 0
	if c.Comm.Algorithm == ParameterServer || c.Comm.Algorithm == AsyncParameterServer {
		servers = c.Comm.Servers
	}
	per := c.DevicesPerNode
	if len(c.Placement) > 0 {
		per = 0
	}
	return netsim.Config{
		Ranks: c.Ranks(), RanksPerNode: per, NodeRanks: c.Placement,
		Intra:        netsim.LinkSpec{Bandwidth: n.Intra.Bandwidth, Latency: n.Intra.Latency},
		NoPeerToPeer: n.NoPeerToPeer,
		PCIe:         netsim.LinkSpec{Bandwidth: n.PCIe.Bandwidth, Latency: n.PCIe.Latency},
		HostMemory:   n.HostMemory,
		SHM:          n.SHM, SHMSocketDevices: n.SHMSocketDevices, SHMCrossSocket: n.SHMCrossSocket,
		NICsPerNode:   n.NICs,
		NIC:           netsim.LinkSpec{Bandwidth: n.NIC.Bandwidth, Latency: n.NIC.Latency},
		FabricLatency: n.FabricLatency, Oversubscription: n.Oversubscription, Rails: n.Rails,
		Efficiency: n.Efficiency, Overhead: n.Overhead, PerFlow: n.PerFlow, Streams: n.Streams,
		DevicesPerSwitch: n.DevicesPerSwitch, Sockets: n.Sockets,
		NICsPerSwitch: n.NICsPerSwitch, IntraBypassesTree: n.IntraBypassesTree,
		SwitchUplink: netsim.LinkSpec{Bandwidth: n.SwitchUplink.Bandwidth, Latency: n.SwitchUplink.Latency},
		InterSocket:  netsim.LinkSpec{Bandwidth: n.InterSocket.Bandwidth, Latency: n.InterSocket.Latency},
		Servers:      servers, ServerNIC: n.ServerNIC,
		InterNode: c.Comm.InterNode.netsim(), TorusX: c.Comm.TorusX,
		NCCL: c.ncclConfig(),
	}
}

// NCCLHop returns the latency of NCCL's LL ring hop inside a node that
// the NCCL exchange takes on n: NCCLHopLatency, or by default NCCL's
// tuning model's (0.6 us on NVLink, 1 us on PCIe or without peer-to-peer).
func (n Network) NCCLHop() units.Seconds {
	if n.NCCLHopLatency > 0 {
		return n.NCCLHopLatency
	}
	return netsim.NCCLHopLatency(n.IntraPCI || n.NoPeerToPeer)
}

// ncclConfig is the NCCL exchange's view of the fabric and its overrides;
// validate has checked the names.
func (c *Config) ncclConfig() netsim.NCCLConfig {
	a, _ := netsim.ParseNCCLAlgorithm(c.Comm.NCCLAlgo)
	p, _ := netsim.ParseProtocol(c.Comm.NCCLProto)
	n := c.Network
	var net []netsim.Protocol
	for _, s := range n.NetProtocols {
		q, _ := netsim.ParseProtocol(s)
		net = append(net, q)
	}
	arch, _ := netsim.ParseArch(n.NCCLArch)
	return netsim.NCCLConfig{IntraPCI: n.IntraPCI, NVLS: n.NVLS, CollNet: n.CollNet, Algorithm: a, Protocol: p, NetProtocols: net, Channels: n.NCCLChannels, HopLatency: n.NCCLHopLatency, BuffSize: n.NCCLBuffSize, Arch: arch}
}
