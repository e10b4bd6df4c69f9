package llm

import (
	"fmt"
	"math"
)

// ScalingLaw is a parametric fit of a language model's final training
// loss to its parameters N and training tokens D,
//
//	L(N, D) = E + A/N^α + B/D^β
//
// (Hoffmann et al. 2022, "Training Compute-Optimal Large Language Models",
// Section 3.3, Approach 3). A fit holds for the data, tokenizer and
// recipe it was fitted on: what it predicts for another run is an
// estimate, and every figure derived from it says so.
type ScalingLaw struct {
	// Name names the fit; Source cites it.
	Name, Source string
	// E is the irreducible loss; A and Alpha the parameter term; B and
	// Beta the data term.
	E, A, B, Alpha, Beta float64
}

// Chinchilla is Hoffmann et al. 2022's fit (Section 3.3 and Appendix D.2:
// E = 1.69, A = 406.4, B = 410.7, α = 0.34, β = 0.28), on MassiveText in
// nats per token.
var Chinchilla = ScalingLaw{
	Name:   "chinchilla",
	Source: "Hoffmann et al. 2022, arXiv:2203.15556, Section 3.3 (Approach 3) and Appendix D.2",
	E:      1.69, A: 406.4, B: 410.7, Alpha: 0.34, Beta: 0.28,
}

// ChinchillaRefit is Besiroglu et al. 2024's refit of Approach 3 on the
// data of Hoffmann et al.'s Figure 4 ("Chinchilla Scaling: A replication
// attempt", arXiv:2404.10102, their point estimates: E = 1.8172, A = 482.01,
// B = 2085.43, α = 0.3478, β = 0.3658).
var ChinchillaRefit = ScalingLaw{
	Name:   "chinchilla-refit",
	Source: "Besiroglu et al. 2024, arXiv:2404.10102 (refit of Approach 3)",
	E:      1.8172, A: 482.01, B: 2085.43, Alpha: 0.3478, Beta: 0.3658,
}

// ScalingLaws returns the shipped fits.
func ScalingLaws() []ScalingLaw { return []ScalingLaw{Chinchilla, ChinchillaRefit} }

// Loss returns the law's estimate of the loss after training a model of
// n parameters on d tokens.
func (l ScalingLaw) Loss(n, d float64) (float64, error) {
	if err := l.check(n); err != nil {
		return 0, err
	}
	if !(d > 0) || math.IsInf(d, 0) {
		return 0, fmt.Errorf("%s: tokens %g: want a positive finite number", l.Name, d)
	}
	return l.E + l.A/math.Pow(n, l.Alpha) + l.B/math.Pow(d, l.Beta), nil
}

// Asymptote returns E + A/N^α, the loss a model of n parameters tends to
// with unlimited data.
func (l ScalingLaw) Asymptote(n float64) (float64, error) {
	if err := l.check(n); err != nil {
		return 0, err
	}
	return l.E + l.A/math.Pow(n, l.Alpha), nil
}

// Tokens returns the law's estimate of the training tokens a model of n
// parameters needs to reach the loss target, the inverse of Loss:
//
//	D = (B / (L − E − A/N^α))^(1/β)
//
// It fails when the target is at or below the asymptote E + A/N^α, which
// no amount of data reaches at that size.
func (l ScalingLaw) Tokens(n, target float64) (float64, error) {
	floor, err := l.Asymptote(n)
	if err != nil {
		return 0, err
	}
	if !(target > floor) || math.IsInf(target, 0) {
		return 0, fmt.Errorf("%s: loss %g: want more than %.4f, the asymptote E + A/N^α of %.4g parameters (an estimate)", l.Name, target, floor, n)
	}
	d := math.Pow(l.B/(target-floor), 1/l.Beta)
	if math.IsInf(d, 0) {
		return 0, fmt.Errorf("%s: loss %g is too close to the asymptote %.6f: the tokens overflow", l.Name, target, floor)
	}
	return d, nil
}

// check checks the law's constants and the parameter count n.
func (l ScalingLaw) check(n float64) error {
	if !(l.A > 0 && l.B > 0 && l.Alpha > 0 && l.Beta > 0 && l.E >= 0) {
		return fmt.Errorf("scaling law %q: E %g, A %g, B %g, α %g, β %g: want E ≥ 0 and A, B, α, β > 0", l.Name, l.E, l.A, l.B, l.Alpha, l.Beta)
	}
	if !(n > 0) || math.IsInf(n, 0) {
		return fmt.Errorf("%s: parameters %g: want a positive finite number", l.Name, n)
	}
	return nil
}
