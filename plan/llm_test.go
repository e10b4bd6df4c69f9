package plan

import (
	"math"
	"slices"
	"strings"
	"testing"

	"scaleplan/compute"
	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/llm"
	"scaleplan/sim"
)

// TestLLMPlan plans Llama-3-70B on 1,024 H100s: the best layout fits,
// ranks first and keeps tensor groups inside a node; its batches are
// Llama 3's published 4 to 16 Mi tokens.
func TestLLMPlan(t *testing.T) {
	p, err := LLM(LLMRequest{Model: "llama3-70b", System: "dgx-h100", GPUs: 1024, Tokens: 15e12, Top: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.GlobalBatches, []int{512, 1024, 2048}) || p.Nodes != 128 || !p.BeyondSystem || !slices.Equal(p.GPUs, []int{1024}) {
		t.Errorf("plan: batches %v, nodes %d, beyond %t, gpus %v", p.GlobalBatches, p.Nodes, p.BeyondSystem, p.GPUs)
	}
	c := p.Result.Best[0]
	if c.Layout.TP > 8 || c.Layout.World() != 1024 || c.Memory.Peak.Total() > 80*units.GiB {
		t.Errorf("best %+v needs %v", c.Layout, c.Memory.Peak.Total())
	}
	steps := int(math.Ceil(15e12 / (float64(c.Layout.GlobalBatch) * 8192)))
	if c.Steps != steps || c.TrainTime != units.Seconds(steps)*c.Step.Time || c.GPUHours != 1024*float64(c.TrainTime)/3600 {
		t.Errorf("steps %d, train time %v, gpu-hours %g: want %d steps", c.Steps, c.TrainTime, c.GPUHours, steps)
	}
	for _, bad := range []LLMRequest{
		{Model: "llama3-70b", System: "dgx-h100", GPUs: 12},
		{Model: "llama3-70b", System: "dgx-h100", GPUs: 1024, MaxGPUs: 1028},
		{Model: "nope", System: "dgx-h100", GPUs: 8},
		{Model: "llama3-70b", System: "dgx-h100", GPUs: 8, Tokens: -1},
		{Model: "llama3-70b", System: "dgx-h100", GPUs: 8, Efficiency: 2},
		{Model: "llama3-70b", System: "dgx-h100", GPUs: 8, Deadline: 3600},
		{Model: "llama3-70b", System: "dgx-h100", GPUs: 8, Tokens: 1e9, Budget: Budget{KWh: 5}},
		{Model: "llama3-70b", System: "dgx-h100", GPUs: 8, GlobalBatches: []int{0}},
	} {
		if _, err := LLM(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestLLMPlanRange plans Llama-3-70B on 1,024 to 16,384 H100s to train
// 15T tokens within 30 days: tens of thousands of layouts; the cheapest
// that meets the deadline ranks first, and no layout of the range meets
// it more cheaply (each count searched alone); a dollar budget converts
// at the system's price, and one without a price is refused.
func TestLLMPlanRange(t *testing.T) {
	req := LLMRequest{Model: "llama3-70b", System: "dgx-h100", GPUs: 1024, MaxGPUs: 16384, Tokens: 15e12,
		Deadline: 30 * 86400, GlobalBatches: []int{1024}, Top: 2}
	p, err := LLM(req)
	if err != nil {
		t.Fatal(err)
	}
	if p.Result.Layouts < 10000 || len(p.GPUs) != 9 {
		t.Errorf("%d layouts over %v GPUs: want at least 10^4 over 9 counts", p.Result.Layouts, p.GPUs)
	}
	best := p.Result.Best[0]
	for _, g := range p.GPUs {
		one := req
		one.GPUs, one.MaxGPUs, one.Top = g, 0, 1
		q, err := LLM(one)
		if err != nil {
			continue // no layout of g GPUs meets the deadline
		}
		if c := q.Result.Best[0]; c.GPUHours < best.GPUHours*(1-1e-12) {
			t.Errorf("%d GPUs alone: %+v at %g GPU-hours, cheaper than the range's %+v at %g", g, c.Layout, c.GPUHours, best.Layout, best.GPUHours)
		}
	}
	if best.TrainTime > req.Deadline {
		t.Errorf("best trains in %v, past the deadline", best.TrainTime)
	}
	cat, _ := hw.Default()
	sys, _, _, _ := cat.Resolve("dgx-h100")
	req.Deadline, req.Budget, req.MaxGPUs = 0, Budget{Dollars: 1e6}, 0
	if sys.PricePerDeviceHour > 0 {
		q, err := LLM(req)
		if err == nil && q.MaxGPUHours != 1e6/sys.PricePerDeviceHour {
			t.Errorf("$1e6 at $%g: %g GPU-hours", sys.PricePerDeviceHour, q.MaxGPUHours)
		}
	} else if _, err := LLM(req); err == nil || !strings.Contains(err.Error(), "no price") {
		t.Errorf("dollars without a price: %v", err)
	}
}

// TestGPUChoices: the ends, and the whole nodes between them whose odd
// factor a pipeline depth (a divisor of the layers) and a data-parallel
// degree (a divisor of a batch) can make, counted by hand.
func TestGPUChoices(t *testing.T) {
	pow2 := []int{512, 1024, 2048}
	for _, c := range []struct {
		lo, hi, per, layers int
		batches             []int
		want                []int
	}{
		{1024, 16384, 8, 80, pow2, []int{1024, 1280, 2048, 2560, 4096, 5120, 8192, 10240, 16384}},
		{1024, 2048, 8, 80, []int{1536}, []int{1024, 1280, 1536, 1920, 2048}},
		{40, 100, 4, 6, []int{8}, []int{40, 48, 64, 96, 100}},
		{4, 4, 8, 80, pow2, []int{4}},
		{24, 24, 8, 80, pow2, []int{24}},
	} {
		got, err := GPUChoices(c.lo, c.hi, c.per, c.layers, c.batches)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("GPUChoices(%d, %d, %d, %d, %v) = %v, %v; want %v", c.lo, c.hi, c.per, c.layers, c.batches, got, err, c.want)
		}
	}
	for _, c := range [][3]int{{0, 8, 8}, {16, 8, 8}, {4, 16, 8}, {12, 12, 8}, {8, 20, 8}} {
		if _, err := GPUChoices(c[0], c[1], c[2], 80, pow2); err == nil {
			t.Errorf("GPUChoices%v accepted", c)
		}
	}
	if got := batchChoices("llama3-8b", 8192); !slices.Equal(got, []int{512, 1024, 2048}) {
		t.Errorf("llama3-8b batches %v: want 4, 8 and 16 Mi tokens of 8,192", got)
	}
	if got := batchChoices("llama2-7b", 4096); !slices.Equal(got, []int{1024}) {
		t.Errorf("llama2-7b batches %v: want 4 Mi tokens of 4,096", got)
	}
}

// TestCommGridExact: on a power of two the grid is sim.CollectiveTime
// itself, and between two it lies between them.
func TestCommGridExact(t *testing.T) {
	cat, _ := hw.Default()
	g := newCommGrid(cat, "dgx-h100")
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
	if _, err := newCommGrid(cat, "nope").time(llm.AllReduce, grp, 1); err == nil ||
		!strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown system: %v", err)
	}
}

// BenchmarkLLMSearch plans Llama-3-70B on H100s, each search with fresh
// caches of operator and collective times (docs/performance.md): on
// 1,024 and on 16,384 GPUs at Llama 3's batches of 4, 8 and 16 Mi tokens
// (Section 3.4.1 of Llama Team 2024), and over every count of
// GPUChoices from 1,024 to 16,384 with the 15T tokens to train in 30
// days, the README's examples.
func BenchmarkLLMSearch(b *testing.B) {
	for _, c := range []struct {
		name string
		req  LLMRequest
	}{
		{"gpus=1024", LLMRequest{GPUs: 1024}},
		{"gpus=16384", LLMRequest{GPUs: 16384}},
		{"gpus=1024-16384/deadline=30d", LLMRequest{GPUs: 1024, MaxGPUs: 16384, Tokens: 15e12, Deadline: 30 * 86400}},
	} {
		b.Run(c.name, func(b *testing.B) {
			req := c.req
			req.Model, req.System = "llama3-70b", "dgx-h100"
			var layouts int
			for range b.N {
				p, err := LLM(req)
				if err != nil {
					b.Fatal(err)
				}
				layouts = p.Result.Layouts
			}
			b.ReportMetric(float64(layouts), "layouts")
			b.ReportMetric(float64(layouts*b.N)/b.Elapsed().Seconds(), "layouts/s")
		})
	}
}

// TestNICShare: a group with perNode of a node's devices gets that share
// of the node's NIC bandwidth, spread over its own NICs, and never more
// than a node running only it gives it.
func TestNICShare(t *testing.T) {
	port := units.BytesPerSec(50e9) // one 400 Gb/s NDR port
	eight := sim.Network{NICs: 8, NIC: sim.Link{Bandwidth: port}}
	one := sim.Network{NICs: 1, NIC: sim.Link{Bandwidth: port}}
	for _, c := range []struct {
		name        string
		full, group sim.Network
		perNode     int
		want        units.BytesPerSec
	}{
		// DGX H100: 1 rank a node is given the 8 ports merged into one;
		// with the node's 7 other groups at once, one port's worth.
		{"one rank, all ports merged", eight, sim.Network{NICs: 1, NIC: sim.Link{Bandwidth: 8 * port}}, 1, port},
		// 2 ranks a node, 4 ports each: 2 ports' worth, one a rank.
		{"two ranks", eight, sim.Network{NICs: 2, NIC: sim.Link{Bandwidth: 4 * port}}, 2, port},
		// DGX A100's PCIe tree: one rank gets its switch's 2 ports
		// merged; its share is still one port.
		{"one rank under a switch of 2 ports", eight, sim.Network{NICs: 1, NIC: sim.Link{Bandwidth: 2 * port}}, 1, port},
		// A node of one port for its 8 GPUs: a rank gets 1/8 of it.
		{"one port a node", one, one, 1, port / 8},
		// A whole node keeps its own.
		{"whole node", eight, eight, 8, port},
	} {
		if got := nicShare(c.full, c.group, c.perNode, 8); math.Abs(float64(got/c.want)-1) > 1e-12 {
			t.Errorf("%s: %v a NIC, want %v", c.name, got, c.want)
		}
	}
}

// TestCommGridNICShare: a reduce-scatter over 16 DGX H100 nodes, one rank
// on each, runs as all eight GPUs' groups do at once, on one 400 Gb/s
// ConnectX-7 port a GPU (DGX H100 datasheet): a ring moves (n−1)/n of
// its S bytes through each rank's port, S·15/16 / 50 GB/s = 20.1 ms for
// 1 GiB at the line rate, slower by the transport's efficiency; not the
// 2.5 ms the node's eight ports would give one group.
func TestCommGridNICShare(t *testing.T) {
	cat, _ := hw.Default()
	g := newCommGrid(cat, "dgx-h100")
	const size = 1 << 30
	got, err := g.time(llm.ReduceScatter, llm.Group{Nodes: 16, PerNode: 1}, size)
	if err != nil {
		t.Fatal(err)
	}
	line := units.Seconds(size * 15.0 / 16 / 50e9)
	if got < line || got > 1.25*line {
		t.Errorf("reduce-scatter of 1 GiB on 16×1 ranks: %v, want within [1, 1.25] of %v", got, line)
	}
}

// TestLLMPlanHost plans GPT-3 XL and Llama-2-7B on one DGX H100 with a
// host that costs 35 µs a kernel, about what the lent H100 and H200 VMs'
// hosts fitted (docs/compute-calibration.md), against the published
// 4.2 µs: the best layout's step grows by less than 1 % (their kernels
// are longer than either launch), and by more than a quarter with a host of
// 1 ms a kernel, where the launches bound the step.
func TestLLMPlanHost(t *testing.T) {
	step := func(name string, kernel units.Seconds) units.Seconds {
		t.Helper()
		req := LLMRequest{Model: name, System: "dgx-h100", GPUs: 8, Top: 1}
		if kernel > 0 {
			h := compute.MeasuredHost
			h.Kernel = kernel
			req.Host = &h
		}
		p, err := LLM(req)
		if err != nil {
			t.Fatal(err)
		}
		return p.Result.Best[0].Step.Time
	}
	for _, name := range []string{"gpt3-1.3b", "llama2-7b"} {
		base := step(name, 0)
		if got := step(name, 35*units.Microsecond); !(got >= base && float64(got/base) < 1.01) {
			t.Errorf("%s at 35 µs a kernel: step %v against %v: want within 1 %%", name, got, base)
		}
		if got := step(name, units.Millisecond); !(float64(got/base) > 1.25) {
			t.Errorf("%s at 1 ms a kernel: step %v against %v: want launch-bound", name, got, base)
		}
	}
}
