package netsim

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"scaleplan/internal/units"
	"scaleplan/sim/internal/event"
)

// ErrConfig is wrapped by every error NewTopology returns.
var ErrConfig = errors.New("bad topology")

// DefaultTreeChunk is the pipeline chunk of the tree algorithms when
// Config.TreeChunk is 0.
const DefaultTreeChunk = 512 * units.KiB

// MaxRanks bounds Config.Ranks and Config.Servers, so that no input can
// build a topology too large for memory.
const MaxRanks = 1 << 17

// MaxStreams bounds Config.Streams: NCCL's socket transport opens at most
// 64 sockets per connection (MAX_SOCKETS in NVIDIA/nccl
// src/transport/net_socket.cc).
const MaxStreams = 64

// MaxSockets bounds Config.Sockets.
const MaxSockets = 8

// MaxChunks bounds the number of pipeline chunks a tree algorithm splits a
// message into.
const MaxChunks = 1 << 16

// LinkSpec is the bandwidth and latency of one kind of link.
type LinkSpec struct {
	Bandwidth units.BytesPerSec // per direction, bytes/s; 0 means absent
	Latency   units.Seconds     // paid by every message that crosses the link; default 0
}

// Config describes a cluster in plain numbers: p devices ("ranks") on
// nodes of RanksPerNode devices, a peer-to-peer fabric inside each node,
// PCIe links to host memory, and NICs into a fabric shared by all nodes.
// Zero values take the defaults given with each field.
type Config struct {
	// Ranks is the number of devices p. Required, at least 1.
	Ranks int
	// RanksPerNode is the number of devices per node; Ranks must be a
	// multiple of it. Default 1, or 0 with NodeRanks.
	RanksPerNode int
	// NodeRanks is the number of ranks on each node, for placements with
	// different numbers of devices per node: node 0 holds ranks 0 to
	// NodeRanks[0]−1, node 1 the next NodeRanks[1], and so on. Each is at
	// least 1 and they sum to Ranks. Exclusive with RanksPerNode. When
	// all are equal, validation turns them into RanksPerNode. Default nil.
	NodeRanks []int

	// Intra is each device's port into the node's peer-to-peer fabric
	// (NVLink, NVSwitch), per direction: any two devices of a node talk at
	// this bandwidth, and a device's sends share its port. Latency is the
	// per-message latency of an intra-node transfer. Required when
	// RanksPerNode > 1 and devices have peer-to-peer access.
	Intra LinkSpec
	// NoPeerToPeer marks devices that cannot address each other's memory:
	// every transfer between two devices is staged through host memory
	// (device → PCIe → host memory → ...). Default false: peer-to-peer,
	// and GPUDirect RDMA between a device and its NIC.
	NoPeerToPeer bool
	// PCIe is each device's link to host memory, per direction; Latency is
	// paid by each copy between device and host. Required with
	// NoPeerToPeer and for HostStaged; otherwise optional.
	PCIe LinkSpec
	// HostMemory is each node's host memory bandwidth in bytes/s, shared
	// by all copies into and out of host memory and by CPU reductions.
	// Required with NoPeerToPeer and for HostStaged.
	HostMemory units.BytesPerSec
	// SHM is, with NoPeerToPeer, the most a device sends and receives per
	// direction to and from another device of its node through host
	// memory, bytes/s: NCCL's shared-memory transport, whose sender writes
	// into host memory and whose receiver reads it (a link shm-out and
	// shm-in per device, on those routes only; copies to and from host
	// memory for the NICs and for HostStaged keep the PCIe links' rate).
	// Default 0: no limit but the PCIe links.
	SHM units.BytesPerSec
	// SHMSocketDevices is, with SHM, how many devices of a node sit on
	// one CPU socket: a node's devices, in rank order, fill its sockets
	// in turn, and a shared-memory transfer between devices of different
	// sockets also crosses its source socket's way out (shm-cross-out)
	// and its destination's way in (shm-cross-in), each of
	// SHMCrossSocket·SHM, shared by the node's transfers leaving or
	// entering that socket. Default 0: every device on one socket.
	SHMSocketDevices int
	// SHMCrossSocket is the share of SHM that the shared-memory transport
	// moves between two sockets, in (0, 1]. Required with
	// SHMSocketDevices.
	SHMCrossSocket float64

	// DevicesPerSwitch models each node's PCIe tree: the devices of a node
	// sit, in rank order, behind PCIe switches of DevicesPerSwitch each, and
	// each switch has one uplink to its CPU socket's root complex. As NCCL
	// by default uses peer-to-peer only between devices under a common
	// switch (P2P level PXB: NVIDIA/nccl src/graph/paths.cc, "don't use
	// P2P across CPU Host Bridges"), a transfer between devices under
	// different switches is staged through host memory: up the source
	// switch's uplink, across the inter-socket link when the switches hang
	// off different sockets, and down the other switch's uplink; and so is
	// every transfer to or from a NIC not under the device's switch (see
	// NICsPerSwitch; NCCL's GPUDirect RDMA level is PXB too). Requires
	// peer-to-peer access. Default 0: no tree, today's routes.
	DevicesPerSwitch int
	// NICsPerSwitch puts each node's NICs, in order, behind its switches:
	// NIC i under switch i/NICsPerSwitch. A device reaches a NIC under its
	// own switch directly (GPUDirect RDMA), as without a tree; a NIC under
	// another switch through host memory and that switch's uplink.
	// Default 0: every NIC on the root complex of socket
	// i·Sockets/NICsPerNode. Used with DevicesPerSwitch.
	NICsPerSwitch int
	// IntraBypassesTree says the devices of a node have a peer-to-peer
	// fabric of their own beside the tree (NVLink): transfers between
	// them use their ports (Intra) whatever their switches, and the tree
	// routes only their traffic to and from the NICs. Default false: the
	// devices talk over PCIe. Used with DevicesPerSwitch.
	IntraBypassesTree bool
	// SwitchUplink is each PCIe switch's link to its socket, per
	// direction; its latency is paid on each crossing. Required with
	// DevicesPerSwitch.
	SwitchUplink LinkSpec
	// Sockets is the number of CPU sockets per node, in [1, MaxSockets];
	// switch s of a node's m switches hangs off socket s·Sockets/m, NIC i
	// off socket i·Sockets/NICsPerNode (with NICsPerSwitch, its switch's).
	// Default 1.
	Sockets int
	// InterSocket is the link between two sockets (QPI, UPI, Infinity
	// Fabric), one per ordered pair, per direction. Required with
	// DevicesPerSwitch and Sockets > 1.
	InterSocket LinkSpec

	// NICsPerNode is the number of NICs per node, at most RanksPerNode
	// (with NodeRanks, at most the largest node's ranks). Device j of a
	// node of k devices uses NIC j·NICsPerNode/k. Default 1.
	NICsPerNode int
	// NIC is each NIC's bandwidth per direction (the raw line rate; see
	// Efficiency) and its per-message latency (NIC and wire). Required
	// when there is more than one node or a parameter server.
	NIC LinkSpec
	// FabricLatency is the switch latency a message pays crossing the
	// fabric between nodes. Default 0.
	FabricLatency units.Seconds
	// Rails makes the fabric rail-optimised: NIC j of every node sits on
	// rail j's leaf switch, so traffic between NICs of the same index
	// stays on that leaf (non-blocking, its capacity the rail's NICs
	// together), and traffic between different rails crosses the spine,
	// whose capacity is the sum of the NIC bandwidths divided by
	// Oversubscription. Default false: one core that every message
	// between nodes crosses.
	Rails bool
	// Oversubscription is the fabric's oversubscription ratio, at least 1:
	// the fabric core carries at most the sum of all NIC bandwidths divided
	// by it. Default 1 (non-blocking).
	Oversubscription float64
	// Efficiency is the fraction of the NIC line rate the transport
	// achieves (verbs/RDMA near 1, IPoIB, TCP and gRPC lower), in (0, 1].
	// It scales every NIC and the fabric core. Default 1.
	Efficiency float64
	// Overhead is the per-message software overhead (MPI, NCCL proxy,
	// gRPC) added to the latency of every message between nodes or to a
	// parameter server. Default 0.
	Overhead units.Seconds
	// PerFlow is the most one stream of the inter-node transport moves,
	// bytes/s, however idle the NICs: one TCP connection served by one
	// CPU core, a cloud network's cap on one flow (a 5-tuple). It is a
	// measured rate and is not scaled by Efficiency. Default 0: no limit
	// but the links'.
	PerFlow units.BytesPerSec
	// Streams is the number of such streams a rank opens to each peer on
	// another node and stripes its messages over, in [1, MaxStreams]: NCCL's
	// socket transport opens NCCL_SOCKET_NTHREADS × NCCL_NSOCKS_PERTHREAD
	// sockets per connection. A transfer between nodes then moves at most
	// Streams × PerFlow. Default 1.
	Streams int

	// Servers is the number of parameter-server shards, each on its own
	// host with one NIC on the fabric. Default 0; required by
	// ParameterServer and AsyncParameterServer.
	Servers int
	// ServerNIC is each server's NIC bandwidth per direction, before
	// Efficiency. Default NIC.Bandwidth.
	ServerNIC units.BytesPerSec

	// TreeChunk is the pipeline chunk of Tree and DoubleTree and of
	// Broadcast (ring and tree). Default DefaultTreeChunk.
	TreeChunk units.Bytes
	// InterNode is the algorithm of Hierarchical's all-reduce between
	// nodes: Ring, HalvingDoubling, Tree or DoubleTree. Default Ring.
	InterNode Algorithm
	// TorusX is the first dimension of Torus2D's grid; it must divide
	// the number of ranks reduced. Default RanksPerNode when that is above
	// 1 and divides them, else the largest divisor at most their square
	// root.
	TorusX int
	// NCCL is the fabric as the NCCL algorithm sees it, and its overrides.
	NCCL NCCLConfig
}

func nonNegative(x float64) bool { return x >= 0 && !math.IsInf(x, 1) }

// validate fills the defaults of c and returns every problem found.
func (c *Config) validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}
	if c.Ranks < 1 || c.Ranks > MaxRanks {
		bad("ranks %d is not in [1, %d]", c.Ranks, MaxRanks)
	}
	if len(c.NodeRanks) > 0 {
		c.validateNodeRanks(bad)
	} else if c.RanksPerNode == 0 {
		c.RanksPerNode = 1
	}
	if c.RanksPerNode < 0 {
		bad("ranks per node %d is negative", c.RanksPerNode)
	} else if c.RanksPerNode > 0 && c.Ranks >= 1 && c.Ranks%c.RanksPerNode != 0 {
		bad("ranks %d is not a multiple of ranks per node %d", c.Ranks, c.RanksPerNode)
	}
	if c.NICsPerNode == 0 {
		c.NICsPerNode = 1
	}
	if c.NICsPerNode < 0 {
		bad("NICs per node %d is negative", c.NICsPerNode)
	} else if most := c.largestNode(); most > 0 && c.NICsPerNode > most {
		bad("NICs per node %d exceeds ranks per node %d; give one NIC their combined bandwidth instead", c.NICsPerNode, most)
	}
	for _, l := range []struct {
		name string
		spec LinkSpec
	}{{"intra-node", c.Intra}, {"PCIe", c.PCIe}, {"NIC", c.NIC}} {
		if !nonNegative(float64(l.spec.Bandwidth)) {
			bad("%s bandwidth %v is not a non-negative finite number", l.name, l.spec.Bandwidth)
		}
		if !nonNegative(float64(l.spec.Latency)) {
			bad("%s latency %v is not a non-negative finite number", l.name, l.spec.Latency)
		}
	}
	for _, x := range []struct {
		name string
		v    float64
	}{{"host memory bandwidth", float64(c.HostMemory)}, {"shared-memory bandwidth", float64(c.SHM)}, {"fabric latency", float64(c.FabricLatency)},
		{"overhead", float64(c.Overhead)}, {"server NIC bandwidth", float64(c.ServerNIC)}, {"tree chunk", float64(c.TreeChunk)},
		{"per-flow rate", float64(c.PerFlow)}} {
		if !nonNegative(x.v) {
			bad("%s %v is not a non-negative finite number", x.name, x.v)
		}
	}
	if c.SHMSocketDevices < 0 || c.SHMSocketDevices > MaxRanks {
		bad("devices a socket %d: want 0 (one socket) to %d", c.SHMSocketDevices, MaxRanks)
	}
	if c.SHMSocketDevices > 0 && !(c.SHMCrossSocket > 0 && c.SHMCrossSocket <= 1) {
		bad("shared-memory share between sockets %v: want a number in (0, 1]", c.SHMCrossSocket)
	}
	if c.Oversubscription == 0 {
		c.Oversubscription = 1
	}
	if !(c.Oversubscription >= 1) || math.IsInf(c.Oversubscription, 1) {
		bad("oversubscription %v is not a finite number of at least 1", c.Oversubscription)
	}
	if c.Efficiency == 0 {
		c.Efficiency = 1
	}
	if !(c.Efficiency > 0 && c.Efficiency <= 1) {
		bad("efficiency %v is not in (0, 1]", c.Efficiency)
	}
	c.validateTree(bad)
	if c.Streams == 0 {
		c.Streams = 1
	}
	if c.Streams < 1 || c.Streams > MaxStreams {
		bad("streams %d is not in [1, %d]", c.Streams, MaxStreams)
	}
	if c.Servers < 0 || c.Servers > MaxRanks {
		bad("servers %d is not in [0, %d]", c.Servers, MaxRanks)
	}
	if c.ServerNIC == 0 {
		c.ServerNIC = c.NIC.Bandwidth
	}
	if c.TreeChunk == 0 {
		c.TreeChunk = DefaultTreeChunk
	}
	switch c.InterNode {
	case Ring, HalvingDoubling, Tree, DoubleTree:
	default:
		bad("inter-node algorithm %v is not ring, halving-doubling, tree or double-tree", c.InterNode)
	}
	if c.TorusX < 0 {
		bad("torus x %d is negative", c.TorusX)
	}
	errs = append(errs, c.NCCL.validate()...)
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	nodes := c.nodes()
	if most := c.largestNode(); most > 1 && !c.NoPeerToPeer && c.Intra.Bandwidth == 0 {
		bad("intra-node bandwidth is required with %d ranks per node and peer-to-peer access", most)
	}
	if c.NoPeerToPeer && (c.PCIe.Bandwidth == 0 || c.HostMemory == 0) {
		bad("PCIe bandwidth %v and host memory bandwidth %v are required without peer-to-peer access", c.PCIe.Bandwidth, c.HostMemory)
	}
	if (nodes > 1 || c.Servers > 0) && c.NIC.Bandwidth == 0 {
		bad("NIC bandwidth is required with %d nodes and %d servers", nodes, c.Servers)
	}
	if c.Servers > 0 && c.ServerNIC == 0 {
		bad("server NIC bandwidth is required with %d servers", c.Servers)
	}
	return errors.Join(errs...)
}

// validateTree checks the PCIe tree's fields and fills Sockets.
func (c *Config) validateTree(bad func(string, ...any)) {
	if c.Sockets == 0 {
		c.Sockets = 1
	}
	if c.Sockets < 1 || c.Sockets > MaxSockets {
		bad("sockets %d is not in [1, %d]", c.Sockets, MaxSockets)
	}
	for _, l := range []struct {
		name string
		spec LinkSpec
	}{{"switch uplink", c.SwitchUplink}, {"inter-socket", c.InterSocket}} {
		if !nonNegative(float64(l.spec.Bandwidth)) || !nonNegative(float64(l.spec.Latency)) {
			bad("%s bandwidth %v and latency %v must be non-negative finite numbers", l.name, l.spec.Bandwidth, l.spec.Latency)
		}
	}
	switch {
	case c.DevicesPerSwitch < 0 || c.DevicesPerSwitch > MaxRanks:
		bad("devices per switch %d is not in [0, %d]", c.DevicesPerSwitch, MaxRanks)
	case c.DevicesPerSwitch == 0:
	case c.NoPeerToPeer:
		bad("devices per switch %d needs peer-to-peer access; without it every copy is staged through host memory already", c.DevicesPerSwitch)
	case c.SwitchUplink.Bandwidth == 0:
		bad("devices per switch %d needs a switch uplink bandwidth", c.DevicesPerSwitch)
	case c.Sockets > 1 && c.InterSocket.Bandwidth == 0:
		bad("%d sockets need an inter-socket bandwidth", c.Sockets)
	}
	if c.NICsPerSwitch < 0 || c.NICsPerSwitch > MaxRanks {
		bad("NICs per switch %d is not in [0, %d]", c.NICsPerSwitch, MaxRanks)
	}
}

// validateNodeRanks checks NodeRanks and, when every node holds as many
// ranks, replaces it by RanksPerNode.
func (c *Config) validateNodeRanks(bad func(string, ...any)) {
	if c.RanksPerNode != 0 {
		bad("ranks per node %d and node ranks %v are exclusive; give one of them", c.RanksPerNode, c.NodeRanks)
		return
	}
	if len(c.NodeRanks) > MaxRanks {
		bad("node ranks list %d nodes; at most %d", len(c.NodeRanks), MaxRanks)
		return
	}
	sum, even := 0, true
	for i, k := range c.NodeRanks {
		if k < 1 || k > MaxRanks {
			bad("node ranks[%d] %d is not in [1, %d]", i, k, MaxRanks)
			return
		}
		sum += k
		even = even && k == c.NodeRanks[0]
	}
	if sum != c.Ranks {
		bad("node ranks %v sum to %d, not ranks %d", c.NodeRanks, sum, c.Ranks)
		return
	}
	if even {
		c.RanksPerNode, c.NodeRanks = c.NodeRanks[0], nil
		return
	}
	c.NodeRanks = slices.Clone(c.NodeRanks)
}

// largestNode returns the most ranks a node holds, 0 if unknown.
func (c *Config) largestNode() int {
	if len(c.NodeRanks) == 0 {
		return c.RanksPerNode
	}
	return slices.Max(c.NodeRanks)
}

// nodes returns the number of nodes of a valid configuration.
func (c *Config) nodes() int {
	if len(c.NodeRanks) > 0 {
		return len(c.NodeRanks)
	}
	return c.Ranks / c.RanksPerNode
}

// Topology is a cluster built from a Config: its links on a Network, the
// routes between devices, and the collectives that run on them.
//
// The links, per direction, and the latency each adds to a message:
//
//	dev-out[r], dev-in[r]   Intra.Bandwidth      Intra.Latency on dev-out
//	pcie-up[r], pcie-down[r] PCIe.Bandwidth      PCIe.Latency on each
//	host-mem[n]             HostMemory           0
//	nic-out[n,i], nic-in[n,i] NIC.Bandwidth·Efficiency  NIC.Latency on nic-out
//	core                    sum of NIC bandwidths·Efficiency/Oversubscription  FabricLatency
//	srv-out[s], srv-in[s]   ServerNIC·Efficiency NIC.Latency on srv-out
//
// The routes from device a on node A to device b on node B:
//
//	A = B, peer-to-peer      dev-out[a] dev-in[b]
//	A = B, no peer-to-peer   pcie-up[a] host-mem[A]×2 pcie-down[b]
//	A ≠ B, peer-to-peer      nic-out[A,i] core nic-in[B,j]                 + Overhead
//	A ≠ B, no peer-to-peer   pcie-up[a] host-mem[A]×2 nic-out[A,i] core
//	                         nic-in[B,j] host-mem[B]×2 pcie-down[b]        + Overhead
//
// A route between nodes (or to or from a server) moves at most
// Streams·PerFlow when PerFlow is set.
//
// With a PCIe tree (DevicesPerSwitch) the links add, per node,
//
//	switch-up[n,s], switch-down[n,s]  SwitchUplink  its latency on each
//	socket[n,x·Sockets+y]             InterSocket   its latency
//
// and a route between devices under different switches (unless
// IntraBypassesTree), or through a NIC not under the device's switch,
// becomes dev-out[a] switch-up host-mem×2 [socket] switch-down dev-in[b],
// or dev-out[a] switch-up host-mem×2 [socket] [switch-down of the NIC's
// switch] nic-out core nic-in [switch-up of the NIC's switch] [socket]
// host-mem×2 switch-down dev-in[b] (host memory where modelled); a NIC
// under the device's own switch is reached as without a tree.
//
// Host memory is crossed twice on each side of a staged copy: written by
// one DMA and read by the next. With peer-to-peer access the NIC reads
// device memory directly (GPUDirect RDMA) and the PCIe link to the host is
// not on the route.
type Topology struct {
	cfg   Config
	s     *event.Scheduler
	net   *Network
	nodes int
	all   []int
	// first is the first rank of each node and, last, Ranks; nodeOf is the
	// node of each rank. Both are nil when every node holds RanksPerNode.
	first  []int
	nodeOf []int32

	// swUp and swDown are each node's PCIe switch uplinks; sock holds each
	// node's inter-socket links, index x·Sockets+y for socket x to y. All
	// nil without DevicesPerSwitch.
	swUp, swDown [][]*Link
	sock         [][]*Link

	devOut, devIn    []*Link
	pcieUp, pcieDown []*Link
	shmOut, shmIn    []*Link   // with NoPeerToPeer and SHM, each device's shared-memory rate
	shmCross         [][]*Link // with SHMSocketDevices, each node's: socket x's way out at 2x, in at 2x+1
	hostMem          []*Link
	nicOut, nicIn    [][]*Link
	core             *Link   // the core, or with Rails the spine
	rail             []*Link // with Rails, each rail's leaf
	srvOut, srvIn    []*Link

	b     *PathBuilder
	paths map[string]*Path
	plans map[planKey][]step
	// ncclChoices is NCCL's choice for each cached NCCL plan.
	ncclChoices map[planKey]NCCLChoice
}

// NewTopology builds the links of cfg on a new Network driven by s. It
// returns an error wrapping ErrConfig that lists every problem in cfg.
func NewTopology(s *event.Scheduler, cfg Config) (*Topology, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	t := &Topology{cfg: cfg, s: s, net: NewNetwork(s), nodes: cfg.nodes(), paths: make(map[string]*Path), plans: make(map[planKey][]step), ncclChoices: make(map[planKey]NCCLChoice)}
	n := t.net
	p := cfg.Ranks
	t.all = make([]int, p)
	for i := range t.all {
		t.all[i] = i
	}
	if len(cfg.NodeRanks) > 0 {
		t.first = make([]int, 1, t.nodes+1)
		t.nodeOf = make([]int32, 0, p)
		for a, k := range cfg.NodeRanks {
			t.first = append(t.first, t.first[a]+k)
			for range k {
				t.nodeOf = append(t.nodeOf, int32(a))
			}
		}
	}
	if cfg.largestNode() > 1 && !cfg.NoPeerToPeer {
		t.devOut, t.devIn = make([]*Link, p), make([]*Link, p)
		for r := range p {
			t.devOut[r] = n.addIndexed("dev-out", r, -1, cfg.Intra.Bandwidth, cfg.Intra.Latency)
			t.devIn[r] = n.addIndexed("dev-in", r, -1, cfg.Intra.Bandwidth, 0)
		}
	}
	if cfg.DevicesPerSwitch > 0 {
		t.addTree()
	}
	if cfg.PCIe.Bandwidth > 0 {
		t.pcieUp, t.pcieDown = make([]*Link, p), make([]*Link, p)
		for r := range p {
			t.pcieUp[r] = n.addIndexed("pcie-up", r, -1, cfg.PCIe.Bandwidth, cfg.PCIe.Latency)
			t.pcieDown[r] = n.addIndexed("pcie-down", r, -1, cfg.PCIe.Bandwidth, cfg.PCIe.Latency)
		}
	}
	if cfg.NoPeerToPeer && cfg.SHM > 0 && cfg.largestNode() > 1 {
		t.shmOut, t.shmIn = make([]*Link, p), make([]*Link, p)
		for r := range p {
			t.shmOut[r] = n.addIndexed("shm-out", r, -1, cfg.SHM, 0)
			t.shmIn[r] = n.addIndexed("shm-in", r, -1, cfg.SHM, 0)
		}
		if d := cfg.SHMSocketDevices; d > 0 && cfg.largestNode() > d {
			rate := units.BytesPerSec(cfg.SHMCrossSocket * float64(cfg.SHM))
			t.shmCross = make([][]*Link, t.nodes)
			for a := range t.nodes {
				_, k := t.NodeRanks(a)
				S := (k + d - 1) / d
				t.shmCross[a] = make([]*Link, 2*S)
				for x := range S {
					t.shmCross[a][2*x] = n.addIndexed("shm-cross-out", a, x, rate, 0)
					t.shmCross[a][2*x+1] = n.addIndexed("shm-cross-in", a, x, rate, 0)
				}
			}
		}
	}
	if cfg.HostMemory > 0 {
		t.hostMem = make([]*Link, t.nodes)
		for a := range t.nodes {
			t.hostMem[a] = n.addIndexed("host-mem", a, -1, cfg.HostMemory, 0)
		}
	}
	if cfg.NIC.Bandwidth > 0 && (t.nodes > 1 || cfg.Servers > 0) {
		bw := units.BytesPerSec(float64(cfg.NIC.Bandwidth) * cfg.Efficiency)
		t.nicOut, t.nicIn = make([][]*Link, t.nodes), make([][]*Link, t.nodes)
		for a := range t.nodes {
			t.nicOut[a], t.nicIn[a] = make([]*Link, cfg.NICsPerNode), make([]*Link, cfg.NICsPerNode)
			for i := range cfg.NICsPerNode {
				t.nicOut[a][i] = n.addIndexed("nic-out", a, i, bw, cfg.NIC.Latency)
				t.nicIn[a][i] = n.addIndexed("nic-in", a, i, bw, 0)
			}
		}
		total := float64(float64(t.nodes*cfg.NICsPerNode)*float64(cfg.NIC.Bandwidth)) + float64(float64(cfg.Servers)*float64(cfg.ServerNIC))
		name := "core"
		if cfg.Rails {
			name = "spine"
			leaf := units.BytesPerSec(float64(float64(t.nodes)*float64(cfg.NIC.Bandwidth)) * cfg.Efficiency)
			for j := range cfg.NICsPerNode {
				t.rail = append(t.rail, n.addIndexed("rail", j, -1, leaf, cfg.FabricLatency))
			}
		}
		t.core = n.AddLink(name, units.BytesPerSec(total*cfg.Efficiency/cfg.Oversubscription), cfg.FabricLatency)
		sbw := units.BytesPerSec(float64(cfg.ServerNIC) * cfg.Efficiency)
		for s := range cfg.Servers {
			t.srvOut = append(t.srvOut, n.addIndexed("srv-out", s, -1, sbw, cfg.NIC.Latency))
			t.srvIn = append(t.srvIn, n.addIndexed("srv-in", s, -1, sbw, 0))
		}
	}
	t.b = n.NewPathBuilder()
	return t, nil
}

// addTree adds every node's PCIe switch uplinks and inter-socket links.
func (t *Topology) addTree() {
	n, cfg := t.net, t.cfg
	S := cfg.Sockets
	t.swUp, t.swDown, t.sock = make([][]*Link, t.nodes), make([][]*Link, t.nodes), make([][]*Link, t.nodes)
	for a := range t.nodes {
		for s := range t.switches(a) {
			t.swUp[a] = append(t.swUp[a], n.addIndexed("switch-up", a, s, cfg.SwitchUplink.Bandwidth, cfg.SwitchUplink.Latency))
			t.swDown[a] = append(t.swDown[a], n.addIndexed("switch-down", a, s, cfg.SwitchUplink.Bandwidth, cfg.SwitchUplink.Latency))
		}
		if S > 1 {
			t.sock[a] = make([]*Link, S*S)
			for x := range S {
				for y := range S {
					if x != y {
						t.sock[a][x*S+y] = n.addIndexed("socket", a, x*S+y, cfg.InterSocket.Bandwidth, cfg.InterSocket.Latency)
					}
				}
			}
		}
	}
}

// switches returns the number of PCIe switches of a node.
func (t *Topology) switches(node int) int {
	_, k := t.NodeRanks(node)
	return (k + t.cfg.DevicesPerSwitch - 1) / t.cfg.DevicesPerSwitch
}

// place returns the node, PCIe switch and socket of a rank.
func (t *Topology) place(r int) (node, sw, socket int) {
	node = t.Node(r)
	first, _ := t.NodeRanks(node)
	sw = (r - first) / t.cfg.DevicesPerSwitch
	return node, sw, sw * t.cfg.Sockets / t.switches(node)
}

// Network returns the network holding the topology's links, on which other
// activity (input pipelines, point-to-point transfers) can add flows that
// contend with the collectives.
func (t *Topology) Network() *Network { return t.net }

// Scheduler returns the scheduler the topology runs on.
func (t *Topology) Scheduler() *event.Scheduler { return t.s }

// Config returns the configuration with its defaults filled in.
func (t *Topology) Config() Config { return t.cfg }

// Nodes returns the number of nodes.
func (t *Topology) Nodes() int { return t.nodes }

// Node returns the node of a rank.
func (t *Topology) Node(rank int) int {
	if t.nodeOf != nil {
		return int(t.nodeOf[rank])
	}
	return rank / t.cfg.RanksPerNode
}

// shmCrossing returns the way out of src's socket and the way into
// dst's, two ranks of one node, or nils where they share a socket or no
// sockets are modelled (Config.SHMSocketDevices).
func (t *Topology) shmCrossing(src, dst int) (out, in *Link) {
	if t.shmCross == nil {
		return nil, nil
	}
	a, x := t.socket(src)
	_, y := t.socket(dst)
	if x == y {
		return nil, nil
	}
	return t.shmCross[a][2*x], t.shmCross[a][2*y+1]
}

// socket returns the node of a rank and its socket there
// (Config.SHMSocketDevices).
func (t *Topology) socket(rank int) (node, socket int) {
	node = t.Node(rank)
	first, _ := t.NodeRanks(node)
	return node, (rank - first) / t.cfg.SHMSocketDevices
}

// spansSockets reports whether two of ranks on one node sit on different
// sockets (shmCrossing).
func (t *Topology) spansSockets(ranks []int) bool {
	if t.shmCross == nil {
		return false
	}
	seen := make(map[int]int) // a node's first socket among ranks
	for _, r := range ranks {
		a, x := t.socket(r)
		if y, ok := seen[a]; ok && y != x {
			return true
		}
		seen[a] = x
	}
	return false
}

// NodeRanks returns the first rank of a node and the number of ranks it
// holds.
func (t *Topology) NodeRanks(node int) (first, k int) {
	if t.first != nil {
		return t.first[node], t.first[node+1] - t.first[node]
	}
	return node * t.cfg.RanksPerNode, t.cfg.RanksPerNode
}

// NIC returns the outgoing and incoming links of NIC i of a node, or nils
// if the topology has no NICs.
func (t *Topology) NIC(node, i int) (out, in *Link) {
	if t.nicOut == nil {
		return nil, nil
	}
	return t.nicOut[node][i], t.nicIn[node][i]
}

// Intra returns a rank's outgoing and incoming ports into its node's
// peer-to-peer fabric, or nils if the topology has none (one rank per node,
// or no peer-to-peer access).
func (t *Topology) Intra(rank int) (out, in *Link) {
	if t.devOut == nil {
		return nil, nil
	}
	return t.devOut[rank], t.devIn[rank]
}

// Server returns the outgoing and incoming links of parameter server s's
// NIC. It panics if s is not in [0, Config.Servers).
func (t *Topology) Server(s int) (out, in *Link) {
	if s < 0 || s >= len(t.srvOut) {
		panic(badServer)
	}
	return t.srvOut[s], t.srvIn[s]
}

// PCIe returns the links from a rank to host memory and back, or nils if
// the topology has no PCIe links.
func (t *Topology) PCIe(rank int) (up, down *Link) {
	if t.pcieUp == nil {
		return nil, nil
	}
	return t.pcieUp[rank], t.pcieDown[rank]
}

// HostMemory returns a node's host-memory link, or nil if the topology
// models none.
func (t *Topology) HostMemory(node int) *Link {
	if t.hostMem == nil {
		return nil
	}
	return t.hostMem[node]
}

// Core returns the fabric core link (with Rails, the spine), or nil with
// a single node and no servers.
func (t *Topology) Core() *Link { return t.core }

// Switches returns the number of PCIe switches of a node, 0 without a
// PCIe tree.
func (t *Topology) Switches(node int) int {
	if t.swUp == nil {
		return 0
	}
	return len(t.swUp[node])
}

// Switch returns the uplink of PCIe switch s of a node, towards its socket
// and back. It panics if s is not in [0, Switches(node)).
func (t *Topology) Switch(node, s int) (up, down *Link) { return t.swUp[node][s], t.swDown[node][s] }

// Socket returns a node's link from CPU socket x to socket y, or nil
// without a PCIe tree, with one socket, or when x = y.
func (t *Topology) Socket(node, x, y int) *Link {
	if t.sock == nil || t.sock[node] == nil {
		return nil
	}
	return t.sock[node][x*t.cfg.Sockets+y]
}

// Rail returns rail j's leaf link, or nil without Rails.
func (t *Topology) Rail(j int) *Link {
	if t.rail == nil {
		return nil
	}
	return t.rail[j]
}

// fabric returns the link between NIC i of one node and NIC j of
// another: rail i's leaf when the fabric has rails and i = j, else the
// core (spine).
func (t *Topology) fabric(i, j int) *Link {
	if t.rail != nil && i == j {
		return t.rail[i]
	}
	return t.core
}

// Route returns the path of a single transfer from rank src to rank dst,
// for point-to-point traffic such as pipeline-parallel activations. It
// panics if a rank is out of range.
func (t *Topology) Route(src, dst int) *Path {
	t.checkRank(src)
	t.checkRank(dst)
	return t.cached(fmt.Sprintf("route/%d/%d", src, dst), func() { t.route(src, dst) })
}

// Routes returns the path of a flow group of point-to-point transfers:
// one stream from src[i] to dst[i] for each i, as a collective step is
// built. A link crossed by k of the routes has weight k, so the group's
// streams move at one common rate (see "Flow groups" in the package
// documentation). The path is not cached. It panics if a rank is out of
// range or src and dst differ in length.
func (t *Topology) Routes(src, dst []int) *Path {
	if len(src) != len(dst) {
		panic(badPairs)
	}
	for i := range src {
		t.checkRank(src[i])
		t.checkRank(dst[i])
	}
	for i := range src {
		t.route(src[i], dst[i])
	}
	return t.b.Path()
}

const badPairs = "netsim: sources and destinations differ in length"

const badRank = "netsim: rank out of range"

const badServer = "netsim: server out of range"

func (t *Topology) checkRank(r int) {
	if r < 0 || r >= t.cfg.Ranks {
		panic(badRank)
	}
}

// nic returns the NIC of a rank: device j of a node of k uses NIC
// j·NICsPerNode/k.
func (t *Topology) nic(rank int) int {
	if t.first == nil {
		return rank % t.cfg.RanksPerNode * t.cfg.NICsPerNode / t.cfg.RanksPerNode
	}
	first, k := t.NodeRanks(t.Node(rank))
	return (rank - first) * t.cfg.NICsPerNode / k
}

// route adds the route from src to dst to t.b.
func (t *Topology) route(src, dst int) {
	b := t.b
	if src == dst {
		b.Add(0)
		return
	}
	if t.swUp != nil {
		t.treeRoute(src, dst)
		return
	}
	a, c := t.Node(src), t.Node(dst)
	if a == c {
		if !t.cfg.NoPeerToPeer {
			b.Add(0, t.devOut[src], t.devIn[dst])
		} else if h := t.hostMem[a]; t.shmOut != nil {
			if out, in := t.shmCrossing(src, dst); out != nil {
				b.Add(0, t.shmOut[src], t.pcieUp[src], h, out, in, h, t.pcieDown[dst], t.shmIn[dst])
			} else {
				b.Add(0, t.shmOut[src], t.pcieUp[src], h, h, t.pcieDown[dst], t.shmIn[dst])
			}
		} else {
			b.Add(0, t.pcieUp[src], h, h, t.pcieDown[dst])
		}
		return
	}
	i, j := t.nic(src), t.nic(dst)
	no, f, ni := t.nicOut[a][i], t.fabric(i, j), t.nicIn[c][j]
	if !t.cfg.NoPeerToPeer {
		t.between(no, f, ni)
		return
	}
	ha, hc := t.hostMem[a], t.hostMem[c]
	t.between(t.pcieUp[src], ha, ha, no, f, ni, hc, hc, t.pcieDown[dst])
}

// treeRoute adds the route from src to dst through the nodes' PCIe
// trees: peer-to-peer under one switch; otherwise up the source's switch
// uplink, through host memory, across sockets where they differ, and down
// the destination's uplink or out through a NIC (see
// Config.DevicesPerSwitch).
func (t *Topology) treeRoute(src, dst int) {
	a, swa, sa := t.place(src)
	c, swc, sc := t.place(dst)
	if a == c && (swa == swc || t.cfg.IntraBypassesTree) {
		t.b.Add(0, t.devOut[src], t.devIn[dst])
		return
	}
	if a == c {
		links := append(t.toRoot(src, a, swa), t.cross(a, sa, sc)...)
		t.b.Add(0, append(links, t.fromRoot(dst, c, swc)...)...)
		return
	}
	i, j := t.nic(src), t.nic(dst)
	links := t.toNIC(src, a, i)
	links = append(links, t.nicOut[a][i], t.fabric(i, j), t.nicIn[c][j])
	t.between(append(links, t.fromNIC(dst, c, j)...)...)
}

// toNIC returns the links from rank r on node a to its NIC i, short of
// the NIC: none when the NIC is under r's switch (GPUDirect RDMA, as
// without a tree); else r's port and switch uplink, host memory, the
// sockets crossed and, for a NIC under another switch, that switch's
// downlink.
func (t *Topology) toNIC(r, a, i int) []*Link {
	_, sw, s := t.place(r)
	nsw, ns := t.nicPlace(a, i)
	if nsw == sw {
		return nil
	}
	links := append(t.toRoot(r, a, sw), t.cross(a, s, ns)...)
	if nsw >= 0 {
		links = append(links, t.swDown[a][nsw])
	}
	return links
}

// fromNIC returns the links from NIC j of node c to rank r, after the
// NIC: the mirror of toNIC.
func (t *Topology) fromNIC(r, c, j int) []*Link {
	_, sw, s := t.place(r)
	nsw, ns := t.nicPlace(c, j)
	if nsw == sw {
		return nil
	}
	var links []*Link
	if nsw >= 0 {
		links = append(links, t.swUp[c][nsw])
	}
	links = append(append(append(links, t.cross(c, ns, s)...), t.hostStage(c)...), t.fromRoot(r, c, sw)...)
	return links
}

// nicPlace returns the switch NIC i of node a hangs under, -1 for the
// root complex, and its socket.
func (t *Topology) nicPlace(a, i int) (sw, socket int) {
	if t.cfg.NICsPerSwitch == 0 {
		return -1, t.nicSocket(i)
	}
	sw = min(i/t.cfg.NICsPerSwitch, t.switches(a)-1)
	return sw, sw * t.cfg.Sockets / t.switches(a)
}

// toRoot returns the links from rank r on node a, behind switch sw, to
// host memory: its port, the switch's uplink, and host memory written and
// read (when modelled).
func (t *Topology) toRoot(r, a, sw int) []*Link {
	links := make([]*Link, 0, 12)
	if t.devOut != nil {
		links = append(links, t.devOut[r])
	}
	return append(append(links, t.swUp[a][sw]), t.hostStage(a)...)
}

// fromRoot returns the links from node a's root complex down switch sw's
// uplink to rank r.
func (t *Topology) fromRoot(r, a, sw int) []*Link {
	if t.devIn != nil {
		return []*Link{t.swDown[a][sw], t.devIn[r]}
	}
	return []*Link{t.swDown[a][sw]}
}

// hostStage returns node a's host memory twice (a copy written and read),
// or nothing when host memory is not modelled.
func (t *Topology) hostStage(a int) []*Link {
	if t.hostMem == nil {
		return nil
	}
	return []*Link{t.hostMem[a], t.hostMem[a]}
}

// cross returns node a's link from socket x to socket y, or nothing if
// they are one.
func (t *Topology) cross(a, x, y int) []*Link {
	if x == y {
		return nil
	}
	return []*Link{t.sock[a][x*t.cfg.Sockets+y]}
}

// nicSocket returns the socket NIC i hangs off.
func (t *Topology) nicSocket(i int) int { return i * t.cfg.Sockets / t.cfg.NICsPerNode }

// between adds a route between nodes (or to a server) to t.b: its latency
// carries the transport's overhead, and its stream moves at most
// Streams × PerFlow when PerFlow is set.
func (t *Topology) between(links ...*Link) {
	if t.cfg.PerFlow > 0 {
		t.b.AddLimited(t.cfg.Overhead, units.BytesPerSec(float64(t.cfg.Streams)*float64(t.cfg.PerFlow)), links...)
		return
	}
	t.b.Add(t.cfg.Overhead, links...)
}

// toServer adds the route from a rank to server s.
func (t *Topology) toServer(r, s int) {
	a := t.Node(r)
	no := t.nicOut[a][t.nic(r)]
	if t.swUp != nil {
		t.between(append(t.toNIC(r, a, t.nic(r)), no, t.core, t.srvIn[s])...)
		return
	}
	if !t.cfg.NoPeerToPeer {
		t.between(no, t.core, t.srvIn[s])
		return
	}
	h := t.hostMem[a]
	t.between(t.pcieUp[r], h, h, no, t.core, t.srvIn[s])
}

// fromServer adds the route from server s to a rank.
func (t *Topology) fromServer(s, r int) {
	a := t.Node(r)
	ni := t.nicIn[a][t.nic(r)]
	if t.swUp != nil {
		t.between(append([]*Link{t.srvOut[s], t.core, ni}, t.fromNIC(r, a, t.nic(r))...)...)
		return
	}
	if !t.cfg.NoPeerToPeer {
		t.between(t.srvOut[s], t.core, ni)
		return
	}
	h := t.hostMem[a]
	t.between(t.srvOut[s], t.core, ni, h, h, t.pcieDown[r])
}

// cached returns the path stored under key, building it with build if
// there is none.
func (t *Topology) cached(key string, build func()) *Path {
	if p, ok := t.paths[key]; ok {
		return p
	}
	build()
	p := t.b.Path()
	t.paths[key] = p
	return p
}
