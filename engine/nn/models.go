package nn

import "math/rand/v2"

// MLP returns a multilayer perceptron with ReLU between its Dense layers
// and none after the last, initialised from rng:
//
//	flatten, dense(sizes[0]→sizes[1]), relu, ..., dense(sizes[k-1]→sizes[k])
//
// The ReLUs work in place (ReLU.InPlace).
// The reference network is MLP(rng, 784, 1024, 1024, 10) (1,863,690
// parameters) on flat [N, 784] (or [N, 28, 28, 1]) Fashion-MNIST images.
// It panics if fewer than two sizes are given or a size is below 1.
func MLP(rng *rand.Rand, sizes ...int) *Network {
	if len(sizes) < 2 {
		panic(badConfig)
	}
	layers := []Layer{NewFlatten()}
	for i := 1; i < len(sizes); i++ {
		if i > 1 {
			layers = append(layers, newReLUInPlace())
		}
		layers = append(layers, NewDense(sizes[i-1], sizes[i]))
	}
	return NewNetwork(rng, layers...)
}

// SmallCNN returns the reference convolutional network for 28×28
// single-channel images (PyTorch's MNIST example without dropout),
// initialised from rng. Convolutions use stride 1 and valid (zero)
// padding, so the spatial size goes 28 → 26 → 24 → 12:
//
//	reshape to [N, 28, 28, 1]    (accepts [N, 784] or [N, 28, 28, 1])
//	conv2d(1→32, 3×3), relu      → [N, 26, 26, 32]
//	conv2d(32→64, 3×3)           → [N, 24, 24, 64]
//	maxpool(2×2, stride 2), relu → [N, 12, 12, 64]
//	flatten                      → [N, 9216]
//	dense(9216→128), relu
//	dense(128→10)                → logits [N, 10]
//
// The second ReLU comes after the pooling rather than before: ReLU is
// monotonic, so the two orders compute the same function and, with ties
// broken alike, the same gradient, and pooling first rectifies a quarter
// of the elements. It has 1,199,882 parameters, named as in the order
// conv, relu, conv, relu, pool (the layers without parameters keep their
// indices). The ReLUs work in place (ReLU.InPlace).
func SmallCNN(rng *rand.Rand) *Network {
	return NewNetwork(rng,
		NewReshape(28, 28, 1),
		NewConv2D(1, 32, 3, 1, 0), newReLUInPlace(),
		NewConv2D(32, 64, 3, 1, 0),
		NewMaxPool(2, 2), newReLUInPlace(),
		NewFlatten(),
		NewDense(12*12*64, 128), newReLUInPlace(),
		NewDense(128, 10),
	)
}
