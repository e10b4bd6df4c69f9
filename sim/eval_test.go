package sim

import (
	"errors"
	"math"
	"testing"

	"scaleplan/internal/units"
)

// evalBase is a node of 8 devices evaluating at 1 ms per sample plus
// 3 ms per micro-batch, its forward share a third of that.
func evalBase() Config {
	return Config{Nodes: 1, DevicesPerNode: 8, MicroBatch: 1, Compute: Compute{PerSample: 1e-3, Fixed: 3e-3},
		Network: Network{Intra: Link{Bandwidth: 100 * units.GBps, Latency: 5e-6}, NIC: Link{Bandwidth: 10 * units.GBps, Latency: 5e-6}}}
}

// TestEvalPassClosedForm checks a pass against its closed form worked by
// hand: ImageNet's 50,000 images on 8 devices at batch 250 is
// ⌈50,000/2,000⌉ = 25 forward steps of (250·1 ms + 3 ms)/3, plus the
// metric's all-reduce and the scoring.
func TestEvalPassClosedForm(t *testing.T) {
	c := evalBase()
	ar, err := AllReduceTime(c, EvalMetricBytes)
	if err != nil || ar <= 0 {
		t.Fatalf("all-reduce of the metric: %v, %v", ar, err)
	}
	got, err := EvalPassTime(c, Evaluation{Samples: 50000, Batch: 250, Scoring: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	want := 25*(250*1e-3+3e-3)/3 + float64(ar) + 0.5
	if math.Abs(float64(got)-want) > 1e-12 {
		t.Errorf("pass %v s, want %v s", float64(got), want)
	}

	// One device: no all-reduce; a partial last step counts whole:
	// ⌈5,000/160⌉ = 32 steps.
	one := evalBase()
	one.DevicesPerNode = 1
	got, err = EvalPassTime(one, Evaluation{Samples: 5000, Batch: 160})
	if want := 32 * (160*1e-3 + 3e-3) / 3; err != nil || math.Abs(float64(got)-want) > 1e-12 {
		t.Errorf("one device: %v s (%v), want %v s", float64(got), err, want)
	}

	// Two pipeline stages: 4 replicas, ⌈50,000/1,000⌉ = 50 steps plus
	// one to fill the pipeline, each stage half the forward.
	pp := evalBase()
	pp.Stages = 2
	got, err = EvalPassTime(pp, Evaluation{Samples: 50000, Batch: 250})
	if want := 51*(250*1e-3+3e-3)/3/2 + float64(ar); err != nil || math.Abs(float64(got)-want) > 1e-12 {
		t.Errorf("two stages: %v s (%v), want %v s", float64(got), err, want)
	}
}

// TestEvalPassHostPerSample checks the host's share worked by hand: COCO's
// 5,000 images on 8 devices is ⌈5,000/8⌉ = 625 images a rank, each 37 ms
// on its host after the forward passes (625 steps at batch 1), 23.125 s;
// on 3 devices ⌈5,000/3⌉ = 1,667 images and 1,667 steps.
func TestEvalPassHostPerSample(t *testing.T) {
	c := evalBase()
	ar, err := AllReduceTime(c, EvalMetricBytes)
	if err != nil {
		t.Fatal(err)
	}
	got, err := EvalPassTime(c, Evaluation{Samples: 5000, Batch: 1, HostPerSample: 37e-3, Scoring: 2})
	if want := 625*(1e-3+3e-3)/3 + 625*37e-3 + float64(ar) + 2; err != nil || math.Abs(float64(got)-want) > 1e-9 {
		t.Errorf("8 devices: %v s (%v), want %v s", float64(got), err, want)
	}
	three := evalBase()
	three.DevicesPerNode = 3
	ar3, err := AllReduceTime(three, EvalMetricBytes)
	if err != nil {
		t.Fatal(err)
	}
	got, err = EvalPassTime(three, Evaluation{Samples: 5000, Batch: 1, HostPerSample: 37e-3})
	if want := 1667*(1e-3+3e-3)/3 + 1667*37e-3 + float64(ar3); err != nil || math.Abs(float64(got)-want) > 1e-9 {
		t.Errorf("3 devices: %v s (%v), want %v s", float64(got), err, want)
	}
}

// TestEvalPassInputBound checks the host's decode and the copy bounding a
// step of one device: 250 images × 5 ms over 2 cores is 0.625 s a step,
// more than the forward's 84.3 ms; 250 × 150 kB over 10 MB/s is 3.75 s.
// ⌈1,000/250⌉ = 4 steps.
func TestEvalPassInputBound(t *testing.T) {
	c := evalBase()
	c.DevicesPerNode = 1 // no all-reduce
	c.Input = Input{Storage: Local, SampleBytes: 110 * units.KB, Local: 1 * units.GBps, Decode: 5e-3, Cores: 2}
	got, err := EvalPassTime(c, Evaluation{Samples: 1000, Batch: 250})
	if want := 4 * 250 * 5e-3 / 2; err != nil || math.Abs(float64(got)-want) > 1e-12 {
		t.Errorf("decode-bound: %v s (%v), want %v s", float64(got), err, want)
	}
	c.Input.Copy, c.Input.HostToDevice = 150*units.KB, 10e6
	got, err = EvalPassTime(c, Evaluation{Samples: 1000, Batch: 250})
	if want := 4 * 250 * 150e3 / 10e6; err != nil || math.Abs(float64(got)-want) > 1e-9 {
		t.Errorf("copy-bound: %v s (%v), want %v s", float64(got), err, want)
	}
}

// TestEvalPassErrors checks that bad evaluations are refused, not run.
func TestEvalPassErrors(t *testing.T) {
	for _, e := range []Evaluation{
		{Samples: 0, Batch: 1},
		{Samples: 1, Batch: 0},
		{Samples: 1, Batch: MaxBatch + 1},
		{Samples: 1, Batch: 1, Scoring: units.Seconds(math.NaN())},
		{Samples: 1, Batch: 1, MetricBytes: -1},
		{Samples: 1, Batch: 1, HostPerSample: -1e-3},
		{Samples: 1, Batch: 1, HostPerSample: units.Seconds(math.Inf(1))},
	} {
		if _, err := EvalPassTime(evalBase(), e); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: error %v, want ErrConfig", e, err)
		}
	}
	bad := evalBase()
	bad.Nodes = 0
	if _, err := EvalPassTime(bad, Evaluation{Samples: 1, Batch: 1}); !errors.Is(err, ErrConfig) {
		t.Errorf("no nodes: error %v, want ErrConfig", err)
	}
}

// TestInputPerNodeAtScale checks that the host input pipeline scales with
// the nodes: each node's cores decode only its own devices' samples, so a
// decode-bound step of 8 devices × 32 images × 10 ms over 8 cores takes
// 0.32 s on 1 node and on 128 nodes (1,024 devices) alike, the size of
// the largest MLPerf submissions.
func TestInputPerNodeAtScale(t *testing.T) {
	const b = 32
	in := Input{Storage: Local, SampleBytes: 100 * units.KB, Local: 10 * units.GBps, Decode: 10e-3, Cores: 8}
	want := 8 * b * 10e-3 / 8
	for _, nodes := range []int{1, 128} {
		res := runChecked(t, Config{Nodes: nodes, DevicesPerNode: 8, MicroBatch: b, Compute: Compute{PerSample: 1e-4},
			Network: Network{Intra: Link{Bandwidth: 1e12}, NIC: Link{Bandwidth: 1e12}}, Input: in, Steps: 4})
		if !near(float64(res.StepTime), want, 1e-6) {
			t.Errorf("%d nodes: step %v s, want %v s (decode-bound per node)", nodes, float64(res.StepTime), want)
		}
	}
}
