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
// writes the 2-byte working copy: 2 + 8 + 16 + 6 + 2 = 34.
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
	} {
		if got := UpdateBytesPerParam(c.o, c.g, c.w, c.c); got != c.want {
			t.Errorf("%s (g %g, w %g, c %g): %g bytes, want %g", c.o, c.g, c.w, c.c, got, c.want)
		}
	}
}
