package scenarios_test

import (
	"fmt"

	"scaleplan/scenarios"
)

func Example() {
	s, err := scenarios.Load("tsubame3-resnet50-caffe2-verbs", scenarios.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Sys.Name, s.Device.Name, s.Parallelism.AllReduce, s.Parallelism.Transport)
	for _, p := range s.Points() {
		fmt.Printf("%d GPUs on %d nodes: global batch %d\n", p.Devices, p.Nodes, p.GlobalBatch)
	}
	// Output:
	// tsubame3 p100-sxm2 hierarchical verbs
	// 1 GPUs on 1 nodes: global batch 32
	// 4 GPUs on 1 nodes: global batch 128
	// 32 GPUs on 8 nodes: global batch 1024
	// 128 GPUs on 32 nodes: global batch 4096
}
