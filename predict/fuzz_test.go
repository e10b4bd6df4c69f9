package predict

import (
	"strings"
	"testing"
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
