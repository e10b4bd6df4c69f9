package scenarios

import (
	"cmp"
	"fmt"
	"slices"

	"scaleplan/compute"
	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
	"scaleplan/sim"
)

// Assumed parameters of the simulator input that no catalogue entry
// gives. docs/simulator.md and docs/validation.md justify each.
const (
	// ReferenceClock is the clock of the reference core that
	// model.Dataset.CPUSecondsPerSample is measured on; a node's cores
	// decode ReferenceClock/clock times slower or faster.
	ReferenceClock = 2.5 * units.GHz

	// DBService is the time the shared database file is held per sample
	// read: one read RPC to the object storage server and its cached read
	// of a record, with one node reading.
	DBService = 100 * units.Microsecond
	// DBPerReader is the time each further node reading the same database
	// file adds to every sample read: the file's lock moves between the
	// clients, one lock callback round trip for each other holder.
	DBPerReader = 30 * units.Microsecond

	// SMTYield is the throughput a core's second hardware thread adds to
	// decoding, as a share of one thread alone: the "up to 30 %" that
	// Intel measured for Hyper-Threading on server benchmarks (Marr et
	// al., "Hyper-Threading Technology Architecture and
	// Microarchitecture", Intel Technology Journal 6(1), 2002), taken as
	// the gain of data loader processes sharing a core.
	SMTYield = 0.3

	// PageCacheShare is the share of a node's host memory the page cache
	// may give to the data set (input.page_cache: auto); the rest is the
	// framework's, the loader's pinned buffers' and the operating
	// system's.
	PageCacheShare = 0.5
)

// Build returns the simulator configuration of point p of r. It maps the
// scenario onto the simulator's numbers:
//
//   - compute from the calibration when there is one (per-device v0 =
//     V0/Devices, PerSample = 1/v0; the calibrated t is the whole fixed
//     cost of a step, so the roofline's update time u is carved out of it:
//     Update = min(u, t), Fixed = t − Update); else, where the device gives
//     its SM count and the model has an operator generator, from the
//     operator model (compute.LawAt at the micro-batch, PyTorch's eager
//     mode) and sim.UpdateTime; else from sim.Roofline and sim.UpdateTime;
//   - memory from sim.ModelMemory, with the recipe's optimizer and master
//     precision (fp32 compute keeps no separate master copy);
//   - the intra-node link scaled by the intra transport's efficiency, its
//     overhead added to the latency; the NICs of the fabric's kind scaled by
//     the inter-node transport's; a transport whose scope is the node
//     cannot carry traffic between nodes, and one whose scope is the fabric
//     cannot carry it inside a node;
//   - a node's PCIe tree (hw.PCIeTree), with peer-to-peer devices: its
//     switches, uplinks and inter-socket bandwidth, both scaled by the intra
//     transport's efficiency, the node's CPU sockets and the NICs under
//     each switch; on an NVLink node the devices talk over NVLink
//     whatever their switches (sim.Network.IntraBypassesTree). With NICs
//     under the switches a node uses only those under its used devices'
//     switches, as NCCL takes each GPU's nearest NIC; where that leaves
//     more ports than devices, each device's merged NIC is under its own
//     switch; NICs the catalogue marks device-local (hw.NIC.DeviceLocal)
//     likewise give a node only the ports local to the devices it uses;
//   - devices without peer-to-peer (a link without it, or
//     parallelism.nccl_p2p_disable) exchange through host memory
//     (sim.Network.NoPeerToPeer), each on its host link at the intra
//     transport's efficiency; between two devices of a node no faster
//     than NCCL's shared-memory transport (hw.Node.SHMRate,
//     sim.Network.SHM) unless the exchange is host-staged;
//   - a rail-optimised fabric (hw.Fabric.RailOptimized): NIC j of every
//     node on rail j's leaf, the oversubscription the spine's;
//   - the transport's per-flow limit and streams (hw.Transport.PerFlow,
//     Streams) cap each transfer between nodes at Streams × PerFlow;
//   - TCP-based transports (ipoib, tcp, grpc) use one NIC port per node: a
//     socket is bound to one interface. verbs and the collective libraries
//     use every port of the fabric's kind;
//   - the share of compute an overlapped gradient exchange takes
//     (sim.Comm.Interference) from parallelism.interference, else
//     DefaultInterference of the device and node; 0 for parameter
//     servers, whose pushes and pulls go through the host;
//   - host-staged exchanges, and any with parallelism.delay_allreduce, run
//     after the backward pass (sim.Comm.NoOverlap)
//     and their host side moves at one core's share of its socket's memory
//     bandwidth, for staged copies through pageable buffers and a CPU sum
//     run by one thread; other staged copies get the sockets' whole memory
//     bandwidth;
//   - the input pipeline from the dataset, the node's drives, CPU and host
//     links, and the system's shared storage; staging makes reads local and
//     adds its one-time copy. Host decoding runs input.workers processes
//     per device (all cores when 0) on the node's cores and threads
//     (HostDecode). With decode on the device the host's cores do
//     not decode, the host copies each sample's stored bytes, and the
//     device's compute per sample grows by DeviceDecode. A node whose
//     catalogue entry lists no drives reads "local" data from host memory
//     (sim.Cached): no read cost.
//
// It returns an error for anything the simulator cannot run: a
// calibration file not loaded into V0, a device without a peak at the
// precision, a transport of the wrong scope, missing drives or NICs.
func (r *Resolved) Build(p Point) (sim.Config, error) {
	var c sim.Config
	if r.Sys == nil || r.Node == nil || r.Device == nil || r.Mdl == nil || r.Rcp == nil || r.Data == nil {
		return c, fmt.Errorf("scenario %q is not resolved", r.Name)
	}
	node, dev, m := r.Node, r.Device, r.Mdl
	par := r.Parallelism
	c = sim.Config{
		Name:           fmt.Sprintf("%s at %d devices, batch %d", r.Name, p.Devices, p.BatchPerDevice),
		Nodes:          p.Nodes,
		DevicesPerNode: p.DevicesPerNode,
		Stages:         par.PipelineStages,
		MicroBatch:     p.BatchPerDevice,
		Accumulation:   par.Accumulation,
		Recompute:      par.Recompute,
		Jitter:         r.Stragglers.Jitter,
		Seed:           r.Seed,
	}
	if pl := par.Placement; len(pl) > 0 {
		if sum := sumInts(pl); p.Devices != sum || p.Nodes != len(pl) {
			return c, fmt.Errorf("scenario %q: %d devices on %d nodes do not match parallelism.placement %v (%d devices on %d nodes)", r.Name, p.Devices, p.Nodes, pl, sum, len(pl))
		}
		c.Placement = pl
	}
	var err error
	if c.Schedule, err = sim.ParseSchedule(par.Schedule); err != nil {
		return c, err
	}
	prec := hw.Precision(r.Precision)
	sp, err := sim.StoragePrecision(prec)
	if err != nil {
		return c, err
	}
	master := r.Rcp.MasterWeights
	if master == "" || sp == model.FP32 {
		master = sp
	}
	opt := r.Rcp.Optimizer

	// Compute.
	upd := sim.UpdateTime(m, dev, opt, sp, master)
	if cal := r.Calibration; cal != nil {
		if !(cal.V0 > 0) {
			return c, fmt.Errorf("scenario %q: calibration file %s is not loaded: its v0 and t must be read into calibration.v0 and calibration.t first", r.Name, cal.File)
		}
		c.Compute = cal.Compute(upd)
	} else if r.OperatorCompute() {
		l, err := compute.LawAt(compute.Config{Device: dev, Precision: prec, Mode: r.Mode, Eff: r.Operators, Framework: r.Framework, Host: r.Host, SeqLen: sentenceLen(r.Data), FuseBNReLU: r.Fuse == FuseBNReLU}, m.Name, p.BatchPerDevice)
		if err != nil {
			return c, fmt.Errorf("scenario %q: %w", r.Name, err)
		}
		c.Compute = sim.Compute{PerSample: l.PerSample, Fixed: l.Fixed, Update: upd, ForwardFraction: l.ForwardFraction}
	} else {
		ps, err := sim.Roofline(m, dev, prec)
		if err != nil {
			return c, fmt.Errorf("scenario %q: %w", r.Name, err)
		}
		c.Compute = sim.Compute{PerSample: ps, Update: upd}
	}

	// Memory.
	c.Memory = sim.ModelMemory(m, dev, opt, sp, master)
	if dev.Kind == hw.CPU && dev.Memory == 0 {
		c.Memory.Capacity = node.HostMemory
	}

	// Gradient exchange.
	alg, err := sim.ParseAlgorithm(par.AllReduce)
	if err != nil {
		return c, err
	}
	inter := sim.Ring
	if par.InterNode != "" {
		if inter, err = sim.ParseAlgorithm(par.InterNode); err != nil {
			return c, err
		}
	}
	c.Comm = sim.Comm{
		Algorithm: alg,
		InterNode: inter,
		Layers:    sim.GradientLayers(m, sp.Size()),
		Bucket:    par.Bucket,
		NoOverlap: alg == sim.HostStaged || par.DelayAllReduce,
		Boundary:  m.ActivationBytes(sp) / units.Bytes(max(len(m.Layers), 1)),
		NCCLAlgo:  par.NCCLAlgo,
		NCCLProto: par.NCCLProto,
	}
	c.Comm.Interference = DefaultInterference(dev, node)
	if alg == sim.ParameterServer || alg == sim.AsyncParameterServer {
		c.Comm.Servers = par.PSShards
		c.Comm.Interference = 0 // pushes and pulls go through the host, not NCCL kernels
	}
	if par.Interference != nil {
		c.Comm.Interference = *par.Interference
	}
	if err := r.network(&c, p); err != nil {
		return c, err
	}
	if err := r.calibrateNetwork(&c, p); err != nil {
		return c, err
	}
	if err := r.input(&c, p); err != nil {
		return c, err
	}
	return c, nil
}

// OperatorCompute reports whether Build takes r's compute from the
// operator model (package compute): r has no calibration, its device gives
// its SM count and its model has an operator generator.
func (r *Resolved) OperatorCompute() bool {
	return r.Calibration == nil && r.Mdl != nil && compute.Covers(r.Device, r.Mdl.Name)
}

// sumInts returns the sum of xs.
func sumInts(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// PeerToPeer reports whether the devices of r's node address each
// other's memory in its exchange: the node's link has peer-to-peer and
// the scenario does not disable it (Parallelism.NCCLP2PDisable). Without
// it they exchange through host memory (sim.Network.NoPeerToPeer).
func (r *Resolved) PeerToPeer() bool {
	return r.Node.Link.PeerToPeer && !r.Parallelism.NCCLP2PDisable
}

// network fills c.Network.
func (r *Resolved) network(c *sim.Config, p Point) error {
	sys, node, dev := r.Sys, r.Node, r.Device
	par := r.Parallelism
	n := &c.Network

	intraEff, intraOver := 1.0, units.Seconds(0)
	if name := par.IntraTransport; name != "" {
		t, err := sys.Transport(name)
		if err != nil {
			return err
		}
		if !t.InNode() && p.DevicesPerNode > 1 {
			return fmt.Errorf("intra-node transport %q of system %q works only between nodes (scope %s); it cannot carry traffic between the %d devices of a node", name, sys.Name, t.Scope, p.DevicesPerNode)
		}
		if t.InNode() {
			intraEff, intraOver = t.Efficiency, t.Overhead
		}
	}
	link := node.Link
	n.Intra = sim.Link{Bandwidth: units.BytesPerSec(float64(link.Bandwidth) * intraEff), Latency: link.Latency + intraOver}
	n.IntraPCI = link.Kind == hw.PCIe
	n.NVLS = link.InNetworkReduction
	if link.Kind == hw.NVLink {
		n.NCCLChannels = dev.NCCLChannels // the catalogue's count is an NVLink node's
	}
	n.NCCLArch = dev.NCCLArch
	p2p := r.PeerToPeer()
	if t := node.PCIeTree; t != nil && p2p {
		n.DevicesPerSwitch, n.Sockets = t.DevicesPerSwitch, max(node.CPU.Sockets, 1)
		n.SwitchUplink = sim.Link{Bandwidth: units.BytesPerSec(float64(t.Uplink) * intraEff)}
		n.InterSocket = sim.Link{Bandwidth: units.BytesPerSec(float64(t.InterSocket) * intraEff)}
		n.NICsPerSwitch = t.NICsPerSwitch
		n.IntraBypassesTree = link.Kind != hw.PCIe
	}
	host := node.HostBandwidth(dev)
	staged := c.Comm.Algorithm == sim.HostStaged
	if !p2p && p.DevicesPerNode > 1 {
		n.NoPeerToPeer = true
		bw := link.Bandwidth
		if host > 0 && host < bw {
			bw = host
		}
		n.PCIe = sim.Link{Bandwidth: units.BytesPerSec(float64(bw) * intraEff), Latency: link.Latency + intraOver}
		if !staged {
			// The devices' own collectives through host memory: NCCL's
			// shared-memory transport, at the node's rate (hw.DefaultSHMBandwidth),
			// and between its sockets at the node's share of it
			// (hw.Node.SHMCrossShare) where no PCIe tree routes them.
			n.SHM = node.SHMRate()
			if s, share := node.CPU.Sockets, node.SHMCrossShare(); s > 1 && n.DevicesPerSwitch == 0 && share < 1 {
				n.SHMSocketDevices, n.SHMCrossSocket = (node.Devices+s-1)/s, share
			}
		}
	} else if host > 0 {
		n.PCIe = sim.Link{Bandwidth: host}
	}
	if n.NoPeerToPeer || staged {
		if staged && n.PCIe.Bandwidth == 0 {
			return fmt.Errorf("host-staged exchange: device %q of node %q has no host link bandwidth", dev.Name, node.Name)
		}
		cpu, err := r.Catalog.Device(node.CPU.Device)
		if node.CPU.Device == "" || err != nil || !(cpu.MemoryBandwidth > 0) {
			return fmt.Errorf("node %q: staging through host memory needs the host's memory bandwidth; set cpu.device to a catalogue CPU", node.Name)
		}
		n.HostMemory = cpu.MemoryBandwidth * units.BytesPerSec(node.CPU.Sockets)
		if staged {
			n.HostMemory = cpu.MemoryBandwidth / units.BytesPerSec(max(node.CPU.CoresPerSocket, 1))
		}
	}

	servers := c.Comm.Servers > 0
	if p.Nodes == 1 && !servers {
		return nil
	}
	name := par.Transport
	if name == "" {
		return fmt.Errorf("system %q has no transport between nodes (verbs, ipoib, tcp, grpc or gcl)", sys.Name)
	}
	t, err := sys.Transport(name)
	if err != nil {
		return err
	}
	if !t.BetweenNodes() {
		return fmt.Errorf("transport %q of system %q works only inside a node (scope %s); it cannot carry traffic between the %d nodes", name, sys.Name, t.Scope, p.Nodes)
	}
	var ports int
	var bw units.BitsPerSec
	for _, nic := range node.NICs {
		if nic.Kind == sys.Fabric.Kind && !nic.Host {
			ports += nic.PortCount()
			b := nic.Bandwidth
			if sys.Fabric.Bandwidth > 0 && sys.Fabric.Bandwidth < b {
				b = sys.Fabric.Bandwidth
			}
			bw = max(bw, b)
		}
	}
	if ports == 0 || bw == 0 {
		return fmt.Errorf("node %q has no %s NIC for the fabric of system %q", node.Name, sys.Fabric.Kind, sys.Name)
	}
	// NCCL uses only the NICs local to the devices it runs on
	// (hw.NIC.DeviceLocal).
	ports = node.LocalPorts(sys.Fabric.Kind, ports, p.DevicesPerNode)
	if name == hw.IPoIB || name == hw.TCP || name == hw.GRPC {
		ports = 1
	}
	if n.NICsPerSwitch > 0 {
		// NCCL uses the NICs nearest each device (GPUDirect RDMA reaches
		// only those under its switch): a node using fewer devices than it
		// has uses only the NICs under their switches.
		ports = min(ports, n.NICsPerSwitch*((p.DevicesPerNode+n.DevicesPerSwitch-1)/n.DevicesPerSwitch))
	}
	nicBW := bw.Bytes()
	if ports > p.DevicesPerNode {
		nicBW = nicBW * units.BytesPerSec(ports) / units.BytesPerSec(p.DevicesPerNode)
		ports = p.DevicesPerNode
		if n.NICsPerSwitch > 0 {
			// Each device's merged NIC stands for the ports nearest it,
			// under its own switch.
			n.NICsPerSwitch = n.DevicesPerSwitch
		}
	}
	n.NICs = ports
	n.NIC = sim.Link{Bandwidth: nicBW}
	n.FabricLatency = sys.Fabric.Latency
	n.Oversubscription = max(sys.Fabric.Oversubscription, 1)
	n.Rails = sys.Fabric.RailOptimized
	n.Efficiency = t.Efficiency
	n.Overhead = t.Overhead
	n.PerFlow, n.Streams = t.PerFlow.Bytes(), t.Streams
	n.NetProtocols = t.NCCLProtocols
	n.NCCLBuffSize = t.NCCLBuffSize
	n.NVLS = n.NVLS && !t.NCCLNoNVLS
	n.ServerNIC = bw.Bytes()
	return nil
}

// CacheHit returns the steady-state fraction of a node's local reads that
// its page cache serves when the data set takes set bytes and the node
// has host memory mem:
//
//	hit = min(1, PageCacheShare · mem / data set)
//
// In the long run every node reads every sample (data-parallel loaders
// reshuffle or shard the data set, and either way a node's reads recur),
// and the cache keeps the most recent PageCacheShare·mem of them. It is 0
// for an empty data set or a node without host memory.
func CacheHit(mem, set units.Bytes) float64 {
	if !(set > 0) || !(mem > 0) {
		return 0
	}
	return min(1, PageCacheShare*float64(mem)/float64(set))
}

// PageCacheHit returns the steady-state fraction of the scenario's reads
// that the page cache serves: CacheHit of the node's host memory and the
// data set when samples are read from the node's drives (storage local,
// or staged) and input.page_cache is auto; 0 otherwise, and for a node
// whose catalogue entry lists no drives (its data are in host memory
// already).
func (r *Resolved) PageCacheHit() float64 {
	in := r.Input
	if (in.Storage != "local" && !in.Staging) || in.PageCache != "auto" {
		return 0
	}
	if !slices.ContainsFunc(r.Node.Storage, func(s hw.Storage) bool { return s.ReadBandwidth() > 0 }) {
		return 0
	}
	return CacheHit(r.Node.HostMemory, r.Data.TrainBytes())
}

// input fills c.Input.
func (r *Resolved) input(c *sim.Config, p Point) error {
	sys, node, dev, data := r.Sys, r.Node, r.Device, r.Data
	in := &c.Input
	kind, err := sim.ParseStorage(r.Input.Storage)
	if err != nil {
		return err
	}
	var read, write units.BytesPerSec
	var capacity units.Bytes
	for _, s := range node.Storage {
		read += s.ReadBandwidth()
		write += s.WriteBandwidth()
		capacity += s.TotalCapacity()
	}
	if sh := sys.SharedStorage; sh != nil {
		in.Shared = sim.SharedStorage{Aggregate: sh.Aggregate, PerClient: sh.PerClient, Latency: sh.Latency}
	}
	if r.Input.Staging {
		if sys.SharedStorage == nil {
			return fmt.Errorf("system %q has no shared storage to stage from", sys.Name)
		}
		bytes := data.TrainBytes()
		if write == 0 || bytes > capacity {
			return fmt.Errorf("staging: data set %q (%v) does not fit on node %q's local drives (%v)", data.Name, bytes, node.Name, capacity)
		}
		var nic units.BitsPerSec
		for _, n := range node.NICs {
			if n.Kind == sys.Fabric.Kind {
				nic += n.Bandwidth * units.BitsPerSec(n.PortCount())
			}
		}
		in.Staging = sim.Staging{Bytes: bytes, Write: write, NIC: nic.Bytes()}
		kind = sim.Local
	}
	in.Storage = kind
	in.Prefetch = r.Input.Prefetch
	if kind == sim.Synthetic {
		return nil
	}
	in.SampleBytes = data.BytesPerSample
	in.Samples = data.TrainSamples
	switch kind {
	case sim.Local:
		if read == 0 {
			// The catalogue lists no drives (an IPU-M2000's host is not
			// described): the data set is served from host memory.
			in.Storage = sim.Cached
			break
		}
		in.Local = read
		in.CacheHit = r.PageCacheHit()
	case sim.Shared, sim.SharedDB:
		if sys.SharedStorage == nil {
			return fmt.Errorf("system %q has no shared storage", sys.Name)
		}
		in.DB = sim.DB{Service: DBService, PerReader: DBPerReader}
	}
	onDevice := r.Input.Decode == "device"
	if !onDevice {
		HostDecode(in, data, node, r.Input.Workers*c.DevicesPerNode)
	}
	if onDevice {
		c.Compute.PerSample += r.Input.DeviceDecode
	}
	if dev.Kind != hw.CPU {
		switch {
		case onDevice:
			in.Copy = data.BytesPerSample // the stored (compressed) sample
		case r.Input.Precision == "int8":
			in.Copy = units.Bytes(data.InputElements())
		default:
			in.Copy = units.Bytes(float64(data.InputElements()) * 4)
		}
		in.HostToDevice = node.HostBandwidth(dev)
		if in.HostToDevice == 0 {
			return fmt.Errorf("device %q of node %q has no host-to-device bandwidth for its input", dev.Name, node.Name)
		}
	}
	return nil
}

// Network fills c.Network for point p on the catalogue's system named
// system, as Build does for a scenario on it: the node's link between its
// devices under the intra-node transport par.IntraTransport, and the
// fabric between nodes under par.Transport; an empty name takes a
// scenario's default. Of par's other fields it reads NCCLP2PDisable.
// c.Comm must be set first: a host-staged exchange or parameter servers
// need more of the network. It returns the transports it used ("" for
// intra on a node without a transport of its own, and for transport on
// one node).
func Network(cat *hw.Catalog, system string, par Parallelism, c *sim.Config, p Point) (usedTransport, usedIntra string, err error) {
	sys, node, dev, err := cat.Resolve(system)
	if err != nil {
		return "", "", err
	}
	r := &Resolved{Catalog: cat, Sys: sys, Node: node, Device: dev}
	r.Parallelism.Transport = cmp.Or(par.Transport, defaultTransport(sys))
	r.Parallelism.IntraTransport = cmp.Or(par.IntraTransport, defaultIntraTransport(sys))
	r.Parallelism.NCCLP2PDisable = par.NCCLP2PDisable
	if err := r.network(c, p); err != nil {
		return "", "", err
	}
	if p.Nodes > 1 || c.Comm.Servers > 0 {
		usedTransport = r.Parallelism.Transport
	}
	return usedTransport, r.Parallelism.IntraTransport, nil
}

// sentenceLen returns the tokens a sample of data is computed at where
// its samples are sentences of one length (sample_unit sentence, an
// input_shape of one dimension: the length each batch is padded to), 0
// otherwise (the model's default).
func sentenceLen(data *model.Dataset) int {
	if data == nil || data.SampleUnit != model.Sentence || len(data.InputShape) != 1 {
		return 0
	}
	return data.InputShape[0]
}

// HostDecode sets the decoding of in: node's host decodes and augments
// the samples of data with workers processes (0: one on every core), on
// its cores and their second hardware threads (sim.Input.Threads, with
// SMTYield). Each sample costs the dataset's CPUSecondsPerSample on the
// reference core, scaled by ReferenceClock over the clock of each busy
// core, hw.HostCPU.ClockAt of the cores that workers keep busy: the base
// clock with every core busy, up to the boost clock with few. A dataset
// that costs no decoding leaves in as it is.
func HostDecode(in *sim.Input, data *model.Dataset, node *hw.Node, workers int) {
	d := data.CPUSecondsPerSample
	if !(d > 0) {
		return
	}
	cores := max(node.CPU.Cores(), 1)
	busy := cores
	if workers > 0 {
		busy = min(workers, cores)
	}
	clock := node.CPU.ClockAt(busy)
	if !(clock > 0) {
		clock = ReferenceClock
	}
	in.Decode = units.Seconds(float64(d) * float64(ReferenceClock/clock))
	in.Cores, in.Threads, in.Workers = cores, max(node.CPU.Threads(), cores), workers
	in.SMTYield = SMTYield
}
