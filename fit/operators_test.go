package fit

import (
	"math"
	"testing"
)

// closedForm is the model t_i = a_i/v[0] + b_i·v[1] over six rows.
func closedForm(v []float64) ([]float64, error) {
	a := []float64{1, 2, 0.5, 4, 0.1, 3}
	b := []float64{0.2, 0.1, 1, 0.3, 2, 0.05}
	ts := make([]float64, len(a))
	for i := range a {
		ts[i] = a[i]/v[0] + b[i]*v[1]
	}
	return ts, nil
}

// TestFitOperatorsClosedForm fits t_i = a_i/e + b_i·h to times made with
// e = 0.6 and h = 3 (a third figure no row depends on), and checks the
// figures, the undetermined one and the intervals.
func TestFitOperatorsClosedForm(t *testing.T) {
	f := closedForm
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

// TestFitOperatorsFixed checks a Fixed figure: t_i = a_i/e + b_i·h with h
// fixed at its true value 3 fits e to 0.6 exactly, h keeping 3 with no
// interval and not undetermined; with h fixed at 2, h stays 2 and e takes
// what the least squares of the logs give, whatever h would have fitted.
func TestFitOperatorsFixed(t *testing.T) {
	f := closedForm
	measured, _ := f([]float64{0.6, 3})
	for _, h := range []float64{3, 2} {
		params := []OperatorParam{{Name: "e", Default: 0.8, Max: 1}, {Name: "h", Default: h, Fixed: true}}
		fit, err := FitOperators(measured, params, f, nil)
		if err != nil {
			t.Fatal(err)
		}
		if fit.Values[1] != h || fit.Undetermined[1] || !math.IsNaN(fit.Low[1]) || !math.IsNaN(fit.High[1]) {
			t.Errorf("h fixed at %v: value %v, undetermined %v, interval [%v, %v]: want %v, determined, none", h, fit.Values[1], fit.Undetermined[1], fit.Low[1], fit.High[1], h)
		}
		if h == 3 && (math.Abs(fit.Values[0]/0.6-1) > 1e-4 || fit.Error > 1e-4) {
			t.Errorf("h at its true value: e = %v, error %v: want 0.6 and none", fit.Values[0], fit.Error)
		}
		if h == 2 && !(fit.Error > 0.01) {
			t.Errorf("h at a wrong value: error %v: want the rows left unexplained", fit.Error)
		}
	}
}

// TestFitOperatorsBound checks that a figure the rows push above its bound
// stops at it: times made with e = 1.5 fitted with e in (0, 1], over six
// rows (over two, Student's t at one degree of freedom, 12.7, widens the
// interval past MaxSpread).
func TestFitOperatorsBound(t *testing.T) {
	a := []float64{1, 2, 3, 4, 5, 6}
	f := func(v []float64) ([]float64, error) {
		ts := make([]float64, len(a))
		for i := range a {
			ts[i] = a[i] / v[0]
		}
		return ts, nil
	}
	measured, _ := f([]float64{1.5})
	fit, err := FitOperators(measured, []OperatorParam{{Name: "e", Default: 0.5, Max: 1}}, f, nil)
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

// TestFitOperatorsUnresolved fits t_i = a_i/e + b_i·h + c_i·w, where w
// moves one row by about a tenth of a per cent (above MinShare) while
// the rows' noise is up to half a per cent: its interval is far wider than
// MaxSpread, so w keeps its default, is marked Unresolved, and e and h
// are fitted again without it, within the noise of the values the times
// were made with (e = 0.6, h = 3).
func TestFitOperatorsUnresolved(t *testing.T) {
	a := []float64{1, 2, 0.5, 4, 0.1, 3}
	b := []float64{0.2, 0.1, 1, 0.3, 2, 0.05}
	c := []float64{0.0015, 0, 0, 0, 0, 0}
	noise := []float64{0.001, 0.003, 0.002, -0.005, 0.004, -0.001}
	f := func(v []float64) ([]float64, error) {
		ts := make([]float64, len(a))
		for i := range a {
			ts[i] = a[i]/v[0] + b[i]*v[1] + c[i]*v[2]
		}
		return ts, nil
	}
	measured, _ := f([]float64{0.6, 3, 1})
	for i := range measured {
		measured[i] *= 1 + noise[i]
	}
	params := []OperatorParam{{Name: "e", Default: 0.8, Max: 1}, {Name: "h", Default: 1}, {Name: "w", Default: 2}}
	fit, err := FitOperators(measured, params, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fit.Undetermined[0] || fit.Undetermined[1] || !fit.Undetermined[2] || !fit.Unresolved[2] || fit.Collinear[2] {
		t.Fatalf("undetermined %v, unresolved %v (values %v in %v, %v): want only w, unresolved", fit.Undetermined, fit.Unresolved, fit.Values, fit.Low, fit.High)
	}
	if fit.Values[2] != 2 || !math.IsNaN(fit.Low[2]) || !math.IsNaN(fit.High[2]) {
		t.Errorf("w = %v in [%v, %v]: want its default 2 and no interval", fit.Values[2], fit.Low[2], fit.High[2])
	}
	for i, want := range []float64{0.6, 3} {
		if math.Abs(fit.Values[i]/want-1) > 0.02 || !(fit.High[i]/fit.Low[i] <= MaxSpread) {
			t.Errorf("%s = %.5g in [%.4g, %.4g], want %.5g", params[i].Name, fit.Values[i], fit.Low[i], fit.High[i], want)
		}
	}
}

// TestFitOperatorsAllUnresolved checks a fit whose only figure is
// unresolved: every figure keeps its default, the error is the error
// before, and no interval is given.
func TestFitOperatorsAllUnresolved(t *testing.T) {
	// t_i = 1 + c_i·w: w moves the rows by under 1 % against noise of 5 %.
	c := []float64{0.002, 0.004, 0.006, 0.008}
	noise := []float64{1.05, 0.95, 1.05, 0.95}
	f := func(v []float64) ([]float64, error) {
		ts := make([]float64, len(c))
		for i := range c {
			ts[i] = 1 + c[i]*v[0]
		}
		return ts, nil
	}
	measured, _ := f([]float64{1})
	for i := range measured {
		measured[i] *= noise[i]
	}
	fit, err := FitOperators(measured, []OperatorParam{{Name: "w", Default: 1}}, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !fit.Unresolved[0] || fit.Values[0] != 1 || fit.Error != fit.ErrorBefore || !math.IsNaN(fit.Low[0]) {
		t.Errorf("unresolved %v, w = %v, error %v (before %v), low %v: want w unresolved at 1, no change, no interval",
			fit.Unresolved[0], fit.Values[0], fit.Error, fit.ErrorBefore, fit.Low[0])
	}
}
