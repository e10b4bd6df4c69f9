package optim

// SGD is stochastic gradient descent with optional momentum, dampening,
// Nesterov momentum and L2 weight decay, following torch.optim.SGD step for
// step (see the package documentation for the equations). The zero value is
// plain SGD.
type SGD struct {
	// Momentum is μ in [0, 1); default 0 (no momentum buffer).
	Momentum float64
	// Dampening is τ in [0, 1]; default 0.
	Dampening float64
	// Nesterov selects Nesterov momentum; it needs μ > 0 and τ = 0.
	// Default false.
	Nesterov bool
	// WeightDecay is the L2 coefficient λ ≥ 0 added to the gradient of
	// groups not excluded; default 0.
	WeightDecay float64

	st state
}

// Validate reports invalid settings, wrapping ErrSettings.
func (o *SGD) Validate() error {
	switch {
	case !(o.Momentum >= 0 && o.Momentum < 1):
		return invalid("sgd momentum %g not in [0, 1)", o.Momentum)
	case !(o.Dampening >= 0 && o.Dampening <= 1):
		return invalid("sgd dampening %g not in [0, 1]", o.Dampening)
	case !(o.WeightDecay >= 0) || o.WeightDecay > 1:
		return invalid("sgd weight decay %g not in [0, 1]", o.WeightDecay)
	case o.Nesterov && (o.Momentum == 0 || o.Dampening != 0):
		return invalid("sgd nesterov needs momentum > 0 and dampening 0 (momentum %g, dampening %g)", o.Momentum, o.Dampening)
	}
	return nil
}

// Step applies one SGD update with learning rate lr. It panics if the
// settings are invalid or the groups differ from those of the first step.
func (o *SGD) Step(groups []Group, lr float64) {
	checkLR(lr)
	if err := o.Validate(); err != nil {
		panic(errInvalid + err.Error())
	}
	k := 0
	if o.Momentum != 0 {
		k = 1
	}
	o.st.ensure(groups, k)
	first := o.st.steps == 0
	mu, damp := o.Momentum, 1-o.Dampening
	for gi, g := range groups {
		wd := o.WeightDecay
		if g.Exclude {
			wd = 0
		}
		var buf []float32
		if k == 1 {
			buf = o.st.slots[gi][0]
		}
		for i, w32 := range g.Params {
			w := float64(w32)
			d := float64(g.Grads[i]) + wd*w
			if buf != nil {
				b := d
				if !first {
					b = mu*float64(buf[i]) + damp*d
				}
				buf[i] = float32(b)
				if o.Nesterov {
					d += mu * b
				} else {
					d = b
				}
			}
			g.Params[i] = float32(w - lr*d)
		}
	}
	o.st.steps++
}

// StateLen returns the number of float32 momentum values held.
func (o *SGD) StateLen() int { return o.st.size() }
