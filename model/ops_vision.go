package model

import (
	"fmt"
	"math"
	"strconv"

	"scaleplan/internal/units"
)

// Operator generators of the image models: ResNet-50 v1.5, MLPerf's
// SSD300-ResNet34, Mask R-CNN R50-FPN and EfficientNet-B4, named as their
// shipped profiles. Each lists one training step at a Shape: the forward
// pass, the backward pass and momentum SGD's update, with the conventions
// of ops_layers.go. Shape.Resolution is the input's height and width (for
// Mask R-CNN its shorter side); 0 takes the profile's.

// resnetStage is one stage of a ResNet: blocks residual blocks of width
// channels (the bottleneck's inner width), the first of stride stride.
type resnetStage struct{ blocks, width, stride int }

// resnetNorm says how a ResNet's batch norms run: trained, or frozen as
// in detection backbones (FrozenBatchNorm2d); a trained one fused with
// the ReLU and residual add after it (Shape.FuseBNReLU) or not.
type resnetNorm struct{ frozen, fuse bool }

func (n resnetNorm) apply(b *convNet, name string, x *fmap) *fmap {
	if n.frozen {
		return b.frozenNorm(name, x)
	}
	return b.batchNorm(name, x)
}

// applyReLU adds the norm named name over x and the ReLU after it,
// named relu.
func (n resnetNorm) applyReLU(b *convNet, name, relu string, x *fmap) *fmap {
	if n.fuse && !n.frozen {
		return b.batchNormReLU(name, x, nil)
	}
	return b.relu(relu, n.apply(b, name, x))
}

// applyAddReLU adds the norm named name over x, the sum with addend named
// add and the ReLU after it named relu. The fused form runs addend's
// operators before the norm, which reads it.
func (n resnetNorm) applyAddReLU(b *convNet, name, add, relu string, x *fmap, addend func() *fmap) *fmap {
	if n.fuse && !n.frozen {
		return b.batchNormReLU(name, x, addend())
	}
	y := n.apply(b, name, x)
	return b.relu(relu, b.add(add, y, addend()))
}

// resnetStem adds the 7×7/2 convolution, its norm and ReLU, and the 3×3/2
// max-pool, their names prefixed by prefix.
func resnetStem(b *convNet, prefix string, x *fmap, n resnetNorm, frozen bool) *fmap {
	y := b.conv(prefix+"conv1", x, convSpec{cout: 64, k: 7, stride: 2, pad: 3, frozen: frozen})
	y = n.applyReLU(b, prefix+"bn1", prefix+"relu", y)
	return b.maxPool(prefix+"maxpool", y, 3, 2, 1)
}

// bottleneck adds ResNet v1.5's bottleneck block (1×1, 3×3 of the stride,
// 1×1 to 4× width, with a projection shortcut when the shape changes).
func bottleneck(b *convNet, name string, x *fmap, width, stride int, n resnetNorm, frozen bool) *fmap {
	b.fork(name, x)
	y := b.conv(name+".conv1", x, convSpec{cout: width, k: 1, stride: 1, frozen: frozen})
	y = n.applyReLU(b, name+".bn1", name+".relu1", y)
	y = b.conv(name+".conv2", y, convSpec{cout: width, k: 3, stride: stride, pad: 1, frozen: frozen})
	y = n.applyReLU(b, name+".bn2", name+".relu2", y)
	y = b.conv(name+".conv3", y, convSpec{cout: 4 * width, k: 1, stride: 1, frozen: frozen})
	shortcut := func() *fmap {
		if stride == 1 && x.c == int64(4*width) {
			return x
		}
		sc := b.conv(name+".downsample.0", x, convSpec{cout: 4 * width, k: 1, stride: stride, frozen: frozen})
		return n.apply(b, name+".downsample.1", sc)
	}
	return n.applyAddReLU(b, name+".bn3", name+".add", name+".relu3", y, shortcut)
}

// basicBlock adds ResNet-34's block (two 3×3 convolutions, a projection
// shortcut when the shape changes), its norms run as n says.
func basicBlock(b *convNet, name string, x *fmap, width, stride int, n resnetNorm) *fmap {
	b.fork(name, x)
	y := b.conv(name+".1.conv", x, convSpec{cout: width, k: 3, stride: stride, pad: 1})
	y = n.applyReLU(b, name+".1.bn", name+".1.relu", y)
	y = b.conv(name+".2.conv", y, convSpec{cout: width, k: 3, stride: 1, pad: 1})
	shortcut := func() *fmap {
		if stride == 1 && x.c == int64(width) {
			return x
		}
		return n.apply(b, name+".downsample.bn", b.conv(name+".downsample.conv", x, convSpec{cout: width, k: 1, stride: stride}))
	}
	return n.applyAddReLU(b, name+".2.bn", name+".add", name+".relu", y, shortcut)
}

// resnet50Stages are ResNet-50's stages (He et al. 2016, Table 1).
var resnet50Stages = []resnetStage{{3, 64, 1}, {4, 128, 2}, {6, 256, 2}, {3, 512, 2}}

// resnet50Ops lists ResNet-50 v1.5 (torchvision's resnet50: the stride on
// the 3×3 convolution of a stage's first block) at 224×224 by default:
// 25,557,032 parameters and 4.09 G multiply-adds per image at 224
// (torchvision's ResNet50_Weights documentation).
func resnet50Ops(s Shape) ([]Op, error) {
	r, err := checkResolution("resnet50", s, 224, 32)
	if err != nil {
		return nil, err
	}
	b := newConvNet(s.Precision, s.Batch)
	norm := resnetNorm{fuse: s.FuseBNReLU}
	x := resnetStem(b, "", b.input(3, r, r), norm, false)
	for i, st := range resnet50Stages {
		for j := 0; j < st.blocks; j++ {
			stride := 1
			if j == 0 {
				stride = st.stride
			}
			x = bottleneck(b, "layer"+strconv.Itoa(i+1)+"."+strconv.Itoa(j), x, st.width, stride, norm, false)
		}
	}
	x = b.avgPool("avgpool", x)
	b.classifierLoss("loss", b.linear("fc", x, 1000))
	return b.ops(), nil
}

// SSD300's layout, from MLPerf's reference (mlcommons/training
// single_stage_detector/ssd/ssd300.py): the feature maps' channels, the
// extra blocks' inner widths, the anchors per cell, and the classes with
// background.
var (
	ssdChannels = []int{256, 512, 512, 256, 256, 256}
	ssdMids     = []int{256, 256, 128, 128, 128}
	ssdAnchors  = []int{4, 6, 6, 6, 4, 4}
)

const (
	ssdClasses    = 81
	flopsSmoothL1 = 3 // difference, magnitude, square or linear branch
	flopsBCE      = 5 // sigmoid (3), log, product with the target
)

// ssdResNet34Ops lists MLPerf's SSD300 with a ResNet-34 backbone at
// 300×300 by default (the training benchmark's input; MLPerf Inference's
// SSD-ResNet34 runs 1200×1200 with other strides and is not this
// network). The backbone is torchvision's ResNet-34 up to layer3, with
// layer3's stride 1 (base_model.py); the extra blocks are a 1×1 and a 3×3
// convolution with biases and ReLU, no norm; the heads are 3×3
// convolutions with biases. Not listed: concatenating the heads' outputs
// (copies), anchor matching and hard-negative mining's sort (no FLOPs to
// speak of, no gradient).
func ssdResNet34Ops(s Shape) ([]Op, error) {
	r, err := checkResolution("ssd-resnet34", s, 300, 64)
	if err != nil {
		return nil, err
	}
	b := newConvNet(s.Precision, s.Batch)
	x := b.conv("backbone.conv1", b.input(3, r, r), convSpec{cout: 64, k: 7, stride: 2, pad: 3})
	norm := resnetNorm{fuse: s.FuseBNReLU}
	x = norm.applyReLU(b, "backbone.bn1", "backbone.relu", x)
	x = b.maxPool("backbone.maxpool", x, 3, 2, 1)
	for i, st := range []resnetStage{{3, 64, 1}, {4, 128, 2}, {6, 256, 1}} {
		for j := 0; j < st.blocks; j++ {
			stride := 1
			if j == 0 {
				stride = st.stride
			}
			x = basicBlock(b, "backbone.layer"+strconv.Itoa(i+1)+"."+strconv.Itoa(j), x, st.width, stride, norm)
		}
	}
	maps := []*fmap{x}
	for i, mid := range ssdMids {
		name := "additional_blocks." + strconv.Itoa(i)
		b.fork(name, x)
		y := b.relu(name+".relu1", b.conv(name+".conv1", x, convSpec{cout: mid, k: 1, stride: 1, bias: true}))
		spec := convSpec{cout: ssdChannels[i+1], k: 3, stride: 2, pad: 1, bias: true}
		if i >= 3 {
			spec.stride, spec.pad = 1, 0
		}
		x = b.relu(name+".relu2", b.conv(name+".conv2", y, spec))
		if x.h < 1 {
			return nil, fmt.Errorf("model ssd-resnet34: resolution %d leaves no pixel for feature map %d; want at least 257", r, i+1)
		}
		maps = append(maps, x)
	}
	var anchors int64
	for i, m := range maps {
		b.fork("loc."+strconv.Itoa(i), m)
		b.conv("loc."+strconv.Itoa(i), m, convSpec{cout: 4 * ssdAnchors[i], k: 3, stride: 1, pad: 1, bias: true})
		b.conv("conf."+strconv.Itoa(i), m, convSpec{cout: ssdClasses * ssdAnchors[i], k: 3, stride: 1, pad: 1, bias: true})
		anchors += int64(ssdAnchors[i]) * m.h * m.w
	}
	rows := b.batch * anchors
	b.classifierLoss("conf_loss", &fmap{n: rows, c: ssdClasses, h: 1, w: 1, grad: true})
	b.elementLoss("loc_loss", 4*rows, flopsSmoothL1)
	return b.ops(), nil
}

// efficientNetStage is a stage of EfficientNet-B0 (Tan and Le 2019,
// Table 1): kernel, repeats, output channels, expansion, stride.
type efficientNetStage struct{ k, repeats, out, expand, stride int }

var efficientNetB0 = []efficientNetStage{
	{3, 1, 16, 1, 1}, {3, 2, 24, 6, 2}, {5, 2, 40, 6, 2}, {3, 3, 80, 6, 2},
	{5, 3, 112, 6, 1}, {5, 4, 192, 6, 2}, {3, 1, 320, 6, 1},
}

// B4's compound scaling: width 1.4, depth 1.8 (the reference
// implementation's efficientnet_params, tensorflow/tpu
// models/official/efficientnet/efficientnet_builder.py).
const effB4Width, effB4Depth = 1.4, 1.8

// effRound scales channels by B4's width and rounds to a multiple of 8,
// not below 90 % of the scaled figure (round_filters in the reference).
func effRound(c int) int {
	x := float64(c) * effB4Width
	n := max(8, int(x+4)/8*8)
	if float64(n) < 0.9*x {
		n += 8
	}
	return n
}

// mbconv adds one MBConv block: 1×1 expansion (unless expand is 1),
// depthwise k×k of the stride, squeeze-and-excitation to a quarter of
// the block's input channels, 1×1 projection, and the residual sum when
// the shape is kept, under stochastic depth (dropPathAdd, or
// stochasticDepthAdd for torchvision's program, tv).
func mbconv(b *convNet, name string, x *fmap, st efficientNetStage, out, stride int, tv bool) *fmap {
	residual := stride == 1 && x.c == int64(out)
	if residual {
		b.fork(name, x)
	}
	y := x
	mid := int(x.c) * st.expand
	if st.expand != 1 {
		y = b.silu(name+".expand.act", b.convBN(name+".expand", y, convSpec{cout: mid, k: 1, stride: 1}))
	}
	y = b.convBN(name+".dw", y, convSpec{cout: mid, k: st.k, stride: stride, pad: st.k / 2, groups: mid})
	y = b.silu(name+".dw.act", y)
	b.fork(name+".se", y)
	red := max(1, int(x.c)/4)
	g := b.avgPool(name+".se.pool", y)
	g = b.silu(name+".se.act", b.conv(name+".se.reduce", g, convSpec{cout: red, k: 1, stride: 1, bias: true}))
	g = b.sigmoid(name+".se.gate", b.conv(name+".se.expand", g, convSpec{cout: mid, k: 1, stride: 1, bias: true}))
	y = b.scale(name+".se.scale", y, g)
	y = b.convBN(name+".project", y, convSpec{cout: out, k: 1, stride: 1})
	switch {
	case residual && tv:
		y = b.stochasticDepthAdd(name+".add", y, x)
	case residual:
		y = b.dropPathAdd(name+".add", y, x)
	}
	return y
}

// dropPathAdd adds the residual sum of an MBConv block under stochastic
// depth as DeepLearningExamples trains EfficientNet-B4
// (PyTorch/Classification/ConvNets at 729963dd,
// image_classification/models/common.py StochasticDepthResidual, with
// survival_prob 0.8 for efficientnet-b4 in models/efficientnet.py): a
// 0-d mask drawn by F.dropout under torch.no_grad (one kernel), then
// torch.addcmul(x, mask, y), whose backward multiplies the gradient of y
// by the mask (one pass over y). The mask is a 0-d CUDA tensor, which
// TensorIterator broadcasts with stride 0 rather than passing as a CPU
// scalar, so both passes run the generic elementwise kernel (Op.Broadcast).
func (b *convNet) dropPathAdd(name string, y, x *fmap) *fmap {
	b.fwd = append(b.fwd, Op{Name: name + ".mask", Kind: Elementwise, Pass: Forward,
		Read: units.Bytes(b.size), Write: units.Bytes(b.size), Untracked: true})
	z := like(x)
	z.grad = x.grad || y.grad
	e := float64(z.elems())
	b.push(Op{Name: name, Kind: Elementwise, FLOPs: 2 * e, Read: b.bytes(x) + b.bytes(y), Write: b.bytes(z), Broadcast: true},
		Op{Name: name + ".grad", Kind: Elementwise, FLOPs: e, Read: b.bytes(z), Write: b.bytes(y), Broadcast: true})
	return z
}

// stochasticDepthAdd adds the residual sum of an MBConv block as
// torchvision's EfficientNet trains it (torchvision/models/efficientnet.py,
// MBConv.forward: result = self.stochastic_depth(result); result += input;
// torchvision/ops/stochastic_depth.py, mode "row"): a noise of one value a
// sample, drawn by bernoulli_ and scaled by div_ (two kernels on N values,
// under no autograd), the product y·noise broadcast over each sample's
// values (Op.Broadcast), then the in-place sum with x. Backward, y's
// gradient is the product of the sum's gradient and the noise, broadcast
// again; the sum passes its gradient on without a kernel.
func (b *convNet) stochasticDepthAdd(name string, y, x *fmap) *fmap {
	noise := b.values(y.n)
	b.fwd = append(b.fwd, Op{Name: name + ".noise", Kind: Elementwise, Pass: Forward,
		Read: noise, Write: 2 * noise, Kernels: 2, Untracked: true})
	d := like(y)
	e := float64(d.elems())
	b.push(Op{Name: name + ".drop", Kind: Elementwise, FLOPs: flopsMul * e, Read: b.bytes(y) + noise, Write: b.bytes(d),
		Saved: noise, Broadcast: true},
		Op{Name: name + ".drop.grad", Kind: Elementwise, FLOPs: flopsMul * e, Read: b.bytes(d) + noise, Write: b.bytes(y),
			Broadcast: true})
	return b.add(name, d, x)
}

// efficientNetB4Ops lists EfficientNet-B4 (Tan and Le 2019; width 1.4,
// depth 1.8, 380×380 by default) as timm's efficientnet_b4 builds it:
// symmetric padding, batch norm, SiLU, squeeze-and-excitation, dropout
// before the classifier.
func efficientNetB4Ops(s Shape) ([]Op, error) {
	r, err := checkResolution("efficientnet-b4", s, 380, 32)
	if err != nil {
		return nil, err
	}
	tv := detectProgramOf(s.Framework) == programTorchvision
	b := newConvNet(s.Precision, s.Batch)
	x := b.convBN("stem", b.input(3, r, r), convSpec{cout: effRound(32), k: 3, stride: 2, pad: 1})
	x = b.silu("stem.act", x)
	i := 0
	for _, st := range efficientNetB0 {
		n := int(math.Ceil(effB4Depth * float64(st.repeats)))
		for j := 0; j < n; j++ {
			stride := 1
			if j == 0 {
				stride = st.stride
			}
			x = mbconv(b, "blocks."+strconv.Itoa(i), x, st, effRound(st.out), stride, tv)
			i++
		}
	}
	x = b.silu("head.act", b.convBN("head", x, convSpec{cout: effRound(1280), k: 1, stride: 1}))
	x = b.dropout("dropout", b.avgPool("avgpool", x))
	b.classifierLoss("loss", b.linear("classifier", x, 1000))
	return b.ops(), nil
}

// Mask R-CNN's training configuration in MLPerf (maskrcnn-benchmark's
// e2e_mask_rcnn_R_50_FPN_1x and MLPerf's config): 81 classes with
// background, 3 anchors per location, 256 anchors sampled per image for
// the RPN loss, 512 RoIs sampled per image for the box head of which at
// most a quarter (128) are positive and go to the mask head; RoIAlign of
// 7×7 (boxes) and 14×14 (masks) bins with 2×2 samples each.
const (
	mrcnnClasses      = 81
	mrcnnAnchors      = 3
	mrcnnRPNSamples   = 256
	mrcnnBoxRoIs      = 512
	mrcnnMaskRoIs     = 128
	mrcnnFPN          = 256
	flopsRoIAlign     = 36 // 4 bilinear samples of 4 multiply-adds (32), averaged (4)
	roiAlignNeighbors = 16 // values one output element's 4 samples read
)

// maskRCNNOps lists Mask R-CNN with a ResNet-50-FPN backbone for 800 ×
// 1344 images by default (the shorter side 800, the longer 1333 padded to
// a multiple of 32), as MLPerf trains it: frozen batch norm throughout,
// the stem and layer1 frozen (FREEZE_CONV_BODY_AT 2: they have no
// backward pass at all), FPN on C2-C5 with P6 by max-pool, the RPN head
// on P2-P6. Approximated: every image has 512 sampled RoIs, 128 of them
// positive (the most MLPerf's sampler keeps; fewer when an image has few
// objects); the proposal selection, matching, sampling and mask targets
// are DeepLearningExamples' calls (ops_detect.go), each image given
// 1,000 proposals and 128 positive RoIs, its PyTorch program's or, where
// s.Framework names TensorFlow, its TensorFlow 2 program's suppression on
// the host and mask targets on the device in their place, and where it
// names torchvision, torchvision's MaskRCNN's calls (ops_detect_tv.go:
// 2,000 proposals an image, 91 classes, the input transform in the
// step); RoIAlign reads 16 values per output element
// at most the pyramid's size, and its backward writes the whole
// pyramid's gradient; the mask loss is on the ground-truth class's
// channel.
func maskRCNNOps(s Shape) ([]Op, error) {
	r, err := checkResolution("maskrcnn-r50-fpn", s, 800, 64)
	if err != nil {
		return nil, err
	}
	h := ceilDivInt(r, 32) * 32
	w := ceilDivInt(r*1333, 800*32) * 32
	b := newConvNet(s.Precision, s.Batch)
	b.maskRoIs = mrcnnMaskRoIs
	if s.MaskRoIs > 0 {
		b.maskRoIs = int64(min(s.MaskRoIs, mrcnnBoxRoIs))
	}
	prog := detectProgramOf(s.Framework)
	if prog == programTorchvision {
		tvTransform(b, int64(h), int64(w))
	}
	frozen := resnetNorm{frozen: true}
	x := resnetStem(b, "backbone.", b.input(3, h, w), frozen, true)
	var cs []*fmap
	for i, st := range resnet50Stages {
		for j := 0; j < st.blocks; j++ {
			stride := 1
			if j == 0 {
				stride = st.stride
			}
			x = bottleneck(b, "backbone.layer"+strconv.Itoa(i+1)+"."+strconv.Itoa(j), x, st.width, stride, frozen, i == 0)
		}
		if i < 3 {
			b.fork("backbone.c"+strconv.Itoa(i+2), x) // read by the next stage and the FPN
		}
		cs = append(cs, x)
	}
	ps := maskRCNNFPN(b, cs)
	maskRCNNRPN(b, ps)
	if prog == programTorchvision {
		tvProposalsOf(b, ps)
	} else {
		rpnProposals(b, ps, prog == programTF2)
	}
	maskRCNNHeads(b, ps[:4], prog)
	return b.ops(), nil
}

// maskRCNNFPN adds the feature pyramid over C2-C5 and returns P2-P6.
func maskRCNNFPN(b *convNet, cs []*fmap) []*fmap {
	ps := make([]*fmap, 5)
	var last *fmap
	for i := 3; i >= 0; i-- {
		n := strconv.Itoa(i + 2)
		lat := b.conv("fpn.inner"+n, cs[i], convSpec{cout: mrcnnFPN, k: 1, stride: 1, bias: true})
		if last != nil {
			lat = b.add("fpn.topdown"+n, lat, upsample2(b, "fpn.upsample"+n, last, lat))
		}
		last = lat
		if i > 0 {
			b.fork("fpn.inner"+n, last) // read by the output convolution and the next level's resize
		}
		ps[i] = b.conv("fpn.layer"+n, last, convSpec{cout: mrcnnFPN, k: 3, stride: 1, pad: 1, bias: true})
	}
	b.fork("fpn.p5", ps[3])
	ps[4] = b.maxPool("fpn.p6", ps[3], 1, 2, 0)
	return ps
}

// upsample2 adds a nearest-neighbour resize of x to to's extent (a Pool
// with no arithmetic; backward sums each input's 4 gradients).
func upsample2(b *convNet, name string, x, to *fmap) *fmap {
	y := &fmap{n: x.n, c: x.c, h: to.h, w: to.w, grad: x.grad}
	b.push(Op{Name: name, Kind: Pool, Read: b.bytes(x), Write: b.bytes(y)},
		Op{Name: name + ".grad", Kind: Pool, FLOPs: float64(y.elems()), Read: b.bytes(y), Write: b.bytes(x)})
	return y
}

// maskRCNNRPN adds the RPN head, shared by the levels P2-P6, and its
// losses over the sampled anchors.
func maskRCNNRPN(b *convNet, ps []*fmap) {
	for i, p := range ps {
		n := ".p" + strconv.Itoa(i+2)
		shared := i > 0
		t := b.conv("rpn.conv"+n, p, convSpec{cout: mrcnnFPN, k: 3, stride: 1, pad: 1, bias: true, shared: shared})
		t = b.relu("rpn.relu"+n, t)
		b.fork("rpn.head"+n, t)
		b.conv("rpn.cls_logits"+n, t, convSpec{cout: mrcnnAnchors, k: 1, stride: 1, bias: true, shared: shared})
		b.conv("rpn.bbox_pred"+n, t, convSpec{cout: 4 * mrcnnAnchors, k: 1, stride: 1, bias: true, shared: shared})
	}
	n := b.batch * mrcnnRPNSamples
	b.elementLoss("rpn.loss_objectness", n, flopsBCE)
	b.elementLoss("rpn.loss_box", 4*n, flopsSmoothL1)
}

// roiAlign adds RoIAlign of rois regions to bins×bins cells of the
// pyramid ps (256 channels).
func roiAlign(b *convNet, name string, ps []*fmap, rois int64, bins int) *fmap {
	y := &fmap{n: rois, c: mrcnnFPN, h: int64(bins), w: int64(bins), grad: true}
	var pyramid units.Bytes
	for _, p := range ps {
		b.fork(name+"."+strconv.FormatInt(p.h, 10), p)
		pyramid += b.bytes(p)
	}
	read := min(pyramid, roiAlignNeighbors*b.bytes(y))
	e := float64(y.elems())
	b.push(Op{Name: name, Kind: Pool, FLOPs: flopsRoIAlign * e, Read: read, Write: b.bytes(y)},
		Op{Name: name + ".grad", Kind: Pool, FLOPs: flopsRoIAlign * e, Read: b.bytes(y), Write: pyramid})
	return y
}

// maskRCNNHeads adds the box head (two 1024-wide layers, class scores and
// class-specific boxes) on the sampled RoIs and the mask head (four 3×3
// convolutions, a 2×2 transposed convolution, per-class 28×28 logits) on
// the positive ones, with their losses and the bookkeeping of program
// prog (ops_detect.go, ops_detect_tv.go).
func maskRCNNHeads(b *convNet, ps []*fmap, prog detectProgram) {
	rois := b.batch * mrcnnBoxRoIs
	tv := prog == programTorchvision
	classes := mrcnnClasses
	if tv {
		classes = tvClasses
		tvPooler(b, "roi_heads.box_roi_pool", rois)
	} else {
		poolerLevels(b, "roi_heads.box_roi_pool", rois)
	}
	x := roiAlign(b, "roi_heads.box_roi_pool", ps, rois, 7)
	x = b.relu("roi_heads.box_head.relu6", b.linear("roi_heads.box_head.fc6", x, 1024))
	x = b.relu("roi_heads.box_head.relu7", b.linear("roi_heads.box_head.fc7", x, 1024))
	b.fork("roi_heads.box_predictor", x)
	cls := b.linear("roi_heads.box_predictor.cls_score", x, classes)
	b.linear("roi_heads.box_predictor.bbox_pred", x, 4*classes)
	if tv {
		tvBoxLoss(b)
	} else {
		boxLossTargets(b)
	}
	b.classifierLoss("roi_heads.loss_classifier", cls)
	pos := b.batch * b.maskRoIs
	b.elementLoss("roi_heads.loss_box_reg", 4*pos, flopsSmoothL1)

	if tv {
		tvMaskPositive(b)
		tvPooler(b, "roi_heads.mask_roi_pool", pos)
	} else {
		maskPositive(b)
		poolerLevels(b, "roi_heads.mask_roi_pool", pos)
	}
	m := roiAlign(b, "roi_heads.mask_roi_pool", ps, pos, 14)
	for i := 1; i <= 4; i++ {
		n := "roi_heads.mask_head.mask_fcn" + strconv.Itoa(i)
		m = b.relu(n+".relu", b.conv(n, m, convSpec{cout: mrcnnFPN, k: 3, stride: 1, pad: 1, bias: true}))
	}
	m = b.relu("roi_heads.mask_predictor.relu", deconv2(b, "roi_heads.mask_predictor.conv5_mask", m))
	m = b.conv("roi_heads.mask_predictor.mask_fcn_logits", m, convSpec{cout: classes, k: 1, stride: 1, bias: true})
	if tv {
		tvMaskTargets(b, 4*ps[0].h, 4*ps[0].w) // P2 is a quarter of the image
	} else {
		maskTargets(b, prog == programTF2)
	}
	b.elementLoss("roi_heads.loss_mask", pos*m.h*m.w, flopsBCE)
}

// deconv2 adds a 2×2 transposed convolution of stride 2 (256 to 256
// channels, with a bias), the product M = input pixels, N = output
// channels × 4, K = input channels, scattered to twice the extent.
func deconv2(b *convNet, name string, x *fmap) *fmap {
	cout := int64(mrcnnFPN)
	y := &fmap{n: x.n, c: cout, h: 2 * x.h, w: 2 * x.w, grad: true}
	weights := x.c * cout * 4
	pix := x.n * x.h * x.w
	flops := 2 * float64(pix) * float64(weights)
	b.push(Op{Name: name, Kind: Conv, FLOPs: flops, Params: weights + cout,
		Read: b.bytes(x) + b.values(weights), Write: b.bytes(y), Saved: b.keep(x),
		M: pix, N: cout * 4, K: x.c, Groups: 1, Kernel: 2, Stride: 2, OutH: y.h, OutW: y.w},
		Op{Name: name + ".grad_weight", Kind: Conv, FLOPs: flops, Read: b.bytes(y) + b.bytes(x),
			Write: b.values(weights), M: x.c, N: cout * 4, K: pix, Groups: 1, Kernel: 2, Stride: 2, OutH: y.h, OutW: y.w, GradWeight: true},
		Op{Name: name + ".grad_input", Kind: Conv, FLOPs: flops, Read: b.bytes(y) + b.values(weights),
			Write: b.bytes(x), M: pix, N: x.c, K: cout * 4, Groups: 1, Kernel: 2, Stride: 2, OutH: y.h, OutW: y.w})
	return y
}
