package plan

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

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

// LLMRequest asks for the fastest layouts of a transformer on a system.
type LLMRequest struct {
	// Model is a shipped transformer shape (model.TransformerShapes);
	// System a catalogue system; GPUs the GPUs to use, a multiple of a
	// node's (or fewer than one node).
	Model, System string
	GPUs          int
	// GlobalBatch is the sequences per step; 0 takes
	// DefaultLLMBatchTokens of the model's sequence length.
	GlobalBatch int
	// Tokens is a token budget to train; 0 for none.
	Tokens float64
	// Top is the layouts to return; default 10.
	Top int
	// Efficiency, when set, times compute on the roofline at that
	// fraction of peak for matrix products; 0 takes the operator model
	// (OperatorTime), or for a device without an SM count the roofline at
	// llm.DefaultMatMulEfficiency.
	Efficiency float64
	// Calibrations are calibration files (FitLLM's llm entries, written
	// by `fit --llm --out`): the first entry of the system's device in
	// bf16 multiplies its operator times by its factor. A file list
	// without such an entry is an error.
	Calibrations []string
	// Catalog is the hardware catalogue; nil takes hw.Default().
	Catalog *hw.Catalog
}

// LLMPlan is the answer to an LLMRequest.
type LLMPlan struct {
	Model, System, Device    string
	GPUs, Nodes, GPUsPerNode int
	GlobalBatch, SeqLen      int
	// Peak is one GPU's dense bf16 peak, MFU's denominator.
	Peak units.FLOPsPerSec
	// Compute says how operators are timed: "operator model" or
	// "roofline at E of peak".
	Compute string
	// Tokens is the token budget; Steps the steps it takes (0 without a
	// budget).
	Tokens float64
	Steps  int
	// BeyondSystem says the GPUs exceed the system's nodes: the plan is
	// for a larger cluster of the same nodes and fabric.
	BeyondSystem bool
	// Calibration is the llm entry that scaled the operator times, nil
	// without one; CalibrationFile the file it came from.
	Calibration     *calib.LLMEntry
	CalibrationFile string
	Result          llm.SearchResult
}

// LLM searches the layouts of req.Model on req.GPUs GPUs of req.System
// (llm.Search) with the operator model (llmHardware) and the system's network,
// whose collectives sim.CollectiveTime times as NCCL runs them.
func LLM(req LLMRequest) (LLMPlan, error) {
	cat := req.Catalog
	if cat == nil {
		var err error
		if cat, err = hw.Default(); err != nil {
			return LLMPlan{}, err
		}
	}
	if req.Tokens < 0 || math.IsNaN(req.Tokens) || math.IsInf(req.Tokens, 0) {
		return LLMPlan{}, fmt.Errorf("llm plan: tokens %g: want 0 or a positive budget", req.Tokens)
	}
	t, err := model.LookupTransformer(req.Model)
	if err != nil {
		return LLMPlan{}, err
	}
	t.FusedAttention = true // FlashAttention, as current LLM training runs
	sys, node, dev, err := cat.Resolve(req.System)
	if err != nil {
		return LLMPlan{}, err
	}
	g := node.Devices
	if req.GPUs < 1 || req.GPUs > g && req.GPUs%g != 0 || req.GPUs > sim.MaxRanks {
		return LLMPlan{}, fmt.Errorf("llm plan: gpus %d: want 1 to %d GPUs of one node, or a multiple of its %d up to %d", req.GPUs, g, g, sim.MaxRanks)
	}
	h, how, err := llmHardware(cat, req.System, req.Efficiency, t.FusedAttention)
	if err != nil {
		return LLMPlan{}, err
	}
	h.GPUsPerNode = min(g, req.GPUs)
	cal, file, err := llmCalibration(req.Calibrations, dev.Name)
	if err != nil {
		return LLMPlan{}, err
	}
	if cal != nil {
		h.Compute = ScaledOpTime(h.Compute, cal.Factor)
	}
	out := LLMPlan{Model: t.Name, System: sys.Name, Device: dev.Name, GPUs: req.GPUs, Nodes: (req.GPUs + g - 1) / g,
		GPUsPerNode: h.GPUsPerNode, SeqLen: t.SeqLen, Peak: h.Peak, Compute: how, Tokens: req.Tokens}
	out.BeyondSystem = out.Nodes > sys.MaxNodes
	out.Calibration, out.CalibrationFile = cal, file
	out.GlobalBatch = req.GlobalBatch
	if out.GlobalBatch == 0 {
		out.GlobalBatch = 1 << (bits.Len(uint(DefaultLLMBatchTokens/t.SeqLen)) - 1)
	}
	s := llm.Search{Shape: t, GPUs: req.GPUs, GlobalBatch: out.GlobalBatch, Top: req.Top, Hardware: h}
	if out.Result, err = s.Run(); err != nil {
		return out, err
	}
	if req.Tokens > 0 {
		out.Steps = int(math.Ceil(req.Tokens / (float64(out.GlobalBatch) * float64(t.SeqLen))))
	}
	return out, nil
}

// llmHardware returns the llm.Hardware of the catalogue's system: its
// node's GPUs, a GPU's memory and bf16 peak, the network's collectives
// (commGrid) and the operators' time, with a description of how they are
// timed: the roofline at efficiency e when e is set, else the operator
// model in bf16 (OperatorTime, attention fused or not), else, for a
// device without an SM count, the roofline at
// llm.DefaultMatMulEfficiency.
func llmHardware(cat *hw.Catalog, system string, e float64, fused bool) (llm.Hardware, string, error) {
	sys, node, dev, err := cat.Resolve(system)
	if err != nil {
		return llm.Hardware{}, "", err
	}
	peak := dev.PeakFLOPs(hw.BF16)
	if !(peak > 0) || !(dev.MemoryBandwidth > 0) {
		return llm.Hardware{}, "", fmt.Errorf("llm plan: device %q of system %q has no bf16 peak or memory bandwidth", dev.Name, sys.Name)
	}
	if e < 0 || e > 1 || math.IsNaN(e) {
		return llm.Hardware{}, "", fmt.Errorf("llm plan: efficiency %g: want in (0, 1], or 0 for the operator model", e)
	}
	grid := &commGrid{cat: cat, system: sys.Name, times: map[gridKey]units.Seconds{}}
	h := llm.Hardware{GPUsPerNode: node.Devices, Memory: dev.Memory, Peak: peak, Comm: grid.time}
	if e == 0 {
		op, err := OperatorTime(dev, hw.BF16, fused)
		if err == nil {
			h.Compute = op
			return h, "operator model", nil
		}
		if !errors.Is(err, compute.ErrNoModel) {
			return h, "", err
		}
		e = llm.DefaultMatMulEfficiency
	}
	h.Compute = llm.RooflineTime(peak, dev.MemoryBandwidth, e)
	return h, fmt.Sprintf("roofline at %.2f of peak", e), nil
}

// TrainTime returns the time to train the token budget with c: Steps
// step times; 0 without a budget.
func (p LLMPlan) TrainTime(c llm.Candidate) units.Seconds {
	return units.Seconds(p.Steps) * c.Step.Time
}

// commGrid times collectives with sim.CollectiveTime on a system's
// network, at sizes that are powers of two, and interpolates linearly
// between them: NCCL's cost of one algorithm and protocol is
// latency + size/bandwidth, linear in the size, so the interpolation is
// exact where the choice does not change between two powers of two. A
// search asks for thousands of sizes; this times a few per group.
type commGrid struct {
	cat    *hw.Catalog
	system string
	times  map[gridKey]units.Seconds
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
	cfg := sim.Config{Nodes: g.Nodes, DevicesPerNode: g.PerNode}
	cfg.Comm.Algorithm = sim.NCCL
	p := scenarios.Point{Devices: g.Size(), Nodes: g.Nodes, DevicesPerNode: g.PerNode}
	if _, _, err := scenarios.Network(cg.cat, cg.system, "", "", &cfg, p); err != nil {
		return 0, err
	}
	d, err := sim.CollectiveTime(cfg, simOps[c], size)
	if err != nil {
		return 0, err
	}
	cg.times[k] = d
	return d, nil
}
