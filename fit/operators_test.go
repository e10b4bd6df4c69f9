package fit

import (
	"math"
	"testing"
)

// TestFitOperatorsClosedForm fits t_i = a_i/e + b_i·h to times made with
// e = 0.6 and h = 3 (a third figure no row depends on), and checks the
// figures, the undetermined one and the intervals.
func TestFitOperatorsClosedForm(t *testing.T) {
	a := []float64{1, 2, 0.5, 4, 0.1, 3}
	b := []float64{0.2, 0.1, 1, 0.3, 2, 0.05}
	f := func(v []float64) ([]float64, error) {
		ts := make([]float64, len(a))
		for i := range a {
			ts[i] = a[i]/v[0] + b[i]*v[1]
		}
		return ts, nil
	}
	measured, _ := f([]float64{0.6, 3, 1})
	// A little noise, alternating, so the intervals are finite and narrow.
	for i := range measured {
		measured[i] *= 1 + 0.001*float64(1-2*(i%2))
	}
	params := []OperatorParam{{Name: "e", Default: 0.8, Max: 1}, {Name: "h", Default: 1}, {Name: "unused", Default: 2}}
	fit, err := FitOperators(measured, params, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{0.6, 3, 2} {
		if math.Abs(fit.Values[i]/want-1) > 0.005 {
			t.Errorf("%s = %.5g, want %.5g", params[i].Name, fit.Values[i], want)
		}
	}
	if fit.Undetermined[0] || fit.Undetermined[1] || !fit.Undetermined[2] {
		t.Errorf("undetermined %v, want [false false true]", fit.Undetermined)
	}
	for i := range 2 {
		if !(fit.Low[i] < fit.Values[i] && fit.Values[i] < fit.High[i]) || fit.High[i]/fit.Low[i] > 1.05 {
			t.Errorf("%s: interval [%v, %v] around %v", params[i].Name, fit.Low[i], fit.High[i], fit.Values[i])
		}
	}
	if !math.IsNaN(fit.Low[2]) || fit.Error > 0.002 || !(fit.ErrorBefore > fit.Error) {
		t.Errorf("unused interval %v, errors %v before %v", fit.Low[2], fit.Error, fit.ErrorBefore)
	}
}

// TestFitOperatorsBound checks that a figure the rows push above its bound
// stops at it: times made with e = 1.5 fitted with e in (0, 1].
func TestFitOperatorsBound(t *testing.T) {
	f := func(v []float64) ([]float64, error) { return []float64{1 / v[0], 2 / v[0]}, nil }
	fit, err := FitOperators([]float64{1 / 1.5, 2 / 1.5}, []OperatorParam{{Name: "e", Default: 0.5, Max: 1}}, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fit.Values[0] > 1 || fit.Values[0] < 0.999 {
		t.Errorf("e = %v: want the bound, 1", fit.Values[0])
	}
}

// TestFitOperatorsErrors checks the inputs a fit refuses.
func TestFitOperatorsErrors(t *testing.T) {
	f := func(v []float64) ([]float64, error) { return []float64{v[0]}, nil }
	p := []OperatorParam{{Name: "e", Default: 0.5, Max: 1}}
	for name, tc := range map[string]struct {
		m []float64
		p []OperatorParam
	}{
		"no rows":       {nil, p},
		"no figures":    {[]float64{1}, nil},
		"zero time":     {[]float64{0}, p},
		"infinite time": {[]float64{math.Inf(1)}, p},
		"bad default":   {[]float64{1}, []OperatorParam{{Name: "e", Default: 2, Max: 1}}},
	} {
		if _, err := FitOperators(tc.m, tc.p, f, nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestFitOperatorsCollinear fits t_i = a_i·(L + H) where two figures, L
// and H, move every row alike: the later, H, is undetermined at its
// default and L takes the whole sum.
func TestFitOperatorsCollinear(t *testing.T) {
	a := []float64{1, 2, 3, 5}
	f := func(v []float64) ([]float64, error) {
		ts := make([]float64, len(a))
		for i := range a {
			ts[i] = a[i] * (v[0] + v[1])
		}
		return ts, nil
	}
	measured, _ := f([]float64{4, 6})
	fit, err := FitOperators(measured, []OperatorParam{{Name: "L", Default: 1}, {Name: "H", Default: 2}}, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fit.Undetermined[0] || !fit.Undetermined[1] || !fit.Collinear[1] || fit.Values[1] != 2 || math.Abs(fit.Values[0]-8) > 1e-6 {
		t.Errorf("values %v, undetermined %v: want L = 10 − 2 = 8, H undetermined at 2", fit.Values, fit.Undetermined)
	}
}
