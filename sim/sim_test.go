package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"scaleplan/internal/units"
)

func near(got, want, tol float64) bool {
	if want == 0 {
		return math.Abs(got) <= tol
	}
	return math.Abs(got-want) <= tol*math.Abs(want)
}

// runChecked runs c, failing the test on an error, and checks the
// result's sums (checkSums).
func runChecked(t *testing.T, c Config) *Result {
	t.Helper()
	res, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	checkSums(t, res)
	return res
}

// checkSums checks that every step's breakdown sums to its time with no
// negative part, and that the utilisation is in [0, 1]: Run clamps the
// Utilisation it reports to [0, 1] against rounding, so the check is on
// the unclamped compute fraction, which the reported value must equal.
func checkSums(t *testing.T, res *Result) {
	t.Helper()
	for i, s := range res.Steps {
		if !near(float64(s.Breakdown.Total()), float64(s.Time()), 1e-9) {
			t.Errorf("step %d: breakdown %+v sums to %v, step is %v", i, s.Breakdown, s.Breakdown.Total(), s.Time())
		}
		if err := checkParts(s.Breakdown, s.Time()); err != nil {
			t.Errorf("step %d: %v", i, err)
		}
	}
	if !near(float64(res.Breakdown.Total()), float64(res.StepTime), 1e-9) {
		t.Errorf("breakdown %+v sums to %v, step time %v", res.Breakdown, res.Breakdown.Total(), res.StepTime)
	}
	if err := checkParts(res.Breakdown, res.StepTime); err != nil {
		t.Error(err)
	}
	if !(res.Utilisation >= 0 && res.Utilisation <= 1) {
		t.Errorf("utilisation %v outside [0, 1]", res.Utilisation)
	}
	if res.StepTime > 0 {
		if u := float64(res.Breakdown.Compute / res.StepTime); math.Abs(u-res.Utilisation) > 1e-9 {
			t.Errorf("utilisation %v, but compute is %v of the step", res.Utilisation, u)
		}
	}
}

// checkParts reports a part of b that is negative, or a compute part (the
// utilisation times T) outside [0, T], beyond rounding.
func checkParts(b Breakdown, T units.Seconds) error {
	eps := 1e-9 * float64(T)
	for _, p := range []struct {
		name string
		v    units.Seconds
	}{{"compute", b.Compute}, {"comm", b.Comm}, {"input", b.Input}, {"bubble", b.Bubble}, {"straggler", b.Straggler}} {
		if !(float64(p.v) >= -eps) {
			return fmt.Errorf("breakdown %+v: %s %v is negative", b, p.name, p.v)
		}
	}
	if !(float64(b.Compute) <= float64(T)+eps) {
		return fmt.Errorf("compute %v is more than the step %v: utilisation %v", b.Compute, T, float64(b.Compute/T))
	}
	return nil
}

// TestCalibratedStep checks the compute law on one device: a step of b
// samples takes b·PerSample + Fixed + Update.
func TestCalibratedStep(t *testing.T) {
	for _, c := range []struct {
		b           int
		ps, fix, up units.Seconds
		acc         int
	}{
		{8, 1 / 258.1, 0.054, 0, 1},
		{256, 1 / 258.1, 0.053, 0.001, 1},
		{32, 5e-3, 0, 0.7e-3, 4},
		{1, 1e-6, 1e-3, 1e-4, 3},
	} {
		res, err := Run(Config{Nodes: 1, DevicesPerNode: 1, MicroBatch: c.b, Accumulation: c.acc, Compute: Compute{PerSample: c.ps, Fixed: c.fix, Update: c.up}})
		if err != nil {
			t.Fatal(err)
		}
		want := float64(c.acc)*(float64(c.b)*float64(c.ps)+float64(c.fix)) + float64(c.up)
		if !near(float64(res.StepTime), want, 1e-12) {
			t.Errorf("b=%d: step %v, want %v", c.b, float64(res.StepTime), want)
		}
		if !near(res.Utilisation, 1, 1e-12) {
			t.Errorf("b=%d: utilisation %v, want 1", c.b, res.Utilisation)
		}
		checkSums(t, res)
	}
}

// hierarchicalTime is netsim's closed form of a hierarchical all-reduce
// with a ring between nodes on an idle network.
func hierarchicalTime(k, N int, S, ai, bi, an, bn float64) float64 {
	return 2*float64(k-1)*(ai+S/(float64(k)*bi)) + 2*float64(N-1)*(an+S/(float64(k*N)*bn))
}

// TestNICSharing checks that the four devices of a node sharing one NIC
// see the exposed communication of the closed form with a quarter of the
// NIC per stream, against a NIC per device.
func TestNICSharing(t *testing.T) {
	const (
		k, N      = 4, 2
		S         = 100 * units.MB
		intra     = 60 * units.GBps
		nic       = 12.5 * units.GBps
		eff       = 0.9
		nicLat    = 1.5 * units.Microsecond
		fabricLat = 0.5 * units.Microsecond
		over      = 2 * units.Microsecond
		intraLat  = 2 * units.Microsecond
	)
	exposed := map[int]float64{}
	for _, nics := range []int{1, 4} {
		c := Config{Nodes: N, DevicesPerNode: k, MicroBatch: 32, Compute: Compute{PerSample: 1e-3},
			Memory: Memory{Gradients: S}, Comm: Comm{Algorithm: Hierarchical, Bucket: S},
			Network: Network{Intra: Link{intra, intraLat}, NICs: nics, NIC: Link{nic, nicLat}, FabricLatency: fabricLat, Efficiency: eff, Overhead: over}}
		res, err := Run(c)
		if err != nil {
			t.Fatal(err)
		}
		checkSums(t, res)
		bn := float64(nics) * eff * float64(nic) / k
		want := hierarchicalTime(k, N, float64(S), float64(intraLat), float64(intra), float64(nicLat+fabricLat+over), bn)
		if !near(float64(res.Breakdown.Comm), want, 1e-9) {
			t.Errorf("%d NICs: exposed communication %v, want %v", nics, float64(res.Breakdown.Comm), want)
		}
		exposed[nics] = float64(res.Breakdown.Comm)
	}
	// The inter-node phase moves 2(N-1)/(kN)·S per stream; one NIC for four
	// streams makes it four times slower.
	inter := 2 * float64(N-1) / float64(k*N) * float64(S) / (eff * float64(nic) / k)
	if got, want := exposed[1]-exposed[4], inter*(1-1.0/4); !near(got, want, 1e-9) {
		t.Errorf("sharing one NIC adds %v s of exposed communication, want %v", got, want)
	}
}

// TestOverlap checks that gradient buckets overlap the backward pass: with
// buckets released in proportion to the gradient bytes and a network fast
// enough to keep up, only the last bucket's all-reduce is exposed.
func TestOverlap(t *testing.T) {
	const per = 25 * units.MB
	layers := []units.Bytes{per, per, per, per}
	c := Config{Nodes: 2, DevicesPerNode: 1, MicroBatch: 64, Compute: Compute{PerSample: 4e-3},
		Memory: Memory{Gradients: 4 * per}, Comm: Comm{Algorithm: Ring, Layers: layers, Bucket: per},
		Network: Network{NIC: Link{Bandwidth: 10 * units.GBps}}}
	res, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	checkSums(t, res)
	// Ring on 2 ranks: 2 steps of S/2, each S/2/B.
	want := float64(per) / 10e9
	if !near(float64(res.Breakdown.Comm), want, 1e-9) {
		t.Errorf("exposed communication %v, want the last bucket's %v", float64(res.Breakdown.Comm), want)
	}
	c.Comm.NoOverlap = true
	res, err = Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := 4 * float64(per) / 10e9; !near(float64(res.Breakdown.Comm), want, 1e-9) {
		t.Errorf("without overlap: exposed communication %v, want the whole gradient's %v", float64(res.Breakdown.Comm), want)
	}
}

// TestStragglers checks synchronous steps against a serial reference:
// with no communication cost each step takes the slowest device's
// jittered compute plus the update, and the draws are lognormal from the
// seeded PCG in rank order.
func TestStragglers(t *testing.T) {
	const (
		R    = 16
		cv   = 0.1
		seed = 42
		f    = 0.3
		up   = 0.01
	)
	c := Config{Nodes: 4, DevicesPerNode: 4, MicroBatch: 1, Compute: Compute{PerSample: f, Update: up},
		Network: Network{Intra: Link{Bandwidth: 1e12}, NIC: Link{Bandwidth: 1e12}}, Jitter: cv, Seed: seed, Steps: 20}
	res, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	checkSums(t, res)
	rng := rand.New(rand.NewPCG(seed, jitterStream))
	sigma := math.Sqrt(math.Log1p(cv * cv))
	var straggler float64
	for i, s := range res.Steps {
		var phi [R]float64
		worst := 0.0
		for r := range R {
			phi[r] = math.Exp(-sigma*sigma/2 + sigma*rng.NormFloat64())
			worst = max(worst, phi[r])
		}
		want := worst*f + up
		if !near(float64(s.Time()), want, 1e-9) {
			t.Errorf("step %d: %v, want %v", i, float64(s.Time()), want)
		}
		if i > 0 {
			mean := 0.0
			for _, p := range phi {
				mean += (worst - p) * f
			}
			straggler += mean / R
		}
	}
	if want := straggler / float64(len(res.Steps)-1); !near(float64(res.Breakdown.Straggler), want, 1e-9) {
		t.Errorf("straggler wait %v, want %v", float64(res.Breakdown.Straggler), want)
	}
	again, _ := Run(c)
	if again.StepTime != res.StepTime {
		t.Errorf("same seed, step %v then %v", res.StepTime, again.StepTime)
	}
	c.Seed++
	other, _ := Run(c)
	if other.StepTime == res.StepTime {
		t.Errorf("seeds %d and %d give the same step time", seed, seed+1)
	}
}

// TestInputBound checks the steady state of pipelines limited by each
// input stage: the step takes the slowest stage's time per micro-batch.
func TestInputBound(t *testing.T) {
	const b = 32
	base := Input{SampleBytes: 100 * units.KB, Local: 1 * units.GBps, Decode: 10e-3, Cores: 8, Copy: 1 * units.MB, HostToDevice: 10 * units.GBps}
	for _, c := range []struct {
		name string
		edit func(*Input)
		want float64 // seconds per step
	}{
		{"read", func(in *Input) { in.Local = 10e6 }, 4 * b * 100e3 / 10e6},
		{"decode", func(in *Input) { in.Decode = 1 }, 4 * b * 1.0 / 8},
		// 4 devices' DataLoaders of 1 worker each use 4 of the 8 cores.
		{"decode on workers", func(in *Input) { in.Decode, in.Workers = 1, 4 }, 4 * b * 1.0 / 4},
		// More workers than cores decode on the cores.
		{"decode on cores", func(in *Input) { in.Decode, in.Workers = 1, 64 }, 4 * b * 1.0 / 8},
		// 12 workers on 8 cores of 2 threads: 4 cores run two, each
		// adding 0.3 of a core: 8 + 4·0.3 cores' worth.
		{"decode on threads", func(in *Input) { in.Decode, in.Workers, in.Threads, in.SMTYield = 1, 12, 16, 0.3 }, 4 * b * 1.0 / 9.2},
		// 64 workers fill the 16 threads: 8 + 8·0.3.
		{"decode on all threads", func(in *Input) { in.Decode, in.Workers, in.Threads, in.SMTYield = 1, 64, 16, 0.3 }, 4 * b * 1.0 / 10.4},
		{"copy", func(in *Input) { in.HostToDevice = 10e6 }, b * 1e6 / 10e6},
	} {
		in := base
		in.Storage = Local
		c.edit(&in)
		res := runChecked(t, Config{Nodes: 2, DevicesPerNode: 4, MicroBatch: b, Compute: Compute{PerSample: 1e-4},
			Network: Network{Intra: Link{Bandwidth: 1e12}, NIC: Link{Bandwidth: 1e12}}, Input: in, Steps: 8})
		if !near(float64(res.StepTime), c.want, 1e-9) {
			t.Errorf("%s-bound: step %v, want %v", c.name, float64(res.StepTime), c.want)
		}
		if res.Breakdown.Input <= 0 {
			t.Errorf("%s-bound: no input wait in %+v", c.name, res.Breakdown)
		}
	}
}

// TestPageCache checks local reads through the page cache: with a hit
// fraction h a read-bound step reads (1−h) of its samples' bytes, and the
// first epoch adds ⌈Samples/B⌉·(cold read − step) at full bytes.
func TestPageCache(t *testing.T) {
	const (
		b       = 32
		per     = 4 // devices per node
		sample  = 100e3
		local   = 10e6 // bytes/s: a node reads 4·32 samples in 1.28 s
		compute = 0.5  // seconds per step
		samples = 10000
	)
	cold := per * b * sample / local
	for _, c := range []struct {
		hit, step float64
	}{
		{0, cold},
		{0.5, 0.5 * cold},
		{0.75, compute}, // 0.32 s of reads hide behind 0.5 s of compute
		{1, compute},
	} {
		in := Input{Storage: Local, SampleBytes: sample, Samples: samples, Local: local, CacheHit: c.hit}
		res := runChecked(t, Config{Nodes: 2, DevicesPerNode: per, MicroBatch: b, Compute: Compute{PerSample: compute / b},
			Network: Network{Intra: Link{Bandwidth: 1e15}, NIC: Link{Bandwidth: 1e15}}, Input: in, Steps: 8})
		if !near(float64(res.StepTime), c.step, 1e-6) {
			t.Errorf("hit %v: step %v, want %v", c.hit, float64(res.StepTime), c.step)
		}
		want := 0.0
		if c.hit > 0 {
			steps := math.Ceil(samples / float64(2*per*b))
			want = steps * max(0, cold-float64(res.StepTime))
		}
		if !near(float64(res.CacheWarmup), want, 1e-9) {
			t.Errorf("hit %v: cache warm-up %v, want %v", c.hit, float64(res.CacheWarmup), want)
		}
	}
	for _, hit := range []float64{-0.1, 1.5, math.NaN()} {
		in := Input{Storage: Local, SampleBytes: sample, Local: local, CacheHit: hit}
		if _, err := Run(Config{Nodes: 1, DevicesPerNode: 1, MicroBatch: b, Compute: Compute{PerSample: 1e-3}, Input: in, Steps: 2}); err == nil || !strings.Contains(err.Error(), "page cache") {
			t.Errorf("hit %v: error %v", hit, err)
		}
	}
	in := Input{Storage: Cached, SampleBytes: sample, CacheHit: 0.5}
	if _, err := Run(Config{Nodes: 1, DevicesPerNode: 1, MicroBatch: b, Compute: Compute{PerSample: 1e-3}, Input: in, Steps: 2}); err == nil || !strings.Contains(err.Error(), "local storage only") {
		t.Errorf("cache hit on cached storage: error %v", err)
	}
}

// TestSharedDB checks the serialized database: N nodes each reading n
// samples per step hold the file for n·(Service + PerReader·(N−1)) plus
// the transfer at the per-client bandwidth, one after another.
func TestSharedDB(t *testing.T) {
	const (
		b       = 32
		k       = 4
		service = 100e-6
		per     = 30e-6
		sample  = 110e3
		client  = 3e9
	)
	for _, N := range []int{1, 8, 32} {
		c := Config{Nodes: N, DevicesPerNode: k, MicroBatch: b, Compute: Compute{PerSample: 1e-6},
			Network: Network{Intra: Link{Bandwidth: 1e12}, NIC: Link{Bandwidth: 1e12}, NICs: 4},
			Input: Input{Storage: SharedDB, SampleBytes: sample, Shared: SharedStorage{Aggregate: 150e9, PerClient: client},
				DB: DB{Service: service, PerReader: per}}, Steps: 5}
		res, err := Run(c)
		if err != nil {
			t.Fatal(err)
		}
		checkSums(t, res)
		n := float64(k * b)
		want := float64(N) * (n*(service+per*float64(N-1)) + n*sample/client)
		if !near(float64(res.StepTime), want, 1e-9) {
			t.Errorf("%d nodes: step %v, want %v", N, float64(res.StepTime), want)
		}
	}
}

// TestStaging checks the one-time copy against min(aggregate/N,
// per-client, NIC, write).
func TestStaging(t *testing.T) {
	for _, c := range []struct {
		nodes int
		want  float64
	}{{1, 140e9 / 1.8e9}, {32, 140e9 / 1.8e9}, {100, 140e9 / 1.5e9}} {
		cfg := Config{Nodes: c.nodes, DevicesPerNode: 1, MicroBatch: 1, Compute: Compute{PerSample: 1},
			Network: Network{NIC: Link{Bandwidth: 1e10}}, Steps: 1,
			Input: Input{Storage: Local, Local: 1e9, SampleBytes: 1, Shared: SharedStorage{Aggregate: 150e9, PerClient: 3e9},
				Staging: Staging{Bytes: 140e9, Write: 1.8e9, NIC: 50e9}}}
		res, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !near(float64(res.Staging), c.want, 1e-12) {
			t.Errorf("%d nodes: staging %v, want %v", c.nodes, float64(res.Staging), c.want)
		}
	}
}

// TestAsyncPS checks that identical asynchronous workers see a staleness
// of N−1 updates and report a consistent breakdown.
func TestAsyncPS(t *testing.T) {
	c := Config{Nodes: 4, DevicesPerNode: 1, MicroBatch: 32, Compute: Compute{PerSample: 1e-3},
		Memory: Memory{Gradients: 10 * units.MB}, Comm: Comm{Algorithm: AsyncParameterServer, Servers: 1},
		Network: Network{NIC: Link{Bandwidth: 10 * units.GBps}}, Steps: 50}
	res, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	checkSums(t, res)
	if !near(res.MeanStaleness, 3, 0.05) {
		t.Errorf("mean staleness %v, want about 3", res.MeanStaleness)
	}
	if res.SamplesPerSec <= 0 || res.StepTime < 32e-3 {
		t.Errorf("step %v, %v samples/s", res.StepTime, res.SamplesPerSec)
	}
}

// TestAsyncUtilisation: asynchronous workers of different speeds (a
// persistent jitter) keep their own pace, so the fast ones spend part of
// each iteration waiting for their pushes and pulls. The mean time
// between a device's updates is then below the mean compute time, which
// the breakdown once reported as utilisation 1 and no communication; the
// compute part is the update-weighted compute, Σ u_i·c_i / U.
func TestAsyncUtilisation(t *testing.T) {
	c := Config{Nodes: 16, DevicesPerNode: 1, MicroBatch: 32, Compute: Compute{PerSample: 1e-3},
		Memory: Memory{Gradients: units.MB}, Comm: Comm{Algorithm: AsyncParameterServer, Servers: 1},
		Network: Network{NIC: Link{Bandwidth: 10 * units.GBps}}, Steps: 20, Jitter: 1, Seed: 3}
	res, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	checkSums(t, res)
	if !(res.Utilisation < 0.95) || !(res.Breakdown.Comm > 0) {
		t.Errorf("utilisation %v, communication %v: fast workers must wait", res.Utilisation, res.Breakdown.Comm)
	}
}

// TestMemory checks the footprint's components and the out-of-memory
// error, which names the largest batch that fits.
func TestMemory(t *testing.T) {
	c := Config{Nodes: 1, DevicesPerNode: 1, MicroBatch: 512, Compute: Compute{PerSample: 1e-3},
		Memory: Memory{Capacity: 16 * units.GiB, Model: "resnet50", Device: "p100-sxm2",
			Weights: 102.2 * units.MB, Gradients: 102.2 * units.MB, Optimizer: 102.2 * units.MB, Activations: 89.5 * units.MB}}
	_, err := Run(c)
	if !errors.Is(err, ErrMemory) {
		t.Fatalf("got %v, want an out-of-memory error", err)
	}
	msg := err.Error()
	for _, s := range []string{"resnet50 at batch 512 on 1 device needs", "p100-sxm2 has 16.0 GiB", "the largest batch that fits is"} {
		if !strings.Contains(msg, s) {
			t.Errorf("error %q does not say %q", msg, s)
		}
	}
	var bmax int
	if i := strings.LastIndex(msg, " "); i >= 0 {
		for _, ch := range msg[i+1:] {
			bmax = bmax*10 + int(ch-'0')
		}
	}
	// Reference: fixed + b·A·(1 + WorkspaceFraction) ≤ capacity.
	fixed := 3 * 102.2e6
	want := int(math.Floor((16*(1<<30) - fixed) / (89.5e6 * (1 + WorkspaceFraction))))
	if bmax != want {
		t.Errorf("largest batch %d, want %d", bmax, want)
	}
	c.MicroBatch = bmax
	if _, err := Run(c); err != nil {
		t.Errorf("batch %d: %v", bmax, err)
	}
	c.MicroBatch = bmax + 1
	if _, err := Run(c); !errors.Is(err, ErrMemory) {
		t.Errorf("batch %d: %v, want out of memory", bmax+1, err)
	}
	// A named configuration's errors begin with its name, memory's as
	// its problems' do.
	c.Name = "p100 at batch too large"
	if _, err := Run(c); !errors.Is(err, ErrMemory) || !strings.HasPrefix(err.Error(), c.Name+": out of device memory: ") {
		t.Errorf("named: %v", err)
	}
	bad := c
	bad.MicroBatch = 0
	if _, err := Run(bad); !errors.Is(err, ErrConfig) || !strings.HasPrefix(err.Error(), c.Name+": bad simulation config: ") {
		t.Errorf("named, micro-batch 0: %v", err)
	}
	// On two devices the communication buffers (two 25 MiB buckets) take
	// room, so the largest batch is smaller, and the error says which
	// device count it is about.
	c.DevicesPerNode, c.Comm.Bucket, c.MicroBatch = 2, 25*units.MiB, 512
	c.Network = Network{Intra: Link{Bandwidth: 1e9}}
	_, err = Run(c)
	if err == nil || !strings.Contains(err.Error(), "resnet50 at batch 512 on 2 devices needs") {
		t.Fatalf("two devices: %v", err)
	}
	msg = err.Error()
	bmax2, _ := strconv.Atoi(msg[strings.LastIndex(msg, " ")+1:])
	want2 := int(math.Floor((16*(1<<30) - fixed - 2*25*(1<<20)) / (89.5e6 * (1 + WorkspaceFraction))))
	if bmax2 != want2 || bmax2 >= bmax {
		t.Errorf("two devices: largest batch %d, want %d (one device: %d)", bmax2, want2, bmax)
	}
	c.MicroBatch = bmax2 + 1
	if _, err := Run(c); !errors.Is(err, ErrMemory) {
		t.Errorf("two devices, batch %d: %v, want out of memory", bmax2+1, err)
	}
	pc := &Config{Stages: 4, MicroBatch: 2, Accumulation: 8, Schedule: OneFOneB, Memory: Memory{Weights: 4, Gradients: 4, Optimizer: 8, Master: 8, Activations: 40, Transient: 3, Layers: 1}, Nodes: 1, DevicesPerNode: 4, Comm: Comm{Bucket: 1}}
	f := pc.Footprint(1)
	want1 := Footprint{Weights: 1, Gradients: 1, Optimizer: 2, Master: 2, Activations: 10 * 2 * 3, Workspace: WorkspaceFraction * 10 * 2}
	if f != want1 {
		t.Errorf("footprint %+v, want %+v", f, want1)
	}
	// The last stage computes the loss and holds its transient buffers,
	// one micro-batch's, whatever the micro-batches in flight.
	f = pc.Footprint(3)
	want3 := Footprint{Weights: 1, Gradients: 1, Optimizer: 2, Master: 2, Activations: 10 * 2 * 1, Transient: 3 * 2, Workspace: WorkspaceFraction * 10 * 2}
	if f != want3 || f.Total() != 1+1+2+2+20+6+WorkspaceFraction*20 {
		t.Errorf("last stage's footprint %+v (total %v), want %+v", f, f.Total(), want3)
	}
}

// TestTransientLargestBatch checks the largest micro-batch against the
// closed form with the loss's transient buffers: fixed + b·(A·(1 +
// WorkspaceFraction) + T) ≤ capacity.
func TestTransientLargestBatch(t *testing.T) {
	c := Config{Nodes: 1, DevicesPerNode: 1, MicroBatch: 1, Compute: Compute{PerSample: 1e-3},
		Memory: Memory{Capacity: 80e9, Weights: 1e9, Gradients: 1e9, Optimizer: 4e9, Activations: 2e9, Transient: 0.8e9}}
	want := int(math.Floor((80e9 - 6e9) / (2e9*(1+WorkspaceFraction) + 0.8e9)))
	if got := c.LargestMicroBatch(); got != want {
		t.Errorf("largest batch %d, want %d", got, want)
	}
	c.Memory.Transient = 0
	if got := c.LargestMicroBatch(); got != int(math.Floor(74e9/(2e9*(1+WorkspaceFraction)))) {
		t.Errorf("without the transient: largest batch %d", got)
	}
	c.Memory.Transient = -1
	if _, err := Run(c); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "transient bytes per sample") {
		t.Errorf("negative transient: %v", err)
	}
}

// TestBadConfigs checks that bad configurations are errors naming the
// problem, never panics.
func TestBadConfigs(t *testing.T) {
	ok := Config{Nodes: 2, DevicesPerNode: 2, MicroBatch: 4, Compute: Compute{PerSample: 1e-3},
		Network: Network{Intra: Link{Bandwidth: 1e9}, NIC: Link{Bandwidth: 1e9}}}
	for _, c := range []struct {
		edit func(*Config)
		msg  string
	}{
		{func(c *Config) { c.Nodes = 0 }, "nodes 0"},
		{func(c *Config) { c.Stages = 3 }, "do not divide into 3 pipeline stages"},
		{func(c *Config) { c.MicroBatch = -1 }, "micro-batch -1"},
		{func(c *Config) { c.Compute.PerSample = units.Seconds(math.NaN()) }, "time per sample"},
		{func(c *Config) { c.Compute.PerSample = units.Seconds(math.Inf(1)) }, "time per sample"},
		{func(c *Config) { c.Network.NIC.Bandwidth = 0 }, "need a NIC bandwidth"},
		{func(c *Config) { c.Network.Intra.Bandwidth = 0 }, "intra-node bandwidth"},
		{func(c *Config) { c.Network.Efficiency = 1.5 }, "efficiency 1.5 is not in"},
		{func(c *Config) { c.Network.NCCLHopLatency = -1e-6 }, "NCCL hop latency -1e-06"},
		{func(c *Config) { c.Network.SHMSocketDevices = -1 }, "devices a socket -1"},
		{func(c *Config) { c.Network.SHMSocketDevices, c.Network.SHMCrossSocket = 4, 0 }, "shared-memory share between sockets 0"},
		{func(c *Config) { c.Network.SHMSocketDevices, c.Network.SHMCrossSocket = 4, math.NaN() }, "shared-memory share between sockets NaN"},
		{func(c *Config) { c.Network.NCCLHopLatency = units.Seconds(math.Inf(1)) }, "NCCL hop latency +Inf"},
		{func(c *Config) { c.Network.NICs = 3 }, "NICs per node 3"},
		{func(c *Config) { c.Comm.Algorithm = ParameterServer }, "needs at least one server"},
		{func(c *Config) { c.Comm.Algorithm = Algorithm(99) }, "unknown algorithm"},
		{func(c *Config) { c.Comm.Algorithm = HostStaged }, "PCIe and host memory"},
		{func(c *Config) { c.Input.Storage = Local }, "local storage needs a read bandwidth"},
		{func(c *Config) { c.Input.Storage = SharedDB }, "aggregate and per-client"},
		{func(c *Config) { c.Input = Input{Storage: Cached, Decode: 1e-3, Cores: 8, Threads: 4} }, "hardware threads 4 are not 0 (the cores) or 8 cores"},
		{func(c *Config) { c.Input = Input{Storage: Cached, Decode: 1e-3, Cores: 8, SMTYield: 1.5} }, "SMT yield 1.5 is not in [0, 1]"},
		{func(c *Config) { c.Input = Input{Storage: Cached, Decode: 1e-3, Cores: 8, Workers: -1} }, "decoding workers -1"},
		{func(c *Config) { c.Steps = MaxSteps + 1 }, "steps 1001"},
		{func(c *Config) { c.Nodes, c.DevicesPerNode = 1<<16, 1<<16 }, "exceed"},
		{func(c *Config) { c.Jitter = -1 }, "jitter -1"},
		{func(c *Config) { c.Comm.Algorithm, c.Network.NICs = Torus2D, 1; c.Comm.TorusX = 3 }, "torus x 3"},
		{func(c *Config) { c.Comm.Algorithm, c.Stages = AsyncParameterServer, 2; c.Comm.Servers = 1 }, "data parallelism only"},
	} {
		cfg := ok
		c.edit(&cfg)
		_, err := Run(cfg)
		if err == nil || !strings.Contains(err.Error(), c.msg) || !(errors.Is(err, ErrConfig) || errors.Is(err, ErrMemory)) {
			t.Errorf("got %v, want an error saying %q", err, c.msg)
		}
	}
	if _, err := Run(ok); err != nil {
		t.Errorf("the base config: %v", err)
	}
}

func TestParse(t *testing.T) {
	for i := range algorithmNames {
		a, err := ParseAlgorithm(Algorithm(i).String())
		if err != nil || a != Algorithm(i) {
			t.Errorf("ParseAlgorithm(%q) = %v, %v", Algorithm(i), a, err)
		}
	}
	if _, err := ParseAlgorithm("allgather"); err == nil {
		t.Error("ParseAlgorithm(allgather) succeeded")
	}
	for _, s := range []Schedule{GPipe, OneFOneB} {
		if x, err := ParseSchedule(s.String()); err != nil || x != s {
			t.Errorf("ParseSchedule(%q) = %v, %v", s, x, err)
		}
	}
	for i := range storageNames {
		if x, err := ParseStorage(Storage(i).String()); err != nil || x != Storage(i) {
			t.Errorf("ParseStorage(%q) = %v, %v", Storage(i), x, err)
		}
	}
}

// TestLargestMicroBatch checks LargestMicroBatch on a configuration
// without its defaults filled in (no stages or accumulation set) against
// the closed form of TestMemory, and its two edge values.
func TestLargestMicroBatch(t *testing.T) {
	c := Config{Nodes: 1, DevicesPerNode: 1, MicroBatch: 1,
		Memory: Memory{Capacity: 16 * units.GiB, Weights: 102.2 * units.MB, Gradients: 102.2 * units.MB,
			Optimizer: 102.2 * units.MB, Activations: 89.5 * units.MB}}
	want := int(math.Floor((16*(1<<30) - 3*102.2e6) / (89.5e6 * (1 + WorkspaceFraction))))
	if got := c.LargestMicroBatch(); got != want {
		t.Errorf("largest micro-batch %d, want %d", got, want)
	}
	small := c
	small.Memory.Capacity = 300 * units.MB
	if got := small.LargestMicroBatch(); got != 0 {
		t.Errorf("capacity under the weights: %d, want 0", got)
	}
	for name, u := range map[string]Config{
		"no capacity":    func() Config { d := c; d.Memory.Capacity = 0; return d }(),
		"no activations": func() Config { d := c; d.Memory.Activations = 0; return d }(),
	} {
		if got := u.LargestMicroBatch(); got != -1 {
			t.Errorf("%s: %d, want -1 (unbounded)", name, got)
		}
	}
}
