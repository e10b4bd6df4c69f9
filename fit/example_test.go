package fit_test

import (
	"fmt"
	"log"

	"scaleplan/fit"
	"scaleplan/internal/units"
)

// ExampleThroughput fits five exact points of seed 003's one-GPU curve,
// v0 = 258.1 samples/s and t = 54 ms.
func ExampleThroughput() {
	b := []float64{16, 32, 64, 128, 256}
	v := make([]float64, len(b))
	for i := range b {
		v[i] = b[i] / (b[i]/258.1 + 0.054)
	}
	f, err := fit.Throughput(b, v, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("v0 = %.1f samples/s, t = %v, R² = %.4f\n", f.V0, f.T, f.R2)
	fmt.Printf("step at batch 512: %v\n", f.StepTime(512))
	// Output:
	// v0 = 258.1 samples/s, t = 54 ms, R² = 1.0000
	// step at batch 512: 2.038 s
}

// ExampleLackOfFit tells noisy measurements from a wrong law: every batch
// measured three times, 6 % apart, around means that follow the law.
func ExampleLackOfFit() {
	var b, v []float64
	for _, x := range []float64{16, 64, 256, 1024} {
		mean := x / (x/12000 + 0.002)
		b = append(b, x, x, x)
		v = append(v, mean*0.94, mean, mean*1.06)
	}
	f, err := fit.Throughput(b, v, nil)
	if err != nil {
		log.Fatal(err)
	}
	lf := f.LackOfFit
	fmt.Printf("R² = %.4f, repeats scatter %.1f%%, lack of fit F = %.3f, p = %.2f\n", f.R2, 100*lf.PureError, lf.F, lf.P)
	// Output:
	// R² = 0.9713, repeats scatter 6.0%, lack of fit F = 0.000, p = 1.00
}

// ExampleSteps fits a steps-to-target curve and names the regime of three
// batches.
func ExampleSteps() {
	B := []float64{64, 256, 1024, 4096, 16384, 65536}
	S := make([]float64, len(B))
	for i := range B {
		S[i] = 1000 * (1 + 2048/B[i])
	}
	f, err := fit.Steps(B, S, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("S_min = %.0f steps, B_noise = %.0f samples\n", f.SMin, f.BNoise)
	for _, b := range []float64{256, 2048, 16384} {
		fmt.Printf("B = %5.0f: %4.0f steps, %v\n", b, f.Predict(b), f.Regime(b))
	}
	// Output:
	// S_min = 1000 steps, B_noise = 2048 samples
	// B =   256: 9000 steps, perfect scaling
	// B =  2048: 2000 steps, diminishing returns
	// B = 16384: 1125 steps, maximal data parallelism
}

// ExampleComm separates seed 003's fixed step times on one GPU and on two
// without peer-to-peer, for ResNet-50's 102.2 MB of fp32 gradients.
func ExampleComm() {
	f, err := fit.Comm([]int{1, 2}, []units.Seconds{0.054, 0.15}, nil, 102.2*units.MB, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("t_fixed = %v, t_comm = %v, all-reduce bandwidth = %v\n", f.TFixed, f.TComm, f.Bandwidth)
	// Output:
	// t_fixed = 54 ms, t_comm = 96 ms, all-reduce bandwidth = 1.065 GB/s
}
