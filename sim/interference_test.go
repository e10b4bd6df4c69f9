package sim

import (
	"errors"
	"math"
	"testing"

	"scaleplan/internal/units"
)

// interferenceCase is two replicas on two nodes, one device each, with a
// forward of 1 s, a backward of D = 1 s and two gradient buckets of 1 GB
// each: bucket 0 is released half-way through the backward and its ring
// all-reduce on two ranks takes C = 1 GB / B over NICs of bandwidth B
// (two steps of S/2, each S/2/B); bucket 1 is released at the backward's
// end.
func interferenceCase(nic units.BytesPerSec, s float64) Config {
	const per = units.GB
	return Config{Nodes: 2, DevicesPerNode: 1, MicroBatch: 1,
		Compute: Compute{PerSample: 2, ForwardFraction: 0.5},
		Memory:  Memory{Gradients: 2 * per},
		Comm:    Comm{Algorithm: Ring, Layers: []units.Bytes{per, per}, Bucket: per, Interference: s},
		Network: Network{NIC: Link{Bandwidth: nic}}}
}

// backwardEnds runs c and returns, for each step, the time from the end
// of the forward (1 s after the step's start) to the end of every rank's
// last backward, failing unless all ranks agree.
func backwardEnds(t *testing.T, c Config) ([]float64, *Result) {
	t.Helper()
	var ends []float64
	var hookErr error
	res, err := runWith(c, func(r *run) {
		r.onStep = func() {
			e := r.ranks[0].bEnd - r.stepStart - 1
			for i := range r.ranks {
				if got := r.ranks[i].bEnd - r.stepStart - 1; got != e {
					hookErr = errors.New("ranks end their backward at different times")
				}
			}
			ends = append(ends, e)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if hookErr != nil {
		t.Fatal(hookErr)
	}
	checkSums(t, res)
	return ends, res
}

// TestInterferenceClosedForm checks the backward's end against the closed
// form D + s·C', C' the time the backward overlaps the exchange, derived
// by hand. Bucket 0's exchange starts at D/2 with D/2 of work left.
//
// Exchange shorter than the rest of the backward (B = 10 GB/s, C = 0.1 s,
// s = 0.2): during it the backward does (1 − s)·C = 0.08 s of work, so it
// ends at D/2 + C + (D/2 − (1 − s)·C) = D + s·C = 1.02 s: C' = C. Bucket 1
// then starts at once: the step is 1 + 1.02 + 0.1 = 2.12 s, of which the
// 0.02 s of slowdown and bucket 1's 0.1 s are comm.
//
// Exchange longer (B = 1 GB/s, C = 1 s): the backward's last D/2 runs at
// 1 − s throughout, ending at D/2 + (D/2)/(1 − s) = 0.5 + 0.625 = 1.125 s
// = D + s·C' with C' = 0.625 s. Bucket 0 ends at 1.5 s and bucket 1 runs
// from there: the step is 1 + 1.5 + 1 = 3.5 s, the slowdown hidden.
func TestInterferenceClosedForm(t *testing.T) {
	for _, tc := range []struct {
		name      string
		nic       units.BytesPerSec
		s         float64
		end, step float64
	}{
		{"shorter", 10 * units.GBps, 0.2, 1.02, 2.12},
		{"longer", 1 * units.GBps, 0.2, 1.125, 3.5},
		{"shorter, off", 10 * units.GBps, 0, 1, 2.1},
		{"longer, off", 1 * units.GBps, 0, 1, 3.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ends, res := backwardEnds(t, interferenceCase(tc.nic, tc.s))
			for i, e := range ends {
				if !near(e, tc.end, 1e-9) {
					t.Errorf("step %d: backward ends %v s after the forward, want %v", i, e, tc.end)
				}
			}
			if !near(float64(res.StepTime), tc.step, 1e-9) {
				t.Errorf("step time %v, want %v", float64(res.StepTime), tc.step)
			}
			// Compute stays the forward and backward at full rate; the
			// slowdown and the exposed exchange are comm.
			b := res.Breakdown
			if !near(float64(b.Compute), 2, 1e-9) || !near(float64(b.Comm), tc.step-2, 1e-9) {
				t.Errorf("compute %v, comm %v; want 2 and %v", float64(b.Compute), float64(b.Comm), tc.step-2)
			}
		})
	}
}

// TestInterferenceOff checks that s = 0 leaves the simulation as it was
// without the model: the backward releases bucket i at t0 + D·f_i and
// ends at t0 + D, the same floating-point sums as before, so results are
// bit-identical; here against the closed form computed the same way.
func TestInterferenceOff(t *testing.T) {
	ends, res := backwardEnds(t, interferenceCase(10*units.GBps, 0))
	for i, e := range ends {
		if e != 1 {
			t.Errorf("step %d: backward ends %v s after the forward, want exactly 1", i, e)
		}
	}
	// 1 s forward, 1 s backward, bucket 1's 0.1 s exposed; the mean over
	// steps rounds.
	if want := 1 + 1 + float64(units.GB)/10e9; !near(float64(res.StepTime), want, 1e-15) {
		t.Errorf("step time %v, want %v", float64(res.StepTime), want)
	}
}

// TestInterferenceMonotone checks that the backward's end and the step
// time do not decrease with s, and that the backward's end grows strictly
// when an exchange overlaps it.
func TestInterferenceMonotone(t *testing.T) {
	for _, nic := range []units.BytesPerSec{10 * units.GBps, units.GBps} {
		prevEnd, prevStep := 0.0, 0.0
		for i := range 10 {
			s := float64(i) / 10
			ends, res := backwardEnds(t, interferenceCase(nic, s))
			e := ends[len(ends)-1]
			if e <= prevEnd || float64(res.StepTime) < prevStep {
				t.Errorf("NIC %v, s = %v: backward end %v, step %v after %v, %v at the smaller s",
					float64(nic), s, e, float64(res.StepTime), prevEnd, prevStep)
			}
			prevEnd, prevStep = e, float64(res.StepTime)
		}
	}
}

// TestInterferenceManyBuckets checks a chain of exchanges back to back
// against the closed form: with n buckets of equal size each taking C,
// released every D/n of work, an exchange is in flight from D/n on
// whenever C ≥ D/(n·(1 − s)), the time a slowed backward takes to release
// the next; its last (n−1)/n·D then runs at 1 − s: it ends at
// D/n + (n−1)/n·D/(1 − s).
func TestInterferenceManyBuckets(t *testing.T) {
	const n, s = 8, 0.25
	per := units.GB / n
	c := interferenceCase(0.625*units.GBps, s)
	c.Comm.Layers = make([]units.Bytes, n)
	for i := range c.Comm.Layers {
		c.Comm.Layers[i] = per
	}
	c.Comm.Bucket = per
	c.Memory.Gradients = units.GB
	// C = per/B = 0.2 s ≥ D/(n·(1 − s)) = 0.1667 s.
	ends, _ := backwardEnds(t, c)
	want := 1.0/n + (n-1.0)/n/(1-s)
	for i, e := range ends {
		if !near(e, want, 1e-9) {
			t.Errorf("step %d: backward ends %v s after the forward, want %v", i, e, want)
		}
	}
}

// TestInterferenceRefused checks that s outside [0, 1) is refused.
func TestInterferenceRefused(t *testing.T) {
	for _, s := range []float64{-0.1, 1, 1.5, math.NaN(), math.Inf(1)} {
		_, err := Run(interferenceCase(units.GBps, s))
		if !errors.Is(err, ErrConfig) {
			t.Errorf("interference %v: error %v, want ErrConfig", s, err)
		}
	}
}
