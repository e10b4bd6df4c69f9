package model_test

import (
	"fmt"
	"log"
	"strings"

	"scaleplan/internal/units"
	"scaleplan/model"
)

func ExampleDefault() {
	p, err := model.Default()
	if err != nil {
		log.Fatal(err)
	}
	m, err := p.Model("resnet50")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("parameters:", m.Params)
	fmt.Println("forward per image:", m.ForwardFLOPs)
	fmt.Println("training per image:", m.TrainFLOPsPerSample())
	fmt.Println("fp32 gradient:", m.GradientBytes(model.FP32))
	fmt.Println("25 MiB buckets:", m.Buckets(25*units.MiB, 4))

	_, err = p.Model("resnet5")
	fmt.Println(err)
	// Output:
	// parameters: 25557032
	// forward per image: 8.178 GFLOP
	// training per image: 24.54 GFLOP
	// fp32 gradient: 102.2 MB
	// 25 MiB buckets: [26.06 MB 17.85 MB 25.2 MB 24.45 MB 8.665 MB]
	// unknown model "resnet5"; did you mean "resnet50"?
}

func ExampleRecipe_Steps() {
	p, err := model.Default()
	if err != nil {
		log.Fatal(err)
	}
	r, err := p.Recipe("mlperf-v0.7-resnet50")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %s %v, lr %v, %v epochs, target %s %v\n",
		r.Name, r.Optimizer, r.GlobalBatch, r.BaseLR, r.Epochs, r.Target().Metric, r.Target().Value)
	for _, b := range []int{1664, 3328, 8192} {
		fmt.Printf("global batch %5d: %5d steps, %d per epoch", b, r.Steps(b), r.StepsPerEpoch(b, 1281167))
		if int64(b) > r.MaxGlobalBatch {
			fmt.Printf(" (beyond the largest batch known to reach the target, %d)", r.MaxGlobalBatch)
		}
		fmt.Println()
	}
	// Output:
	// mlperf-v0.7-resnet50: lars 1664, lr 7.4, 37 epochs, target top1 0.759
	// global batch  1664: 28490 steps, 770 per epoch
	// global batch  3328: 14245 steps, 385 per epoch (beyond the largest batch known to reach the target, 1664)
	// global batch  8192:  5809 steps, 157 per epoch (beyond the largest batch known to reach the target, 1664)
}

func ExampleParse() {
	const doc = `
datasets:
  cifar10: {train_samples: 50000, bytes_per_sample: 3073 B, input_shape: [32, 32, 3]}
models:
  tiny:
    task: image-classification
    dataset: cifar10
    params: 30730
    forward_flops: 61440 FLOP
    activations: {fp32: 12.4 kB}
    class: mlp
recipes:
  tiny-sgd:
    model: tiny
    source: an example
    optimizer: sgd
    per_device_batch: 128
    devices: 2
    base_lr: 0.1
    schedule: {kind: cosine}
    epochs: 10
    targets: [{metric: accuracy, value: 40}]
`
	_, err := model.Parse(strings.NewReader(doc))
	fmt.Println(err)

	p, err := model.Parse(strings.NewReader(strings.Replace(doc, "value: 40", "value: 0.40", 1)))
	if err != nil {
		log.Fatal(err)
	}
	r, _ := p.Recipe("tiny-sgd")
	fmt.Println(r.GlobalBatch, r.Steps(int(r.GlobalBatch)))
	// Output:
	// line 22: recipes.tiny-sgd.targets[0].value: 40 is not a fraction: write 0.4 for 40%
	// 256 1960
}
