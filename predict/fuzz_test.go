package predict

import (
	"strings"
	"testing"

	"scaleplan/sim"
)

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
