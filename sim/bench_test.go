package sim

import (
	"fmt"
	"testing"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
)

// dgxA100 is a model on the catalogue's dgx-a100, for the benchmarks'
// configurations.
type dgxA100 struct {
	prof      *model.Profiles
	m         *model.Model
	sys       *hw.System
	node      *hw.Node
	dev       *hw.Device
	perSample units.Seconds // the roofline at fp16
}

// onDGXA100 looks up the model called name and the dgx-a100 system.
func onDGXA100(tb testing.TB, name string) dgxA100 {
	cat, err := hw.Default()
	if err != nil {
		tb.Fatal(err)
	}
	prof, err := model.Default()
	if err != nil {
		tb.Fatal(err)
	}
	d := dgxA100{prof: prof}
	if d.sys, d.node, d.dev, err = cat.Resolve("dgx-a100"); err != nil {
		tb.Fatal(err)
	}
	if d.m, err = prof.Model(name); err != nil {
		tb.Fatal(err)
	}
	if d.perSample, err = Roofline(d.m, d.dev, hw.FP16); err != nil {
		tb.Fatal(err)
	}
	return d
}

// network is the hierarchical exchange's links: NVLink under NCCL inside
// a node, 8 HDR NICs with verbs between nodes.
func (d dgxA100) network() Network {
	verbs, nccl := d.sys.Transports[hw.Verbs], d.sys.Transports[hw.NCCL]
	return Network{
		Intra:         Link{units.BytesPerSec(float64(d.node.Link.Bandwidth) * nccl.Efficiency), d.node.Link.Latency + nccl.Overhead},
		PCIe:          Link{Bandwidth: d.node.HostBandwidth(d.dev)},
		NICs:          8,
		NIC:           Link{Bandwidth: d.sys.Fabric.Bandwidth.Bytes()},
		FabricLatency: d.sys.Fabric.Latency, Efficiency: verbs.Efficiency, Overhead: verbs.Overhead,
	}
}

// resnet50OnDGXA100 returns data-parallel ResNet-50 (fp16, momentum SGD,
// batch 256 per GPU) on nodes of the catalogue's dgx-a100: a roofline
// compute law, the model's gradient layout in 25 MiB buckets, a
// hierarchical all-reduce over NVLink and 8 HDR NICs with verbs, local
// NVMe input and 5 % per-rank jitter.
func resnet50OnDGXA100(tb testing.TB, nodes int) Config {
	d := onDGXA100(tb, "resnet50")
	m, dev, node := d.m, d.dev, d.node
	data, _ := d.prof.Dataset(m.Dataset)
	return Config{
		Nodes: nodes, DevicesPerNode: node.Devices, MicroBatch: 256,
		Compute: Compute{PerSample: d.perSample, Update: UpdateTime(m, dev, model.Momentum, model.FP16, model.FP32)},
		Memory:  ModelMemory(m, dev, model.Momentum, model.FP16, model.FP32),
		Comm:    Comm{Algorithm: Hierarchical, Layers: GradientLayers(m, 2)},
		Network: d.network(),
		Input: Input{Storage: Local, SampleBytes: data.BytesPerSample, Samples: data.TrainSamples,
			Local: node.Storage[0].ReadBandwidth(), Decode: data.CPUSecondsPerSample, Cores: node.CPU.Cores(),
			Copy: units.Bytes(2 * data.InputElements()), HostToDevice: node.HostBandwidth(dev)},
		Jitter: 0.05, Seed: 1,
	}
}

// transformerPipeline returns Transformer (big) in fp16 with Adam on
// nodes of the catalogue's dgx-a100, pipelined over 16 stages (two nodes
// per replica, so the boundary between stages 7 and 8 crosses the fabric)
// with 1F1B and 32 micro-batches of 2,048 token pairs; the replicas
// all-reduce each stage's gradient hierarchically. The boundary activation
// is a layer's share of the model's stored activations, as scenarios
// builds it, about 6 MB per micro-batch.
func transformerPipeline(tb testing.TB, nodes int) Config {
	d := onDGXA100(tb, "transformer-big")
	m, dev, node := d.m, d.dev, d.node
	return Config{
		Nodes: nodes, DevicesPerNode: node.Devices, MicroBatch: 2048, Accumulation: 32,
		Stages: 16, Schedule: OneFOneB,
		Compute: Compute{PerSample: d.perSample, Update: UpdateTime(m, dev, model.Adam, model.FP16, model.FP32)},
		Memory:  ModelMemory(m, dev, model.Adam, model.FP16, model.FP32),
		Comm: Comm{Algorithm: Hierarchical, Layers: GradientLayers(m, 2),
			Boundary: m.ActivationBytes(model.FP16) / units.Bytes(max(len(m.Layers), 1))},
		Network: d.network(),
		Jitter:  0.05, Seed: 1, Steps: 1,
	}
}

// BenchmarkPipeline times one 1F1B step of transformerPipeline on 1,024,
// 4,096 and 16,384 GPUs (64 to 1,024 replicas of 16 stages): the whole
// Run, topology included. s/step is the wall time per simulated step.
func BenchmarkPipeline(b *testing.B) {
	for _, gpus := range []int{1024, 4096, 16384} {
		b.Run(fmt.Sprintf("gpus=%d", gpus), func(b *testing.B) {
			c := transformerPipeline(b, gpus/8)
			events := runAll(b, c)
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N*c.Steps), "s/step")
			b.ReportMetric(float64(events)/float64(c.Steps), "events/step")
		})
	}
}

// BenchmarkStep times data-parallel ResNet-50 steps on 1024 GPUs (128
// DGX A100 nodes). steps=1 is a whole Run of one step, building the
// topology and its paths; steps=11 amortizes that, and ms/step is the
// wall time per simulated step.
func BenchmarkStep(b *testing.B) {
	for _, steps := range []int{1, 11} {
		b.Run(fmt.Sprintf("gpus=1024/steps=%d", steps), func(b *testing.B) {
			c := resnet50OnDGXA100(b, 128)
			c.Steps = steps
			events := runAll(b, c)
			b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N*steps), "ms/step")
			b.ReportMetric(float64(events)/float64(steps), "events/step")
		})
	}
}

// BenchmarkTrace times the configuration of BenchmarkStep, 2 steps with
// the last traced and written as JSON, with the hierarchical all-reduce
// and with a flat ring (2046 flows per bucket, every link busy), to
// bound the cost of --trace. Compare with BenchmarkStep's steps=1.
func BenchmarkTrace(b *testing.B) {
	for _, alg := range []Algorithm{Hierarchical, Ring} {
		b.Run(fmt.Sprintf("gpus=1024/%v", alg), func(b *testing.B) {
			c := resnet50OnDGXA100(b, 128)
			c.Comm.Algorithm = alg
			c.Steps, c.TraceSteps = 2, 1
			var size int
			b.ReportAllocs()
			for range b.N {
				res, err := Run(c)
				if err != nil {
					b.Fatal(err)
				}
				var w countWriter
				if err := res.Trace.WriteJSON(&w); err != nil {
					b.Fatal(err)
				}
				size = int(w)
			}
			b.ReportMetric(float64(size), "trace-bytes")
		})
	}
}

type countWriter int

func (w *countWriter) Write(p []byte) (int, error) {
	*w += countWriter(len(p))
	return len(p), nil
}

// runAll runs c b.N times, reporting allocations, and returns the events
// of the last run.
func runAll(b *testing.B, c Config) int64 {
	b.Helper()
	var events int64
	b.ReportAllocs()
	for range b.N {
		res, err := Run(c)
		if err != nil {
			b.Fatal(err)
		}
		events = res.Events
	}
	return events
}
