package fit

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// synthEpochs returns E(B) = eMin·(1 + B/bNoise) at batches 256 to 65536,
// three runs each, with relative noise of standard deviation sd.
func synthEpochs(eMin, bNoise, sd float64, seed uint64) (b, e []float64, rounds []string) {
	rng := rand.New(rand.NewPCG(seed, 1))
	names := []string{"r1", "r2", "r3"}
	for B := 256.0; B <= 65536; B *= 2 {
		for k := range 3 {
			b = append(b, B)
			e = append(e, eMin*(1+B/bNoise)*(1+sd*rng.NormFloat64()))
			rounds = append(rounds, names[k])
		}
	}
	return b, e, rounds
}

func TestEpochsRecovers(t *testing.T) {
	// ImageNet's epoch; E_min 35, B_noise 40,000: the ResNet-50 scale.
	const n, eMin, bNoise = 1281167.0, 35.0, 40000.0
	b, e, _ := synthEpochs(eMin, bNoise, 0.02, 7)
	f, err := Epochs(b, e, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.EMin-eMin) > 0.03*eMin || math.Abs(f.Steps.BNoise-bNoise) > 0.08*bNoise {
		t.Errorf("E_min %g, B_noise %g; want %g and %g", f.EMin, f.Steps.BNoise, eMin, bNoise)
	}
	// S_min = E_min·N/B_noise, the steps at infinite batch.
	if want := eMin * n / bNoise; math.Abs(f.Steps.SMin-want) > 0.08*want {
		t.Errorf("S_min %g, want about %g", f.Steps.SMin, want)
	}
	if iv := f.Steps.BNoiseInterval; !(iv[0] < bNoise && bNoise < iv[1]) {
		t.Errorf("B_noise interval %v misses %g", iv, bNoise)
	}
	// Exact data: the law itself, to rounding.
	b, e, _ = synthEpochs(eMin, bNoise, 0, 1)
	f, err = Epochs(b, e, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, B := range []float64{100, 40000, 1e6} {
		if want := eMin * (1 + B/bNoise); math.Abs(f.Predict(B)-want) > 1e-6*want {
			t.Errorf("E(%g) = %g, want %g", B, f.Predict(B), want)
		}
	}
}

func TestEpochsErrors(t *testing.T) {
	for _, n := range []float64{0, -1, math.Inf(1), math.NaN()} {
		if _, err := Epochs([]float64{1, 2}, []float64{1, 2}, n, nil); err == nil {
			t.Errorf("n %v: no error", n)
		}
	}
	if _, err := Epochs([]float64{1, 2}, []float64{1}, 1, nil); err == nil {
		t.Error("unequal lengths: no error")
	}
	if _, err := Power([]float64{4, 4}, []float64{1, 2}); err == nil {
		t.Error("one batch: no error")
	}
}

func TestPowerRecovers(t *testing.T) {
	var b, e []float64
	for B := 64.0; B <= 8192; B *= 2 {
		b, e = append(b, B), append(e, 3*math.Pow(B, 0.25))
	}
	f, err := Power(b, e)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.A-3) > 1e-9 || math.Abs(f.K-0.25) > 1e-12 || f.S > 1e-9 {
		t.Errorf("A %g, K %g, S %g; want 3, 0.25, 0", f.A, f.K, f.S)
	}
}

// Holding out a group, the fitter never sees its points, and the
// prediction is that of a fit to the other groups alone.
func TestLeaveOneGroupOut(t *testing.T) {
	b, e, rounds := synthEpochs(35, 40000, 0.02, 3)
	// Mark the held-out points: a fitter that receives one fails the test.
	const mark = 1e9
	for i := range e {
		if rounds[i] == "r2" {
			e[i] += mark
		}
	}
	var calls int
	fitter := func(tb, ty []float64) (func(float64) float64, error) {
		calls++
		f, err := Epochs(tb, ty, 1281167, nil)
		if err != nil {
			return nil, err
		}
		return f.Predict, nil
	}
	hs, err := LeaveOneGroupOut(b, e, rounds, fitter)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 3 || len(hs) != 3 || hs[0].Group != "r1" || hs[1].Group != "r2" {
		t.Fatalf("%d calls, holdouts %+v", calls, hs)
	}
	h := hs[1]
	if h.Held != len(b)/3 || h.Train != len(b)-h.Held {
		t.Errorf("held %d, trained %d", h.Held, h.Train)
	}
	var ob, oe []float64
	for i := range b {
		if rounds[i] != "r2" {
			ob, oe = append(ob, b[i]), append(oe, e[i])
		}
		if rounds[i] == "r2" && !slices.Contains(h.Index, i) {
			t.Errorf("point %d of r2 not predicted", i)
		}
	}
	want, err := Epochs(ob, oe, 1281167, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, i := range h.Index {
		if w := want.Predict(b[i]); math.Abs(h.Predicted[k]-w) > 1e-9*w {
			t.Errorf("point %d: predicted %g, want %g from the other groups alone", i, h.Predicted[k], w)
		}
	}
	// The marked values are about 1e9 epochs: a law fitted without them
	// predicts about −100 %.
	if math.Abs(h.MeanErr+1) > 1e-6 {
		t.Errorf("mean error %g, want about −1", h.MeanErr)
	}
	// Holding out r1 or r3, the fit sees r2's marked points and is far off
	// on the unmarked ones: the held-out group is the only one removed.
	if hs[0].MeanAbsErr < 1 {
		t.Errorf("r1 held out: mean |error| %g; want the marked r2 to spoil it", hs[0].MeanAbsErr)
	}
	if _, err := LeaveOneGroupOut(b[:2], e[:2], []string{"a", "a"}, fitter); err != ErrOneGroup {
		t.Errorf("one group: %v", err)
	}
}
