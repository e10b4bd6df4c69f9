package hw

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"scaleplan/internal/config"
)

var (
	deviceKinds     = []string{string(GPU), string(IPU), string(CPU)}
	netKinds        = []string{string(InfiniBandEDR), string(InfiniBandHDR), string(InfiniBandNDR), string(OmniPath), string(Ethernet), string(IPULinkNet)}
	linkKinds       = []string{string(NVLink), string(PCIe), string(IPULink), string(Memory)}
	storageKinds    = []string{string(NVMe), string(SSD), string(HDD)}
	transportNames  = []string{Verbs, IPoIB, TCP, GRPC, NCCL, GCL, SHM}
	transportScopes = []string{ScopeNode, ScopeFabric, ScopeBoth}
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
// devices or nodes that are not in c. The error is a *config.Problems.
func (c *Catalog) Validate() error {
	return c.validate(true).Err()
}

// validate collects c's problems; refs adds the checks of names that refer
// to other entries.
func (c *Catalog) validate(refs bool) *config.Problems {
	ps := &config.Problems{}
	for _, name := range sortedKeys(c.Devices) {
		c.validateDevice(ps, name, c.Devices[name])
	}
	c.validateDeviceNames(ps)
	for _, name := range sortedKeys(c.Nodes) {
		c.validateNode(ps, name, c.Nodes[name], refs)
	}
	for _, name := range sortedKeys(c.Systems) {
		c.validateSystem(ps, name, c.Systems[name], refs)
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

// positive reports a quantity that is not > 0; the value is printed with
// its unit.
func positive[T interface {
	~float64
	String() string
}](ps *config.Problems, path string, v T) {
	if !(v > 0) || math.IsInf(float64(v), 0) {
		if v == 0 {
			ps.Addf(path, "must be > 0")
		} else {
			ps.Addf(path, "must be > 0, not %s", v)
		}
	}
}

// rate reports a bandwidth that is not at least one unit (1 B/s, 1
// bit/s): positive, and not so small that the simulator's times on it
// would be past any bound (sim.MinRate).
func rate[T interface {
	~float64
	String() string
}](ps *config.Problems, path string, v T) {
	if v > 0 && v < 1 {
		ps.Addf(path, "must be at least %s, not %s", T(1), v)
		return
	}
	positive(ps, path, v)
}

func nonNegative[T interface {
	~float64
	String() string
}](ps *config.Problems, path string, v T) {
	if v < 0 || math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
		ps.Addf(path, "must be >= 0, not %s", v)
	}
}

func atLeastOne(ps *config.Problems, path string, n int) {
	if n < 1 {
		ps.Addf(path, "must be >= 1, not %d", n)
	}
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
			nonNegative(ps, p+".peak."+string(pr), d.Peak.Of(pr))
		}
	}
	positive(ps, p+".peak.fp32", d.Peak.FP32)
	if d.Kind == CPU {
		nonNegative(ps, p+".memory", d.Memory)
	} else {
		positive(ps, p+".memory", d.Memory)
	}
	rate(ps, p+".memory_bandwidth", d.MemoryBandwidth)
	nonNegative(ps, p+".sram", d.SRAM)
	nonNegative(ps, p+".tdp", d.TDP)
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
	nonNegative(ps, hl+".bandwidth", d.HostLink.Bandwidth)
}

func (c *Catalog) validateNode(ps *config.Problems, name string, n *Node, refs bool) {
	p := "nodes." + name
	checkName(ps, p, name)
	if n == nil {
		ps.Addf(p, "is empty")
		return
	}
	required(ps, p+".model", n.Model)
	required(ps, p+".device", n.Device)
	var dev *Device
	if refs && n.Device != "" {
		if d, ok := c.Devices[n.Device]; ok && d != nil {
			dev = d
		} else {
			ps.Addf(p+".device", "%s", unknownMsg("device", n.Device, c.DeviceNames()))
		}
	}
	atLeastOne(ps, p+".devices", n.Devices)

	cp := p + ".cpu"
	required(ps, cp+".model", n.CPU.Model)
	atLeastOne(ps, cp+".sockets", n.CPU.Sockets)
	atLeastOne(ps, cp+".cores_per_socket", n.CPU.CoresPerSocket)
	positive(ps, cp+".clock", n.CPU.Clock)
	if refs && n.CPU.Device != "" {
		d, ok := c.Devices[n.CPU.Device]
		switch {
		case !ok || d == nil:
			ps.Addf(cp+".device", "%s", unknownMsg("device", n.CPU.Device, c.DeviceNames()))
		case d.Kind != CPU:
			ps.Addf(cp+".device", "device %q is of kind %s, want cpu", n.CPU.Device, d.Kind)
		}
	}

	positive(ps, p+".host_memory", n.HostMemory)
	for i, s := range n.Storage {
		sp := p + ".storage" + index(i)
		oneOf(ps, sp+".kind", "storage kind", string(s.Kind), storageKinds)
		atLeastOne(ps, sp+".count", s.Count)
		positive(ps, sp+".capacity", s.Capacity)
		rate(ps, sp+".read", s.Read)
		rate(ps, sp+".write", s.Write)
	}

	lp := p + ".link"
	oneOf(ps, lp+".kind", "link kind", string(n.Link.Kind), linkKinds)
	rate(ps, lp+".bandwidth", n.Link.Bandwidth)
	nonNegative(ps, lp+".latency", n.Link.Latency)

	nonNegative(ps, p+".host_to_device", n.HostToDevice)
	if dev != nil && n.HostToDevice == 0 && !(dev.HostLink.Bandwidth > 0) {
		ps.Addf(p+".host_to_device", "is required: device %q has no host link bandwidth", n.Device)
	}

	for i, nic := range n.NICs {
		np := p + ".nics" + index(i)
		atLeastOne(ps, np+".count", nic.Count)
		if nic.Ports < 0 {
			ps.Addf(np+".ports", "must be >= 1, not %d", nic.Ports)
		}
		oneOf(ps, np+".kind", "network kind", string(nic.Kind), netKinds)
		rate(ps, np+".bandwidth", nic.Bandwidth)
	}
	nonNegative(ps, p+".power", n.Power)
}

func (c *Catalog) validateSystem(ps *config.Problems, name string, s *System, refs bool) {
	p := "systems." + name
	checkName(ps, p, name)
	if s == nil {
		ps.Addf(p, "is empty")
		return
	}
	required(ps, p+".node", s.Node)
	if refs && s.Node != "" {
		if n, ok := c.Nodes[s.Node]; !ok || n == nil {
			ps.Addf(p+".node", "%s", unknownMsg("node", s.Node, c.NodeNames()))
		}
	}
	atLeastOne(ps, p+".max_nodes", s.MaxNodes)

	fp := p + ".fabric"
	f := s.Fabric
	hasFabric := f != (Fabric{}) && f != (Fabric{Oversubscription: 1})
	if s.MaxNodes > 1 || hasFabric {
		if s.MaxNodes > 1 && !hasFabric {
			ps.Addf(fp, "is required when max_nodes is above 1")
		} else {
			oneOf(ps, fp+".kind", "network kind", string(f.Kind), netKinds)
			rate(ps, fp+".bandwidth", f.Bandwidth)
			nonNegative(ps, fp+".latency", f.Latency)
		}
	}
	if !(f.Oversubscription == 0 || f.Oversubscription >= 1) || math.IsInf(f.Oversubscription, 0) {
		ps.Addf(fp+".oversubscription", "must be >= 1 (1 is a non-blocking fabric), not %g", f.Oversubscription)
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
		nonNegative(ps, tp+".overhead", t.Overhead)
		if t.Scope != "" {
			oneOf(ps, tp+".scope", "transport scope", t.Scope, transportScopes)
		}
		if tn == IPoIB && f.Kind != "" && f.Kind != InfiniBandEDR && f.Kind != InfiniBandHDR && f.Kind != InfiniBandNDR && f.Kind != OmniPath {
			ps.Addf(tp, "needs an InfiniBand or Omni-Path fabric, not %s", f.Kind)
		}
	}

	if st := s.SharedStorage; st != nil {
		sp := p + ".shared_storage"
		rate(ps, sp+".aggregate", st.Aggregate)
		rate(ps, sp+".per_client", st.PerClient)
		if st.Aggregate > 0 && st.PerClient > st.Aggregate {
			ps.Addf(sp+".per_client", "must not exceed aggregate (%s), not %s", st.Aggregate, st.PerClient)
		}
		nonNegative(ps, sp+".latency", st.Latency)
	}
	if !(s.PricePerDeviceHour >= 0) || math.IsInf(s.PricePerDeviceHour, 0) {
		ps.Addf(p+".price_per_device_hour", "must be >= 0, not %g", s.PricePerDeviceHour)
	}
	nonNegative(ps, p+".power", s.Power)
	for _, pr := range Precisions {
		nonNegative(ps, p+".published_peak."+string(pr), s.PublishedPeak.Of(pr))
	}
}

func index(i int) string {
	return "[" + strconv.Itoa(i) + "]"
}
