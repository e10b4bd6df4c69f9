package sim

import (
	"fmt"
	"testing"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
)

// resnet50OnDGXA100 returns data-parallel ResNet-50 (fp16, momentum SGD,
// batch 256 per GPU) on nodes of the catalogue's dgx-a100: a roofline
// compute law, the model's gradient layout in 25 MiB buckets, a
// hierarchical all-reduce over NVLink and 8 HDR NICs with verbs, local
// NVMe input and 5 % per-rank jitter.
func resnet50OnDGXA100(tb testing.TB, nodes int) Config {
	cat, err := hw.Default()
	if err != nil {
		tb.Fatal(err)
	}
	prof, err := model.Default()
	if err != nil {
		tb.Fatal(err)
	}
	sys, node, dev, err := cat.Resolve("dgx-a100")
	if err != nil {
		tb.Fatal(err)
	}
	m, err := prof.Model("resnet50")
	if err != nil {
		tb.Fatal(err)
	}
	data, _ := prof.Dataset(m.Dataset)
	ps, err := Roofline(m, dev, hw.FP16)
	if err != nil {
		tb.Fatal(err)
	}
	verbs, nccl := sys.Transports[hw.Verbs], sys.Transports[hw.NCCL]
	return Config{
		Nodes: nodes, DevicesPerNode: node.Devices, MicroBatch: 256,
		Compute: Compute{PerSample: ps, Update: UpdateTime(m, dev, model.Momentum, model.FP16, model.FP32)},
		Memory:  ModelMemory(m, dev, model.Momentum, model.FP16, model.FP32),
		Comm:    Comm{Algorithm: Hierarchical, Layers: GradientLayers(m, 2)},
		Network: Network{
			Intra:         Link{units.BytesPerSec(float64(node.Link.Bandwidth) * nccl.Efficiency), node.Link.Latency + nccl.Overhead},
			PCIe:          Link{Bandwidth: node.HostBandwidth(dev)},
			NICs:          8,
			NIC:           Link{Bandwidth: sys.Fabric.Bandwidth.Bytes()},
			FabricLatency: sys.Fabric.Latency, Efficiency: verbs.Efficiency, Overhead: verbs.Overhead,
		},
		Input: Input{Storage: Local, SampleBytes: data.BytesPerSample, Samples: data.TrainSamples,
			Local: node.Storage[0].ReadBandwidth(), Decode: data.CPUSecondsPerSample, Cores: node.CPU.Cores(),
			Copy: units.Bytes(2 * data.InputElements()), HostToDevice: node.HostBandwidth(dev)},
		Jitter: 0.05, Seed: 1,
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
			var events int64
			b.ReportAllocs()
			for range b.N {
				res, err := Run(c)
				if err != nil {
					b.Fatal(err)
				}
				events = res.Events
			}
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
