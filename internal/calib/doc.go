// Package calib defines the calibration file: fitted throughput laws,
// communication splits, steps-to-target curves and fabric links that
// `scaleplan fit` writes and a scenario references, so that the simulator
// uses measured figures instead of rooflines and catalogue links. A
// FabricEntry is one level of a system's network (Intra: each device's
// port inside a node; Inter: each NIC) whose bandwidth and latency make
// the simulator's collective times match nccl-tests' (fit.FitFabric);
// scenarios.ApplyFabric puts it in place of the catalogue's figures. An
// LLMEntry is the factor on the operator times that makes plan --llm's
// step of a logged layout match a Megatron-LM, torchtitan or DeepSpeed
// log (plan.FitLLM). The
// package sits below both fit (which writes it) and scenarios (which
// reads it), which never import each other.
package calib
