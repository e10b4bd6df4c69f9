package predict

import (
	"math"
	"testing"

	"scaleplan/internal/calib"
	"scaleplan/internal/units"
	"scaleplan/scenarios"
)

// TestLawRange checks the closed form of the calibrated law's compute at
// its intervals' ends: t(b) = b·Devices/v0 + t, fastest at (v0 high,
// t low), slowest at (v0 low, t high).
func TestLawRange(t *testing.T) {
	c := &scenarios.Calibration{V0: 800, T: 0.01, Devices: 4,
		V0Interval: [2]float64{640, 1000}, TInterval: [2]units.Seconds{0.005, 0.02}}
	lo, hi, ok := LawRange(c, 32)
	// 32·4/1000 + 0.005 = 0.133; 32·4/640 + 0.02 = 0.22.
	if !ok || math.Abs(float64(lo)-0.133) > 1e-12 || math.Abs(float64(hi)-0.22) > 1e-12 {
		t.Errorf("LawRange = %v, %v, %v; want 0.133 s, 0.22 s", lo, hi, ok)
	}
	if _, _, ok := LawRange(&scenarios.Calibration{V0: 800, T: 0.01}, 32); ok {
		t.Error("a law without intervals has a range")
	}
	if _, _, ok := LawRange(nil, 32); ok {
		t.Error("no calibration has a range")
	}
}

// TestCalibratedRange checks a calibrated prediction's interval against
// the simulator run at the interval's ends: on one device the step is its
// compute, so the closed form and the simulation agree.
func TestCalibratedRange(t *testing.T) {
	e := calib.ThroughputEntry{Model: "resnet50", Device: "p100-sxm2", Devices: 1, V0: 200, T: 0.01, R2: 1, Points: 5,
		V0Interval: []float64{180, 220}, TInterval: []units.Seconds{0.005, 0.015}}
	files := []scenarios.CalibrationFile{{Path: "cal.yaml", Cal: &calib.Calibration{Throughput: []calib.ThroughputEntry{e}}}}
	one := func(s *scenarios.Scenario) { s.Sweep.Devices = []int{1} }
	r, err := scenarios.Load("tsubame3-resnet50-caffe2-verbs", scenarios.Options{Calibrations: files, Edit: one})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Predict(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Source.String() != "calibrated cal.yaml" || !p.Source.Calibrated() {
		t.Errorf("source %q, calibrated %v", p.Source, p.Source.Calibrated())
	}
	row := p.Rows[0]
	for i, law := range [][2]float64{{220, 0.005}, {180, 0.015}} {
		at, err := scenarios.Load("tsubame3-resnet50-caffe2-verbs", scenarios.Options{Edit: func(s *scenarios.Scenario) {
			one(s)
			s.Calibration = &scenarios.Calibration{V0: law[0], T: units.Seconds(law[1]), Devices: 1}
		}})
		if err != nil {
			t.Fatal(err)
		}
		q, err := Predict(at, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := float64(row.TrainRange[i]), float64(q.Rows[0].Time); math.Abs(got-want) > 1e-6*want {
			t.Errorf("end %d: %v s, simulated at v0 %v, t %v: %v s", i, got, law[0], law[1], want)
		}
	}
}

// TestUncalibratedBand checks the band of an uncalibrated row: Time ∓ the
// model's published error times the steps' time.
func TestUncalibratedBand(t *testing.T) {
	r, err := scenarios.Load("dgx-a100-resnet50-mlperf-v1.1", scenarios.Options{Edit: func(s *scenarios.Scenario) { s.Sweep.Devices = []int{8} }})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Predict(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Source.String() != "operators" || p.Source.Calibrated() {
		t.Fatalf("source %q", p.Source)
	}
	row := p.Rows[0]
	e := 0.303 * float64(row.Training) // docs/compute.md: the five published files, operators
	if math.Abs(float64(row.TrainRange[0])-(float64(row.Time)-e)) > 1e-9 || math.Abs(float64(row.TrainRange[1])-(float64(row.Time)+e)) > 1e-9 {
		t.Errorf("band %v, want %v ∓ %v", row.TrainRange, row.Time, e)
	}
	for _, c := range []struct {
		s    Source
		want float64
	}{{Source{Kind: "roofline"}, 0.996}, {Source{Kind: "operators", By: "x.yaml"}, 0.175}, {Source{Kind: "calibrated"}, 0}} {
		if got := c.s.Error(); got != c.want {
			t.Errorf("%s: error %v, want %v", c.s, got, c.want)
		}
	}
}
