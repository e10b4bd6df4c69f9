package scenarios

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"

	"scaleplan/compute"
	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/sim"
)

// TestBuildShipped builds and simulates every point of every shipped
// scenario: each fits in memory and gives a consistent result.
func TestBuildShipped(t *testing.T) {
	for _, name := range Names() {
		r, err := Load(name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range r.Points() {
			c, err := r.Build(p)
			if err != nil {
				t.Errorf("%s at %d devices: %v", name, p.Devices, err)
				continue
			}
			res, err := sim.Run(c)
			if err != nil {
				t.Errorf("%s at %d devices: %v", name, p.Devices, err)
				continue
			}
			if res.GlobalBatch != p.GlobalBatch || !(res.StepTime > 0) || math.Abs(float64(res.Breakdown.Total()-res.StepTime)) > 1e-9*float64(res.StepTime) {
				t.Errorf("%s at %d devices: global batch %d (want %d), step %v, breakdown %+v", name, p.Devices, res.GlobalBatch, p.GlobalBatch, res.StepTime, res.Breakdown)
			}
		}
	}
}

// TestBuildMapping checks the numbers Build derives from the catalogue
// for TSUBAME 3.0 against hand calculations from docs/catalog.md.
func TestBuildMapping(t *testing.T) {
	for _, c := range []struct {
		scenario   string
		nics       int
		nic        float64 // bytes/s per NIC before efficiency
		eff        float64
		alg        sim.Algorithm
		storage    sim.Storage
		staging    float64
		intra      float64
		intraLat   float64
		copyBytes  float64
		decode     float64
		prefetch   int
		layers     int
		gradients  float64
		perSampleS float64
	}{
		{"tsubame3-resnet50-caffe2-default", 1, 12.5e9, 0.35, sim.HalvingDoubling, sim.SharedDB, 0, 80e9 * 0.8, 7e-6, 224 * 224 * 3 * 4, 5e-3 * 2.5 / 2.4, 2, 108, 25557032 * 4, 0},
		{"tsubame3-resnet50-caffe2-verbs", 4, 12.5e9, 0.95, sim.Hierarchical, sim.Local, 1281167 * 110e3, 80e9 * 0.8, 7e-6, 224 * 224 * 3 * 4, 5e-3 * 2.5 / 2.4, 2, 108, 25557032 * 4, 0},
	} {
		r, err := Load(c.scenario, Options{})
		if err != nil {
			t.Fatal(err)
		}
		p := r.Points()[2] // 32 devices
		cfg, err := r.Build(p)
		if err != nil {
			t.Fatal(err)
		}
		n := cfg.Network
		var grad float64
		for _, l := range cfg.Comm.Layers {
			grad += float64(l)
		}
		// The P100 gives its SMs and ResNet-50 has a generator: compute by
		// operators, the law at the micro-batch (package compute).
		law, err := compute.LawAt(compute.Config{Device: r.Device, Precision: hw.FP32, Mode: compute.Eager}, "resnet50", p.BatchPerDevice)
		if err != nil {
			t.Fatal(err)
		}
		if !r.OperatorCompute() {
			t.Errorf("%s: compute not by operators", c.scenario)
		}
		for _, x := range []struct {
			name      string
			got, want float64
		}{
			{"nodes", float64(cfg.Nodes), 8}, {"NICs", float64(n.NICs), float64(c.nics)}, {"NIC", float64(n.NIC.Bandwidth), c.nic},
			{"efficiency", n.Efficiency, c.eff}, {"intra", float64(n.Intra.Bandwidth), c.intra}, {"intra latency", float64(n.Intra.Latency), c.intraLat},
			{"algorithm", float64(cfg.Comm.Algorithm), float64(c.alg)}, {"storage", float64(cfg.Input.Storage), float64(c.storage)},
			{"staging", float64(cfg.Input.Staging.Bytes), c.staging}, {"copy", float64(cfg.Input.Copy), c.copyBytes},
			{"decode", float64(cfg.Input.Decode), c.decode}, {"cores", float64(cfg.Input.Cores), 28}, {"prefetch", float64(cfg.Input.Prefetch), float64(c.prefetch)},
			{"layers", float64(len(cfg.Comm.Layers)), float64(c.layers)}, {"gradient bytes", grad, c.gradients},
			{"per sample", float64(cfg.Compute.PerSample), float64(law.PerSample)}, {"fixed", float64(cfg.Compute.Fixed), float64(law.Fixed)},
			// momentum fp32: 20 bytes per parameter at 732 GB/s.
			{"update", float64(cfg.Compute.Update), 25557032 * 20 / 732e9},
		} {
			if math.Abs(x.got-x.want) > 1e-9*math.Abs(x.want) {
				t.Errorf("%s: %s %v, want %v", c.scenario, x.name, x.got, x.want)
			}
		}
	}
}

// TestBuildErrors checks that what the simulator cannot run is an error:
// a transport limited to the node between nodes, a device count the
// system does not have (through the scenario's own checks), an unloaded
// calibration file.
func TestBuildErrors(t *testing.T) {
	r, err := Load("tsubame3-resnet50-caffe2-verbs", Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.Parallelism.Transport = "nccl"
	if _, err := r.Build(r.Points()[3]); err == nil || !strings.Contains(err.Error(), `transport "nccl" of system "tsubame3" works only inside a node`) {
		t.Errorf("nccl between nodes: %v", err)
	}
	if _, err := r.Build(r.Points()[1]); err != nil {
		t.Errorf("nccl inside one node: %v", err)
	}
	_, err = Load("tsubame3-resnet50-caffe2-verbs", Options{Edit: func(s *Scenario) { s.Sweep.Devices = []int{4096} }})
	if err == nil || !strings.Contains(err.Error(), "4096 devices need 1024 nodes of 4 devices; system \"tsubame3\" has 540") {
		t.Errorf("4096 devices on tsubame3: %v", err)
	}
	r, _ = Load("seed003-resnet50-2gpu-nop2p", Options{})
	r.Calibration = &Calibration{File: "calib.yaml", Devices: 1}
	if _, err := r.Build(r.Points()[0]); err == nil || !strings.Contains(err.Error(), "calib.yaml is not loaded") {
		t.Errorf("unloaded calibration: %v", err)
	}
	r, _ = Load("seed003-resnet50-2gpu-nop2p", Options{})
	r.Calibration = nil
	r.Sweep.Batch = []int{4096}
	c, err := r.Build(r.Points()[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sim.Run(c); !errors.Is(err, sim.ErrMemory) || !strings.Contains(err.Error(), "resnet50 at batch 4096 on 1 device needs") || !strings.Contains(err.Error(), "the largest batch that fits is") {
		t.Errorf("batch 4096 on a 32 GB GPU: %v", err)
	}
}

// simulate returns the simulated global throughput of each point of r.
func simulate(t testing.TB, r *Resolved, devices int) (batches, perSec []float64, results []*sim.Result) {
	for _, p := range r.Points() {
		if p.Devices != devices {
			continue
		}
		res := buildRun(t, r, p)
		batches = append(batches, float64(p.GlobalBatch))
		perSec = append(perSec, res.SamplesPerSec)
		results = append(results, res)
	}
	return batches, perSec, results
}

// fitLaw fits v = B/(B/v0 + t) by the linear regression
//
//	1/v = 1/v0 + t·(1/B)
//
// (stat.LinearRegression, unweighted).
func fitLaw(B, v []float64) (v0 float64, tc units.Seconds) {
	x, y := make([]float64, len(B)), make([]float64, len(B))
	for i := range B {
		x[i], y[i] = 1/B[i], 1/v[i]
	}
	a, b := stat.LinearRegression(x, y, nil, false)
	return 1 / a, units.Seconds(b)
}

// TestSeed003 reproduces seed 003: a GPU calibrated alone (v0 = 258.1
// samples/s, t = 54 ms) and two such GPUs without peer-to-peer access,
// whose ResNet-50 gradients are reduced through host memory over PCIe 3.0
// x16. The simulated 2-GPU sweep (batches 8 to 256 per GPU) fits back to a
// cost time within 25 % of the published 0.15 s, and the 1-GPU sweep to
// the calibration itself.
func TestSeed003(t *testing.T) {
	r, err := Load("seed003-resnet50-2gpu-nop2p", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		devices int
		v0      float64
		v0Tol   float64
		t       float64
		tTol    float64
	}{
		{1, 258.1, 1e-9, 0.054, 1e-9},
		{2, 513.8, 0.02, 0.15, 0.25},
	} {
		B, v, _ := simulate(t, r, c.devices)
		if len(B) != 6 {
			t.Fatalf("%d devices: %d points, want 6", c.devices, len(B))
		}
		v0, tc := fitLaw(B, v)
		t.Logf("%d GPUs: fitted v0 = %.1f samples/s, t = %.4f s (published v0 = %v, t = %v)", c.devices, v0, float64(tc), c.v0, c.t)
		if math.Abs(v0-c.v0) > c.v0Tol*c.v0 || math.Abs(float64(tc)-c.t) > c.tTol*c.t {
			t.Errorf("%d GPUs: fitted v0 = %v, t = %v; want %v ± %v %%, %v ± %v %%", c.devices, v0, float64(tc), c.v0, 100*c.v0Tol, c.t, 100*c.tTol)
		}
	}
}

// seed001 is Table 2 of seed 001: Caffe2's time to 90 epochs in seconds
// on 1, 4, 32 and 128 GPUs of TSUBAME 3.0.
var seed001 = []struct {
	row       string
	scenario  string
	published [4]float64
}{
	{"(a) default", "tsubame3-resnet50-caffe2-default", [4]float64{604987, 154931, 44862, 135905}},
	{"(b) staged", "tsubame3-resnet50-caffe2-staged", [4]float64{593992, 88185, 21111, 10089}},
	{"(c) staged + verbs", "tsubame3-resnet50-caffe2-verbs", [4]float64{608629, 152852, 21774, 5989}},
}

// predictSeed001 returns the predicted times to 90 epochs of every cell of
// Table 2: compute calibrated from the row's 1-GPU time alone (v0 = 90
// epochs × 1,281,167 images / time, t = 0), steps × steady-state step time
// plus staging.
func predictSeed001(t testing.TB) [3][4]float64 {
	var out [3][4]float64
	for i, row := range seed001 {
		r, err := Load(row.scenario, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r.Calibration = &Calibration{V0: 90 * float64(r.Data.TrainSamples) / row.published[0], T: 0, Devices: 1}
		for j, p := range r.Points() {
			res := buildRun(t, r, p)
			out[i][j] = float64(r.Rcp.Steps(p.GlobalBatch))*float64(res.StepTime) + float64(res.Staging)
		}
	}
	return out
}

// TestSeed001 reproduces the shape of seed 001's Table 2 with the
// catalogue's TSUBAME 3.0 figures: (a) 128 GPUs are slower than 32
// because of the shared database file; (b) staging removes that; (c)
// verbs beat IPoIB at 128 GPUs. It also bounds the error of the cells the
// model explains (docs/validation.md).
func TestSeed001(t *testing.T) {
	pred := predictSeed001(t)
	gpus := [4]int{1, 4, 32, 128}
	for i, row := range seed001 {
		for j := range 4 {
			t.Logf("%-20s %3d GPUs: predicted %7.0f s, published %7.0f s, error %+6.1f %%", row.row, gpus[j], pred[i][j], row.published[j], 100*(pred[i][j]/row.published[j]-1))
		}
	}
	a, b, c := pred[0], pred[1], pred[2]
	if !(a[3] > a[2]) {
		t.Errorf("(a): 128 GPUs take %.0f s, not more than 32 GPUs' %.0f s", a[3], a[2])
	}
	if !(b[3] < b[2] && b[3] < a[3]/4) {
		t.Errorf("(b): staging leaves 128 GPUs at %.0f s (32 GPUs %.0f s, (a) %.0f s)", b[3], b[2], a[3])
	}
	if !(c[3] < b[3]) {
		t.Errorf("(c): verbs at 128 GPUs take %.0f s, not less than IPoIB's %.0f s", c[3], b[3])
	}
	// Cells the model explains, within 25 %; docs/validation-tsubame.md
	// discusses the two it does not (TestSeed001RowB): (b) at 4 GPUs, faster
	// than the 1-GPU rate allows, and (b) at 128 GPUs, where IPoIB collapses
	// beyond what any bandwidth and latency bounded by 32 GPUs show.
	for i := range 3 {
		for j := range 4 {
			if (i == 1 && (j == 1 || j == 3)) || j == 0 {
				continue
			}
			if e := pred[i][j]/seed001[i].published[j] - 1; math.Abs(e) > 0.25 {
				t.Errorf("%s at %d GPUs: predicted %.0f s, published %.0f s (%+.1f %%)", seed001[i].row, gpus[j], pred[i][j], seed001[i].published[j], 100*e)
			}
		}
	}
}

// BenchmarkSimulate times what `scaleplan simulate` does for each shipped
// scenario: load, build and simulate every point of the sweep.
func BenchmarkSimulate(b *testing.B) {
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				r, err := Load(name, Options{})
				if err != nil {
					b.Fatal(err)
				}
				for _, p := range r.Points() {
					c, err := r.Build(p)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := sim.Run(c); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

func ExampleResolved_Build() {
	r, err := Load("tsubame3-resnet50-caffe2-verbs", Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	p := r.Points()[3] // 128 GPUs
	c, err := r.Build(p)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := sim.Run(c)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d GPUs on %d nodes, global batch %d: step %v, %.0f images/s, staging %v\n",
		res.Devices, res.Nodes, res.GlobalBatch, res.StepTime, res.SamplesPerSec, res.Staging)
	// Output:
	// 128 GPUs on 32 nodes, global batch 4096: step 121.5 ms, 33698 images/s, staging 78.29 s
}

// TestDecodeOnDevice: with decode on the device the host's cores do not
// decode, the host copies the stored bytes, and the device's compute per
// sample grows by device_decode.
func TestDecodeOnDevice(t *testing.T) {
	build := func(edit func(*Scenario)) sim.Config { return buildFirst(t, "dgx1-resnet50-mlperf-v0.7", edit) }
	host := build(func(s *Scenario) { s.Input.Decode = "host" })
	dev := build(nil) // the scenario decodes on the device
	slow := build(func(s *Scenario) { s.Input.DeviceDecode = units.Millisecond })
	if !(host.Input.Decode > 0) || host.Input.Cores != 40 || host.Input.Copy != 224*224*3*4 {
		t.Errorf("host decode: decode %v on %d cores, copy %v; want > 0 on 40 cores, 602112 B", host.Input.Decode, host.Input.Cores, host.Input.Copy)
	}
	if dev.Input.Decode != 0 || dev.Input.Copy != 110*units.KB || dev.Compute.PerSample != host.Compute.PerSample {
		t.Errorf("device decode: decode %v, copy %v, per sample %v; want 0, 110 kB, %v", dev.Input.Decode, dev.Input.Copy, dev.Compute.PerSample, host.Compute.PerSample)
	}
	if want := host.Compute.PerSample + units.Millisecond; slow.Compute.PerSample != want {
		t.Errorf("device_decode 1 ms: per sample %v, want %v", slow.Compute.PerSample, want)
	}
	// Host decoding binds the DGX-1 (7,040 images/s on 40 cores); on the
	// device the step is the GPUs' compute.
	rh, rd := mustRun(t, host), mustRun(t, dev)
	if !(rh.Breakdown.Input > 0) || rd.Breakdown.Input != 0 || !(rd.SamplesPerSec > rh.SamplesPerSec) {
		t.Errorf("exposed input %v (host) and %v (device), samples/s %v and %v", rh.Breakdown.Input, rd.Breakdown.Input, rh.SamplesPerSec, rd.SamplesPerSec)
	}
	for _, tc := range []struct {
		edit func(*Scenario)
		msg  string
	}{
		{func(s *Scenario) { s.Input.Decode = "gpu" }, `input.decode: unknown decode site "gpu"`},
		{func(s *Scenario) { s.Input.Decode, s.Input.DeviceDecode = "host", units.Millisecond }, "input.device_decode: is the device's decode time; it needs decode: device"},
		{func(s *Scenario) { s.Input.DeviceDecode = -units.Millisecond }, "input.device_decode: must be a finite time >= 0"},
		{func(s *Scenario) { s.Input.Workers = 4 }, "input.workers: are the host's decoding processes; they need decode: host"},
		{func(s *Scenario) { s.Input.Decode, s.Input.Workers = "host", -1 }, "input.workers: must be 0 (the node's cores) to 4096"},
	} {
		if _, err := Load("dgx1-resnet50-mlperf-v0.7", Options{Edit: tc.edit}); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("got %v, want %q", err, tc.msg)
		}
	}
}

// TestDecodeWorkers: input.workers processes per device decode on a
// node's cores, Workers × devices of them where fewer than the cores: two
// per GPU on a DGX-1 are 16 of its 40 cores, which run at the clock of 16
// busy cores, between the E5-2698 v4's 3.6 GHz boost and 2.2 GHz base
// (3.6 − 1.4·15/39 GHz), against 2.2 GHz with all 40 busy: its host-bound
// step takes 40/16 · 2.2/f(16) times as long.
func TestDecodeWorkers(t *testing.T) {
	build := func(w int) sim.Config {
		return buildFirst(t, "dgx1-resnet50-mlperf-v0.7", func(s *Scenario) { s.Input.Decode, s.Input.Workers = "host", w })
	}
	all, two := build(0), build(2)
	if all.Input.Workers != 0 || two.Input.Workers != 2*two.DevicesPerNode || two.Input.DecodeParallelism() != 16 || all.Input.DecodeParallelism() != 40 {
		t.Fatalf("workers %d and %d, parallelism %v and %v; want 0 and 16, 40 and 16",
			all.Input.Workers, two.Input.Workers, all.Input.DecodeParallelism(), two.Input.DecodeParallelism())
	}
	ra, rt := mustRun(t, all), mustRun(t, two)
	f16 := 3.6 - 1.4*15/39
	if got, want := float64(rt.StepTime)/float64(ra.StepTime), 40.0/16*2.2/f16; math.Abs(got-want) > 1e-6 {
		t.Errorf("step with 16 workers / step on 40 cores = %v, want %v (both host-bound)", got, want)
	}
	// Every worker on a thread: 64 workers per GPU are 512 processes on
	// the DGX-1's 80 threads, 40 cores and 40 second threads at SMTYield.
	many := build(64)
	if p := many.Input.DecodeParallelism(); math.Abs(p-(40+40*SMTYield)) > 1e-12 {
		t.Errorf("512 workers: %v cores' worth, want %v", p, 40+40*SMTYield)
	}
}

// mustRun simulates c, failing the test on an error.
func mustRun(t testing.TB, c sim.Config) *sim.Result {
	t.Helper()
	res, err := sim.Run(c)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// buildRun builds point p of r and simulates it, failing the test on an
// error.
func buildRun(t testing.TB, r *Resolved, p Point) *sim.Result {
	t.Helper()
	c, err := r.Build(p)
	if err != nil {
		t.Fatal(err)
	}
	return mustRun(t, c)
}

// buildFirst loads the shipped scenario name with edit applied and builds
// the simulator configuration of its first point.
func buildFirst(t *testing.T, name string, edit func(*Scenario)) sim.Config {
	t.Helper()
	r, err := Load(name, Options{Edit: edit})
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.Build(r.Points()[0])
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPageCache checks the page cache's hit fraction: min(1,
// PageCacheShare·memory/data set) for local storage, 0 with page_cache:
// off or another storage, and the GX2570 M5 (384 GB) holding ImageNet
// (1,281,167 × 110 kB = 140.9 GB) whole.
func TestPageCache(t *testing.T) {
	for _, c := range []struct {
		mem     units.Bytes
		samples int64
		bytes   units.Bytes
		want    float64
	}{
		{384 * units.GB, 1281167, 110 * units.KB, 1},
		{100 * units.GB, 1000, 100 * units.MB, 0.5}, // 50 GB of a 100 GB set
		{100 * units.GB, 0, 100 * units.MB, 0},
		{0, 1000, 100 * units.MB, 0},
	} {
		if got := CacheHit(c.mem, units.Bytes(float64(c.samples)*float64(c.bytes))); !(math.Abs(got-c.want) < 1e-12) {
			t.Errorf("CacheHit(%v, %d, %v) = %v, want %v", c.mem, c.samples, c.bytes, got, c.want)
		}
	}
	hit := func(edit func(*Scenario)) float64 {
		return buildFirst(t, "zinrai-200h-resnet50-mlperf-v0.7", edit).Input.CacheHit
	}
	if h := hit(nil); h != 1 {
		t.Errorf("GX2570 M5: hit %v, want 1", h)
	}
	if h := hit(func(s *Scenario) { s.Input.PageCache = "off" }); h != 0 {
		t.Errorf("page_cache off: hit %v, want 0", h)
	}
	if h := hit(func(s *Scenario) { s.Input.Storage = "synthetic" }); h != 0 {
		t.Errorf("synthetic input: hit %v, want 0", h)
	}
	_, err := Load("zinrai-200h-resnet50-mlperf-v0.7", Options{Edit: func(s *Scenario) { s.Input.PageCache = "on" }})
	if err == nil || !strings.Contains(err.Error(), `input.page_cache: unknown page cache mode "on"`) || !strings.Contains(err.Error(), "off") {
		t.Errorf("page_cache on: %v", err)
	}
}

// TestInterNode: parallelism.inter_node sets hierarchical's all-reduce
// between nodes. On 448 nodes of 8 H100s (coreweave-h100), one byte's
// all-reduce is the latency of its steps: a reduce-scatter and an
// all-gather of k−1 = 7 steps each inside a node, at an NVLink hop's 2 µs
// plus NCCL's 5 µs overhead, and between nodes a ring's 2(n−1) = 894 steps,
// or a double tree's 2⌊log2 n⌋ = 16 ticks, at NDR's 1 µs plus verbs' 1 µs
// (the catalogue's figures).
func TestInterNode(t *testing.T) {
	const intra, inter = 7e-6, 2e-6
	for _, tc := range []struct {
		interNode string
		want      sim.Algorithm
		steps     float64 // between nodes
	}{{"", sim.Ring, 2 * 447}, {"ring", sim.Ring, 2 * 447}, {"double-tree", sim.DoubleTree, 2 * 8}, {"tree", sim.Tree, 2 * 8}} {
		c := buildFirst(t, "coreweave-h100-resnet50-mlperf-v3.1", func(s *Scenario) {
			s.Sweep.Devices = []int{3584}
			s.Parallelism.AllReduce = "hierarchical" // the shipped scenario runs nccl
			s.Parallelism.InterNode = tc.interNode
		})
		got, err := sim.AllReduceTime(c, 1)
		if want := 2*7*intra + tc.steps*inter; err != nil || c.Comm.InterNode != tc.want || math.Abs(float64(got)-want) > 1e-3*want {
			t.Errorf("inter_node %q: %v between nodes, one byte in %v (%v); want %v, %v s", tc.interNode, c.Comm.InterNode, got, err, tc.want, want)
		}
	}
}

// TestExchangeName: tables name hierarchical's all-reduce between nodes
// when it is not the default ring.
func TestExchangeName(t *testing.T) {
	for _, tc := range []struct{ alg, inter, want string }{
		{"ring", "ring", "ring"},
		{"hierarchical", "ring", "hierarchical"},
		{"hierarchical", "", "hierarchical"},
		{"hierarchical", "double-tree", "hierarchical, double-tree between nodes"},
	} {
		p := Parallelism{AllReduce: tc.alg, InterNode: tc.inter}
		if got := p.Exchange(); got != tc.want {
			t.Errorf("%s with %q: %q, want %q", tc.alg, tc.inter, got, tc.want)
		}
	}
}

// TestNCCLOverrides: allreduce nccl with parallelism.nccl_algo and
// nccl_proto fixed runs that pair. On one node of 8 H100s with ring and
// Simple fixed, one byte's all-reduce is NCCL v2.30.7's ring Simple base
// latency and 14 NVLink hops (tuning.cc: 8.4 µs + 14·3.4 µs = 56 µs), not
// the catalogue's link latency; unknown names, and overrides without the
// nccl exchange, are errors naming the valid choices.
func TestNCCLOverrides(t *testing.T) {
	load := func(alg, algo, proto string) (sim.Config, error) {
		r, err := Load("coreweave-h100-resnet50-mlperf-v3.1", Options{Edit: func(s *Scenario) {
			s.Sweep.Devices = []int{8}
			s.Parallelism.AllReduce, s.Parallelism.NCCLAlgo, s.Parallelism.NCCLProto = alg, algo, proto
		}})
		if err != nil {
			return sim.Config{}, err
		}
		return r.Build(r.Points()[0])
	}
	c, err := load("nccl", "ring", "simple")
	if err != nil {
		t.Fatal(err)
	}
	got, err := sim.AllReduceTime(c, 1)
	if want := 56e-6; err != nil || math.Abs(float64(got)-want) > 1e-3*want {
		t.Errorf("nccl ring/simple, one byte: %v (%v), want %v s", got, err, want)
	}
	for _, tc := range []struct{ alg, algo, proto, want string }{
		{"nccl", "rings", "", `parallelism.nccl_algo: unknown NCCL algorithm "rings"`},
		{"nccl", "", "LL", `parallelism.nccl_proto: unknown NCCL protocol "LL"`},
		{"ring", "tree", "", `parallelism.nccl_algo: "tree" fixes the nccl exchange's choice`},
	} {
		_, err := load(tc.alg, tc.algo, tc.proto)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %q %q: %v, want %q", tc.alg, tc.algo, tc.proto, err, tc.want)
		}
	}
	if _, err := load("nccl", "", "fast"); err == nil || !strings.Contains(err.Error(), "ll128") {
		t.Errorf("protocol fast: %v, want the valid choices named", err)
	}
}

// TestNCCLIntraPCI: a node whose devices talk over PCIe (zinrai-200e-t4x4,
// link kind pcie) is NCCL's PCI link class: one byte's ring Simple
// all-reduce on its 4 T4s is NCCL v2.30.7's 8.4 µs base and 6 PCI hops of
// 5.7 µs (tuning.cc), 42.6 µs in all, and NCCL's choice never takes LL128.
func TestNCCLIntraPCI(t *testing.T) {
	load := func(proto string) sim.Config {
		return buildFirst(t, "coreweave-h100-resnet50-mlperf-v3.1", func(s *Scenario) {
			s.System, s.Sweep.Devices = "zinrai-200e-t4x4", []int{4}
			s.Parallelism.AllReduce, s.Parallelism.NCCLAlgo, s.Parallelism.NCCLProto = "nccl", "ring", proto
			s.Parallelism.Transport = ""
		})
	}
	c := load("simple")
	if !c.Network.IntraPCI {
		t.Fatal("pcie node: IntraPCI not set")
	}
	got, err := sim.AllReduceTime(c, 1)
	if want := 42.6e-6; err != nil || math.Abs(float64(got)-want) > 1e-3*want {
		t.Errorf("ring/simple, one byte: %v (%v), want %v s", got, err, want)
	}
	auto := load("")
	for _, S := range []units.Bytes{1, 1 << 20, 1 << 30} {
		a, err1 := sim.AllReduceTime(auto, S)
		c.Comm.NCCLProto = "ll128"
		l, err2 := sim.AllReduceTime(c, S)
		if err1 != nil || err2 != nil || a == l {
			t.Errorf("%v: auto %v (%v), ll128 %v (%v): want auto not LL128", S, a, err1, l, err2)
		}
	}
}

// TestTCPXOAllNICs: GPUDirect-TCPXO (gcp-a3-mega's default transport
// between nodes) drives every GPU NIC of a node, 8 of 200 Gbit/s at 0.94
// of the line (catalogue), where tcp is one kernel stream through one NIC;
// and its plugin's environment profile (NCCL_PROTO=Simple,
// NCCL_NVLS_ENABLE=0, NCCL_BUFFSIZE=8388608) reaches the network, where
// tcp leaves the node's NVLS and NCCL's defaults.
func TestTCPXOAllNICs(t *testing.T) {
	cat, err := hw.Load()
	if err != nil {
		t.Fatal(err)
	}
	p := Point{Devices: 16, Nodes: 2, DevicesPerNode: 8, Replicas: 16, BatchPerDevice: 1, GlobalBatch: 16}
	for _, tc := range []struct {
		transport string
		nics      int
		profile   bool // the TCPXO plugin's NCCL environment
	}{{"", 8, true}, {"tcpxo", 8, true}, {"tcp", 1, false}} {
		var c sim.Config
		used, _, err := Network(cat, "gcp-a3-mega", Parallelism{Transport: tc.transport}, &c, p)
		if err != nil {
			t.Fatalf("%q: %v", tc.transport, err)
		}
		if c.Network.NICs != tc.nics || c.Network.NIC.Bandwidth != 25e9 || c.Network.Efficiency != 0.94 {
			t.Errorf("%q (used %s): %d NICs of %v B/s at %v, want %d of 25e9 at 0.94", tc.transport, used, c.Network.NICs, float64(c.Network.NIC.Bandwidth), c.Network.Efficiency, tc.nics)
		}
		n := c.Network
		if got := slices.Equal(n.NetProtocols, []string{"simple"}) && !n.NVLS && n.NCCLBuffSize == 8*units.MiB; got != tc.profile {
			t.Errorf("%q: protocols %q, NVLS %v, buffer %v: profile %v, want %v", tc.transport, n.NetProtocols, n.NVLS, n.NCCLBuffSize, got, tc.profile)
		}
		if !tc.profile && (!n.NVLS || n.NCCLBuffSize != 0 || n.NetProtocols != nil) {
			t.Errorf("%q: NVLS %v, buffer %v, protocols %q: want the node's NVLS and NCCL's defaults", tc.transport, n.NVLS, n.NCCLBuffSize, n.NetProtocols)
		}
	}
}

// TestDefaultAllReduce: a scenario that sets no allreduce runs nccl on
// NVIDIA GPUs of a system with an nccl transport (dgx1), ring elsewhere
// (an IPU-POD, whose devices are not GPUs); one that sets it keeps it.
func TestDefaultAllReduce(t *testing.T) {
	for _, tc := range []struct{ name, system, set, want string }{
		{"dgx1-ssd-mlperf-v0.7", "", "", "nccl"},
		{"dgx1-ssd-mlperf-v0.7", "", "hierarchical", "hierarchical"},
		{"ipu-pod16-efficientnet-b4", "", "", "ring"},
	} {
		r, err := Load(tc.name, Options{Edit: func(s *Scenario) { s.Parallelism.AllReduce = tc.set }})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Scenario.Parallelism.AllReduce; got != tc.want {
			t.Errorf("%s, allreduce %q: %q, want %q", tc.name, tc.set, got, tc.want)
		}
	}
}

// TestNCCLNVLS: a dgx-h100 node's in_network_reduction reaches the network
// as NVLS, and one node's 8 ranks run NVLS as netsim's closed form says:
// T = 25 µs + S/(8·b·8/14) (NCCL v2.30.7 tuning.cc: NVLS latency 25 µs;
// the NVLS graph's 8 channels of b = min(2·0.85·40·7/8, 60) = 59.5 GB/s,
// 40 GB/s the fastest sm90 speed a port of β = 360 GB/s, the catalogue's
// 450 GB/s of NVLink at 80 %, carries 9 times); NCCL's own choice takes it
// for 1 GiB.
func TestNCCLNVLS(t *testing.T) {
	load := func(algo string) sim.Config {
		return buildFirst(t, "coreweave-h100-resnet50-mlperf-v3.1", func(s *Scenario) {
			s.Sweep.Devices = []int{8}
			s.Parallelism.AllReduce, s.Parallelism.NCCLAlgo, s.Parallelism.NCCLProto = "nccl", algo, ""
		})
	}
	c := load("nvls")
	if !c.Network.NVLS {
		t.Fatal("dgx-h100: NVLS not set")
	}
	const S = units.GiB
	if beta := c.Network.Intra.Bandwidth; math.Abs(float64(beta)/360e9-1) > 1e-9 {
		t.Fatalf("dgx-h100: NVLink %v a device, want 360 GB/s", beta)
	}
	want := 25e-6 + float64(S)/(8*59.5e9*8/14)
	got, err := sim.AllReduceTime(c, S)
	if err != nil || math.Abs(float64(got)-want) > 1e-3*want {
		t.Errorf("nvls, 1 GiB: %v (%v), want %v s", got, err, want)
	}
	auto, err := sim.AllReduceTime(load(""), S)
	if err != nil || auto != got {
		t.Errorf("auto, 1 GiB: %v (%v), want nvls's %v", auto, err, got)
	}
}

// TestBuildHost checks that Options.Host reaches the operator model: a
// scenario computed by operators takes the law compute.LawAt gives with
// that host's costs, and a host whose CUDA operator costs far more than
// the published 4.2 µs makes its step longer where the host bounds it.
func TestBuildHost(t *testing.T) {
	host := compute.MeasuredHost
	host.Kernel = 1e-3 // a host-bound step on any device
	r, err := Load("tsubame3-resnet50-caffe2-default", Options{Host: &host})
	if err != nil {
		t.Fatal(err)
	}
	if !r.OperatorCompute() || r.Host != &host {
		t.Fatalf("compute by operators %v, host %p: want by operators with %p", r.OperatorCompute(), r.Host, &host)
	}
	p := r.Points()[0]
	cfg, err := r.Build(p)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := compute.LawAt(compute.Config{Device: r.Device, Precision: hw.FP32, Mode: compute.Eager, Host: &host}, "resnet50", p.BatchPerDevice)
	if err != nil {
		t.Fatal(err)
	}
	base, err := compute.LawAt(compute.Config{Device: r.Device, Precision: hw.FP32, Mode: compute.Eager}, "resnet50", p.BatchPerDevice)
	if err != nil {
		t.Fatal(err)
	}
	step := func(l compute.Law) float64 { return float64(l.PerSample)*float64(p.BatchPerDevice) + float64(l.Fixed) }
	if got, want := float64(cfg.Compute.PerSample)*float64(p.BatchPerDevice)+float64(cfg.Compute.Fixed), step(slow); math.Abs(got-want) > 1e-9*want {
		t.Errorf("step %v s, the law with the host's costs %v s", got, want)
	}
	if !(step(slow) > step(base)) {
		t.Errorf("step with a 1 ms kernel %v s, with 4.2 µs %v s: want longer", step(slow), step(base))
	}
}
