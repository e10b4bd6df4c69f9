package hw

import (
	"strings"
	"testing"
)

// TestShippedPCIeTrees: every shipped PCIe tree is whole and puts each
// device's NIC where its sources do. Switches hold the same number of
// devices, split evenly over the sockets; with NICs under the switches,
// the node's fabric ports fill them evenly and device j's NIC (port
// j·ports/devices, as the simulator assigns it) sits under device j's
// own switch, so NCCL reaches it by GPUDirect RDMA (PIX or PXB in
// `nvidia-smi topo -m`). The DGX-1 and DGX A100 (both memory sizes) have
// trees, two GPUs to a switch and one or two NICs.
func TestShippedPCIeTrees(t *testing.T) {
	cat, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]int{"dgx-1": {2, 1}, "dgx-1-32gb": {2, 1}, "dgx-a100": {2, 2}, "dgx-a100-320gb": {2, 2}}
	for name, n := range cat.Nodes {
		tr := n.PCIeTree
		if tr == nil {
			if _, ok := want[name]; ok {
				t.Errorf("%s: no pcie_tree", name)
			}
			continue
		}
		if w, ok := want[name]; !ok || w != [2]int{tr.DevicesPerSwitch, tr.NICsPerSwitch} {
			t.Errorf("%s: %d devices and %d NICs per switch, want %v", name, tr.DevicesPerSwitch, tr.NICsPerSwitch, want[name])
		}
		if strings.TrimSpace(tr.Source) == "" {
			t.Errorf("%s: pcie_tree has no source", name)
		}
		switches := n.Devices / tr.DevicesPerSwitch
		if n.Devices%tr.DevicesPerSwitch != 0 || switches%max(n.CPU.Sockets, 1) != 0 {
			t.Errorf("%s: %d devices in switches of %d over %d sockets do not split evenly", name, n.Devices, tr.DevicesPerSwitch, n.CPU.Sockets)
		}
		if tr.NICsPerSwitch == 0 {
			continue
		}
		ports := 0
		for _, nic := range n.NICs {
			if nic.Kind == n.NICs[0].Kind && !nic.Host {
				ports += nic.PortCount()
			}
		}
		if ports != tr.NICsPerSwitch*switches {
			t.Errorf("%s: %d fabric ports, want %d switches × %d", name, ports, switches, tr.NICsPerSwitch)
		}
		for j := range n.Devices {
			if nic := j * ports / n.Devices; nic/tr.NICsPerSwitch != j/tr.DevicesPerSwitch {
				t.Errorf("%s: device %d uses port %d under switch %d, not its own switch %d", name, j, nic, nic/tr.NICsPerSwitch, j/tr.DevicesPerSwitch)
			}
		}
	}
}
