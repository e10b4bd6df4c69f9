// Package plan searches the systems and configurations that train a
// recipe to its target fastest and cheapest, within a deadline and a
// budget (Search), and returns the Pareto set of time against cost.
//
// Search tries device counts, per-device batch, gradient accumulation,
// pipeline stages, precision, all-reduce algorithm, transport and storage
// on candidate systems. At a fixed system and device count every cost
// (device-hours, dollars, energy) is proportional to time, so only the
// fastest configuration there can be on the Pareto set of time against
// cost; the search finds it by trying compute configurations in order of
// a lower bound on their time,
//
//	steps(B) · max((M + S − 1)·c(b)/S + u/S, (B/nodes)/r_in)
//
// (c(b) the compute of a micro-batch, u the update, S stages, M
// micro-batches, r_in the slowest input stage's rate per node), and
// improving communication and storage one dimension at a time. Each kept
// configuration is predicted exactly as predict.Predict would predict its
// Candidate.Scenario. Configurations that cannot run are listed in
// Result.Infeasible with their reason.
//
// LLM searches the parallel layouts of a transformer (llm.Search) on a
// catalogue system, over a range of GPU counts (GPUChoices) and the
// model's published batches (PublishedBatches), for the fastest, or the
// cheapest within a deadline; it times each operator by package
// compute's operator model (OperatorTime; the roofline for a device
// without SMs) and each collective on the system's network, built once
// per group (sim.Collectives), in bf16 or fp8 (FP8GEMMs). LLMCases
// (papers' runs) and MLPerfGPT3Cases (MLPerf Training's GPT-3 175B on
// H100, in fp8) are published LLM training runs; ValidateLLM predicts
// them (docs/llm.md, docs/llm-mlperf.md).
// FitLLM fits, to a logged layout's measured steps, the factor on the
// operator times that makes its step time match; LLM and LLMStep apply a
// calibration file's factor to the system's device.
package plan
