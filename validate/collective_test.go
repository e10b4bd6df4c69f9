package validate

import (
	"math"
	"strings"
	"testing"

	"scaleplan/internal/units"
	"scaleplan/sim"
)

// TestCompareCollectivesClosedForm predicts all-reduce tests of 2, 4 and 8
// ranks on one DGX H200 node against the closed form of a ring over its
// NVLink switch with NCCL's transport, 2(p−1)(α + S/(pβ)): α the link's
// 2 µs and the transport's 5 µs of overhead, β 0.8 of 450 GB/s (the
// catalogue's node and transport; TestCompareMeasuredNodeClosedForm uses
// the same). Each measured time is 1.1 times the closed form, so every
// error is 1/1.1 − 1.
func TestCompareCollectivesClosedForm(t *testing.T) {
	cat, _ := defaults(t)
	const alpha, beta = 7e-6, 0.8 * 450e9
	sizes := []units.Bytes{8, 1 << 20, 1 << 30}
	for _, p := range []int{2, 4, 8} {
		ring := func(s units.Bytes) float64 { return 2 * float64(p-1) * (alpha + float64(s)/(float64(p)*beta)) }
		m := MeasuredCollective{Source: "t.log:3", Device: "NVIDIA H200", Ranks: p, Nodes: 1, System: "dgx-h200", Sizes: sizes, Lines: []int{10, 11, 12}}
		for _, s := range sizes {
			m.Times = append(m.Times, units.Seconds(1.1*ring(s)))
		}
		comps, err := CompareCollectives(cat, []MeasuredCollective{m})
		if err != nil {
			t.Fatalf("%d ranks: %v", p, err)
		}
		c := comps[0]
		if c.SystemName != "dgx-h200" || c.Exchange != "nccl" || c.DevicesPerNode != p || len(c.Rows) != len(sizes) {
			t.Fatalf("%d ranks: %+v", p, c)
		}
		bus := 2 * float64(p-1) / float64(p)
		for i, r := range c.Rows {
			s := sizes[i]
			if math.Abs(float64(r.Predicted)/ring(s)-1) > 1e-9 || math.Abs(r.Error-(1/1.1-1)) > 1e-9 || r.Line != 10+i {
				t.Errorf("%d ranks, %v: predicted %v, error %v, line %d; want %v, %v, %d", p, s, float64(r.Predicted), r.Error, r.Line, ring(s), 1/1.1-1, 10+i)
			}
			if math.Abs(float64(r.PredictedBusBW)/(float64(s)/ring(s)*bus)-1) > 1e-9 || math.Abs(float64(r.MeasuredBusBW)/(float64(s)/(1.1*ring(s))*bus)-1) > 1e-9 {
				t.Errorf("%d ranks, %v: bus bandwidth measured %v, predicted %v", p, s, r.MeasuredBusBW, r.PredictedBusBW)
			}
		}
		if math.Abs(c.MAE-(1-1/1.1)) > 1e-9 {
			t.Errorf("%d ranks: MAE %v, want %v", p, c.MAE, 1-1/1.1)
		}
	}
	// Two nodes: the fabric's transport joins the exchange; without a node
	// count, as many ranks on each node as it holds.
	m := MeasuredCollective{Ranks: 16, System: "dgx-h200", Algorithm: sim.Hierarchical, Sizes: sizes, Times: []units.Seconds{1e-5, 1e-4, 1e-2}}
	comps, err := CompareCollectives(cat, []MeasuredCollective{m})
	if err != nil {
		t.Fatal(err)
	}
	if c := comps[0]; c.Exchange != "nccl, verbs" || c.DevicesPerNode != 8 || c.Rows[0].Line != 0 {
		t.Errorf("two nodes: exchange %q, %d a node, line %d", c.Exchange, c.DevicesPerNode, c.Rows[0].Line)
	}
}

// TestCompareCollectivesOps predicts the other ops of nccl-tests on one
// DGX H200 node of 8 with the ring's schedules, against their closed forms
// with TestCompareCollectivesClosedForm's α and β (S as nccl-tests counts
// it): all_gather and reduce_scatter (p−1)(α + S/(pβ)), alltoall α +
// (p−1)/p·S/β, sendrecv α + S/β, and bus bandwidths S/T times (p−1)/p,
// (p−1)/p and 1 (nccl-tests' doc/PERFORMANCE.md).
func TestCompareCollectivesOps(t *testing.T) {
	cat, _ := defaults(t)
	const alpha, beta, p = 7e-6, 0.8 * 450e9, 8
	for _, tc := range []struct {
		op   string
		form func(s float64) float64
		bus  float64
	}{
		{"all_gather", func(s float64) float64 { return (p - 1) * (alpha + s/(p*beta)) }, 7.0 / 8},
		{"reduce_scatter", func(s float64) float64 { return (p - 1) * (alpha + s/(p*beta)) }, 7.0 / 8},
		{"alltoall", func(s float64) float64 { return alpha + (p-1)*s/(p*beta) }, 7.0 / 8},
		{"sendrecv", func(s float64) float64 { return alpha + s/beta }, 1},
	} {
		S := units.Bytes(1 << 26)
		m := MeasuredCollective{Source: "t.log:3", Op: tc.op, Ranks: p, System: "dgx-h200", Sizes: []units.Bytes{S}, Times: []units.Seconds{1e-3}}
		comps, err := CompareCollectives(cat, []MeasuredCollective{m})
		if err != nil {
			t.Fatalf("%s: %v", tc.op, err)
		}
		r := comps[0].Rows[0]
		want := tc.form(float64(S))
		if math.Abs(float64(r.Predicted)/want-1) > 1e-9 || math.Abs(float64(r.PredictedBusBW)/(float64(S)/want*tc.bus)-1) > 1e-9 {
			t.Errorf("%s: predicted %v s at %v busbw, want %v s", tc.op, float64(r.Predicted), r.PredictedBusBW, want)
		}
	}
}

// TestCompareCollectivesRefuses checks the tests CompareCollectives cannot
// place or predict, each an error naming its source and the reason.
// TestCompareCollectivesHostTime checks nccl-tests' host time per call:
// one thread driving 8 GPUs enqueues 8 calls an iteration, each a kernel
// launch (0.9 µs, NVIDIA's CUDA Graphs blog) and NCCL's enqueue (4 µs,
// XLA's estimates 5 − 1 µs), so a small all-reduce is timed at 8 × 4.9 =
// 39.2 µs; a large one at the devices' time, as with a process a device.
func TestCompareCollectivesHostTime(t *testing.T) {
	cat, _ := defaults(t)
	if got := float64(NCCLTestsHostTime(8)); math.Abs(got-39.2e-6) > 1e-12 {
		t.Fatalf("host time of 8 GPUs a thread %v, want 39.2 µs", got)
	}
	sizes := []units.Bytes{8, 1 << 30}
	m := MeasuredCollective{Ranks: 8, System: "dgx-h200", Algorithm: sim.NCCL, Sizes: sizes, Times: []units.Seconds{40e-6, 5e-3}}
	one, err := CompareCollectives(cat, []MeasuredCollective{m})
	if err != nil {
		t.Fatal(err)
	}
	m.GPUsPerThread = 8
	eight, err := CompareCollectives(cat, []MeasuredCollective{m})
	if err != nil {
		t.Fatal(err)
	}
	dev := one[0].Rows
	if !(dev[0].Predicted > 4.9e-6 && dev[0].Predicted < 39.2e-6) {
		t.Fatalf("device time of 8 B %v: want between one call's host time (4.9 µs) and eight's (39.2 µs)", dev[0].Predicted)
	}
	if got := eight[0].Rows; math.Abs(float64(got[0].Predicted)-39.2e-6) > 1e-12 || got[1].Predicted != dev[1].Predicted {
		t.Errorf("8 GPUs a thread: %v at 8 B, %v at 1 GiB; want 39.2 µs and the devices' %v", got[0].Predicted, got[1].Predicted, dev[1].Predicted)
	}
}

func TestCompareCollectivesRefuses(t *testing.T) {
	cat, _ := defaults(t)
	ok := MeasuredCollective{Source: "x.log:5", Ranks: 8, System: "dgx-h200", Sizes: []units.Bytes{1 << 20}, Times: []units.Seconds{1e-4}}
	for _, tc := range []struct {
		name string
		edit func(*MeasuredCollective)
		want string
	}{
		{"one rank", func(m *MeasuredCollective) { m.Ranks = 1 }, "1 ranks: a collective needs two or more"},
		{"unknown op", func(m *MeasuredCollective) { m.Op = "reduce" }, `op "reduce": want one of all_reduce, reduce_scatter`},
		{"no system", func(m *MeasuredCollective) { m.System = "" }, "no system"},
		{"unknown system", func(m *MeasuredCollective) { m.System = "dgx-h300" }, `unknown system "dgx-h300"`},
		{"unknown device", func(m *MeasuredCollective) { m.Device = "NVIDIA X9" }, `device "NVIDIA X9" is not in the catalogue`},
		{"other device", func(m *MeasuredCollective) { m.Device = "NVIDIA H100 80GB HBM3" }, "measured on h100-sxm5-80gb, but system dgx-h200's nodes hold h200"},
		{"uneven nodes", func(m *MeasuredCollective) { m.Nodes = 3 }, "8 ranks on 3 nodes: not as many on each"},
		{"too many a node", func(m *MeasuredCollective) { m.Ranks, m.Nodes = 16, 1 }, "16 ranks, 16 a node: system dgx-h200's nodes hold 8 devices"},
		{"too many nodes", func(m *MeasuredCollective) { m.Ranks = 8 * 200 }, "1600 devices need 200 nodes of 8; system dgx-h200 has 127"},
		{"sizes and times", func(m *MeasuredCollective) { m.Times = nil }, "1 sizes, 0 times and 0 lines"},
		{"zero time", func(m *MeasuredCollective) { m.Times = []units.Seconds{0} }, "want both above 0"},
		{"parameter server", func(m *MeasuredCollective) { m.Algorithm = sim.ParameterServer }, "ps is not a collective"},
		{"negative devices a thread", func(m *MeasuredCollective) { m.GPUsPerThread = -1 }, "-1 devices a thread: want 0 to the 8 ranks"},
		{"more devices a thread than ranks", func(m *MeasuredCollective) { m.GPUsPerThread = 9 }, "9 devices a thread: want 0 to the 8 ranks"},
	} {
		m := ok
		tc.edit(&m)
		_, err := CompareCollectives(cat, []MeasuredCollective{m})
		if err == nil || !strings.HasPrefix(err.Error(), "x.log:5: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want x.log:5: ... %s", tc.name, err, tc.want)
		}
	}
}

// TestCompareCollectivesP2PDisable: a test that ran with
// NCCL_P2P_DISABLE=1 (MeasuredCollective.NCCLP2PDisable, validate's
// --nccl-p2p-disable) is predicted through host memory at NCCL's
// shared-memory rate B, the node's SHMRate: a large ring all-reduce over p
// devices of a DGX A100 against the closed form
// 2(p−1)/p·S/B, to 1 %, B times the node's SHMCrossShare where the ring
// crosses its two sockets (eight devices), where the same test without
// the flag runs over NVLink at least 20 times faster; the exchange
// column says so.
func TestCompareCollectivesP2PDisable(t *testing.T) {
	cat, _ := defaults(t)
	const S = units.GiB
	node := cat.Nodes["dgx-a100"]
	for _, p := range []int{2, 4, 8} {
		shm := float64(node.SHMRate())
		if p > node.Devices/node.CPU.Sockets {
			shm *= node.SHMCrossShare()
		}
		want := 2 * float64(p-1) / float64(p) * float64(S) / shm
		m := MeasuredCollective{Ranks: p, Nodes: 1, System: "dgx-a100", Sizes: []units.Bytes{S}, Times: []units.Seconds{units.Seconds(want)}}
		nv, err := CompareCollectives(cat, []MeasuredCollective{m})
		if err != nil {
			t.Fatalf("%d ranks: %v", p, err)
		}
		m.NCCLP2PDisable = true
		comps, err := CompareCollectives(cat, []MeasuredCollective{m})
		if err != nil {
			t.Fatalf("%d ranks, P2P disabled: %v", p, err)
		}
		c := comps[0]
		if got := float64(c.Rows[0].Predicted); math.Abs(got/want-1) > 0.01 || c.MAE > 0.01 {
			t.Errorf("%d ranks, P2P disabled: %v s, error %.3f; want %v s", p, got, c.MAE, want)
		}
		if !strings.HasSuffix(c.Exchange, "over shm") || strings.Contains(nv[0].Exchange, "shm") {
			t.Errorf("%d ranks: exchange %q with the flag, %q without; want only the first over shm", p, c.Exchange, nv[0].Exchange)
		}
		if float64(c.Rows[0].Predicted) < 20*float64(nv[0].Rows[0].Predicted) {
			t.Errorf("%d ranks: %v s through host memory, %v s over NVLink; want at least 20 times slower", p, float64(c.Rows[0].Predicted), float64(nv[0].Rows[0].Predicted))
		}
	}
}
