package data_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"scaleplan/engine/data"
)

// Ten samples in global batches of 4 over 2 workers, in data-set order:
// each worker reads a contiguous half of every global batch, and the short
// last batch is split between them.
func ExampleSampler() {
	s := data.Sampler{N: 10, Batch: 4, Workers: 2}
	order := s.Order(0)
	for k := range s.Batches() {
		fmt.Println("batch", k, "worker 0", s.Shard(order, k, 0), "worker 1", s.Shard(order, k, 1))
	}
	s.DropLast = true
	fmt.Println("batches with drop-last:", s.Batches())
	// Output:
	// batch 0 worker 0 [0 1] worker 1 [2 3]
	// batch 1 worker 0 [4 5] worker 1 [6 7]
	// batch 2 worker 0 [8] worker 1 [9]
	// batches with drop-last: 2
}

// A loader for worker 1 of 4 on a synthetic data set, two batches prepared
// ahead of the consumer.
func ExampleLoader() {
	c := data.DefaultSynthetic()
	c.Train, c.Test = 1000, 100
	train, _, err := data.Synthetic(c)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := data.Sampler{N: train.N, Batch: 256, Workers: 4, DropLast: true, Shuffle: true, Seed: 1}
	l, err := data.NewLoader(context.Background(), train, s, data.LoaderConfig{Worker: 1, Epochs: 2, Prefetch: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	n := 0
	for b, ok := l.Next(); ok; b, ok = l.Next() {
		if n == 0 {
			fmt.Printf("epoch %d step %d: %d of %d samples, %d inputs\n", b.Epoch, b.Step, b.Len(), b.Global, len(b.X))
		}
		n++
	}
	fmt.Println("batches:", n)
	// Output:
	// epoch 0 step 0: 64 of 256 samples, 50176 inputs
	// batches: 6
}

// Writing a tiny MNIST-shaped set with Encode and reading it back with
// Load. On a machine with Debian's dataset-fashion-mnist package,
// data.Load(data.DefaultDir()) reads Fashion-MNIST the same way.
func ExampleLoad() {
	dir, err := os.MkdirTemp("", "idx")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	files := map[string]*data.IDX{
		"train-images-idx3-ubyte": {Dims: []int{2, 2, 3}, Data: []byte{0, 51, 102, 153, 204, 255, 255, 0, 0, 0, 0, 255}},
		"train-labels-idx1-ubyte": {Dims: []int{2}, Data: []byte{1, 0}},
		"t10k-images-idx3-ubyte":  {Dims: []int{1, 2, 3}, Data: []byte{9, 9, 9, 9, 9, 9}},
		"t10k-labels-idx1-ubyte":  {Dims: []int{1}, Data: []byte{0}},
	}
	for name, x := range files {
		var buf bytes.Buffer
		if err := data.Encode(&buf, x); err != nil {
			fmt.Println(err)
			return
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			fmt.Println(err)
			return
		}
	}
	train, test, err := data.Load(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	x, y := train.Gather(nil, nil, []int{0})
	fmt.Printf("train %d, test %d, %dx%d, %d classes\n", train.N, test.N, train.Rows, train.Cols, train.Classes)
	fmt.Println(x, y)

	os.Remove(filepath.Join(dir, "t10k-labels-idx1-ubyte"))
	_, _, err = data.Load(dir)
	fmt.Println(err != nil)
	// Output:
	// train 2, test 1, 2x3, 2 classes
	// [0 0.2 0.4 0.6 0.8 1] [1]
	// true
}
