package validate

import (
	"math"
	"strings"
	"testing"

	"scaleplan/fit/logs"
	"scaleplan/hw"
	"scaleplan/internal/calib"
	"scaleplan/internal/units"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// ncclTruth are the links the NCCL tables are simulated at, on dgx-a100:
// inside a node 180 GB/s a port and 1.2 us a LL ring hop (tuning.cc's
// 0.6 us doubled), between nodes 20 GB/s a NIC and 12 us a hop.
const (
	ncclBIntra, ncclLIntra = 180e9, 1.2e-6
	ncclBInter, ncclLInter = 20e9, 12e-6
)

func ncclTruthFiles() []scenarios.CalibrationFile {
	return []scenarios.CalibrationFile{{Path: "truth", Cal: &calib.Calibration{Fabric: []calib.FabricEntry{
		{System: "dgx-a100", Level: calib.Intra, Algorithm: "nccl", Bandwidth: ncclBIntra, Latency: ncclLIntra},
		{System: "dgx-a100", Level: calib.Inter, Algorithm: "nccl", Bandwidth: ncclBInter, Latency: ncclLInter},
	}}}}
}

// ncclSimulated returns the NCCL exchange's time of op on ranks ranks of
// nodes nodes of dgx-a100 with the fabric entries of files, and at least
// the host's time per call of one device a thread (NCCLTestsHostTime), as
// CompareCollectives predicts a test.
func ncclSimulated(t *testing.T, cat *hw.Catalog, ranks, nodes int, op sim.Op, files []scenarios.CalibrationFile) func(units.Bytes) units.Seconds {
	t.Helper()
	s, err := scenarios.PlaceFabric(cat, "dgx-a100", ranks, nodes, sim.NCCL, files)
	if err != nil {
		t.Fatal(err)
	}
	return func(size units.Bytes) units.Seconds {
		tm, err := sim.CollectiveTime(s.Config, op, size)
		if err != nil {
			t.Fatal(err)
		}
		return max(tm, NCCLTestsHostTime(1))
	}
}

// TestFitFabricNCCLRecoversLinks writes nccl-tests all-reduce tables of
// the NCCL exchange (the algorithm and protocol NCCL's tuning model picks
// at each size) simulated at known links, eight ranks of one node and
// sixteen of two, fits them, and checks that the fit gives back the
// bandwidth of both levels, the LL ring hop latency inside a node and the
// network's latency between nodes within 1 %, and that the calibration
// fitted to the all-reduce predicts what it did not see — an all-gather
// and a reduce-scatter over a node, and an all-reduce over four nodes —
// within 1 % of the simulator at the true links.
func TestFitFabricNCCLRecoversLinks(t *testing.T) {
	cat, err := hw.Default()
	if err != nil {
		t.Fatal(err)
	}
	truth := ncclTruthFiles()
	text := ncclTable(t, 8, 1, ncclSimulated(t, cat, 8, 1, sim.OpAllReduce, truth)) +
		ncclTable(t, 16, 2, ncclSimulated(t, cat, 16, 2, sim.OpAllReduce, truth))
	lg, err := logs.Read(strings.NewReader(text), "synthetic.txt")
	if err != nil {
		t.Fatal(err)
	}
	fc, err := FitFabric(cat, "dgx-a100", []*logs.Log{lg}, sim.NCCL, sim.CollectiveTime)
	if err != nil {
		t.Fatal(err)
	}
	checkFittedLevels(t, fc, map[string][2]float64{calib.Intra: {ncclBIntra, ncclLIntra}, calib.Inter: {ncclBInter, ncclLInter}}, func(l FabricLevelFit) {
		if l.Entry.Algorithm != "nccl" || len(l.Entry.Undetermined) > 0 {
			t.Errorf("%s: algorithm %q, undetermined %v; want nccl, both determined", l.Entry.Level, l.Entry.Algorithm, l.Entry.Undetermined)
		}
	})
	fitted := []scenarios.CalibrationFile{{Path: "fit", Cal: &calib.Calibration{Fabric: fc.Entries()}}}
	for _, c := range []struct {
		name         string
		ranks, nodes int
		op           sim.Op
	}{
		{"all-gather, 8 ranks of a node", 8, 1, sim.OpAllGather},
		{"reduce-scatter, 8 ranks of a node", 8, 1, sim.OpReduceScatter},
		{"all-reduce, 32 ranks on 4 nodes", 32, 4, sim.OpAllReduce},
	} {
		got, exp := ncclSimulated(t, cat, c.ranks, c.nodes, c.op, fitted), ncclSimulated(t, cat, c.ranks, c.nodes, c.op, truth)
		var mae float64
		n := 0
		for s := units.Bytes(8); s <= 8<<30; s *= 4 {
			mae += math.Abs(float64(got(s)/exp(s)) - 1)
			n++
		}
		if mae /= float64(n); mae > 0.01 {
			t.Errorf("%s: mean error %.3g against the true links, want under 1%%", c.name, mae)
		}
	}
}
