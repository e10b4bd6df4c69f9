// Command scaleplan predicts how long deep-learning training takes on a
// cluster, and why.
//
// It simulates data-parallel and pipelined training on the systems of its
// hardware catalogue with the cost profiles of its models, calibrated by
// fitting v = b / (b/v0 + t) to measurements from its own reference
// training engine and from the logs of real frameworks. The two commands
// that do everything on a fresh machine:
//
//	go run . predict    the default study: ResNet-50 on TSUBAME 3.0, 1 to 512 GPUs
//	go test ./...       every test
//
// `scaleplan --help` lists the commands (catalog, simulate, fit, plot,
// report, predict, plan, validate, bench), and README.md and docs/ explain
// the models, their sources and how to calibrate them against a cluster.
// The command line lives in internal/cmd; the library packages are hw,
// model, scenarios, sim, fit, predict, plots, calibrate and engine/....
package main
