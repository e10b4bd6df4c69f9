// Package benchlog defines the bench log: the JSON-lines records that the
// reference engine (engine/dist), the PyTorch bench script
// (engine/torchbench) and any other program write, and that fit reads.
//
// # Format
//
// One JSON object per line. The first line of a file is normally a header
// record describing the run and the machine; then come step records (one
// per timed step), measurement records (the summary of the timed steps at one
// configuration), convergence records (steps to reach a target accuracy at
// one global batch) and oom records (a configuration that did not fit):
//
//	{"kind":"header","run":"r1","tool":"scaleplan-engine","machine":{"cpu":"...","cores":2}}
//	{"kind":"measurement","run":"r1","model":"mlp","device":"localhost","workers":1,"batch":64,"global_batch":64,"steps":20,"step_time_s":0.0061,"samples_per_s":10491}
//	{"kind":"convergence","run":"r2","model":"mlp","global_batch":256,"target":0.85,"accuracy":0.853,"reached":true,"steps_to_target":1400}
//
// A record of workers on several machines gives their placement: nodes
// and devices_per_node beside workers, the world size (NodesLabel is the
// label fit groups them by).
//
// A log that a run cut short (an interrupt, an error) ends with an end
// record that says so and why; the records before it are what the run
// measured until then. A log without an end record reads as complete:
//
//	{"kind":"end","run":"r1","complete":false,"reason":"interrupted"}
//
// File writes a log record by record to a temporary file, each record
// written through as it comes, and puts it in place when the run ends,
// complete or not. Stream is a command's log on a File: it ends one that
// a run cut short with the end record and says so. Header makes a run's
// header record from its configuration, ThisMachine describes the
// machine for it, and Encode writes a whole log at once.
//
// Quantities are plain numbers in the unit that their JSON name ends with:
// _s for seconds, _bytes for bytes, samples_per_s for samples per second.
// Accuracy and target are fractions in [0, 1]. Unknown fields are errors, so
// a typo in a hand-written log is caught.
package benchlog
