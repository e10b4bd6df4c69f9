package model

import (
	"fmt"
	"slices"
	"strings"

	"scaleplan/internal/units"
)

// OpKind is the class of an operator: what decides how fast a device runs
// it (tensor cores or not, compute- or memory-bound).
type OpKind string

// The operator classes.
const (
	// MatMul is a dense matrix product (a linear layer, an attention
	// projection, an LSTM's gate product): M×K times K×N.
	MatMul OpKind = "matmul"
	// Conv is a dense convolution, as the implicit GEMM of M = batch ×
	// output pixels, N = output channels, K = input channels × kernel area.
	Conv OpKind = "conv"
	// GroupedConv is a grouped or depthwise convolution (groups > 1),
	// which runs far from the tensor cores' peak.
	GroupedConv OpKind = "grouped-conv"
	// Attention is scaled dot-product attention's score and value products
	// and its softmax, one operator whether a device fuses it or not.
	Attention OpKind = "attention"
	// Elementwise is an activation function, a residual addition, dropout,
	// a scale: memory-bound.
	Elementwise OpKind = "elementwise"
	// Norm is a batch, layer or RMS normalisation: memory-bound.
	Norm OpKind = "norm"
	// Softmax is a softmax outside attention (a classifier's): memory-bound.
	Softmax OpKind = "softmax"
	// Pool is a max or average pooling or a resize: memory-bound.
	Pool OpKind = "pool"
	// Embedding is a table lookup (a gather) and, backward, its scatter-add.
	Embedding OpKind = "embedding"
	// Loss is a loss function over the outputs.
	Loss OpKind = "loss"
	// Update is the optimizer's update of the parameters.
	Update OpKind = "update"
)

// OpKinds lists every operator class, in the order above.
var OpKinds = []OpKind{MatMul, Conv, GroupedConv, Attention, Elementwise, Norm, Softmax, Pool, Embedding, Loss, Update}

// Pass is the part of a training step an operator belongs to.
type Pass string

// The passes of a training step.
const (
	Forward    Pass = "forward"
	Backward   Pass = "backward"
	UpdatePass Pass = "update" // the optimizer's update
)

// Op is one operator of a training step at a given batch and shape: one
// kernel, or a few a framework always runs together.
type Op struct {
	// Name says where the operator is, such as "layer1.0.conv1" or
	// "layer1.0.conv1.grad_weight".
	Name string
	Kind OpKind
	Pass Pass
	// FLOPs is the floating-point operations, a multiply-add counting 2.
	FLOPs float64
	// Read and Write are the bytes of device memory the operator reads and
	// writes at least once (inputs, weights, outputs), at the step's
	// precision.
	Read, Write units.Bytes
	// Params is the trainable parameters the operator owns; set on the
	// forward operator only, so that a step's operators sum to the
	// model's parameters.
	Params int64
	// Saved is the activation bytes the forward operator keeps for the
	// backward pass; 0 on backward and step operators.
	Saved units.Bytes
	// M, N and K are the dimensions of the matrix product a MatMul, Conv
	// or GroupedConv (per group) runs, M×K by K×N, for tile and wave
	// quantisation; Groups is the number of independent products (1 for
	// a dense one, the batch × heads of attention). 0 where there is none.
	M, N, K int64
	Groups  int64
	// Kernel and Stride are a Conv's or GroupedConv's square kernel side
	// and its stride (3 and 1 for a 3×3 stride-1 convolution), on the
	// forward operator and its backward ones, which a device's library
	// chooses its algorithm by (cuDNN's Winograd for 3×3 stride 1); 0 on
	// other operators.
	Kernel, Stride int
	// OutH and OutW are a Conv's or GroupedConv's forward output extent,
	// pixels, on the forward operator and its backward ones (Winograd's
	// output tiles pad it); 0 on other operators.
	OutH, OutW int64
	// GradWeight says the operator is a convolution's weight gradient
	// (its grad_weight), which a library may run by another algorithm
	// than the forward pass and the input gradient.
	GradWeight bool
	// Float32 says that under automatic mixed precision the operator runs
	// in float32, inputs and outputs: PyTorch's autocast lists layer
	// norms, softmax, log-softmax and the losses among the "CUDA Ops
	// that can autocast to float32" (pytorch.org/docs/stable/amp.html),
	// and a residual addition of such a float32 output stays float32 by
	// type promotion. Set on the forward operator and its backward ones;
	// the operator's Read and Write are still at the step's precision.
	Float32 bool
	// Reduce says the operator sums its input over the rows (tokens,
	// samples) into one value per column: a linear layer's bias gradient,
	// a layer norm's scale and shift gradients. PyTorch runs it as a
	// reduction over the outer dimension (reduce_kernel,
	// GammaBetaBackward), which moves its bytes at a smaller share of the
	// bandwidth than a streaming kernel (compute.EffReduce).
	Reduce bool
	// Broadcast says one of the operator's inputs is broadcast over the
	// others (a stride of 0 along some dimension: an attention mask of
	// one row per sequence added to every head's scores): PyTorch's
	// TensorIterator then runs its generic elementwise kernel, which
	// computes each value's offsets, not its vectorized contiguous one,
	// and moves the bytes at a smaller share of the bandwidth
	// (compute.EffBroadcast).
	Broadcast bool
	// Strided says the operator copies a tensor that is not contiguous (a
	// permuted view, by .contiguous() or a reshape that cannot view it):
	// TensorIterator runs its generic elementwise kernel, as for a
	// broadcast input (compute.EffBroadcast).
	Strided bool
	// Random says the operator draws random numbers as it runs: a
	// dropout's forward pass, whose kernel (PyTorch's fused dropout)
	// generates its mask with Philox in the same pass and moves its bytes
	// at a smaller share of the bandwidth than a streaming kernel
	// (compute.EffDropout).
	Random bool
	// TiedParams is the values of a parameter another operator owns that
	// this product reads as its weight (a tied output projection's
	// embedding table): autocast casts it for the product as its own
	// (compute), the optimizer counts it with its owner.
	TiedParams int64
	// CastIn is, under autocast, the bytes (at the step's 16-bit
	// precision) of the activation autocast casts for the operator in a
	// kernel of its own: the float32 input of a product, cast to 16 bits
	// (autocast caches only parameters' casts, so each product reading it
	// casts it again), and in the backward pass that input's gradient cast
	// back to float32, or the 16-bit branch's gradient of a residual
	// addition whose sum is float32. 0: none, or the Float32 rule's
	// (compute).
	CastIn units.Bytes
	// Float32Input says a Float32 operator's inputs are float32 already
	// (a norm or residual addition on the float32 residual stream), so
	// autocast casts nothing before it.
	Float32Input bool
	// BatchNorm says the operator is a batch norm's pass over a feature
	// map (convNet's batchNorm), whose per-channel statistics over the
	// batch and pixels cuDNN computes with kernels of each memory format
	// (compute.Config.NCHW: hw.Device.NCHWBatchNorm).
	BatchNorm bool
	// Kernels is the CUDA kernels the operator launches when it is more
	// than one (a bookkeeping operator such as NMS: a sort, a gather, the
	// suppression kernel); 0 means one.
	Kernels int
	// Sync says the host waits for the device after the operator: it
	// reads the operator's result on the host (torch.nonzero,
	// masked_select and boolean indexing, whose output size depends on
	// the data; .item(), .tolist(); a copy between host and device
	// memory), so that the host cannot issue the next operator before
	// the device has run everything issued before it.
	Sync bool
	// Untracked says the operator is called outside an nn.Module and
	// outside autograd (a detector's proposal and target bookkeeping
	// under torch.no_grad or on integer tensors): the eager host charges
	// it no module call and no autograd record.
	Untracked bool
	// HostCPU is the time the host's CPU computes the operator, which a
	// framework placed on the CPU (TensorFlow 2 Mask R-CNN's RPN
	// non-maximum suppression, ops_detect.go), on one core of the
	// reference host (scripts/nmscpu.c's), its pieces that run in
	// parallel counted once. It waits for the device's work before it
	// (its inputs are copied to the host) and the device waits for it
	// (its outputs are copied back), in every framework mode; 0: the
	// device computes the operator.
	HostCPU units.Seconds
	// HostWork is the core-seconds of all the host operator's pieces, on
	// the same core: HostCPU when they run one after another, more when
	// some run at once. A host with fewer cores than the pieces need takes
	// HostWork over its cores (compute.Config.HostCores); 0 is HostCPU.
	HostWork units.Seconds
}

// KernelCount returns the kernels the operator launches: Kernels, at
// least 1.
func (o *Op) KernelCount() int { return max(o.Kernels, 1) }

// Syncs returns how many of ops make the host wait for the device
// (Op.Sync).
func Syncs(ops []Op) int {
	n := 0
	for i := range ops {
		if ops[i].Sync {
			n++
		}
	}
	return n
}

// ParamTensors returns the parameter tensors the operator owns: 0 without
// parameters; a norm's scale and shift (2); a product or convolution's
// weight, K×N per group, and a bias of N when Params holds one more
// than the weights (2, else 1); one for any other owner (a table).
func (o *Op) ParamTensors() int {
	switch {
	case o.Params <= 0:
		return 0
	case o.Kind == Norm:
		return 2
	case o.Kind == MatMul || o.Kind == Conv || o.Kind == GroupedConv:
		if w := o.K * o.N * max(o.Groups, 1); o.N > 0 && o.Params >= w+o.N {
			return 2
		}
	}
	return 1
}

// Intensity returns the operator's arithmetic intensity, FLOPs per byte
// of memory traffic; 0 when it moves no bytes.
func (o *Op) Intensity() float64 {
	b := float64(o.Read + o.Write)
	if b <= 0 {
		return 0
	}
	return o.FLOPs / b
}

// OpTotals sums a list of operators.
type OpTotals struct {
	// Params is the sum of the operators' Params.
	Params int64
	// FLOPs is the FLOPs of each pass and of the whole step.
	Forward, Backward, Step, FLOPs float64 // Step: the update pass
	// Bytes is the sum of Read and Write over all operators.
	Bytes units.Bytes
	// Saved is the activation bytes kept for the backward pass.
	Saved units.Bytes
	// ByKind is the FLOPs of each operator class present.
	ByKind map[OpKind]float64
}

// Totals returns the sums of ops.
func Totals(ops []Op) OpTotals {
	t := OpTotals{ByKind: map[OpKind]float64{}}
	for i := range ops {
		o := &ops[i]
		t.Params += o.Params
		switch o.Pass {
		case Forward:
			t.Forward += o.FLOPs
		case Backward:
			t.Backward += o.FLOPs
		case UpdatePass:
			t.Step += o.FLOPs
		}
		t.FLOPs += o.FLOPs
		t.Bytes += o.Read + o.Write
		t.Saved += o.Saved
		t.ByKind[o.Kind] += o.FLOPs
	}
	return t
}

// Shape is what a generator needs to list a model's operators.
type Shape struct {
	// Batch is the samples per device per step. Required, at least 1.
	Batch int
	// Resolution is an image model's input height and width in pixels;
	// 0 takes the model's default.
	Resolution int
	// SeqLen is a sequence model's tokens per sample; 0 takes the
	// model's default.
	SeqLen int
	// Precision is the precision of activations and weights in the
	// matrix products; "" is FP32.
	Precision Precision
	// Framework names the program whose operators are listed where a
	// model's implementations differ between frameworks: for
	// maskrcnn-r50-fpn, "tensorflow" (or a name beginning with it, as a
	// log writes "tensorflow 2.4") lists DeepLearningExamples' TensorFlow
	// 2 program, a name that contains "torchvision" (torchbench's "torch
	// 2.11.0+cu130 torchvision 0.26.0+cu130") torchvision's MaskRCNN
	// (ops_detect_tv.go), anything else DeepLearningExamples' PyTorch one
	// (ops_detect.go).
	Framework string
	// Fused says the program fuses chains of elementwise operators (a
	// graph compiler such as torch.jit.script with nvFuser, or XLA); the
	// generators that list such chains as kernels of their own
	// (TransformerShape.ScoreKernels) then leave them out.
	Fused bool
	// FusedAttention runs a transformer's attention as one fused kernel
	// that keeps no s² scores (FlashAttention; PyTorch's
	// scaled_dot_product_attention), whatever its shape says
	// (TransformerShape.FusedAttention); other models ignore it.
	FusedAttention bool
	// FuseBNReLU says the program runs each batch norm together with the
	// ReLU after it, and a residual block's last batch norm with the
	// residual add and ReLU (MXNet's --fuse-bn-relu and --fuse-bn-add-relu,
	// which DeepLearningExamples' MXNet ResNet-50 passes in float16 and
	// NVIDIA's MLPerf ResNet-50 programs always, and NVIDIA's MXNet SSD by
	// default): resnet50's and ssd-resnet34's generators then list them as
	// one operator (convNet.batchNormReLU), in ssd-resnet34 the ResNet-34
	// backbone's; other models ignore it.
	FuseBNReLU bool
	// MaskRoIs is the positive RoIs of one image that Mask R-CNN's mask
	// head runs on; 0 takes the sampler's most, a quarter of the box
	// head's 512 (mrcnnMaskRoIs). A run's images may give far fewer: the
	// positives are the proposals that overlap a ground-truth box, of
	// which engine/torchbench's synthetic images hold 4. Other models
	// ignore it.
	MaskRoIs int
}

// Generator lists the operators of one training step of a model family
// at a shape, forward, backward and the optimizer's update.
type Generator func(Shape) ([]Op, error)

// generators are the operator generators by model name: the names of the
// shipped profiles they describe.
var generators = map[string]Generator{
	// Vision and engine models (ops_vision.go, ops_engine.go).
	"resnet50":         resnet50Ops,
	"ssd-resnet34":     ssdResNet34Ops,
	"maskrcnn-r50-fpn": maskRCNNOps,
	"efficientnet-b4":  efficientNetB4Ops,
	"mlp":              engineMLPOps,
	"cnn":              engineCNNOps,
	// Sequence models (ops_seq.go, transformer_shapes.go).
	"transformer-base": translationOps("transformer-base"),
	"transformer-big":  translationOps("transformer-big"),
	"gnmt":             gnmtOps,
	"bert-base":        shapeOps("bert-base"),
	"bert-base-squad":  shapeOps("bert-base-squad"),
	"bert-large":       shapeOps("bert-large"),
	"bert-large-squad": shapeOps("bert-large-squad"),
	"gpt3-125m":        shapeOps("gpt3-125m"),
	"gpt3-350m":        shapeOps("gpt3-350m"),
	"gpt3-760m":        shapeOps("gpt3-760m"),
	"gpt3-1.3b":        shapeOps("gpt3-1.3b"),
	"gpt3-2.7b":        shapeOps("gpt3-2.7b"),
	"gpt3-6.7b":        shapeOps("gpt3-6.7b"),
	"gpt3-13b":         shapeOps("gpt3-13b"),
	"gpt3-175b":        shapeOps("gpt3-175b"),
	"llama2-7b":        shapeOps("llama2-7b"),
	"llama2-13b":       shapeOps("llama2-13b"),
	"llama2-70b":       shapeOps("llama2-70b"),
	"llama3-8b":        shapeOps("llama3-8b"),
	"llama3-70b":       shapeOps("llama3-70b"),
	"llama3-405b":      shapeOps("llama3-405b"),
	"mixtral-8x7b":     shapeOps("mixtral-8x7b"),
}

// Ops returns the operators of one training step of the model called name
// at shape s. The valid names are OpModels.
func Ops(name string, s Shape) ([]Op, error) {
	g, ok := generators[name]
	if !ok {
		return nil, fmt.Errorf("no operator generator for model %q (valid: %s)", name, strings.Join(OpModels(), ", "))
	}
	if s.Batch < 1 {
		return nil, fmt.Errorf("model %s: batch %d: want at least 1", name, s.Batch)
	}
	if s.Precision == "" {
		s.Precision = FP32
	}
	if !s.Precision.valid() {
		return nil, fmt.Errorf("model %s: unknown precision %q (valid: %s)", name, s.Precision, strings.Join(precisions, ", "))
	}
	if s.Resolution < 0 || s.SeqLen < 0 {
		return nil, fmt.Errorf("model %s: resolution %d, sequence length %d: want 0 (the default) or more", name, s.Resolution, s.SeqLen)
	}
	return g(s)
}

// OpModels returns the names of the models that have an operator
// generator, sorted.
func OpModels() []string {
	names := make([]string, 0, len(generators))
	for n := range generators {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
