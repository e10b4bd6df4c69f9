// Package event is the discrete-event core of the simulator: a clock and a
// queue of events, each a function to run at a simulated time.
//
// # Overview
//
// A Scheduler runs pending events in the order
//
//	(time, sequence)
//
// where sequence is the order in which At was called, so events at the same
// time run in the order they were scheduled. It keeps them in a calendar
// queue (package timeq; R. Brown, Communications of the ACM 31(10), 1988):
// a ring of buckets each covering an interval of time, about two events a
// bucket, so that scheduling and running an event cost a constant rather
// than the logarithm of the number pending. UseSortedQueue swaps it for a
// sorted list, the reference it is tested against: the order of events,
// and so every time a model computes, is the same on both. An event
// scheduled at the current time (a model deferring work to the end of the
// instant) joins a first-in first-out queue instead, which Step merges
// with the others by the same order, so it costs no queue operation. Step
// pops the earliest event, advances the clock to its time and runs it; Run
// repeats until the queue is empty and RunUntil stops before the first
// event later than a given time. An event may schedule or cancel others.
// AtEvent takes an Event (a type with a Fire method) instead of a func,
// which lets a model schedule a pointer it already holds without
// allocating a closure; both kinds share one queue and one sequence. There
// are no goroutines, no locks and no wall clock: the simulated time is a
// value that only Step changes, and it never decreases.
//
// # Time
//
// Time is a units.Seconds (a float64 of seconds since the start of the
// simulation), not an integer count of ticks. The models above this package
// must agree with closed forms such as the alpha-beta cost
//
//	T = alpha + n/beta
//
// to a relative 1e-9 for every message size. With integer nanoseconds a
// 1 KiB message over a 300 GB/s link (3.4 ns) would round by up to 15 %, and
// integer picoseconds still by 1.5e-4, while int64 femtoseconds overflow
// after 2.6 simulated hours (a training run lasts days). A float64 has a
// 53-bit significand: at one simulated week (6e5 s) its resolution is
// 1.2e-10 s, and every time it represents is rounded with a relative error
// of at most 1.1e-16, so a sum of m durations is within about m·1.1e-16 of
// the exact value: 2·1023 ring steps stay near 2e-13.
//
// Float time cannot drift the way a ticking clock does, because the clock is
// never advanced by repeated increments: each event time is computed once,
// as now + d, when the event is scheduled, and the clock jumps to it. Order
// is exact as well: ties are broken by the sequence number, never by
// rounding, and float64 comparison is deterministic. The models compute
// durations with plain IEEE-754 operations (no math library calls whose
// last bit may vary), and write each product that feeds an addition as
// float64(x*y), which the Go specification guarantees is not fused into a
// multiply-add, so results are bit-identical on every architecture.
//
// # Determinism
//
// The same sequence of calls gives the same sequence of events and the same
// times, bit for bit. Randomness belongs to the models, which take an
// explicit *rand.Rand (math/rand/v2); this package has none.
//
// # Errors
//
// Scheduling an event before the current time, at a NaN or infinite time,
// or with a nil function is a programming error and panics with a message
// prefixed "event:".
package event
