package scenarios

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scaleplan/internal/units"
)

// TestPlausibleEdges loads a shipped scenario with each bounded figure at
// the edges of its range (accepted) and just past them (refused with the
// path, the range and the value).
func TestPlausibleEdges(t *testing.T) {
	seq := func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = i + 1
		}
		return out
	}
	cal := func(f func(c *Calibration)) func(*Scenario) {
		return func(s *Scenario) {
			c := Calibration{V0: 100, T: units.Seconds(0.01), Devices: 1}
			f(&c)
			s.Calibration = &c
		}
	}
	cases := []struct {
		name      string
		good, bad func(*Scenario)
		want      string
	}{
		{"bucket low", func(s *Scenario) { s.Parallelism.Bucket = 1 }, func(s *Scenario) { s.Parallelism.Bucket = 0.999 },
			"parallelism.bucket: must be within 1 B to 1 TiB, got 0.999 B"},
		{"bucket high", func(s *Scenario) { s.Parallelism.Bucket = 1 << 40 }, func(s *Scenario) { s.Parallelism.Bucket = 1<<40 + 1 },
			"parallelism.bucket: must be within 1 B to 1 TiB, got 1 TiB"},
		{"interference low", func(s *Scenario) { s.Parallelism.Interference = ptr(0.0) }, func(s *Scenario) { s.Parallelism.Interference = ptr(-1e-9) },
			"parallelism.interference: must be within 0 to 0.9, got -1e-09"},
		{"interference high", func(s *Scenario) { s.Parallelism.Interference = ptr(0.9) }, func(s *Scenario) { s.Parallelism.Interference = ptr(math.NaN()) },
			"parallelism.interference: must be within 0 to 0.9, got NaN"},
		{"v0 low", cal(func(c *Calibration) { c.V0 = 1e-3 }), cal(func(c *Calibration) { c.V0 = 0.999e-3 }),
			"calibration.v0: must be within 0.001 to 1e+12 samples/s, got 0.000999"},
		{"v0 high", cal(func(c *Calibration) { c.V0 = 1e12 }), cal(func(c *Calibration) { c.V0 = math.Inf(1) }),
			"calibration.v0: must be within 0.001 to 1e+12 samples/s, got +Inf"},
		{"t", cal(func(c *Calibration) { c.T = 86400 }), cal(func(c *Calibration) { c.T = units.Seconds(math.NaN()) }),
			"calibration.t: must be within 0 to 86400 s, got NaN s"},
		{"t zero", cal(func(c *Calibration) { c.T = 0 }), cal(func(c *Calibration) { c.T = -5e-324 }),
			"calibration.t: must be within 0 to 86400 s, got -4.941e-315 ns"},
		{"calibration devices", cal(func(c *Calibration) { c.Devices = 1 << 17 }), cal(func(c *Calibration) { c.Devices = 1<<17 + 1 }),
			"calibration.devices: must be within 1 to 131072, got 131073"},
		{"startup", func(s *Scenario) { s.Overheads.Startup = 1e8 }, func(s *Scenario) { s.Overheads.Startup = 1.01e8 },
			"overheads.startup: must be within 0 to 100000000 s, got 101000000 s"},
		{"evaluation", func(s *Scenario) { s.Overheads.Evaluation = 0 }, func(s *Scenario) { s.Overheads.Evaluation = units.Seconds(math.NaN()) },
			"overheads.evaluation: must be within 0 to 100000000 s, got NaN s"},
		{"sweep", func(s *Scenario) { s.Sweep.Batch = seq(1000) }, func(s *Scenario) { s.Sweep.Batch = seq(1001) },
			"sweep.batch: 1001 values; at most 1000"},
	}
	for _, c := range cases {
		if _, err := Load("dgx1-resnet50-mlperf-v0.7", Options{Edit: c.good}); err != nil {
			t.Errorf("%s at its edge: %v", c.name, err)
		}
		_, err := Load("dgx1-resnet50-mlperf-v0.7", Options{Edit: c.bad})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s past its edge: %v\nwant %s", c.name, err, c.want)
		}
	}
}

// TestRepeatsLinear gives a sweep of 1,000 values of which 999 repeat the
// first: each repeat is reported (once) with the index of the first.
func TestRepeatsLinear(t *testing.T) {
	b := make([]int, 1000)
	for i := range b {
		b[i] = 32
	}
	_, err := Load("dgx1-resnet50-mlperf-v0.7", Options{Edit: func(s *Scenario) { s.Sweep.Batch = b }})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"999 problems:\n", "sweep.batch[1]: 32 is given twice (also at sweep.batch[0])\n", "\n  and 979 more"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("got %.400v\nwant %q in it", err, want)
		}
	}
}

// TestCalibrationFileImplausible reads a calibration file whose entry
// has a subnormal v0 (which calib accepts as > 0): the scenario refuses
// it, naming the file, the entry and the ranges.
func TestCalibrationFileImplausible(t *testing.T) {
	dir := t.TempDir()
	cal := "throughput:\n  - {model: resnet50, device: P100, devices: 1, v0: 5e-324, t: 40 ms, r2: 0.99, points: 6}\n"
	if err := os.WriteFile(filepath.Join(dir, "calib.yaml"), []byte(cal), 0o644); err != nil {
		t.Fatal(err)
	}
	sc := "name: c\nsystem: tsubame3\nrecipe: tsubame3-resnet50\ncalibration:\n  file: calib.yaml\n"
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte(sc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path, Options{})
	want := `line 5: calibration.file: calib.yaml: the entry of model "resnet50" has v0 5e-324 samples/s and t 40 ms; want v0 within 0.001 to 1e+12 and t within 0 to 86400 s`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
