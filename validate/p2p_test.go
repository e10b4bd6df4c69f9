package validate

import (
	"strings"
	"testing"

	"scaleplan/hw"
	"scaleplan/sim"
)

// TestP2PDisableLabel checks the nccl_p2p_disable column as NCCL reads
// its variable (1 through host memory, 0 or nothing peer-to-peer, anything
// else refused with the valid values named), and that a row with it runs
// its exchange on the node's shared-memory rate (Node.SHMRate: its
// shm_bandwidth, else hw.DefaultSHMBandwidth), named in the exchange
// column, where the same row without it talks over NVLink.
func TestP2PDisableLabel(t *testing.T) {
	for v, want := range map[string]bool{"1": true, "0": false, "": false} {
		got, err := p2pDisable(v)
		if err != nil || got != want {
			t.Errorf("nccl_p2p_disable %q: %v, %v; want %v", v, got, err, want)
		}
	}
	if _, err := p2pDisable("yes"); err == nil || !strings.Contains(err.Error(), `nccl_p2p_disable "yes": want 1`) {
		t.Errorf("nccl_p2p_disable yes: %v, want the valid values named", err)
	}
	cat0, prof := defaults(t)
	csv := "model,device,precision,devices,batch,samples_per_s,system,nccl_p2p_disable\n" +
		"resnet50,v100-sxm2-16gb,fp32,1,128,369,dgx1,1\n" +
		"resnet50,v100-sxm2-16gb,fp32,8,128,2817,dgx1,1\n"
	if ms, err := readCSV(t, cat0, prof, csv); err != nil || len(ms) != 2 || !ms[1].NCCLP2PDisable {
		t.Errorf("read %+v, %v; want two rows, the second through host memory", ms, err)
	}
	bad := strings.Replace(csv, "369,dgx1,1", "369,dgx1,on", 1)
	if _, err := readCSV(t, cat0, prof, bad); err == nil || !strings.Contains(err.Error(), `t.csv:2: nccl_p2p_disable "on": want 1`) {
		t.Errorf("nccl_p2p_disable on, one device: %v, want the file, line and valid values", err)
	}

	cat, err := hw.Load()
	if err != nil {
		t.Fatal(err)
	}
	d, err := cat.Device("a100-sxm4-80gb")
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range []bool{false, true} {
		m := Measured{Model: "resnet50", Device: d.Name, Precision: "tf32", Batch: 64, Devices: 8, System: "dgx-a100", NCCLP2PDisable: off}
		cfg := sim.Config{MicroBatch: 64}
		_, exchange, _, err := placeMeasured(&cfg, cat, d, &m, nil)
		if err != nil {
			t.Fatal(err)
		}
		shm := cfg.Network.NoPeerToPeer && cfg.Network.SHM == cat.Nodes["dgx-a100"].SHMRate()
		if shm != off || strings.Contains(exchange, "over shm") != off {
			t.Errorf("NCCL_P2P_DISABLE %v: exchange %q, through host memory at the SHM rate %v", off, exchange, shm)
		}
	}
}
