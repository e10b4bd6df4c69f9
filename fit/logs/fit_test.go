package logs_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"scaleplan/fit"
	"scaleplan/fit/logs"
)

// The tests of this file fit what the readers return: the figures a fit
// recovers from a log are the readers' output checked end to end.

// TestFitCSVMerged: the law fitted to the measurements that a CSV's rows
// are merged into past AggregateRows (TestReadCSVMerges) is the one the
// rows scatter about.
func TestFitCSVMerged(t *testing.T) {
	n := 15 * (logs.AggregateRows/15 + 1000) // whole cycles past the limit
	data := append(logs.CSVRowsOf(n), "resnet50,64,abc\n"...)
	lg, err := logs.Read(bytes.NewReader(data), "big.csv")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := fit.Fit([]*logs.Log{lg}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := rep.Groups[0].Fit; f == nil || math.Abs(f.V0/1000-1) > 1e-9 || math.Abs(float64(f.T)/0.01-1) > 1e-9 {
		t.Errorf("fit %+v, want v0 1000, t 0.01", f)
	}
}

// TestFitLightningEvals fits the steps to 0.8 of
// ../testdata/lightning_val_metrics.csv (see TestReadLightningEvals). At a
// batch of 128 it reaches 0.8 after 200 steps, at 256 after 150; so
// S(B) = S_min·(1 + B_noise/B) through the two points has
// 200 = S_min·(1 + B_noise/128) and 150 = S_min·(1 + B_noise/256):
// B_noise = 128, S_min = 100.
func TestFitLightningEvals(t *testing.T) {
	lg, err := logs.ReadFile("../testdata/lightning_val_metrics.csv")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := fit.Fit([]*logs.Log{lg}, &fit.Options{Target: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Steps) != 1 || rep.Steps[0].Fit == nil {
		t.Fatalf("steps: %+v", rep.Steps)
	}
	if f := rep.Steps[0].Fit; math.Abs(f.SMin-100) > 1e-6 || math.Abs(f.BNoise-128) > 1e-4 {
		t.Errorf("S_min %v, B_noise %v; want 100, 128", f.SMin, f.BNoise)
	}
}

// TestMLPerfFitCatalogueName: the groups and the calibration of MLPerf
// logs at three global batches carry the catalogue's name, and the law
// fitted to their epochs is the one they were made from.
func TestMLPerfFitCatalogueName(t *testing.T) {
	const v0, tFixed, perEpoch = 12000.0, 0.02, 1281167.0
	var lgs []*logs.Log
	for _, gb := range []int{256, 1024, 4096} {
		v := float64(gb) / (float64(gb)/v0 + tFixed)
		ms := int64(math.Round(perEpoch / v * 1000))
		evs := logs.MLRunEvents("resnet", gb, 0, []int64{ms, ms}, 0.76, "success")
		lg, err := logs.ReadAs(strings.NewReader(logs.MLLog(t, evs, true)), fmt.Sprintf("b%d.log", gb), logs.MLPerfV06)
		if err != nil {
			t.Fatal(err)
		}
		lgs = append(lgs, lg)
	}
	rep, err := fit.Fit(lgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 1 || rep.Groups[0].Key.Model != "resnet50" || rep.Groups[0].Fit == nil {
		t.Fatalf("groups %+v: want one fitted group of resnet50", rep.Groups)
	}
	// Epoch times are whole milliseconds: v0 and t within 0.1 %.
	if f := rep.Groups[0].Fit; math.Abs(f.V0/v0-1) > 1e-3 || math.Abs(float64(f.T)/tFixed-1) > 1e-3 {
		t.Errorf("fit v0 %v, t %v; want %v, %v", f.V0, f.T, v0, tFixed)
	}
	c := rep.Calibration()
	if len(c.Throughput) != 1 || c.Throughput[0].Model != "resnet50" {
		t.Errorf("calibration throughput %+v: want one entry of resnet50", c.Throughput)
	}
	for _, s := range rep.Steps {
		if s.Model != "resnet50" {
			t.Errorf("steps group of %q, want resnet50", s.Model)
		}
	}
	for _, r := range rep.Runs {
		if r.Model != "resnet50" || r.Benchmark != "resnet" {
			t.Errorf("run %+v: want model resnet50, benchmark resnet", r.Run)
		}
	}
}

// TestFitNCCL fits the collectives of the two nccl-tests logs that
// TestReadNCCL reads: the fit recovers the laws their times were printed
// from.
func TestFitNCCL(t *testing.T) {
	lg, err := logs.ReadFile("../testdata/nccl_allreduce_h100x16.txt")
	if err != nil {
		t.Fatal(err)
	}
	c := lg.Collectives[0]
	// The fit recovers the law the times were printed from.
	f := fit.FitCollective(lg.Name, c)
	if f.Err != nil || math.Abs(float64(f.Latency)/40e-6-1) > 1e-3 || math.Abs(float64(f.Bandwidth)/192e9-1) > 1e-3 ||
		math.Abs(float64(f.BusBandwidth)/360e9-1) > 1e-3 || f.R2 < 0.9999 || f.PeakBytes != 8<<30 {
		t.Errorf("fit: %+v", f)
	}

	lg, err = logs.ReadFile("../testdata/nccl_mixed.txt")
	if err != nil {
		t.Fatal(err)
	}
	ag, old := lg.Collectives[0], lg.Collectives[1]
	// All-gather: bus factor 7/8 on 12 µs + S/(400/(7/8) GB/s).
	if f := fit.FitCollective("", ag); f.Err != nil || math.Abs(float64(f.Latency)/12e-6-1) > 1e-3 || math.Abs(float64(f.BusBandwidth)/400e9-1) > 1e-3 {
		t.Errorf("all_gather fit: %+v", f)
	}
	// The older test stays under 64 B: latency only.
	if f := fit.FitCollective("", old); !errors.Is(f.Err, fit.ErrLatencyOnly) || math.Abs(float64(f.Latency)-9.5e-6) > 1e-9 || f.Bandwidth != 0 {
		t.Errorf("older test: %+v", f)
	}
}

// TestFitTorchvisionCPU fits the six steps of
// ../testdata/torchvision_resnet18_cpu.txt (TestReadTorchvisionCPU) as one
// group.
func TestFitTorchvisionCPU(t *testing.T) {
	lg, err := logs.ReadFile("../testdata/torchvision_resnet18_cpu.txt")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := fit.Fit([]*logs.Log{lg}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 1 || rep.Groups[0].Fit == nil || len(rep.Groups[0].Points) != 6 {
		t.Fatalf("groups %+v: want one fitted group of six points", rep.Groups)
	}
}

// TestFitTorchvisionSteps fits the steps to a target of the torchvision
// runs (TestTorchvisionConvergence reads their evaluations), and refuses
// a target outside (0, 1]. The real CPU runs take 480/b steps an epoch
// and all pass 60 % after their first.
func TestFitTorchvisionSteps(t *testing.T) {
	lg, err := logs.ReadFile("../testdata/torchvision_resnet50_ddp.txt")
	if err != nil {
		t.Fatal(err)
	}
	cpu, err := logs.ReadFile("../testdata/torchvision_resnet18_cpu.txt")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := fit.Fit([]*logs.Log{cpu, lg}, &fit.Options{Target: 0.6})
	if err != nil {
		t.Fatal(err)
	}
	var got [][3]int
	for _, sg := range rep.Steps {
		for _, p := range sg.Points {
			reached := 0
			if p.Reached {
				reached = 1
			}
			got = append(got, [3]int{p.Batch, p.Steps, reached})
		}
	}
	// The CPU runs at 4, 8 and 16 pass 60 % after 120, 60 and 30 steps;
	// the eight-GPU run never does.
	if want := [][3]int{{4, 120, 1}, {8, 60, 1}, {16, 30, 1}, {1024, 2502, 0}}; !reflect.DeepEqual(got, want) {
		t.Errorf("steps points %v, want %v", got, want)
	}
	for _, bad := range []float64{-0.1, 1.5, math.NaN()} {
		if _, err := fit.Fit([]*logs.Log{lg}, &fit.Options{Target: bad}); err == nil {
			t.Errorf("target %v: no error", bad)
		}
	}
}
