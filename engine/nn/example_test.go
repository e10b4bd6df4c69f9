package nn_test

import (
	"fmt"
	"math/rand/v2"

	"scaleplan/engine/nn"
	"scaleplan/engine/tensor"
)

// A Dense layer on a 2×2 case: weights are set through the network's
// parameter table.
func ExampleDense() {
	d := nn.NewDense(2, 2)
	net := nn.NewNetwork(rand.New(rand.NewPCG(1, 2)), d)
	for _, p := range net.ParamGroups() {
		switch p.Name {
		case "0.weight": // [In, Out]: y_j = Σ_i x_i W[i,j] + b_j
			copy(p.Params, []float32{1, 2, 3, 4})
		case "0.bias":
			copy(p.Params, []float32{0.5, -0.5})
		}
	}
	x := tensor.FromData([]float32{1, 0, 0, 1}, 2, 2) // two samples
	y := net.Forward(x, false)
	fmt.Println(y.Shape, y.Data)
	// Output: [2 2] [1.5 1.5 3.5 3.5]
}

// The parameter table of the reference CNN, as an optimizer sees it.
func ExampleNetwork_ParamGroups() {
	net := nn.SmallCNN(rand.New(rand.NewPCG(1, 2)))
	for _, p := range net.ParamGroups() {
		fmt.Printf("%-9s %-6s %-15s offset %7d decay %t\n", p.Name, p.Kind, fmt.Sprint(p.Shape), p.Offset, p.Kind.Decay())
	}
	fmt.Println(net.NumParams(), "parameters")
	// Output:
	// 1.weight  weight [3 3 1 32]      offset       0 decay true
	// 1.bias    bias   [32]            offset     288 decay false
	// 3.weight  weight [3 3 32 64]     offset     320 decay true
	// 3.bias    bias   [64]            offset   18752 decay false
	// 7.weight  weight [9216 128]      offset   18816 decay true
	// 7.bias    bias   [128]           offset 1198464 decay false
	// 9.weight  weight [128 10]        offset 1198592 decay true
	// 9.bias    bias   [10]            offset 1199872 decay false
	// 1199882 parameters
}

// One training step of the reference MLP with plain SGD.
func ExampleNetwork_Loss() {
	rng := rand.New(rand.NewPCG(3, 4))
	net := nn.MLP(rng, 784, 64, 10)
	x := tensor.New(8, 784)
	labels := make([]int, 8)
	for i := range x.Data {
		x.Data[i] = float32(rng.Float64())
	}
	for i := range labels {
		labels[i] = i % 10
	}
	ce := &nn.CrossEntropy{Smoothing: 0.1}
	var losses []float64
	for range 20 {
		net.ZeroGrad()
		loss, _ := net.Loss(ce, x, labels, true)
		losses = append(losses, loss)
		for i, g := range net.Grads {
			net.Params[i] -= 0.05 * g
		}
	}
	_, correct := net.Loss(ce, x, labels, false)
	fmt.Printf("loss fell: %t, %d/8 correct\n", losses[19] < losses[0]/2, correct)
	// Output: loss fell: true, 8/8 correct
}
