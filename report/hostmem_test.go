package report

import (
	"strings"
	"testing"

	"scaleplan/hw"
	"scaleplan/scenarios"
)

// TestHostMemoryExchange checks the report's row for devices that
// exchange through host memory: none on an NVLink node, NCCL's
// shared-memory rate under NCCL_P2P_DISABLE=1 and on a node without
// peer-to-peer, and the staged copies of a host-staged exchange.
func TestHostMemoryExchange(t *testing.T) {
	r, err := scenarios.Load("tsubame3-resnet50-caffe2-verbs", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if row, ok := hostMemoryExchange(r); ok {
		t.Errorf("NVLink node with peer-to-peer: row %q, want none", row)
	}
	r.Parallelism.NCCLP2PDisable = true
	row, ok := hostMemoryExchange(r)
	if want := "NCCL_P2P_DISABLE=1): NCCL's shared memory at " + hw.DefaultSHMBandwidth.String(); !ok || !strings.Contains(row, want) {
		t.Errorf("NCCL_P2P_DISABLE: row %q, want it to hold %q", row, want)
	}
	staged, err := scenarios.Load("seed003-resnet50-2gpu-nop2p", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if row, ok := hostMemoryExchange(staged); !ok || !strings.Contains(row, "no peer-to-peer): staged copies") {
		t.Errorf("host-staged node without peer-to-peer: row %q, want the staged copies", row)
	}
}
