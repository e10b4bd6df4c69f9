// Package sim is the discrete-event simulator of a training step: devices
// computing forward and backward passes, gradient buckets all-reduced
// while the backward pass continues, pipeline stages passing activations,
// an input pipeline reading, decoding and copying samples, and stragglers.
// It runs on the event core and network of sim/internal/event and
// sim/internal/netsim and reports the steady-state step time, where it
// goes, the throughput and the memory each device needs.
//
// # Overview
//
// A Config describes one configuration in plain numbers; Run simulates
// Config.Steps optimizer steps and returns a Result. The helpers Roofline,
// UpdateTime, ModelMemory and GradientLayers map a model of package model
// onto a device of package hw; package scenarios builds a whole Config
// from a scenario. docs/simulator.md gives every model with its sources.
// EvalPassTime gives one evaluation pass of a Config in closed form:
// forward-only steps at the evaluation batch, bounded by the node's input,
// and an all-reduce of the metric (docs/predict.md).
//
// # Compute
//
// A device holding the whole model computes a micro-batch of b samples,
// forward and backward, in
//
//	c(b) = b·PerSample + Fixed
//
// where PerSample = 1/v0. The forward pass takes ForwardFraction of it
// (default 1/3: backward costs about twice the forward) and the backward
// the rest; with recomputation the backward also repeats the forward. A
// pipeline stage of S equal stages takes c(b)/S. The optimizer update
// takes Update/S once per step, after the gradient exchange (the servers
// apply it for parameter servers, so devices spend none). From a
// calibration (v0, t), package scenarios sets Update = min(u, t) with u
// the roofline's update time and Fixed = t − Update, so the calibrated
// step b/v0 + t is kept whole on one device; without one, PerSample is
// the roofline
//
//	max(3·F / (peak·e), 4·A / B_mem)
//
// and Update = Params·bytes per parameter / B_mem (UpdateBytesPerParam).
//
// # Gradient exchange
//
// The backward pass of the last micro-batch of a step releases the
// stage's gradient buckets (Comm.Layers grouped into Comm.Bucket, in
// backward order); bucket i of a device whose last backward starts at t0
// and lasts d is released at
//
//	t0 + d·(bytes of buckets 0..i)/(stage gradient bytes)
//
// and the last at the end of the backward. The replicas of a stage
// all-reduce bucket i with netsim's collective when every replica has
// released it and bucket i−1's all-reduce has finished: one communication
// stream per stage, as NCCL and PyTorch DDP run it. With Comm.NoOverlap
// the whole gradient is one collective after the backward pass. The
// collectives share links with pipeline transfers and shared-storage
// reads, which are netsim flows on the same network; the devices of a
// node share its NICs. Config.Placement puts different numbers of devices
// on the nodes (1, 2, 3, 4), in rank order; pipeline stages stay on
// consecutive devices. Network.PerFlow and Streams cap each transfer
// between nodes, Network.DevicesPerSwitch models the nodes' PCIe
// switches and sockets (NICsPerSwitch the NICs under them,
// IntraBypassesTree an NVLink fabric beside them), Network.Rails a
// rail-optimised fabric, Network.NetProtocols the NCCL protocols the
// transport between nodes lets the NCCL exchange run, and
// Network.NCCLBuffSize the NCCL_BUFFSIZE its net plugin sets (see netsim's
// documentation for each).
//
// While a bucket's collective is in flight, the backward of every device
// of its stage progresses at 1 − Comm.Interference of its rate (NCCL's
// kernels hold SMs): progress is piecewise linear, each collective's start
// and end moving the backward's end and the next release to the times the
// new rate gives. A backward of D whose only overlapped exchange lasts C
// and starts with W of work left ends at D + s·C', C' = C if
// (1 − s)·C ≤ W, else W/(1 − s). The time the slowdown adds counts as
// comm.
//
// # Input pipeline
//
// Each node's loader prepares one micro-batch for each of its devices that
// take input (the first stage of each replica) at a time, through three
// FIFO stages in tandem — read, decode on the node's cores, copy to the
// devices — and admits micro-batch q only when fewer than Prefetch
// micro-batches are prepared or in preparation and not yet taken. With n
// samples per node micro-batch of s stored bytes and b per device:
//
//	read    n·s/B_local (local drives), or a netsim flow of n·s through
//	        the file server, the node's client limit and NIC (shared)
//	decode  n·Decode/P, P = Input.DecodeParallelism(): the Workers
//	        processes on the Cores and their second hardware threads
//	copy    b·Copy/B_host_to_device (the devices copy in parallel)
//
// A shared database file is one server for the whole system, first come
// first served: a read of n samples holds it for n·(DB.Service +
// DB.PerReader·(N−1)) with N nodes reading, then moves its bytes. A
// device waits before a forward until its micro-batch is on it. Synthetic
// input costs nothing.
//
// # Steps and time
//
// Steps are synchronous: every device starts step k when the last device
// has finished the update of step k−1. Time is float64 seconds of the
// event core (see package event); the first step, which starts with an
// empty prefetch queue, is left out of the steady state: StepTime and
// Breakdown are the means of the later steps.
//
// # Breakdown
//
// Every moment of a device's step is one of the parts below, so they sum
// to the step time for each device and for their mean:
//
//	compute    forward, backward and update (with the device's own jitter)
//	input      waiting for its micro-batch; and of the wait for the slowest
//	           replica of its stage, the part the slowest spent waiting for
//	           input longer than this device did
//	straggler  the rest of the wait for the slowest replica: from the end of
//	           its own last backward to the end of the slowest replica's
//	comm       from the end of the slowest replica's backward to the end of
//	           the stage's last all-reduce; waits for an activation or
//	           gradient already sent by the neighbouring stage but in transit;
//	           and the time interference adds to the backward pass
//	bubble     waits for a neighbouring stage that has not finished computing,
//	           and the wait after its update until the step ends
//
// Utilisation is compute over step time, in [0, 1]. For S equal stages,
// M micro-batches and free transfers, both schedules give a bubble of
//
//	(S−1)/(M+S−1)
//
// of the step.
//
// # Stragglers
//
// At the start of each step every device draws a factor for its forward
// and backward times from a lognormal distribution with mean 1 and
// coefficient of variation Jitter,
//
//	exp(mu + sigma·z),  sigma² = ln(1 + Jitter²),  mu = −sigma²/2
//
// from a PCG generator seeded with Config.Seed, devices in order.
//
// # Traces
//
// With Config.TraceSteps = n the last n steps are recorded as Chrome
// trace events (Result.Trace, Trace.WriteJSON), which Perfetto loads as
// tracks grouped in processes: "devices" (one track per traced device,
// tiling the steps with compute and named waits; beyond MaxTracedDevices
// the first node's, the slowest and the last), "gradient exchange" (each
// stage's buckets), "input pipeline" (node 0's read, decode and copy, and
// the shared database file) and "links".
//
// The "links" process has one track per link that carried bytes in the
// traced steps, named in words with its bandwidth ("node 3 NIC out
// (11.88 GB/s)", "device 5 intra-node in", "node 0 host memory", "fabric
// core", "shared storage"); idle links have none. Beyond MaxTracedDevices
// only the links of the devices whose tracks may be kept (the first node's
// and the last), of the first and the last node, and the shared ones
// (fabric core, parameter servers, shared storage) are traced. A link's
// track is a sequence of slices, one per interval during which the set of
// flows it carries and their rates stay the same: a slice begins or ends
// whenever a flow crossing the link starts or stops moving bytes or any of
// their rates changes, and a slice is continued rather than split when
// the next one carries the same flows at the same rates (ring steps
// back to back, reads of successive micro-batches). Slices never overlap
// (Chrome's format forbids overlapping complete events on one track), so
// processor sharing shows as one slice naming all the flows sharing the
// link:
//
//	name         the flows' labels joined by " + ", "×k" for k streams
//	             ("ring bucket 3", "input read, node 0 + input read, node 1",
//	             "activations stage 0→1, micro-batch 2", "database read,
//	             node 1", "host-staged bucket 0 ×2")
//	flows        the number of streams on the link
//	share        each stream's rate ("6.25 GB/s each", or per label)
//	load         the sum of the rates
//	utilisation  load over the link's bandwidth, in [0, 1]
//
// Two equal flows of S bytes on an otherwise idle link of bandwidth B
// thus show as one slice of length 2S/B with flows 2, share B/2 each and
// utilisation 1. Recording costs nothing when TraceSteps is 0; the trace
// repeats byte for byte for the same Config.
//
// # Determinism
//
// There is no wall clock and no global random source. The same Config
// gives the same Result bit for bit on one architecture; without jitter
// the results are bit-identical across architectures, as the event core's
// are (the jitter uses math.Exp, which has assembly implementations).
//
// # Errors
//
// Run returns an error wrapping ErrConfig that lists every problem of a
// configuration, or one wrapping ErrMemory that names the largest
// micro-batch that fits; it never panics on a bad configuration.
package sim
