package plan_test

import (
	"fmt"

	"scaleplan/plan"
	"scaleplan/predict"
)

// A plan for ResNet-50 to 75.9 % top-1 on DGX A100 nodes within an hour:
// the Pareto set of time against dollars and the recommendation.
func ExampleSearch() {
	res, err := plan.Search(plan.Request{Recipe: "mlperf-v0.7-resnet50", Systems: []string{"dgx-a100"}, MaxDevices: 32, Deadline: 3600})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range res.Pareto {
		fmt.Printf("devices %d, batch %d × %d: %s, $%.2f\n", c.Config.Devices, c.Config.BatchPerDevice, c.Config.Accumulation, predict.Duration(c.Row.Time), c.Row.Cost)
	}
	fmt.Println("recommended: devices", res.Recommended.Config.Devices)
	// Output:
	// devices 32, batch 52 × 1: 14.4 min, $39.24
	// devices 16, batch 104 × 1: 24.9 min, $34.00
	// devices 8, batch 208 × 1: 46.0 min, $31.37
	// devices 1, batch 416 × 1: 5.87 h, $30.03
	// recommended: devices 8
}
