package predict

import (
	"math"
	"strings"
	"testing"

	"scaleplan/scenarios"
	"scaleplan/sim"
)

// FuzzReadCases reads arbitrary case files: no input may crash the
// reader, and every file it accepts has cases whose figures parse, whose
// calibrated_by names exist and calibrate, and which form no cycle.
func FuzzReadCases(f *testing.F) {
	f.Add(string(builtinCases))
	f.Add("cases:\n  - {name: a, scenario: s, metric: time_to_train, published: < 2 h, source: x}\n")
	f.Add("cases:\n  - {name: a, scenario: {name: s, system: tsubame3}, metric: v0, published: 5, source: x, calibrates: true, fits: [v0]}\n")
	f.Add("cases: [{name: a}, {name: a}]\n")
	f.Fuzz(func(t *testing.T, src string) {
		cf, err := ReadCases(strings.NewReader(src), "fuzz.yaml")
		if err != nil {
			if err.Error() == "" {
				t.Error("empty error")
			}
			return
		}
		names := map[string]*Case{}
		for i := range cf.Cases {
			names[cf.Cases[i].Name] = &cf.Cases[i]
		}
		for _, c := range cf.Cases {
			if _, err := ParsePublished(c.Metric, c.Published); err != nil {
				t.Errorf("accepted case %q with figure %q: %v", c.Name, c.Published, err)
			}
			for _, n := range c.CalibratedBy {
				if o := names[n]; o == nil || !o.Calibrates {
					t.Errorf("accepted case %q calibrated by %q", c.Name, n)
				}
			}
		}
	})
}

// FuzzReadStudy reads arbitrary study files: no input may crash the
// reader, and every study it accepts has a name, variants with scenarios
// and distinct labels, and device counts within the simulator's limit.
func FuzzReadStudy(f *testing.F) {
	f.Add(string(defaultStudy))
	f.Add("name: s\nvariants: [{scenario: a}, {scenario: a}]\n")
	f.Add("name: s\ndevices: [0, 1]\nvariants: [{scenario: a, label: x}]\n")
	f.Add("name: x\nvariants: {<<, {a: 1}}\n") // v3.0.1 of the YAML decoder panicked
	f.Fuzz(func(t *testing.T, src string) {
		isStudy([]byte(src)) // must not panic either
		s, err := ReadStudy(strings.NewReader(src), "fuzz.yaml")
		if err != nil {
			if err.Error() == "" {
				t.Error("empty error")
			}
			return
		}
		if s.Name == "" || len(s.Variants) == 0 {
			t.Errorf("accepted a study without name or variants: %+v", s)
		}
		labels := map[string]bool{}
		for _, v := range s.Variants {
			if v.Scenario == "" || labels[v.label()] {
				t.Errorf("accepted variant %+v", v)
			}
			labels[v.label()] = true
		}
		for _, n := range s.Devices {
			if n < 1 || n > sim.MaxRanks {
				t.Errorf("accepted %d devices", n)
			}
		}
	})
}

// FuzzParseBudget parses arbitrary budgets: an accepted budget bounds
// something and every bound is positive.
func FuzzParseBudget(f *testing.F) {
	for _, s := range []string{"100 device-hours", "$5000, 500 kWh", "2 MWh", "$", "1e400 kWh", "-1 kWh", "5 USD, 5 USD"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBudget(s)
		if err != nil {
			return
		}
		if b.IsZero() || b.DeviceHours < 0 || b.Dollars < 0 || b.KWh < 0 {
			t.Errorf("ParseBudget(%q) = %+v", s, b)
		}
	})
}

// FuzzCompareMeasured compares arbitrary measurements, of one device or
// several on a system, with the catalogue alone and with the published
// calibrations: no input may crash either, an accepted one has a positive finite prediction for every row that
// ran, and a group's largest batch is -1 (unbounded) or at least 0.
func FuzzCompareMeasured(f *testing.F) {
	cat, prof := defaults(f)
	pub, err := scenarios.ReadCalibrationFiles([]string{scenarios.Published})
	if err != nil {
		f.Fatal(err)
	}
	f.Add("NVIDIA H200", "resnet50", "amp-fp16", 2048, 3087.7, 1.0, false, 1, "", 1)
	f.Add("h200-sxm-141gb", "transformer-base", "fp32", 64, 725.5, 128.0, false, 0, "", 0)
	f.Add("p100-sxm2", "resnet50", "fp32", 1<<40, 1.0, 1e9, true, 4, "tsubame3", 1)
	f.Add("localhost", "mlp", "fp16", 0, -1.0, 0.0, false, 2, "localhost", 1)
	f.Add("h200-sxm-141gb", "resnet50", "amp-bf16", 256, 24000.0, 1.0, false, 16, "dgx-h200", 4)
	f.Fuzz(func(t *testing.T, dev, mdl, prec string, batch int, sps, scale float64, oom bool, devices int, system string, accum int) {
		ms := []Measured{{Device: dev, Model: mdl, Precision: prec, Batch: batch, Devices: devices, System: system, Accumulation: accum,
			SamplesPerSec: sps, SampleScale: scale, OOM: oom}}
		if _, err := CompareCalibrated(ms, cat, prof, pub, Options{}); err != nil && err.Error() == "" {
			t.Error("empty error, calibrated")
		}
		rep, err := CompareMeasured(ms, cat, prof, Options{})
		if err != nil {
			if err.Error() == "" {
				t.Error("empty error")
			}
			return
		}
		for _, g := range rep.Groups {
			if g.PredictedMax < -1 {
				t.Errorf("largest batch %d", g.PredictedMax)
			}
			for _, r := range g.Rows {
				if !r.OOM && !(r.Predicted > 0 && !math.IsInf(r.Predicted, 0)) {
					t.Errorf("%+v: predicted %v", r.Measured, r.Predicted)
				}
			}
		}
	})
}
