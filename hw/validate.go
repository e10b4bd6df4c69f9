package hw

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"scaleplan/internal/config"
	"scaleplan/internal/units"
)

var (
	deviceKinds     = []string{string(GPU), string(IPU), string(CPU)}
	netKinds        = []string{string(InfiniBandEDR), string(InfiniBandHDR), string(InfiniBandNDR), string(OmniPath), string(Ethernet), string(IPULinkNet)}
	linkKinds       = []string{string(NVLink), string(PCIe), string(IPULink), string(Memory)}
	storageKinds    = []string{string(NVMe), string(SSD), string(HDD)}
	transportNames  = []string{Verbs, IPoIB, TCP, TCPXO, GRPC, NCCL, GCL, SHM}
	transportScopes = []string{ScopeNode, ScopeFabric, ScopeBoth}
	ncclProtocols   = []string{"ll", "ll128", "simple"} // NCCL_PROTO's names
	validName       = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
)

// Validate reports every problem of c at once, each with its YAML path, such
// as
//
//	systems.tsubame3.fabric.bandwidth: must be > 0
//
// Impossible values are errors: missing required fields, zero or negative
// counts, bandwidths and capacities, a max_nodes below 1, a transport
// efficiency outside (0, 1], an oversubscription below 1, and names of
// devices or nodes that are not in c. So are implausible ones: a figure
// outside the range its field's comment gives (peaks within 1 MFLOP/s to
// 1 EFLOP/s, bandwidths within 1 MB/s to 1 PB/s, memory within 1 MiB to
// 100 TiB, latencies at most 1 s, ...), NaN or infinite, reported with the
// value and the range:
//
//	devices.x.peak.fp32: must be within 1 MFLOP/s to 1 EFLOP/s, not 4.941e-324 FLOP/s
//
// The error is a *config.Problems.
func (c *Catalog) Validate() error {
	return c.validate(true).Err()
}

// validate collects c's problems; refs adds the checks of names that refer
// to other entries.
func (c *Catalog) validate(refs bool) *config.Problems {
	ps := &config.Problems{}
	var rn *refNames
	if refs {
		rn = &refNames{c: c}
	}
	for _, name := range sortedKeys(c.Devices) {
		c.validateDevice(ps, name, c.Devices[name])
	}
	c.validateDeviceNames(ps)
	for _, name := range sortedKeys(c.Nodes) {
		c.validateNode(ps, name, c.Nodes[name], rn)
	}
	for _, name := range sortedKeys(c.Systems) {
		c.validateSystem(ps, name, c.Systems[name], rn)
	}
	return ps
}

// validateDeviceNames reports a device name (Device.Names) that is empty
// or that names another device too, by its key or one of its names.
func (c *Catalog) validateDeviceNames(ps *config.Problems) {
	owner := map[string]string{} // lower-case name → device key
	for _, k := range sortedKeys(c.Devices) {
		owner[strings.ToLower(k)] = k
	}
	for _, k := range sortedKeys(c.Devices) {
		d := c.Devices[k]
		if d == nil {
			continue
		}
		for i, n := range d.Names {
			path := fmt.Sprintf("devices.%s.names[%d]", k, i)
			key := strings.ToLower(strings.TrimSpace(n))
			switch o, ok := owner[key]; {
			case key == "":
				ps.Addf(path, "is empty")
			case ok && o != k:
				ps.Addf(path, "%q already names device %s", n, o)
			case ok:
				ps.Addf(path, "%q names %s twice", n, k)
			default:
				owner[key] = k
			}
		}
	}
}

func checkName(ps *config.Problems, path, name string) {
	if !validName.MatchString(name) {
		ps.Addf(path, "name %q must be lowercase letters, digits, '-' or '_', starting with a letter or digit", name)
	}
}

func required(ps *config.Problems, path, v string) {
	if v == "" {
		ps.Addf(path, "is required")
	}
}

// maxMisalignedGEMM bounds Device.MisalignedGEMM: a product on the CUDA
// cores instead of the tensor cores is at most about 16 times slower (an
// H100's fp16 tensor peak over its fp32 peak, 989.5/67 = 14.8).
const maxMisalignedGEMM = 16

// ncclArchs are the rows of NCCL's per-architecture tuning tables
// (Device.NCCLArch).
var ncclArchs = []string{"volta", "ampere", "hopper", "blackwell"}

func oneOf(ps *config.Problems, path, kind, v string, valid []string) {
	if v == "" {
		ps.Addf(path, "is required")
		return
	}
	for _, s := range valid {
		if v == s {
			return
		}
	}
	ps.Addf(path, "%s", unknownMsg(kind, v, valid))
}

func (c *Catalog) validateDevice(ps *config.Problems, name string, d *Device) {
	p := "devices." + name
	checkName(ps, p, name)
	if d == nil {
		ps.Addf(p, "is empty")
		return
	}
	required(ps, p+".model", d.Model)
	required(ps, p+".vendor", d.Vendor)
	oneOf(ps, p+".kind", "device kind", string(d.Kind), deviceKinds)
	for _, pr := range Precisions {
		if pr != FP32 { // every device has an fp32 peak, checked below
			optional(ps, p+".peak."+string(pr), d.Peak.Of(pr), peakSpan)
		}
	}
	need(ps, p+".peak.fp32", d.Peak.FP32, peakSpan)
	if d.Kind == CPU {
		optional(ps, p+".memory", d.Memory, memorySpan)
	} else {
		need(ps, p+".memory", d.Memory, memorySpan)
	}
	need(ps, p+".memory_bandwidth", d.MemoryBandwidth, byteRateSpan)
	optional(ps, p+".sram", d.SRAM, sramSpan)
	optional(ps, p+".tdp", d.TDP, powerSpan)
	optionalCount(ps, p+".sms", d.SMs, maxSMs)
	optionalCount(ps, p+".nccl_channels", d.NCCLChannels, maxNCCLChannels)
	if d.NCCLArch != "" {
		oneOf(ps, p+".nccl_arch", "NCCL architecture", d.NCCLArch, ncclArchs)
	}
	measuredFraction(ps, p+".conv_efficiency.tensor", d.ConvEfficiency.Tensor)
	measuredFraction(ps, p+".conv_efficiency.cuda", d.ConvEfficiency.CUDA)
	measuredFraction(ps, p+".gemm_efficiency.tensor", d.GEMMEfficiency.Tensor)
	measuredFraction(ps, p+".gemm_efficiency.cuda", d.GEMMEfficiency.CUDA)
	measuredFraction(ps, p+".nchw_batch_norm", d.NCHWBatchNorm)
	if v := d.MisalignedGEMM; v != 0 && !(v >= 1 && v <= maxMisalignedGEMM) {
		ps.Addf(p+".misaligned_gemm", "must be 0 (not measured) or in [1, %d] times an aligned product's time, not %g", maxMisalignedGEMM, v)
	}
	if v := d.OddGEMM; v != 0 && !(v >= 1 && v <= maxMisalignedGEMM) {
		ps.Addf(p+".odd_gemm", "must be 0 (as misaligned_gemm) or in [1, %d] times an aligned product's time, not %g", maxMisalignedGEMM, v)
	}
	validateWinograd(ps, p+".winograd.forward", d.Winograd.Forward)
	validateWinograd(ps, p+".winograd.grad_input", d.Winograd.GradInput)
	validateWinograd(ps, p+".winograd.grad_weight", d.Winograd.GradWeight)
	optional(ps, p+".l2_bandwidth", d.L2Bandwidth, byteRateSpan)
	if d.L2Bandwidth > 0 && d.L2Bandwidth < d.MemoryBandwidth {
		ps.Addf(p+".l2_bandwidth", "must be at least memory_bandwidth (%s), not %s", d.MemoryBandwidth, d.L2Bandwidth)
	}
	hl := p + ".host_link"
	switch {
	case d.HostLink.Gen == 0:
		if d.HostLink.Lanes != 0 {
			ps.Addf(hl+".gen", "is required with lanes")
		}
	case d.HostLink.Gen < 0 || d.HostLink.Gen > 6:
		ps.Addf(hl+".gen", "must be a PCIe generation from 1 to 6, not %d", d.HostLink.Gen)
	default:
		switch d.HostLink.Lanes {
		case 1, 2, 4, 8, 16, 32:
		case 0:
			ps.Addf(hl+".lanes", "is required with gen")
		default:
			ps.Addf(hl+".lanes", "must be 1, 2, 4, 8, 16 or 32, not %d", d.HostLink.Lanes)
		}
	}
	optional(ps, hl+".bandwidth", d.HostLink.Bandwidth, byteRateSpan)
}

// measuredFraction checks that a measured efficiency v is 0 (not
// measured) or in (0, 1].
func measuredFraction(ps *config.Problems, path string, v float64) {
	if v != 0 && !(v > 0 && v <= 1) {
		ps.Addf(path, "must be 0 (not measured) or in (0, 1], not %g", v)
	}
}

// validateWinograd checks one pass of a device's Winograd rates.
func validateWinograd(ps *config.Problems, path string, w WinogradPass) {
	if w.Rate != 0 && !(w.Rate > 0 && w.Rate <= maxWinogradRate) {
		ps.Addf(path+".rate", "must be 0 (not measured) or in (0, %g] times the fp32 peak, not %g", maxWinogradRate, w.Rate)
	}
	if !(w.Channels >= 0 && w.Channels <= maxWinogradChannels) {
		ps.Addf(path+".channels", "must be in [0, %d], not %g", maxWinogradChannels, w.Channels)
	}
	if w.Rate == 0 && w.Channels != 0 {
		ps.Addf(path+".channels", "is %g without a rate", w.Channels)
	}
}

// Bounds of a Winograd pass: F(4×4, 3×3)'s 144/36 multiplications saved,
// and a transform cost far above any measured one.
const (
	maxWinogradRate     = 4.0
	maxWinogradChannels = 4096
)

// validateNode checks node n; rn, if not nil, checks the names it refers to.
func (c *Catalog) validateNode(ps *config.Problems, name string, n *Node, rn *refNames) {
	p := "nodes." + name
	checkName(ps, p, name)
	if n == nil {
		ps.Addf(p, "is empty")
		return
	}
	required(ps, p+".model", n.Model)
	required(ps, p+".device", n.Device)
	var dev *Device
	if rn != nil && n.Device != "" {
		if d, ok := c.Devices[n.Device]; ok && d != nil {
			dev = d
		} else {
			ps.Addf(p+".device", "%s", rn.unknown("device", n.Device))
		}
	}
	count(ps, p+".devices", n.Devices, maxNodeDevices)

	cp := p + ".cpu"
	required(ps, cp+".model", n.CPU.Model)
	count(ps, cp+".sockets", n.CPU.Sockets, maxSockets)
	count(ps, cp+".cores_per_socket", n.CPU.CoresPerSocket, maxCoresPerSocket)
	need(ps, cp+".clock", n.CPU.Clock, clockSpan)
	optional(ps, cp+".boost_clock", n.CPU.Boost, clockSpan)
	optionalCount(ps, cp+".threads_per_core", n.CPU.ThreadsPerCore, maxThreadsPerCore)
	if b := n.CPU.Boost; b > 0 && b < n.CPU.Clock {
		ps.Addf(cp+".boost_clock", "%v is below the base clock %v", b, n.CPU.Clock)
	}
	if rn != nil && n.CPU.Device != "" {
		d, ok := c.Devices[n.CPU.Device]
		switch {
		case !ok || d == nil:
			ps.Addf(cp+".device", "%s", rn.unknown("device", n.CPU.Device))
		case d.Kind != CPU:
			ps.Addf(cp+".device", "device %q is of kind %s, want cpu", n.CPU.Device, d.Kind)
		}
	}

	need(ps, p+".host_memory", n.HostMemory, memorySpan)
	for i, s := range n.Storage {
		sp := p + ".storage" + index(i)
		oneOf(ps, sp+".kind", "storage kind", string(s.Kind), storageKinds)
		count(ps, sp+".count", s.Count, maxDrives)
		need(ps, sp+".capacity", s.Capacity, driveSpan)
		need(ps, sp+".read", s.Read, byteRateSpan)
		need(ps, sp+".write", s.Write, byteRateSpan)
	}

	lp := p + ".link"
	oneOf(ps, lp+".kind", "link kind", string(n.Link.Kind), linkKinds)
	need(ps, lp+".bandwidth", n.Link.Bandwidth, byteRateSpan)
	latency(ps, lp+".latency", n.Link.Latency)
	if n.Link.InNetworkReduction && (n.Link.Kind != NVLink || !n.Link.PeerToPeer) {
		ps.Addf(lp+".in_network_reduction", "needs kind nvlink with peer_to_peer (an NVSwitch that reduces), not kind %q with peer_to_peer %v", n.Link.Kind, n.Link.PeerToPeer)
	}

	optional(ps, p+".host_to_device", n.HostToDevice, byteRateSpan)
	optional(ps, p+".shm_bandwidth", n.SHMBandwidth, byteRateSpan)
	if v := n.SHMCrossSocket; v != 0 && !(v > 0 && v <= 1) {
		ps.Addf(p+".shm_cross_socket", "must be 0 (the default share) or in (0, 1], not %g", v)
	}
	if dev != nil && n.HostToDevice == 0 && !(dev.HostLink.Bandwidth > 0) {
		ps.Addf(p+".host_to_device", "is required: device %q has no host link bandwidth", n.Device)
	}

	for i, nic := range n.NICs {
		np := p + ".nics" + index(i)
		count(ps, np+".count", nic.Count, maxNICs)
		if nic.Ports < 0 || nic.Ports > maxPorts {
			ps.Addf(np+".ports", "must be within 1 to %d (0 means 1), not %d", maxPorts, nic.Ports)
		}
		oneOf(ps, np+".kind", "network kind", string(nic.Kind), netKinds)
		need(ps, np+".bandwidth", nic.Bandwidth, bitRateSpan)
	}
	optional(ps, p+".power", n.Power, powerSpan)
	if t := n.PCIeTree; t != nil {
		validateTree(ps, p+".pcie_tree", t, n)
	}
}

// validateTree checks node n's PCIe tree t at path p.
func validateTree(ps *config.Problems, p string, t *PCIeTree, n *Node) {
	if t.DevicesPerSwitch < 1 || (n.Devices > 0 && t.DevicesPerSwitch > n.Devices) {
		ps.Addf(p+".devices_per_switch", "must be within 1 to the node's %d devices, not %d", n.Devices, t.DevicesPerSwitch)
	}
	need(ps, p+".uplink", t.Uplink, byteRateSpan)
	if n.CPU.Sockets > 1 {
		need(ps, p+".inter_socket", t.InterSocket, byteRateSpan)
	} else {
		optional(ps, p+".inter_socket", t.InterSocket, byteRateSpan)
	}
	if ports := n.fabricPorts(); t.NICsPerSwitch < 0 || t.NICsPerSwitch > ports {
		ps.Addf(p+".nics_per_switch", "must be within 0 (NICs on the root complex) to the node's %d NIC ports, not %d", ports, t.NICsPerSwitch)
	}
	if n.CPU.Sockets > maxTreeSockets {
		ps.Addf(p, "models at most %d CPU sockets; the node has %d", maxTreeSockets, n.CPU.Sockets)
	}
}

// fabricPorts returns the number of n's NIC ports that are not the
// host's own (NIC.Host).
func (n *Node) fabricPorts() int {
	ports := 0
	for _, nic := range n.NICs {
		if !nic.Host {
			ports += nic.PortCount()
		}
	}
	return ports
}

// validateSystem checks system s; rn, if not nil, checks the names it
// refers to.
func (c *Catalog) validateSystem(ps *config.Problems, name string, s *System, rn *refNames) {
	p := "systems." + name
	checkName(ps, p, name)
	if s == nil {
		ps.Addf(p, "is empty")
		return
	}
	required(ps, p+".node", s.Node)
	if rn != nil && s.Node != "" {
		if n, ok := c.Nodes[s.Node]; !ok || n == nil {
			ps.Addf(p+".node", "%s", rn.unknown("node", s.Node))
		}
	}
	count(ps, p+".max_nodes", s.MaxNodes, maxNodes)

	fp := p + ".fabric"
	f := s.Fabric
	hasFabric := f != (Fabric{}) && f != (Fabric{Oversubscription: 1})
	if s.MaxNodes > 1 || hasFabric {
		if s.MaxNodes > 1 && !hasFabric {
			ps.Addf(fp, "is required when max_nodes is above 1")
		} else {
			oneOf(ps, fp+".kind", "network kind", string(f.Kind), netKinds)
			need(ps, fp+".bandwidth", f.Bandwidth, bitRateSpan)
			latency(ps, fp+".latency", f.Latency)
		}
	}
	switch o := f.Oversubscription; {
	case !(o == 0 || o >= 1):
		ps.Addf(fp+".oversubscription", "must be >= 1 (1 is a non-blocking fabric), not %g", o)
	case o > maxOversubscription:
		ps.Addf(fp+".oversubscription", "must be at most %d, not %g", maxOversubscription, o)
	}

	if len(s.Transports) == 0 {
		ps.Addf(p+".transports", "at least one transport is required")
	}
	for _, tn := range sortedKeys(s.Transports) {
		t := s.Transports[tn]
		tp := p + ".transports." + tn
		oneOf(ps, tp, "transport", tn, transportNames)
		if !(t.Efficiency > 0 && t.Efficiency <= 1) {
			ps.Addf(tp+".efficiency", "must be in (0, 1], not %g", t.Efficiency)
		}
		latency(ps, tp+".overhead", t.Overhead)
		optional(ps, tp+".per_flow", t.PerFlow, bitRateSpan)
		if t.Streams < 0 || t.Streams > maxStreams {
			ps.Addf(tp+".streams", "must be within 1 to %d, not %d", maxStreams, t.Streams)
		}
		if t.Scope != "" {
			oneOf(ps, tp+".scope", "transport scope", t.Scope, transportScopes)
		}
		for i, pr := range t.NCCLProtocols {
			oneOf(ps, fmt.Sprintf("%s.nccl_protocols[%d]", tp, i), "NCCL protocol", pr, ncclProtocols)
		}
		if t.NCCLBuffSize < 0 || t.NCCLBuffSize > units.GiB {
			ps.Addf(tp+".nccl_buffsize", "must be within 0 (NCCL's default) to 1 GiB, not %v", t.NCCLBuffSize)
		}
		if tn == IPoIB && f.Kind != "" && f.Kind != InfiniBandEDR && f.Kind != InfiniBandHDR && f.Kind != InfiniBandNDR && f.Kind != OmniPath {
			ps.Addf(tp, "needs an InfiniBand or Omni-Path fabric, not %s", f.Kind)
		}
	}

	if st := s.SharedStorage; st != nil {
		sp := p + ".shared_storage"
		need(ps, sp+".aggregate", st.Aggregate, byteRateSpan)
		need(ps, sp+".per_client", st.PerClient, byteRateSpan)
		if st.Aggregate > 0 && st.PerClient > st.Aggregate {
			ps.Addf(sp+".per_client", "must not exceed aggregate (%s), not %s", st.Aggregate, st.PerClient)
		}
		latency(ps, sp+".latency", st.Latency)
	}
	switch pr := s.PricePerDeviceHour; {
	case !(pr >= 0):
		ps.Addf(p+".price_per_device_hour", "must be >= 0, not %g", pr)
	case pr > maxPrice:
		ps.Addf(p+".price_per_device_hour", "must be at most %d, not %g", maxPrice, pr)
	}
	optional(ps, p+".power", s.Power, powerSpan)
	for _, pr := range PeakPrecisions {
		optional(ps, p+".published_peak."+string(pr), s.PublishedPeak.Of(pr), systemPeakSpan)
	}
}

func index(i int) string {
	return "[" + strconv.Itoa(i) + "]"
}

// refNames words the problems of names that refer to other entries: it
// lists the catalogue's device and node names once, and searches near
// names through one config.Suggester, so that thousands of unknown names
// cost time linear in their number.
type refNames struct {
	c              *Catalog
	devices, nodes []string
	sug            config.Suggester
}

// unknown is the message for an unknown name of kind "device" or "node".
func (r *refNames) unknown(kind, name string) string {
	var valid *[]string
	list := r.c.DeviceNames
	if kind == "node" {
		valid, list = &r.nodes, r.c.NodeNames
	} else {
		valid = &r.devices
	}
	if *valid == nil {
		*valid = list()
	}
	return r.sug.Unknown(kind, name, *valid)
}
