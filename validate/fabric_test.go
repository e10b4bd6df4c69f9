package validate

import (
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"scaleplan/fit/logs"
	"scaleplan/hw"
	"scaleplan/internal/calib"
	"scaleplan/internal/units"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// ncclTable writes, in the lines nccl-tests' src/common.cu prints, an
// all_reduce_perf test of ranks ranks on nodes hosts whose out-of-place
// time at each size is times(size).
func ncclTable(t *testing.T, ranks, nodes int, times func(units.Bytes) units.Seconds) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# Collective test starting: all_reduce_perf\n")
	b.WriteString("# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 4(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n")
	for r := range ranks {
		fmt.Fprintf(&b, "#  Rank %2d Group  0 Pid %6d on node%02d device %2d [0x18] NVIDIA H100 80GB HBM3\n", r, 1000+r, r/(ranks/nodes), r%(ranks/nodes))
	}
	b.WriteString("#\n#                                                              out-of-place                       in-place\n")
	b.WriteString("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n")
	b.WriteString("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n")
	bus := 2 * float64(ranks-1) / float64(ranks)
	for s := units.Bytes(8); s <= 8<<30; s *= 4 {
		tm := times(s)
		alg := float64(s) / float64(tm) / 1e9
		fmt.Fprintf(&b, "%12d  %12d     float     sum      -1  %9.2f  %6.2f  %6.2f      0  %9.2f  %6.2f  %6.2f      0\n",
			int64(s), int64(s)/4, float64(tm)*1e6, alg, alg*bus, float64(tm)*1e6, alg, alg*bus)
	}
	b.WriteString("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 100.0\n#\n")
	return b.String()
}

// simulated returns the simulator's all-reduce time on ranks ranks of
// nodes nodes of dgx-h100 with the fabric entries of files.
func simulated(t *testing.T, cat *hw.Catalog, ranks, nodes int, files []scenarios.CalibrationFile) func(units.Bytes) units.Seconds {
	t.Helper()
	s, err := scenarios.PlaceFabric(cat, "dgx-h100", ranks, nodes, sim.Ring, files)
	if err != nil {
		t.Fatal(err)
	}
	return func(size units.Bytes) units.Seconds {
		tm, err := sim.AllReduceTime(s.Config, size)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
}

// truthLinks are the links the synthetic tables are simulated at.
const (
	bIntra, lIntra = 200e9, 3e-6
	bInter, lInter = 12e9, 7e-6
)

// syntheticFile holds syntheticTables at truthLinks, for the command's
// tests (-update rewrites it).
const syntheticFile = "testdata/nccl_synthetic_dgx_h100.txt"

// syntheticTables are two nccl-tests tables of a ring all-reduce on
// dgx-h100 simulated with the fabric entries of truth: eight ranks of one
// node and sixteen of two.
func syntheticTables(t *testing.T, cat *hw.Catalog, truth []scenarios.CalibrationFile) string {
	return "# Synthetic nccl-tests output: the simulator's ring all-reduce on dgx-h100 with links inside a node of\n" +
		"# 200 GB/s and 3 us a message and between nodes of 12 GB/s a NIC and 7 us (validate/fabric_test.go writes it).\n" +
		ncclTable(t, 8, 1, simulated(t, cat, 8, 1, truth)) + ncclTable(t, 16, 2, simulated(t, cat, 16, 2, truth))
}

// TestSyntheticFile checks that syntheticFile is what syntheticTables
// writes today.
func TestSyntheticFile(t *testing.T) {
	cat, err := hw.Default()
	if err != nil {
		t.Fatal(err)
	}
	text := syntheticTables(t, cat, truthFiles())
	if g, ok := flag.Lookup("update").Value.(flag.Getter); ok && g.Get().(bool) {
		if err := os.WriteFile(syntheticFile, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(syntheticFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != text {
		t.Errorf("%s differs from the tables simulated today; rerun with -update", syntheticFile)
	}
}

func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the files under testdata/")
	}
}

// truthFiles holds the fabric entries at truthLinks.
func truthFiles() []scenarios.CalibrationFile {
	return []scenarios.CalibrationFile{{Path: "truth", Cal: &calib.Calibration{Fabric: []calib.FabricEntry{
		{System: "dgx-h100", Level: calib.Intra, Bandwidth: bIntra, Latency: lIntra},
		{System: "dgx-h100", Level: calib.Inter, Bandwidth: bInter, Latency: lInter},
	}}}}
}

// TestFitFabricRecoversLinks writes nccl-tests tables of a ring
// all-reduce simulated at known links (inside a DGX H100 node 200 GB/s
// and 3 us a hop; between nodes 12 GB/s a NIC, eight NICs a node, and 7 us), fits them, and
// checks that the fit gives those links back within 1 %, and that the
// fitted links predict tables it did not see: four ranks of a node
// against the ring's closed form
//
//	T(S) = 2(p−1)/p · S/B + 2(p−1)·L,
//
// four nodes against the simulator at the true links, and an all-gather
// over a node against its closed form, within 1 %.
func TestFitFabricRecoversLinks(t *testing.T) {
	cat, err := hw.Default()
	if err != nil {
		t.Fatal(err)
	}
	truth := truthFiles()
	text := syntheticTables(t, cat, truth)
	lg, err := logs.Read(strings.NewReader(text), "synthetic.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(lg.Collectives) != 2 {
		t.Fatalf("read %d tests, want 2", len(lg.Collectives))
	}
	fc, err := FitFabric(cat, "dgx-h100", []*logs.Log{lg}, sim.Ring, sim.CollectiveTime)
	if err != nil {
		t.Fatal(err)
	}
	checkFittedLevels(t, fc, map[string][2]float64{calib.Intra: {bIntra, lIntra}, calib.Inter: {bInter, lInter}}, func(l FabricLevelFit) {
		if l.Entry.Error > 0.01 {
			t.Errorf("%s: mean error %.3g after the fit, want under 1%%", l.Entry.Level, l.Entry.Error)
		}
	})
	fitted := []scenarios.CalibrationFile{{Path: "fit", Cal: &calib.Calibration{Fabric: []calib.FabricEntry{fc.Levels[0].Entry, fc.Levels[1].Entry}}}}
	four := simulated(t, cat, 4, 1, fitted)
	predicted := simulated(t, cat, 32, 4, fitted)
	actual := simulated(t, cat, 32, 4, truth)
	var mae4, mae32 float64
	n := 0
	for s := units.Bytes(8); s <= 8<<30; s *= 4 {
		closed := 2*3.0/4*float64(s)/bIntra + 2*3*lIntra
		mae4 += math.Abs(float64(four(s))/closed - 1)
		mae32 += math.Abs(float64(predicted(s)/actual(s)) - 1)
		n++
	}
	if mae4 /= float64(n); mae4 > 0.01 {
		t.Errorf("4 ranks of a node: mean error %.3g against the closed form, want under 1%%", mae4)
	}
	if mae32 /= float64(n); mae32 > 0.01 {
		t.Errorf("32 ranks on 4 nodes: mean error %.3g against the true links, want under 1%%", mae32)
	}
	// Another op from the all-reduce's fit: a ring all-gather of S bytes
	// of output over p ranks of a node sends (p−1) blocks of S/p,
	// T(S) = (p−1)/p · S/B + (p−1)·L.
	s8, err := scenarios.PlaceFabric(cat, "dgx-h100", 8, 1, sim.Ring, fitted)
	if err != nil {
		t.Fatal(err)
	}
	var maeAG float64
	for s := units.Bytes(8); s <= 8<<30; s *= 4 {
		tm, err := sim.CollectiveTime(s8.Config, sim.OpAllGather, s)
		if err != nil {
			t.Fatal(err)
		}
		closed := 7.0/8*float64(s)/bIntra + 7*lIntra
		maeAG += math.Abs(float64(tm)/closed-1) / float64(n)
	}
	if maeAG > 0.01 {
		t.Errorf("all-gather over 8 ranks of a node: mean error %.3g against the closed form, want under 1%%", maeAG)
	}
}

// TestFitFabricErrors checks that the inputs a fabric fit cannot use are
// refused with the field named.
func TestFitFabricErrors(t *testing.T) {
	cat, err := hw.Default()
	if err != nil {
		t.Fatal(err)
	}
	one := func(units.Bytes) units.Seconds { return 50 * units.Microsecond }
	for _, tc := range []struct {
		name, system string
		ranks, nodes int
		want         string
	}{
		{"unknown system", "no-such-system", 8, 1, "system"},
		{"more ranks than a node holds", "dgx-h100", 12, 1, "ranks 12 on 1 nodes"},
		{"more nodes than the system has", "dgx-h100", 16384, 2048, "nodes 2048"},
		{"a level the system lacks: no peer-to-peer in a node", "zinrai-200e-t4x4", 4, 1, "level intra"},
		{"a level the system lacks: one node", "zinrai-200e-t4x4", 8, 2, "nodes 2"},
	} {
		lg, err := logs.Read(strings.NewReader(ncclTable(t, tc.ranks, tc.nodes, one)), "bad.txt")
		if err != nil {
			t.Fatal(err)
		}
		_, err = FitFabric(cat, tc.system, []*logs.Log{lg}, sim.Ring, sim.CollectiveTime)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
}

// checkFittedLevels checks that fc fitted two levels, each without error
// and with the bandwidth and latency of want[level] within 1 %, then runs
// more on each.
func checkFittedLevels(t *testing.T, fc *FabricCalibration, want map[string][2]float64, more func(FabricLevelFit)) {
	t.Helper()
	if len(fc.Levels) != 2 {
		t.Fatalf("fitted %d levels, want 2", len(fc.Levels))
	}
	for _, l := range fc.Levels {
		if l.Err != nil {
			t.Fatalf("%s: %v", l.Level, l.Err)
		}
		w := want[l.Entry.Level]
		if e := math.Abs(float64(l.Entry.Bandwidth)/w[0] - 1); e > 0.01 {
			t.Errorf("%s bandwidth %v, want %v within 1%%", l.Entry.Level, l.Entry.Bandwidth, units.BytesPerSec(w[0]))
		}
		if e := math.Abs(float64(l.Entry.Latency)/w[1] - 1); e > 0.01 {
			t.Errorf("%s latency %v, want %v within 1%%", l.Entry.Level, l.Entry.Latency, units.Seconds(w[1]))
		}
		more(l)
	}
}
