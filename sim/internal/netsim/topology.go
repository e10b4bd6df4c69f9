package netsim

import (
	"errors"
	"fmt"
	"math"

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
	// multiple of it. Default 1.
	RanksPerNode int

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

	// NICsPerNode is the number of NICs per node, at most RanksPerNode.
	// Device j of a node uses NIC j·NICsPerNode/RanksPerNode. Default 1.
	NICsPerNode int
	// NIC is each NIC's bandwidth per direction (the raw line rate; see
	// Efficiency) and its per-message latency (NIC and wire). Required
	// when there is more than one node or a parameter server.
	NIC LinkSpec
	// FabricLatency is the switch latency a message pays crossing the
	// fabric between nodes. Default 0.
	FabricLatency units.Seconds
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
	if c.RanksPerNode == 0 {
		c.RanksPerNode = 1
	}
	if c.RanksPerNode < 0 {
		bad("ranks per node %d is negative", c.RanksPerNode)
	} else if c.Ranks >= 1 && c.Ranks%c.RanksPerNode != 0 {
		bad("ranks %d is not a multiple of ranks per node %d", c.Ranks, c.RanksPerNode)
	}
	if c.NICsPerNode == 0 {
		c.NICsPerNode = 1
	}
	if c.NICsPerNode < 0 {
		bad("NICs per node %d is negative", c.NICsPerNode)
	} else if c.RanksPerNode > 0 && c.NICsPerNode > c.RanksPerNode {
		bad("NICs per node %d exceeds ranks per node %d; give one NIC their combined bandwidth instead", c.NICsPerNode, c.RanksPerNode)
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
	}{{"host memory bandwidth", float64(c.HostMemory)}, {"fabric latency", float64(c.FabricLatency)},
		{"overhead", float64(c.Overhead)}, {"server NIC bandwidth", float64(c.ServerNIC)}, {"tree chunk", float64(c.TreeChunk)}} {
		if !nonNegative(x.v) {
			bad("%s %v is not a non-negative finite number", x.name, x.v)
		}
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
	nodes := c.Ranks / c.RanksPerNode
	if c.RanksPerNode > 1 && !c.NoPeerToPeer && c.Intra.Bandwidth == 0 {
		bad("intra-node bandwidth is required with %d ranks per node and peer-to-peer access", c.RanksPerNode)
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

	devOut, devIn    []*Link
	pcieUp, pcieDown []*Link
	hostMem          []*Link
	nicOut, nicIn    [][]*Link
	core             *Link
	srvOut, srvIn    []*Link

	b     *PathBuilder
	paths map[string]*Path
	plans map[planKey][]step
}

// NewTopology builds the links of cfg on a new Network driven by s. It
// returns an error wrapping ErrConfig that lists every problem in cfg.
func NewTopology(s *event.Scheduler, cfg Config) (*Topology, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	t := &Topology{cfg: cfg, s: s, net: NewNetwork(s), nodes: cfg.Ranks / cfg.RanksPerNode, paths: make(map[string]*Path), plans: make(map[planKey][]step)}
	n := t.net
	p := cfg.Ranks
	t.all = make([]int, p)
	for i := range t.all {
		t.all[i] = i
	}
	if cfg.RanksPerNode > 1 && !cfg.NoPeerToPeer {
		t.devOut, t.devIn = make([]*Link, p), make([]*Link, p)
		for r := range p {
			t.devOut[r] = n.addIndexed("dev-out", r, -1, cfg.Intra.Bandwidth, cfg.Intra.Latency)
			t.devIn[r] = n.addIndexed("dev-in", r, -1, cfg.Intra.Bandwidth, 0)
		}
	}
	if cfg.PCIe.Bandwidth > 0 {
		t.pcieUp, t.pcieDown = make([]*Link, p), make([]*Link, p)
		for r := range p {
			t.pcieUp[r] = n.addIndexed("pcie-up", r, -1, cfg.PCIe.Bandwidth, cfg.PCIe.Latency)
			t.pcieDown[r] = n.addIndexed("pcie-down", r, -1, cfg.PCIe.Bandwidth, cfg.PCIe.Latency)
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
		t.core = n.AddLink("core", units.BytesPerSec(total*cfg.Efficiency/cfg.Oversubscription), cfg.FabricLatency)
		sbw := units.BytesPerSec(float64(cfg.ServerNIC) * cfg.Efficiency)
		for s := range cfg.Servers {
			t.srvOut = append(t.srvOut, n.addIndexed("srv-out", s, -1, sbw, cfg.NIC.Latency))
			t.srvIn = append(t.srvIn, n.addIndexed("srv-in", s, -1, sbw, 0))
		}
	}
	t.b = n.NewPathBuilder()
	return t, nil
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
func (t *Topology) Node(rank int) int { return rank / t.cfg.RanksPerNode }

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

// Core returns the fabric core link, or nil with a single node and no
// servers.
func (t *Topology) Core() *Link { return t.core }

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

func (t *Topology) nic(rank int) int {
	return rank % t.cfg.RanksPerNode * t.cfg.NICsPerNode / t.cfg.RanksPerNode
}

// route adds the route from src to dst to t.b.
func (t *Topology) route(src, dst int) {
	b := t.b
	if src == dst {
		b.Add(0)
		return
	}
	a, c := t.Node(src), t.Node(dst)
	if a == c {
		if !t.cfg.NoPeerToPeer {
			b.Add(0, t.devOut[src], t.devIn[dst])
		} else {
			h := t.hostMem[a]
			b.Add(0, t.pcieUp[src], h, h, t.pcieDown[dst])
		}
		return
	}
	no, ni := t.nicOut[a][t.nic(src)], t.nicIn[c][t.nic(dst)]
	if !t.cfg.NoPeerToPeer {
		b.Add(t.cfg.Overhead, no, t.core, ni)
		return
	}
	ha, hc := t.hostMem[a], t.hostMem[c]
	b.Add(t.cfg.Overhead, t.pcieUp[src], ha, ha, no, t.core, ni, hc, hc, t.pcieDown[dst])
}

// toServer adds the route from a rank to server s.
func (t *Topology) toServer(r, s int) {
	a := t.Node(r)
	no := t.nicOut[a][t.nic(r)]
	if !t.cfg.NoPeerToPeer {
		t.b.Add(t.cfg.Overhead, no, t.core, t.srvIn[s])
		return
	}
	h := t.hostMem[a]
	t.b.Add(t.cfg.Overhead, t.pcieUp[r], h, h, no, t.core, t.srvIn[s])
}

// fromServer adds the route from server s to a rank.
func (t *Topology) fromServer(s, r int) {
	a := t.Node(r)
	ni := t.nicIn[a][t.nic(r)]
	if !t.cfg.NoPeerToPeer {
		t.b.Add(t.cfg.Overhead, t.srvOut[s], t.core, ni)
		return
	}
	h := t.hostMem[a]
	t.b.Add(t.cfg.Overhead, t.srvOut[s], t.core, ni, h, h, t.pcieDown[r])
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
