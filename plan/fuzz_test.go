package plan

import "testing"

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
