package fit

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Repeats that straddle the law symmetrically leave it exactly where it
// is: no lack of fit (F = 0, P = 1), and a pure error of e·√2 for
// deviations ±e at every batch (n = 2c points, n − c = c degrees of
// freedom, SS_pe = 2c·e²).
func TestLackOfFitNone(t *testing.T) {
	const v0, tt, e = 12000.0, 0.004, 0.05
	var b, v []float64
	for _, x := range []float64{16, 64, 256, 1024} {
		f := x / (x/v0 + tt)
		b = append(b, x, x)
		v = append(v, f*(1+e), f*(1-e))
	}
	f, lf := fitRepeats(t, b, v)
	if math.Abs(f.V0-v0) > 1e-6*v0 || math.Abs(float64(f.T)-tt) > 1e-9 {
		t.Errorf("fit v0 = %v, t = %v; want %v, %v", f.V0, f.T, v0, tt)
	}
	if lf.F > 1e-9 || math.Abs(lf.P-1) > 1e-9 || lf.DF != [2]int{2, 4} {
		t.Errorf("F = %v, P = %v, DF = %v; want 0, 1, [2 4]", lf.F, lf.P, lf.DF)
	}
	if want := e * math.Sqrt2; math.Abs(lf.PureError-want) > 1e-9 {
		t.Errorf("pure error %v, want %v", lf.PureError, want)
	}
}

// On noisy repeats the residual sum of squares splits into the scatter
// about each batch's mean and the means' distance from the law, computed
// here from the definitions; with c − p = 2 the F distribution's survival
// function is the closed form (1 + 2F/d₂)^(−d₂/2).
func TestLackOfFitDecomposition(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const v0, tt = 9000.0, 0.01
	var b, v []float64
	for _, x := range []float64{32, 128, 512, 2048} {
		for range 3 {
			b = append(b, x)
			v = append(v, x/(x/v0+tt)*(1+0.08*rng.NormFloat64()))
		}
	}
	f, lf := fitRepeats(t, b, v)
	var ssr, sspe, sslof float64
	for i := 0; i < len(b); i += 3 {
		mean := (v[i] + v[i+1] + v[i+2]) / 3
		fb := f.Fitted[i]
		for j := i; j < i+3; j++ {
			ssr += f.Residuals[j] * f.Residuals[j]
			d := (v[j] - mean) / fb
			sspe += d * d
		}
		d := (mean - fb) / fb
		sslof += 3 * d * d
	}
	if math.Abs(ssr-(sspe+sslof)) > 1e-12 {
		t.Errorf("SS_res %v ≠ SS_pe %v + SS_lof %v", ssr, sspe, sslof)
	}
	wantF := (sslof / 2) / (sspe / 8)
	if lf.DF != [2]int{2, 8} || math.Abs(lf.F-wantF) > 1e-9*wantF {
		t.Errorf("F = %v with DF %v, want %v with [2 8]", lf.F, lf.DF, wantF)
	}
	if want := math.Pow(1+2*wantF/8, -4); math.Abs(lf.P-want) > 1e-9 {
		t.Errorf("P = %v, want %v", lf.P, want)
	}
	if want := math.Sqrt(sspe / 8); math.Abs(lf.PureError-want) > 1e-12 {
		t.Errorf("pure error %v, want %v", lf.PureError, want)
	}
}

// Throughput that falls at the largest batch (a memory limit the law does
// not have), measured with 1 % scatter, fails the test.
func TestLackOfFitDetects(t *testing.T) {
	b := []float64{16, 16, 64, 64, 256, 256, 1024, 1024, 4096, 4096}
	v := []float64{4000, 4040, 9000, 9090, 13000, 13130, 15000, 15150, 9000, 9090}
	f, err := Throughput(b, v, &Settings{OutlierLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	if f.LackOfFit == nil || !(f.LackOfFit.P < 1e-6) {
		t.Errorf("lack of fit %+v, want P < 1e-6", f.LackOfFit)
	}
}

// Without a batch measured twice, or with repeats at only two batches
// (no degree of freedom for the lack of fit), there is no test; nor with
// repeats that agree exactly or to rounding.
func TestLackOfFitAbsent(t *testing.T) {
	for _, c := range []struct {
		name string
		b, v []float64
	}{
		{"no repeats", []float64{16, 64, 256, 1024}, []float64{4000, 9000, 13000, 15000}},
		{"two batches", []float64{16, 16, 1024, 1024}, []float64{4000, 4100, 15000, 14800}},
		{"exact repeats", []float64{16, 16, 64, 64, 256, 256}, []float64{4000, 4000, 9000, 9000, 13000, 13000}},
		{"exact repeats, mean rounded", []float64{16, 16, 16, 64, 64, 64, 256, 256, 256}, []float64{0.1, 0.1, 0.1, 0.3, 0.3, 0.3, 0.7, 0.7, 0.7}},
	} {
		f, err := Throughput(c.b, c.v, &Settings{OutlierLevel: -1})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if f.LackOfFit != nil {
			t.Errorf("%s: lack of fit %+v, want none", c.name, f.LackOfFit)
		}
	}
}

// The steps-to-target curve gets the same test over repeated runs
// (seeds) at one batch.
func TestLackOfFitSteps(t *testing.T) {
	const sMin, bNoise = 500.0, 400.0
	var b, s []float64
	for _, x := range []float64{64, 256, 1024, 4096} {
		want := sMin * (1 + bNoise/x)
		b = append(b, x, x)
		s = append(s, want*1.03, want/1.03)
	}
	f, err := Steps(b, s, &Settings{OutlierLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	if f.LackOfFit == nil || f.LackOfFit.DF != [2]int{2, 4} || !(f.LackOfFit.P > 0.5) {
		t.Errorf("lack of fit %+v, want DF [2 4] and a large P", f.LackOfFit)
	}
}

// fitRepeats fits the throughput law to points with repeats, the outlier
// test off, and returns the fit and its lack-of-fit test, which must exist.
func fitRepeats(t *testing.T, b, v []float64) (*ThroughputFit, *LackOfFit) {
	t.Helper()
	f, err := Throughput(b, v, &Settings{OutlierLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	if f.LackOfFit == nil {
		t.Fatal("no lack-of-fit test with every batch measured more than once")
	}
	return f, f.LackOfFit
}
