package optim

import "math"

// LARS is layer-wise adaptive rate scaling on top of momentum SGD in the
// form MLPerf ResNet-50 submissions use ("SGD with fast LARS"; see the
// package documentation for the equations and sources). Each group that is
// not excluded gets its own rate, the schedule's rate times the trust ratio
// η‖w‖/(‖g‖ + λ‖w‖ + ε); excluded groups (biases, batch-norm scale and
// shift) get the schedule's rate and no weight decay.
type LARS struct {
	// Momentum is μ in [0, 1); MLPerf 0.9. Default 0.
	Momentum float64
	// WeightDecay is λ ≥ 0; MLPerf v0.7 1e-4, v0.6 2e-4. Default 0.
	WeightDecay float64
	// Eta is the trust coefficient η > 0; MLPerf 1e-3. The zero value is
	// invalid.
	Eta float64
	// Eps is ε ≥ 0 in the trust-ratio denominator; MLPerf 0. Default 0.
	Eps float64
	// MomentumCorrection scales μ by lr_t/lr_{t-1} on every step after the
	// first, as NVIDIA's MXNet SGDwFASTLARS does (Goyal et al. 2017,
	// section 2.1); false gives the TensorFlow LARSOptimizer of the MLPerf
	// reference. Default false.
	MomentumCorrection bool

	st     state
	lastLR float64
}

// NewLARS returns LARS with the MLPerf Training v0.7 ResNet-50 settings of
// seed 000 (Fujitsu, 8x V100): μ = 0.9, λ = 1e-4, η = 1e-3, ε = 0, with
// momentum correction as in NVIDIA's implementation.
func NewLARS() *LARS {
	return &LARS{Momentum: 0.9, WeightDecay: 1e-4, Eta: 1e-3, MomentumCorrection: true}
}

// Validate reports invalid settings, wrapping ErrSettings.
func (o *LARS) Validate() error {
	switch {
	case !(o.Momentum >= 0 && o.Momentum < 1):
		return invalid("lars momentum %g not in [0, 1)", o.Momentum)
	case !(o.WeightDecay >= 0) || o.WeightDecay > 1:
		return invalid("lars weight decay %g not in [0, 1]", o.WeightDecay)
	case !(o.Eta > 0) || math.IsInf(o.Eta, 1):
		return invalid("lars eta %g not positive and finite", o.Eta)
	case !(o.Eps >= 0) || math.IsInf(o.Eps, 1):
		return invalid("lars eps %g not non-negative and finite", o.Eps)
	}
	return nil
}

// TrustRatio returns the LARS factor for one group,
//
//	η‖w‖ / (‖g‖ + λ‖w‖ + ε)   if ‖w‖ > 0 and ‖g‖ > 0,
//	1                         otherwise or if the group is excluded,
//
// with norms accumulated in float64.
func (o *LARS) TrustRatio(g Group) float64 {
	if g.Exclude {
		return 1
	}
	wn := math.Sqrt(sqnorm(g.Params))
	gn := math.Sqrt(sqnorm(g.Grads))
	if wn > 0 && gn > 0 {
		return o.Eta * wn / (gn + o.WeightDecay*wn + o.Eps)
	}
	return 1
}

// Step applies one LARS update with schedule rate lr. It panics if the
// settings are invalid or the groups differ from those of the first step.
func (o *LARS) Step(groups []Group, lr float64) {
	checkLR(lr)
	if err := o.Validate(); err != nil {
		panic(errInvalid + err.Error())
	}
	o.st.ensure(groups, 1)
	mu := o.Momentum
	if o.MomentumCorrection && o.st.steps > 0 && o.lastLR > 0 {
		mu *= lr / o.lastLR
	}
	for gi, g := range groups {
		wd := o.WeightDecay
		if g.Exclude {
			wd = 0
		}
		rate := lr * o.TrustRatio(g)
		v := o.st.slots[gi][0]
		for i, w32 := range g.Params {
			w := float64(w32)
			vi := mu*float64(v[i]) + rate*(float64(g.Grads[i])+wd*w)
			v[i] = float32(vi)
			g.Params[i] = float32(w - vi)
		}
	}
	o.lastLR = lr
	o.st.steps++
}

// StateLen returns the number of float32 momentum values held.
func (o *LARS) StateLen() int { return o.st.size() }
