package llm

import (
	"math"
	"strings"
	"testing"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
)

// TestCheckpointBLOOM checks the sizes against BLOOM's published ones
// (176,247 M parameters, Le Scao et al. 2022, arXiv:2211.05100;
// "only the bf16 weights are 329GB, the full checkpoint with optimizer
// states is 2.3TB", bigscience.notion.site, "BigScience 176B Model"),
// read in binary units: 328.3 GiB and 2.24 TiB.
func TestCheckpointBLOOM(t *testing.T) {
	full, err := CheckpointFull.Bytes(176.247e9)
	if err != nil {
		t.Fatal(err)
	}
	weights, _ := CheckpointWeights.Bytes(176.247e9)
	if r := float64(full/units.TiB) / 2.3; math.Abs(r-1) > 0.03 {
		t.Errorf("full %.3f TiB, BLOOM's 2.3 TB: ratio %.3f", float64(full/units.TiB), r)
	}
	if r := float64(weights/units.GiB) / 329; math.Abs(r-1) > 0.005 {
		t.Errorf("weights %.1f GiB, BLOOM's 329 GB: ratio %.4f", float64(weights/units.GiB), r)
	}
	if _, err := CheckpointContent("grads").Bytes(1e9); err == nil || !strings.Contains(err.Error(), "want full or weights") {
		t.Errorf("bad content: %v", err)
	}
	if _, err := CheckpointFull.Bytes(-1); err == nil {
		t.Error("negative parameters: no error")
	}
}

// TestCheckpointBytesShape checks 14 and 2 bytes per parameter of a
// shipped shape.
func TestCheckpointBytesShape(t *testing.T) {
	gpt3, err := model.LookupTransformer("gpt3-175b")
	if err != nil {
		t.Fatal(err)
	}
	full, err := CheckpointBytes(gpt3, CheckpointFull)
	w, _ := CheckpointBytes(gpt3, CheckpointWeights)
	if err != nil || full != units.Bytes(14*gpt3.Params()) || w != units.Bytes(2*gpt3.Params()) {
		t.Errorf("full %v, weights %v, err %v: want 14 and 2 bytes × %d", full, w, err, gpt3.Params())
	}
}

func resolve(t *testing.T, name string) (*hw.System, *hw.Node, *hw.Device) {
	t.Helper()
	c, err := hw.Default()
	if err != nil {
		t.Fatal(err)
	}
	s, n, d, err := c.Resolve(name)
	if err != nil {
		t.Fatal(err)
	}
	return s, n, d
}

// TestCheckpointCost checks write and copy times by hand from the
// catalogue's figures: TSUBAME 3.0's Lustre (150 GB/s aggregate, 3 GB/s
// per client, 4 GPUs a node) and the DGX H100's 8 NVMe drives at 3.5
// GB/s, its H100s on PCIe Gen5 x16 (32 GT/s × 16 lanes × 128/130 / 8 =
// 63.0 GB/s per direction).
func TestCheckpointCost(t *testing.T) {
	ts, tn, td := resolve(t, "tsubame3")
	size := units.Bytes(1.2e12)
	c, err := CheckpointCostOn(ts, tn, td, 64, size, TargetShared, false)
	if err != nil {
		t.Fatal(err)
	}
	// 16 nodes × 3 GB/s = 48 GB/s: 25 s.
	if c.Nodes != 16 || c.Bandwidth != 48*units.GBps || math.Abs(float64(c.Write)-25) > 1e-9 || c.Stall != c.Copy+c.Write || c.Persist != 0 {
		t.Errorf("tsubame3, 64 GPUs: %+v, want 16 nodes, 48 GB/s, 25 s written, stall copy + write", c)
	}
	// 256 nodes: the aggregate 150 GB/s caps it: 8 s.
	c, _ = CheckpointCostOn(ts, tn, td, 1024, size, TargetShared, false)
	if c.Bandwidth != 150*units.GBps || math.Abs(float64(c.Write)-8) > 1e-9 {
		t.Errorf("tsubame3, 1024 GPUs: %+v, want 150 GB/s and 8 s", c)
	}
	hs, hn, hd := resolve(t, "dgx-h100")
	c, err = CheckpointCostOn(hs, hn, hd, 1024, size, TargetLocal, true)
	if err != nil {
		t.Fatal(err)
	}
	pcie5 := 32e9 * 16 * 128 / 130 / 8
	wantCopy := 1.2e12 / 1024 / pcie5
	wantWrite := 1.2e12 / (128 * 8 * 3.5e9) // 128 nodes of 8 drives
	if math.Abs(float64(c.Copy)/wantCopy-1) > 1e-9 || math.Abs(float64(c.Write)/wantWrite-1) > 1e-9 || c.Stall != c.Copy || c.Persist != c.Write {
		t.Errorf("dgx-h100 local async: %+v, want copy %.4f s, write %.4f s, stall the copy", c, wantCopy, wantWrite)
	}
	if _, err := CheckpointCostOn(hs, hn, hd, 8, size, TargetShared, false); err == nil || !strings.Contains(err.Error(), "no shared storage") {
		t.Errorf("dgx-h100 shared: %v", err)
	}
	if _, err := CheckpointCostOn(hs, hn, hd, 8, size, "s3", false); err == nil || !strings.Contains(err.Error(), "want shared or local") {
		t.Errorf("bad target: %v", err)
	}
	if _, err := CheckpointCostOn(hs, hn, hd, 0, size, TargetLocal, false); err == nil || !strings.Contains(err.Error(), "gpus 0") {
		t.Errorf("zero GPUs: %v", err)
	}
	if _, err := CheckpointCostOn(nil, hn, hd, 8, size, TargetLocal, false); err == nil {
		t.Error("nil system: no error")
	}
}
