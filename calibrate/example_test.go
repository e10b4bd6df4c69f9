package calibrate_test

import (
	"fmt"

	"scaleplan/calibrate"
	"scaleplan/engine/dist"
	"scaleplan/fit"
	"scaleplan/sim"
)

// Two workers on two cores, each calibrated by a sweep that fitted
// v0 = 5000 samples/s and t = 10 ms (4 ms of it the update): each
// computes a batch of 64 in 64/5000 s + 10 ms = 22.8 ms, and the ring
// all-reduce of the 2 MiB gradient adds 2(α + n/(2β)) = 2.14 ms over a
// link of 20 µs and 1 GB/s.
func ExampleSimConfig() {
	cal := &calibrate.Calibration{
		Sweeps: []*calibrate.Sweep{{For: 2, Serves: []int{2}, Copies: 2, Threads: 1,
			Law: &fit.ThroughputFit{V0: 5000, T: 0.010}, Update: 0.004, Forward: 0.4}},
		Layers: []int{1 << 18, 1 << 18}, Bucket: 1 << 20, Cores: 2,
		Links: map[string]*dist.Link{"inproc": {Latency: 20e-6, Bandwidth: 1e9}},
	}
	cfg, err := calibrate.SimConfig(cal, 2, 64, "inproc")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := sim.Run(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: step %.2f ms, %.0f samples/s\n", cfg.Name, float64(res.StepTime)*1e3, res.SamplesPerSec)
	// Output:
	// engine 2 workers, inproc, batch 64: step 24.94 ms, 5133 samples/s
}

// The sweeps each calibration measures for 2 and 4 workers on two cores
// over TCP: with each, 4 workers share the sweep of 2 (a worker per
// core); with step, they have one of their own, 4 workers in step.
func ExampleSweeps() {
	for _, mode := range calibrate.Modes {
		fmt.Printf("%s:", mode)
		for _, sw := range calibrate.Sweeps(mode, []int{2, 4}, []string{"tcp"}, 2, 1) {
			fmt.Printf(" [%d workers on %d core(s) each, over %q, for %v]", sw.Copies, sw.Threads, sw.Over, sw.Serves)
		}
		fmt.Println()
	}
	// Output:
	// step: [2 workers on 1 core(s) each, over "", for [2]] [4 workers on 1 core(s) each, over "tcp", for [4]]
	// each: [2 workers on 1 core(s) each, over "", for [2 4]]
	// one: [2 workers on 1 core(s) each, over "", for []]
}
