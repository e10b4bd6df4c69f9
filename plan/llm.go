package plan

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"scaleplan/compute"
	"scaleplan/hw"
	"scaleplan/internal/calib"
	"scaleplan/internal/units"
	"scaleplan/llm"
	"scaleplan/model"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// DefaultLLMBatchTokens is the tokens per step when a request gives no
// global batch: 4 Mi tokens, Llama 2's "global batch-size of 4M tokens"
// (Touvron et al. 2023, Section 2.2), as a power of two of sequences.
const DefaultLLMBatchTokens = 1 << 22

// LLMRequest asks for the best layouts of a transformer on a system.
type LLMRequest struct {
	// Model is a shipped transformer shape (model.TransformerShapes);
	// System a catalogue system; GPUs the GPUs to use, a multiple of a
	// node's (or fewer than one node). MaxGPUs, when above GPUs, searches
	// the counts of GPUChoices from GPUs to MaxGPUs, whole nodes.
	Model, System string
	GPUs, MaxGPUs int
	// GlobalBatches is the sequences per step to search; none takes the
	// powers of two within the model's published range
	// (PublishedBatches), or DefaultLLMBatchTokens of its sequence length.
	GlobalBatches []int
	// Tokens is a token budget to train; 0 for none. Deadline bounds the
	// time to train it and Budget its device-hours and dollars (at the
	// system's price); with a deadline the plan ranks the layouts that
	// meet both cheapest first, else fastest first. Either wants Tokens.
	Tokens   float64
	Deadline units.Seconds
	Budget   Budget
	// Precision is the matrix products' precision: bf16 (the default) or
	// fp8 (Transformer Engine's FP8 linear layers, bf16 elsewhere:
	// FP8GEMMs).
	Precision hw.Precision
	// Top is the layouts to return; default 10.
	Top int
	// Efficiency, when set, times compute on the roofline at that
	// fraction of peak for matrix products; 0 takes the operator model
	// (OperatorTime), or for a device without an SM count the roofline at
	// llm.DefaultMatMulEfficiency.
	Efficiency float64
	// Calibrations are calibration files (FitLLM's llm entries, written
	// by `fit --llm --out`): the first entry of the system's device at
	// Precision multiplies its operator times by its factor. A file list
	// without such an entry is an error.
	Calibrations []string
	// Host is the planned machines' host costs (a table of `scaleplan
	// bench host`, compute.ReadHostFile): the operator model charges each
	// kernel its measured dispatch and launch (cuda_op) in place of the
	// published eager launch (OperatorTime). nil: the published launch.
	// It wants the operator model: with Efficiency set, or on a device
	// without an SM count, it is an error.
	Host *compute.HostCosts
	// Catalog is the hardware catalogue; nil takes hw.Default().
	Catalog *hw.Catalog
}

// LLMPlan is the answer to an LLMRequest.
type LLMPlan struct {
	Model, System, Device string
	// GPUs are the GPU counts searched, Nodes the nodes of the largest.
	GPUs               []int
	Nodes, GPUsPerNode int
	// GlobalBatches are the batches searched, in sequences of SeqLen.
	GlobalBatches []int
	SeqLen        int
	// Peak is one GPU's dense bf16 peak, MFU's denominator (at fp8 too,
	// as NVIDIA's and MLPerf's reports count it).
	Peak units.FLOPsPerSec
	// Compute says how operators are timed: "operator model" (with
	// "each kernel's launch the host's measured cuda_op" given
	// LLMRequest.Host) or "roofline at E of peak"; Precision is the matrix
	// products'.
	Compute   string
	Precision hw.Precision
	// Tokens is the token budget; Deadline and MaxGPUHours the bounds
	// on its training (0: none), PricePerGPUHour the system's price.
	Tokens          float64
	Deadline        units.Seconds
	MaxGPUHours     float64
	PricePerGPUHour float64
	// BeyondSystem says the GPUs exceed the system's nodes: the plan is
	// for a larger cluster of the same nodes and fabric.
	BeyondSystem bool
	// Calibration is the llm entry that scaled the operator times, nil
	// without one; CalibrationFile the file it came from.
	Calibration     *calib.LLMEntry
	CalibrationFile string
	Result          llm.SearchResult
}

// LLM searches the layouts of req.Model on req.GPUs (to req.MaxGPUs) GPUs
// of req.System (llm.Search) with the operator model (llmHardware) and
// the system's network, whose collectives sim.Collectives times as NCCL
// runs them.
func LLM(req LLMRequest) (LLMPlan, error) {
	cat := req.Catalog
	if cat == nil {
		var err error
		if cat, err = hw.Default(); err != nil {
			return LLMPlan{}, err
		}
	}
	if err := req.check(); err != nil {
		return LLMPlan{}, err
	}
	t, err := llmShape(req.Model)
	if err != nil {
		return LLMPlan{}, err
	}
	sys, node, dev, err := cat.Resolve(req.System)
	if err != nil {
		return LLMPlan{}, err
	}
	g := node.Devices
	gpus, batches, err := req.choices(t, g)
	if err != nil {
		return LLMPlan{}, err
	}
	h, how, err := llmHardware(cat, req.System, req.Precision, req.Efficiency, t.FusedAttention, req.Host)
	if err != nil {
		return LLMPlan{}, err
	}
	h.GPUsPerNode = min(g, gpus[0])
	cal, file, err := llmCalibration(req.Calibrations, dev.Name, cmp.Or(req.Precision, hw.BF16))
	if err != nil {
		return LLMPlan{}, err
	}
	if cal != nil {
		h.Compute = ScaledOpTime(h.Compute, cal.Factor)
	}
	out := LLMPlan{Model: t.Name, System: sys.Name, Device: dev.Name, GPUs: gpus, Nodes: (gpus[len(gpus)-1] + g - 1) / g,
		GPUsPerNode: h.GPUsPerNode, SeqLen: t.SeqLen, Peak: h.Peak, Compute: how, Precision: cmp.Or(req.Precision, hw.BF16), Tokens: req.Tokens,
		Deadline: req.Deadline, PricePerGPUHour: sys.PricePerDeviceHour, GlobalBatches: batches}
	out.BeyondSystem = out.Nodes > sys.MaxNodes
	out.Calibration, out.CalibrationFile = cal, file
	if out.MaxGPUHours, err = req.gpuHours(sys.Name, sys.PricePerDeviceHour); err != nil {
		return out, err
	}
	s := llm.Search{Shape: t, GPUChoices: gpus, GlobalBatches: out.GlobalBatches, Top: req.Top, Hardware: h,
		Tokens: req.Tokens, Deadline: req.Deadline, MaxGPUHours: out.MaxGPUHours}
	out.Result, err = s.Run()
	return out, err
}

// choices returns the GPU counts (GPUChoices) and global batches (the
// request's, else batchChoices) to search for t on nodes of g GPUs.
func (r LLMRequest) choices(t model.TransformerShape, g int) (gpus, batches []int, err error) {
	batches = r.GlobalBatches
	if len(batches) == 0 {
		batches = batchChoices(t.Name, t.SeqLen)
	}
	if hi := max(r.GPUs, r.MaxGPUs); hi > sim.MaxRanks {
		return nil, nil, fmt.Errorf("llm plan: gpus %d: want 1 to %d GPUs of one node, or multiples of its %d up to %d", hi, g, g, sim.MaxRanks)
	}
	gpus, err = GPUChoices(r.GPUs, max(r.GPUs, r.MaxGPUs), g, t.Layers, batches)
	return gpus, batches, err
}

// check reports the fields of r out of range.
func (r LLMRequest) check() error {
	bad := func(x float64) bool { return x < 0 || math.IsNaN(x) || math.IsInf(x, 0) }
	if bad(r.Tokens) {
		return fmt.Errorf("llm plan: tokens %g: want 0 or a positive budget", r.Tokens)
	}
	if bad(float64(r.Deadline)) || bad(r.Budget.DeviceHours) || bad(r.Budget.Dollars) {
		return fmt.Errorf("llm plan: deadline %v, budget %v: want each 0 or positive", r.Deadline, r.Budget)
	}
	if r.Budget.KWh != 0 {
		return fmt.Errorf("llm plan: budget %v: an energy budget is not planned for LLMs; want device-hours or dollars", r.Budget)
	}
	if r.Tokens == 0 && (r.Deadline > 0 || !r.Budget.IsZero()) {
		return fmt.Errorf("llm plan: a deadline or budget wants a token budget to train (tokens)")
	}
	if slices.ContainsFunc(r.GlobalBatches, func(b int) bool { return b < 1 }) {
		return fmt.Errorf("llm plan: global batches %v: want each at least 1", r.GlobalBatches)
	}
	return nil
}

// gpuHours returns the GPU-hours the budget allows on a system of price
// dollars per GPU-hour: the fewer of its device-hours and its dollars'
// worth; 0 without a budget.
func (r LLMRequest) gpuHours(system string, price float64) (float64, error) {
	h := r.Budget.DeviceHours
	if d := r.Budget.Dollars; d > 0 {
		if !(price > 0) {
			return 0, fmt.Errorf("llm plan: budget $%g: the catalogue has no price per device-hour for %s; give device-hours", d, system)
		}
		if h == 0 || d/price < h {
			h = d / price
		}
	}
	return h, nil
}

// llmHardware returns the llm.Hardware of the catalogue's system: its
// node's GPUs, a GPU's memory and bf16 peak (MFU's denominator at either
// precision), the network's collectives (commGrid) and the operators'
// time at precision p (bf16, the default, or fp8: FP8GEMMs), with a
// description of how they are timed: the roofline at efficiency e when
// e is set, else the operator model (OperatorTime, attention fused or
// not, each kernel's launch host's where host measured it), else, for a
// device without an SM count, the roofline at
// llm.DefaultMatMulEfficiency. The roofline charges no launch, so a
// host table with it is an error.
func llmHardware(cat *hw.Catalog, system string, p hw.Precision, e float64, fused bool, host *compute.HostCosts) (llm.Hardware, string, error) {
	sys, node, dev, err := cat.Resolve(system)
	if err != nil {
		return llm.Hardware{}, "", err
	}
	p = cmp.Or(p, hw.BF16)
	peak := dev.PeakFLOPs(hw.BF16)
	if !(peak > 0) || !(dev.MemoryBandwidth > 0) {
		return llm.Hardware{}, "", fmt.Errorf("llm plan: device %q of system %q has no bf16 peak or memory bandwidth", dev.Name, sys.Name)
	}
	if p != hw.BF16 && p != hw.FP8 || p == hw.FP8 && !(dev.PeakFLOPs(hw.FP8) > 0) {
		return llm.Hardware{}, "", fmt.Errorf("llm plan: precision %q on %s: want bf16, or fp8 on a device with an fp8 peak", p, dev.Name)
	}
	if e < 0 || e > 1 || math.IsNaN(e) {
		return llm.Hardware{}, "", fmt.Errorf("llm plan: efficiency %g: want in (0, 1], or 0 for the operator model", e)
	}
	grid := newCommGrid(cat, sys.Name)
	h := llm.Hardware{GPUsPerNode: node.Devices, Memory: dev.Memory, Peak: peak, Comm: grid.time}
	if e == 0 {
		op, err := OperatorTime(dev, p, fused, host)
		if err == nil {
			h.Compute = op
			if host != nil && host.Kernel > 0 {
				return h, "operator model (each kernel's launch the host's measured cuda_op)", nil
			}
			return h, "operator model", nil
		}
		if !errors.Is(err, compute.ErrNoModel) {
			return h, "", err
		}
		e = llm.DefaultMatMulEfficiency
	}
	if host != nil {
		return h, "", fmt.Errorf("llm plan: host costs on %s: the roofline at %.2f of peak charges no kernel launch; they want the operator model (no efficiency, a device with an SM count)", dev.Name, e)
	}
	h.Compute = llm.RooflineTime(peak, dev.MemoryBandwidth, e)
	if p == hw.FP8 {
		h.Compute = FP8GEMMs(llm.RooflineTime(dev.PeakFLOPs(hw.FP8), dev.MemoryBandwidth, e), h.Compute)
	}
	return h, fmt.Sprintf("roofline at %.2f of peak", e), nil
}

// commGrid times collectives with sim.CollectiveTime on a system's
// network, at sizes that are powers of two, and interpolates linearly
// between them: NCCL's cost of one algorithm and protocol is
// latency + size/bandwidth, linear in the size, so the interpolation is
// exact where the choice does not change between two powers of two. A
// search asks for thousands of sizes; this times a few per group, on
// one network per group built once (sim.Collectives).
type commGrid struct {
	cat    *hw.Catalog
	system string
	times  map[gridKey]units.Seconds
	nets   map[llm.Group]*sim.Collectives
}

// newCommGrid returns an empty grid of system's collectives.
func newCommGrid(cat *hw.Catalog, system string) *commGrid {
	return &commGrid{cat: cat, system: system, times: map[gridKey]units.Seconds{}, nets: map[llm.Group]*sim.Collectives{}}
}

type gridKey struct {
	c    llm.Collective
	g    llm.Group
	size units.Bytes
}

var simOps = [...]sim.Op{llm.AllReduce: sim.OpAllReduce, llm.ReduceScatter: sim.OpReduceScatter,
	llm.AllGather: sim.OpAllGather, llm.AllToAll: sim.OpAllToAll, llm.SendRecv: sim.OpSendRecv}

// time is an llm.CommTime.
func (cg *commGrid) time(c llm.Collective, g llm.Group, size units.Bytes) (units.Seconds, error) {
	lo := units.Bytes(math.Exp2(math.Floor(math.Log2(float64(size)))))
	tlo, err := cg.at(c, g, lo)
	if err != nil || lo == size {
		return tlo, err
	}
	thi, err := cg.at(c, g, 2*lo)
	return tlo + (thi-tlo)*units.Seconds((size-lo)/lo), err
}

// at returns sim.CollectiveTime of c on g at size, cached.
func (cg *commGrid) at(c llm.Collective, g llm.Group, size units.Bytes) (units.Seconds, error) {
	k := gridKey{c, g, size}
	if d, ok := cg.times[k]; ok {
		return d, nil
	}
	n, err := cg.network(g)
	if err != nil {
		return 0, err
	}
	d, err := n.Time(simOps[c], size)
	if err != nil {
		return 0, err
	}
	cg.times[k] = d
	return d, nil
}

// network returns g's network on the system, built once. A group
// spanning nodes with fewer ranks on each than the node has GPUs runs at
// the same time as the node's other groups of its shape (every tensor
// rank's data-parallel group, every GPU's pipeline send): it gets
// PerNode/GPUsPerNode of the node's NIC bandwidth (llm.CommTime), not
// the NICs a node running only it would give its ranks.
func (cg *commGrid) network(g llm.Group) (*sim.Collectives, error) {
	if n, ok := cg.nets[g]; ok {
		return n, nil
	}
	cfg, err := cg.config(g.Nodes, g.PerNode)
	if err != nil {
		return nil, err
	}
	_, node, _, err := cg.cat.Resolve(cg.system)
	if err != nil {
		return nil, err
	}
	if g.Nodes > 1 && g.PerNode < node.Devices {
		full, err := cg.config(g.Nodes, node.Devices)
		if err != nil {
			return nil, err
		}
		cfg.Network.NIC.Bandwidth = nicShare(full.Network, cfg.Network, g.PerNode, node.Devices)
	}
	n, err := sim.NewCollectives(cfg)
	if err != nil {
		return nil, err
	}
	cg.nets[g] = n
	return n, nil
}

// config returns the simulator's configuration of nodes nodes of perNode
// GPUs each on the system, NCCL's collectives.
func (cg *commGrid) config(nodes, perNode int) (sim.Config, error) {
	cfg := sim.Config{Nodes: nodes, DevicesPerNode: perNode}
	cfg.Comm.Algorithm = sim.NCCL
	p := scenarios.Point{Devices: nodes * perNode, Nodes: nodes, DevicesPerNode: perNode}
	_, _, err := scenarios.Network(cg.cat, cg.system, scenarios.Parallelism{}, &cfg, p)
	return cfg, err
}

// nicShare returns the bandwidth of each of group's NICs when the
// group's perNode ranks get perNode/devices of the NIC bandwidth of the
// whole node (full): at most the group's own, which a node running only
// the group gives it.
func nicShare(full, group sim.Network, perNode, devices int) units.BytesPerSec {
	if group.NICs < 1 {
		return group.NIC.Bandwidth
	}
	share := full.NIC.Bandwidth * units.BytesPerSec(full.NICs*perNode) / units.BytesPerSec(devices*group.NICs)
	return min(group.NIC.Bandwidth, share)
}
