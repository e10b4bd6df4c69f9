package plots_test

import (
	"fmt"
	"log"

	"scaleplan/plots"
)

// Example draws chart 3, time to train against device count, for two
// scenario variants and prints the data it shows. plots.WriteAll(dir,
// "time", c.Plot) would write time.png and time.svg.
func Example() {
	c, err := plots.TimeToTrain(plots.ScalingData{
		Subject: "ResNet-50",
		Predicted: []plots.Curve{
			{Name: "default", X: []float64{1, 4, 16}, Y: []float64{36000, 10800, 5400}},
			{Name: "staged", X: []float64{1, 4, 16}, Y: []float64{36000, 9000, 2700}},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(c.Text())
	// Output:
	// chart time
	// title "Time to train vs device count: ResNet-50"
	// x "devices" log [0.870551, 18.3792]
	// y "time to train (h)" log [0.529216, 11.8099]
	//
	// series "default" line
	//   "devices" "h"
	//   1 10
	//   4 3
	//   16 1.5
	//
	// series "staged" line
	//   "devices" "h"
	//   1 10
	//   4 2.5
	//   16 0.75
	//
	// series "ideal" dashed
	//   "devices" "h"
	//   0.870551 11.487
	//   18.3792 0.544094
}
