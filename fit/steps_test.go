package fit

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
)

// stepsCurve is S(B) = S_min (1 + B_noise/B), written out here.
func stepsCurve(B, sMin, bNoise float64) float64 { return sMin * (1 + bNoise/B) }

// TestStepsRecovery fits S_min = 1000 and B_noise = 2000 from points with
// 5 % multiplicative noise at 23 batch sizes from 32 to 65536 (powers of
// √2, rounded), 4 runs each: every one of 100 seeded trials must be
// within 5 %, and the 95 % intervals must hold the truth in 90 or more.
// (One run per batch is not enough at 5 % noise: B_noise then varies by
// about 4 % from trial to trial.)
func TestStepsRecovery(t *testing.T) {
	const sMin, bNoise, trials = 1000.0, 2000.0, 100
	var coverS, coverB int
	var worstS, worstB float64
	for trial := range trials {
		rng := rand.New(rand.NewPCG(4, uint64(trial)))
		var B, S []float64
		for k := 10; k <= 32; k++ {
			b := math.Round(math.Pow(2, float64(k)/2))
			for range 4 {
				B = append(B, b)
				S = append(S, stepsCurve(b, sMin, bNoise)*(1+0.05*rng.NormFloat64()))
			}
		}
		f, err := Steps(B, S, nil)
		if err != nil {
			t.Fatal(err)
		}
		es, eb := math.Abs(f.SMin/sMin-1), math.Abs(f.BNoise/bNoise-1)
		worstS, worstB = math.Max(worstS, es), math.Max(worstB, eb)
		if es > 0.05 || eb > 0.05 {
			t.Errorf("trial %d: S_min = %.1f, B_noise = %.1f; want within 5%% of %v, %v", trial, f.SMin, f.BNoise, sMin, bNoise)
		}
		if f.SMinInterval[0] <= sMin && sMin <= f.SMinInterval[1] {
			coverS++
		}
		if f.BNoiseInterval[0] <= bNoise && bNoise <= f.BNoiseInterval[1] {
			coverB++
		}
	}
	t.Logf("worst error S_min %.2f%%, B_noise %.2f%%; intervals hold S_min in %d, B_noise in %d of %d", 100*worstS, 100*worstB, coverS, coverB, trials)
	if coverS < 90 || coverB < 90 {
		t.Errorf("intervals hold S_min in %d and B_noise in %d of %d trials, want >= 90", coverS, coverB, trials)
	}
}

// TestStepsRegimes classifies the points of a curve with B_noise = 1000.
// The expected regimes follow from the thresholds alone: perfect scaling
// for B <= 200 (S within 20 % of S_min·B_noise/B), maximal data
// parallelism for B >= 5000 (S within 20 % of S_min).
func TestStepsRegimes(t *testing.T) {
	points := []struct {
		B    float64
		want Regime
	}{
		{25, PerfectScaling}, {50, PerfectScaling}, {100, PerfectScaling}, {150, PerfectScaling},
		{300, DiminishingReturns}, {1000, DiminishingReturns}, {3000, DiminishingReturns},
		{7000, MaximalDataParallelism}, {20000, MaximalDataParallelism}, {100000, MaximalDataParallelism},
	}
	for _, noise := range []float64{0, 0.02} {
		rng := rand.New(rand.NewPCG(2, 2))
		var B, S []float64
		for _, p := range points {
			for range 3 {
				B = append(B, p.B)
				S = append(S, stepsCurve(p.B, 500, 1000)*(1+noise*rng.NormFloat64()))
			}
		}
		f, err := Steps(B, S, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range points {
			if got := f.Regime(p.B); got != p.want {
				t.Errorf("noise %v: B = %v (B_noise fitted %.0f): %v, want %v", noise, p.B, f.BNoise, got, p.want)
			}
		}
		if noise == 0 && (!scalar.EqualWithinRel(f.SMin, 500, 1e-9) || !scalar.EqualWithinRel(f.BNoise, 1000, 1e-9)) {
			t.Errorf("exact points: S_min %v, B_noise %v; want 500, 1000", f.SMin, f.BNoise)
		}
	}
	// The boundaries themselves.
	f := &StepsFit{SMin: 1, BNoise: 1000}
	for _, tc := range []struct {
		B    float64
		want Regime
	}{{200, PerfectScaling}, {200.001, DiminishingReturns}, {4999.99, DiminishingReturns}, {5000, MaximalDataParallelism}} {
		if got := f.Regime(tc.B); got != tc.want {
			t.Errorf("B = %v: %v, want %v", tc.B, got, tc.want)
		}
	}
	if got := (&StepsFit{SMin: 1}).Regime(1); got != MaximalDataParallelism {
		t.Errorf("B_noise 0: %v, want maximal data parallelism at every batch", got)
	}
	if s := Regime(7).String(); s != "Regime(7)" {
		t.Errorf("Regime(7).String() = %q", s)
	}
}

func TestStepsErrors(t *testing.T) {
	if _, err := Steps([]float64{64, 64}, []float64{100, 120}, nil); !errors.Is(err, ErrFewBatches) {
		t.Errorf("one batch: %v, want ErrFewBatches", err)
	}
	if _, err := Steps([]float64{64, 128}, []float64{100, -1}, nil); err == nil || err.Error() != "point 2: steps -1: must be a finite number > 0" {
		t.Errorf("negative steps: %v", err)
	}
}
