package model

import (
	"fmt"
	"strconv"
	"strings"
)

// Operator generators of the reference engine's models (engine/nn
// models.go), named as their profiles in profiles/engine.yaml, with the
// conventions of ops_layers.go. Both take 28×28 single-channel images;
// Shape.Resolution must be 0 or 28.

// engineMLPOps lists the engine's MLP, 784-1024-1024-10 with in-place
// ReLUs between the dense layers, a softmax and cross-entropy loss:
// 1,863,690 parameters, 2·(784·1024 + 1024·1024 + 1024·10) forward FLOPs
// per sample.
func engineMLPOps(s Shape) ([]Op, error) {
	if err := checkEngineShape("mlp", s); err != nil {
		return nil, err
	}
	b := newConvNet(s.Precision, s.Batch)
	x := b.input(784, 1, 1)
	for i, out := range []int{1024, 1024} {
		n := strconv.Itoa(i + 1)
		x = b.relu("relu"+n, b.linear("dense"+n, x, out))
	}
	b.classifierLoss("loss", b.linear("dense3", x, 10))
	return b.ops(), nil
}

// engineCNNOps lists the engine's SmallCNN: 3×3 convolutions to 32 and 64
// channels with biases (valid padding, stride 1), a ReLU after the first,
// a 2×2 max-pool and then a ReLU after the second, dense 9216-128 with a
// ReLU, dense 128-10, softmax and cross-entropy: 1,199,882 parameters.
// engine/torchbench's "cnn" (torchbench.py, build_model: an nn.Sequential
// of Conv2d, ReLU, Conv2d, ReLU, MaxPool2d, ...), a log whose
// Shape.Framework begins with "torch", takes the second ReLU before the
// pool, over four times the values: the same function, since ReLU and a
// max-pool commute, but not the same cost.
func engineCNNOps(s Shape) ([]Op, error) {
	if err := checkEngineShape("cnn", s); err != nil {
		return nil, err
	}
	b := newConvNet(s.Precision, s.Batch)
	x := b.conv("conv1", b.input(1, 28, 28), convSpec{cout: 32, k: 3, stride: 1, bias: true})
	x = b.relu("relu1", x)
	x = b.conv("conv2", x, convSpec{cout: 64, k: 3, stride: 1, bias: true})
	if strings.HasPrefix(strings.ToLower(s.Framework), "torch") {
		x = b.maxPool("pool", b.relu("relu2", x), 2, 2, 0)
	} else {
		x = b.relu("relu2", b.maxPool("pool", x, 2, 2, 0))
	}
	x = b.relu("relu3", b.linear("dense1", x, 128))
	b.classifierLoss("loss", b.linear("dense2", x, 10))
	return b.ops(), nil
}

// checkEngineShape accepts a resolution of 0 or 28, the engine's only
// input size, and a batch of at most maxOpBatch.
func checkEngineShape(model string, s Shape) error {
	if s.Resolution != 0 && s.Resolution != 28 {
		return fmt.Errorf("model %s: resolution %d: the engine's models take 28×28 images (0 or 28)", model, s.Resolution)
	}
	_, err := checkResolution(model, s, 28, 28)
	return err
}
