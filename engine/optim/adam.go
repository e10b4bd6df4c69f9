package optim

import "math"

// Adam is the Adam optimizer of Kingma and Ba (2015) as torch.optim.Adam
// computes it (amsgrad off), with L2 weight decay added to the gradient, or,
// with Decoupled set, torch.optim.AdamW's decoupled weight decay (Loshchilov
// and Hutter 2019). See the package documentation for the equations.
type Adam struct {
	// Beta1 is β1 in [0, 1), the decay of the first moment; PyTorch 0.9.
	Beta1 float64
	// Beta2 is β2 in [0, 1), the decay of the second moment; PyTorch 0.999.
	Beta2 float64
	// Eps is ε > 0 added to the root of the second moment; PyTorch 1e-8.
	Eps float64
	// WeightDecay is λ ≥ 0; PyTorch Adam 0, AdamW 0.01.
	WeightDecay float64
	// Decoupled selects AdamW: w ← w(1 − lr·λ) before the Adam step
	// instead of adding λw to the gradient. Default false.
	Decoupled bool

	st state
}

// NewAdam returns Adam with PyTorch's defaults: β1 = 0.9, β2 = 0.999,
// ε = 1e-8, λ = 0.
func NewAdam() *Adam { return &Adam{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8} }

// NewAdamW returns AdamW with PyTorch's defaults: β1 = 0.9, β2 = 0.999,
// ε = 1e-8, λ = 0.01, decoupled.
func NewAdamW() *Adam {
	return &Adam{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01, Decoupled: true}
}

// Validate reports invalid settings, wrapping ErrSettings.
func (o *Adam) Validate() error {
	switch {
	case !(o.Beta1 >= 0 && o.Beta1 < 1):
		return invalid("adam beta1 %g not in [0, 1)", o.Beta1)
	case !(o.Beta2 >= 0 && o.Beta2 < 1):
		return invalid("adam beta2 %g not in [0, 1)", o.Beta2)
	case !(o.Eps > 0) || math.IsInf(o.Eps, 1):
		return invalid("adam eps %g not positive and finite", o.Eps)
	case !(o.WeightDecay >= 0) || o.WeightDecay > 1:
		return invalid("adam weight decay %g not in [0, 1]", o.WeightDecay)
	}
	return nil
}

// Step applies one Adam (or AdamW) update with learning rate lr. It panics
// if the settings are invalid or the groups differ from those of the first
// step.
func (o *Adam) Step(groups []Group, lr float64) {
	checkLR(lr)
	if err := o.Validate(); err != nil {
		panic(errInvalid + err.Error())
	}
	o.st.ensure(groups, 2)
	t := float64(o.st.steps + 1)
	b1, b2 := o.Beta1, o.Beta2
	bc1 := 1 - math.Pow(b1, t)
	bc2 := math.Sqrt(1 - math.Pow(b2, t))
	size := lr / bc1
	for gi, g := range groups {
		wd := o.WeightDecay
		if g.Exclude {
			wd = 0
		}
		m, v := o.st.slots[gi][0], o.st.slots[gi][1]
		for i, w32 := range g.Params {
			w := float64(w32)
			d := float64(g.Grads[i])
			if o.Decoupled {
				w *= 1 - lr*wd
			} else {
				d += wd * w
			}
			mi := b1*float64(m[i]) + (1-b1)*d
			vi := b2*float64(v[i]) + (1-b2)*d*d
			m[i], v[i] = float32(mi), float32(vi)
			g.Params[i] = float32(w - size*mi/(math.Sqrt(vi)/bc2+o.Eps))
		}
	}
	o.st.steps++
}

// StateLen returns the number of float32 moment values held (two per
// parameter).
func (o *Adam) StateLen() int { return o.st.size() }
