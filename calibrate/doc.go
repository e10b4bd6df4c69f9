// Package calibrate is the engine's calibration loop: measure, fit,
// simulate, compare, the one place that joins the reference engine
// (engine/dist, through the measurement protocol of engine/measure), fit
// and sim.
//
// Run measures, on this machine, the calibration's sweeps (independent
// workers, or workers in step, computing as the predicted workers will;
// Sweeps) and W workers training together over each transport, in
// alternating rounds with a probe of every link after each; fits
// v = b / (b/v0 + t) to each sweep; simulates the W workers with what it
// fitted (SimConfig); and compares the simulation with the measurement,
// row by row (Row, SummaryOf). Replay rebuilds the same report from the
// records of a run's log, measuring nothing.
//
// Results are plain data; scaleplan validate --engine formats them.
package calibrate
