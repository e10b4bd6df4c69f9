package fit_test

import (
	"fmt"
	"log"
	"strings"

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

// ExampleRead reads Horovod's synthetic benchmark output.
func ExampleRead() {
	out := `Model: resnet50
Batch size: 64
Number of GPUs: 4
Running warmup...
Running benchmark...
Iter #0: 229.3 img/sec per GPU
Img/sec per GPU: 229.1 +-1.1
Total img/sec on 4 GPU(s): 916.4 +-4.4
`
	lg, err := fit.Read(strings.NewReader(out), "hvd.log")
	if err != nil {
		log.Fatal(err)
	}
	r := lg.Records[0]
	fmt.Printf("%s: %s, %d × %s, global batch %d, %.1f samples/s (line %d)\n", lg.Format, r.Model, r.Workers, r.Device, r.GlobalBatch, r.Throughput(), lg.Lines[0])
	// Output:
	// horovod: resnet50, 4 × GPU, global batch 256, 916.4 samples/s (line 8)
}

// ExampleRead_torchvision reads the output of torchvision's reference
// train.py under torchrun: two processes of 256 images, and the lines past
// iteration 19 of the epoch, 0.2 s a step on average.
func ExampleRead_torchvision() {
	out := `Namespace(data_path='/data/imagenet', model='resnet50', device='cuda', batch_size=256, amp=True, world_size=2, distributed=True)
Epoch: [0]  [   0/2503]  eta: 1:22:51  lr: 0.1  img/s: 41.2  loss: 6.9 (6.9)  time: 1.9861  data: 1.7032  max mem: 31002
Epoch: [0]  [  20/2503]  eta: 0:09:43  lr: 0.1  img/s: 1290.7  loss: 6.9 (6.9)  time: 0.2010  data: 0.0012  max mem: 31002
Epoch: [0]  [  40/2503]  eta: 0:08:35  lr: 0.1  img/s: 1302.3  loss: 6.8 (6.9)  time: 0.1990  data: 0.0010  max mem: 31002
Epoch: [0] Total time: 0:08:23
Test:  Acc@1 3.116 Acc@5 10.874
Training time 0:09:01
`
	lg, err := fit.Read(strings.NewReader(out), "train.log")
	if err != nil {
		log.Fatal(err)
	}
	r, run := lg.Records[0], lg.Runs[0]
	fmt.Printf("%s: %s, %d × %s at %s, global batch %d, step %.3f s, %.0f samples/s, data wait %.4f s\n",
		lg.Format, r.Model, r.Workers, r.Device, r.Precision, r.GlobalBatch, r.StepTime, r.Throughput(), r.Phases.DataWait)
	fmt.Printf("run %s: %g epoch, accuracy %.5f, %s in %v\n", run.Run, run.Epochs, run.Accuracy, run.Status, run.TimeToTrain)
	// Output:
	// torchvision: resnet50, 2 × GPU at amp-fp16, global batch 512, step 0.200 s, 2560 samples/s, data wait 0.0011 s
	// run 1: 1 epoch, accuracy 0.03116, finished in 541 s
}
