// Package cmd is scaleplan's command line: one urfave/cli application whose
// commands wrap the library packages.
//
//	catalog   the hardware catalogue, model profiles, recipes and scenarios (hw, model, scenarios)
//	simulate  a scenario's steps: step time and its parts, throughput, memory (scenarios, sim)
//	fit       the throughput law and steps-to-target curves from training logs (fit)
//	plot      charts as PNG and SVG (plots)
//	report    one self-contained HTML page of a scenario's predictions and charts
//	predict   time to target accuracy across cluster sizes, and the risk (predict)
//	plan      the fastest and cheapest configurations to a target (plan.Search)
//	validate  predictions against published figures; with --engine, against the engine
//	bench     the reference training engine (engine/dist) or PyTorch (engine/torchbench)
//
// Main runs the application and returns the exit code: 0 on success, 1
// when a command ran and failed (a bad input file, a simulation error, a
// target not met by validate --max-error; fit fitting no group; an output
// path that names one of the command's inputs, or another output, which
// is never written over: checkOutputs), 2 when the command line itself was
// wrong (an unknown flag, command or value). Every error is one line
// on standard error that names the file and line, the flag, or the value,
// and the valid choices where there are some.
//
// Tables go to standard output as text, CSV, JSON or Markdown (--format);
// progress and notes go to standard error. Every file a command writes
// (logs, calibrations, charts, reports, traces) is written to a temporary
// file in the same directory and renamed into place (internal/atomicfile),
// so an interrupted command never leaves a half-written file or destroys
// the previous one.
package cmd
