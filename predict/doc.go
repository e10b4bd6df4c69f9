// Package predict turns simulated steps into answers: how long a model
// takes to reach its target accuracy on a cluster (Predict). Package plan
// searches the systems and configurations that reach it fastest and
// cheapest; package validate compares the predictions with published
// figures, logs and collective benchmarks.
//
// # Time to accuracy
//
// For each configuration of a scenario's sweep, Predict simulates the
// step with package sim and counts
//
//	time = steps(B) · step time + staging + evaluation + start-up
//
// with B the global batch (per-device batch · replicas · accumulation).
// steps(B) is the recipe's (model.Recipe.Steps: epochs · ⌈N/B⌉ for a
// recipe in epochs over N training samples), or the scenario's fitted
// steps-to-target curve (McCandlish et al. 2018)
//
//	S(B) = S_min · (1 + B_noise / B)
//
// Staging is the simulated one-time copy of the data set onto the nodes;
// evaluation and start-up are MLPerf's timed region (the recipe's
// model.TimedRegion: evaluations at the rules' cadence, each a pass of
// forward-only steps, sim.EvalPassTime, plus any checkpoint per evaluation
// and one-time evaluation setup, and the start-up after run_start),
// or the scenario's overheads where positive. A Row also holds
// the step's breakdown (compute, exposed communication, exposed input,
// pipeline bubble, straggler wait), samples/s, device-hours (devices ·
// time), cost (device-hours · the system's price, when the catalogue has
// one) and energy (EnergyModel: devices · node power / devices per node ·
// time when the node has a power figure, else devices · TDP · time). The
// scaling efficiency of a row is the ratio of device-hours per run against
// the row with the fewest devices and the same per-device batch,
//
//	efficiency(N) = N0 · time(N0) / (N · time(N))
//
// so that everything that grows with the cluster counts: exposed
// communication, input stalls, staging.
//
// # Scaling rule and risk
//
// Growing a cluster at a fixed per-device batch grows the global batch.
// RuleOf names how the recipe's learning rate follows it: Linear scaling
// with warm-up for SGD and momentum recipes that warm up (Goyal et al.
// 2017), LARS's per-layer rates for LARS recipes, Fixed otherwise (seed
// 001's Caffe2 recipe keeps 0.1 at every batch). Past the largest global
// batch the recipe is known to reach its target with (the curve's
// max_batch, else model.Recipe.MaxGlobalBatch), a Row's Risk says the
// target is at risk, by how many times the batch exceeds that limit, and
// what the recipe is known to have lost there (model.Recipe.Shortfall:
// seed 001's 128 GPUs × 32 ended 0.05 below 32 GPUs). Summarize picks the
// fastest configuration, the fastest within the known batch, and the
// fastest whose efficiency is at least EfficiencyThreshold.
//
// # How sure a row is
//
// Prediction.Source says what the compute time comes from (a calibration,
// the operator model, the roofline). Row.TrainRange is the time to target
// at the ends of the calibration's v0 and t intervals, in closed form
// through the law t(b) = b·D/v0 + t (LawRange), or, uncalibrated, Time
// plus the model's measured band (Source.Band: for the operator model the
// interval that held 80 % of its published validation's measured steps)
// times the steps' time. Where the gradient exchange is NCCL's over links no fabric
// calibration set, each end moves further by the steps' exposed
// communication times CommError: the collective model's measured error on
// published nccl-tests tables at the size of one bucket's all-reduce, on
// one node or several (Row.CommError).
//
// # Studies
//
// A Study predicts several scenarios side by side over the same device
// counts, with a shared compute calibration. DefaultStudy is what
// `scaleplan predict` runs with no argument: seed 001's three Caffe2
// setups on TSUBAME 3.0 from 1 to 512 GPUs.
package predict
