package torchbench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestProfileCPU runs the MLP at two batches on the CPU with a profile and
// checks the profile beside the log: one per batch, each with the forward
// and backward products of its four linear layers (aten::addmm and
// aten::mm) counted with FLOPs.
func TestProfileCPU(t *testing.T) {
	opt := cpuOptions(t, Options{Models: []string{"mlp"}, Batches: []int{8, 16}, Steps: 2, Warmup: 1, Threads: 1, Run: "test-profile"})
	dir := t.TempDir()
	opt.Profile = filepath.Join(dir, "log.profile.json")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	if err := Run(ctx, opt, filepath.Join(dir, "log.jsonl"), nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(opt.Profile)
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Kind     string `json:"kind"`
		Device   string `json:"device"`
		Profiles []struct {
			Model string `json:"model"`
			Batch int    `json:"batch"`
			Ops   []struct {
				Name  string  `json:"name"`
				Calls float64 `json:"calls"`
				FLOPs float64 `json:"flops"`
			} `json:"ops"`
		} `json:"profiles"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if p.Kind != "torch-profile" || p.Device != "cpu" || len(p.Profiles) != 2 {
		t.Fatalf("profile %s, device %s, %d profiles: want torch-profile, cpu, 2", p.Kind, p.Device, len(p.Profiles))
	}
	for i, q := range p.Profiles {
		if q.Model != "mlp" || q.Batch != []int{8, 16}[i] {
			t.Errorf("profile %d: %s at %d", i, q.Model, q.Batch)
		}
		var products float64
		for _, o := range q.Ops {
			if (o.Name == "aten::addmm" || o.Name == "aten::mm") && o.FLOPs > 0 {
				products += o.Calls
			}
		}
		if products < 4 {
			t.Errorf("batch %d: %v products with FLOPs per step, want the linear layers' forward and backward ones", q.Batch, products)
		}
	}
	bad := opt
	bad.NProc = 2
	if err := bad.Validate(); err == nil {
		t.Error("a profile of two workers validated")
	}
}
