// Package measure is the engine's measurement protocol: configurations
// measured in rounds that alternate over all of them, after warm rounds
// set aside (Rounds), each measurement made between the probes of a core
// guard that keeps them out of the spells in which the first two CPUs do
// not share a cache (Guard), and the throughput sweep of scaleplan bench
// throughput built on them (Sweep).
//
// The guard reads the clock: it times its probes and waits for the
// cores. Everything else is told what to measure through a function, so
// that tests give it measurements of their own.
package measure
