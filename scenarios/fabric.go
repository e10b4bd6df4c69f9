package scenarios

import (
	"cmp"
	"fmt"
	"math"
	"strings"
	"sync"

	"scaleplan/hw"
	"scaleplan/internal/calib"
	"scaleplan/internal/units"
	"scaleplan/sim"
)

// CollectiveTime is a simulator's time of one collective of size bytes
// over every rank of cfg, alone on its network: sim.AllReduceTime, or
// sim.CollectiveTime of another op.
type CollectiveTime func(cfg sim.Config, size units.Bytes) (units.Seconds, error)

// SetFabric sets the level of n that a fabric calibration fits, under
// the exchange alg it was fitted with, to a link of bandwidth bw per
// direction and latency lat per message:
//
//   - calib.Intra: each device's port into the node's fabric, n.Intra;
//     under sim.NCCL the latency is that of NCCL's LL ring hop inside a
//     node (n.NCCLHopLatency), the one NCCL's tuning model scales all of
//     that level's hop latencies from, and n.Intra keeps its own;
//   - calib.Inter: each NIC, n.NIC, at bw, with the whole latency of a
//     hop between nodes in n.FabricLatency; the transport's efficiency
//     and overhead are in bw and lat (n.Efficiency 1, n.Overhead 0).
//
// The NIC count per node and the oversubscription stay the catalogue's.
// It panics on another level (a programmer's error: calib validates it).
func SetFabric(n *sim.Network, level string, alg sim.Algorithm, bw units.BytesPerSec, lat units.Seconds) {
	switch {
	case level == calib.Intra && alg == sim.NCCL:
		n.Intra.Bandwidth, n.NCCLHopLatency = bw, lat
	case level == calib.Intra:
		n.Intra = sim.Link{Bandwidth: bw, Latency: lat}
	case level == calib.Inter:
		n.NIC = sim.Link{Bandwidth: bw}
		n.FabricLatency, n.Efficiency, n.Overhead = lat, 1, 0
	default:
		panic("scenarios: unknown fabric level " + level)
	}
}

// FabricLevel returns the level a test of ranks devices on nodes nodes
// spans: calib.Intra on one node, calib.Inter on several.
func FabricLevel(nodes int) string {
	if nodes > 1 {
		return calib.Inter
	}
	return calib.Intra
}

// FabricSetup is a collective test placed on a catalogue system, as a
// fabric calibration fits or predicts it.
type FabricSetup struct {
	// Config is the test's placement and network: the network Network
	// builds, with the calibrated levels applied.
	Config sim.Config
	// Level is the level the test spans (FabricLevel), and Bandwidth and
	// Latency that level's figures in Config.
	Level     string
	Bandwidth units.BytesPerSec
	Latency   units.Seconds
	// Transport is the transport of Level the test crosses, as a scenario
	// names it.
	Transport string
	// Applied are the calibrated levels.
	Applied []Applied
}

// PlaceFabric places a test of ranks devices on nodes nodes (0: as few as
// hold them) of the catalogue's system, with the all-reduce alg, builds
// its network as a scenario on it would (Network, with the system's
// default transports) and applies the fabric entries of files for the
// system (ApplyFabric). It refuses, naming the field, an unknown system,
// ranks that do not fill whole nodes or need more than the system has,
// and a level the system lacks: inside a node, one device per node or a
// link without peer-to-peer (its devices exchange through host memory,
// which no link figure describes).
func PlaceFabric(cat *hw.Catalog, system string, ranks, nodes int, alg sim.Algorithm, files []CalibrationFile) (*FabricSetup, error) {
	sys, node, _, err := cat.Resolve(system)
	if err != nil {
		return nil, fmt.Errorf("system: %w", err)
	}
	if ranks < 2 {
		return nil, fmt.Errorf("ranks %d: a collective needs two or more", ranks)
	}
	if nodes <= 0 {
		nodes = (ranks + node.Devices - 1) / node.Devices
	}
	if ranks%nodes != 0 || ranks/nodes > node.Devices {
		return nil, fmt.Errorf("ranks %d on %d nodes: system %s's nodes hold %d devices each and every node as many ranks", ranks, nodes, sys.Name, node.Devices)
	}
	if nodes > sys.MaxNodes {
		return nil, fmt.Errorf("nodes %d: system %s has %d (no inter-node level to calibrate beyond it)", nodes, sys.Name, sys.MaxNodes)
	}
	per := ranks / nodes
	level := FabricLevel(nodes)
	if level == calib.Intra && !node.Link.PeerToPeer {
		return nil, fmt.Errorf("level intra: system %s's node link has no peer-to-peer; its devices exchange through host memory, which a fabric entry does not calibrate", sys.Name)
	}
	s := &FabricSetup{Level: level, Config: sim.Config{Comm: sim.Comm{Algorithm: alg}, Nodes: nodes, DevicesPerNode: per}}
	p := Point{Devices: ranks, Nodes: nodes, DevicesPerNode: per, Replicas: ranks, BatchPerDevice: 1, GlobalBatch: ranks}
	inter, intra, err := Network(cat, sys.Name, Parallelism{}, &s.Config, p)
	if err != nil {
		return nil, err
	}
	s.Applied = ApplyFabric(files, sys.Name, inter, intra, &s.Config.Network, p)
	n := s.Config.Network
	switch {
	case level == calib.Intra && alg == sim.NCCL:
		s.Transport, s.Bandwidth, s.Latency = intra, n.Intra.Bandwidth, n.NCCLHop()
	case level == calib.Intra:
		s.Transport, s.Bandwidth, s.Latency = intra, n.Intra.Bandwidth, n.Intra.Latency
	default:
		eff := n.Efficiency
		if eff == 0 {
			eff = 1
		}
		s.Transport = inter
		s.Bandwidth = units.BytesPerSec(float64(n.NIC.Bandwidth) * eff)
		s.Latency = n.NIC.Latency + n.FabricLatency + n.Overhead
	}
	return s, nil
}

// Model returns the time of one collective of size bytes by t on the
// setup's network with its level set to bw and lat (SetFabric): the
// function fit.FitFabric inverts.
func (s *FabricSetup) Model(t CollectiveTime) func(bw units.BytesPerSec, lat units.Seconds, size units.Bytes) (units.Seconds, error) {
	return func(bw units.BytesPerSec, lat units.Seconds, size units.Bytes) (units.Seconds, error) {
		c := s.Config
		SetFabric(&c.Network, s.Level, c.Comm.Algorithm, bw, lat)
		return t(c, size)
	}
}

// Applied is a level of a network that a calibration file's fabric entry
// set.
type Applied struct {
	Level string // calib.Intra or calib.Inter
	Path  string // the calibration file
}

// String is "inter from FILE".
func (a Applied) String() string { return a.Level + " from " + a.Path }

// ApplyFabric sets the levels of n that the fabric entries of files give
// for system (the first file's entry of a level; an entry naming a
// transport applies where that transport is used: inter between nodes,
// intra inside a node) and returns them: intra where p has more than one
// device a node (with peer-to-peer), inter where it has more than one
// node.
func ApplyFabric(files []CalibrationFile, system, inter, intra string, n *sim.Network, p Point) []Applied {
	var applied []Applied
	for _, lv := range []struct {
		level, transport string
		used             bool
	}{{calib.Intra, intra, p.DevicesPerNode > 1 && !n.NoPeerToPeer}, {calib.Inter, inter, p.Nodes > 1}} {
		if !lv.used {
			continue
		}
		if e, path, ok := FabricEntry(files, system, lv.level, lv.transport); ok {
			alg, _ := sim.ParseAlgorithm(e.Algorithm) // calib checked it is set; an unknown one is not NCCL's
			SetFabric(n, lv.level, alg, e.Bandwidth, e.Latency)
			applied = append(applied, Applied{lv.level, path})
		}
	}
	return applied
}

// FabricEntry returns the fabric entry ApplyFabric takes for a level
// (calib.Intra or calib.Inter) of system over transport, and its file's
// path: the first file's entry of that level, one naming the transport
// before one naming none; ok is false where no file has one.
func FabricEntry(files []CalibrationFile, system, level, transport string) (e calib.FabricEntry, path string, ok bool) {
	for _, f := range files {
		if e, ok := f.Cal.LookupFabric(system, level, transport); ok {
			return e, f.Path, true
		}
	}
	return calib.FabricEntry{}, "", false
}

// FabricFiles returns the files of files with a fabric entry for system.
func FabricFiles(files []CalibrationFile, system string) []CalibrationFile {
	var out []CalibrationFile
	for _, f := range files {
		for _, e := range f.Cal.Fabric {
			if e.System == system {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// FabricText is ApplyFabric's list as a table cell: "intra from f.yaml,
// inter from f.yaml", or "" for none.
func FabricText(applied []Applied) string {
	s := make([]string, len(applied))
	for i, a := range applied {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}

// commBandwidth returns the bandwidth of the level a comm entry's device
// counts spanned that makes the simulator's all-reduce of the gradient,
// over the largest count placed on the system, take r(p)·t_comm more than
// it takes on an unbounded link: the bandwidth at which the simulated
// exchange reproduces the fitted communication cost. The search is a
// bisection on ln B between 1 kB/s and 1 PB/s.
func commBandwidth(cfg sim.Config, level string, tComm units.Seconds, size units.Bytes, p int) (units.BytesPerSec, error) {
	target := 2 * float64(p-1) / float64(p) * float64(tComm)
	at := func(bw float64) (float64, error) {
		c := cfg
		n := &c.Network
		switch level {
		case calib.Intra:
			n.Intra.Bandwidth = units.BytesPerSec(bw)
		default:
			eff := n.Efficiency
			if eff == 0 {
				eff = 1
			}
			n.NIC.Bandwidth = units.BytesPerSec(bw / eff)
		}
		t, err := sim.AllReduceTime(c, size)
		return float64(t), err
	}
	floor, err := at(1e30)
	if err != nil {
		return 0, err
	}
	lo, hi := math.Log(1e3), math.Log(1e15)
	for range 80 {
		mid := (lo + hi) / 2
		t, err := at(math.Exp(mid))
		if err != nil {
			return 0, err
		}
		if t-floor > target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return units.BytesPerSec(math.Exp((lo + hi) / 2)), nil
}

// PickComm returns the first comm entry of files (and its file's index)
// for model on device dev at precision (PrecisionApplies; an entry naming
// no device applies to any) whose t_comm is above 0; nil and −1 if none.
// An entry whose t_comm is not above 0 measured no growth with the device
// count and sets nothing.
func PickComm(files []CalibrationFile, model string, dev *hw.Device, precision string) (*calib.CommEntry, int) {
	for i, f := range files {
		for j := range f.Cal.Comm {
			e := &f.Cal.Comm[j]
			if e.Model == model && (e.Device == "" || dev.Is(e.Device)) && PrecisionApplies(e.Precision, precision) && e.TComm > 0 {
				return e, i
			}
		}
	}
	return nil, -1
}

// commLevel caches the level a comm entry calibrates and its bandwidth,
// found once per exchange (algorithms and transport) of a scenario; safe
// for concurrent Builds.
type commLevel struct {
	mu   sync.Mutex
	fits map[string]*commFitted
}

type commFitted struct {
	level string
	bw    units.BytesPerSec
	err   error
}

// calibrateNetwork applies r's calibrations to c's network after network
// has built it from the catalogue: the fabric entries (ApplyFabric), then
// a comm entry. A comm entry's t(p) = t_fixed + r(p)·t_comm is the
// exchange's exposed time per step, so the exchange runs after the
// backward pass (sim.Comm.NoOverlap) over the level its device counts
// spanned (intra when the largest fits in a node, else inter), at the
// bandwidth with which the simulated all-reduce of the model's gradient
// over the largest count takes r(p)·t_comm beyond its latency
// (commBandwidth). A throughput law measured on more than one device
// already holds r(devices)·t_comm in its t, which the compute's fixed time
// then gives back.
func (r *Resolved) calibrateNetwork(c *sim.Config, p Point) error {
	ApplyFabric(r.Fabric, r.Sys.Name, r.Parallelism.Transport, r.Parallelism.IntraTransport, &c.Network, p)
	if r.Comm == nil {
		return nil
	}
	if c.Comm.Algorithm == sim.ParameterServer || c.Comm.Algorithm == sim.AsyncParameterServer {
		return fmt.Errorf("scenario %q: calibration %s: a comm entry sets an all-reduce's bandwidth; parallelism.all_reduce %v is none", r.Name, r.CommBy, c.Comm.Algorithm)
	}
	lv := r.commBW.get(r, *c)
	if lv.err != nil {
		return lv.err
	}
	n := &c.Network
	if lv.level == calib.Intra {
		n.Intra.Bandwidth = lv.bw
	} else {
		n.NIC.Bandwidth = units.BytesPerSec(float64(lv.bw) / cmp.Or(n.Efficiency, 1))
	}
	c.Comm.NoOverlap = true
	if cal := r.Calibration; cal != nil && cal.Devices > 1 {
		held := units.Seconds(2 * float64(cal.Devices-1) / float64(cal.Devices) * float64(r.Comm.TComm))
		cut := min(held, c.Compute.Fixed)
		c.Compute.Fixed -= cut
		c.Compute.Update = max(0, c.Compute.Update-(held-cut))
	}
	return nil
}

// get returns the fit of r's comm entry for c's exchange, fitting it on
// first use.
func (l *commLevel) get(r *Resolved, c sim.Config) *commFitted {
	key := fmt.Sprintf("%v/%v/%s/%s", c.Comm.Algorithm, c.Comm.InterNode, r.Parallelism.Transport, r.Parallelism.IntraTransport)
	l.mu.Lock()
	defer l.mu.Unlock()
	if f, ok := l.fits[key]; ok {
		return f
	}
	f := &commFitted{}
	f.level, f.bw, f.err = r.commFit(c)
	if l.fits == nil {
		l.fits = map[string]*commFitted{}
	}
	l.fits[key] = f
	return f
}

// commFit returns the level r.Comm's device counts spanned and the
// bandwidth that reproduces its t_comm (see calibrateNetwork), for the
// exchange of c.
func (r *Resolved) commFit(c sim.Config) (string, units.BytesPerSec, error) {
	e := r.Comm
	pmax := 0
	for _, n := range e.Counts {
		pmax = max(pmax, n)
	}
	per := min(pmax, r.Node.Devices)
	nodes := (pmax + per - 1) / per
	level := FabricLevel(nodes)
	where := fmt.Sprintf("scenario %q: calibration %s: comm entry of %s over %v devices", r.Name, r.CommBy, e.Model, e.Counts)
	if level == calib.Intra && !r.PeerToPeer() {
		return "", 0, fmt.Errorf("%s: the devices of system %s exchange through host memory (a node link without peer-to-peer, or parallelism.nccl_p2p_disable), so no link bandwidth gives its cost", where, r.Sys.Name)
	}
	if nodes > r.Sys.MaxNodes {
		return "", 0, fmt.Errorf("%s: %d nodes of %d; system %s has %d", where, nodes, per, r.Sys.Name, r.Sys.MaxNodes)
	}
	var size units.Bytes
	for _, b := range c.Comm.Layers {
		size += b
	}
	pt := Point{Devices: nodes * per, Nodes: nodes, DevicesPerNode: per, Replicas: nodes * per, BatchPerDevice: 1, GlobalBatch: nodes * per}
	c.Nodes, c.DevicesPerNode, c.Network = nodes, per, sim.Network{}
	if err := r.network(&c, pt); err != nil {
		return "", 0, fmt.Errorf("%s: %w", where, err)
	}
	ApplyFabric(r.Fabric, r.Sys.Name, r.Parallelism.Transport, r.Parallelism.IntraTransport, &c.Network, pt)
	bw, err := commBandwidth(c, level, e.TComm, size, nodes*per)
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", where, err)
	}
	return level, bw, nil
}
