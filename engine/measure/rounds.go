package measure

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"time"

	"scaleplan/engine/dist"
)

// MaxWarmRounds bounds the warm rounds of a sweep.
const MaxWarmRounds = 9

// Rounds measures n configurations in rounds, each round all of
// them in order with measure(round, i) and then afterRound(round) if it is
// not nil, so that the spells of load on a shared machine fall on all of
// them alike; it returns each configuration's measurement over the timed
// steps of all its rounds (dist.Combine), and the measurements kept, by
// configuration and round. With a guard (nil: none), each measurement is
// made between its probes and as often as it decides (Guard), and
// after the rounds up to n of those it finds were made apart are made
// again. Errors are returned as they are, with the measurements kept so
// far.
//
// Before the rounds, warm rounds measure every configuration once each,
// as measure(-1, i), and set the results aside: a fresh process's first
// measurements run slow while its memory is new to it (docs/validation.md,
// "Rounds, and cores apart"), and the first configurations of a sweep would carry
// that into every later figure. They are made without the guard and
// without afterRound.
func Rounds(n, warm, rounds int, measure func(r, i int) (*dist.Measurement, error), afterRound func(r int) error, guard *Guard) ([]*dist.Measurement, [][]*dist.Measurement, error) {
	return RoundsTo(n, warm, rounds, measure, afterRound, guard, Hooks{})
}

// Hooks receive RoundsTo's measurements as it makes them, for
// a log written as the run goes. Either may be nil; an error of either
// ends the run.
type Hooks struct {
	// Kept receives each measurement of a round that the guard keeps
	// (not those it has made again), round r of configuration i, as
	// soon as it is made; not the revisits after the rounds.
	Kept func(r, i int, m *dist.Measurement) error
	// Final receives each configuration's measurement over its rounds
	// as soon as it is final: without a guard right after the
	// configuration's last round, with one (whose revisits may replace
	// any) at the end, in order.
	Final func(i int, m *dist.Measurement) error
}

// RoundsTo is Rounds telling hooks of its measurements.
func RoundsTo(n, warm, rounds int, measure func(r, i int) (*dist.Measurement, error), afterRound func(r int) error,
	guard *Guard, hooks Hooks) ([]*dist.Measurement, [][]*dist.Measurement, error) {
	for range warm {
		for i := range n {
			if _, err := measure(-1, i); err != nil {
				return nil, nil, err
			}
		}
	}
	guard.start()
	all := make([][]*dist.Measurement, n)
	levels := make([][]time.Duration, n) // each measurement's probe level
	// meas[i] is set once configuration i is final: without a guard
	// after its last round (nothing revisits it), else after the revisits.
	meas := make([]*dist.Measurement, n)
	for r := range rounds {
		for i := range n {
			m, level, err := guard.measure(func() (*dist.Measurement, error) { return measure(r, i) })
			if err != nil {
				return nil, all, err
			}
			all[i] = append(all[i], m)
			levels[i] = append(levels[i], level)
			if hooks.Kept != nil {
				if err := hooks.Kept(r, i, m); err != nil {
					return nil, all, err
				}
			}
			if hooks.Final != nil && guard == nil && r == rounds-1 {
				if meas[i], err = dist.Combine(all[i]); err != nil {
					return nil, all, err
				}
				if err := hooks.Final(i, meas[i]); err != nil {
					return nil, all, err
				}
			}
		}
		if afterRound != nil {
			if err := afterRound(r); err != nil {
				return nil, all, err
			}
		}
	}
	if err := revisitStale(rounds, all, levels, measure, guard); err != nil {
		return nil, all, err
	}
	for i, ms := range all {
		if meas[i] != nil {
			continue // combined and given to hooks.Final after its last round
		}
		m, err := dist.Combine(ms)
		if err != nil {
			return nil, all, err
		}
		meas[i] = m
		if hooks.Final != nil {
			if err := hooks.Final(i, m); err != nil {
				return nil, all, err
			}
		}
	}
	return meas, all, nil
}

// revisitStale makes again the measurements of all (by configuration and
// round, of probe levels levels) made while the cores were apart, in a
// spell the run started in and so took for their best, now that the run
// knows better (Guard): the most apart first, at most a round's
// worth (one per configuration), and none once the guard has spent its
// budget.
func revisitStale(rounds int, all [][]*dist.Measurement, levels [][]time.Duration, measure func(r, i int) (*dist.Measurement, error), guard *Guard) error {
	n := len(all)
	type made struct{ i, r int }
	var stale []made
	for r := range rounds {
		for i := range n {
			if guard.stale(levels[i][r]) {
				stale = append(stale, made{i, r})
			}
		}
	}
	slices.SortStableFunc(stale, func(a, b made) int { return cmp.Compare(levels[b.i][b.r], levels[a.i][a.r]) })
	for k, x := range stale {
		if k == n || guard.spent() {
			guard.Unrevisited = len(stale) - k
			break
		}
		m, level, replace, err := guard.revisit(levels[x.i][x.r], func() (*dist.Measurement, error) { return measure(x.r, x.i) })
		if err != nil {
			return err
		}
		if replace {
			all[x.i][x.r], levels[x.i][x.r] = m, level
		}
	}
	return nil
}

// RoundPrefix is "round r: " for a measurement of a sweep in rounds,
// "warm-up: " for one of a warm round (r < 0), "" for one in a single
// round.
func RoundPrefix(r, rounds int) string {
	switch {
	case r < 0:
		return "warm-up: "
	case rounds == 1:
		return ""
	}
	return fmt.Sprintf("round %d: ", r+1)
}

// SweepThreads returns the goroutines that every worker of a sweep over
// the worker counts workers computes on when --threads is not given: the
// cores' share at the largest count, and at least one,
//
//	threads = max(1, NumCPU / max(workers))
//
// for every count alike. A worker is then the same device at every count
// of the sweep, as one GPU is in a sweep of 1 to 8 GPUs: one core of two in
// a sweep of 1 and 2 workers, not both cores at one worker and one core
// each at two. fit's split of the fixed time across device counts,
// t(p) = t_fixed + 2(p−1)/p · t_comm, compares the counts' t and holds
// only for the same device (docs/bench.md, "Throughput and the fitted
// law"). A sweep of one count gets dist's default, NumCPU/W.
func SweepThreads(workers []int) int {
	return dist.Threads(runtime.NumCPU(), slices.Max(workers))
}
