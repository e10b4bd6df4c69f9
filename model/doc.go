// Package model holds hardware-independent cost profiles of neural
// networks, the datasets they train on, and reference training recipes.
// Mapping a model onto hardware is the simulator's job (package sim); this
// package knows nothing of devices.
//
// # Overview
//
// A Profiles value holds three maps by name:
//
//   - Dataset: samples per epoch, stored bytes per sample, input shape,
//     and the CPU time to decode and augment a sample.
//   - Model: trainable parameters, forward FLOPs and stored activation
//     bytes per sample, a model class for the roofline, and the gradient
//     layout — layers in backward order — that all-reduce buckets are cut
//     from.
//   - Recipe: the hyperparameters with which a model reaches a quality
//     target (optimizer, batch, learning-rate schedule, epochs), where they
//     come from, the largest global batch known to work, and published
//     times to train.
//
// Default returns the profiles shipped in profiles/*.yaml, embedded in the
// binary; every figure there cites its source. Load merges a user's YAML
// files over them; Parse and ReadFile read one document on its own.
//
// # Conventions
//
// FLOPs count a multiply-add as two floating-point operations, over
// convolutions and matrix products; normalization, activation functions,
// pooling and additions are left out. The backward pass costs about twice
// the forward (a gradient for the activations and one for the weights), so
//
//	training FLOPs per sample = 3 · forward FLOPs
//
// which for a dense network of N parameters is the 6N-per-token rule.
//
// A sample is what the dataset counts: an image, a sentence pair, or a
// token pair. Per-sample figures and batch sizes are in that unit; the
// Transformer recipe's batch of 10,240 is tokens.
//
// A recipe gives its length in epochs or in iterations. Updates follow
// seed 000's definition, epochs × dataset / batch, with each epoch's last
// partial batch run (rounded up):
//
//	steps(B) = ⌊E⌋·⌈N/B⌉ + ⌈(E-⌊E⌋)·⌈N/B⌉⌉
//
// # Transformers by shape
//
// TransformerShape describes a transformer by its shape (layers, width,
// heads and key/value heads, feed-forward width and activation,
// vocabulary, positions, norm, biases, stack, experts) and gives its
// parameters in closed form, the FLOPs of a training step (Narayanan et
// al. 2021, eq. (3) for a GPT), the activations a layer keeps (Korthikanti
// et al. 2022) and the step's operators. TransformerShapes lists the
// shipped ones: GPT-3 125M to 175B, Llama 2 and 3, Mixtral 8x7B, BERT
// (base, large, and base with SQuAD's span head) and the translation
// Transformers. Ops lists the operators of the sequence
// models by name: for a shape, Shape.Batch counts sequences of
// Shape.SeqLen tokens; for transformer-base and transformer-big it counts
// token pairs, as their profiles do; for gnmt sentence pairs.
//
// # Operators
//
// Ops lists the operators of one training step of a model at a Shape
// (batch, resolution or sequence length, precision): forward, backward
// and the optimizer's update, each with its kind, FLOPs, bytes read and
// written, parameters, activation bytes kept for the backward pass and,
// for matrix products and convolutions, the product's dimensions. The
// image models' and the engine's generators share the layer builders of
// ops_layers.go, whose doc comment states the conventions; their totals
// are tested against published parameter and FLOP counts. Where a
// model's programs differ between frameworks, Shape.Framework picks one:
// Mask R-CNN's TensorFlow 2 program suppresses its proposals on the host
// (an operator with Op.HostCPU, ops_detect.go), its PyTorch one on the
// device; torchvision's MaskRCNN (ops_detect_tv.go) batches over the
// images what maskrcnn-benchmark loops over, and makes its mask targets
// on the device.
//
// # Files
//
// A profile file has up to three mappings, each keyed by name:
//
//	datasets:
//	  NAME: {train_samples: ..., bytes_per_sample: 110 kB, ...}
//	models:
//	  NAME: {params: ..., forward_flops: 8.2 GFLOP, layers: [...], ...}
//	recipes:
//	  NAME: {model: ..., optimizer: lars, per_device_batch: 208, ...}
//
// Quantities carry units ("110 kB", "5 ms", "4.1 GFLOP"); a bare number is
// an error except 0. Decoding is strict: an unknown field is an error.
// Validate reports every problem at once with its YAML path, and its file
// and line when it came from a file:
//
//	profiles.yaml: line 12: recipes.mine.model: unknown model "resnet5"; did you mean "resnet50"?
//
// docs/models.md lists every shipped profile with its sources.
package model
