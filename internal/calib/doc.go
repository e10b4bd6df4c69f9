// Package calib defines the calibration file: fitted throughput laws,
// communication splits and steps-to-target curves that `scaleplan fit`
// writes and a scenario references, so that the simulator uses measured
// figures instead of rooflines. It sits below both fit (which writes it)
// and scenarios (which reads it), which never import each other.
package calib
