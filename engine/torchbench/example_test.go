package torchbench_test

import (
	"fmt"
	"strings"

	"scaleplan/engine/torchbench"
)

// Options map to the script's command-line flags; zero fields leave the
// script's defaults.
func ExampleOptions_Args() {
	opt := torchbench.Options{
		Models:    []string{"resnet50"},
		Batches:   []int{8, 16, 32, 64},
		Precision: "fp32,amp-fp16",
		Steps:     30,
		Device:    "cuda",
	}
	args, err := opt.Args()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("python3 torchbench.py " + strings.Join(args, " "))

	opt.Models = []string{"resnet-50"}
	_, err = opt.Args()
	fmt.Println(err)
	// Output:
	// python3 torchbench.py --model resnet50 --batch 8,16,32,64 --precision fp32,amp-fp16 --steps 30 --device cuda
	// torchbench: unknown model "resnet-50"; did you mean "resnet50"? (valid: resnet50, resnet18, efficientnet-b4, maskrcnn-r50-fpn, transformer-base, bert-base-squad, bert-large-squad, gpt3-125m, gpt3-350m, gpt3-760m, gpt3-1.3b, mlp, cnn)
}

func ExampleModels() {
	fmt.Println(strings.Join(torchbench.Models(), "\n"))
	// Output:
	// resnet50
	// resnet18
	// efficientnet-b4
	// maskrcnn-r50-fpn
	// transformer-base
	// bert-base-squad
	// bert-large-squad
	// gpt3-125m
	// gpt3-350m
	// gpt3-760m
	// gpt3-1.3b
	// mlp
	// cnn
}
