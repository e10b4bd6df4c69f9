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
	return c
}

// eligible reports whether c's throughput must not rise when a bandwidth
// falls. It holds when every step starts on an idle network with nothing
// carried over (synthetic input) and at most one flow group moves at a
// time: one stage (a single gradient stream, whose collectives run their
// steps one after another), or one replica on one node (transfers between
// stages on disjoint device ports). Then every event time is a max-plus
// expression of durations, none of which shrinks when a bandwidth falls.
// Under max-min sharing of concurrent flows (several stages' streams,
// input reads on the NIC, async workers) a slower link can free capacity
// for another flow and finish a step earlier (netsim's
// TestMaxMinNotMonotone), so those configurations are left out.
func eligible(c *Config) bool {
	if c.Input.Storage != Synthetic || c.Comm.Algorithm == AsyncParameterServer {
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
		d.validate()
		total := int64(d.Steps) * int64(d.Accumulation) * int64(d.Replicas()) * int64(d.MicroBatch)
		var seen []int8
		if total > 0 && total <= 1<<24 {
			seen = make([]int8, total)
		}
		var dup error
		res, err := runWith(c, func(r *run) {
			r.onEvent = func(now units.Seconds) {
				if now < last {
					t.Fatalf("time went back from %v to %v", last, now)
				}
				last = now
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
		checkSums(t, res)
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
		switch rng.IntN(4) {
		case 0:
			slow.Network.Intra.Bandwidth *= scale
		case 1:
			slow.Network.NIC.Bandwidth *= scale
		case 2:
			slow.Network.PCIe.Bandwidth *= scale
		case 3:
			slow.Network.HostMemory *= scale
		}
		sr, err := Run(slow)
		if errors.Is(err, ErrConfig) {
			return // the slower bandwidth is below MinRate
		}
		if err != nil {
			t.Fatal(err)
		}
		if sr.SamplesPerSec > res.SamplesPerSec*(1+1e-9) {
			t.Fatalf("a bandwidth fell by %v and throughput rose from %v to %v", scale, res.SamplesPerSec, sr.SamplesPerSec)
		}
	})
}
