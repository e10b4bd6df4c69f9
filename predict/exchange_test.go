package predict

import (
	"math"
	"testing"

	"scaleplan/internal/units"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// TestCheckExchange: a flat ring over 64 DGX H100 nodes is latency-bound.
// Its one-byte all-reduce is the ring's closed form, 2(p−1) synchronous
// steps of the slowest hop's latency, an NVLink hop of 2 µs plus NCCL's
// 5 µs overhead (the catalogue's figures): 1,022 × 7 µs at 512 GPUs; a
// 25 MiB bucket adds its bytes, and another algorithm is faster. On one
// node, and with the shipped scenario's hierarchical exchange at 512 GPUs
// and 400 images a GPU (a long step that hides it), there is nothing to
// report.
func TestCheckExchange(t *testing.T) {
	check := func(alg string, batch int, devices ...int) *ExchangeCheck {
		t.Helper()
		return dgxH100Prediction(t, alg, batch, devices...).CheckExchange()
	}

	c := check("ring", 40, 8, 64, 512)
	if c == nil {
		t.Fatal("ring over 512 GPUs: no check")
	}
	const hop = 7e-6 // 2 µs of NVLink, 5 µs of NCCL's overhead
	if want := 2 * 511 * hop; c.Devices != 512 || c.Algorithm != sim.Ring || math.Abs(float64(c.Latency)-want) > 1e-3*want {
		t.Errorf("ring over %d: latency %v, want 2(p−1)·%v s = %v s", c.Devices, c.Latency, hop, want)
	}
	if c.Bucket != sim.DefaultBucket || !(c.Time > c.Latency) || float64(c.Latency) < LatencyShare*float64(c.Time) {
		t.Errorf("bucket %v in %v, latency %v", c.Bucket, c.Time, c.Latency)
	}
	if c.Faster == sim.Ring || !(c.FasterTime < c.Time) {
		t.Errorf("faster: %v in %v, against the ring's %v", c.Faster, c.FasterTime, c.Time)
	}
	// The faster time is that algorithm's own all-reduce of the bucket.
	r, err := scenarios.Load("dgx-h100-resnet50-mlperf-v3.0", scenarios.Options{Edit: func(s *scenarios.Scenario) {
		s.Parallelism.AllReduce = c.Faster.String()
		s.Sweep.Devices = []int{512}
	}})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := r.Build(r.Points()[0])
	if err != nil {
		t.Fatal(err)
	}
	if got, err := sim.AllReduceTime(cfg, units.Bytes(25<<20)); err != nil || got != c.FasterTime {
		t.Errorf("%v: AllReduceTime %v (%v), check %v", c.Faster, got, err, c.FasterTime)
	}

	if c := check("ring", 40, 8); c != nil {
		t.Errorf("one node: %+v", c)
	}
	if c := check("hierarchical", 400, 8, 64, 512); c != nil {
		t.Errorf("hierarchical over 512 GPUs at 400 a GPU: %+v", c)
	}
}

// dgxH100Prediction predicts the DGX H100 scenario with the all-reduce
// alg at batch per GPU on devices GPUs.
func dgxH100Prediction(tb testing.TB, alg string, batch int, devices ...int) *Prediction {
	tb.Helper()
	r, err := scenarios.Load("dgx-h100-resnet50-mlperf-v3.0", scenarios.Options{Edit: func(s *scenarios.Scenario) {
		s.Parallelism.AllReduce = alg
		s.Sweep.Devices = devices
		s.Sweep.Batch = []int{batch}
		s.BatchPerDevice = batch
	}})
	if err != nil {
		tb.Fatal(err)
	}
	p, err := Predict(r, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
