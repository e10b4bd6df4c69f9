package llm

import (
	"fmt"

	"scaleplan/internal/units"
	"scaleplan/model"
)

// OpTime returns the time one GPU takes to run one operator. A compute
// cost model plugs in here; RooflineTime is the default.
type OpTime func(op model.Op) units.Seconds

// DefaultMatMulEfficiency is the fraction of a GPU's dense 16-bit peak
// that RooflineTime lets matrix products and attention reach: 0.79, the
// ratio a public benchmark of one large bf16 matrix product measures on
// the H100 SXM5 (780 TFLOP/s of its 989 TFLOP/s dense peak: Horace He,
// "H100 peak matmul FLOPS", gist.github.com/Chillee/2ec89696db8b7ed1c24461159e325405).
// It is the best a single large product does, not a fit to any training
// run: what a step loses beyond it (smaller products, kernel launches,
// the framework) shows as the model's error against published runs.
const DefaultMatMulEfficiency = 0.79

// RooflineTime returns the roofline operator time
//
//	max(FLOPs / (peak·e), (Read + Write) / bandwidth)
//
// for matrix products and attention, and (Read + Write) / bandwidth for
// the memory-bound rest (norms, activations, the optimizer), with e the
// fraction of peak the products reach (DefaultMatMulEfficiency). It is a
// default for tests and until a calibrated compute model replaces it.
func RooflineTime(peak units.FLOPsPerSec, bandwidth units.BytesPerSec, e float64) OpTime {
	rate := float64(peak) * e
	bw := float64(bandwidth)
	return func(op model.Op) units.Seconds {
		t := float64(op.Read+op.Write) / bw
		if op.Kind == model.MatMul || op.Kind == model.Attention {
			t = max(t, op.FLOPs/rate)
		}
		return units.Seconds(t)
	}
}

// Collective is a communication pattern a layout's step runs.
type Collective int

// The collectives, sized as nccl-tests counts them (see CommTime).
const (
	AllReduce Collective = iota
	ReduceScatter
	AllGather
	AllToAll
	SendRecv
)

var collectiveNames = [...]string{"all-reduce", "reduce-scatter", "all-gather", "all-to-all", "send-recv"}

// String returns the collective's name.
func (c Collective) String() string {
	if c < 0 || int(c) >= len(collectiveNames) {
		return fmt.Sprintf("Collective(%d)", int(c))
	}
	return collectiveNames[c]
}

// Group is where a communicator's ranks sit: PerNode ranks on each of
// Nodes nodes.
type Group struct{ Nodes, PerNode int }

// Size returns the ranks in the group.
func (g Group) Size() int { return g.Nodes * g.PerNode }

// CommTime returns the time one collective of size bytes takes on a group
// whose ranks all run the same collective at once with the other groups
// of the same shape: size is each rank's buffer for all-reduce, all-to-all
// and send/recv, the whole output of all-gather and input of
// reduce-scatter. A group of one node and PerNode ranks shares the node's
// NVLink; a group spanning nodes gets PerNode/GPUsPerNode of each node's
// NICs.
type CommTime func(c Collective, g Group, size units.Bytes) (units.Seconds, error)

// Hardware is what a layout's step time needs of a system: the GPUs of a
// node (one NVLink domain), a GPU's memory and dense 16-bit peak, the
// time of its operators and of its collectives.
type Hardware struct {
	// GPUsPerNode is the GPUs of one node, all in one NVLink domain.
	GPUsPerNode int
	// Memory is one GPU's memory, bytes.
	Memory units.Bytes
	// Peak is one GPU's dense bf16 FLOP/s, MFU's denominator.
	Peak units.FLOPsPerSec
	// Compute is the time of one operator; Comm of one collective.
	Compute OpTime
	Comm    CommTime
	// ExposeGradReduce turns off Megatron-LM's --overlap-grad-reduce and
	// --overlap-param-gather: the data-parallel gradient reduction and
	// the parameter all-gather then run after the backward pass and
	// before the next forward, exposed. Unset, they overlap the last
	// micro-batch's backward and the first's forward.
	ExposeGradReduce bool
}

// validate reports what h lacks.
func (h Hardware) validate() error {
	if h.GPUsPerNode < 1 || !(h.Peak > 0) || !(h.Memory > 0) || h.Compute == nil || h.Comm == nil {
		return fmt.Errorf("llm hardware: gpus per node %d, peak %v, memory %v, compute set %t, comm set %t: want all positive and set",
			h.GPUsPerNode, h.Peak, h.Memory, h.Compute != nil, h.Comm != nil)
	}
	return nil
}
