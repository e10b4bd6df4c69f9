package dist

import (
	"math/rand/v2"
	"testing"

	"scaleplan/engine/nn"
)

// TestActivationValues checks the per-sample layer outputs against the
// networks' shapes: the ReLUs work in place and the reshapes are views,
// so only the dense, convolution and pooling outputs count.
func TestActivationValues(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want int
	}{
		{Config{Model: "mlp", Hidden: []int{1024, 1024}}, 1024 + 1024 + 10},
		{Config{Model: "mlp", Hidden: []int{32}}, 32 + 10},
		// conv 26×26×32, conv 24×24×64, pool 12×12×64, dense 128, dense 10.
		{Config{Model: "cnn"}, 26*26*32 + 24*24*64 + 12*12*64 + 128 + 10},
	} {
		c := tc.c.WithDefaults()
		if got := activationValues(c.build()); got != tc.want {
			t.Errorf("%s: %d values per sample, want %d", c.ModelName(), got, tc.want)
		}
	}
	// The default budget's chunks, as documented.
	for _, tc := range []struct {
		c    Config
		want int
	}{
		{Config{Model: "cnn"}, 32}, // 16 MiB / 271,400 B = 61, down to a power of two
		{Config{Model: "mlp"}, 0},  // dense layers only: whole
		{Config{Model: "mlp", Chunk: 100}, 100},
		{Config{Model: "cnn", Chunk: 7}, 7},
		{Config{Model: "cnn", Chunk: -1}, 0},
	} {
		c := tc.c.WithDefaults()
		if got := chunkLimit(&c, c.build()); got != tc.want {
			t.Errorf("%s, chunk %d: limit %d samples, want %d", c.ModelName(), tc.c.Chunk, got, tc.want)
		}
	}
	// Chunks per micro-batch: ceil(b/limit).
	for _, tc := range []struct {
		c    Config
		want int
	}{
		{Config{Model: "cnn", Batch: 16}, 1},
		{Config{Model: "cnn", Batch: 32}, 1},
		{Config{Model: "cnn", Batch: 33}, 2},
		{Config{Model: "cnn", Batch: 1024}, 32},
		{Config{Model: "cnn", Batch: 64, Chunk: 7}, 10},
		{Config{Model: "cnn", Batch: 64, Chunk: -1}, 1},
		{Config{Model: "mlp", Batch: 4096}, 1},
	} {
		if got := tc.c.Chunks(); got != tc.want {
			t.Errorf("%s batch %d, chunk %d: %d chunks, want %d", tc.c.ModelName(), tc.c.Batch, tc.c.Chunk, got, tc.want)
		}
	}
	// Batch normalization keeps micro-batches whole, whatever Chunk says.
	bn := nn.NewNetwork(rand.New(rand.NewPCG(1, 1)), nn.NewDense(784, 16), nn.NewBatchNorm(16), nn.NewDense(16, 10))
	c := Config{Chunk: 4}
	if got := chunkLimit(&c, bn); got != 0 {
		t.Errorf("network with batch norm: limit %d samples, want 0 (whole)", got)
	}
}
