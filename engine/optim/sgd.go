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
		if k == 0 {
			sgdPlain(g.Params, g.Grads, wd, lr)
			continue
		}
		buf := o.st.slots[gi][0]
		switch {
		case first:
			sgdFirst(g.Params, g.Grads, buf, wd, lr, mu, o.Nesterov)
		case o.Nesterov:
			sgdNesterov(g.Params, g.Grads, buf, wd, lr, mu, damp)
		default:
			sgdMomentum(g.Params, g.Grads, buf, wd, lr, mu, damp)
		}
	}
	o.st.steps++
}

// StateLen returns the number of float32 momentum values held.
func (o *SGD) StateLen() int { return o.st.size() }

// The loops below are Step's update, one per case so that the inner loop
// has no branches; each computes in float64 and rounds a stored value once.

// sgdPlain is w ← w − lr·(g + λw).
func sgdPlain(p, g []float32, wd, lr float64) {
	g = g[:len(p)]
	for i, w32 := range p {
		w := float64(w32)
		p[i] = float32(w - lr*(float64(g[i])+wd*w))
	}
}

// sgdFirst is the first momentum step: the buffer starts at the gradient.
func sgdFirst(p, g, buf []float32, wd, lr, mu float64, nesterov bool) {
	g, buf = g[:len(p)], buf[:len(p)]
	for i, w32 := range p {
		w := float64(w32)
		d := float64(g[i]) + wd*w
		buf[i] = float32(d)
		if nesterov {
			d += mu * d
		}
		p[i] = float32(w - lr*d)
	}
}

// sgdMomentum is b ← μb + (1−τ)d, w ← w − lr·b with d = g + λw.
func sgdMomentum(p, g, buf []float32, wd, lr, mu, damp float64) {
	g, buf = g[:len(p)], buf[:len(p)]
	for i, w32 := range p {
		w := float64(w32)
		b := mu*float64(buf[i]) + damp*(float64(g[i])+wd*w)
		buf[i] = float32(b)
		p[i] = float32(w - lr*b)
	}
}

// sgdNesterov is b ← μb + (1−τ)d, w ← w − lr·(d + μb).
func sgdNesterov(p, g, buf []float32, wd, lr, mu, damp float64) {
	g, buf = g[:len(p)], buf[:len(p)]
	for i, w32 := range p {
		w := float64(w32)
		d := float64(g[i]) + wd*w
		b := mu*float64(buf[i]) + damp*d
		buf[i] = float32(b)
		p[i] = float32(w - lr*(d+mu*b))
	}
}
