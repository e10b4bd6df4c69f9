// Package scenarios holds the shipped scenario files and their loader.
//
// A scenario puts a model, trained with a recipe, on a system of the
// hardware catalogue, and says how: the parallelism (data-parallel replicas,
// pipeline stages, gradient accumulation, the all-reduce algorithm and the
// transports it uses), the input pipeline (where samples are stored, whether
// they are staged onto local drives first, prefetch depth, input precision),
// an optional calibration (measured ideal throughput v0 and cost time t),
// straggler jitter, fixed overheads, and a sweep of device counts and
// per-device batches.
//
// # Loading
//
// Load takes a shipped scenario's name or a file path. It decodes the YAML
// strictly (an unknown field is an error that names the valid ones),
// resolves the system, model and recipe against the catalogue and the
// profiles (with Options' extra files, and the scenario's own inline
// catalog and profiles sections, which let one file describe a whole
// cluster and model), fills in defaults from the recipe and the system, and
// reports every problem at once with its line.
//
// # Sweeps
//
// Points expands the sweep. For n devices in nodes of d devices, with S
// pipeline stages and M micro-batches per step:
//
//	nodes    = n / min(d, n)
//	replicas = n / S
//	global batch = per-device batch · replicas · M
//
// A device count that does not fill whole nodes, does not divide into the
// stages, or needs more nodes than the system has, is an error.
//
// # Calibrations
//
// Options.Calibrations are files `scaleplan fit --out` wrote. A throughput
// entry replaces the compute (PickCalibration); the fabric entries of the
// scenario's system replace the catalogue's links of their level
// (ApplyFabric); a comm entry of its model sets the exchange so that the
// simulated all-reduce costs the fitted r(p)·t_comm, after the backward
// pass. PlaceFabric and FabricSetup.Model build the simulator's side of a
// fabric fit (fit.FitFabric).
package scenarios
