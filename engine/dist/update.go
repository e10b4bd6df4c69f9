package dist

import (
	"scaleplan/engine/nn"
	"scaleplan/engine/optim"
	"scaleplan/engine/tensor"
)

// updater applies the optimizer to a network's parameters in parallel.
// It cuts the parameters into pieces, each updated by its own optimizer
// instance: whole tensors for LARS, whose trust ratio needs a tensor's
// norms, and runs of at most pieceLen values for the element-wise
// optimizers (SGD, Adam, AdamW), whose update of a value depends only on
// that value, its gradient, its own state and the step. Each instance
// sees the same steps and rates, so the result is bit-identical to one
// optimizer over all tensors, whatever the pieces.
type updater struct {
	pieces []piece
}

// piece is one optimizer instance and the groups it updates.
type piece struct {
	opt    optim.Optimizer
	groups []optim.Group
}

// pieceLen is the most values a piece of an element-wise optimizer holds.
const pieceLen = 1 << 16

// newUpdater returns an updater of net's parameters with optimizer s.
func newUpdater(net *nn.Network, s optim.Settings) (*updater, error) {
	var groups [][]optim.Group
	elementwise := s.Kind != "lars"
	var cur []optim.Group
	n := 0
	flush := func() {
		if len(cur) > 0 {
			groups = append(groups, cur)
			cur, n = nil, 0
		}
	}
	for _, p := range net.ParamGroups() {
		g := optim.Group{Name: p.Name, Params: p.Params, Grads: p.Grads, Exclude: !p.Kind.Decay()}
		if !elementwise {
			groups = append(groups, []optim.Group{g})
			continue
		}
		for lo := 0; lo < len(g.Params); {
			hi := min(len(g.Params), lo+pieceLen-n)
			cur = append(cur, optim.Group{Name: g.Name, Params: g.Params[lo:hi:hi], Grads: g.Grads[lo:hi:hi], Exclude: g.Exclude})
			n += hi - lo
			lo = hi
			if n == pieceLen {
				flush()
			}
		}
	}
	flush()
	u := &updater{pieces: make([]piece, len(groups))}
	for i, g := range groups {
		opt, err := optim.New(s)
		if err != nil {
			return nil, err
		}
		u.pieces[i] = piece{opt: opt, groups: g}
	}
	return u, nil
}

// Step applies one update at rate lr and then sets the gradients to
// zero, for the next step to accumulate into.
func (u *updater) Step(lr float64) {
	tensor.Parallel(len(u.pieces), 1, func(lo, hi int) {
		for _, p := range u.pieces[lo:hi] {
			p.opt.Step(p.groups, lr)
			for _, g := range p.groups {
				clear(g.Grads)
			}
		}
	})
}
