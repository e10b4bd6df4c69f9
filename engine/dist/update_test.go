package dist

import (
	"math"
	"math/rand/v2"
	"testing"

	"scaleplan/engine/nn"
	"scaleplan/engine/optim"
	"scaleplan/engine/tensor"
)

// The updater's pieces, run in parallel, give the bits of one optimizer
// over all tensors (the reference), for every optimizer and thread count.
func TestUpdaterMatchesOneOptimizer(t *testing.T) {
	defer tensor.SetThreads(tensor.Threads())
	for _, kind := range optim.Kinds {
		for _, threads := range []int{1, 3} {
			tensor.SetThreads(threads)
			build := func() *nn.Network { return nn.MLP(rand.New(rand.NewPCG(1, 2)), 784, 300, 10) }
			a, b := build(), build()
			s, _ := optim.Defaults(kind)
			u, err := newUpdater(a, s)
			if err != nil {
				t.Fatal(err)
			}
			if kind != "lars" && len(u.pieces) < 4 {
				t.Fatalf("%s: %d pieces, want the 238,510 values cut into several", kind, len(u.pieces))
			}
			ref, _ := optim.New(s)
			var groups []optim.Group
			for _, p := range b.ParamGroups() {
				groups = append(groups, optim.Group{Name: p.Name, Params: p.Params, Grads: p.Grads, Exclude: !p.Kind.Decay()})
			}
			rng := rand.New(rand.NewPCG(3, 4))
			for step := range 3 {
				for i := range a.Grads {
					g := float32(rng.NormFloat64())
					a.Grads[i], b.Grads[i] = g, g
				}
				lr := 0.01 * float64(step+1)
				u.Step(lr)
				ref.Step(groups, lr)
				b.ZeroGrad()
			}
			for i := range a.Params {
				if math.Float32bits(a.Params[i]) != math.Float32bits(b.Params[i]) || a.Grads[i] != 0 {
					t.Fatalf("%s, %d threads: value %d = %g (gradient %g), one optimizer gives %g (gradient 0)", kind, threads, i, a.Params[i], a.Grads[i], b.Params[i])
				}
			}
		}
	}
}
