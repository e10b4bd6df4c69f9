package model

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// opsOf returns the operators of model name at s, failing the test on an
// error.
func opsOf(t testing.TB, name string, s Shape) []Op {
	t.Helper()
	ops, err := Ops(name, s)
	if err != nil {
		t.Fatalf("Ops(%s, %+v): %v", name, s, err)
	}
	return ops
}

// matrixFLOPs returns the FLOPs of the convolutions and matrix products
// of pass p: what published counts (2 per multiply-add) cover.
func matrixFLOPs(ops []Op, p Pass) float64 {
	var f float64
	for _, o := range ops {
		if o.Pass == p && (o.Kind == Conv || o.Kind == GroupedConv || o.Kind == MatMul) {
			f += o.FLOPs
		}
	}
	return f
}

// outExtent is a convolution's or pool's output extent.
func outExtent(h, k, s, p int) int { return (h+2*p-k)/s + 1 }

// TestVisionOpsPublished compares each generator's parameters and forward
// FLOPs per sample at its default resolution with published figures and
// closed forms from the reference architectures.
func TestVisionOpsPublished(t *testing.T) {
	for _, c := range []struct {
		model  string
		params float64 // published or closed-form trainable parameters
		macs   float64 // published or closed-form multiply-adds per sample
		tol    float64 // on the multiply-adds
	}{
		// torchvision ResNet50_Weights.IMAGENET1K_V1: "num_params
		// 25557032", "GFLOPS 4.09" (multiply-adds) at 224×224.
		{"resnet50", 25557032, 4.09e9, 0.02},
		// Tan and Le 2019, Table 2: 19 M parameters, 4.2 B FLOPs at 380×380, which are multiply-adds
		// (B0's 0.39 B is B0's multiply-add count). Our count of the
		// layers, whose parameters equal timm's to the unit, is 4.39 G,
		// 4.6 % above: the one exception to 2 %, stated in docs/models.md.
		{"efficientnet-b4", 19e6, 4.2e9, 0.05},
		// Closed forms from MLPerf's reference layers (below).
		{"ssd-resnet34", float64(ssdClosedParams()), float64(ssdClosedMACs(300)), 1e-12},
		// torchvision maskrcnn_resnet50_fpn: 44,401,393 parameters with 91
		// classes; MLPerf's 81 classes have 10 fewer rows in the class
		// scores (1,025 each), boxes (4 × 1,025) and mask logits (257),
		// and the stem and layer1 (9,408 + 212,992) are frozen.
		{"maskrcnn-r50-fpn", 44401393 - 10*(1025+4*1025+257) - (9408 + 212992), maskRCNNClosedMACs(800, 1344), 1e-12},
		// engine.yaml's closed forms.
		{"mlp", 784*1024 + 1024 + 1024*1024 + 1024 + 1024*10 + 10, 784*1024 + 1024*1024 + 1024*10, 0},
		{"cnn", 9*32 + 32 + 9*32*64 + 64 + 9216*128 + 128 + 128*10 + 10, 26*26*32*9 + 24*24*64*288 + 9216*128 + 128*10, 0},
	} {
		ops := opsOf(t, c.model, Shape{Batch: 1})
		tot := Totals(ops)
		if e := relErr(float64(tot.Params), c.params); e > 0.02 {
			t.Errorf("%s: %d parameters, %.2f%% from %.0f", c.model, tot.Params, 100*e, c.params)
		}
		if e := relErr(matrixFLOPs(ops, Forward), 2*c.macs); e > c.tol {
			t.Errorf("%s: forward matrix FLOPs %.6g, %.3f%% from 2 × %.6g", c.model, matrixFLOPs(ops, Forward), 100*e, c.macs)
		}
		// The memory-bound operators add a few percent to the forward pass.
		if r := tot.Forward / matrixFLOPs(ops, Forward); r < 1 || r > 1.07 {
			t.Errorf("%s: forward FLOPs %.4g are %.3f × the matrix products'", c.model, tot.Forward, r)
		}
	}
	// timm's efficientnet_b4 has 19,341,616 parameters.
	if p := Totals(opsOf(t, "efficientnet-b4", Shape{Batch: 1})).Params; p != 19341616 {
		t.Errorf("efficientnet-b4: %d parameters, timm 19341616", p)
	}
}

// TestVisionOpsProfiles checks the generators against the shipped
// profiles: the same trainable parameters, and forward FLOPs equal to the
// profile's forward_flops except EfficientNet-B4's, where the profile
// takes the paper's 8.4 GFLOP.
func TestVisionOpsProfiles(t *testing.T) {
	p, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"resnet50", "ssd-resnet34", "maskrcnn-r50-fpn", "efficientnet-b4", "mlp", "cnn"} {
		m, err := p.Model(name)
		if err != nil {
			t.Fatal(err)
		}
		ops := opsOf(t, name, Shape{Batch: 1})
		if got := Totals(ops).Params; got != m.Params {
			t.Errorf("%s: %d parameters, profile %d", name, got, m.Params)
		}
		tol := 1e-6
		if name == "efficientnet-b4" {
			tol = 0.05
		}
		if e := relErr(matrixFLOPs(ops, Forward), float64(m.ForwardFLOPs)); e > tol {
			t.Errorf("%s: forward matrix FLOPs %.6g, %.3f%% from the profile's %v", name, matrixFLOPs(ops, Forward), 100*e, m.ForwardFLOPs)
		}
	}
}

// ssdClosedParams counts SSD300-ResNet34's parameters from MLPerf's
// reference (ssd300.py, base_model.py): ResNet-34 to layer3, five extra
// blocks with biases, 3×3 heads with biases, 81 classes.
func ssdClosedParams() int64 {
	p := int64(7*7*3*64 + 2*64)
	cin := 64
	for _, st := range []struct{ blocks, c int }{{3, 64}, {4, 128}, {6, 256}} {
		for b := 0; b < st.blocks; b++ {
			p += int64(9*cin*st.c+2*st.c) + int64(9*st.c*st.c+2*st.c)
			if cin != st.c {
				p += int64(cin*st.c + 2*st.c)
			}
			cin = st.c
		}
	}
	outs := []int{256, 512, 512, 256, 256, 256}
	for i, mid := range []int{256, 256, 128, 128, 128} {
		p += int64(outs[i]*mid+mid) + int64(9*mid*outs[i+1]+outs[i+1])
	}
	for i, a := range []int{4, 6, 6, 6, 4, 4} {
		p += int64(9*outs[i]*a*85 + a*85)
	}
	return p
}

// ssdClosedMACs counts SSD300-ResNet34's multiply-adds at r×r from the
// same layers, and returns them with the feature maps' extents.
func ssdClosedMACs(r int) int64 {
	macs, _ := ssdLayout(r)
	return macs
}

func ssdLayout(r int) (macs int64, maps []int) {
	h := outExtent(r, 7, 2, 3)
	macs = int64(h * h * 64 * 3 * 49)
	h = outExtent(h, 3, 2, 1)
	cin := 64
	for _, st := range []struct{ blocks, c, s int }{{3, 64, 1}, {4, 128, 2}, {6, 256, 1}} {
		for b := 0; b < st.blocks; b++ {
			s := 1
			if b == 0 {
				s = st.s
			}
			ho := outExtent(h, 3, s, 1)
			macs += int64(ho*ho*st.c*9) * int64(cin+st.c)
			if cin != st.c {
				macs += int64(ho * ho * st.c * cin)
			}
			h, cin = ho, st.c
		}
	}
	maps = []int{h}
	outs := []int{256, 512, 512, 256, 256, 256}
	for i, mid := range []int{256, 256, 128, 128, 128} {
		macs += int64(h * h * mid * outs[i])
		if i < 3 {
			h = outExtent(h, 3, 2, 1)
		} else {
			h = outExtent(h, 3, 1, 0)
		}
		macs += int64(h*h*outs[i+1]*9) * int64(mid)
		maps = append(maps, h)
	}
	for i, a := range []int{4, 6, 6, 6, 4, 4} {
		macs += int64(maps[i]*maps[i]*outs[i]*9) * int64(a*85)
	}
	return macs, maps
}

// maskRCNNClosedMACs counts Mask R-CNN R50-FPN's multiply-adds for one
// h×w image in training: the ResNet-50 body, the FPN (1×1 laterals, 3×3
// outputs), the RPN head on P2-P6 (3×3 conv, 3 + 12 outputs), the box
// head on 512 RoIs and the mask head on 128.
func maskRCNNClosedMACs(h, w int) float64 {
	sz := func(x, k, s, p int) int { return outExtent(x, k, s, p) }
	hs, ws := sz(h, 7, 2, 3), sz(w, 7, 2, 3)
	macs := float64(hs*ws) * 64 * 3 * 49
	hs, ws = sz(hs, 3, 2, 1), sz(ws, 3, 2, 1)
	cin := 64
	var levels [][3]int // C2-C5: extent and channels
	for _, st := range resnet50Stages {
		for b := 0; b < st.blocks; b++ {
			s := 1
			if b == 0 {
				s = st.stride
			}
			ho, wo := sz(hs, 1, s, 0), sz(ws, 1, s, 0)
			macs += float64(hs*ws*cin*st.width) + float64(ho*wo*st.width*st.width*9) + float64(ho*wo*st.width*4*st.width)
			if b == 0 {
				macs += float64(ho * wo * cin * 4 * st.width)
			}
			hs, ws, cin = ho, wo, 4*st.width
		}
		levels = append(levels, [3]int{hs, ws, cin})
	}
	var pix float64
	for _, l := range levels {
		macs += float64(l[0]*l[1]) * (float64(l[2])*256 + 256*256*9)
		pix += float64(l[0] * l[1])
	}
	pix += float64(sz(levels[3][0], 1, 2, 0) * sz(levels[3][1], 1, 2, 0)) // P6
	macs += pix * (256*256*9 + 256*15)
	macs += 512 * (256*49*1024 + 1024*1024 + 1024*81*5)
	macs += 128 * (4*14*14*256*256*9 + 14*14*256*256*4 + 28*28*256*81)
	return macs
}

// TestOpsBackward checks that the backward pass's matrix FLOPs are twice
// the forward's less the gradient of the input the first layer does not
// compute, and, for Mask R-CNN, less the frozen stem and layer1 (no
// backward) and the input gradients of the layers that read C2.
func TestOpsBackward(t *testing.T) {
	for _, c := range []struct {
		model string
		first float64 // FLOPs of the first layer, closed form
	}{
		{"resnet50", 2 * 112 * 112 * 64 * 3 * 49},
		{"ssd-resnet34", 2 * 150 * 150 * 64 * 3 * 49},
		{"efficientnet-b4", 2 * 190 * 190 * 48 * 27},
		{"mlp", 2 * 784 * 1024},
		{"cnn", 2 * 26 * 26 * 32 * 9},
	} {
		ops := opsOf(t, c.model, Shape{Batch: 2})
		want := 2*matrixFLOPs(ops, Forward) - 2*c.first // batch 2
		if e := relErr(matrixFLOPs(ops, Backward), want); e > 1e-12 {
			t.Errorf("%s: backward matrix FLOPs %.6g, want 2 × forward − first layer = %.6g", c.model, matrixFLOPs(ops, Backward), want)
		}
	}
	ops := opsOf(t, "maskrcnn-r50-fpn", Shape{Batch: 1})
	var frozen, c2 float64
	for _, o := range ops {
		if o.Pass == Backward && (strings.HasPrefix(o.Name, "backbone.conv1") || strings.HasPrefix(o.Name, "backbone.layer1.")) {
			t.Errorf("maskrcnn-r50-fpn: frozen layer has backward operator %s", o.Name)
		}
		if o.Pass != Forward || o.Kind != Conv {
			continue
		}
		switch {
		case o.Name == "backbone.conv1" || strings.HasPrefix(o.Name, "backbone.layer1."):
			frozen += o.FLOPs
		case o.Name == "backbone.layer2.0.conv1" || o.Name == "backbone.layer2.0.downsample.0" || o.Name == "fpn.inner2":
			c2 += o.FLOPs
		}
	}
	// Closed form of the frozen part at 800×1344: the stem's 7×7 to 400×672
	// and layer1 at 200×336 (3 blocks and the projection).
	stem := 2 * 400 * 672 * 64 * 3 * 49.0
	layer1 := 2 * 200 * 336 * (64*64 + 64*64*9 + 64*256 + 64*256 + 2*(256*64+64*64*9+64*256.0))
	if e := relErr(frozen, stem+layer1); e > 1e-12 {
		t.Errorf("maskrcnn-r50-fpn: frozen forward FLOPs %.6g, closed form %.6g", frozen, stem+layer1)
	}
	want := 2*(matrixFLOPs(ops, Forward)-frozen) - c2
	if e := relErr(matrixFLOPs(ops, Backward), want); e > 1e-12 {
		t.Errorf("maskrcnn-r50-fpn: backward matrix FLOPs %.6g, want %.6g", matrixFLOPs(ops, Backward), want)
	}
}

// TestOpsScaling checks that the passes' FLOPs and the bytes kept scale
// with the batch while the update does not, and that a convnet's
// convolutions scale as the resolution squared when every stride divides
// it (ResNet-50 at 224 and 448; EfficientNet-B4 at 256 and 512).
func TestOpsScaling(t *testing.T) {
	for _, name := range OpModels() {
		one, four := Totals(opsOf(t, name, Shape{Batch: 1})), Totals(opsOf(t, name, Shape{Batch: 4}))
		if relErr(four.Forward, 4*one.Forward) > 1e-12 || relErr(four.Backward, 4*one.Backward) > 1e-12 || relErr(float64(four.Saved), 4*float64(one.Saved)) > 1e-12 {
			t.Errorf("%s: batch 4 forward %g, backward %g, saved %v; want 4 × %g, %g, %v", name, four.Forward, four.Backward, four.Saved, one.Forward, one.Backward, one.Saved)
		}
		if four.Step != one.Step || four.Params != one.Params {
			t.Errorf("%s: update %g FLOPs at batch 4, %g at 1: want equal", name, four.Step, one.Step)
		}
	}
	// The squeeze-and-excitation convolutions run on pooled 1×1 maps and
	// stay, as the classifier does.
	conv := func(ops []Op) (spatial, fixed float64) {
		for _, o := range ops {
			switch {
			case o.Kind == MatMul || o.Kind == Conv && strings.Contains(o.Name, ".se."):
				fixed += o.FLOPs
			case o.Kind == Conv || o.Kind == GroupedConv:
				spatial += o.FLOPs
			}
		}
		return spatial, fixed
	}
	for _, c := range []struct {
		model string
		r     int
	}{{"resnet50", 224}, {"efficientnet-b4", 256}} {
		lo, lf := conv(opsOf(t, c.model, Shape{Batch: 1, Resolution: c.r}))
		hi, hf := conv(opsOf(t, c.model, Shape{Batch: 1, Resolution: 2 * c.r}))
		if e := relErr(hi, 4*lo); e > 1e-12 || lf != hf || lf == 0 {
			t.Errorf("%s: convolutions %g at %d, %g at %d (want 4×); classifier and gates %g and %g (want equal)", c.model, lo, c.r, hi, 2*c.r, lf, hf)
		}
	}
}

// TestOpsFigures checks every operator of every model at two precisions
// and batches: finite, non-negative figures; matrix operators with their
// product's dimensions (2·M·N·K·Groups = FLOPs forward); parameters and
// kept bytes on forward operators only; unique names.
func TestOpsFigures(t *testing.T) {
	for _, name := range OpModels() {
		for _, s := range []Shape{{Batch: 1}, {Batch: 3, Precision: BF16}} {
			seen := map[string]bool{}
			for _, o := range opsOf(t, name, s) {
				for _, v := range []float64{o.FLOPs, float64(o.Read), float64(o.Write), float64(o.Saved), float64(o.Params), float64(o.M), float64(o.N), float64(o.K), float64(o.Groups)} {
					if !(v >= 0) || math.IsInf(v, 0) {
						t.Errorf("%s %s: figure %g", name, o.Name, v)
					}
				}
				if seen[o.Name] {
					t.Errorf("%s: two operators named %s", name, o.Name)
				}
				seen[o.Name] = true
				if o.Pass != Forward && (o.Params != 0 || o.Saved != 0) {
					t.Errorf("%s %s: %s operator with params %d, saved %v", name, o.Name, o.Pass, o.Params, o.Saved)
				}
				matrix := o.Kind == Conv || o.Kind == GroupedConv || o.Kind == MatMul
				if matrix && (o.M < 1 || o.N < 1 || o.K < 1 || o.Groups < 1) {
					t.Errorf("%s %s: product %d×%d×%d in %d groups", name, o.Name, o.M, o.N, o.K, o.Groups)
				}
				if matrix && o.Pass == Forward && relErr(o.FLOPs, 2*float64(o.M*o.N*o.K*o.Groups)) > 1e-12 {
					t.Errorf("%s %s: %g FLOPs, product %d×%d×%d×%d", name, o.Name, o.FLOPs, o.M, o.N, o.K, o.Groups)
				}
				if o.Kind == GroupedConv && o.Groups < 2 {
					t.Errorf("%s %s: grouped convolution of %d group", name, o.Name, o.Groups)
				}
			}
		}
	}
}

// TestOpsUpdate checks momentum SGD's update against its closed form: 6
// FLOPs per parameter and, per parameter, gradient + 2 × fp32 weight + 2
// × fp32 momentum bytes, plus the low-precision copy's under mixed
// precision: 20 bytes at fp32 (4 + 8 + 8) and at bf16 (2 + 8 + 8 + 2).
func TestOpsUpdate(t *testing.T) {
	// The vision and engine models train with momentum SGD; the sequence
	// models' Adam is checked in ops_seq_test.go.
	for _, name := range []string{"resnet50", "ssd-resnet34", "maskrcnn-r50-fpn", "efficientnet-b4", "mlp", "cnn"} {
		for _, p := range []Precision{FP32, BF16} {
			ops := opsOf(t, name, Shape{Batch: 2, Precision: p})
			tot := Totals(ops)
			var bytes float64
			for _, o := range ops {
				if o.Pass == UpdatePass {
					bytes += float64(o.Read + o.Write)
				}
			}
			if relErr(tot.Step, 6*float64(tot.Params)) > 1e-12 || relErr(bytes, 20*float64(tot.Params)) > 1e-12 {
				t.Errorf("%s %s: update %g FLOPs, %g bytes for %d parameters; want 6 and 20 per parameter", name, p, tot.Step, bytes, tot.Params)
			}
		}
	}
}

// TestEngineOpsKept checks the bytes the engine's models keep for the
// backward pass against a count by hand (fp32, one sample). MLP: the
// input (784), each ReLU's output (2 × 1024), the log-softmax's (10).
// CNN: the input (784), ReLU 1's output (26·26·32), the max-pool's input
// (24·24·64) and int64 indices (12·12·64 × 8 bytes), ReLU 2's and 3's
// outputs (9,216 and 128), the log-softmax's (10).
func TestEngineOpsKept(t *testing.T) {
	for _, c := range []struct {
		model string
		want  float64
	}{
		{"mlp", 4 * (784 + 2*1024 + 10)},
		{"cnn", 4*(784+26*26*32+24*24*64+9216+128+10) + 8*12*12*64},
	} {
		if got := float64(Totals(opsOf(t, c.model, Shape{Batch: 1})).Saved); got != c.want {
			t.Errorf("%s keeps %g bytes per sample, want %g", c.model, got, c.want)
		}
	}
	// torchbench's CNN takes the ReLU before the pool: the pool's input is
	// ReLU 2's output, kept once, and the dense layer keeps the pool's
	// output, so the same bytes.
	if a, b := Totals(opsOf(t, "cnn", Shape{Batch: 1})).Saved, Totals(opsOf(t, "cnn", Shape{Batch: 1, Framework: "torch 2.11.0"})).Saved; a != b {
		t.Errorf("cnn keeps %v per sample as the engine runs it, %v as torchbench does", a, b)
	}
	// Without pools or dropout, half precision keeps half the bytes.
	if a, b := Totals(opsOf(t, "mlp", Shape{Batch: 1})).Saved, Totals(opsOf(t, "mlp", Shape{Batch: 1, Precision: FP16})).Saved; b != a/2 {
		t.Errorf("mlp keeps %v in fp16, %v in fp32", b, a)
	}
}

// TestTorchbenchCNNOrder checks the order of the CNN's second ReLU and
// its pool: after the pool in the engine (12·12·64 values a sample in,
// as many out), before it in engine/torchbench's nn.Sequential (24·24·64).
func TestTorchbenchCNNOrder(t *testing.T) {
	for _, c := range []struct {
		framework string
		values    int64
		before    string
	}{
		{"scaleplan engine go1.26", 12 * 12 * 64, "pool"},
		{"torch 2.11.0+cu130 torchvision 0.26.0+cu130", 24 * 24 * 64, "relu2"},
	} {
		ops := opsOf(t, "cnn", Shape{Batch: 1, Framework: c.framework})
		var order []string
		for _, o := range ops {
			if o.Pass != Forward {
				continue
			}
			switch o.Name {
			case "relu2":
				if got := int64(o.Read); got != 4*c.values {
					t.Errorf("%s: relu2 reads %d bytes, want %d", c.framework, got, 4*c.values)
				}
				order = append(order, o.Name)
			case "pool":
				order = append(order, o.Name)
			}
		}
		if len(order) != 2 || order[0] != c.before {
			t.Errorf("%s: forward order %v, want %s first", c.framework, order, c.before)
		}
	}
}

// TestSSDAnchors checks the classification loss's rows: 8732 anchors per
// image at 300×300 (ssd300.py: "output 8732 per class bounding boxes"),
// and the feature maps 38, 19, 10, 5, 3, 1.
func TestSSDAnchors(t *testing.T) {
	_, maps := ssdLayout(300)
	if want := []int{38, 19, 10, 5, 3, 1}; !slices.Equal(maps, want) {
		t.Fatalf("closed-form SSD maps %v, want %v", maps, want)
	}
	for _, o := range opsOf(t, "ssd-resnet34", Shape{Batch: 2}) {
		if o.Name == "conf_loss.log_softmax" && o.FLOPs != flopsSoftmaxFwd*2*8732*81 {
			t.Errorf("log-softmax over %g values, want 2 images × 8732 anchors × 81 classes", o.FLOPs/flopsSoftmaxFwd)
		}
	}
}

// TestVisionOpsErrors checks the shapes the generators refuse, and that
// every resolution they take gives operators.
func TestVisionOpsErrors(t *testing.T) {
	for _, c := range []struct {
		model string
		s     Shape
		msg   string
	}{
		{"resnet50", Shape{Batch: 1, Resolution: 16}, "model resnet50: resolution 16: want 0 (the default, 224) or 32 to 32768 pixels"},
		{"efficientnet-b4", Shape{Batch: 1, Resolution: 1 << 16}, "resolution 65536"},
		{"ssd-resnet34", Shape{Batch: 1, Resolution: 200}, "resolution 200 leaves no pixel for feature map 5"},
		{"maskrcnn-r50-fpn", Shape{Batch: 1 << 21}, "batch 2097152: want at most 1048576"},
		{"cnn", Shape{Batch: 1, Resolution: 32}, "model cnn: resolution 32: the engine's models take 28×28 images"},
		{"mlp", Shape{Batch: 1, Resolution: 1}, "model mlp: resolution 1"},
	} {
		_, err := Ops(c.model, c.s)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Ops(%s, %+v): %v; want %q", c.model, c.s, err, c.msg)
		}
	}
	// SSD's smallest input: feature map 5 needs 5×5 at feature map 3.
	for r := 64; r <= 400; r++ {
		_, maps := ssdLayout(r)
		_, err := Ops("ssd-resnet34", Shape{Batch: 1, Resolution: r})
		if (err == nil) != (maps[5] >= 1) {
			t.Errorf("ssd-resnet34 at %d: maps %v, error %v", r, maps, err)
		}
	}
	for _, name := range []string{"resnet50", "efficientnet-b4", "maskrcnn-r50-fpn"} {
		for r := 32; r < 300; r += 13 {
			if _, err := Ops(name, Shape{Batch: 1, Resolution: r}); err != nil && r >= 64 {
				t.Errorf("%s at %d: %v", name, r, err)
			}
		}
	}
}

// BenchmarkResNet50Ops measures generating ResNet-50's step.
func BenchmarkResNet50Ops(b *testing.B) {
	for b.Loop() {
		if _, err := Ops("resnet50", Shape{Batch: 256, Precision: FP16}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMaskRCNNSyncs counts the host's waits in a Mask R-CNN step against
// a tally of DeepLearningExamples' maskrcnn_benchmark (at 729963dd) by
// file: per image, 4 at each of the 5 RPN levels (two masked_select, NMS's
// cudaMemcpy of its mask and the kept indices' copy back), 2 in the
// levels' selection (boolean indexing of boxes and scores), 3 in the RPN
// loss (the matcher's low-quality torch.nonzero, the sampler's two), 3 in
// the box head's sampling (the sampler's two and the sampled indices'), 1
// in keep_only_positive_boxes, 4 in the mask targets (torch.nonzero and
// three .cuda() copies) and 2 per positive RoI (SegmentationMask indexed
// by iterating a CUDA tensor, twice) of the 128; per batch, 5 image-size
// copies (one per level), 2 in the RPN loss, 2 in the box loss, 4 per
// pooler (box and mask) and 1 in the mask loss.
func TestMaskRCNNSyncs(t *testing.T) {
	perImage := 5*4 + 2 + 3 + 3 + 1 + 4 + 2*128
	perBatch := 5 + 2 + 2 + 2*4 + 1
	for _, b := range []int{1, 2, 12} {
		ops := opsOf(t, "maskrcnn-r50-fpn", Shape{Batch: b})
		if got, want := Syncs(ops), perImage*b+perBatch; got != want {
			t.Errorf("batch %d: %d syncs, want %d", b, got, want)
		}
		for _, o := range ops {
			if o.Sync && (!o.Untracked || o.Pass != Forward || o.Params != 0 || o.FLOPs != 0) {
				t.Errorf("batch %d: %s: a sync must be an untracked forward call without parameters or FLOPs", b, o.Name)
			}
		}
	}
	for _, name := range []string{"resnet50", "efficientnet-b4", "transformer-base"} {
		if n := Syncs(opsOf(t, name, Shape{Batch: 2})); n != 0 {
			t.Errorf("%s: %d syncs, want 0", name, n)
		}
	}
}

// TestEfficientNetDropPath checks stochastic depth on EfficientNet-B4's
// residual blocks: B4 repeats the B0 stages ⌈1.8·(1, 2, 2, 3, 3, 4, 1)⌉ =
// (2, 4, 4, 6, 6, 8, 2) times, 32 blocks, of which all but each stage's
// first (7) keep their shape: 25 masks, and 25 gradient passes each
// reading and writing the block's output once.
func TestEfficientNetDropPath(t *testing.T) {
	ops := opsOf(t, "efficientnet-b4", Shape{Batch: 2, Precision: FP16})
	masks, grads := 0, 0
	for _, o := range ops {
		switch {
		case strings.HasSuffix(o.Name, ".add.mask"):
			masks++
			if !o.Untracked || o.Pass != Forward {
				t.Errorf("%s: want an untracked forward call", o.Name)
			}
		case strings.HasSuffix(o.Name, ".add.grad"):
			grads++
			if o.Read != o.Write || o.Read <= 0 {
				t.Errorf("%s: read %v, write %v: want one pass over the output", o.Name, o.Read, o.Write)
			}
		case o.Name == "dropout":
			if !o.Random {
				t.Errorf("%s: the classifier's dropout draws its mask as it runs (Op.Random)", o.Name)
			}
		}
	}
	if masks != 25 || grads != 25 {
		t.Errorf("masks %d, gradient passes %d: want 25 each", masks, grads)
	}
	// torchvision's StochasticDepth: a noise per sample, the product with
	// it, a broadcast pass each way, and the residual sum apart.
	noises, drops, sums := 0, 0, 0
	for _, o := range opsOf(t, "efficientnet-b4", Shape{Batch: 2, Precision: FP16, Framework: "torchvision"}) {
		switch {
		case strings.HasSuffix(o.Name, ".add.noise"):
			noises++
			if !o.Untracked || o.Pass != Forward || o.KernelCount() != 2 {
				t.Errorf("%s: want two untracked forward kernels", o.Name)
			}
		case strings.HasSuffix(o.Name, ".add.drop"), strings.HasSuffix(o.Name, ".add.drop.grad"):
			drops++
			if !o.Broadcast {
				t.Errorf("%s: the noise is broadcast over each sample's values", o.Name)
			}
		case strings.HasSuffix(o.Name, ".add"):
			sums++
		case strings.HasSuffix(o.Name, ".add.mask"), strings.HasSuffix(o.Name, ".add.grad"):
			t.Errorf("%s: DeepLearningExamples' drop path in torchvision's program", o.Name)
		}
	}
	if noises != 25 || drops != 50 || sums != 25 {
		t.Errorf("torchvision: %d noises, %d products, %d sums: want 25, 50, 25", noises, drops, sums)
	}
}

// TestMBConvBlockCounts checks one MBConv block of EfficientNet-B4 against
// a hand count of its kernels and bytes as PyTorch runs them: blocks.3,
// the second block of the B0 stage (k 3, expand 6, 24 channels), at
// 95×95 with 32 channels in and out (round_filters(24) at width 1.4),
// 192 expanded and 8 squeezed (a quarter of 32). With E = n·32·95² and
// M = n·192·95² values, the forward pass moves 8E + 17M + 1,584n +
// 18,122 values in 18 kernels: the expansion (E in, 6,144 weights, M
// out), its batch norm (2M in: statistics and normalisation, 384
// parameters, M out), SiLU (2M), the depthwise convolution (2M, 1,728
// weights), its norm (3M + 384) and SiLU (2M), the pool (M + 192n), the
// squeeze and excitation's two 1×1 convolutions (200n + 1,536 each) with
// a bias kernel each (16n + 8 and 384n + 192), their SiLU (16n) and
// sigmoid (384n), the scale (2M + 192n), the projection (M + 6,144 + E),
// its norm (3E + 64), the drop-path mask (2) and the residual addcmul
// (3E). The backward pass moves 14E + 34M + 1,984n + 36,040 values in 26
// kernels (24 operators): two batch-norm gradients of 5M + 768 (dy and x read twice),
// one of 5E + 128, the scale's 6M + 384n in 3 kernels (dx = dy·s, dy·x,
// its sum over the pixels), the bias gradients' sums (8n + 8, 192n +
// 192), and each layer's input and weight gradients. Broadcast inputs
// (Op.Broadcast): the factor s over the pixels in the forward product
// and in dx = dy·s, 2M + 192n values each, the squeeze and
// excitation's two biases over the batch, 16n + 8 and 384n + 192, and
// the 0-d drop-path mask in the addcmul (3E) and in its gradient (2E).
//
// torchvision's program (Shape.Framework naming torchvision) draws a
// noise of n values instead of the 0-d mask (bernoulli_ and div_: n in,
// 2n out, 2 kernels), multiplies the output by it (E + n in, E out,
// broadcast) and adds the input in a kernel of its own (3E): 2E + 4n − 2
// more values and 2 more kernels forward; backward its product's gradient
// reads the noise too (n more values, 2E + n broadcast).
func TestMBConvBlockCounts(t *testing.T) {
	const n, size = 2, 2 // batch, fp16 bytes
	const e, m = n * 32 * 95 * 95, n * 192 * 95 * 95
	for _, c := range []struct {
		framework  string
		fwd, bwd   int // values
		kfwd       int // forward kernels
		bfwd, bbwd int // broadcast values
	}{
		{"", 8*e + 17*m + 1584*n + 18122, 14*e + 34*m + 1984*n + 36040, 18,
			2*m + 192*n + 16*n + 8 + 384*n + 192 + 3*e, 2*m + 192*n + 2*e},
		{"torch 2.11.0 torchvision 0.26.0", 10*e + 17*m + 1588*n + 18120, 14*e + 34*m + 1985*n + 36040, 20,
			2*m + 192*n + 16*n + 8 + 384*n + 192 + 2*e + n, 2*m + 192*n + 2*e + n},
	} {
		want := map[Pass]struct{ values, kernels int }{
			Forward:  {c.fwd, c.kfwd},
			Backward: {c.bwd, 26},
		}
		wantB := map[Pass]int{Forward: c.bfwd, Backward: c.bbwd}
		got := map[Pass]struct{ values, kernels int }{}
		broadcast := map[Pass]int{}
		for _, o := range opsOf(t, "efficientnet-b4", Shape{Batch: n, Precision: FP16, Framework: c.framework}) {
			if !strings.HasPrefix(o.Name, "blocks.3.") || o.Pass == UpdatePass {
				continue
			}
			if o.Broadcast {
				broadcast[o.Pass] += int(o.Read+o.Write) / size
			}
			g := got[o.Pass]
			g.values += int(o.Read+o.Write) / size
			g.kernels += o.KernelCount()
			got[o.Pass] = g
		}
		for p, w := range want {
			if got[p] != w {
				t.Errorf("%q: blocks.3 %s: %d values in %d kernels, hand count %d in %d", c.framework, p, got[p].values, got[p].kernels, w.values, w.kernels)
			}
			if b := broadcast[p]; b != wantB[p] {
				t.Errorf("%q: blocks.3 %s: %d values read or written by broadcast kernels, hand count %d", c.framework, p, b, wantB[p])
			}
		}
	}
}

// TestConvKernelStride checks the kernel and stride each convolution of
// ResNet-50 carries against torchvision's resnet50 (v1.5: a 7×7 stride-2
// stem; in each of the 16 bottlenecks a 3×3 convolution, of stride 2 in
// the first block of layer2, layer3 and layer4, between two 1×1 ones; a
// 1×1 downsample in each layer's first block, of stride 2 but in layer1),
// and the output extent, on the forward operator and both backward ones,
// and only the weight gradient marked GradWeight.
func TestConvKernelStride(t *testing.T) {
	ops := opsOf(t, "resnet50", Shape{Batch: 2})
	type ks struct{ k, s int }
	want := map[ks]int{{7, 2}: 1, {3, 1}: 13, {3, 2}: 3, {1, 1}: 16*2 + 1, {1, 2}: 3}
	got := map[ks]int{}
	for _, o := range ops {
		if o.Kind != Conv {
			if o.Kernel != 0 || o.Stride != 0 || o.GradWeight {
				t.Errorf("%s (%s): kernel %d, stride %d, grad weight %v; want none", o.Name, o.Kind, o.Kernel, o.Stride, o.GradWeight)
			}
			continue
		}
		gw := strings.HasSuffix(o.Name, ".grad_weight")
		if o.GradWeight != gw {
			t.Errorf("%s: GradWeight %v, want %v", o.Name, o.GradWeight, gw)
		}
		if o.Pass == Forward {
			got[ks{o.Kernel, o.Stride}]++
		}
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%d×%d stride-%d forward convolutions: %d, want %d", k.k, k.k, k.s, got[k], n)
		}
	}
	byName := map[string]Op{}
	for _, o := range ops {
		byName[o.Name] = o
	}
	for _, o := range ops {
		if o.Pass != Backward || o.Kind != Conv {
			continue
		}
		base := strings.TrimSuffix(strings.TrimSuffix(o.Name, ".grad_weight"), ".grad_input")
		f := byName[base]
		if o.Kernel != f.Kernel || o.Stride != f.Stride || o.OutH != f.OutH || o.OutW != f.OutW {
			t.Errorf("%s: kernel %d stride %d output %d×%d, forward %s's %d, %d, %d×%d", o.Name,
				o.Kernel, o.Stride, o.OutH, o.OutW, base, f.Kernel, f.Stride, f.OutH, f.OutW)
		}
	}
	// At 224×224: the stem's output 112×112 (stride 2), layer1's 56×56
	// after the max pool, halved by each later layer's first block.
	for name, hw := range map[string]int64{"conv1": 112, "layer1.0.conv2": 56, "layer2.1.conv2": 28,
		"layer3.0.conv2": 14, "layer4.2.conv2": 7} {
		if o := byName[name]; o.OutH != hw || o.OutW != hw {
			t.Errorf("%s: output %d×%d, want %d×%d", name, o.OutH, o.OutW, hw, hw)
		}
	}
}

// TestMaskRoIs checks Shape.MaskRoIs: Mask R-CNN's mask head runs on that
// many positive RoIs an image, so its products scale with them, 8 against
// the default 128 (a quarter of the box head's 512, at most 512), and
// nothing else of the network changes.
func TestMaskRoIs(t *testing.T) {
	head := func(s Shape) (mask, rest float64) {
		ops, err := Ops("maskrcnn-r50-fpn", s)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range ops {
			if o.Kind != Conv && o.Kind != MatMul {
				continue
			}
			if strings.Contains(o.Name, "mask_head") || strings.Contains(o.Name, "mask_predictor") {
				mask += o.FLOPs
			} else {
				rest += o.FLOPs
			}
		}
		return mask, rest
	}
	for _, fw := range []string{"", "torch 2.11.0 torchvision 0.26.0"} {
		m128, r128 := head(Shape{Batch: 2, Framework: fw})
		m8, r8 := head(Shape{Batch: 2, Framework: fw, MaskRoIs: 8})
		mMax, _ := head(Shape{Batch: 2, Framework: fw, MaskRoIs: 4096})
		m512, _ := head(Shape{Batch: 2, Framework: fw, MaskRoIs: 512})
		if !(m128 > 0) || relErr(m8, m128*8/128) > 1e-12 || r8 != r128 || mMax != m512 {
			t.Errorf("framework %q: mask head %v FLOPs at 128 RoIs, %v at 8 (want 1/16), rest %v and %v (want equal), %v past 512 (want 512's %v)", fw, m128, m8, r128, r8, mMax, m512)
		}
	}
}

// TestFuseBNReLU checks resnet50's fused batch norms (Shape.FuseBNReLU)
// against its unfused list: the ReLUs and residual adds are gone (the
// stem's and two a block's ReLU fused with their norm, a block's last
// norm with the add and ReLU: 16 blocks, 65 forward and 49 backward
// operators fewer), the FLOPs, parameters and bytes kept are the same,
// and the bytes moved fall by what the fused kernels do not read and
// write: for a norm and ReLU of output y, the ReLU's pass forward (read
// and write y) and backward (read dy, write dx), less the norm's read of
// y for the ReLU's sign; for a norm, add and ReLU, the add's and ReLU's
// passes forward (5y) less the addend's read, and backward the ReLU's
// (2y) less the reads of y and the addend's gradient's write.
func TestFuseBNReLU(t *testing.T) {
	plain := opsOf(t, "resnet50", Shape{Batch: 2, Precision: FP16})
	fused := opsOf(t, "resnet50", Shape{Batch: 2, Precision: FP16, FuseBNReLU: true})
	count := func(ops []Op, p Pass) int {
		n := 0
		for _, o := range ops {
			if o.Pass == p {
				n++
			}
		}
		return n
	}
	if d := count(plain, Forward) - count(fused, Forward); d != 65 {
		t.Errorf("forward operators %d fewer, want 65", d)
	}
	if d := count(plain, Backward) - count(fused, Backward); d != 49 {
		t.Errorf("backward operators %d fewer, want 49", d)
	}
	var want float64 // bytes the fusion saves, from the unfused ReLUs' outputs
	for _, o := range plain {
		if o.Pass != Forward || o.Kind != Elementwise || !strings.Contains(o.Name, "relu") {
			continue
		}
		y := float64(o.Write)
		if strings.HasSuffix(o.Name, ".relu3") {
			want += 4 * y // forward: add 3y + ReLU 2y − addend y; backward: −2y + y + y
		} else {
			want += 2*y + y // forward 2y; backward 2y − y
		}
	}
	sum := func(ops []Op) (flops, bytes, saved float64, params int64) {
		for _, o := range ops {
			flops += o.FLOPs
			bytes += float64(o.Read + o.Write)
			saved += float64(o.Saved)
			params += o.Params
		}
		return
	}
	pf, pb, ps, pp := sum(plain)
	ff, fb, fs, fp := sum(fused)
	if e := relErr(ff, pf); e > 1e-12 || pp != fp || fs != ps {
		t.Errorf("fused FLOPs %.6g, params %d, kept %.6g; unfused %.6g, %d, %.6g: want the same", ff, fp, fs, pf, pp, ps)
	}
	if e := relErr(pb-fb, want); e > 1e-12 {
		t.Errorf("bytes saved %.6g, want %.6g", pb-fb, want)
	}
	for _, o := range fused {
		if o.Kind == Elementwise && (strings.Contains(o.Name, "relu") || strings.HasSuffix(o.Name, ".add")) {
			t.Errorf("fused list has %s", o.Name)
		}
	}
}

// TestFuseBNReLUSSD checks ssd-resnet34's fused backbone norms
// (Shape.FuseBNReLU) against its unfused list: the stem's ReLU and, in
// each of the backbone's 13 basic blocks, the first norm's ReLU and the
// last norm's add and ReLU are gone (forward 1 + 13·3 = 40 operators
// fewer, backward 1 + 13·2 = 27, as resnet50's fusion counts them), and
// the FLOPs, parameters and bytes kept are the same.
func TestFuseBNReLUSSD(t *testing.T) {
	plain := opsOf(t, "ssd-resnet34", Shape{Batch: 2, Precision: FP16})
	fused := opsOf(t, "ssd-resnet34", Shape{Batch: 2, Precision: FP16, FuseBNReLU: true})
	sum := func(ops []Op) (fwd, bwd int, flops, saved float64, params int64) {
		for _, o := range ops {
			switch o.Pass {
			case Forward:
				fwd++
			case Backward:
				bwd++
			}
			flops += o.FLOPs
			saved += float64(o.Saved)
			params += o.Params
		}
		return
	}
	pf, pb, pfl, ps, pp := sum(plain)
	ff, fb, ffl, fs, fp := sum(fused)
	if pf-ff != 40 || pb-fb != 27 {
		t.Errorf("forward %d, backward %d operators fewer; want 40 and 27", pf-ff, pb-fb)
	}
	if relErr(ffl, pfl) > 1e-12 || fp != pp || fs != ps {
		t.Errorf("fused FLOPs %.6g, params %d, kept %.6g; unfused %.6g, %d, %.6g: want the same", ffl, fp, fs, pfl, pp, ps)
	}
}
