package sim

import (
	"fmt"
	"testing"

	"scaleplan/internal/units"
)

// pipeline returns a pipelined configuration of S equal stages and M
// micro-batches on one node, with free transfers between stages.
func pipeline(S, M int, sched Schedule) Config {
	return Config{Nodes: 1, DevicesPerNode: S, Stages: S, MicroBatch: 2, Accumulation: M, Schedule: sched,
		Compute: Compute{PerSample: 0.05, Fixed: 0.01},
		Memory:  Memory{Weights: 100 * units.MB, Gradients: 100 * units.MB, Activations: 50 * units.MB, Layers: 64},
		Network: Network{Intra: Link{Bandwidth: 100 * units.GBps}}, Steps: 3}
}

// TestPipelineBubble checks that the bubble emerges from the schedules:
// for S equal stages and M micro-batches its fraction of the step is
// (S−1)/(M+S−1) under GPipe and 1F1B alike, the step takes (M+S−1) times a
// stage's forward and backward, and 1F1B holds fewer activations.
func TestPipelineBubble(t *testing.T) {
	for _, S := range []int{2, 3, 4, 8} {
		for _, M := range []int{1, 2, 4, 7, 16, 32} {
			t.Run(fmt.Sprintf("S=%d/M=%d", S, M), func(t *testing.T) {
				var step [2]units.Seconds
				var act [2]units.Bytes
				for i, sched := range []Schedule{GPipe, OneFOneB} {
					c := pipeline(S, M, sched)
					var rr *run
					res, err := runWith(c, func(r *run) { rr = r })
					if err != nil {
						t.Fatal(err)
					}
					checkSums(t, res)
					want := float64(S-1) / float64(M+S-1)
					if got := float64(res.Breakdown.Bubble / res.StepTime); !near(got, want, 1e-9) {
						t.Errorf("%v: bubble fraction %v, want %v", sched, got, want)
					}
					stage := (2*0.05 + 0.01) / float64(S)
					if !near(float64(res.StepTime), float64(M+S-1)*stage, 1e-9) {
						t.Errorf("%v: step %v, want %v", sched, float64(res.StepTime), float64(M+S-1)*stage)
					}
					for s, k := range rr.ranks {
						if want := InFlight(sched, S, s, M); int(k.peakInf) != want {
							t.Errorf("%v: stage %d had %d micro-batches in flight, want %d", sched, s, k.peakInf, want)
						}
					}
					step[i], act[i] = res.StepTime, res.Memory.Activations
				}
				if !near(float64(step[0]), float64(step[1]), 1e-12) {
					t.Errorf("GPipe step %v, 1F1B %v", step[0], step[1])
				}
				if M > S && !(act[1] < act[0]) {
					t.Errorf("1F1B activations %v, not below GPipe's %v", act[1], act[0])
				}
			})
		}
	}
}

// TestRecompute checks that recomputation costs an extra forward in the
// backward pass and stores fewer activations.
func TestRecompute(t *testing.T) {
	c := pipeline(4, 8, OneFOneB)
	plain, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	c.Recompute = true
	re, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	// forward 1/3, backward 2/3 + 1/3 of a stage's micro-batch time.
	if want := float64(plain.StepTime) * 4 / 3; !near(float64(re.StepTime), want, 1e-9) {
		t.Errorf("step with recomputation %v, want %v", float64(re.StepTime), want)
	}
	// Stage 0 of 1F1B: n = 4 in flight, L_s = 64/4 = 16 layers: (n+1)/4.
	if want := float64(plain.Memory.Activations) * (5.0 / 4) / 4; !near(float64(re.Memory.Activations), want, 1e-12) {
		t.Errorf("activations with recomputation %v, want %v", re.Memory.Activations, units.Bytes(want))
	}
}

// TestPipelineTransfers checks that activations between stages cost their
// transfer time: with one micro-batch, S stages on one node and transfers
// of n bytes at bandwidth B with latency a, the step is S forwards, S
// backwards and 2(S−1) transfers.
func TestPipelineTransfers(t *testing.T) {
	const (
		S   = 4
		B   = 10 * units.GBps
		lat = 5 * units.Microsecond
	)
	c := pipeline(S, 1, GPipe)
	c.Comm.Boundary = 50 * units.MB
	c.Network.Intra = Link{B, lat}
	res, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	checkSums(t, res)
	xfer := float64(lat) + 2*50e6/float64(B)
	stage := (2*0.05 + 0.01) / S
	if want := S*stage + 2*(S-1)*xfer; !near(float64(res.StepTime), want, 1e-9) {
		t.Errorf("step %v, want %v", float64(res.StepTime), want)
	}
	// Every stage but the first sees its activation's transfer exposed,
	// and every stage but the last its gradient's: 2(S−1) transfers over S
	// devices.
	if want := 2 * (S - 1) * xfer / S; !near(float64(res.Breakdown.Comm), want, 1e-9) {
		t.Errorf("exposed communication %v, want %v", float64(res.Breakdown.Comm), want)
	}
}
