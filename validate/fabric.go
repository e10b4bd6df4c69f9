package validate

import (
	"fmt"
	"slices"

	"scaleplan/fit"
	"scaleplan/fit/logs"
	"scaleplan/hw"
	"scaleplan/internal/calib"
	"scaleplan/internal/units"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// FabricLevelFit is one level of a system's network fitted to collective
// tests: the calibration entry and the fit behind it.
type FabricLevelFit struct {
	Level string
	// Tests are the tests of the level, where they are.
	Tests []string
	// Entry and Fit are the calibration entry and the fit; Fit is nil
	// (and Entry holds only the system, level and transport) where Err
	// says why there is no fit.
	Entry calib.FabricEntry
	Fit   *fit.FabricFit
	Err   error
	// Catalogue is the level's bandwidth and latency before the fit, as a
	// scenario on the system has them (the starting point).
	Catalogue calib.FabricEntry
}

// FabricCalibration is what FitFabric fitted: at most one level inside a
// node and one between nodes, and the tests it left out by why
// (TestReasons).
type FabricCalibration struct {
	System string
	Levels []FabricLevelFit
	Left   map[string]int
}

// OpTime is a simulator's time of one collective op of size bytes over
// every rank of cfg: sim.CollectiveTime.
type OpTime func(cfg sim.Config, op sim.Op, size units.Bytes) (units.Seconds, error)

// FitFabric fits the links of system to the collective tests of lgs (of
// the ops in CollectiveOps) by inverting the simulator (fit.FitFabric):
// the tests on one node fit the level inside a node, then the tests on
// several nodes fit the level between them with the level inside a node
// held at that fit (or at the catalogue's figures where no test ran on
// one node or its fit failed). t times one collective
// (sim.CollectiveTime); alg is the exchange it runs. Each test's time is
// the larger of the simulator's and the host's per call
// (NCCLTestsHostTime of its devices a thread), as CompareCollectives
// predicts it: sizes the host bounds do not move with the links. Under
// sim.NCCL the latency of the level inside a node is that of NCCL's LL
// ring hop, from which its tuning model's other hop latencies scale
// (scenarios.SetFabric), and between nodes the network's own latency that
// every hop between nodes adds. Tests of another op
// or of one rank are left out (Left); a test that cannot be placed on the
// system is an error naming it; a level the tests do not determine has
// its Err.
func FitFabric(cat *hw.Catalog, system string, lgs []*logs.Log, alg sim.Algorithm, t OpTime) (*FabricCalibration, error) {
	sys, node, _, err := cat.Resolve(system)
	if err != nil {
		return nil, err
	}
	fc := &FabricCalibration{System: sys.Name, Left: map[string]int{}}
	byLevel := map[string][]sourced{}
	for _, lg := range lgs {
		for _, c := range lg.Collectives {
			switch {
			case !slices.Contains(collectiveOpNames, c.Op):
				fc.Left[LeftCollectiveOp]++
				continue
			case c.Ranks < 2:
				fc.Left[LeftCollectiveRank]++
				continue
			}
			c.Points = slices.DeleteFunc(slices.Clone(c.Points), func(p logs.CollectivePoint) bool { return !(p.Bytes > 0) })
			// A log without its ranks' hosts ran on as few nodes as hold
			// its ranks.
			nodes := c.Nodes
			if nodes == 0 {
				nodes = (c.Ranks + node.Devices - 1) / node.Devices
			}
			lv := scenarios.FabricLevel(nodes)
			byLevel[lv] = append(byLevel[lv], sourced{fmt.Sprintf("%s:%d", lg.Name, c.Line), nodes, c})
		}
	}
	var held []scenarios.CalibrationFile
	for _, lv := range calib.FabricLevels {
		tests := byLevel[lv]
		if len(tests) == 0 {
			continue
		}
		l, err := fitLevel(cat, sys.Name, lv, tests, alg, t, held)
		if err != nil {
			return nil, err
		}
		fc.Levels = append(fc.Levels, *l)
		if l.Err == nil {
			held = []scenarios.CalibrationFile{{Path: "this fit", Cal: &calib.Calibration{Fabric: []calib.FabricEntry{l.Entry}}}}
		}
	}
	return fc, nil
}

// Entries returns the calibration entries of the levels fitted.
func (fc *FabricCalibration) Entries() []calib.FabricEntry {
	var out []calib.FabricEntry
	for _, l := range fc.Levels {
		if l.Err == nil {
			out = append(out, l.Entry)
		}
	}
	return out
}

func wheres(tests []sourced) []string {
	out := make([]string, len(tests))
	for i, s := range tests {
		out[i] = s.where
	}
	return out
}

// sourced is a collective test and where it is ("nccl.txt:6").
type sourced struct {
	where string
	nodes int // the nodes it ran on
	c     logs.Collective
}

// fitLevel fits level lv of system to tests, the levels of held applied;
// the error is for a test that cannot be placed, and the level's Err for
// a fit that failed.
func fitLevel(cat *hw.Catalog, system, lv string, tests []sourced, alg sim.Algorithm, t OpTime, held []scenarios.CalibrationFile) (*FabricLevelFit, error) {
	var fts []fit.FabricTest
	var first *scenarios.FabricSetup
	for _, s := range tests {
		setup, err := scenarios.PlaceFabric(cat, system, s.c.Ranks, s.nodes, alg, held)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.where, err)
		}
		if first == nil {
			first = setup
		} else if setup.Transport != first.Transport {
			return nil, fmt.Errorf("%s: crosses transport %s, %s crosses %s", s.where, setup.Transport, tests[0].where, first.Transport)
		}
		op, host := CollectiveOps[s.c.Op], NCCLTestsHostTime(max(1, s.c.GPUs))
		time := func(cfg sim.Config, size units.Bytes) (units.Seconds, error) {
			d, err := t(cfg, op, size)
			return max(d, host), err
		}
		fts = append(fts, fit.FabricTest{Source: s.where, Collective: s.c, Model: setup.Model(time)})
	}
	l := &FabricLevelFit{Level: lv, Tests: wheres(tests),
		Entry:     calib.FabricEntry{System: system, Level: lv, Transport: first.Transport, Algorithm: alg.String()},
		Catalogue: calib.FabricEntry{System: system, Level: lv, Transport: first.Transport, Bandwidth: first.Bandwidth, Latency: first.Latency}}
	f, err := fit.FitFabric(fts, first.Bandwidth, first.Latency, nil)
	if err != nil {
		l.Err = err
		return l, nil
	}
	l.Entry, l.Fit = f.Entry(system, lv, first.Transport, alg.String()), f
	return l, nil
}
