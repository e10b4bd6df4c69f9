package validate

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"strings"

	"scaleplan/compute"
	"scaleplan/fit"
	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/predict"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// CollectiveOps maps the ops of nccl-tests (as fit/logs reads them) that
// CompareCollectives predicts to the simulator's.
var CollectiveOps = map[string]sim.Op{
	"all_reduce": sim.OpAllReduce, "reduce_scatter": sim.OpReduceScatter, "all_gather": sim.OpAllGather,
	"broadcast": sim.OpBroadcast, "alltoall": sim.OpAllToAll, "sendrecv": sim.OpSendRecv,
}

// collectiveOpNames are CollectiveOps' keys, in nccl-tests' order.
var collectiveOpNames = []string{"all_reduce", "reduce_scatter", "all_gather", "broadcast", "alltoall", "sendrecv"}

// MeasuredCollective is one test of a collective benchmark (nccl-tests'
// all_reduce_perf, all_gather_perf, ...): the time of one operation at
// each of a sweep of message sizes over Ranks devices of a catalogue
// system.
type MeasuredCollective struct {
	// Source says where the test is (file:line); free text.
	Source string
	// Op is the operation as nccl-tests names it, one of CollectiveOps'
	// keys; "" means all_reduce.
	Op string
	// Device is the device as the log names it (a catalogue key or one of
	// a device's names); "" where the log names none. When given, it must
	// be the device of System's nodes.
	Device string
	// Ranks is the number of devices, one rank each; at least 2.
	Ranks int
	// Nodes is the number of nodes they were on; 0 where the log does not
	// say: then as many devices on each node as it holds.
	Nodes int
	// System is the catalogue's system the devices were in. Required.
	System string
	// Transport and IntraTransport are the system's transports between
	// nodes and inside a node, as a scenario's parallelism names them;
	// "" for those a scenario on the system takes by default.
	Transport, IntraTransport string
	// NCCLP2PDisable says the test ran with NCCL_P2P_DISABLE=1: the
	// devices of a node exchange through host memory at the node's
	// shared-memory rate (scenarios.Parallelism.NCCLP2PDisable).
	NCCLP2PDisable bool
	// Algorithm is the exchange the simulator runs (sim.CollectiveTime):
	// sim.Ring (the zero value), sim.NCCL or another synchronous one.
	Algorithm sim.Algorithm
	// GPUsPerThread is the devices each thread of the test drives
	// (nccl-tests' nGpus, -g): the calls its host enqueues each
	// iteration (NCCLTestsHostTime). 0 means 1, a process or thread a
	// device.
	GPUsPerThread int
	// Sizes are the message sizes as nccl-tests counts them (the whole
	// buffer of each rank for all-reduce and broadcast, the full output of
	// all-gather and input of reduce-scatter, each rank's send buffer for
	// alltoall and sendrecv), and Times the measured time of one operation
	// at each; Lines where each is in the log (0 if unknown).
	Sizes []units.Bytes
	Times []units.Seconds
	Lines []int
	// Fabric are calibration files whose fabric entries for System set
	// its links in place of the catalogue's (scenarios.ApplyFabric).
	Fabric []scenarios.CalibrationFile
}

// CollectiveRow is one message size, measured and predicted.
type CollectiveRow struct {
	Bytes               units.Bytes
	Line                int
	Measured, Predicted units.Seconds
	// Error is (Predicted − Measured)/Measured of the time.
	Error float64
	// MeasuredBusBW and PredictedBusBW are the bus bandwidths of the two
	// times, S/T × fit.BusFactor (2(p−1)/p for an all-reduce), as
	// nccl-tests prints them.
	MeasuredBusBW, PredictedBusBW units.BytesPerSec
}

// CollectiveComparison is one test against the simulator's network.
type CollectiveComparison struct {
	MeasuredCollective
	// SystemName is the system's catalogue key; Exchange the links and
	// transports the all-reduce crossed ("nvlink-nvswitch, verbs").
	SystemName, Exchange string
	// DevicesPerNode is the placement: Ranks / DevicesPerNode nodes.
	DevicesPerNode int
	// Calibrated are the levels whose links a fabric entry of Fabric set;
	// nil if none.
	Calibrated []scenarios.Applied
	Rows       []CollectiveRow
	// MAE is the mean absolute Error over the rows.
	MAE float64
}

// CompareCollectives predicts the time of every size of each test with
// sim.CollectiveTime of its op on the test's system, its nodes filled as
// the test placed its ranks and the network scenarios.Network builds for a
// scenario on it, and compares. A test that cannot be placed on its
// system (another device, ranks that are not whole nodes, more nodes than
// the system has) or of an op not in CollectiveOps is an error naming its
// source.
func CompareCollectives(cat *hw.Catalog, tests []MeasuredCollective) ([]CollectiveComparison, error) {
	var out []CollectiveComparison
	for _, t := range tests {
		c, err := compareCollective(cat, t)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cmp.Or(t.Source, "collective test"), err)
		}
		out = append(out, c)
	}
	return out, nil
}

func compareCollective(cat *hw.Catalog, t MeasuredCollective) (CollectiveComparison, error) {
	c := CollectiveComparison{MeasuredCollective: t}
	c.Op = cmp.Or(t.Op, "all_reduce")
	op, ok := CollectiveOps[c.Op]
	if !ok {
		return c, fmt.Errorf("op %q: want one of %s", c.Op, strings.Join(collectiveOpNames, ", "))
	}
	if t.Ranks < 2 {
		return c, fmt.Errorf("%d ranks: a collective needs two or more", t.Ranks)
	}
	if len(t.Sizes) == 0 || len(t.Sizes) != len(t.Times) || (t.Lines != nil && len(t.Lines) != len(t.Sizes)) {
		return c, fmt.Errorf("%d sizes, %d times and %d lines: want as many, at least one", len(t.Sizes), len(t.Times), len(t.Lines))
	}
	if t.System == "" {
		return c, errors.New("no system: a collective is predicted on a catalogue system's links")
	}
	var d *hw.Device
	if t.Device != "" {
		if d = cat.DeviceCalled(t.Device); d == nil {
			return c, fmt.Errorf("device %q is not in the catalogue (valid: %s, or their CUDA names)", t.Device, strings.Join(cat.DeviceNames(), ", "))
		}
	}
	sys, node, err := systemOf(cat, t.System, d)
	if err != nil {
		return c, err
	}
	per := min(t.Ranks, node.Devices)
	if t.Nodes > 0 {
		if t.Ranks%t.Nodes != 0 {
			return c, fmt.Errorf("%d ranks on %d nodes: not as many on each", t.Ranks, t.Nodes)
		}
		per = t.Ranks / t.Nodes
	}
	if per > node.Devices || t.Ranks%per != 0 {
		return c, fmt.Errorf("%d ranks, %d a node: system %s's nodes hold %d devices", t.Ranks, per, sys.Name, node.Devices)
	}
	cfg := sim.Config{Comm: sim.Comm{Algorithm: t.Algorithm}}
	exchange, applied, err := onNodes(cat, sys, t.Ranks, per, scenarios.Parallelism{Transport: t.Transport, IntraTransport: t.IntraTransport, NCCLP2PDisable: t.NCCLP2PDisable}, t.Fabric, &cfg)
	if err != nil {
		return c, err
	}
	c.SystemName, c.Exchange, c.DevicesPerNode, c.Calibrated = sys.Name, exchange, per, applied
	if t.GPUsPerThread < 0 || t.GPUsPerThread > t.Ranks {
		return c, fmt.Errorf("%d devices a thread: want 0 to the %d ranks", t.GPUsPerThread, t.Ranks)
	}
	host := NCCLTestsHostTime(max(1, t.GPUsPerThread))
	bus, _ := fit.BusFactor(c.Op, t.Ranks)
	for i, s := range t.Sizes {
		m := t.Times[i]
		if !(m > 0) || math.IsInf(float64(m), 0) || !(s > 0) {
			return c, fmt.Errorf("size %v, time %v: want both above 0", s, m)
		}
		pt, err := sim.CollectiveTime(cfg, op, s)
		if err != nil {
			return c, err
		}
		pt = max(pt, host)
		r := CollectiveRow{Bytes: s, Measured: m, Predicted: pt, Error: float64((pt - m) / m),
			MeasuredBusBW:  units.BytesPerSec(float64(s) / float64(m) * bus),
			PredictedBusBW: units.BytesPerSec(float64(s) / float64(pt) * bus)}
		if t.Lines != nil {
			r.Line = t.Lines[i]
		}
		c.Rows = append(c.Rows, r)
		c.MAE += math.Abs(r.Error) / float64(len(t.Sizes))
	}
	return c, nil
}

// ncclEnqueue is the host's cost of an NCCL call beyond its kernel's
// launch: XLA's GPU cost model estimates an NCCL kernel's launch at 5 µs
// against 1 µs for another kernel (openxla/xla,
// xla/service/gpu/model/gpu_performance_model_base.h,
// kNcclKernelLaunchOverhead and kKernelLaunchOverhead, "estimated values
// in the absence of easy ways to query them"); the 4 µs between them is
// NCCL's own work on the host: planning the call and building its kernel's
// arguments (NVIDIA/nccl src/enqueue.cc, ncclLaunchPrepare).
const ncclEnqueue = 4 * units.Microsecond

// NCCLTestsHostTime is the host's time per iteration of an nccl-tests loop
// whose threads each drive gpus devices: nccl-tests times iters calls back
// to back on the host's clock and synchronises the streams once after them
// (NVIDIA/nccl-tests src/common.cu, BenchTime), and with nGpus above 1 a
// thread enqueues its devices' calls in one ncclGroupStart/End, whose end
// prepares and launches each device's kernel in turn on that thread
// (NVIDIA/nccl src/group.cc, doLaunches: ncclLaunchPrepare, then
// ncclLaunchKernel, per communicator). Each costs a kernel launch
// (compute.LaunchKernel) and NCCL's enqueue (ncclEnqueue). A loop
// whose device time per call is less than this is timed at this rate, so
// CompareCollectives predicts the larger of the two; threads run their
// devices' calls in parallel and do not add.
func NCCLTestsHostTime(gpus int) units.Seconds {
	return units.Seconds(float64(gpus)) * (compute.LaunchKernel + ncclEnqueue)
}

// SizeBandEdges are the message sizes that bound the bands SizeErrors
// groups rows by, each 16 times the one before (predict.CommBandEdges,
// whose errors SizeErrors measures): below 64 KiB the calls are bound by
// latency on every published table, from 256 MiB by bandwidth, and the
// three bands between hold the turn from one to the other.
var SizeBandEdges = predict.CommBandEdges

// SizeError is the time error of the rows of several tests whose message
// sizes lie in one band, Lo ≤ S < Hi.
type SizeError struct {
	// Lo and Hi bound the band; Lo is 0 for the first band and Hi 0 for
	// the last, which has no bound.
	Lo, Hi units.Bytes
	// Rows is the rows in the band and Tests the tests with at least one.
	Rows, Tests int
	// Signed and Abs are the mean Error and mean |Error| of the rows: a
	// negative Signed is a band predicted too fast.
	Signed, Abs float64
	// Fast is the tests whose rows in the band have a negative mean
	// Error: predicted too fast there.
	Fast int
	// Slower is the ErrorInterval of the rows' measured time over the
	// predicted one, less 1 (1/(1 + Error) − 1): the band's measured
	// times lay between 1 + Slower[0] and 1 + Slower[1] times the
	// predicted ones in 80 % of its rows. Unlike Error, which cannot fall
	// below −1 however slow the measurement, it grows with it. NaN, NaN
	// under IntervalMinRows rows.
	Slower [2]float64
}

// Band names b's sizes as the tables print them: "below 64 KiB",
// "64 KiB to 1 MiB", "256 MiB and above".
func (b SizeError) Band() string {
	switch {
	case b.Lo == 0:
		return fmt.Sprintf("below %v", b.Hi)
	case b.Hi == 0:
		return fmt.Sprintf("%v and above", b.Lo)
	}
	return fmt.Sprintf("%v to %v", b.Lo, b.Hi)
}

// SizeErrors returns the time error of comps' rows in each band of
// SizeBandEdges that holds a row, smallest sizes first: where along the
// sizes the collective model is too fast or too slow, over every test at
// once (each row counts once, whatever its test) and test by test (Fast).
func SizeErrors(comps []CollectiveComparison) []SizeError {
	bands := make([]SizeError, len(SizeBandEdges)+1)
	for i := range bands {
		if i > 0 {
			bands[i].Lo = SizeBandEdges[i-1]
		}
		if i < len(SizeBandEdges) {
			bands[i].Hi = SizeBandEdges[i]
		}
	}
	slower := make([][]float64, len(bands))
	for _, c := range comps {
		sum := make([]float64, len(bands))
		n := make([]int, len(bands))
		for _, r := range c.Rows {
			i := predict.CommBand(r.Bytes) // a band holds its lower edge
			slower[i] = append(slower[i], 1/(1+r.Error)-1)
			sum[i] += r.Error
			n[i]++
			bands[i].Rows++
			bands[i].Signed += r.Error
			bands[i].Abs += math.Abs(r.Error)
		}
		for i := range bands {
			if n[i] == 0 {
				continue
			}
			bands[i].Tests++
			if sum[i] < 0 {
				bands[i].Fast++
			}
		}
	}
	var out []SizeError
	for i, b := range bands {
		if b.Rows == 0 {
			continue
		}
		b.Signed /= float64(b.Rows)
		b.Abs /= float64(b.Rows)
		b.Slower = ErrorInterval(slower[i])
		out = append(out, b)
	}
	return out
}
