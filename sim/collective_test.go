package sim

import (
	"errors"
	"math"
	"testing"

	"scaleplan/internal/units"
)

// TestAllReduceTimeRing checks AllReduceTime against the closed form of a
// ring all-reduce of S bytes over p ranks whose links each carry β with
// latency α: 2(p−1) steps of S/p bytes, 2(p−1)(α + S/(pβ)).
func TestAllReduceTimeRing(t *testing.T) {
	const alpha, beta = 2e-6, 100e9
	for _, p := range []int{2, 4, 8} {
		for _, S := range []units.Bytes{1 << 10, 1 << 20, 1 << 30} {
			c := Config{Nodes: 1, DevicesPerNode: p, Network: Network{Intra: Link{Bandwidth: beta, Latency: alpha}}, Comm: Comm{Algorithm: Ring}}
			got, err := AllReduceTime(c, S)
			if err != nil {
				t.Fatal(err)
			}
			want := 2 * float64(p-1) * (alpha + float64(S)/(float64(p)*beta))
			if math.Abs(float64(got)/want-1) > 1e-9 {
				t.Errorf("p %d, S %v: %v, want %v", p, S, float64(got), want)
			}
		}
	}
}

// TestAllReduceTimeRefuses checks the configurations AllReduceTime refuses.
func TestAllReduceTimeRefuses(t *testing.T) {
	ok := Config{Nodes: 1, DevicesPerNode: 2, Network: Network{Intra: Link{Bandwidth: 1e9, Latency: 1e-6}}}
	for name, tc := range map[string]struct {
		c Config
		s units.Bytes
	}{
		"parameter server": {Config{Nodes: 2, DevicesPerNode: 1, Comm: Comm{Algorithm: ParameterServer, Servers: 1}}, 1},
		"no bytes":         {ok, 0},
		"no nodes":         {Config{DevicesPerNode: 2}, 1},
	} {
		if _, err := AllReduceTime(tc.c, tc.s); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
}

// TestCollectiveTimeOps checks CollectiveTime of each op against its
// closed form on one node of p ranks with ring schedules (nccl-tests'
// sizes: S the whole buffer; send/recv S from each rank to the next):
// reduce-scatter and all-gather (p−1)(α + S/(pβ)), broadcast a chain of
// C+p−2 ticks of α + c/β (C = ⌈S/512 KiB⌉), all-to-all α + (p−1)/p·S/β
// and send/recv α + S/β.
func TestCollectiveTimeOps(t *testing.T) {
	const alpha, beta = 2e-6, 100e9
	const p = 4
	for _, S := range []units.Bytes{1 << 10, 1 << 20, 1 << 30} {
		s := float64(S)
		C := math.Max(1, math.Ceil(s/(512*1024)))
		want := map[Op]float64{
			OpAllReduce:     2 * (p - 1) * (alpha + s/(p*beta)),
			OpReduceScatter: (p - 1) * (alpha + s/(p*beta)),
			OpAllGather:     (p - 1) * (alpha + s/(p*beta)),
			OpBroadcast:     (C + p - 2) * (alpha + s/C/beta),
			OpAllToAll:      alpha + (p-1)*s/(p*beta),
			OpSendRecv:      alpha + s/beta,
		}
		c := Config{Nodes: 1, DevicesPerNode: p, Network: Network{Intra: Link{Bandwidth: beta, Latency: alpha}}}
		for op, w := range want {
			got, err := CollectiveTime(c, op, S)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(float64(got)/w-1) > 1e-9 {
				t.Errorf("%v of %v: %v, want %v", op, S, float64(got), w)
			}
		}
	}
}

// TestCollectiveTimeNCCL checks the NCCL exchange with ring and Simple
// fixed on one NVLink node of 8 against NCCL v2.30.7's constants
// (tuning.cc: ring Simple base 8.4 µs, NVLink hop 3.4 µs): 8.4 µs +
// 14·3.4 µs + 14/8·S/β for an all-reduce; and that the names of the
// overrides are checked.
func TestCollectiveTimeNCCL(t *testing.T) {
	const beta = 100e9
	c := Config{Nodes: 1, DevicesPerNode: 8, Network: Network{Intra: Link{Bandwidth: beta, Latency: 1e-3}},
		Comm: Comm{Algorithm: NCCL, NCCLAlgo: "ring", NCCLProto: "simple"}}
	S := units.Bytes(1 << 28)
	got, err := CollectiveTime(c, OpAllReduce, S)
	if err != nil {
		t.Fatal(err)
	}
	want := (8.4+14*3.4)*1e-6 + 14.0/8*float64(S)/beta
	if math.Abs(float64(got)/want-1) > 1e-9 {
		t.Errorf("nccl ring/simple: %v, want %v", float64(got), want)
	}
	auto := c
	auto.Comm.NCCLAlgo, auto.Comm.NCCLProto = "", ""
	small, err := CollectiveTime(auto, OpAllReduce, 8)
	if err != nil || !(small < 30e-6) {
		t.Errorf("nccl auto, 8 B: %v (%v), want under 30 µs (LL: 6.6 + 14·0.6 µs = 15 µs)", small, err)
	}
	for _, bad := range []Comm{{Algorithm: NCCL, NCCLAlgo: "rings"}, {Algorithm: NCCL, NCCLProto: "LL"}} {
		c.Comm = bad
		if _, err := CollectiveTime(c, OpAllReduce, S); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", bad, err)
		}
	}
	if _, err := CollectiveTime(c, Op(9), S); !errors.Is(err, ErrConfig) {
		t.Errorf("op 9: %v", err)
	}
	for i, n := range opNames {
		if o, err := ParseOp(n); err != nil || o != Op(i) || netsimOpName(o) != n {
			t.Errorf("op %q: %v, %v, netsim names it %q", n, o, err, netsimOpName(o))
		}
	}
}

// TestRunNCCL: a training step whose gradient exchange is NCCL's, ring
// and Simple fixed, on one NVLink node of 8: with NoOverlap the exposed
// communication is one all-reduce of the gradient, NCCL v2.30.7's 8.4 µs
// base + 14 hops of 3.4 µs + 14/8·S/β.
func TestRunNCCL(t *testing.T) {
	const S, beta = 100 * units.MB, 100e9
	c := Config{Nodes: 1, DevicesPerNode: 8, MicroBatch: 32, Compute: Compute{PerSample: 1e-3},
		Memory: Memory{Gradients: S}, Comm: Comm{Algorithm: NCCL, NCCLAlgo: "ring", NCCLProto: "simple", Bucket: S, NoOverlap: true},
		Network: Network{Intra: Link{Bandwidth: beta, Latency: 1e-3}}}
	res, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	want := (8.4+14*3.4)*1e-6 + 14.0/8*float64(S)/beta
	if math.Abs(float64(res.Breakdown.Comm)/want-1) > 1e-9 {
		t.Errorf("exposed communication %v, want %v", float64(res.Breakdown.Comm), want)
	}
}
