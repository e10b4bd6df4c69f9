package data

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Keys that separate the random streams drawn from one seed.
const (
	keyTemplates = 0x7e3a1d9c5b2f4e68
	keyShuffle   = 0x2c6b9e1f8d4a7305
)

// SyntheticConfig describes a synthetic, learnable data set of the MNIST
// shape. Each class c has a template
//
//	T_c = b + δ·u_c,   b_j ~ U[0.25, 0.75] shared,  u_cj ~ U[−1, 1]
//
// and a sample of class c (drawn uniformly) has pixels
//
//	x_j = clamp(T_cj + σ·z_j, 0, 1),   z_j ~ N(0, 1),
//
// stored as round(255·x_j). Templates of two classes lie about
// δ·√(2·Rows·Cols/3) apart, so δ/σ sets the difficulty; δ = 0 makes the
// labels carry no information.
type SyntheticConfig struct {
	// Train and Test are the numbers of samples; DefaultSynthetic 6000 and
	// 1000.
	Train, Test int
	// Rows and Cols are the image size in pixels; DefaultSynthetic 28x28.
	Rows, Cols int
	// Classes is the number of classes, 2 to 256; DefaultSynthetic 10.
	Classes int
	// Separation is δ in [0, 0.25], the amplitude of the class patterns in
	// units of full intensity; DefaultSynthetic 0.1.
	Separation float64
	// Noise is σ ≥ 0, the per-pixel noise standard deviation in units of
	// full intensity; DefaultSynthetic 0.3.
	Noise float64
	// Seed seeds the templates and the samples; DefaultSynthetic 1.
	Seed uint64
}

// DefaultSynthetic returns a configuration of 6000 training and 1000 test
// 28x28 images in 10 classes, δ = 0.1, σ = 0.3, seed 1.
func DefaultSynthetic() SyntheticConfig {
	return SyntheticConfig{Train: 6000, Test: 1000, Rows: 28, Cols: 28, Classes: 10, Separation: 0.1, Noise: 0.3, Seed: 1}
}

// Validate reports settings out of range.
func (c SyntheticConfig) Validate() error {
	switch {
	case c.Train < 1 || c.Test < 1 || c.Train > MaxBytes || c.Test > MaxBytes:
		return fmt.Errorf("synthetic data: %d training and %d test samples, want 1 to %d each", c.Train, c.Test, MaxBytes)
	case c.Rows < 1 || c.Cols < 1 || c.Rows > 1<<20 || c.Cols > 1<<20 || c.Rows*c.Cols > 1<<20:
		return fmt.Errorf("synthetic data: images %dx%d, want 1 to 2^20 pixels", c.Rows, c.Cols)
	case (c.Train+c.Test)*c.Rows*c.Cols > MaxBytes:
		return fmt.Errorf("synthetic data: %d samples of %dx%d exceed %d bytes", c.Train+c.Test, c.Rows, c.Cols, MaxBytes)
	case c.Classes < 2 || c.Classes > 256:
		return fmt.Errorf("synthetic data: %d classes, want 2 to 256", c.Classes)
	case !(c.Separation >= 0 && c.Separation <= 0.25):
		return fmt.Errorf("synthetic data: separation %g not in [0, 0.25]", c.Separation)
	case !(c.Noise >= 0) || math.IsInf(c.Noise, 1):
		return fmt.Errorf("synthetic data: noise %g not non-negative and finite", c.Noise)
	}
	return nil
}

// Synthetic returns a training and a test set drawn from the same class
// templates with independent samples. The result is a pure function of c.
func Synthetic(c SyntheticConfig) (train, test *Dataset, err error) {
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	k := c.Rows * c.Cols
	rng := rand.New(rand.NewPCG(c.Seed, keyTemplates))
	base := make([]float64, k)
	for j := range base {
		base[j] = 0.25 + 0.5*rng.Float64()
	}
	tmpl := make([]float64, c.Classes*k)
	for i := range tmpl {
		tmpl[i] = base[i%k] + c.Separation*(2*rng.Float64()-1)
	}
	gen := func(name string, n int, stream uint64) *Dataset {
		r := rand.New(rand.NewPCG(c.Seed, keyTemplates+stream))
		d := &Dataset{Name: name, N: n, Rows: c.Rows, Cols: c.Cols, Classes: c.Classes,
			Pixels: make([]uint8, n*k), Labels: make([]uint8, n)}
		for i := range n {
			cl := r.IntN(c.Classes)
			d.Labels[i] = uint8(cl)
			t := tmpl[cl*k : (cl+1)*k]
			px := d.Pixels[i*k : (i+1)*k]
			for j := range px {
				x := math.Min(math.Max(t[j]+c.Noise*r.NormFloat64(), 0), 1)
				px[j] = uint8(math.Round(255 * x))
			}
		}
		return d
	}
	name := fmt.Sprintf("synthetic(seed %d, δ %g, σ %g)", c.Seed, c.Separation, c.Noise)
	return gen(name+" train", c.Train, 1), gen(name+" test", c.Test, 2), nil
}
