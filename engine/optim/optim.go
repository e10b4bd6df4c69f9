package optim

import (
	"errors"
	"fmt"
	"math"
)

// Panic messages for programmer errors.
const (
	errLength    = "optim: params and grads differ in length"
	errGroups    = "optim: number of groups changed between steps"
	errGroupLen  = "optim: group length changed between steps"
	errLR        = "optim: learning rate negative or not finite"
	errStep      = "optim: negative step"
	errInvalid   = "optim: invalid settings: "
	errNilGroups = "optim: no groups"
)

// ErrSettings is wrapped by every error that reports invalid optimizer or
// schedule settings.
var ErrSettings = errors.New("invalid settings")

// Group is one parameter tensor, or any set of parameters that share a
// treatment, seen by an Optimizer as a flat vector. LARS computes one trust
// ratio per group, so each weight tensor of a network should be its own
// group.
type Group struct {
	// Name names the tensor in messages; default "".
	Name string
	// Params holds the parameters w; Step updates them in place.
	Params []float32
	// Grads holds the gradient ∂L/∂w, the same length as Params. Step
	// reads it and never writes it.
	Grads []float32
	// Exclude marks a bias or normalisation parameter: it gets no weight
	// decay and no LARS trust ratio (the skip list of the MLPerf reference).
	// Default false.
	Exclude bool
}

// Optimizer updates parameter groups from their gradients.
//
// An Optimizer keeps per-group state (momentum buffers, moment estimates)
// keyed by the group's index in the slice passed to Step. The state is
// allocated on the first Step; every later Step must pass the same number
// of groups with the same lengths, or Step panics.
type Optimizer interface {
	// Step applies one update with learning rate lr (a value from a
	// Schedule) to every group.
	Step(groups []Group, lr float64)
	// StateLen returns the number of float32 state values held: 0 for
	// plain SGD, one per parameter for momentum SGD and LARS, two for Adam.
	StateLen() int
}

// state holds k float32 slots per group, allocated on first use, and the
// group lengths seen then.
type state struct {
	lens  []int         // group lengths at the first step
	slots [][][]float32 // [group][slot][element]
	steps int           // completed steps
}

// ensure checks groups against the state and allocates k slots per group on
// the first call.
func (s *state) ensure(groups []Group, k int) {
	if len(groups) == 0 {
		panic(errNilGroups)
	}
	for _, g := range groups {
		if len(g.Params) != len(g.Grads) {
			panic(errLength)
		}
	}
	if s.lens == nil {
		s.lens = make([]int, len(groups))
		s.slots = make([][][]float32, len(groups))
		for i, g := range groups {
			s.lens[i] = len(g.Params)
			s.slots[i] = make([][]float32, k)
			for j := range k {
				s.slots[i][j] = make([]float32, len(g.Params))
			}
		}
		return
	}
	if len(groups) != len(s.lens) {
		panic(errGroups)
	}
	for i, g := range groups {
		if len(g.Params) != s.lens[i] {
			panic(errGroupLen)
		}
	}
}

// size returns the number of state values held.
func (s *state) size() int {
	n := 0
	for _, g := range s.slots {
		for _, v := range g {
			n += len(v)
		}
	}
	return n
}

func checkLR(lr float64) {
	if !(lr >= 0) || math.IsInf(lr, 1) {
		panic(errLR)
	}
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrSettings}, args...)...)
}

// sqnorm returns Σ x_i² accumulated in float64.
func sqnorm(x []float32) float64 {
	var s float64
	for _, v := range x {
		f := float64(v)
		s += f * f
	}
	return s
}
