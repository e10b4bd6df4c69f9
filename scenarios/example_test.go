package scenarios_test

import (
	"fmt"
	"os"
	"path/filepath"

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

// A calibration written by `scaleplan fit --out` replaces a shipped
// scenario's compute when it measured the scenario's model on its device
// kind at its precision.
func ExampleOptions_calibrations() {
	dir, err := os.MkdirTemp("", "calib")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "calib.yaml")
	err = os.WriteFile(path, []byte(`throughput:
  - {model: resnet50, device: p100-sxm2, devices: 1, precision: fp32, v0: 150, t: 5 ms, r2: 0.99, points: 4, source: bench.csv}
`), 0o644)
	if err != nil {
		fmt.Println(err)
		return
	}
	files, err := scenarios.ReadCalibrationFiles([]string{path})
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := scenarios.Load("tsubame3-resnet50-caffe2-verbs", scenarios.Options{Calibrations: files})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := s.Calibration
	fmt.Printf("calibrated by %s: v0 = %g samples/s on %d device, t = %v\n", filepath.Base(s.CalibratedBy), c.V0, c.Devices, c.T)
	// Output:
	// calibrated by calib.yaml: v0 = 150 samples/s on 1 device, t = 5 ms
}

// The published calibrations built into the program: one DGX H100's
// ResNet-50 throughput in MLPerf Training v3.0 computes the shipped
// scenario of that system.
func ExampleReadCalibrationFiles_published() {
	files, err := scenarios.ReadCalibrationFiles([]string{scenarios.Published})
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := scenarios.Load("dgx-h100-resnet50-mlperf-v3.0", scenarios.Options{Calibrations: files})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := s.Calibration
	fmt.Printf("calibrated by %s: v0 = %.0f samples/s on %d device, t = %v\n", s.CalibratedBy, c.V0, c.Devices, c.T)
	// Output:
	// calibrated by published: v0 = 7510 samples/s on 1 device, t = 3.575 ms
}
