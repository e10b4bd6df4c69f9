package compute_test

import (
	"fmt"
	"log"
	"strings"

	"scaleplan/compute"
	"scaleplan/hw"
)

// A host's own table, as `scaleplan bench host` or scripts/torchhost.py
// writes it: the CUDA rows replace the published launch and
// synchronisation.
func ExampleReadHostTable() {
	table := `# torch host cost per operator, microseconds (scripts/torchhost.py)
quantity,value
dispatch,0.729
autograd_record,0.418
module_call,1.118
sgd_tensor,1.815
adam_tensor,6.842
scaler_tensor,1.465
cuda_op,35.14
cuda_sync,21.5
`
	h, err := compute.ReadHostTable(strings.NewReader(table))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("a kernel %.2f µs, a synchronisation %.1f µs\n", float64(h.Kernel)*1e6, float64(h.Sync)*1e6)
	// Output: a kernel 35.14 µs, a synchronisation 21.5 µs
}

// The operator model's law of ResNet-50 in fp32 on an H100 at batches 1 and 64,
// eager PyTorch, with the default host and with a slow one: the device,
// each kernel taking KernelTime at least, bounds the step of the default
// host; the slow host bounds it at small batches only.
func ExampleLawAt() {
	cat, err := hw.Default()
	if err != nil {
		log.Fatal(err)
	}
	d, err := cat.Device("h100-sxm5-80gb")
	if err != nil {
		log.Fatal(err)
	}
	slow := compute.MeasuredHost
	slow.Kernel = 35e-6
	for _, h := range []*compute.HostCosts{nil, &slow} {
		for _, b := range []int{1, 64} {
			l, err := compute.LawAt(compute.Config{Device: d, Precision: hw.FP32, Mode: compute.Eager, Host: h}, "resnet50", b)
			if err != nil {
				log.Fatal(err)
			}
			step := float64(l.PerSample)*float64(b) + float64(l.Fixed)
			fmt.Printf("host kernel %v, batch %d: step %.1f ms\n", h != nil, b, step*1e3)
		}
	}
	// Output:
	// host kernel false, batch 1: step 7.2 ms
	// host kernel false, batch 64: step 65.3 ms
	// host kernel true, batch 1: step 14.4 ms
	// host kernel true, batch 64: step 65.3 ms
}
