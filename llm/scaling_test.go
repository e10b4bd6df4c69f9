package llm

import (
	"math"
	"strings"
	"testing"
)

// TestChinchillaLoss checks the law at Chinchilla itself (70 B
// parameters, 1.4 T tokens, Hoffmann et al. 2022, Table 1), computed by
// hand: 1.69 + 406.4/(7e10)^0.34 + 410.7/(1.4e12)^0.28 = 1.93665, and the
// refit's 1.8172 + 482.01/(7e10)^0.3478 + 2085.43/(1.4e12)^0.3658 =
// 1.97388.
func TestChinchillaLoss(t *testing.T) {
	for _, tc := range []struct {
		law  ScalingLaw
		want float64
	}{{Chinchilla, 1.9366454705587173}, {ChinchillaRefit, 1.9738818631585637}} {
		got, err := tc.law.Loss(70e9, 1.4e12)
		if err != nil || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: loss %v, err %v, want %v", tc.law.Name, got, err, tc.want)
		}
	}
}

// TestChinchillaTokens checks the inverse: the tokens that reach a loss
// give that loss back, and a target at or below the asymptote fails.
func TestChinchillaTokens(t *testing.T) {
	for _, law := range ScalingLaws() {
		for _, n := range []float64{125e6, 7e9, 70e9, 405e9} {
			for _, d := range []float64{1e9, 300e9, 15e12} {
				l, err := law.Loss(n, d)
				if err != nil {
					t.Fatal(err)
				}
				got, err := law.Tokens(n, l)
				if err != nil || math.Abs(got-d)/d > 1e-9 {
					t.Errorf("%s: tokens for %.6f at N %.3g = %.6g, err %v, want %.6g", law.Name, l, n, got, err, d)
				}
			}
		}
	}
	// Asymptote of 70 B: 1.69 + 406.4/(7e10)^0.34 = 1.8458 (by hand).
	floor, _ := Chinchilla.Asymptote(70e9)
	if math.Abs(floor-(1.9366454705587173-410.7/math.Pow(1.4e12, 0.28))) > 1e-12 {
		t.Errorf("asymptote %v", floor)
	}
	for _, target := range []float64{floor, floor - 0.1, 1.0} {
		_, err := Chinchilla.Tokens(70e9, target)
		if err == nil || !strings.Contains(err.Error(), "asymptote") || !strings.Contains(err.Error(), "estimate") {
			t.Errorf("target %v: error %v, want the asymptote named and the estimate flagged", target, err)
		}
	}
}

// TestScalingLawErrors checks bad parameters and constants.
func TestScalingLawErrors(t *testing.T) {
	if _, err := Chinchilla.Loss(0, 1e9); err == nil || !strings.Contains(err.Error(), "parameters 0") {
		t.Errorf("zero parameters: %v", err)
	}
	if _, err := Chinchilla.Loss(1e9, math.Inf(1)); err == nil || !strings.Contains(err.Error(), "tokens") {
		t.Errorf("infinite tokens: %v", err)
	}
	bad := Chinchilla
	bad.Beta = 0
	if _, err := bad.Tokens(1e9, 3); err == nil || !strings.Contains(err.Error(), "β 0") {
		t.Errorf("β 0: %v", err)
	}
	if _, err := Chinchilla.Tokens(1e9, math.NaN()); err == nil {
		t.Error("NaN target: no error")
	}
}
