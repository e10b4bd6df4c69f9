package tensor_test

import (
	"fmt"

	"scaleplan/engine/tensor"
)

// A 2×3 by 3×2 product; the second operand is stored transposed.
func ExampleMatMul() {
	a := tensor.FromData([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	bt := tensor.FromData([]float32{1, 0, 1, 0, 1, 1}, 2, 3) // rows are the columns of b
	var c tensor.T
	tensor.MatMul(&c, a, bt, false, true)
	fmt.Println(c.Shape, c.Data)
	// Output: [2 2] [4 5 10 11]
}

func ExampleGemm() {
	// C = 2*A*B + C with A 1×2, B 2×1.
	a := []float32{1, 2}
	b := []float32{3, 4}
	c := []float32{1}
	tensor.Gemm(false, false, 1, 1, 2, 2, a, 2, b, 1, 1, c, 1)
	fmt.Println(c)
	// Output: [23]
}
