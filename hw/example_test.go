package hw_test

import (
	"fmt"
	"log"

	"scaleplan/hw"
)

func ExampleDefault() {
	c, err := hw.Default()
	if err != nil {
		log.Fatal(err)
	}
	s, n, d, err := c.Resolve("tsubame3")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d nodes, each %d x %s\n", s.Name, s.MaxNodes, n.Devices, d.Model)
	fmt.Printf("CPU: %d x %s, %d cores at %s\n", n.CPU.Sockets, n.CPU.Model, n.CPU.CoresPerSocket, n.CPU.Clock)
	fmt.Printf("memory %s, local %s %s\n", n.HostMemory, n.Storage[0].Capacity, n.Storage[0].Kind)
	fmt.Printf("network: %d x %s %s\n", n.NICs[0].Count, n.NICs[0].Bandwidth, n.NICs[0].Kind)
	fmt.Printf("P100: %s fp64, %s fp16, %s\n", d.Peak.FP64, d.Peak.FP16, d.Memory)
	fmt.Printf("system peak: %s fp64, %s fp16\n", s.PublishedPeak.FP64, s.PublishedPeak.FP16)
	// Output:
	// tsubame3: 540 nodes, each 4 x Tesla P100 SXM2 16GB (NVLink-optimized)
	// CPU: 2 x Intel Xeon E5-2680 v4, 14 cores at 2.4 GHz
	// memory 256 GiB, local 2 TB nvme
	// network: 4 x 100 Gbit/s omni-path
	// P100: 5.3 TFLOP/s fp64, 21.2 TFLOP/s fp16, 16 GiB
	// system peak: 12.15 PFLOP/s fp64, 47.2 PFLOP/s fp16
}

func ExampleCatalog_System() {
	c, err := hw.Default()
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.System("tsubame")
	fmt.Println(err)
	// Output:
	// unknown system "tsubame"; did you mean "tsubame3"?
}

func ExampleLoad() {
	// A user's cluster, using a built-in device (see docs/catalog.md).
	c, err := hw.Load("testdata/example-cluster.yaml")
	if err != nil {
		log.Fatal(err)
	}
	s, n, d, err := c.Resolve("my-cluster")
	if err != nil {
		log.Fatal(err)
	}
	verbs, err := s.Transport(hw.Verbs)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: up to %d x %d %s\n", s.Name, s.MaxNodes, n.Devices, d.Name)
	fmt.Printf("per node: %s of %s\n", n.NetworkBandwidth(s.Fabric.Kind), s.Fabric.Kind)
	fmt.Printf("verbs reaches %.0f%% of a link\n", 100*verbs.Efficiency)
	// Output:
	// my-cluster: up to 16 x 8 h200-sxm-141gb
	// per node: 3.2 Tbit/s of infiniband-ndr
	// verbs reaches 95% of a link
}

func ExamplePCIeBandwidth() {
	for gen := 3; gen <= 5; gen++ {
		fmt.Printf("Gen%d x16: %s each way\n", gen, hw.PCIeBandwidth(gen, 16))
	}
	// Output:
	// Gen3 x16: 15.75 GB/s each way
	// Gen4 x16: 31.51 GB/s each way
	// Gen5 x16: 63.02 GB/s each way
}
