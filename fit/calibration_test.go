package fit

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"scaleplan/internal/calib"
	"strings"
	"testing"

	"scaleplan/internal/units"
)

// TestCalibrationGolden writes the calibration of the sample bench log
// and the seed 003 CSV, compares it with the golden file and reads it
// back.
func TestCalibrationGolden(t *testing.T) {
	rep, err := Fit(readLogs(t, "bench_resnet50.jsonl", "seed003.csv"), &Options{GradientSize: resnet50Gradient})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Calibration()
	var buf bytes.Buffer
	if err := c.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "golden", "calibration.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != string(want) {
		t.Errorf("calibration differs from testdata/golden/calibration.yaml:\n--- got\n%s\n--- want\n%s", got, want)
	}
	back, err := calib.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Throughput) != 4 || len(back.Comm) != 2 || len(back.Steps) != 1 {
		t.Fatalf("read back %d throughput, %d comm, %d steps entries; want 4, 2, 1", len(back.Throughput), len(back.Comm), len(back.Steps))
	}
	// Figures are written to four significant digits and read back the
	// same, to the last bit of the parse.
	for i := range c.Throughput {
		w, g := c.Throughput[i], back.Throughput[i]
		if rel(float64(g.T), float64(w.T)) > 1e-15 || g.V0 != w.V0 {
			t.Errorf("throughput[%d]: read %v, %v; wrote %v, %v", i, g.V0, float64(g.T), w.V0, float64(w.T))
		}
		g.T, w.T, g.TInterval, w.TInterval = 0, 0, nil, nil
		if !reflect.DeepEqual(g, w) {
			t.Errorf("throughput[%d]:\nread  %+v\nwrote %+v", i, g, w)
		}
	}
	if !reflect.DeepEqual(back.Steps, c.Steps) {
		t.Errorf("steps:\nread  %+v\nwrote %+v", back.Steps, c.Steps)
	}
	e, ok := back.LookupThroughput("resnet50", "V100", 2, "fp32")
	if !ok || e.Excluded != 1 || e.Batches[1] != 256 {
		t.Errorf("lookup: %+v, %v; want the 2-GPU entry with one point excluded", e, ok)
	}
	if _, ok := back.LookupSteps("mlp"); !ok {
		t.Error("no steps curve for mlp")
	}
}

func rel(a, b float64) float64 {
	if b == 0 {
		return a
	}
	d := a/b - 1
	if d < 0 {
		return -d
	}
	return d
}

func TestWriteCalibration(t *testing.T) {
	c := &calib.Calibration{Level: 0.95, Throughput: []calib.ThroughputEntry{{Model: "m", Devices: 1, V0: 100, T: 5 * units.Millisecond, R2: 0.99, Points: 4}}}
	path := filepath.Join(t.TempDir(), "calib.yaml")
	if err := c.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	back, err := calib.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, c) {
		t.Errorf("read %+v, wrote %+v", back, c)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "t: 5 ms\n") {
		t.Errorf("t not written as a human unit:\n%s", data)
	}
	if err := c.WriteFile(filepath.Join(t.TempDir(), "no", "such", "dir", "c.yaml")); err == nil {
		t.Error("write into a missing directory: no error")
	}
	_, err = calib.ReadFile(filepath.Join(t.TempDir(), "missing.yaml"))
	if err == nil {
		t.Error("missing file: no error")
	}
}

func TestReadCalibrationErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"unknown key", "throughput:\n  - model: m\n    devices: 1\n    v0: 10\n    t: 1 ms\n    r2: 1\n    points: 3\n    v0_intervl: [9, 11]\n",
			`line 8: unknown field "v0_intervl"; did you mean "v0_interval"`},
		{"t without unit", "throughput:\n  - model: m\n    v0: 10\n    t: 54\n    points: 3\n",
			`line 4: "54" is not a quantity of seconds`},
		{"every problem at once", "level: 2\nthroughput:\n  - model: \"\"\n    devices: -1\n    v0: -3\n    t: -1 ms\n    r2: 1.5\n    points: 1\n    v0_interval: [5, 4]\n",
			"8 problems:\n  line 1: level: 2: must be in (0, 1)\n  line 3: throughput[0].model: missing\n  line 4: throughput[0].devices: -1: must be >= 0\n  line 5: throughput[0].v0: -3: must be a finite number > 0 (samples/s)\n  line 6: throughput[0].t: -1 ms: must be a finite time >= 0\n  line 7: throughput[0].r2: 1.5: must be <= 1\n  line 8: throughput[0].points: 1: a fit needs at least 2 points (1 with t = 0, one measured throughput)\n  line 9: throughput[0].v0_interval: [5, 4]: low is above high"},
		{"duplicate", "throughput:\n  - {model: m, devices: 1, v0: 10, t: 1 ms, r2: 1, points: 3}\n  - {model: m, devices: 1, v0: 11, t: 1 ms, r2: 1, points: 3}\n",
			"line 3: throughput[1]: same model, device, devices, precision and labels as throughput[0]"},
		{"steps", "steps:\n  - model: m\n    target: 76\n    s_min: 0\n    b_noise: -1\n    r2: 1\n    points: 5\n",
			"3 problems:\n  line 3: steps[0].target: 76: must be a fraction in [0, 1]\n  line 4: steps[0].s_min: 0: must be a finite number > 0\n  line 5: steps[0].b_noise: -1: must be a finite number >= 0 (samples)"},
		{"comm", "comm:\n  - model: m\n    counts: [2]\n    t_fixed: 1 ms\n    t_comm: 2 ms\n    bandwidth: -1 GB/s\n",
			"2 problems:\n  line 3: comm[0].counts: [2]: want two or more device counts\n  line 6: comm[0].bandwidth: -1 GB/s: must be a finite rate >= 0"},
		{"empty", "", "empty document"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := calib.Read(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error:\n%v\nwant it to contain:\n%s", err, tc.want)
			}
		})
	}
}
