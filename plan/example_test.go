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
	// devices 32, batch 52 × 1: 8.9 min, $24.22
	// devices 16, batch 104 × 1: 17.3 min, $23.69
	// devices 8, batch 208 × 1: 34.7 min, $23.68
	// devices 1, batch 416 × 1: 4.38 h, $22.45
	// recommended: devices 8
}
