// Package validate sets the predictions of package predict against what
// was measured: published figures (CompareCases), a log's records
// (CompareMeasured, CompareCalibrated), collective benchmarks
// (CompareCollectives) and step times per placement (ComparePlacements),
// each with its error.
//
// # Published figures
//
// CompareCases compares predictions with published figures (a CaseFile,
// docs/validation.md). A case that calibrates sets parameters from its own
// figure (v0 solved so that the prediction matches it, or v0 and t read
// from a fitted law) and is left out of the error; cases that use those
// parameters name them in calibrated_by; cases whose figure was in view
// when a parameter was chosen are marked tuned. The mean absolute error is
// taken over the rest. A time-to-train case may count its steps with the
// MLPerf epochs law (CaseEpochs, docs/validation-mlperf.md), fitted when
// it runs to the submissions of every other round, so that no case
// predicts the runs its law was fitted to; the built-in cases' tables are
// embedded (internal/mlperfepochs), so they run from any directory. The
// report gives those cases' error by accelerators too (Report.Sizes:
// 64-128, 129-512 and above 512, SizeBuckets).
//
// # Measured logs
//
// CompareMeasured sets measurements (a log's records, as Measured) against
// what the catalogue alone predicts for them: the samples/s of devices of
// that kind computing by the model's roofline, with no calibration, one
// device alone or several on whole nodes of the system they ran on, with
// its links and a ring all-reduce; and the largest batch the memory model
// fits (sim.Config.LargestMicroBatch) against the largest batch that ran
// and the first that ran out of memory. The ring's buckets overlap the
// backward pass, but for DeepLearningExamples' TensorFlow 2 Mask R-CNN
// (model maskrcnn-r50-fpn, framework tensorflow), whose MirroredStrategy
// all-reduces every float32 gradient in one pack after the backward pass
// (docs/validation-detection.md). Where one device of two kinds ran
// the same model, precision and variant, its report compares the kinds
// (DeviceRatio): the speed of one over the other at the largest batch both
// ran, measured and predicted, and, for two kinds that differ in memory
// bandwidth alone, the share of a step the bandwidth bounds
// (DeviceRatio.BandwidthShare). Its Sources give each log file's errors,
// on one device and on several (SourceError). CompareCalibrated does the
// same with the compute of the measurements a calibration covers taken
// from its law.
//
// A LogReader turns the logs package fit reads into Measured values (and
// nccl-tests' into MeasuredCollective ones), counting what it leaves out
// and why; a MeasuredReport's ThroughputCharts are the data of its
// throughput charts.
//
// # Collectives
//
// FitOperators fits the operator model's class efficiencies and host
// costs per device and framework mode to measurements of one device, and
// FitProfiles to per-operator profiles; CompareCalibrated applies an
// operators entry of a calibration to its own device's rows (calibrating
// ones marked Fitted) and carries it to other devices (MeasuredRow.Operators).
// CompareProfile sets a per-operator profile's device time beside the
// operator model's, operator kind by operator kind, and ProfileKinds.Carry
// predicts the profiled step on another device from it, Habitat's way.
//
// CompareCollectives predicts each message size of an all-reduce test
// (nccl-tests' all_reduce_perf, as MeasuredCollective) with the
// simulator's network on the test's system, and compares times and bus
// bandwidths. nccl-tests times its calls back to back on the host's clock,
// so a call is predicted at the larger of the devices' time and the host's
// (NCCLTestsHostTime: a kernel launch and NCCL's enqueue for each device a
// thread drives). A test run with NCCL_P2P_DISABLE=1
// (MeasuredCollective.NCCLP2PDisable, validate --nccl-p2p-disable)
// exchanges through host memory at the node's shared-memory rate.
//
// FitFabric fits a system's links to such tests (fit.FitFabric around the
// simulator, the host's time per call included): under the NCCL exchange
// the level inside a node by its port's bandwidth and NCCL's LL ring hop
// latency, from which its tuning model's other hop latencies scale, the
// level between nodes by each NIC's bandwidth and the network's latency
// per hop, so that a fit of one op or node count predicts another
// (validate --fabric-from; docs/validation-collectives.md).
//
// # Placements
//
// ComparePlacements takes a table of step times per placement of the
// devices over nodes (logs.Placements: the Pollux artifact's traces, one
// digit a node, "1234"), fits the throughput law to its rows of one
// device, and simulates one data-parallel step of every other row on its
// placement of the system's nodes, uneven counts included
// (sim.Config.Placement), with the system's catalogue network. Its report
// gives each row's step and exposed exchange against the measured ones,
// and per class (ClassOf: one node, several nodes with equal counts,
// uneven counts) the mean error and bias (docs/validation-placements.md).
package validate
