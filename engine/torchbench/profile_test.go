package torchbench

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// TestProfileFLOPsTable measures again the table
// model/testdata/torch-flops.csv, against which the model package checks
// its generators: the FLOPs torch.profiler counts for the matrix products
// (aten::mm, addmm, bmm, baddbmm) and convolutions (aten::conv2d) of one
// training step of 2 samples, summed per operator: the transformers on 16
// tokens, ResNet-50 and EfficientNet-B4 on 64×64 images, the engine's MLP
// and CNN. torch counts them from the shapes alone, so they must be the
// table's exactly. It is a re-measurement of a committed table (about 80
// s of CPU training, a third of the package's tests), run with
// SCALEPLAN_REMEASURE=1 when torch or the bench's networks change; the
// model package's tests check the table itself.
func TestProfileFLOPsTable(t *testing.T) {
	if os.Getenv("SCALEPLAN_REMEASURE") != "1" {
		t.Skip("re-measures model/testdata/torch-flops.csv (about 80 s of CPU training); set SCALEPLAN_REMEASURE=1 to run it")
	}
	got := map[string]float64{}
	// size is the table's: tokens a sample, or an image's side (0: the
	// engine's fixed 28×28).
	for _, g := range []struct {
		models    []string
		seq, side int
	}{
		{[]string{"gpt3-125m", "bert-base-squad", "transformer-base"}, 16, 0},
		{[]string{"resnet50", "efficientnet-b4"}, 0, 64},
		{[]string{"mlp", "cnn"}, 0, 0},
	} {
		opt := cpuOptions(t, Options{Models: g.models, SeqLen: g.seq, ImageSize: g.side, Batches: []int{2}, Steps: 1, Warmup: -1, Threads: 1, Run: "test-flops"})
		dir := t.TempDir()
		opt.Profile = filepath.Join(dir, "log.profile.json")
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
		err := Run(ctx, opt, filepath.Join(dir, "log.jsonl"), nil)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(opt.Profile)
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Profiles []struct {
				Model string `json:"model"`
				Batch int    `json:"batch"`
				Ops   []struct {
					Name  string  `json:"name"`
					FLOPs float64 `json:"flops"`
				} `json:"ops"`
			} `json:"profiles"`
		}
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		for _, q := range p.Profiles {
			for _, o := range q.Ops {
				switch o.Name {
				case "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::conv2d":
					got[fmt.Sprintf("%s,%d,%d,%s", q.Model, q.Batch, max(g.seq, g.side), o.Name)] += o.FLOPs
				}
			}
		}
	}
	f, err := os.Open("../../model/testdata/torch-flops.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comment = '#'
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for _, row := range rows[1:] {
		v, err := strconv.ParseFloat(row[4], 64)
		if err != nil {
			t.Fatal(err)
		}
		want[strings.Join(row[:4], ",")] = v
	}
	for k, w := range want {
		if math.Abs(got[k]-w) > 0.5 {
			t.Errorf("%s: torch counts %.0f FLOPs a step, the table %.0f", k, got[k], w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok && got[k] > 0 {
			t.Errorf("%s: %.0f FLOPs a step, not in the table", k, got[k])
		}
	}
}
