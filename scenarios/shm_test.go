package scenarios

import (
	"math"
	"testing"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/sim"
)

// TestNCCLP2PDisable: with NCCL_P2P_DISABLE=1 a DGX A100's GPUs leave
// NVLink and exchange through host memory at NCCL's shared-memory rate,
// the node's shm_bandwidth: 5.2 GB/s, the bus bandwidth of a published
// all-reduce through SHM on a DGX A100 (eugenesiow/LLM-Insights,
// testdata/measurements/nccl-tests/dgxa100-4gpu-shm-all_reduce.txt). A
// large ring all-reduce over p of them then costs the closed form of a
// ring whose every hop crosses one device's link B:
//
//	T ≈ 2(p−1)/p · S/B
//
// (host memory, 2 × 190 GB/s on the DGX A100, is not what binds), where
// the same node with peer-to-peer runs over NVLink, at least 20 times
// faster. The DGX A100's eight GPUs sit four on each of its two sockets,
// so a ring over all eight crosses between them, where the transport
// moves hw.DefaultSHMCrossSocket of B (or the node's shm_cross_socket):
// T ≈ 2(p−1)/p · S/(share·B). A DGX H100 takes its shm_bandwidth, 24.27 GB/s, from its own
// table (dgxh100-4gpu-shm-all_reduce.txt), and a node without one
// hw.DefaultSHMBandwidth. A host-staged exchange, whose copies are the
// devices' copy engines, not NCCL's, keeps the host link's rate.
func TestNCCLP2PDisable(t *testing.T) {
	cat, err := hw.Load()
	if err != nil {
		t.Fatal(err)
	}
	const S = 2 * units.GiB
	runOn := func(system string, par Parallelism, p int, alg sim.Algorithm) (units.Seconds, sim.Network) {
		t.Helper()
		pt := Point{Devices: p, Nodes: 1, DevicesPerNode: p, Replicas: p, BatchPerDevice: 1, GlobalBatch: p}
		c := sim.Config{Nodes: 1, DevicesPerNode: p, Comm: sim.Comm{Algorithm: alg}}
		if _, _, err := Network(cat, system, par, &c, pt); err != nil {
			t.Fatal(err)
		}
		got, err := sim.AllReduceTime(c, S)
		if err != nil {
			t.Fatal(err)
		}
		return got, c.Network
	}
	run := func(par Parallelism, p int, alg sim.Algorithm) (units.Seconds, sim.Network) {
		t.Helper()
		return runOn("dgx-a100", par, p, alg)
	}
	const a100SHM units.BytesPerSec = 5.2e9 // the DGX A100 table's bus bandwidth through SHM
	for _, p := range []int{2, 4, 8} {
		got, n := run(Parallelism{NCCLP2PDisable: true}, p, sim.Ring)
		if !n.NoPeerToPeer || n.DevicesPerSwitch != 0 || n.SHM != a100SHM || n.PCIe.Bandwidth < 4*n.SHM {
			t.Fatalf("%d GPUs, P2P disabled: no peer-to-peer %v, tree %d, shared memory %v B/s, host link %v B/s; want true, 0, %v and the link's rate", p, n.NoPeerToPeer, n.DevicesPerSwitch, float64(n.SHM), float64(n.PCIe.Bandwidth), float64(a100SHM))
		}
		rate, socket := float64(a100SHM), 0
		if p > 4 {
			rate, socket = hw.DefaultSHMCrossSocket*rate, 4
		}
		if n.SHMSocketDevices != 4 || n.SHMCrossSocket != hw.DefaultSHMCrossSocket {
			t.Errorf("%d GPUs, P2P disabled: %d devices a socket at a share %v between them; want 4 at %v", p, n.SHMSocketDevices, n.SHMCrossSocket, hw.DefaultSHMCrossSocket)
		}
		want := 2 * float64(p-1) / float64(p) * float64(S) / rate
		if math.Abs(float64(got)/want-1) > 0.01 {
			t.Errorf("%d GPUs (crossing sockets of %d), P2P disabled: ring all-reduce of %v in %v s, want %v s", p, socket, S, float64(got), want)
		}
		nv, _ := run(Parallelism{}, p, sim.Ring)
		if float64(got) < 20*float64(nv) {
			t.Errorf("%d GPUs: through host memory %v s, over NVLink %v s; want at least 20 times slower", p, float64(got), float64(nv))
		}
		viaNCCL, _ := run(Parallelism{NCCLP2PDisable: true}, p, sim.NCCL)
		if math.Abs(float64(viaNCCL)/want-1) > 0.1 {
			t.Errorf("%d GPUs, P2P disabled, NCCL's choice: %v s, want within 10 %% of the ring's %v s", p, float64(viaNCCL), want)
		}
	}

	// The DGX H100's table: 24.27 GB/s; the same ring over 4 of its GPUs.
	if got, _ := runOn("dgx-h100", Parallelism{NCCLP2PDisable: true}, 4, sim.Ring); math.Abs(float64(got)/(1.5*float64(S)/24.27e9)-1) > 0.01 {
		t.Errorf("dgx-h100, 4 GPUs, P2P disabled: %v s, want %v s", float64(got), 1.5*float64(S)/24.27e9)
	}
	// A node without shm_bandwidth: the default.
	node := *cat.Nodes["dgx-a100"]
	node.SHMBandwidth = 0
	cat.Nodes["dgx-a100"] = &node
	if got, _ := run(Parallelism{NCCLP2PDisable: true}, 2, sim.Ring); math.Abs(float64(got)/(float64(S)/float64(hw.DefaultSHMBandwidth))-1) > 0.01 {
		t.Errorf("no shm_bandwidth: %v s, want %v s", float64(got), float64(S)/float64(hw.DefaultSHMBandwidth))
	}
	node.SHMBandwidth = 2e9
	cat.Nodes["dgx-a100"] = &node
	got, _ := run(Parallelism{NCCLP2PDisable: true}, 2, sim.Ring)
	if want := float64(S) / 2e9; math.Abs(float64(got)/want-1) > 0.01 {
		t.Errorf("shm_bandwidth 2 GB/s: %v s, want %v s", float64(got), want)
	}
	node.SHMCrossSocket = 0.5
	got, _ = run(Parallelism{NCCLP2PDisable: true}, 8, sim.Ring)
	if want := 1.75 * float64(S) / 1e9; math.Abs(float64(got)/want-1) > 0.01 {
		t.Errorf("shm_bandwidth 2 GB/s, shm_cross_socket 0.5, 8 GPUs: %v s, want %v s", float64(got), want)
	}
	_, staged := run(Parallelism{NCCLP2PDisable: true}, 2, sim.HostStaged)
	if host := node.HostBandwidth(cat.Devices["a100-sxm4-80gb"]); staged.PCIe.Bandwidth < host/2 || staged.SHM != 0 {
		t.Errorf("host-staged, P2P disabled: host link %v B/s, shared memory %v; want the host link's %v at the transport's efficiency and no shared memory", float64(staged.PCIe.Bandwidth), float64(staged.SHM), float64(host))
	}
}
