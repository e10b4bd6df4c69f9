package cmd

import (
	"fmt"
	"runtime"
	"time"

	"github.com/urfave/cli/v2"

	"scaleplan/engine/measure"
	"scaleplan/internal/progress"
)

// coreGuardFlag is the flag that turns the guard on or off.
func coreGuardFlag(name string) cli.Flag {
	return &cli.BoolFlag{Name: name, Value: true, DefaultText: "true with two CPUs, false with more",
		Usage: "make every measurement while the first two CPUs share a cache (waits or repeats; see the description); by default on with two CPUs, the machine it is for, and off with more, whose workers compute on CPUs it does not probe; never with fewer than two"}
}

// guardWanted reports whether the guard is asked for: as the flag says
// when it is set, and else only on a machine of two CPUs. The guard
// probes the first two CPUs, which on a 2-core virtual machine are all the
// workers have; on a machine of more the workers compute on others too,
// and a probe of the first two says little of them (on 16 cores of a Xeon
// its handoff varied from 24 to 100 ns with no sign of the spells the
// guard is for, and it repeated measurement after measurement;
// testdata/measurements/validate-engine-2026-11-26/README.md).
func guardWanted(set, value bool, cpus int) bool {
	if set {
		return value
	}
	return cpus == 2
}

// newBarGuard returns the guard flag name asks for (guardWanted), or nil
// if it asks for none or the machine cannot have one (fewer than two CPUs
// or GOMAXPROCS below 2); the guard reports each repeat on bar, its lines
// starting with label, and adds it to bar's total.
func newBarGuard(c *cli.Context, name, label string, bar *progress.Bar, total *int) *measure.Guard {
	if !guardWanted(c.IsSet(name), c.Bool(name), runtime.NumCPU()) || runtime.NumCPU() < 2 || runtime.GOMAXPROCS(0) < 2 {
		return nil
	}
	g := measure.NewGuard()
	g.Repeated = func(d time.Duration) {
		*total++
		bar.Total(*total)
		bar.Printf("%s: the first two CPUs were apart after that measurement (handoff %s, best %s): measuring it again", label, measure.FormatHandoff(d), measure.FormatHandoff(g.Best))
	}
	g.Revisiting = func(d time.Duration) {
		*total++
		bar.Total(*total)
		bar.Printf("%s: a measurement made before the run's best probe was made apart (handoff %s, best %s): measuring it again", label, measure.FormatHandoff(d), measure.FormatHandoff(g.Best))
	}
	return g
}

// warmRoundsFlag is the flag name of the warm rounds measure.Rounds makes
// before its rounds, one by default.
func warmRoundsFlag(name string) cli.Flag {
	return &cli.IntFlag{Name: name, Value: 1, Usage: fmt.Sprintf("first measure every configuration `N` times (0 to %d) and set those aside, while the process warms up", measure.MaxWarmRounds)}
}

// warmRounds returns the value of the warm-rounds flag name, or a usage
// error outside 0 to measure.MaxWarmRounds.
func warmRounds(c *cli.Context, name string) (int, error) {
	warm := c.Int(name)
	if warm < 0 || warm > measure.MaxWarmRounds {
		return 0, usagef("--%s %d: want 0 to %d", name, warm, measure.MaxWarmRounds)
	}
	return warm, nil
}
