package plan

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/llm"
)

// TestLLMPlan plans Llama-3-70B on 1,024 H100s: the best layout fits,
// ranks first and keeps tensor groups inside a node.
func TestLLMPlan(t *testing.T) {
	p, err := LLM(LLMRequest{Model: "llama3-70b", System: "dgx-h100", GPUs: 1024, Tokens: 15e12, Top: 3})
	if err != nil {
		t.Fatal(err)
	}
	if p.GlobalBatch != 512 || p.Nodes != 128 || !p.BeyondSystem || p.Steps != int(math.Ceil(15e12/(512*8192))) {
		t.Errorf("plan: batch %d, nodes %d, beyond %t, steps %d", p.GlobalBatch, p.Nodes, p.BeyondSystem, p.Steps)
	}
	c := p.Result.Best[0]
	if c.Layout.TP > 8 || c.Layout.World() != 1024 || c.Memory.Peak.Total() > 80*units.GiB {
		t.Errorf("best %+v needs %v", c.Layout, c.Memory.Peak.Total())
	}
	if tt := p.TrainTime(c); tt != units.Seconds(p.Steps)*c.Step.Time {
		t.Errorf("train time %v", tt)
	}
	for _, bad := range []LLMRequest{
		{Model: "llama3-70b", System: "dgx-h100", GPUs: 12},
		{Model: "nope", System: "dgx-h100", GPUs: 8},
		{Model: "llama3-70b", System: "dgx-h100", GPUs: 8, Tokens: -1},
		{Model: "llama3-70b", System: "dgx-h100", GPUs: 8, Efficiency: 2},
	} {
		if _, err := LLM(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestCommGridExact: on a power of two the grid is sim.CollectiveTime
// itself, and between two it lies between them.
func TestCommGridExact(t *testing.T) {
	cat, _ := hw.Default()
	g := &commGrid{cat: cat, system: "dgx-h100", times: map[gridKey]units.Seconds{}}
	grp := llm.Group{Nodes: 4, PerNode: 1}
	a, err := g.time(llm.AllReduce, grp, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := g.time(llm.AllReduce, grp, 2<<20)
	mid, _ := g.time(llm.AllReduce, grp, 3<<19)
	if !(a > 0 && a < mid && mid < b) || len(g.times) != 2 {
		t.Errorf("1 MiB %v, 1.5 MiB %v, 2 MiB %v, %d timed", a, mid, b, len(g.times))
	}
	if _, err := g.time(llm.AllReduce, llm.Group{Nodes: 1, PerNode: 8}, 1<<20); err != nil {
		t.Error(err)
	}
	if _, err := (&commGrid{cat: cat, system: "nope", times: map[gridKey]units.Seconds{}}).time(llm.AllReduce, grp, 1); err == nil ||
		!strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown system: %v", err)
	}
}

// BenchmarkLLMSearch plans Llama-3-70B on 1,024 and 16,384 H100s, each
// with a fresh cache of collective times (docs/performance.md): at the
// default 4 Mi tokens per step, and at Llama 3's final 16 Mi (2,048
// sequences; Llama Team 2024, Section 3.4.1).
func BenchmarkLLMSearch(b *testing.B) {
	for _, c := range []struct{ gpus, batch int }{{1024, 0}, {16384, 0}, {1024, 2048}, {16384, 2048}} {
		b.Run(fmt.Sprintf("gpus=%d/batch=%d", c.gpus, c.batch), func(b *testing.B) {
			var layouts int
			for range b.N {
				start := time.Now()
				p, err := LLM(LLMRequest{Model: "llama3-70b", System: "dgx-h100", GPUs: c.gpus, GlobalBatch: c.batch})
				if err != nil {
					b.Fatal(err)
				}
				layouts = p.Result.Layouts
				b.ReportMetric(time.Since(start).Seconds(), "s/search")
			}
			b.ReportMetric(float64(layouts), "layouts")
		})
	}
}
