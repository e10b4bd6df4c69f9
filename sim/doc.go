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
// node share its NICs.
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
//	decode  n·Decode/Cores
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
//	           the stage's last all-reduce; and waits for an activation or
//	           gradient already sent by the neighbouring stage but in transit
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
