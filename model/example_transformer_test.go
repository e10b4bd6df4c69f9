package model_test

import (
	"fmt"

	"scaleplan/model"
)

// A shipped transformer shape: its parameters, a step's FLOPs and the
// activations a layer keeps, without and with selective recomputation.
func ExampleTransformerShape() {
	s, err := model.LookupTransformer("gpt3-175b")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %.4g parameters\n", s.Name, float64(s.Params()))
	fmt.Printf("step of 1 × 2048 tokens: %.4g FLOP\n", s.TrainFLOPs(1, 2048))
	for _, rc := range []model.Recompute{model.RecomputeNone, model.RecomputeSelective} {
		b, err := s.ActivationBytesPerLayer(model.TransformerStep{Batch: 1, Precision: model.BF16, Recompute: rc})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("recompute %s: %v per layer\n", rc, b)
	}
	// Output:
	// gpt3-175b: 1.746e+11 parameters
	// step of 1 × 2048 tokens: 2.204e+15 FLOP
	// recompute none: 2.869 GB per layer
	// recompute selective: 816 MiB per layer
}
