package predict_test

import (
	"fmt"

	"scaleplan/predict"
	"scaleplan/scenarios"
)

// Seed 001's Caffe2 with staged data and verbs on TSUBAME 3.0, calibrated
// on its own 1-GPU time: the time to 90 epochs at 32 and 128 GPUs, and
// the risk at 128 GPUs' global batch of 4,096.
func ExamplePredict() {
	r, err := scenarios.Load("tsubame3-resnet50-caffe2-verbs", scenarios.Options{Edit: func(s *scenarios.Scenario) {
		s.Sweep.Devices = []int{32, 128}
		s.Calibration = &scenarios.Calibration{V0: 189.45, Devices: 1}
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := predict.Predict(r, predict.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, row := range p.Rows {
		fmt.Printf("%d GPUs: %.0f s (%s), %.0f%% efficient, %s\n", row.Point.Devices, float64(row.Time), predict.Duration(row.Time), 100*row.Efficiency, row.Risk.Short())
	}
	// Output:
	// 32 GPUs: 19273 s (5.35 h), 100% efficient, ok
	// 128 GPUs: 4884 s (81.4 min), 99% efficient, at risk (4.0× 1,024; ≥4,096 ended 0.05 lower)
}
