// Package data holds the data sets and input pipeline of the scaleplan
// reference training engine: an IDX reader for MNIST-shaped image sets, a
// seeded synthetic data set of the same shape, per-epoch shuffling, sharding
// over data-parallel workers, and a prefetching loader.
//
// # Data sets
//
// A Dataset keeps N grey-scale images as bytes and their labels in memory.
// Load reads the four IDX files of an MNIST-shaped set from a directory;
// DefaultDir returns /usr/share/datasets/fashion-mnist, where Debian's
// dataset-fashion-mnist package installs Fashion-MNIST (60,000 training and
// 10,000 test images of 28x28 pixels in 10 classes), when it is present.
// Synthetic draws a learnable set from class templates plus Gaussian noise,
// for tests and for runs without the real data.
//
// # IDX format
//
// An IDX file (LeCun et al., the MNIST distribution format) is a big-endian
// header followed by the data:
//
//	bytes 0-1   0x00 0x00
//	byte  2     data type: 0x08 for unsigned bytes, the only type read here
//	byte  3     number of dimensions d
//	then        d sizes as 32-bit big-endian integers, outermost first
//	then        Π sizes data bytes, last dimension fastest
//
// so images files have magic 0x00000803 (count × rows × cols) and labels
// files 0x00000801 (count). Files may be gzipped; the reader looks at the
// first two bytes (0x1f 0x8b), not at the name. Every departure is an error
// naming the file and what was expected, wrapping ErrBadMagic, ErrTruncated,
// ErrTrailing or ErrTooLarge: a wrong magic, a header or payload shorter than
// the header says, bytes after the payload, a payload over MaxBytes, a
// corrupt gzip stream, images and labels of different counts. No input
// panics; FuzzIDX checks this.
//
// # Inputs
//
// Batches carry inputs as float32 pixel intensities scaled to [0, 1],
//
//	x = p/255,   p ∈ {0, ..., 255},
//
// one sample after another, row-major, with no mean subtraction; labels are
// ints in [0, Classes).
//
// # Shuffling and sharding
//
// A Sampler fixes the order of every epoch and its split into global
// batches of B samples and per-worker shards. The order of epoch e is a
// permutation that depends only on (Seed, e), drawn by Fisher–Yates from a
// math/rand/v2 PCG stream keyed by e, so any epoch can be reproduced alone.
// Worker w of W takes the contiguous slice
//
//	[kB + ⌊w·r/W⌋, kB + ⌊(w+1)·r/W⌋)
//
// of global batch k holding r samples (r = B except perhaps for the last
// batch). Every sample of an epoch is read exactly once over all workers;
// with DropLast the partial last batch is left out instead, so every shard
// has exactly B/W samples and data-parallel training with averaged
// gradients equals serial training on batch B.
//
// # Loader
//
// A Loader builds one worker's batches in a goroutine and hands them over
// through a queue of depth Prefetch. Close (or cancelling its context) stops
// the goroutine; Close waits for it to exit, so no goroutine outlives it.
//
// # Errors
//
// Bad input (files, configurations) gives errors; programmer errors (an
// out-of-range sample, batch or worker index, a method called on an
// invalid Sampler) panic with messages starting "data: ".
package data
