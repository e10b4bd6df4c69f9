package sim

import (
	"testing"

	"scaleplan/model"
)

// TestUpdateBytesPerParam checks the optimizer's bytes per parameter
// against the sums written out: fp32 momentum SGD reads the gradient (4),
// reads and writes the weight (8) and the momentum (8), 20; Adam two
// state values, 28; LARS and LAMB read the weight and the gradient (LAMB:
// its update) once more for the layer norms, 28 and 36; under mixed
// precision LAMB reads a 2-byte gradient, moves fp32 weights and state and
// writes the 2-byte working copy: 2 + 8 + 16 + 6 + 2 = 34. BertAdam in
// fp32, its kernels' reads and writes summed one by one from
// optimization.py and clip_grad.py: norm 4, grad mul_ 8, m mul_ 8, m
// add_ 12, v mul_ 8, v addcmul_ 16, sqrt 8, + ε 8, division 12, decay · p
// 8, update += 12, lr · update 8, negation 8, p.add_ 12: 132.
func TestUpdateBytesPerParam(t *testing.T) {
	for _, c := range []struct {
		o       model.Optimizer
		g, w, c float64
		want    float64
	}{
		{model.Momentum, 4, 4, 0, 20},
		{model.Adam, 4, 4, 0, 28},
		{model.LARS, 4, 4, 0, 28},
		{model.LAMB, 4, 4, 0, 36},
		{model.LAMB, 2, 4, 2, 34},
		{model.BertAdam, 4, 4, 0, 4 + 8 + 8 + 12 + 8 + 16 + 8 + 8 + 12 + 8 + 12 + 8 + 8 + 12},
	} {
		if got := UpdateBytesPerParam(c.o, c.g, c.w, c.c); got != c.want {
			t.Errorf("%s (g %g, w %g, c %g): %g bytes, want %g", c.o, c.g, c.w, c.c, got, c.want)
		}
	}
}
