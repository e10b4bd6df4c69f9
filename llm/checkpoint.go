package llm

import (
	"fmt"
	"math"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
)

// CheckpointContent is what a checkpoint holds.
type CheckpointContent string

// The checkpoint contents; "" is full.
const (
	// CheckpointFull is what resuming needs: the 16-bit weights and the
	// optimizer state (fp32 master weights, Adam's two moments), 2 + 12 =
	// 14 bytes per parameter in the memory model's terms (States:
	// gradients are not saved). BLOOM's 176 B checkpoint "with optimizer
	// states is 2.3TB", its bf16 weights 329 GB (BigScience, "BigScience
	// 176B Model", bigscience.notion.site): 14 and 2 bytes per parameter
	// in binary units.
	CheckpointFull CheckpointContent = "full"
	// CheckpointWeights is the 16-bit weights only, 2 bytes per
	// parameter: enough to evaluate or fine-tune, not to resume.
	CheckpointWeights CheckpointContent = "weights"
)

// CheckpointBytes returns the size of one checkpoint of t: every
// parameter (every expert's) at the content's bytes per parameter.
func CheckpointBytes(t model.TransformerShape, c CheckpointContent) (units.Bytes, error) {
	if err := t.Validate(); err != nil {
		return 0, err
	}
	return c.Bytes(float64(t.Params()))
}

// Bytes returns the size of a checkpoint of params parameters.
func (c CheckpointContent) Bytes(params float64) (units.Bytes, error) {
	if !(params > 0) || math.IsInf(params, 0) {
		return 0, fmt.Errorf("checkpoint of %g parameters: want a positive finite count", params)
	}
	per, err := c.bytesPerParam()
	if err != nil {
		return 0, err
	}
	return units.Bytes(params * per), nil
}

// bytesPerParam returns the bytes per parameter of c.
func (c CheckpointContent) bytesPerParam() (float64, error) {
	switch c {
	case CheckpointFull, "":
		return weightBytes + optimizerBytesK, nil
	case CheckpointWeights:
		return weightBytes, nil
	}
	return 0, fmt.Errorf("checkpoint content %q: want full or weights", c)
}

// CheckpointTarget is where checkpoints are written.
type CheckpointTarget string

// The checkpoint targets; "" is shared.
const (
	// TargetShared writes to the system's shared file system, at
	// min(aggregate, per-client bandwidth × nodes).
	TargetShared CheckpointTarget = "shared"
	// TargetLocal writes each node's share to its own drives, at the
	// drives' striped write bandwidth × nodes. A node that dies takes its
	// share with it unless the run keeps copies elsewhere.
	TargetLocal CheckpointTarget = "local"
)

// CheckpointCost is the time one checkpoint costs a run.
type CheckpointCost struct {
	// Size is the checkpoint; Nodes the nodes writing it; Bandwidth their
	// write bandwidth together.
	Size      units.Bytes
	Nodes     int
	Bandwidth units.BytesPerSec
	// Copy is each GPU's copy of its share, Size/GPUs, to host memory
	// over its host link; Write is Size/Bandwidth.
	Copy, Write units.Seconds
	// Async reports asynchronous checkpointing. Stall is the time
	// training stops: Copy + Write when synchronous, Copy alone when
	// asynchronous. Persist is the time after the stall before the
	// checkpoint is durable: 0 when synchronous, Write when asynchronous.
	Async          bool
	Stall, Persist units.Seconds
}

// CheckpointCostOn returns the cost of writing a checkpoint of size bytes
// from gpus GPUs of system sys (its nodes node, devices dev) to target.
// Each GPU writes an equal share, as sharded checkpoints (Megatron-LM's
// distributed checkpoints, PyTorch DCP) do. Asynchronous checkpointing
// stalls training for the copy to host memory only and writes in the
// background.
func CheckpointCostOn(sys *hw.System, node *hw.Node, dev *hw.Device, gpus int, size units.Bytes, target CheckpointTarget, async bool) (CheckpointCost, error) {
	if sys == nil || node == nil || dev == nil || node.Devices < 1 {
		return CheckpointCost{}, fmt.Errorf("checkpoint: want a resolved system, node and device")
	}
	if gpus < 1 || !(size > 0) || math.IsInf(float64(size), 0) {
		return CheckpointCost{}, fmt.Errorf("checkpoint on %s: gpus %d, size %g B: want at least 1 GPU and a positive finite size", sys.Name, gpus, float64(size))
	}
	c := CheckpointCost{Size: size, Nodes: (gpus + node.Devices - 1) / node.Devices, Async: async}
	bw, err := writeBandwidth(sys, node, c.Nodes, target)
	if err != nil {
		return CheckpointCost{}, err
	}
	host := node.HostBandwidth(dev)
	if !(host > 0) {
		return CheckpointCost{}, fmt.Errorf("checkpoint on %s: device %s has no host link bandwidth: the copy to host memory cannot be timed", sys.Name, dev.Name)
	}
	c.Bandwidth = bw
	c.Copy = units.Seconds(float64(size) / float64(gpus) / float64(host))
	c.Write = units.Seconds(float64(size) / float64(bw))
	c.Stall, c.Persist = c.Copy+c.Write, 0
	if async {
		c.Stall, c.Persist = c.Copy, c.Write
	}
	return c, nil
}

// writeBandwidth returns the write bandwidth of nodes nodes to target.
func writeBandwidth(sys *hw.System, node *hw.Node, nodes int, target CheckpointTarget) (units.BytesPerSec, error) {
	switch target {
	case TargetShared, "":
		st := sys.SharedStorage
		if st == nil || !(st.Aggregate > 0 && st.PerClient > 0) {
			return 0, fmt.Errorf("checkpoint on %s: the system has no shared storage: want target local", sys.Name)
		}
		return min(st.Aggregate, st.PerClient*units.BytesPerSec(nodes)), nil
	case TargetLocal:
		var bw units.BytesPerSec
		for _, d := range node.Storage {
			bw += d.WriteBandwidth()
		}
		if !(bw > 0) {
			return 0, fmt.Errorf("checkpoint on %s: node %s has no local drives: want target shared", sys.Name, node.Name)
		}
		return bw * units.BytesPerSec(nodes), nil
	}
	return 0, fmt.Errorf("checkpoint target %q: want shared or local", target)
}
