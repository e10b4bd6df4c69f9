package validate

import (
	"cmp"
	"fmt"

	"scaleplan/compute"
	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
	"scaleplan/sim"
)

// TrainerDLEFairseq is a trainer column's value for DeepLearningExamples'
// PyTorch Transformer trainer (PyTorch/Translation/Transformer at commit
// 729963dd, fairseq/ddp_trainer.py's DDPTrainer), whose step the
// prediction then adds: the read of the loss before the backward pass
// (compute.Config.LossSync, measuredCompute), the division of every
// gradient tensor by the step's token count, and on several devices the
// per-step gather of the logging statistics and apex's
// DistributedDataParallel (fairseqStep).
const TrainerDLEFairseq = "dle-fairseq"

// trainerLabel is the label by which a record names its training program
// (a CSV's trainer column): Measured.Trainer.
const trainerLabel = "trainer"

// Figures of the programs TrainerDLEFairseq names.
const (
	// statsBufferBytes is the buffer of each rank that all_gather_list
	// gathers, its max_size=16384 (fairseq/distributed_utils.py, line 75).
	statsBufferBytes = 16384
	// apexMessageSize is apex.parallel.DistributedDataParallel's
	// message_size default, 10⁷ gradient values a bucket
	// (github.com/NVIDIA/apex, apex/parallel/distributed.py before its
	// removal in cb65b8ed: __init__'s message_size=10000000).
	apexMessageSize = 1e7
	// fairseqEncoderTensors and fairseqDecoderTensors are the parameter
	// tensors of one layer as DeepLearningExamples' fairseq registers
	// them: an attention's separate query, key and value weights and
	// biases (modules/multihead_attention.py, in_proj_weight_q … _v and
	// in_proj_bias_q … _v) and its output projection's weight and bias
	// (8), two layer norms of two (4) and two linear layers of two (4);
	// the decoder's layer has two attentions and three norms
	// (models/transformer.py, TransformerEncoderLayer and
	// TransformerDecoderLayer).
	fairseqEncoderTensors = 8 + 4 + 4
	fairseqDecoderTensors = 2*8 + 6 + 4
)

// fairseqTensors returns the parameter tensors model.parameters() yields
// for transformer shape t as DeepLearningExamples' fairseq builds it:
// its layers' (fairseqEncoderTensors, fairseqDecoderTensors), one shared
// embedding (--share-all-embeddings: one module, listed once), and under
// pre-norm each stack's final layer norm (scale and shift).
func fairseqTensors(t model.TransformerShape) int {
	n := t.Layers*fairseqEncoderTensors + t.DecoderLayers*fairseqDecoderTensors + 1
	if t.PreNorm {
		n += 2 * 2
	}
	return n
}

// fairseqStep adds to cfg, the simulator's configuration of ms on device
// d (placed on its system when ms.Devices > 1), what DeepLearningExamples'
// fairseq trainer runs each step beyond the operators, the optimizer and
// the exchange (fairseq/ddp_trainer.py, train_step):
//
//   - every row: `p.grad /= grad_denom` for each parameter tensor (lines
//     164-167), a read and a write of every gradient value, g bytes each:
//     2·g·P/B of device time in the update. On one device the host
//     launches the loop while the device still runs the backward pass.
//   - several devices: all_gather_list (lines 147-153;
//     fairseq/distributed_utils.py, lines 75-105) copies the pickled
//     statistics from host memory into a device buffer (a synchronous copy
//     that waits for the backward pass and the exchange the stream waits
//     on), all-gathers each rank's 16,384-byte buffer and reads back two
//     bytes with .item() and the rest with .tolist() per rank: 1 + 3N host
//     synchronisations, each compute.SyncLatency, and the all-gather,
//     with the device idle. The division loop then starts from the host:
//     max(T·launch, 2·g·P/B) for T tensors at eager PyTorch's launch.
//   - several devices: apex's DistributedDataParallel (ddp_trainer.py,
//     lines 34 and 66; apex/parallel/distributed.py, allreduce_bucket)
//     buckets 10⁷ values, flattens each bucket on the compute stream
//     before its all-reduce (2·g·P/B more backward pass) and, on the
//     all-reduce's stream, divides the result by N and copies it back
//     into the gradients (4·g bytes a value). The other buckets' division
//     and copy run beside the backward pass; the last bucket's
//     (apexLastBucket: the shared embedding, ready at the end of the
//     backward pass) after its all-reduce, before the update:
//     4·g·P_last/B in the update.
//
// g is the gradient exchange's bytes a value (gradientBytes). Rows of
// other trainers are left as they are.
func fairseqStep(cfg *sim.Config, mdl *model.Model, d *hw.Device, ms *Measured, g float64) error {
	if ms.Trainer != TrainerDLEFairseq {
		return nil
	}
	t, err := model.LookupTransformer(mdl.Name)
	if err != nil || t.Stack != model.EncoderDecoder {
		return fmt.Errorf("%s %s: DeepLearningExamples' fairseq trains an encoder-decoder transformer, not %s", trainerLabel, ms.Trainer, mdl.Name)
	}
	if d.MemoryBandwidth <= 0 {
		return fmt.Errorf("%s %s: device %s has no memory bandwidth for the trainer's passes over the gradients", trainerLabel, ms.Trainer, d.Name)
	}
	pass := units.Seconds(2 * g * float64(mdl.Params) / float64(d.MemoryBandwidth)) // one read and one write of every gradient
	if cfg.Nodes*cfg.DevicesPerNode == 1 {
		cfg.Compute.Update += pass
		return nil
	}
	stats, err := statsGather(*cfg)
	if err != nil {
		return err
	}
	div := max(units.Seconds(fairseqTensors(t))*compute.Eager.Launch(), pass)
	last := units.Seconds(4 * g * float64(apexLastBucket(mdl)) / float64(d.MemoryBandwidth))
	cfg.Compute.Update += stats + div + last // the gather, the division, the last bucket's division by N and copy back
	addBackward(&cfg.Compute, cfg.MicroBatch, pass)
	cfg.Comm.Bucket = units.Bytes(apexMessageSize * g)
	return nil
}

// apexLastBucket returns the values of the last bucket apex's
// DistributedDataParallel all-reduces for mdl: its hooks add each
// gradient, in the order the backward pass produces them (mdl's layers in
// backward order), to a bucket that is shipped once it holds at least
// apexMessageSize values; what is left at the end is the last bucket,
// else the last shipped one.
func apexLastBucket(mdl *model.Model) int64 {
	if len(mdl.Layers) == 0 {
		return mdl.Params // one layer of every parameter
	}
	var cur, last int64
	for _, l := range mdl.Layers {
		if cur += l.Params; cur >= apexMessageSize {
			last, cur = cur, 0
		}
	}
	if cur > 0 {
		return cur
	}
	return last
}

// statsGather returns the time all_gather_list holds the device idle on
// cfg's devices: its 1 + 3N host synchronisations and the all-gather of N
// buffers of statsBufferBytes on cfg's network.
func statsGather(cfg sim.Config) (units.Seconds, error) {
	n := cfg.Nodes * cfg.DevicesPerNode
	if len(cfg.Placement) > 0 {
		n = 0
		for _, p := range cfg.Placement {
			n += p
		}
	}
	t, err := sim.CollectiveTime(cfg, sim.OpAllGather, units.Bytes(statsBufferBytes*n))
	if err != nil {
		return 0, fmt.Errorf("the statistics' all-gather: %w", err)
	}
	return t + units.Seconds(1+3*n)*compute.SyncLatency, nil
}

// addBackward lengthens the backward pass of c's micro-batch of b samples
// by t, keeping its forward pass: t goes to Fixed and ForwardFraction
// shrinks to the forward's share of the longer whole.
func addBackward(c *sim.Compute, b int, t units.Seconds) {
	whole := units.Seconds(b)*c.PerSample + c.Fixed
	fwd := cmp.Or(c.ForwardFraction, sim.DefaultForwardFraction) * float64(whole)
	c.Fixed += t
	c.ForwardFraction = fwd / float64(whole+t)
}
