package sim_test

import (
	"fmt"

	"scaleplan/internal/units"
	"scaleplan/sim"
)

// Example simulates data-parallel training on 2 nodes of 4 GPUs: 32
// samples per GPU at 5 ms each, a 100 MB gradient in 25 MiB buckets
// all-reduced hierarchically (NVLink inside the node, one 100 Gbit/s NIC
// per GPU between nodes), and samples read from local NVMe.
func Example() {
	res, err := sim.Run(sim.Config{
		Nodes: 2, DevicesPerNode: 4, MicroBatch: 32,
		Compute: sim.Compute{PerSample: 5 * units.Millisecond, Update: 0.5 * units.Millisecond},
		Memory:  sim.Memory{Gradients: 100 * units.MB},
		Comm:    sim.Comm{Algorithm: sim.Hierarchical},
		Network: sim.Network{
			Intra: sim.Link{Bandwidth: 64 * units.GBps, Latency: 7 * units.Microsecond},
			NICs:  4, NIC: sim.Link{Bandwidth: 12.5 * units.GBps, Latency: 1 * units.Microsecond},
			Efficiency: 0.95, Overhead: 1 * units.Microsecond,
		},
		Input: sim.Input{Storage: sim.Local, SampleBytes: 110 * units.KB, Local: 2.7 * units.GBps,
			Decode: 5 * units.Millisecond, Cores: 28, Copy: 602112, HostToDevice: 15.75 * units.GBps},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("step %v: compute %v, exposed communication %v\n", res.StepTime, res.Breakdown.Compute, res.Breakdown.Comm)
	fmt.Printf("%.0f samples/s, utilisation %.3f\n", res.SamplesPerSec, res.Utilisation)
	// Output:
	// step 165 ms: compute 160.5 ms, exposed communication 4.495 ms
	// 1552 samples/s, utilisation 0.973
}
