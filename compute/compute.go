package compute

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
)

// ErrNoModel is wrapped by the errors of a device or model the operator
// model does not cover: a device without an SM count (an IPU, a CPU) or a
// model without an operator generator. Callers fall back to the roofline.
var ErrNoModel = errors.New("no operator cost model")

// Efficiencies, each the fraction of a datasheet figure that a vendor
// library reaches on large problems, from published measurements; none is
// fitted to a case of docs/validation.md.
const (
	// EffGEMM is the fraction of the peak that cuBLAS and cuDNN reach on a
	// large matrix product or convolution, tensor cores or CUDA cores:
	// NVIDIA's "Matrix Multiplication Background User's Guide"
	// (docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication)
	// shows large fp16 GEMMs on A100 at about 250 of 312 TFLOP/s, 0.8.
	EffGEMM = 0.8
	// EffGEMMFP8 is the fraction of the fp8 peak that cuBLAS reaches on the
	// FP8 products of Transformer Engine (E4M3/E5M2 inputs, bf16 or fp32
	// outputs): EffGEMM times FP8KernelRatio.
	EffGEMMFP8 = EffGEMM * FP8KernelRatio
	// FP8KernelRatio is how much of the fp8 peak's factor of 2 over bf16
	// an FP8 product keeps, its kernel alone (inputs already in fp8):
	// Transformer Engine's "GEMM Profiling Tutorial"
	// (github.com/NVIDIA/TransformerEngine,
	// docs/examples/gemm_profiling/gemm_profiling.rst, "Worked Example:
	// 5B Model on H200", pre-quantized mode) times the 12 products of one
	// layer of width 4,096 and FFN 16,384 on 15,872 tokens on an H200 NVL
	// in 31.968 ms in bf16 and 16.785 ms in fp8 (current scaling): 1.90
	// times faster, 0.952 of the peaks' ratio of 2.
	FP8KernelRatio = 31.968 / 16.785 / 2
	// EffFlash is the fraction of the tensor-core peak that a fused
	// attention kernel reaches over its forward and backward passes:
	// FlashAttention-2 (Dao 2023, arXiv:2307.08691, abstract and Figure 6)
	// reaches 50 to 73 % of A100's peak, its backward pass the lower end.
	EffFlash = 0.5
	// EffFlashAmpereOnHopper is the fraction of an H100's peak that
	// FlashAttention-2 reaches: "only 35% utilization on the H100 GPU"
	// (Shah et al. 2024, FlashAttention-3, arXiv:2407.08608, abstract), a
	// kernel of the A100's instructions (mma.sync, no wgmma or TMA), as
	// PyTorch's memory-efficient attention kernel is too. It takes
	// EffFlash's place for such a kernel on a Hopper device
	// (Config.fusedAttentionRate); cuDNN's sm90 kernels, which
	// scaled_dot_product_attention runs on 16-bit tensors there, keep
	// EffFlash.
	EffFlashAmpereOnHopper = 0.35
	// KernelTime is what a kernel takes on the device beyond its
	// operator's roofline time, however little it does, in eager mode:
	// fitted to the fp16 forward and data calls of cuDNN's LSTM layers in
	// Baidu's DeepBench on a DGX-1 V100 (results/train/
	// DeepBench_NV_V100.xlsx at 30c51150; testdata/measurements/deepbench/
	// v100-lstm.csv), chains of short kernels each waiting for the last,
	// by the least squares of the log of predicted over measured time
	// (validate's TestDeepBenchLSTM computes it): 15.2 µs.
	KernelTime units.Seconds = 15.2e-6
	// EffMemory is the fraction of the datasheet's DRAM bandwidth that a
	// streaming kernel achieves: Jia et al. 2018, "Dissecting the NVIDIA
	// Volta GPU Architecture via Microbenchmarking" (arXiv:1804.06826),
	// Section 3, measure 750 GB/s of V100's 900 GB/s, 0.83.
	EffMemory = 0.83
	// EffDepthwise is the fraction of the datasheet's DRAM bandwidth that
	// a grouped or depthwise convolution achieves. T. Liu, "Depth-wise
	// Separable Convolutions: Performance Investigations" (tlkh.dev,
	// 2020; notebook conv_microbenchmark.ipynb of
	// github.com/tlkh/depsep-conv-benchmarks) measures a 3×3
	// SeparableConv2D on 16 images of 224×224×128 in fp16 at 4,335
	// images/s on a V100 (TensorFlow 2.1, cuDNN 7.6.5): its depthwise
	// and pointwise convolutions move 50.7 MB an image (12.8 MB in, 12.6
	// MB out, each) in 231 µs, 220 GB/s, 0.24 of the V100's 900 GB/s.
	// The depthwise convolution alone reaches less; cuDNN 8.1's release
	// notes claim depthwise convolutions 1.7 to 2.9 times faster.
	EffDepthwise = 0.24
	// EffReduce is the fraction of the datasheet's DRAM bandwidth that a
	// reduction over the rows of a tensor into one value per column
	// (model.Op.Reduce: a bias's gradient, a layer norm's scale and shift
	// gradients) achieves. A calibration on our H200 profiles
	// (testdata/measurements/h200-2026-11-30-profile, torch 2.11): BERT-
	// large's, the Transformer's and GPT-3 Small's and Medium's bias
	// sums (reduce_kernel over the outer dimension, 16-bit) move the
	// operator model's 14.85 GB in 10.93 ms, 0.283 of the H200's 4.8
	// TB/s; their layer norms' GammaBetaBackward kernels 13.51 GB (fp32)
	// in 10.49 ms, 0.268; together 0.276 (TestReduceRates recomputes
	// them). Not a published figure: no micro-benchmark of these kernels
	// was found. Taken as a property of the kernels' code, a share of
	// any device's bandwidth (docs/compute.md).
	EffReduce = 0.28
	// EffLayerNorm is the fraction of the datasheet's DRAM bandwidth that
	// a layer norm's forward kernel achieves (PyTorch's
	// vectorized_layer_norm_kernel: a block per row, its mean and
	// variance, then the normalised row). The same calibration: the four
	// profiles' forward layer norms move 13.51 GB (fp32) in 6.35 ms,
	// 0.443 of the H200's bandwidth. The input's gradient (PyTorch's
	// layer_norm_grad_input_kernel) streams at EffMemory: 0.78 of it in
	// the same profiles.
	EffLayerNorm = 0.44
	// EffNativeBatchNorm is the fraction of the datasheet's DRAM
	// bandwidth that PyTorch's own batch norm kernels achieve
	// (batch_norm_collect_statistics and batch_norm_elemt, their
	// channels-last and backward forms), which it runs in place of
	// cuDNN's for bfloat16 tensors (_select_batch_norm_backend in
	// aten/src/ATen/native/Normalization.cpp leaves bfloat16 out of
	// cuDNN). A calibration of the H200: our amp-bf16 ResNet-50 steps in
	// channels_last less the amp-fp16 ones at the same batch, the
	// difference put on the batch norms' bytes
	// (validate.TestNativeBatchNormRate); the H100's bf16 rows check it.
	EffNativeBatchNorm = 0.41
	// EffBroadcast is the fraction of the datasheet's DRAM bandwidth that
	// an elementwise operator with a broadcast input (model.Op.Broadcast)
	// achieves: PyTorch's generic elementwise_kernel, which computes
	// every value's offsets, where the contiguous operands of the others
	// take its vectorized kernel. The same calibration: BERT-large's
	// attention-mask additions in our H200 profile (scores of 32 × 16 ×
	// 384 × 384 plus a mask of one row a sequence, 24 a step) move the
	// operator model's 7.25 GB in 4.94 ms, 0.305 of the H200's bandwidth
	// (TestBroadcastRate).
	EffBroadcast = 0.31
	// EffSoftmax is the fraction of the datasheet's DRAM bandwidth that a
	// softmax's forward kernel achieves (PyTorch's softmax_warp_forward,
	// a warp per row). The same calibration: BERT-large's 24 attention
	// softmaxes in our H200 profile move the operator model's 7.25 GB in
	// 3.09 ms, 0.488 of the bandwidth; its backward kernel streams (0.77).
	EffSoftmax = 0.49
	// EffDropout is the fraction of the datasheet's DRAM bandwidth that a
	// dropout's forward kernel (model.Op.Random) moves the values it
	// reads and writes at, the mask it also writes (a byte a value) inside
	// that share: PyTorch's fused_dropout_kernel_vec draws the mask with
	// Philox as it goes. The same calibration: BERT-large's 72 dropouts in
	// our H200 profile move the operator model's 9.66 GB in 4.01 ms, 0.502
	// of the bandwidth; its backward (masked_scale) streams (0.87).
	EffDropout = 0.50
)

// AlignBytes is the multiple of bytes every leading dimension of a
// tensor-core product's matrices must be for cuBLAS to choose its own
// tensor-core kernels: the cuBLAS guide's "Tensor Core Usage"
// (docs.nvidia.com/cuda/cublas, section 2.1.11) asks for 16-byte aligned
// leading dimensions, 8 values of fp16 or bf16, 4 of tf32. How much longer
// a misaligned product takes is the device's (hw.Device.MisalignedGEMM).
const AlignBytes = 16

// Tile and split sizes of the matrix products' quantisation.
const (
	// TileM and TileN are the output tile one thread block of a GEMM
	// computes: 128×128, the tile NVIDIA's "Matrix Multiplication
	// Background User's Guide" (section "Tile Quantization") and
	// "Convolutional Layers User's Guide" use for their examples of
	// large products.
	TileM, TileN = 128, 128
	// SplitK is the least depth of K a split-K slice keeps: a product of
	// fewer tiles than SMs is split along K (the guide's "parallelizing
	// along K") into at most K/SplitK slices. Our assumption; the guides
	// give no figure.
	SplitK = 256
)

// Mode is how a framework issues a step's operators to the device.
type Mode string

// The framework modes and the host's cost of one operator in each.
const (
	// Eager is PyTorch's default: each operator dispatched from Python
	// through the dispatcher and autograd, then launched.
	Eager Mode = "eager"
	// Graphs replays the step as a CUDA graph: no dispatch, a graph
	// node's launch only.
	Graphs Mode = "cuda-graphs"
	// Compiled runs kernels a compiler generated (torch.compile, XLA):
	// no eager dispatch, a plain launch per kernel. The fusion a compiler
	// does is not modelled.
	Compiled Mode = "compiled"
)

// Host costs per operator, seconds.
const (
	// LaunchKernel is a CUDA kernel launch from a stream, launches issued
	// back to back: NVIDIA's "Getting Started with CUDA Graphs" (Gray
	// 2019, developer.nvidia.com/blog/cuda-graphs) measures 3.8 µs per
	// launch of a 2.9 µs kernel without synchronisation, 0.9 µs more.
	LaunchKernel units.Seconds = 0.9 * units.Microsecond
	// LaunchGraph is a kernel launched as a node of a CUDA graph: the same
	// blog measures 3.4 µs per 2.9 µs kernel, 0.5 µs more.
	LaunchGraph units.Seconds = 0.5 * units.Microsecond
	// DispatchEager is PyTorch's host cost of one eager operator before
	// its launch: the operator micro-benchmark of pytorch/pytorch#32194
	// measures 3.3 µs per call of a small operator on a CUDA tensor.
	DispatchEager units.Seconds = 3.3 * units.Microsecond
	// SyncLatency is what a synchronisation adds beyond the work it waits
	// for: the device's completion reaching the host and the next launch
	// reaching the device, with the device idle between. The same blog
	// measures 9.6 µs per 2.9 µs kernel with a cudaStreamSynchronize after
	// each launch against 3.8 µs without: 5.8 µs.
	SyncLatency units.Seconds = 5.8 * units.Microsecond
	// CPUDispatch is one small operator's call on a CPU tensor, Python
	// binding and dispatcher: scripts/torchhost.py's "dispatch" on the
	// reference host (compute/testdata/torch-host.csv, TestMeasuredHost),
	// without the device guard, caching allocator and stream a CUDA
	// tensor's call adds (DispatchEager).
	CPUDispatch units.Seconds = 0.729 * units.Microsecond
)

// HostCallsTime returns the host's time of calls in eager PyTorch at the
// model's default figures: each operator on a CPU tensor at CPUDispatch, each
// CUDA kernel at DispatchEager + LaunchKernel, each synchronisation at
// SyncLatency (a stream whose work is done by the time the host waits: a
// loader's own stream, not the step's). HostCosts.CallsTime gives a
// measured host's.
func HostCallsTime(calls model.HostCalls) units.Seconds {
	return (*HostCosts)(nil).CallsTime(calls)
}

// Modes lists the framework modes.
var Modes = []Mode{Eager, Graphs, Compiled}

// ParseMode returns the mode called s ("" is Eager).
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return Eager, nil
	}
	return parseName("framework mode", s, Modes)
}

// FrameworkMode returns the mode a framework runs a step in by default:
// Compiled for the graph executors, MXNet's hybridised symbolic graph and
// TensorFlow's graph (no Python between kernels; "mxnet", "tensorflow",
// or a name beginning with either, as a log's header writes "mxnet
// 1.9"), Eager otherwise (PyTorch, or a framework not named). A scenario
// or a measured row that says its mode overrides it.
func FrameworkMode(framework string) Mode {
	f := strings.ToLower(strings.TrimSpace(framework))
	if strings.HasPrefix(f, "mxnet") || strings.HasPrefix(f, "tensorflow") {
		return Compiled
	}
	return Eager
}

// parseName returns the one of all called s, or an error naming what
// (a framework mode, an operator class) and the valid names.
func parseName[T ~string](what, s string, all []T) (T, error) {
	for _, v := range all {
		if string(v) == s {
			return v, nil
		}
	}
	names := make([]string, len(all))
	for i, v := range all {
		names[i] = string(v)
	}
	return "", fmt.Errorf("%s %q: want one of %s", what, s, strings.Join(names, ", "))
}

// Launch returns the host's cost of issuing one kernel in mode m.
func (m Mode) Launch() units.Seconds {
	switch m {
	case Graphs:
		return LaunchGraph
	case Compiled:
		return LaunchKernel
	}
	return DispatchEager + LaunchKernel
}

// Config is what an operator's time depends on besides the operator.
type Config struct {
	Device *hw.Device
	// Precision is the precision the matrix products compute in: fp32
	// (CUDA cores), tf32, fp16, bf16 or fp8 (tensor cores).
	Precision hw.Precision
	Mode      Mode
	// FusedAttention runs Attention operators as one fused kernel
	// (FlashAttention) rather than two products and a softmax.
	FusedAttention bool
	// MaskRoIs is the positive RoIs of one image Mask R-CNN's mask head
	// runs on (model.Shape.MaskRoIs); 0 takes the generator's default.
	// Not used by OpTime or Step, whose operators are given.
	MaskRoIs int
	// FuseBNReLU says the program fuses each batch norm with the ReLU
	// (and residual add) after it (model.Shape.FuseBNReLU). Not used by
	// OpTime or Step, whose operators are given.
	FuseBNReLU bool
	// NCHW says the framework keeps activations channels-first
	// (PyTorch's default memory format): tensor-core convolutions work
	// in NHWC, so each dense convolution at a tensor-core precision
	// transposes its input and output (TransposeKernels more kernels,
	// its bytes moved once more each way), and batch norms run cuDNN's
	// channels-first kernels (hw.Device.NCHWBatchNorm).
	NCHW bool
	// SeqLen is the tokens per sentence of a sequence model's samples,
	// which attention spans (model.Shape.SeqLen); 0 takes the model's
	// default. Not used by OpTime or Step, whose operators are given.
	SeqLen int
	// Framework names the program whose operators LawAt lists where a
	// model's implementations differ (model.Shape.Framework); "" takes
	// the PyTorch program's.
	Framework string
	// HostCores is the host's cores (SMT threads counted at their yield)
	// one device's host operators (model.Op.HostCPU) may use at once: an
	// operator takes the longer of its HostCPU and its HostWork over
	// HostCores. 0: as many as its pieces, HostCPU.
	HostCores float64
	// LoaderHost is the host's time per sample of an input loader that
	// runs in the training process between two steps, after the step's
	// last launch (DeepLearningExamples' PyTorch Mask R-CNN
	// HybridDataLoader, model.HybridLoadHost): where the step waits for
	// the device at its end (GradScaler, ClipNorm) the loader follows the
	// device's step, else it overlaps the device's backward pass. LawAt
	// charges it, b·LoaderHost a step; Step, given operators and no
	// batch, does not. 0: a loader outside the training process.
	LoaderHost units.Seconds
	// loaderStep is LoaderHost times the batch LawAt lists (law).
	loaderStep units.Seconds
	// Autocast says the step runs under PyTorch's autocast at Precision
	// fp16 or bf16 (automatic mixed precision): the operators autocast
	// runs in float32 (model.Op.Float32) move their bytes at 4 bytes a
	// value after a cast kernel of their own, and every parameter tensor
	// of a product or convolution is cast to 16 bits once per forward
	// pass and its gradient back in the backward pass (weightCasts).
	Autocast bool
	// GradScaler says the step scales its loss with torch.amp.GradScaler:
	// its kernels (scalerKernels and a foreach unscaling), and the
	// host's wait for the device in scaler.step, which reads the
	// found-inf flag with .item() before the optimizer runs.
	GradScaler bool
	// Optimizer is the torch.optim optimizer whose foreach step the host
	// issues (optimizerDepths; model.BertAdam's loop of single kernels
	// instead, bertAdamHost); "" issues none (a framework that is not
	// PyTorch, or a scenario, whose update is the simulator's alone).
	Optimizer model.Optimizer
	// ClipNorm says the step clips the gradients' global norm before the
	// optimizer as DeepLearningExamples' GradientClipper does
	// (PyTorch/LanguageModeling/BERT/run_squad.py at 729963dd): apex's
	// multi_tensor_l2norm over the gradients, the norm read on the host
	// (total_norm.item(), a wait for the device) and multi_tensor_scale
	// (clipHost). Its bytes are the simulator's update's.
	ClipNorm bool
	// LossSync says the host reads the loss after the forward pass and
	// before it issues the backward pass (DeepLearningExamples' fairseq
	// trainer, fairseq/ddp_trainer.py at 729963dd, line 129:
	// utils.item(loss.data)): in eager mode the last forward operator
	// closes a segment of the step as a model.Op.Sync does.
	LossSync bool
	// ZeroGrad says the program zeroes its gradients after each step
	// rather than freeing them (zero_grad without set_to_none: torch.optim
	// before PyTorch 2.0, whose default set_to_none=False 2.0 turned to
	// True, and apex amp's patched zero_grad under O2, which zeroes the
	// model's fp16 gradients), so that the backward pass adds each new
	// gradient into the zeroed one in place (AccumulateGrad) instead of
	// keeping it: zeroGrad's kernels, bytes and host time.
	ZeroGrad bool
	// Host is eager PyTorch's host costs beyond each kernel's launch
	// (nil: MeasuredHost).
	Host *HostCosts
	// TimerEvents is the CUDA timing events the measuring program records
	// on the step's stream each step (engine/torchbench's timer: five),
	// each costing the host its Event where the host measured one (a
	// table's cuda_event), nothing otherwise. Default 0: none.
	TimerEvents int
	// Eff is a calibration's efficiencies and launch cost (nil: the
	// published constants and the mode's launch; see calibrate.go).
	Eff *Efficiencies
}

// TransposeKernels is the kernels a dense convolution in NCHW at a
// tensor-core precision adds: its input to NHWC and its output back.
// NVIDIA's "Convolutional Layers User's Guide", section "Tensor Layouts In
// Memory: NCHW vs NHWC": Tensor Core convolutions are NHWC-native, and an
// NCHW tensor is transposed before and after them.
const TransposeKernels = 2

// transposed reports whether op is a convolution that c's layout
// transposes: a dense one, in NCHW, on the tensor cores.
func (c *Config) transposed(op *model.Op) bool {
	return c.NCHW && op.Kind == model.Conv && c.Precision != hw.FP32
}

// check returns an error when c's device has no SM count or no peak at
// its precision.
func (c *Config) check() error {
	d := c.Device
	if d == nil || d.SMs <= 0 {
		name := "<nil>"
		if d != nil {
			name = d.Name
		}
		return fmt.Errorf("%w: device %s gives no SM count (sms)", ErrNoModel, name)
	}
	if c.Precision == hw.FP64 || !slices.Contains(hw.PeakPrecisions, c.Precision) {
		return fmt.Errorf("precision %q: want fp32, tf32, fp16, bf16 or fp8", c.Precision)
	}
	if !(d.PeakFLOPs(c.Precision) > 0) || !(d.PeakFLOPs(hw.FP32) > 0) || !(d.MemoryBandwidth > 0) {
		return fmt.Errorf("device %s has no %s peak, fp32 peak or memory bandwidth", d.Name, c.Precision)
	}
	if !(c.HostCores >= 0) || math.IsInf(c.HostCores, 0) {
		return fmt.Errorf("host cores %v: want a finite number, at least 0 (0: as many as the host operators' pieces)", c.HostCores)
	}
	if !(c.LoaderHost >= 0) || math.IsInf(float64(c.LoaderHost), 0) {
		return fmt.Errorf("loader host time %v s a sample: want a finite time, at least 0 (0: a loader outside the training process)", float64(c.LoaderHost))
	}
	return nil
}

// Quantisation returns the fraction of an SM-filling rate that a product
// of groups independent M×K by K×N matrices reaches on sms SMs in tiles of
// TileM×TileN: the tile quantisation (the useful share of the padded
// tiles) times the wave quantisation (tiles/(waves·sms), waves =
// ⌈tiles·splits/sms⌉), with a product of fewer tiles than SMs split along
// K into splits = min(⌊sms/tiles⌋, ⌈K/SplitK⌉) slices. It is 1 for a
// product without dimensions.
func Quantisation(m, n, k, groups int64, sms int) float64 {
	return quantisation(m, n, k, groups, sms, TileM, TileN)
}

// SIMTTiles are the output tiles of cuBLAS's fp32 matrix products on the
// CUDA cores, as its kernels' names give them in profiles
// (volta_sgemm_128x128, _128x64, _64x64, _128x32, _32x128 and
// _32x32_sliced1x4, each in its nn, nt, tn and tt forms, so either
// orientation of a rectangular tile). cuBLAS's heuristic picks a smaller
// tile for a smaller product: in one published CUPTI trace a
// 512³ product ran volta_sgemm_64x64, 1024³ 128x64 and 2048³ 128x128.
var SIMTTiles = [][2]int64{{128, 128}, {128, 64}, {64, 128}, {64, 64}, {128, 32}, {32, 128}, {32, 32}}

// QuantisationSIMT is Quantisation for a product on the CUDA cores: the
// best of its quantisations over SIMTTiles, the tile the heuristic would
// pick. Baidu's DeepBench times 159 fp32 products on a V100: with the
// 128×128 tile alone the operator model ran those of at most 128 columns
// a median of 2.5 times too long, with the best of these tiles within a
// quarter (TestDeepBenchCUDAGEMM; docs/validation-operators.md).
// Tensor-core products keep TileM×TileN: DeepBench's fp16 products meet
// it (a median of +0.2 % on the large ones), and its small ones are
// already too fast.
func QuantisationSIMT(m, n, k, groups int64, sms int) float64 {
	best := 0.0
	for _, t := range SIMTTiles {
		best = max(best, quantisation(m, n, k, groups, sms, t[0], t[1]))
	}
	return best
}

// nativeBatchNorm reports whether c's batch norms run PyTorch's own
// kernels (EffNativeBatchNorm): an eager PyTorch step (c.Framework ""
// or naming torch) in bfloat16, which PyTorch keeps from cuDNN.
func (c *Config) nativeBatchNorm() bool {
	f := strings.ToLower(c.Framework)
	return c.Precision == hw.BF16 && c.eager() && (f == "" || strings.HasPrefix(f, "torch"))
}

// fusedAttentionRate returns the peak a fused attention's products run at
// under c, times the share of EffFlash its kernel reaches: the step's
// precision's peak, but for float32 tensors (an fp32 or a tf32 step),
// which PyTorch's scaled_dot_product_attention gives its memory-efficient
// kernel (FlashAttention and cuDNN's take 16-bit tensors only). On a
// device with TF32 tensor cores each of that kernel's fp32 products is
// three TF32 products (cutlass::arch::OpMultiplyAddFastF32,
// aten/src/ATen/native/transformers/cuda/mem_eff_attention/
// gemm_kernel_utils.h), a third of the TF32 peak, at
// EffFlashAmpereOnHopper on a Hopper device (its code is the A100's); on
// an older device fp32 FMAs on the CUDA cores (OpClassSimt there).
func (c *Config) fusedAttentionRate() float64 {
	d := c.Device
	if c.Precision != hw.FP32 && c.Precision != hw.TF32 {
		return float64(d.PeakFLOPs(c.Precision))
	}
	tf := float64(d.PeakFLOPs(hw.TF32))
	switch {
	case tf <= 0:
		return float64(d.PeakFLOPs(hw.FP32))
	case d.NCCLArch == hopper:
		return tf / 3 * EffFlashAmpereOnHopper / EffFlash
	}
	return tf / 3
}

// hopper is hw.Device.NCCLArch of the GH100 devices.
const hopper = "hopper"

// opQuantisation returns a dense product's or convolution's quantisation
// on c's device: at fp32 on the CUDA cores' tiles (QuantisationSIMT),
// every other in TileM×TileN. CUTLASS instantiates its fp32 convolutions
// in the tiles of its fp32 products (python/cutlass_library/generator.py,
// GenerateSM50_Simt: 128×128, 128×64, 64×128, 64×64, 128×32 and 32×128
// for both); DeepBench's V100 convolutions give the CUDA cores' efficiency
// on these tiles (hw.Device.ConvEfficiency.CUDA, TestDeepBenchCUDAConv).
func (c *Config) opQuantisation(op *model.Op) float64 {
	if (op.Kind == model.MatMul || op.Kind == model.Conv) && c.Precision == hw.FP32 {
		return QuantisationSIMT(op.M, op.N, op.K, op.Groups, c.Device.SMs)
	}
	return Quantisation(op.M, op.N, op.K, op.Groups, c.Device.SMs)
}

// quantisation is Quantisation in tiles of tileM×tileN.
func quantisation(m, n, k, groups int64, sms int, tileM, tileN int64) float64 {
	if m <= 0 || n <= 0 || sms <= 0 {
		return 1
	}
	groups = max(groups, 1)
	tm, tn := ceilDiv(m, tileM), ceilDiv(n, tileN)
	tiles := tm * tn * groups
	tile := float64(m) * float64(n) / (float64(tm*tileM) * float64(tn*tileN))
	s := int64(sms)
	splits := int64(1)
	if tiles < s {
		splits = max(1, min(s/tiles, ceilDiv(max(k, 1), SplitK)))
	}
	blocks := tiles * splits
	waves := ceilDiv(blocks, s)
	return tile * float64(blocks) / float64(waves*s)
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// OpTime returns the device time of op under c, without the host's launch
// cost: the larger of its compute and memory terms (their sum for an
// unfused attention, whose softmax runs between its products), plus the
// transposes of a convolution in NCHW at a tensor-core precision.
func OpTime(c *Config, op *model.Op) (units.Seconds, error) {
	if err := c.check(); err != nil {
		return 0, err
	}
	return opTime(c, op), nil
}

// opTime is OpTime for a checked c: the operator's own time and that of
// autocast's casts for it (Config.castBytes).
func opTime(c *Config, op *model.Op) units.Seconds {
	t := opKernel(c, op)
	if cb := c.castBytes(op); cb > 0 {
		t += units.Seconds(float64(cb) / (float64(c.Device.MemoryBandwidth) * c.eff(MemoryBound)))
	}
	return t
}

// opKernel is opTime without autocast's casts.
func opKernel(c *Config, op *model.Op) units.Seconds {
	d := c.Device
	bw := float64(d.MemoryBandwidth) * c.eff(MemoryBound)
	share := memoryShare(op)
	native := op.BatchNorm && c.nativeBatchNorm()
	if native {
		share = EffNativeBatchNorm / EffMemory
	}
	mem := float64(op.Read+op.Write) / (bw * share)
	cuda := float64(d.PeakFLOPs(hw.FP32)) * c.eff(CUDACore)
	if op.Float32 && c.autocasts() {
		// In float32 under autocast: twice the bytes of the 16-bit
		// figures.
		return units.Seconds(math.Max(op.FLOPs/cuda, 2*mem))
	}
	e := c.eff(c.ClassOf(op))
	var comp float64
	switch op.Kind {
	case model.MatMul, model.Conv:
		q := c.opQuantisation(op)
		ec := e
		if op.Kind == model.Conv {
			ec *= c.convScale()
		}
		comp = op.FLOPs / (float64(d.PeakFLOPs(c.Precision)) * ec * q)
		comp *= c.misaligned(op)
		if w, ok := c.winogradRate(op); ok {
			// The autotuner (cudnn.benchmark, MXNet's and TensorFlow's)
			// takes the faster algorithm; a calibration's CUDA-core
			// efficiency scales both.
			comp = min(comp, op.FLOPs/(w*e/DeviceEfficiency(d, CUDACore)))
		}
		if c.transposed(op) {
			// The transposes read and write the operator's bytes once
			// more each, in kernels of their own.
			return units.Seconds(math.Max(comp, mem) + 2*mem)
		}
	case model.Attention:
		q := Quantisation(op.M, op.N, op.K, op.Groups, d.SMs)
		if !c.FusedAttention {
			comp = op.FLOPs / (float64(d.PeakFLOPs(c.Precision)) * e * q)
			return units.Seconds(comp + mem)
		}
		comp = op.FLOPs / (c.fusedAttentionRate() * e * q)
	case model.GroupedConv: // on the CUDA cores, far below the bandwidth
		comp = op.FLOPs / cuda
		mem = max(float64(op.Read+op.Write)/(float64(d.MemoryBandwidth)*e), c.depthwiseL2(op))
	default: // memory-bound operators run on the CUDA cores
		comp = op.FLOPs / cuda
		if r := d.NCHWBatchNorm; op.BatchNorm && c.NCHW && r > 0 && !native {
			// cuDNN's channels-first kernels: a rate per value that
			// the SMs, not the bandwidth, set.
			values := float64(op.Read+op.Write) / valueBytes(c.Precision)
			comp = max(comp, values/(r*float64(d.PeakFLOPs(hw.FP32))))
		}
	}
	return units.Seconds(math.Max(comp, mem))
}

// memoryShare returns the share of a streaming kernel's bandwidth that
// op's memory-bound kernel moves its bytes at: EffReduce over EffMemory
// for a reduction over the rows (model.Op.Reduce), EffBroadcast over it
// for an operator with a broadcast or strided input (model.Op.Broadcast,
// model.Op.Strided), EffDropout over it for a dropout's forward pass
// (model.Op.Random), EffSoftmax over it for a softmax's, EffLayerNorm
// over it for a layer norm's, else 1. A calibration's memory efficiency
// scales them all.
func memoryShare(op *model.Op) float64 {
	switch {
	case op.Reduce:
		return EffReduce / EffMemory
	case op.Broadcast || op.Strided:
		return EffBroadcast / EffMemory
	case op.Random && op.Pass == model.Forward:
		return EffDropout / EffMemory
	case op.Kind == model.Softmax && op.Pass == model.Forward:
		return EffSoftmax / EffMemory
	case op.Kind == model.Norm && !op.BatchNorm && op.Pass == model.Forward:
		return EffLayerNorm / EffMemory
	}
	return 1
}

// misaligned returns how many times longer op takes for its alignment:
// the device's MisalignedGEMM when op is a matrix product on the tensor
// cores whose matrices have a leading dimension that is not a multiple of
// AlignBytes, its OddGEMM (where it gives one) when that dimension is an
// odd number of 16-bit values, else 1. The leading dimensions are one of a
// linear layer's feature dimensions, K and N of its forward product and
// of its input's gradient, M and N of its weight's gradient (a
// ".grad_weight" operator). The rows (tokens, samples) are never a
// leading dimension of PyTorch's three products of a linear layer, x·Wᵀ,
// dy·W and dyᵀ·x. Convolutions are cuDNN's, which pads channels itself.
func (c *Config) misaligned(op *model.Op) float64 {
	d := c.Device
	if op.Kind != model.MatMul || c.Precision == hw.FP32 || !(d.MisalignedGEMM > 1) {
		return 1
	}
	vb := valueBytes(c.Precision)
	n := int64(AlignBytes / vb)
	a, b := op.N, op.K
	if strings.HasSuffix(op.Name, ".grad_weight") {
		a, b = op.M, op.N
	}
	switch {
	case a%n == 0 && b%n == 0:
		return 1
	case vb == 2 && (a%2 != 0 || b%2 != 0) && d.OddGEMM > 1:
		return d.OddGEMM
	}
	return d.MisalignedGEMM
}

// valueBytes returns the bytes a tensor's value takes when products
// compute at p: 4 for fp32 and tf32 (whose tensors are fp32), 2 for fp16
// and bf16, 1 for fp8.
func valueBytes(p hw.Precision) float64 {
	switch p {
	case hw.FP32, hw.TF32:
		return 4
	case hw.FP8:
		return 1
	}
	return 2
}

// The least input channels at which cuDNN runs a 3×3 stride-1
// convolution at fp32 by Winograd, from the algorithms and times of Baidu's
// DeepBench on a V100 (results/train/DeepBench_NV_V100.xlsx, sheet
// "Results FP32", github.com/baidu-research/DeepBench at 30c51150): its
// forward passes of 3 and 16 input channels run IMPLICIT_GEMM or
// IMPLICIT_PRECOMP_GEMM, those of 32 and more WINOGRAD or
// WINOGRAD_NONFUSED; its weight gradients of 64 input channels run below
// the fp32 peak in direct FLOPs (8.1 to 15.4 TFLOP/s: not Winograd), those
// of 128 and more above it (17.8 to 38.6 TFLOP/s). The P100 sheet agrees
// (6.2 TFLOP/s at 64 input channels, 16.3 to 20.7 at 128 and more).
const (
	WinogradMinChannels           = 32
	WinogradGradWeightMinChannels = 128
)

// winogradRate returns the rate, direct FLOPs per second at the
// published efficiencies, of a convolution that c's device runs by
// Winograd (hw.Device.Winograd): a dense 3×3 stride-1 convolution at fp32
// with enough input channels, in a pass the device gives a rate for. Its
// output tiles of 4×4 pad an output of h×w pixels:
//
//	rate = Rate · fp32 peak / (1 + Channels · (1/C + 1/K)) · h·w / (16·⌈h/4⌉·⌈w/4⌉)
//
// ok is false for every other operator.
func (c *Config) winogradRate(op *model.Op) (rate float64, ok bool) {
	if c.Precision != hw.FP32 || op.Kind != model.Conv || op.Kernel != 3 || op.Stride != 1 {
		return 0, false
	}
	w := &c.Device.Winograd
	p, least := w.Forward, WinogradMinChannels
	switch {
	case op.GradWeight:
		p, least = w.GradWeight, WinogradGradWeightMinChannels
	case op.Pass == model.Backward:
		p = w.GradInput
	}
	cin, cout := convChannels(op)
	if !p.Measured() || cin < int64(least) || cout <= 0 {
		return 0, false
	}
	rate = p.Rate * float64(c.Device.PeakFLOPs(hw.FP32)) /
		(1 + p.Channels*(1/float64(cin)+1/float64(cout)))
	return rate * winogradTiles(op.OutH, op.OutW), true
}

// convChannels returns a dense 3×3 stride-1 convolution's input and output
// channels from its implicit GEMM (model/ops_layers.go's conv): forward K
// = C·9, N = K; input gradient N = C, K = K·9; weight gradient M = K, N =
// C·9.
func convChannels(op *model.Op) (cin, cout int64) {
	const area = 9
	switch {
	case op.GradWeight:
		return op.N / area, op.M
	case op.Pass == model.Backward:
		return op.N, op.K / area
	}
	return op.K / area, op.N
}

// winogradTiles returns the useful share of the 4×4 output tiles that
// cover an output of h×w pixels, 1 where the extent is not given.
func winogradTiles(h, w int64) float64 {
	if h <= 0 || w <= 0 {
		return 1
	}
	return float64(h*w) / float64(16*ceilDiv(h, 4)*ceilDiv(w, 4))
}

// convScale returns how much of its class's efficiency a dense
// convolution at c's precision reaches on c's device: the device's
// measured convolution efficiency (hw.Device.ConvEfficiency, on the tensor
// cores or, at fp32, on the CUDA cores) over the class's published one on
// the device (DeviceEfficiency), or 1 where the device gives none. A
// calibration's efficiency for the class scales with it, so the device's
// convolutions keep their measured relation to its matrix products.
//
//	scale = conv_efficiency(d, units) / DeviceEfficiency(d, class)
func (c *Config) convScale() float64 {
	m := c.Device.ConvEfficiency.Of(c.Precision != hw.FP32)
	if def := DeviceEfficiency(c.Device, tensorClass(c.Precision)); m > 0 && def > 0 {
		return m / def
	}
	return 1
}

// Kernels returns the kernels one operator launches: an unfused attention
// runs its score product, softmax and value product (three), a transposed
// convolution itself and TransposeKernels, a Float32 operator under
// autocast itself and its input's cast, every other operator its
// KernelCount (one unless the generator says more).
func (c *Config) Kernels(op *model.Op) int {
	switch {
	case op.Kind == model.Attention && !c.FusedAttention:
		return 3
	case c.transposed(op):
		return 1 + TransposeKernels
	case c.castBytes(op) > 0:
		return op.KernelCount() + 1 // the cast's
	}
	return op.KernelCount()
}
