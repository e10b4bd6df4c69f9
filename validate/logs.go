package validate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"scaleplan/compute"
	"scaleplan/fit/logs"
	"scaleplan/hw"
	"scaleplan/internal/benchlog"
	"scaleplan/internal/calib"
	"scaleplan/internal/units"
	"scaleplan/model"
	"scaleplan/sim"
)

// LogReader turns the logs that fit reads into measurements and
// collective tests to compare, assuming what a log does not say.
type LogReader struct {
	// System is the catalogue system of measurements of several devices
	// that name none (scaleplan validate --system); "" leaves them out.
	System string
	// Precision is the precision of records that give none.
	Precision string
	// Transport and IntraTransport carried the gradients of the
	// measurements of several devices; "" for the system's defaults.
	Transport, IntraTransport string
	// NCCLP2PDisable says the collective tests of nccl-tests logs ran
	// with NCCL_P2P_DISABLE=1: MeasuredCollective.NCCLP2PDisable.
	NCCLP2PDisable bool
	// Catalog is where systems are looked up. Required.
	Catalog *hw.Catalog
	// Host is the host costs of the machine that ran the logs (a table of
	// scripts/torchhost.py's, compute.ReadHostTable): Measured.Host of
	// every measurement. nil: each log's own, where its header measured
	// them (machine.host_costs, engine/torchbench on CUDA), else
	// compute.MeasuredHost and the published figures.
	Host *compute.HostCosts
}

// TorchbenchTimerEvents is the CUDA events engine/torchbench records on
// the step's stream each step it times on a GPU: its step's five marks
// (start, data ready, forward and loss done, backward done, update done:
// torchbench.py's Trainer.step, CUDATimer.mark). The header that says so:
// tool torchbenchTool, config.timing torchbenchCUDATiming.
const TorchbenchTimerEvents = 5

const (
	torchbenchTool       = "torchbench"
	timingKey            = "timing"
	torchbenchCUDATiming = "CUDA events on the current stream"
)

// systemLabel is the label by which a record names the catalogue system it
// ran on (a CSV's system column); it takes precedence over LogReader.System.
const systemLabel = "system"

// decodeWorkersLabel is the label by which a record gives the processes
// per device that decoded its input on the host (a CSV's decode_workers
// column): Measured.DecodeWorkers.
const decodeWorkersLabel = "decode_workers"

// modeLabel is the label by which a record gives the framework mode its
// source states it ran in (a CSV's mode column: eager, cuda-graphs or
// compiled): Measured.Mode.
const modeLabel = "mode"

// The labels of a program's step (CSV columns): ampLabel the mixed
// precision's implementation (Measured.AMP), loaderLabel its input
// loader (Measured.Loader), clipLabel the clipping of the
// gradients' norm each step (Measured.ClipNorm), zeroGradLabel how it
// clears the gradients (Measured.ZeroGrad), stepsCountedLabel and
// stepsTimedLabel the steps a throughput counts and those its timed
// region ran (Measured.StepsCounted, StepsTimed), fuseLabel the
// kernels its framework fuses (Measured.FuseBNReLU).
const (
	ampLabel          = "amp"
	clipLabel         = "clip"
	zeroGradLabel     = "zero_grad"
	stepsCountedLabel = "steps_counted"
	stepsTimedLabel   = "steps_timed"
	loaderLabel       = "loader"
	fuseLabel         = "fuse"
)

// p2pDisableLabel is the label by which a record gives the value of
// NCCL_P2P_DISABLE its run had (a CSV's nccl_p2p_disable column):
// Measured.NCCLP2PDisable.
const p2pDisableLabel = "nccl_p2p_disable"

// p2pDisable reads a p2pDisableLabel's value as NCCL reads its variable:
// 1 disables the peer-to-peer transport, 0 or nothing leaves it on.
func p2pDisable(v string) (bool, error) {
	switch v {
	case "", "0":
		return false, nil
	case "1":
		return true, nil
	}
	return false, fmt.Errorf("%s %q: want 1 (NCCL_P2P_DISABLE=1: through host memory) or 0 (default)", p2pDisableLabel, v)
}

// seqLenLabel is the label by which a record gives the tokens of each of
// its samples (a CSV's seq_len column): Measured.SeqLen.
const seqLenLabel = "seq_len"

// attentionLabel is the label by which a record says how its attention
// ran: attentionSDPA for PyTorch's fused scaled_dot_product_attention
// (engine/torchbench's GPT models under torch >= 2.0), none for two
// products and a softmax: Measured.FusedAttention.
const (
	attentionLabel = "attention"
	attentionSDPA  = "sdpa"
)

// positiveRoIsLabel is the label by which a record gives the positive
// RoIs of one image that Mask R-CNN's mask head ran on, on average over
// its timed steps (engine/torchbench): Measured.MaskRoIs.
const positiveRoIsLabel = "positive_rois"

// fusedAttention reads an attentionLabel's value.
func fusedAttention(v string) (bool, error) {
	switch v {
	case "":
		return false, nil
	case attentionSDPA:
		return true, nil
	}
	return false, fmt.Errorf("%s %q: want %s (PyTorch's fused scaled_dot_product_attention) or no label (unfused)", attentionLabel, v, attentionSDPA)
}

// platformNodes reads the node count of an MLPerf platform, "NxNODE"
// (1xGX2570M5, 8xDGX-A100); 0 when platform is not of that form.
func platformNodes(platform string) int {
	n, rest, ok := strings.Cut(platform, "x")
	if !ok || rest == "" {
		return 0
	}
	k, err := strconv.Atoi(n)
	if err != nil || k < 1 {
		return 0
	}
	return k
}

// Why LogReader.Measurements leaves a record out, the keys of its counts.
const (
	LeftSeveral = "of several devices: give --system, the system they ran on, to predict them on its nodes"
	LeftCount   = "of an unknown device count: a global batch alone (an MLPerf log's platform, NxNODE, counts nodes: give --system, the system of those nodes)"
	LeftLayout  = "of a model-parallel layout (tensor, pipeline or context parallel): the prediction is of data parallelism"
	// LeftDiverged leaves out the Mask R-CNN runs engine/torchbench made
	// before it warmed up the learning rate (divergedRun).
	LeftDiverged = "of a run that diverged: engine/torchbench's Mask R-CNN at SGD 0.01 from the first step, whose timed steps had nan losses and heads on the ground truth's boxes alone (docs/validation-torchvision-maskrcnn.md)"
)

// Why LogReader.Collectives leaves a collective test out, the keys of its
// counts.
const (
	LeftCollectiveSystem = "of a collective test: give --system, the system it ran on, to predict it on that system's links"
	LeftCollectiveOp     = "of an op the simulator does not model (reduce, gather, scatter, hypercube, or one the log does not name); it models all_reduce, reduce_scatter, all_gather, broadcast, alltoall and sendrecv"
	LeftCollectiveRank   = "of a collective test of one rank: no collective between devices"
)

// RecordReasons and TestReasons are the reasons to leave a record or a
// collective test out, in the order to report them.
var (
	RecordReasons = []string{LeftSeveral, LeftCount, LeftLayout, LeftDiverged}
	TestReasons   = []string{LeftCollectiveSystem, LeftCollectiveOp, LeftCollectiveRank}
)

// Collectives returns the tests of nccl-tests logs to predict on
// in.System with algorithm, and counts in left, by why (TestReasons),
// those it leaves out: of an op not in CollectiveOps, of one rank, or all
// of them without a system.
func (in *LogReader) Collectives(lgs []*logs.Log, algorithm sim.Algorithm, left map[string]int) []MeasuredCollective {
	var out []MeasuredCollective
	for _, lg := range lgs {
		for _, t := range lg.Collectives {
			switch {
			case !slices.Contains(collectiveOpNames, t.Op):
				left[LeftCollectiveOp]++
				continue
			case t.Ranks < 2:
				left[LeftCollectiveRank]++
				continue
			case in.System == "":
				left[LeftCollectiveSystem]++
				continue
			}
			m := MeasuredCollective{Source: fmt.Sprintf("%s:%d", lg.Name, t.Line), Op: t.Op, Device: t.Device, Ranks: t.Ranks, Nodes: t.Nodes, GPUsPerThread: t.GPUs,
				System: in.System, Transport: in.Transport, IntraTransport: in.IntraTransport, Algorithm: algorithm,
				NCCLP2PDisable: in.NCCLP2PDisable}
			for _, p := range t.Points {
				m.Sizes, m.Times, m.Lines = append(m.Sizes, p.Bytes), append(m.Times, p.Time), append(m.Lines, p.Line)
			}
			out = append(out, m)
		}
	}
	return out
}

// Measurements takes the measurement and out-of-memory records of a log
// read by fit (any format it reads) and counts in left, by why
// (RecordReasons), those it leaves out: of several devices without a
// system, of no device count, of a model-parallel layout. A record's
// system is its systemLabel, else in.System; an MLPerf platform of N
// nodes (a global batch alone) is N of the system's nodes. A
// sentence-pair sample of a model profiled per token pair counts as the
// header's config.seq_len token pairs; the header's
// config.models_info.MODEL.optimizer (torchbench) names the optimizer.
func (in *LogReader) Measurements(lg *logs.Log, prof *model.Profiles, left map[string]int) ([]Measured, error) {
	var (
		out     []Measured
		header  benchlog.Record
		logHost *compute.HostCosts // the header's measured host, where --host gives none
		err     error
	)
	for i, rec := range lg.Records {
		where := lg.Name
		if i < len(lg.Lines) {
			where = fmt.Sprintf("%s:%d", lg.Name, lg.Lines[i])
		}
		switch rec.Kind {
		case benchlog.KindHeader:
			header, logHost = rec, nil
			if in.Host == nil && header.Machine != nil && len(header.Machine.HostCosts) > 0 {
				h, err := compute.HostCostsFrom(header.Machine.HostCosts)
				if err != nil {
					return nil, fmt.Errorf("%s: machine.host_costs: %w", where, err)
				}
				logHost = &h
			}
			continue
		case benchlog.KindMeasurement, benchlog.KindOOM:
		default:
			continue
		}
		dev, workers, system := rec.Device, rec.Workers, cmp.Or(rec.Labels[systemLabel], in.System)
		if workers == 0 && rec.Batch == 0 {
			// A global batch alone: an MLPerf platform of N nodes of
			// the system's, or no device count.
			n := platformNodes(dev)
			if n == 0 || system == "" {
				left[LeftCount]++
				continue
			}
			_, node, d, err := in.Catalog.Resolve(system)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			dev, workers = d.Name, n*node.Devices
		}
		switch {
		case logs.ModelParallel(rec.Labels):
			left[LeftLayout]++
			continue
		case divergedRun(header, rec.Model):
			left[LeftDiverged]++
			continue
		case workers > 1 && system == "":
			left[LeftSeveral]++
			continue
		}
		if dev == "" && header.Machine != nil {
			dev = header.Machine.DeviceName
		}
		m := Measured{
			Device: dev, Model: rec.Model, Precision: cmp.Or(rec.Precision, in.Precision), Batch: rec.Batch,
			Devices: max(workers, 1), Accumulation: max(rec.Accumulate, 1),
			SamplesPerSec: rec.Throughput(), PeakMemory: units.Bytes(rec.PeakMemory),
			OOM: rec.Kind == benchlog.KindOOM, Source: where,
			Optimizer: headerOptimizer(header, rec.Model), Variant: calib.RunVariant(rec.Labels),
			Host: cmp.Or(in.Host, logHost),
		}
		if header.Tool == torchbenchTool && header.Config[timingKey] == torchbenchCUDATiming {
			m.TimerEvents = TorchbenchTimerEvents
		}
		if header.Machine != nil {
			m.Framework = header.Machine.Framework
		}
		if m.Framework == "" {
			m.Framework = rec.Labels[logs.FrameworkLabel] // a CSV's framework column, the torchvision reader's
		}
		if o := rec.Labels[optimizerLabel]; o != "" {
			if m.Optimizer, err = csvOptimizer(o); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
		}
		if m.NCCLP2PDisable, err = p2pDisable(rec.Labels[p2pDisableLabel]); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if m.FusedAttention, err = fusedAttention(rec.Labels[attentionLabel]); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if v := rec.Labels[positiveRoIsLabel]; v != "" {
			if m.MaskRoIs, err = strconv.Atoi(v); err != nil || m.MaskRoIs < 1 || m.MaskRoIs > 512 {
				return nil, fmt.Errorf("%s: %s %q: want a whole number of RoIs an image from 1 to 512, the box head's", where, positiveRoIsLabel, v)
			}
		}
		if m.Devices > 1 {
			m.System, m.Transport, m.IntraTransport = system, in.Transport, in.IntraTransport
			m.Nodes = rec.Nodes // the placement a bench log gives (engine/torchbench across nodes)
		}
		if md := rec.Labels[modeLabel]; md != "" {
			if m.Mode, err = compute.ParseMode(md); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", where, modeLabel, err)
			}
		}
		if w := rec.Labels[decodeWorkersLabel]; w != "" {
			if m.DecodeWorkers, err = strconv.Atoi(w); err != nil || m.DecodeWorkers < 0 {
				return nil, fmt.Errorf("%s: %s %q: want a whole number of processes per device", where, decodeWorkersLabel, w)
			}
			m.System = system // the host that decoded, for one device too
		}
		if m.Batch == 0 {
			g, per := max(rec.GlobalBatch, rec.EffectiveGlobalBatch()), m.Devices*m.Accumulation
			if g%per != 0 {
				return nil, fmt.Errorf("%s: global batch %d is not %d devices × %d micro-batches of a whole batch", where, g, m.Devices, m.Accumulation)
			}
			m.Batch = g / per
		}
		if m.Model == "" || m.Precision == "" || m.Device == "" {
			return nil, fmt.Errorf("%s: a %s record needs model, precision and device (the header's machine.device_name or --device names the device for a log that does not, --precision the precision, --model the model)", where, rec.Kind)
		}
		if v := rec.Labels[seqLenLabel]; v != "" {
			if m.SeqLen, err = strconv.Atoi(v); err != nil || m.SeqLen < 1 {
				return nil, fmt.Errorf("%s: %s %q: want a whole number of tokens per sample", where, seqLenLabel, v)
			}
			// A group and a scaling pair of their own: another length
			// is another workload.
			m.Variant = strings.TrimSpace(m.Variant + " " + seqLenLabel + "=" + v)
		}
		if v := rec.Labels[workShareLabel]; v != "" {
			if m.WorkShare, err = strconv.ParseFloat(v, 64); err != nil || !(m.WorkShare > 0 && m.WorkShare <= 1) {
				return nil, fmt.Errorf("%s: %s %q: want the share of a padded sample's work, above 0 and at most 1", where, workShareLabel, v)
			}
		}
		if err := programLabels(&m, rec.Labels); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if rec.Labels[calib.SampleLabel] == "sentence-pair" {
			if m.SampleScale, err = sentenceScale(header, rec.Model, prof); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// divergedOptimizer is what engine/torchbench's header wrote of Mask R-CNN's
// optimizer before the script warmed up its learning rate: momentum SGD at
// 0.01 from the first step, under which a randomly initialised Mask R-CNN
// diverges after one update (its losses nan, the RPN proposing nothing,
// the box and mask heads running on the ground truth's boxes alone;
// scripts/maskrcnn-diverge.py shows it on the CPU at 800×1344).
const divergedOptimizer = "sgd lr 0.01 momentum 0.9 wd 1e-4"

// divergedRun reports whether a record of model in the log whose header
// is header timed a diverged training step: engine/torchbench's Mask R-CNN
// with divergedOptimizer.
func divergedRun(header benchlog.Record, model string) bool {
	return header.Tool == torchbenchTool && model == "maskrcnn-r50-fpn" && optimizerText(header, model) == divergedOptimizer
}

// optimizerText returns what a torchbench header says of model's
// optimizer (config.models_info.MODEL.optimizer), "" where it says
// nothing.
func optimizerText(header benchlog.Record, model string) string {
	info, _ := header.Config["models_info"].(map[string]any)
	mi, _ := info[model].(map[string]any)
	s, _ := mi["optimizer"].(string)
	return s
}

// sentenceScale returns the profile's samples in one sentence pair of
// model: the header's config.seq_len for a model profiled per token pair,
// 1 for one profiled per sentence pair, and an error for any other.
func sentenceScale(header benchlog.Record, name string, prof *model.Profiles) (float64, error) {
	unit, err := prof.SampleUnit(name)
	if err != nil {
		return 0, err
	}
	switch unit {
	case model.Sentence:
		return 1, nil
	case model.Token:
	default:
		return 0, fmt.Errorf("samples are sentence pairs, but %s is profiled per %s", name, cmp.Or(unit, model.Image))
	}
	n, ok := header.Config["seq_len"].(float64)
	if !ok || !(n >= 1) || n != math.Trunc(n) {
		return 0, fmt.Errorf("samples are sentence pairs and %s is profiled per token pair, but the log's header gives no config.seq_len (whole tokens per sentence) to convert them", name)
	}
	return n, nil
}

// programLabels reads a record's amp, clip, zero_grad, trainer, loader,
// fuse, steps_counted and steps_timed labels into m.
func programLabels(m *Measured, labels map[string]string) error {
	switch a := labels[ampLabel]; a {
	case "", AMPAutocast:
	case AMPApexO2:
		m.AMP = a
	default:
		return fmt.Errorf("%s %q: want %s or %s (default)", ampLabel, a, AMPApexO2, AMPAutocast)
	}
	var err error
	if m.ClipNorm, err = namedValue(labels, clipLabel, ClipGlobalNorm); err != nil {
		return err
	}
	if m.ZeroGrad, err = namedValue(labels, zeroGradLabel, ZeroGradZero); err != nil {
		return err
	}
	if fairseq, err := namedValue(labels, trainerLabel, TrainerDLEFairseq); err != nil {
		return err
	} else if fairseq {
		m.Trainer = TrainerDLEFairseq
	}
	switch l := labels[loaderLabel]; l {
	case "", "none":
	case LoaderHybrid:
		if m.Model != hybridLoaderModel || !strings.HasPrefix(m.Framework, "torch") {
			return fmt.Errorf("%s %s: DeepLearningExamples' PyTorch loader of %s's COCO images, not a %s row of %s", loaderLabel, l, hybridLoaderModel, cmp.Or(m.Framework, "framework-less"), m.Model)
		}
		m.Loader = l
	default:
		return fmt.Errorf("%s %q: want %s or none (default)", loaderLabel, l, LoaderHybrid)
	}
	switch f := labels[fuseLabel]; f {
	case "", "none":
	case FuseBNReLU:
		if m.Model != fuseBNModel {
			return fmt.Errorf("%s %s: the batch norms of %s's generator, not of %s", fuseLabel, f, fuseBNModel, m.Model)
		}
		m.FuseBNReLU = true
	default:
		return fmt.Errorf("%s %q: want %s or none (default)", fuseLabel, f, FuseBNReLU)
	}
	for _, f := range []struct {
		label string
		to    *int
	}{{stepsCountedLabel, &m.StepsCounted}, {stepsTimedLabel, &m.StepsTimed}} {
		v := labels[f.label]
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("%s %q: want a whole number of steps, at least 1", f.label, v)
		}
		*f.to = n
	}
	if (m.StepsCounted == 0) != (m.StepsTimed == 0) {
		return fmt.Errorf("%s %d and %s %d: give both or neither", stepsCountedLabel, m.StepsCounted, stepsTimedLabel, m.StepsTimed)
	}
	return nil
}

// namedValue reads a label whose one value is value, absent as "" or
// "none": whether labels give value, and an error naming both choices for
// any other.
func namedValue(labels map[string]string, label, value string) (bool, error) {
	switch v := labels[label]; v {
	case "", "none":
		return false, nil
	case value:
		return true, nil
	default:
		return false, fmt.Errorf("%s %q: want %s or none (default)", label, v, value)
	}
}

// workShareLabel is the share of a padded sample's work one of a
// measurement's samples costs (a CSV's work_share column):
// Measured.WorkShare.
const workShareLabel = "work_share"

// optimizerLabel is a measurement's optimizer (a CSV's optimizer column),
// in place of the header's.
const optimizerLabel = "optimizer"

// csvOptimizer returns the optimizer a CSV's optimizer column names.
func csvOptimizer(s string) (model.Optimizer, error) {
	all := []model.Optimizer{model.SGD, model.Momentum, model.Nesterov, model.LARS, model.RMSProp,
		model.Adam, model.FusedAdam, model.AdamW, model.LAMB, model.BertAdam}
	names := make([]string, len(all))
	for i, o := range all {
		if string(o) == s {
			return o, nil
		}
		names[i] = string(o)
	}
	return "", fmt.Errorf("%s %q: want one of %s", optimizerLabel, s, strings.Join(names, ", "))
}

// headerOptimizer reads the optimizer of model from a torchbench header's
// config.models_info.MODEL.optimizer ("adam lr 1e-4 ...", "sgd lr 0.01
// momentum 0.9 ..."); "" (the default, momentum) when the header does not
// say.
func headerOptimizer(header benchlog.Record, name string) model.Optimizer {
	f := strings.Fields(strings.ToLower(optimizerText(header, name)))
	if len(f) == 0 {
		return ""
	}
	switch f[0] {
	case "adam", "adamw":
		return model.Optimizer(f[0])
	case "sgd":
		for _, w := range f[1:] {
			if w == "momentum" {
				return model.Momentum
			}
		}
		return model.SGD
	}
	return ""
}
