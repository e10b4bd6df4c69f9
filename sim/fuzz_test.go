package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"scaleplan/internal/units"
)

// randomConfig builds a valid configuration from a seed and a few
// choices: up to 4 nodes of up to 4 devices, any divisor of the devices
// as stages, every algorithm and storage kind, jitter, small data sets.
func randomConfig(seed uint64, alg, storage uint8, jitter float64, gpipe, recompute bool) Config {
	rng := rand.New(rand.NewPCG(seed, 7))
	nodes := 1 + rng.IntN(4)
	per := []int{1, 2, 4}[rng.IntN(3)]
	R := nodes * per
	var divs []int
	for s := 1; s <= R; s++ {
		if R%s == 0 && (s <= per || s%per == 0) {
			divs = append(divs, s)
		}
	}
	stages := 1
	if rng.IntN(3) == 0 {
		stages = divs[rng.IntN(len(divs))]
	}
	c := Config{
		Nodes: nodes, DevicesPerNode: per, Stages: stages,
		MicroBatch: 1 + rng.IntN(64), Accumulation: 1 + rng.IntN(4),
		Recompute: recompute, Seed: seed, Steps: 2 + rng.IntN(5),
		Jitter: jitter,
		Compute: Compute{
			PerSample: units.Seconds(1e-4 + rng.Float64()*5e-3),
			Fixed:     units.Seconds(rng.Float64() * 0.02),
			Update:    units.Seconds(rng.Float64() * 2e-3),
		},
		Memory: Memory{Weights: units.Bytes(1e6 + rng.Float64()*2e8), Activations: units.Bytes(rng.Float64() * 5e7), Layers: 1 + rng.IntN(100)},
		Comm: Comm{
			Algorithm: Algorithm(int(alg) % len(algorithmNames)),
			InterNode: Algorithm(rng.IntN(4)),
			Bucket:    units.Bytes(1e6 + rng.Float64()*5e7),
			Boundary:  units.Bytes(rng.Float64() * 1e6),
		},
		Network: Network{
			Intra:         Link{units.BytesPerSec(1e9 + rng.Float64()*3e11), units.Seconds(rng.Float64() * 5e-6)},
			PCIe:          Link{units.BytesPerSec(1e9 + rng.Float64()*3e10), units.Seconds(rng.Float64() * 5e-6)},
			HostMemory:    units.BytesPerSec(5e9 + rng.Float64()*1e11),
			NICs:          1 + rng.IntN(per),
			NIC:           Link{units.BytesPerSec(1e9 + rng.Float64()*5e10), units.Seconds(rng.Float64() * 5e-6)},
			FabricLatency: units.Seconds(rng.Float64() * 2e-6),
			Efficiency:    0.1 + 0.9*rng.Float64(),
			Overhead:      units.Seconds(rng.Float64() * 1e-4),
		},
	}
	if gpipe {
		c.Schedule = GPipe
	}
	if rng.IntN(5) == 0 {
		c.Memory.Capacity = units.Bytes(rng.Float64() * 4e9)
	}
	c.Memory.Gradients = c.Memory.Weights
	c.Memory.Optimizer = c.Memory.Weights
	if rng.IntN(2) == 0 {
		n := 1 + rng.IntN(20)
		for range n {
			c.Comm.Layers = append(c.Comm.Layers, units.Bytes(rng.Float64()*2e7))
		}
	}
	switch c.Comm.Algorithm {
	case ParameterServer, AsyncParameterServer:
		c.Comm.Servers = 1 + rng.IntN(3)
		if c.Comm.Algorithm == AsyncParameterServer {
			c.Stages = 1
		}
	case Hierarchical, Torus2D:
		if stages > 1 && per%stages != 0 {
			c.Comm.Algorithm = Ring
		}
	}
	c.Network.NoPeerToPeer = rng.IntN(4) == 0
	if rng.IntN(2) == 0 {
		c.Comm.Interference = 0.4 * rng.Float64()
	}
	in := &c.Input
	in.Storage = Storage(int(storage) % len(storageNames))
	in.SampleBytes = units.Bytes(1e3 + rng.Float64()*2e5)
	in.Local = units.BytesPerSec(1e8 + rng.Float64()*3e9)
	in.Shared = SharedStorage{Aggregate: units.BytesPerSec(1e9 + rng.Float64()*1e11), PerClient: units.BytesPerSec(1e8 + rng.Float64()*3e9), Latency: units.Seconds(rng.Float64() * 1e-3)}
	in.DB = DB{Service: units.Seconds(rng.Float64() * 2e-4), PerReader: units.Seconds(rng.Float64() * 5e-5)}
	in.Decode = units.Seconds(rng.Float64() * 5e-3)
	in.Cores = 1 + rng.IntN(32)
	in.Copy = units.Bytes(rng.Float64() * 6e5)
	in.HostToDevice = units.BytesPerSec(1e9 + rng.Float64()*3e10)
	in.Prefetch = 1 + rng.IntN(4)
	total := int64(c.Steps) * int64(c.Accumulation) * int64(c.Replicas()) * int64(c.MicroBatch)
	in.Samples = 1 + rng.Int64N(total)
	if in.Storage == Local && rng.IntN(2) == 0 {
		in.CacheHit = rng.Float64()
	}
	return c
}

// eligible reports whether c's throughput must not rise when a bandwidth
// falls. It holds when at most one flow group moves on the network at a
// time: one stage (a single gradient stream, whose collectives run their
// steps one after another), or one replica on one node (transfers between
// stages on disjoint device ports), with input that does not cross the
// network (synthetic, local or cached). Then every event time is a
// max-plus expression of durations, none of which shrinks when a
// bandwidth falls, so the run ends no earlier: its throughput, samples
// over the whole run, does not rise. The steady-state throughput
// (SamplesPerSec, which leaves out the first step) is a difference of two
// such times; it is monotone as well when every step starts from the same
// idle state, with synthetic input, but an input pipeline carries its
// queue from step to step, and a later first step can leave it fuller. Under
// max-min sharing of concurrent flows (several stages' streams, input
// reads on the NIC, async workers) a slower link can free capacity for
// another flow and finish a step earlier (netsim's TestMaxMinNotMonotone),
// so those configurations are left out.
func eligible(c *Config) bool {
	switch {
	case c.Comm.Algorithm == AsyncParameterServer:
		return false
	case c.Input.Storage != Synthetic && c.Input.Storage != Local && c.Input.Storage != Cached:
		return false
	}
	return c.Stages == 1 || (c.Replicas() == 1 && c.Nodes == 1)
}

// distort sets field i of c (of the numeric fields below) to x, which may
// be anything: negative, zero, huge, NaN or infinite.
func distort(c *Config, i uint8, x float64) {
	fields := []func(){
		func() { c.Compute.PerSample = units.Seconds(x) },
		func() { c.Compute.Fixed = units.Seconds(x) },
		func() { c.Network.Intra.Bandwidth = units.BytesPerSec(x) },
		func() { c.Network.NIC.Bandwidth = units.BytesPerSec(x) },
		func() { c.Network.PCIe.Bandwidth = units.BytesPerSec(x) },
		func() { c.Network.HostMemory = units.BytesPerSec(x) },
		func() { c.Network.Efficiency = x },
		func() { c.Network.Oversubscription = x },
		func() { c.Network.NIC.Latency = units.Seconds(x) },
		func() { c.Comm.Bucket = units.Bytes(x) },
		func() { c.Comm.Boundary = units.Bytes(x) },
		func() { c.Comm.Interference = x },
		func() { c.Memory.Gradients = units.Bytes(x) },
		func() { c.Memory.Capacity = units.Bytes(x) },
		func() { c.Input.Local = units.BytesPerSec(x) },
		func() { c.Input.SampleBytes = units.Bytes(x) },
		func() { c.Input.Shared.PerClient = units.BytesPerSec(x) },
		func() { c.Input.DB.PerReader = units.Seconds(x) },
		func() { c.Input.Decode = units.Seconds(x) },
		func() { c.Input.HostToDevice = units.BytesPerSec(x) },
		func() { c.Jitter = x },
		func() { c.Nodes = int(x) },
		func() { c.MicroBatch = int(x) },
		func() { c.Accumulation = int(x) },
		func() { c.Steps = int(x) },
	}
	fields[int(i)%len(fields)]()
}

// Go's fuzzing engine takes an input that runs for more than 10 s for a
// hang and fails on it. A valid configuration may ask for millions of
// tasks (MaxWork) and a trace of every one of them, so the fuzzer runs
// the simulation only up to fuzzWork tasks and fuzzCollectives
// collectives, and compares traces only of runs of up to fuzzTraceEvents
// events (recording a trace observes every link at every change of the
// network, and a run of 80,000 events writes tens of megabytes); larger
// configurations are checked for validity only. The input that found the
// limit, testdata/fuzz/FuzzSim/500e2bd332017ae4 (16 stages, 158
// micro-batches, 3 traced steps: 79,064 events, 3 s to trace, 14 s with
// the fuzzer's coverage instrumentation), stays in the seed corpus.
const (
	fuzzWork        = 1 << 15
	fuzzCollectives = 1 << 12
	fuzzTraceEvents = 1 << 14
)

// withinBudget reports whether the fuzzer simulates c, validated.
func withinBudget(c *Config) bool {
	work := float64(c.Ranks()) * float64(c.Steps) * float64(c.Accumulation)
	colls := float64(len(c.stageBuckets())) * float64(c.Steps) * float64(c.Stages)
	return work <= fuzzWork && colls <= fuzzCollectives
}

func FuzzSim(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint8(0), 0.0, false, false, uint8(0), 0.0)
	f.Add(uint64(2), uint8(4), uint8(1), 0.05, true, false, uint8(0), 0.0)
	f.Add(uint64(3), uint8(1), uint8(3), 0.1, false, true, uint8(0), 0.0)
	f.Add(uint64(4), uint8(7), uint8(2), 0.0, false, false, uint8(3), 1e-300)
	f.Fuzz(func(t *testing.T, seed uint64, alg, storage uint8, jitter float64, gpipe, recompute bool, field uint8, value float64) {
		if !(jitter >= 0 && jitter <= 1) {
			jitter = 0
		}
		c := randomConfig(seed, alg, storage, jitter, gpipe, recompute)
		if value != 0 {
			distort(&c, field, value)
		}
		last := units.Seconds(0)
		d := c // with the defaults filled in
		if d.validate() == nil && !withinBudget(&d) {
			return
		}
		total := int64(d.Steps) * int64(d.Accumulation) * int64(d.Replicas()) * int64(d.MicroBatch)
		var seen []int8
		if total > 0 && total <= 1<<24 {
			seen = make([]int8, total)
		}
		var dup, acct error
		var rr *run
		res, err := runWith(c, func(r *run) {
			rr = r
			r.onEvent = func(now units.Seconds) {
				if now < last {
					t.Fatalf("time went back from %v to %v", last, now)
				}
				last = now
			}
			// Every device's accounts of a step sum to the step, with no
			// negative part: its utilisation, compute over the step, is in
			// [0, 1].
			r.onStep = func() {
				s := r.steps[len(r.steps)-1]
				T := float64(s.Time())
				for i := range r.ranks {
					k := &r.ranks[i]
					b := Breakdown{units.Seconds(k.compute), units.Seconds(k.comm), units.Seconds(k.input), units.Seconds(k.bubble), units.Seconds(k.straggler)}
					if err := checkParts(b, s.Time()); err != nil && acct == nil {
						acct = fmt.Errorf("step %d, device %d: %w", len(r.steps)-1, i, err)
					}
					if !near(float64(b.Total()), T, 1e-9) && acct == nil {
						acct = fmt.Errorf("step %d, device %d: accounts %+v sum to %v, step is %v", len(r.steps)-1, i, b, b.Total(), T)
					}
				}
			}
			r.onDeliver = func(rep, q int, first int64) {
				for p := first; p < first+int64(c.MicroBatch); p++ {
					if p < 0 || p >= int64(len(seen)) || seen[p] != 0 {
						dup = fmt.Errorf("sample position %d delivered twice or out of range (replica %d, micro-batch %d)", p, rep, q)
						return
					}
					seen[p] = 1
				}
			}
		})
		if err != nil {
			if !errors.Is(err, ErrConfig) && !errors.Is(err, ErrMemory) {
				t.Fatalf("error %v wraps neither ErrConfig nor ErrMemory", err)
			}
			return
		}
		if dup != nil {
			t.Fatal(dup)
		}
		if acct != nil {
			t.Fatal(acct)
		}
		checkSums(t, res)
		// What the input pipeline delivered it read, once: every node read
		// each of its batches once, the nodes' reads add up to the run's
		// samples, and the shared storage carried exactly their bytes.
		if rr.loaders != nil && c.Comm.Algorithm != AsyncParameterServer {
			read := 0.0
			for _, l := range rr.loaders {
				if l == nil {
					continue
				}
				if l.readNext != l.total || l.issued != l.total {
					t.Fatalf("node %d read %d and issued %d of its %d batches", l.node, l.readNext, l.issued, l.total)
				}
				read += float64(l.readNext) * l.n
			}
			if read != float64(total) {
				t.Fatalf("the nodes read %v samples; the run consumed %d", read, total)
			}
			if rr.storage != nil {
				got := float64(rr.topo.Network().Stats()[rr.storage.ID()].Bytes)
				if want := read * float64(rr.c.Input.SampleBytes); !near(got, want, 1e-9) {
					t.Fatalf("shared storage carried %v bytes for %v samples of %v", got, read, rr.c.Input.SampleBytes)
				}
			}
		}
		for i := 1; i < len(res.Steps); i++ {
			if res.Steps[i].Start != res.Steps[i-1].End || res.Steps[i].End < res.Steps[i].Start {
				t.Fatalf("steps %d and %d: %+v then %+v", i-1, i, res.Steps[i-1], res.Steps[i])
			}
		}
		// Every sample of the first epoch is delivered exactly once: the
		// positions delivered cover [0, total) once each, and an epoch of
		// Samples samples is positions [0, Samples).
		if c.Input.Storage != Synthetic && c.Comm.Algorithm != AsyncParameterServer && int64(len(seen)) == total && c.Input.Samples <= total {
			count := make([]int, c.Input.Samples)
			for p, s := range seen {
				if s == 0 {
					t.Fatalf("sample position %d of %d never delivered", p, total)
				}
				if int64(p) < c.Input.Samples {
					count[p%int(c.Input.Samples)]++
				}
			}
			for id, n := range count {
				if n != 1 {
					t.Fatalf("sample %d of the epoch delivered %d times", id, n)
				}
			}
		}
		// Determinism, and a trace changes nothing but itself: a traced
		// run gives the same result, and its trace repeats byte for byte.
		traced := c
		traced.TraceSteps = 1 + int(seed%3)
		if res.Events > fuzzTraceEvents {
			traced.TraceSteps = 0
		}
		again, err := Run(traced)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(res)
		b, _ := json.Marshal(again)
		if !bytes.Equal(a, b) || fmt.Sprintf("%x", res.StepTime) != fmt.Sprintf("%x", again.StepTime) {
			t.Fatalf("two runs differ:\n%s\n%s", a, b)
		}
		if again.Trace != nil {
			third, err := Run(traced)
			if err != nil {
				t.Fatal(err)
			}
			var x, y bytes.Buffer
			if err := again.Trace.WriteJSON(&x); err != nil {
				t.Fatal(err)
			}
			if err := third.Trace.WriteJSON(&y); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(x.Bytes(), y.Bytes()) {
				t.Fatalf("two traces differ (%d and %d bytes)", x.Len(), y.Len())
			}
		}
		// Monotone throughput.
		if !eligible(&c) {
			return
		}
		rng := rand.New(rand.NewPCG(seed, 11))
		slow := c
		scale := units.BytesPerSec(0.1 + 0.85*rng.Float64())
		names := []string{"intra-node bandwidth", "NIC bandwidth", "PCIe bandwidth", "host memory bandwidth", "local storage bandwidth",
			"host-to-device bandwidth", "page cache hit fraction"}
		which := rng.IntN(len(names))
		switch which {
		case 0:
			slow.Network.Intra.Bandwidth *= scale
		case 1:
			slow.Network.NIC.Bandwidth *= scale
		case 2:
			slow.Network.PCIe.Bandwidth *= scale
		case 3:
			slow.Network.HostMemory *= scale
		case 4:
			slow.Input.Local *= scale
		case 5:
			slow.Input.HostToDevice *= scale
		case 6:
			slow.Input.CacheHit *= float64(scale) // fewer hits, more drive reads
		}
		sr, err := Run(slow)
		if errors.Is(err, ErrConfig) {
			return // the slower bandwidth is below MinRate
		}
		if err != nil {
			t.Fatal(err)
		}
		end := func(r *Result) units.Seconds { return r.Steps[len(r.Steps)-1].End }
		if end(sr) < end(res)*(1-1e-9) {
			t.Fatalf("the %s fell to %v of its value and the run ended at %v, before %v: its throughput rose", names[which], scale, end(sr), end(res))
		}
		if c.Input.Storage == Synthetic && sr.SamplesPerSec > res.SamplesPerSec*(1+1e-9) {
			t.Fatalf("the %s fell to %v of its value and throughput rose from %v to %v", names[which], scale, res.SamplesPerSec, sr.SamplesPerSec)
		}
	})
}
