// Package nn holds the layers, the loss and the sequential Network of
// scaleplan's reference training engine, and the two reference networks
// MLP and SmallCNN that it trains on Fashion-MNIST.
//
// # Flat parameters
//
// A Network owns three contiguous slices: Params (every trainable
// parameter), Grads (their gradients, same layout) and State (BatchNorm's
// running statistics). Each layer's tensors are views of them, laid out
// layer by layer in forward order, so that a data-parallel worker's whole
// gradient is one []float32 that an all-reduce can process in place, in
// buckets, starting from the end while Backward is still running (see
// Network.GradReady). ParamGroups lists the tensors (name, kind, shape,
// offset, views) so that optimizers can treat each one on its own and skip
// biases and normalisation parameters for weight decay and LARS:
//
//	for _, p := range net.ParamGroups() {
//		groups = append(groups, optim.Group{Name: p.Name, Params: p.Params, Grads: p.Grads, Exclude: !p.Kind.Decay()})
//	}
//
// # Layouts
//
// Activations are NHWC: images are [N, H, W, C], with the channel
// innermost. An im2col row of a convolution is then a run of contiguous
// memory per kernel row, the convolution's matrix product writes its output
// directly in NHWC order, and BatchNorm and GroupNorm normalise over the
// last dimension whatever the rank, so the same layers serve [N, C] and
// [N, H, W, C]. Weights follow TensorFlow's layouts, chosen so that every
// forward product is a plain (untransposed) sgemm:
//
//	Dense    weight [In, Out]                 y = x·W + b
//	Conv2D   weight [k, k, InC, OutC] (HWIO)  Y = im2col(x)·W + b
//
// (a 3×3 convolution of stride 1 over 8 or more channels computes the
// same Y with Winograd's F(2×2, 3×3); see Conv2D).
//
// Single-channel 28×28 images are the same bytes in NHWC and NCHW, so
// both reference networks take [N, 784] (or [N, 28, 28, 1]) batches.
//
// # Training step
//
//	net.ZeroGrad()
//	loss, correct := net.Loss(ce, x, labels, true) // forward, loss, backward
//	// all-reduce net.Grads, then the optimizer updates net.Params
//
// Forward accepts any batch size and reuses each layer's buffers, growing
// them only when the batch grows; a step of a warmed-up network allocates
// almost nothing. Backward adds into Grads, so gradients accumulate over
// micro-batches until ZeroGrad. The first layer's input gradient is not
// computed unless Network.InputGrad is set.
//
// # Initialisation and replicas
//
// NewNetwork initialises weights with He (Kaiming) normal draws,
//
//	W ~ N(0, 2/fan_in)
//
// biases and shifts with 0 and scales with 1, in layout order from the
// given *rand.Rand: two networks built from identically seeded sources are
// bit-identical. Clone makes an independent deep copy for a worker replica.
// Reductions inside layers use fixed chunk boundaries (tensor.Parallel), so
// their results do not depend on the number of threads; only the large
// products that tensor.Gemm splits per thread under the openblas backend
// may differ in the last bits between thread counts.
//
// # Batch normalisation and data parallelism
//
// BatchNorm in training mode normalises with the statistics of the batch it
// is given. Data-parallel replicas therefore each use their local batch's
// statistics, as PyTorch's DistributedDataParallel does without
// SyncBatchNorm; the running statistics live in State, outside the
// gradient, and drift apart slightly between replicas.
package nn
