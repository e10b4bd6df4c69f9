package data

import (
	"bytes"
	"strings"
	"testing"
)

// nearestMean fits class means on train and returns the accuracy of the
// nearest-mean classifier on test: a learner independent of the engine.
func nearestMean(train, test *Dataset) float64 {
	k := train.Dim()
	mean := make([]float64, train.Classes*k)
	count := make([]float64, train.Classes)
	for i := range train.N {
		c := int(train.Labels[i])
		count[c]++
		for j, p := range train.Image(i) {
			mean[c*k+j] += float64(p)
		}
	}
	for c := range train.Classes {
		for j := range k {
			mean[c*k+j] /= max(count[c], 1)
		}
	}
	right := 0
	for i := range test.N {
		best, bestD := -1, 0.0
		for c := range train.Classes {
			d := 0.0
			for j, p := range test.Image(i) {
				e := float64(p) - mean[c*k+j]
				d += e * e
			}
			if best < 0 || d < bestD {
				best, bestD = c, d
			}
		}
		if best == int(test.Labels[i]) {
			right++
		}
	}
	return float64(right) / float64(test.N)
}

func TestSyntheticLearnable(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sep      float64
		noise    float64
		min, max float64 // accuracy bounds of the nearest-mean classifier
	}{
		// Half the template distance over σ is about 0.1·11.4/0.3 ≈ 3.8:
		// nearly separable.
		{"default", 0.1, 0.3, 0.97, 1},
		// About 1.1σ between templates, and class means estimated from
		// 200 samples each carry noise of σ/√200 ≈ 0.02 per pixel, as
		// large as the pattern: well above chance (0.1, standard error
		// 0.013 on 500 samples) but far from perfect.
		{"hard", 0.03, 0.3, 0.2, 0.9},
		// No class signal: chance level 1/10.
		{"no-signal", 0, 0.3, 0, 0.2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultSynthetic()
			c.Train, c.Test, c.Separation, c.Noise = 2000, 500, tc.sep, tc.noise
			train, test, err := Synthetic(c)
			if err != nil {
				t.Fatal(err)
			}
			if acc := nearestMean(train, test); acc < tc.min || acc > tc.max {
				t.Errorf("nearest-mean accuracy %.3f, want in [%g, %g]", acc, tc.min, tc.max)
			}
		})
	}
}

func TestSyntheticDeterministic(t *testing.T) {
	c := DefaultSynthetic()
	c.Train, c.Test = 300, 100
	a, at, _ := Synthetic(c)
	b, bt, _ := Synthetic(c)
	if !bytes.Equal(a.Pixels, b.Pixels) || !bytes.Equal(a.Labels, b.Labels) || !bytes.Equal(at.Pixels, bt.Pixels) {
		t.Error("same config gave different data")
	}
	if bytes.Equal(a.Pixels[:a.Dim()*100], at.Pixels[:a.Dim()*100]) {
		t.Error("training and test sets are the same samples")
	}
	c.Seed = 2
	d, _, _ := Synthetic(c)
	if bytes.Equal(a.Pixels, d.Pixels) {
		t.Error("seeds 1 and 2 gave the same data")
	}
	if a.N != 300 || at.N != 100 || a.Rows != 28 || a.Cols != 28 || a.Classes != 10 || len(a.Pixels) != 300*784 {
		t.Errorf("shape: %d/%d samples %dx%d %d classes", a.N, at.N, a.Rows, a.Cols, a.Classes)
	}
	var seen [10]bool
	for _, l := range a.Labels {
		seen[l] = true
	}
	for c, s := range seen {
		if !s {
			t.Errorf("class %d never drawn in 300 samples", c)
		}
	}
}

func TestSyntheticErrors(t *testing.T) {
	for _, tc := range []struct {
		change func(*SyntheticConfig)
		msg    string
	}{
		{func(c *SyntheticConfig) { c.Train = 0 }, "0 training"},
		{func(c *SyntheticConfig) { c.Rows = 0 }, "images 0x28"},
		{func(c *SyntheticConfig) { c.Rows = 1 << 40 }, "want 1 to 2^20 pixels"},
		{func(c *SyntheticConfig) { c.Train = 1 << 30 }, "exceed"},
		{func(c *SyntheticConfig) { c.Classes = 1 }, "1 classes"},
		{func(c *SyntheticConfig) { c.Classes = 300 }, "300 classes"},
		{func(c *SyntheticConfig) { c.Separation = 0.5 }, "separation 0.5"},
		{func(c *SyntheticConfig) { c.Noise = -1 }, "noise -1"},
	} {
		c := DefaultSynthetic()
		tc.change(&c)
		if _, _, err := Synthetic(c); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Synthetic(%+v) = %v, want error containing %q", c, err, tc.msg)
		}
	}
}
