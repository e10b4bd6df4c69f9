package logs_test

import (
	"fmt"
	"log"
	"strings"

	"scaleplan/fit/logs"
)

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
	lg, err := logs.Read(strings.NewReader(out), "hvd.log")
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
	lg, err := logs.Read(strings.NewReader(out), "train.log")
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
