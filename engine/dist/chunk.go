package dist

import (
	"slices"

	"scaleplan/engine/nn"
	"scaleplan/engine/tensor"
)

// DefaultChunkBytes is the activation budget from which a worker picks
// the size of its chunks when Config.Chunk is 0, for networks with a
// convolution: the most samples whose layer outputs, 4 bytes a value, fit
// in it, rounded down to a power of two (32 samples of the small CNN,
// whose layer outputs take 271 KB a sample). A convolutional network
// streams whole activation maps through the loops between its products
// (im2col, ReLU, pooling), and half of a 32 MiB last-level cache keeps a
// chunk's maps there from one layer to the next (docs/performance.md,
// "Chunks": chunks of 32 against 16 and whole micro-batches). Networks of dense layers run whole: the MLP 784-1024-1024-10
// was no faster at batch 1024 and 2048 in chunks, its products blocking
// their operands for the cache themselves.
const DefaultChunkBytes = 16 << 20

// Chunks returns the number of chunks a worker of c runs each micro-batch
// in (1: whole; see Config.Chunk). It builds the network to measure its
// layer outputs, so it panics where c.Validate reports an unknown model.
func (c Config) Chunks() int {
	c = c.WithDefaults()
	return chunkCount(c.Batch, chunkLimit(&c, c.build()))
}

// chunkCount returns the number of chunks of at most limit samples (0: no
// limit) that a micro-batch of b samples runs in.
func chunkCount(b, limit int) int {
	if limit <= 0 || b <= limit {
		return 1
	}
	return (b + limit - 1) / limit
}

// chunkLimit returns the most samples a worker of c runs at once with net,
// or 0 for no limit.
func chunkLimit(c *Config, net *nn.Network) int {
	if c.Chunk < 0 || hasLayer[*nn.BatchNorm](net) {
		return 0
	}
	if c.Chunk > 0 {
		return c.Chunk
	}
	if !hasLayer[*nn.Conv2D](net) {
		return 0
	}
	return roundChunk(DefaultChunkBytes / (4 * activationValues(net)))
}

// hasLayer reports whether net has a layer of type L.
func hasLayer[L nn.Layer](net *nn.Network) bool {
	return slices.ContainsFunc(net.Layers, func(l nn.Layer) bool { _, ok := l.(L); return ok })
}

// roundChunk rounds n samples down to a power of two (at least 1), so
// that a chunk splits evenly into a convolution's 16 sample groups, its
// unit of parallel work, from 16 samples on.
func roundChunk(n int) int {
	p := 1
	for p*2 <= n {
		p *= 2
	}
	return p
}

// activationValues returns the number of values the layers of net write
// per sample (outputs that share their input's storage, as views and
// in-place layers do, counted once), by passing a zero sample through a
// copy of net.
func activationValues(net *nn.Network) int {
	cp := net.Clone()
	x := tensor.New(1, inputDim)
	n := 0
	for _, l := range cp.Layers {
		y := l.Forward(x, false)
		if len(y.Data) > 0 && (len(x.Data) == 0 || &y.Data[0] != &x.Data[0]) {
			n += y.Len()
		}
		x = y
	}
	return n
}
