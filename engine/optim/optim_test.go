package optim

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// The references below are written out independently of the code under
// test: plain float64 loops over the update equations of the package
// documentation (which quote PyTorch and the MLPerf LARS implementations),
// plus literal values worked out by hand.

// trajectory is a three-step problem: start values and the gradient fed at
// each step for each group.
type trajectory struct {
	w0      [][]float64   // [group][i]
	grads   [][][]float64 // [step][group][i]
	lr      []float64     // [step]
	exclude []bool        // [group]
}

var small = trajectory{
	w0: [][]float64{{0.5, -1.5, 2.0, 0.25}, {0.1, -0.2}},
	grads: [][][]float64{
		{{0.3, -0.1, 0.8, -0.4}, {0.05, 0.02}},
		{{-0.2, 0.4, 0.1, 0.3}, {-0.03, 0.07}},
		{{0.6, 0.2, -0.5, 0.1}, {0.01, -0.04}},
	},
	lr:      []float64{0.1, 0.05, 0.2},
	exclude: []bool{false, true},
}

func (tr trajectory) groups() []Group {
	gs := make([]Group, len(tr.w0))
	for i, w := range tr.w0 {
		gs[i] = Group{Name: "g", Params: make([]float32, len(w)), Grads: make([]float32, len(w)), Exclude: tr.exclude[i]}
		for j, v := range w {
			gs[i].Params[j] = float32(v)
		}
	}
	return gs
}

// run steps o through the trajectory and returns the parameters after each
// step as float64.
func (tr trajectory) run(o Optimizer) [][][]float64 {
	gs := tr.groups()
	var out [][][]float64
	for s, gr := range tr.grads {
		for i := range gs {
			for j, v := range gr[i] {
				gs[i].Grads[j] = float32(v)
			}
		}
		o.Step(gs, tr.lr[s])
		snap := make([][]float64, len(gs))
		for i, g := range gs {
			for _, v := range g.Params {
				snap[i] = append(snap[i], float64(v))
			}
		}
		out = append(out, snap)
	}
	return out
}

// f32 rounds like the code's float32 storage, so the references see the
// same inputs.
func f32(x float64) float64 { return float64(float32(x)) }

func clone(w [][]float64) [][]float64 {
	c := make([][]float64, len(w))
	for i := range w {
		c[i] = append([]float64(nil), w[i]...)
		for j := range c[i] {
			c[i][j] = f32(c[i][j])
		}
	}
	return c
}

func refSGD(tr trajectory, mu, damp, wd float64, nesterov bool) [][][]float64 {
	w := clone(tr.w0)
	buf := make([][]float64, len(w))
	var out [][][]float64
	for s, gr := range tr.grads {
		for i := range w {
			lam := wd
			if tr.exclude[i] {
				lam = 0
			}
			if buf[i] == nil {
				buf[i] = make([]float64, len(w[i]))
			}
			for j := range w[i] {
				d := f32(gr[i][j]) + lam*w[i][j]
				if mu != 0 {
					if s == 0 {
						buf[i][j] = d
					} else {
						buf[i][j] = mu*buf[i][j] + (1-damp)*d
					}
					if nesterov {
						d = d + mu*buf[i][j]
					} else {
						d = buf[i][j]
					}
				}
				w[i][j] -= tr.lr[s] * d
			}
		}
		out = append(out, clone(w))
	}
	return out
}

func refLARS(tr trajectory, mu, wd, eta, eps float64, correction bool) [][][]float64 {
	w := clone(tr.w0)
	v := make([][]float64, len(w))
	var out [][][]float64
	for s, gr := range tr.grads {
		m := mu
		if correction && s > 0 {
			m = mu * tr.lr[s] / tr.lr[s-1]
		}
		for i := range w {
			if v[i] == nil {
				v[i] = make([]float64, len(w[i]))
			}
			var wn, gn float64
			for j := range w[i] {
				wn += w[i][j] * w[i][j]
				gn += f32(gr[i][j]) * f32(gr[i][j])
			}
			wn, gn = math.Sqrt(wn), math.Sqrt(gn)
			rate, lam := tr.lr[s], wd
			if tr.exclude[i] {
				lam = 0
			} else if wn > 0 && gn > 0 {
				rate *= eta * wn / (gn + wd*wn + eps)
			}
			for j := range w[i] {
				v[i][j] = m*v[i][j] + rate*(f32(gr[i][j])+lam*w[i][j])
				w[i][j] -= v[i][j]
			}
		}
		out = append(out, clone(w))
	}
	return out
}

func refAdam(tr trajectory, b1, b2, eps, wd float64, decoupled bool) [][][]float64 {
	w := clone(tr.w0)
	m := make([][]float64, len(w))
	v := make([][]float64, len(w))
	var out [][][]float64
	for s, gr := range tr.grads {
		t := float64(s + 1)
		lr := tr.lr[s]
		for i := range w {
			if m[i] == nil {
				m[i] = make([]float64, len(w[i]))
				v[i] = make([]float64, len(w[i]))
			}
			lam := wd
			if tr.exclude[i] {
				lam = 0
			}
			for j := range w[i] {
				g := f32(gr[i][j])
				if decoupled {
					w[i][j] = w[i][j] * (1 - lr*lam)
				} else {
					g += lam * w[i][j]
				}
				m[i][j] = b1*m[i][j] + (1-b1)*g
				v[i][j] = b2*v[i][j] + (1-b2)*g*g
				mhat := m[i][j] / (1 - math.Pow(b1, t))
				vhat := v[i][j] / (1 - math.Pow(b2, t))
				w[i][j] -= lr * mhat / (math.Sqrt(vhat) + eps)
			}
		}
		out = append(out, clone(w))
	}
	return out
}

func TestOptimizersMatchReference(t *testing.T) {
	tr := small
	for _, tc := range []struct {
		name string
		opt  Optimizer
		want [][][]float64
		tol  float64 // relative to max(1, |want|)
	}{
		{"sgd", &SGD{}, refSGD(tr, 0, 0, 0, false), 1e-6},
		{"sgd-wd", &SGD{WeightDecay: 0.01}, refSGD(tr, 0, 0, 0.01, false), 1e-6},
		{"momentum", &SGD{Momentum: 0.9, WeightDecay: 1e-4}, refSGD(tr, 0.9, 0, 1e-4, false), 1e-6},
		{"momentum-dampening", &SGD{Momentum: 0.9, Dampening: 0.5}, refSGD(tr, 0.9, 0.5, 0, false), 1e-6},
		{"nesterov", &SGD{Momentum: 0.9, Nesterov: true, WeightDecay: 1e-4}, refSGD(tr, 0.9, 0, 1e-4, true), 1e-6},
		{"lars", &LARS{Momentum: 0.9, WeightDecay: 1e-4, Eta: 1e-3}, refLARS(tr, 0.9, 1e-4, 1e-3, 0, false), 1e-6},
		{"lars-eps", &LARS{Momentum: 0.9, WeightDecay: 5e-2, Eta: 0.02, Eps: 1e-3}, refLARS(tr, 0.9, 5e-2, 0.02, 1e-3, false), 1e-6},
		{"lars-correction", NewLARS(), refLARS(tr, 0.9, 1e-4, 1e-3, 0, true), 1e-6},
		{"adam", NewAdam(), refAdam(tr, 0.9, 0.999, 1e-8, 0, false), 2e-6},
		{"adam-l2", &Adam{Beta1: 0.8, Beta2: 0.99, Eps: 1e-6, WeightDecay: 0.1}, refAdam(tr, 0.8, 0.99, 1e-6, 0.1, false), 2e-6},
		{"adamw", NewAdamW(), refAdam(tr, 0.9, 0.999, 1e-8, 0.01, true), 2e-6},
		{"adamw-strong", &Adam{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.5, Decoupled: true}, refAdam(tr, 0.9, 0.999, 1e-8, 0.5, true), 2e-6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tr.run(tc.opt)
			for s := range got {
				for i := range got[s] {
					for j := range got[s][i] {
						g, w := got[s][i][j], tc.want[s][i][j]
						if math.Abs(g-w) > tc.tol*math.Max(1, math.Abs(w)) {
							t.Errorf("step %d group %d [%d] = %.9g, want %.9g", s+1, i, j, g, w)
						}
					}
				}
			}
		})
	}
}

// TestHandValues checks one-parameter problems with constant gradient 1
// against values worked out by hand.
func TestHandValues(t *testing.T) {
	const tol = 1e-6
	for _, tc := range []struct {
		name string
		opt  Optimizer
		lr   float64
		want [3]float64
	}{
		// b = 1, 1.9, 2.71; w = 1 − 0.1·Σ
		{"momentum", &SGD{Momentum: 0.9}, 0.1, [3]float64{0.9, 0.71, 0.439}},
		// d = 1 + 0.9·b = 1.9, 2.71, 3.439
		{"nesterov", &SGD{Momentum: 0.9, Nesterov: true}, 0.1, [3]float64{0.81, 0.539, 0.1951}},
		// bias-corrected moments are exactly 1: each step moves lr/(1+ε)
		{"adam", NewAdam(), 0.1, [3]float64{0.9, 0.8, 0.7}},
		// w ← 0.99·w − 0.1
		{"adamw", &Adam{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.1, Decoupled: true}, 0.1, [3]float64{0.89, 0.7811, 0.673289}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := []Group{{Params: []float32{1}, Grads: []float32{1}}}
			for s, want := range tc.want {
				tc.opt.Step(g, tc.lr)
				if got := float64(g[0].Params[0]); math.Abs(got-want) > tol {
					t.Errorf("step %d: w = %.9g, want %.9g", s+1, got, want)
				}
			}
		})
	}
}

// TestLARSHand checks the first LARS step against numbers worked out by
// hand: ‖w‖ = 5, ‖g‖ = 1, ρ = 1e-3·5/(1 + 0.01·5) = 0.005/1.05.
func TestLARSHand(t *testing.T) {
	o := &LARS{Momentum: 0.9, WeightDecay: 0.01, Eta: 1e-3}
	gs := []Group{
		{Name: "conv.weight", Params: []float32{3, 4}, Grads: []float32{0.6, 0.8}},
		{Name: "bn.beta", Params: []float32{3, 4}, Grads: []float32{0.6, 0.8}, Exclude: true},
	}
	if r := o.TrustRatio(gs[0]); math.Abs(r-0.005/1.05) > 1e-7*0.005/1.05 { // float32 inputs
		t.Errorf("trust ratio = %.12g, want %.12g", r, 0.005/1.05)
	}
	if r := o.TrustRatio(gs[1]); r != 1 {
		t.Errorf("trust ratio of excluded group = %g, want 1", r)
	}
	o.Step(gs, 2)
	rho := 0.005 / 1.05
	want := [][]float64{
		{3 - 2*rho*(0.6+0.03), 4 - 2*rho*(0.8+0.04)},
		{3 - 2*0.6, 4 - 2*0.8},
	}
	for i := range gs {
		for j, w := range want[i] {
			if got := float64(gs[i].Params[j]); math.Abs(got-w) > 1e-6 {
				t.Errorf("group %d [%d] = %.9g, want %.9g", i, j, got, w)
			}
		}
	}
	// A zero gradient gives ρ = 1 and w ← w − lr·λw (plus momentum).
	z := []Group{{Params: []float32{1}, Grads: []float32{0}}}
	if r := o.TrustRatio(z[0]); r != 1 {
		t.Errorf("trust ratio with zero gradient = %g, want 1", r)
	}
}

func TestStateLen(t *testing.T) {
	gs := small.groups()
	n := 0
	for _, g := range gs {
		n += len(g.Params)
	}
	for _, tc := range []struct {
		name string
		opt  Optimizer
		want int
	}{
		{"sgd", &SGD{}, 0},
		{"momentum", &SGD{Momentum: 0.9}, n},
		{"lars", NewLARS(), n},
		{"adam", NewAdam(), 2 * n},
	} {
		if got := tc.opt.StateLen(); got != 0 {
			t.Errorf("%s: state before first step = %d, want 0", tc.name, got)
		}
		tc.opt.Step(gs, 0.01)
		if got := tc.opt.StateLen(); got != tc.want {
			t.Errorf("%s: state = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func mustPanic(t *testing.T, name, prefix string, f func()) {
	t.Helper()
	defer func() {
		r := recover()
		s, _ := r.(string)
		if r == nil || !strings.HasPrefix(s, prefix) {
			t.Errorf("%s: panic %v, want one starting %q", name, r, prefix)
		}
	}()
	f()
}

func TestPanics(t *testing.T) {
	for _, mk := range []func() Optimizer{
		func() Optimizer { return &SGD{} },
		func() Optimizer { return &SGD{Momentum: 0.9} },
		func() Optimizer { return NewLARS() },
		func() Optimizer { return NewAdam() },
	} {
		o := mk()
		o.Step(small.groups(), 0.1)
		mustPanic(t, "fewer groups", errGroups, func() { o.Step(small.groups()[:1], 0.1) })
		gs := small.groups()
		gs[1].Params, gs[1].Grads = gs[1].Params[:1], gs[1].Grads[:1]
		mustPanic(t, "shorter group", errGroupLen, func() { o.Step(gs, 0.1) })
		gs = small.groups()
		gs[0].Grads = gs[0].Grads[:2]
		mustPanic(t, "grads length", errLength, func() { mk().Step(gs, 0.1) })
		mustPanic(t, "nan lr", errLR, func() { mk().Step(small.groups(), math.NaN()) })
		mustPanic(t, "negative lr", errLR, func() { mk().Step(small.groups(), -1) })
		mustPanic(t, "no groups", errNilGroups, func() { mk().Step(nil, 0.1) })
	}
	mustPanic(t, "invalid", errInvalid, func() { (&SGD{Nesterov: true}).Step(small.groups(), 0.1) })
	mustPanic(t, "zero eta", errInvalid, func() { (&LARS{}).Step(small.groups(), 0.1) })
}

func TestSettings(t *testing.T) {
	for _, kind := range Kinds {
		s, err := Defaults(kind)
		if err != nil {
			t.Fatalf("Defaults(%q): %v", kind, err)
		}
		if _, err := New(s); err != nil {
			t.Errorf("New(Defaults(%q)): %v", kind, err)
		}
	}
	// New builds what the settings say: compare trajectories with the
	// directly constructed optimizers.
	s, _ := Defaults("sgd")
	s.Nesterov = true
	o, _ := New(s)
	checkSame(t, "sgd nesterov", small.run(o), refSGD(small, 0.9, 0, 1e-4, true))
	s, _ = Defaults("lars")
	o, _ = New(s)
	checkSame(t, "lars", small.run(o), refLARS(small, 0.9, 1e-4, 1e-3, 0, true))
	s, _ = Defaults("adamw")
	o, _ = New(s)
	checkSame(t, "adamw", small.run(o), refAdam(small, 0.9, 0.999, 1e-8, 0.01, true))

	for _, tc := range []struct {
		s    Settings
		want string
	}{
		{Settings{Kind: "rmsprop"}, `unknown optimizer "rmsprop"`},
		{Settings{Kind: "sgd", Momentum: 1}, "sgd momentum 1 not in [0, 1)"},
		{Settings{Kind: "sgd", Momentum: math.NaN()}, "sgd momentum NaN"},
		{Settings{Kind: "sgd", Nesterov: true}, "nesterov needs momentum > 0"},
		{Settings{Kind: "sgd", Momentum: 0.9, Dampening: 0.1, Nesterov: true}, "nesterov needs momentum > 0 and dampening 0"},
		{Settings{Kind: "sgd", WeightDecay: -1}, "weight decay -1"},
		{Settings{Kind: "lars", Momentum: 0.9}, "lars eta 0 not positive"},
		{Settings{Kind: "lars", Eta: 1e-3, Eps: -1}, "lars eps -1"},
		{Settings{Kind: "adam", Beta1: 0.9, Beta2: 1, Eps: 1e-8}, "adam beta2 1 not in [0, 1)"},
		{Settings{Kind: "adam", Beta1: 0.9, Beta2: 0.999}, "adam eps 0 not positive"},
	} {
		_, err := New(tc.s)
		if err == nil || !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want error containing %q wrapping ErrSettings", tc.s, err, tc.want)
		}
	}
	if _, err := Defaults("lamb"); err == nil || !strings.Contains(err.Error(), "valid: sgd, lars, adam, adamw") {
		t.Errorf("Defaults(lamb) = %v, want unknown-optimizer error listing the kinds", err)
	}
}

func checkSame(t *testing.T, name string, got, want [][][]float64) {
	t.Helper()
	for s := range got {
		for i := range got[s] {
			for j := range got[s][i] {
				if math.Abs(got[s][i][j]-want[s][i][j]) > 2e-6*math.Max(1, math.Abs(want[s][i][j])) {
					t.Errorf("%s: step %d group %d [%d] = %.9g, want %.9g", name, s+1, i, j, got[s][i][j], want[s][i][j])
				}
			}
		}
	}
}
