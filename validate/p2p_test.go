package validate

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"scaleplan/hw"
	"scaleplan/predict"
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

// TestSHMSocketsPublished checks docs/network-shm.md's,
// docs/validation-published.md's and docs/network.md's figures of the share between sockets
// (hw.Node.SHMCrossShare) on Lambda's rows through SHM: the mean absolute
// error of the BERT rows of two to eight GPUs with the share and with the
// whole rate across the sockets (their nodes' shm_cross_socket 1), the
// largest error of the 80GB server's eight-GPU rows both ways, and the
// V100 rows (an Intel host, share 1) within 9 %, whose eight-GPU rows
// with the AMD share would be 4 to 55 % too slow.
func TestSHMSocketsPublished(t *testing.T) {
	shmDoc, pubDoc := docQuote(t, "network-shm.md"), docQuote(t, "validation-published.md")
	cat, prof := defaults(t)
	ms := measuredFile(t, cat, prof, "../testdata/measurements/published-lambda-bert.csv")
	var shm []Measured
	for _, m := range ms {
		if m.NCCLP2PDisable && m.Devices > 1 {
			shm = append(shm, m)
		}
	}
	type figures struct {
		mae            float64 // over the BERT rows through SHM
		a100Lo, a100Hi float64 // error range, the 80GB server's eight GPUs
		a100Max        float64 // |error| at most there
		v100Max        float64 // |error| at most, every V100 row
		v100Lo, v100Hi float64 // |error| range of the V100's eight-GPU rows
	}
	run := func(share map[string]float64) figures {
		t.Helper()
		for n, s := range share {
			node := *cat.Nodes[n]
			node.SHMCrossSocket = s
			cat.Nodes[n] = &node
		}
		rep, err := CompareMeasured(shm, cat, prof, predict.Options{})
		if err != nil {
			t.Fatal(err)
		}
		f := figures{v100Lo: math.Inf(1), a100Lo: math.Inf(1), a100Hi: math.Inf(-1)}
		for _, g := range rep.Groups {
			for _, r := range g.Rows {
				e := math.Abs(r.Error())
				switch {
				case g.System == "hgx-a100-80gb-7h12" && g.Devices == 8:
					f.a100Max = max(f.a100Max, e)
					f.a100Lo, f.a100Hi = min(f.a100Lo, r.Error()), max(f.a100Hi, r.Error())
				case strings.HasPrefix(g.Device, "v100"):
					f.v100Max = max(f.v100Max, e)
					if g.Devices == 8 {
						f.v100Lo, f.v100Hi = min(f.v100Lo, e), max(f.v100Hi, e)
					}
				}
			}
		}
		f.mae = rep.MAE
		return f
	}
	with := run(nil)
	whole := run(map[string]float64{"hgx-a100-80gb-7h12": 1, "hgx-a100-40gb-7542": 1})
	amd := run(map[string]float64{"dgx-1": hw.DefaultSHMCrossSocket})
	shmDoc(fmt.Sprintf("the %d BERT rows of two to eight GPUs go from %.1f to %.1f %%", len(shm), 100*whole.mae, 100*with.mae))
	pubDoc(fmt.Sprintf("are at %.1f %% (%.1f %% with the whole rate across the sockets)", 100*with.mae, 100*whole.mae))
	docQuote(t, "network.md")(fmt.Sprintf("their %d BERT rows of several GPUs are at %.1f %%", len(shm), 100*with.mae))
	shmDoc(fmt.Sprintf("eight-GPU rows from +%.0f to +%.0f %% too fast to within %.0f %%", 100*whole.a100Lo, 100*whole.a100Hi, math.Ceil(100*with.a100Max)))
	shmDoc(fmt.Sprintf("within %.0f %% on every row", math.Ceil(100*with.v100Max)))
	shmDoc(fmt.Sprintf("would be %.0f to %.0f %% too slow", 100*amd.v100Lo, 100*amd.v100Hi))
}
