package report_test

import (
	"bytes"
	"fmt"
	"log"

	"scaleplan/report"
	"scaleplan/scenarios"
)

// Example simulates seed 001's Caffe2 scenario with staging and verbs on
// 4 and 32 GPUs, lists the charts of its sweep and the bars of its
// breakdown, and renders its page.
func Example() {
	r, err := scenarios.Load("tsubame3-resnet50-caffe2-verbs", scenarios.Options{
		Edit: func(s *scenarios.Scenario) { s.Sweep.Devices = []int{4, 32} },
	})
	if err != nil {
		log.Fatal(err)
	}
	run, err := report.Simulate(r, 3, true, nil)
	if err != nil {
		log.Fatal(err)
	}
	d := report.ScalingData([]*report.Run{run})
	fmt.Printf("%s: %s at %v devices, published at %v\n", d.Subject, d.Predicted[0].Name, d.Predicted[0].X, d.Measured[0].X)
	for _, b := range report.BreakdownData(run).Bars {
		fmt.Printf("bar %s: %d parts\n", b.Label, len(b.Parts))
	}
	charts, _, err := report.AllCharts([]*report.Run{run})
	if err != nil {
		log.Fatal(err)
	}
	for _, ch := range charts {
		fmt.Println("chart", ch.Kind)
	}
	page, err := report.Render(run, 3, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(bytes.HasPrefix(page, []byte("<!DOCTYPE html>")), bytes.Count(page, []byte("<svg ")))
	// Output:
	// resnet50 on tsubame3: tsubame3-resnet50-caffe2-verbs at [4 32] devices, published at [1 4 32 128]
	// bar 4: 5 parts
	// bar 32: 5 parts
	// chart scaling
	// chart efficiency
	// chart breakdown
	// chart timeline
	// true 4
}
