package scenarios

import (
	"math"
	"strings"
	"testing"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/sim"
)

// commScenario is ResNet-50 on DGX H100 nodes with synthetic input (the
// loader costs nothing), so that a step differs between device counts by
// its exchange alone.
const commScenario = `name: comm
system: dgx-h100
recipe: mlperf-v0.7-resnet50
precision: fp16
batch_per_device: 64
parallelism: {allreduce: ring}
input: {storage: synthetic}
sweep: {devices: [2, 8]}
`

// stepAt simulates the scenario at its first point with devices devices.
func stepAt(t *testing.T, r *Resolved, devices int) units.Seconds {
	t.Helper()
	for _, p := range r.Points() {
		if p.Devices != devices {
			continue
		}
		c, err := r.Build(p)
		if err != nil {
			t.Fatal(err)
		}
		c.Steps = 3
		res, err := sim.Run(c)
		if err != nil {
			t.Fatal(err)
		}
		return res.StepTime
	}
	t.Fatalf("no point of %d devices", devices)
	return 0
}

// TestCommEntrySetsExchange checks that a comm entry's t(p) = t_fixed +
// r(p)·t_comm is what the simulated step gains between two device
// counts of one node: with a throughput law measured on one device and
// synthetic input, the exchange is one ring all-reduce after the
// backward pass, so
//
//	step(8) − step(2) = (r(8) − r(2))·t_comm + 2·(8 − 2)·L,
//
// r(p) = 2(p−1)/p, L the latency of a hop inside the node (the NVLink's
// 2 us and NCCL's per-message overhead); without the comm entry the
// exchange overlaps the backward pass and the difference is another.
func TestCommEntrySetsExchange(t *testing.T) {
	const tComm = 6 * units.Millisecond
	thr := "throughput:\n  - {model: resnet50, device: h100-sxm5-80gb, devices: 1, precision: fp16, v0: 3000, t: 5 ms, r2: 0.99, points: 3}\n"
	comm := "comm:\n  - {model: resnet50, device: h100-sxm5-80gb, precision: fp16, counts: [1, 2, 4, 8], t_fixed: 5 ms, t_comm: 6 ms}\n"
	with := writeCalibrations(t, thr+comm)
	without := writeCalibrations(t, thr)
	load := func(files []CalibrationFile) *Resolved {
		r, err := Parse(strings.NewReader(commScenario), "comm.yaml", Options{Calibrations: files})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := load(with)
	if r.Comm == nil || r.CommBy != with[0].Path {
		t.Fatalf("comm entry not picked: %+v, %q", r.Comm, r.CommBy)
	}
	ring := func(p float64) float64 { return 2 * (p - 1) / p }
	c, err := r.Build(r.Points()[0])
	if err != nil {
		t.Fatal(err)
	}
	lat := float64(c.Network.Intra.Latency)
	want := (ring(8)-ring(2))*float64(tComm) + 2*(8-2)*lat
	got := float64(stepAt(t, r, 8) - stepAt(t, r, 2))
	if math.Abs(got-want) > 1e-3*want {
		t.Errorf("with comm: step(8) − step(2) = %v, want (r(8) − r(2))·t_comm + 12·L = %v within 0.1%%", units.Seconds(got), units.Seconds(want))
	}
	// Through host memory the node's link bandwidth does not carry the
	// exchange, so no link bandwidth can reproduce the entry: refused.
	noP2P := load(with)
	noP2P.Parallelism.NCCLP2PDisable = true
	if _, err := noP2P.Build(noP2P.Points()[0]); err == nil || !strings.Contains(err.Error(), "exchange through host memory") {
		t.Errorf("comm entry with nccl_p2p_disable: %v, want it refused", err)
	}
	r0 := load(without)
	got0 := float64(stepAt(t, r0, 8) - stepAt(t, r0, 2))
	if math.Abs(got0-want) <= 0.05*want {
		t.Errorf("without comm: step(8) − step(2) = %v, also (r(8) − r(2))·t_comm = %v: the test cannot tell", units.Seconds(got0), units.Seconds(want))
	}
}

// TestApplyFabric checks which levels a fabric calibration sets: intra
// where a node runs more than one device, inter where there is more than
// one node, an entry naming a transport only over that transport, and
// the figures as SetFabric puts them (inter: the NIC's bandwidth, the
// whole hop latency in FabricLatency, efficiency 1, overhead 0).
func TestApplyFabric(t *testing.T) {
	files := writeCalibrations(t, "fabric:\n"+
		"  - {system: dgx-h100, level: intra, bandwidth: 200 GB/s, latency: 3 us, algorithm: ring, tests: 1, sizes: 16}\n"+
		"  - {system: dgx-h100, level: inter, transport: verbs, bandwidth: 12 GB/s, latency: 7 us, algorithm: ring, tests: 1, sizes: 16}\n")
	cat, err := hw.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ranks, nodes int
		transport    string
		want         string
	}{
		{8, 1, "verbs", "intra from " + files[0].Path},
		{16, 2, "verbs", "intra from " + files[0].Path + ", inter from " + files[0].Path},
		{16, 2, "ipoib", "intra from " + files[0].Path},
		{2, 2, "verbs", "inter from " + files[0].Path},
	} {
		c := sim.Config{Nodes: tc.nodes, DevicesPerNode: tc.ranks / tc.nodes}
		p := Point{Devices: tc.ranks, Nodes: tc.nodes, DevicesPerNode: tc.ranks / tc.nodes, Replicas: tc.ranks, BatchPerDevice: 1, GlobalBatch: tc.ranks}
		inter, intra, err := Network(cat, "dgx-h100", Parallelism{Transport: tc.transport}, &c, p)
		if err != nil {
			t.Fatal(err)
		}
		got := FabricText(ApplyFabric(files, "dgx-h100", inter, intra, &c.Network, p))
		if got != tc.want {
			t.Errorf("%d ranks on %d nodes over %s: applied %q, want %q", tc.ranks, tc.nodes, tc.transport, got, tc.want)
		}
		n := c.Network
		if strings.Contains(got, "inter") && (n.NIC.Bandwidth != 12e9 || n.FabricLatency != 7e-6 || n.Efficiency != 1 || n.Overhead != 0 || n.NIC.Latency != 0) {
			t.Errorf("%d ranks on %d nodes: inter network %+v", tc.ranks, tc.nodes, n)
		}
		if strings.Contains(got, "intra") && (n.Intra.Bandwidth != 200e9 || n.Intra.Latency != 3e-6) {
			t.Errorf("%d ranks on %d nodes: intra link %+v", tc.ranks, tc.nodes, n.Intra)
		}
	}
}
