package optim

import (
	"errors"
	"math"
	"strings"
	"testing"
)

type point struct {
	s  int
	lr float64
}

// TestSchedules checks each schedule against values worked out by hand at
// steps chosen around the warm-up boundary and the decay points.
func TestSchedules(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sched interface {
			Schedule
			Validate() error
		}
		want []point
		tol  float64
	}{
		{
			// f(s) = (s+1)/4
			name:  "constant",
			sched: Constant{Base: 0.8, Warmup: Warmup{Steps: 4}},
			want:  []point{{0, 0.2}, {1, 0.4}, {2, 0.6}, {3, 0.8}, {4, 0.8}, {1000, 0.8}},
			tol:   1e-15,
		},
		{
			name:  "constant-no-warmup",
			sched: Constant{Base: 0.1},
			want:  []point{{0, 0.1}, {7, 0.1}},
			tol:   1e-15,
		},
		{
			// f(0) = 0.5 + 0.5·1/2 = 0.75; ×0.1 every 3 steps
			name:  "step",
			sched: StepDecay{Base: 0.1, Warmup: Warmup{Steps: 2, StartFactor: 0.5}, Every: 3, Gamma: 0.1},
			want:  []point{{0, 0.075}, {1, 0.1}, {2, 0.1}, {3, 0.01}, {5, 0.01}, {6, 0.001}, {9, 0.0001}},
			tol:   1e-15,
		},
		{
			// Mask R-CNN shape (seed 000): warm-up then ×0.1 at two steps.
			// f(0) = 0.25 + 0.75/4 = 0.4375
			name:  "multistep",
			sched: MultiStep{Base: 0.06, Warmup: Warmup{Steps: 4, StartFactor: 0.25}, Milestones: []int{5, 8}, Gamma: 0.1},
			want:  []point{{0, 0.02625}, {1, 0.0375}, {3, 0.06}, {4, 0.06}, {5, 0.006}, {7, 0.006}, {8, 0.0006}, {100, 0.0006}},
			tol:   1e-15,
		},
		{
			// 0.25^(s/2)
			name:  "exponential",
			sched: Exponential{Base: 1, Every: 2, Gamma: 0.25},
			want:  []point{{0, 1}, {1, 0.5}, {2, 0.25}, {3, 0.125}, {6, 0.015625}},
			tol:   1e-15,
		},
		{
			// warm-up f(0) = 1/2; then 0.5^(s/1) times f
			name:  "exponential-warmup",
			sched: Exponential{Base: 1, Warmup: Warmup{Steps: 2}, Every: 1, Gamma: 0.5},
			want:  []point{{0, 0.5}, {1, 0.5}, {2, 0.25}},
			tol:   1e-15,
		},
		{
			// p = (s − 1)/4 after 2 warm-up steps: (1 + cos πp)/2
			name:  "cosine",
			sched: Cosine{Base: 1, Warmup: Warmup{Steps: 2}, Total: 6},
			want: []point{{0, 0.5}, {1, 1}, {2, 0.8535533905932737}, {3, 0.5},
				{4, 0.14644660940672624}, {5, 0}, {9, 0}},
			tol: 1e-15,
		},
		{
			// end 0.1: 0.1 + 0.9·(1 + cos πs/4)/2 with p = (s+1)/4
			name:  "cosine-end",
			sched: Cosine{Base: 1, Total: 4, End: 0.1},
			want:  []point{{0, 0.1 + 0.9*0.8535533905932737}, {1, 0.55}, {3, 0.1}},
			tol:   1e-15,
		},
		{
			// w = 4, T = 12: warm-up 2·(s+1)/4, then 2·(1 − (s − 3)/8)²
			name:  "poly",
			sched: Polynomial{Base: 2, Warmup: Warmup{Steps: 4}, Total: 12, Power: 2},
			want: []point{{0, 0.5}, {2, 1.5}, {3, 2}, {4, 1.53125}, {7, 0.5},
				{10, 0.03125}, {11, 0}, {50, 0}},
			tol: 1e-15,
		},
		{
			// power 1 with an end rate: 0.1 + 0.9·(1 − (s+1)/10)
			name:  "poly-linear-end",
			sched: Polynomial{Base: 1, Total: 10, End: 0.1, Power: 1},
			want:  []point{{0, 0.91}, {4, 0.55}, {8, 0.19}, {9, 0.1}},
			tol:   1e-15,
		},
		{
			// Seed 000, MLPerf v0.7 on 8x V100: base 7.4, 2 warm-up epochs
			// of 770 steps (1,281,167 images / global batch 1664, rounded
			// up), 37 epochs. w = 1540, T = 28490, T − w = 26950.
			// s = 15014: p = 13475/26950 = 1/2, so 1e-4 + (7.4 − 1e-4)/4.
			name:  "mlperf-v0.7",
			sched: MLPerfPolynomial(7.4, 37*770, 2*770),
			want: []point{{0, 7.4 / 1540}, {769, 7.4 / 2}, {1538, 7.4 * 1539 / 1540}, {1539, 7.4},
				{1540, 1e-4 + (7.4-1e-4)*math.Pow(1-1.0/26950, 2)}, {15014, 1.850075},
				{28489, 1e-4}, {30000, 1e-4}},
			tol: 1e-12,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.sched.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			for _, p := range tc.want {
				if got := tc.sched.LR(p.s); math.Abs(got-p.lr) > tc.tol*math.Max(1, p.lr) {
					t.Errorf("LR(%d) = %.17g, want %.17g", p.s, got, p.lr)
				}
			}
		})
	}
}

// TestPolynomialMonotone checks that warm-up rises and decay falls, with no
// jump at the boundary larger than one warm-up increment.
func TestPolynomialMonotone(t *testing.T) {
	p := MLPerfPolynomial(5, 72*770, 5*770)
	prev := 0.0
	for s := range p.Total {
		lr := p.LR(s)
		if s < p.Warmup.Steps && lr <= prev {
			t.Fatalf("warm-up not rising at step %d: %g after %g", s, lr, prev)
		}
		if s >= p.Warmup.Steps && lr > prev {
			t.Fatalf("decay not falling at step %d: %g after %g", s, lr, prev)
		}
		prev = lr
	}
}

func TestNewSchedule(t *testing.T) {
	const spe = 10
	for _, tc := range []struct {
		s    ScheduleSettings
		want Schedule
	}{
		{ScheduleSettings{Kind: "constant", Base: 0.1, WarmupEpochs: 0.5}, Constant{Base: 0.1, Warmup: Warmup{Steps: 5}}},
		{ScheduleSettings{Kind: "step", Base: 0.1, DecayEpochs: 3, Gamma: 0.1}, StepDecay{Base: 0.1, Every: 30, Gamma: 0.1}},
		{ScheduleSettings{Kind: "multistep", Base: 0.06, WarmupEpochs: 0.25, StartFactor: 0.1, MilestoneEpochs: []float64{3, 4}, Gamma: 0.1},
			MultiStep{Base: 0.06, Warmup: Warmup{Steps: 3, StartFactor: 0.1}, Milestones: []int{30, 40}, Gamma: 0.1}},
		{ScheduleSettings{Kind: "exponential", Base: 1, DecayEpochs: 1, Gamma: 0.9}, Exponential{Base: 1, Every: 10, Gamma: 0.9}},
		{ScheduleSettings{Kind: "cosine", Base: 1, Epochs: 5, WarmupEpochs: 1, End: 0.01}, Cosine{Base: 1, Warmup: Warmup{Steps: 10}, Total: 50, End: 0.01}},
		{ScheduleSettings{Kind: "poly", Base: 7.4, Epochs: 37, WarmupEpochs: 2, End: 1e-4, Power: 2}, MLPerfPolynomial(7.4, 370, 20)},
	} {
		got, err := NewSchedule(tc.s, spe)
		if err != nil {
			t.Errorf("NewSchedule(%+v): %v", tc.s, err)
			continue
		}
		for s := range 60 {
			if g, w := got.LR(s), tc.want.LR(s); g != w {
				t.Errorf("%s: LR(%d) = %g, want %g", tc.s.Kind, s, g, w)
				break
			}
		}
	}
	for _, tc := range []struct {
		s    ScheduleSettings
		spe  int
		want string
	}{
		{ScheduleSettings{Kind: "onecycle", Base: 1}, spe, `unknown schedule "onecycle"`},
		{ScheduleSettings{Kind: "constant", Base: 0}, spe, "base learning rate 0"},
		{ScheduleSettings{Kind: "constant", Base: math.Inf(1)}, spe, "base learning rate +Inf"},
		{ScheduleSettings{Kind: "constant", Base: 1}, 0, "steps per epoch 0"},
		{ScheduleSettings{Kind: "constant", Base: 1, WarmupEpochs: -1}, spe, "warm-up epochs -1"},
		{ScheduleSettings{Kind: "constant", Base: 1, StartFactor: 2}, spe, "start factor 2"},
		{ScheduleSettings{Kind: "step", Base: 1, Gamma: 0.1}, spe, "period 0 steps"},
		{ScheduleSettings{Kind: "step", Base: 1, DecayEpochs: 1, Gamma: 0}, spe, "gamma 0"},
		{ScheduleSettings{Kind: "multistep", Base: 1, MilestoneEpochs: []float64{4, 3}, Gamma: 0.1}, spe, "not strictly increasing"},
		{ScheduleSettings{Kind: "exponential", Base: 1, DecayEpochs: 1, Gamma: 1.5}, spe, "gamma 1.5"},
		{ScheduleSettings{Kind: "cosine", Base: 1, Epochs: 1, WarmupEpochs: 1}, spe, "total steps 10 not above warm-up steps 10"},
		{ScheduleSettings{Kind: "cosine", Base: 1, Epochs: 2, End: 2}, spe, "end learning rate 2"},
		{ScheduleSettings{Kind: "poly", Base: 1, Epochs: 2}, spe, "power 0"},
	} {
		_, err := NewSchedule(tc.s, tc.spe)
		if err == nil || !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewSchedule(%+v, %d) = %v, want error containing %q", tc.s, tc.spe, err, tc.want)
		}
	}
}

func TestEpochsToSteps(t *testing.T) {
	for _, tc := range []struct {
		e    float64
		spe  int
		want int
	}{{2, 770, 1540}, {0.5, 3, 2}, {0.25, 10, 3}, {0, 10, 0}, {37, 770, 28490}} {
		if got := EpochsToSteps(tc.e, tc.spe); got != tc.want {
			t.Errorf("EpochsToSteps(%g, %d) = %d, want %d", tc.e, tc.spe, got, tc.want)
		}
	}
}

func TestScheduleNegativeStep(t *testing.T) {
	mustPanic(t, "negative step", errStep, func() { Constant{Base: 1}.LR(-1) })
}
