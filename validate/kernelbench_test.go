package validate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"scaleplan/compute"
	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
)

// kbOp is one operator a KernelBench problem's forward runs, at the
// precision PyTorch's defaults give it: matrix products in fp32, cuDNN's
// convolutions in TF32.
type kbOp struct {
	op   model.Op
	prec hw.Precision
}

// kbMap is an elementwise map or a reduction over n float32 values that
// reads r and writes w values per input value.
func kbMap(kind model.OpKind, n, r, w float64) kbOp {
	return kbOp{model.Op{Kind: kind, FLOPs: n, Read: units.Bytes(4 * r * n), Write: units.Bytes(4 * w * n)}, hw.FP32}
}

// kbBatchNorm is a batch norm's forward pass over n float32 values, which
// reads them twice and writes them once (kbMap).
func kbBatchNorm(n float64) kbOp {
	o := kbMap(model.Norm, n, 2, 1)
	o.op.BatchNorm = true
	return o
}

// kbProduct is a float32 matrix product of batch products of m×k by k×n,
// its operands and result read and written once.
func kbProduct(batch, m, n, k int64) kbOp {
	return kbOp{model.Op{Kind: model.MatMul, FLOPs: 2 * float64(batch*m*n*k),
		Read: units.Bytes(4 * batch * (m*k + k*n)), Write: units.Bytes(4 * batch * m * n),
		M: m, N: n, K: k, Groups: batch}, hw.FP32}
}

// kbConv is a 2-D convolution of n images of c×h×w to cout channels with a
// square kernel k, stride s, padding pad and g groups, as the generators
// list one (model's convNet.conv): the implicit GEMM M = n·P·Q, N = cout/g,
// K = c/g·k², its input and weights read and its output written once.
func kbConv(n, c, h, w, cout, k, s, pad, g int64) kbOp {
	oh, ow := (h+2*pad-k)/s+1, (w+2*pad-k)/s+1
	kind := model.Conv
	if g > 1 {
		kind = model.GroupedConv
	}
	weights := cout * c / g * k * k
	pix := n * oh * ow
	return kbOp{model.Op{Kind: kind, FLOPs: 2 * float64(pix) * float64(weights),
		Read: units.Bytes(4 * (n*c*h*w + weights)), Write: units.Bytes(4 * n * cout * oh * ow),
		M: pix, N: cout / g, K: c / g * k * k, Groups: g, Kernel: int(k), Stride: int(s), OutH: oh, OutW: ow}, hw.TF32}
}

// kbActivations is the 4,096 × 393,216 values of the activation problems.
const kbActivations = 4096 * 393216

// kbReduced is the 128 × 4,096 × 4,095 values of the reductions over the
// middle dimension.
const kbReduced = 128 * 4096 * 4095

// kbProblems lists each problem's forward as the operator model takes it,
// read from its source (KernelBench/level1 at the CSV's commits; the shapes
// are the files' module-level figures, the defaults those of the module's
// constructor).
var kbProblems = map[string][]kbOp{
	"1":  {kbProduct(1, 4096, 4096, 4096)},
	"2":  {kbProduct(1, 2048, 4096, 8192)},
	"3":  {kbProduct(128, 512, 2048, 1024)}, // torch.bmm
	"4":  {kbProduct(1, 2048, 1, 1048576)},  // a matrix times a vector
	"5":  {kbMap(model.Elementwise, 65536*16384, 1, 1)},
	"6":  {kbProduct(1, 256, 256, 524288)},
	"7":  {kbProduct(1, 32768, 32768, 64)},
	"8":  {kbProduct(1, 8205, 5921, 2949)},
	"9":  {kbProduct(1, 32768, 32768, 32)},   // (M, N) by (N, M)
	"10": {kbProduct(1, 16*1024, 768, 2048)}, // (N, M, K) by (K, L), one product
	"16": {kbProduct(1, 2048, 4096, 8192)},   // A.T: a view, the same product
	"17": {kbProduct(1, 2048, 4096, 8192)},   // B.T
	"18": {kbProduct(1, 2048, 4096, 8192)},   // both
	"19": {kbMap(model.Elementwise, kbActivations, 1, 1)},
	"20": {kbMap(model.Elementwise, kbActivations, 1, 1)},
	"21": {kbMap(model.Elementwise, kbActivations, 1, 1)},
	"22": {kbMap(model.Elementwise, kbActivations, 1, 1)},
	"23": {kbMap(model.Softmax, kbActivations, 1, 1)},
	"24": {kbMap(model.Softmax, kbActivations, 1, 1)},
	// x * torch.sigmoid(x): the sigmoid, then the product of two tensors.
	"25": {kbMap(model.Elementwise, kbActivations, 1, 1), kbMap(model.Elementwise, kbActivations, 2, 1)},
	"26": {kbMap(model.Elementwise, kbActivations, 1, 1)},
	"27": {kbMap(model.Elementwise, kbActivations, 1, 1)},
	"28": {kbMap(model.Elementwise, kbActivations, 1, 1)},
	"29": {kbMap(model.Elementwise, kbActivations, 1, 1)},
	// x / (1 + torch.abs(x)): abs, add, divide.
	"30": {kbMap(model.Elementwise, kbActivations, 1, 1), kbMap(model.Elementwise, kbActivations, 1, 1), kbMap(model.Elementwise, kbActivations, 2, 1)},
	"31": {kbMap(model.Elementwise, kbActivations, 1, 1)},
	"32": {kbMap(model.Elementwise, kbActivations, 1, 1)},
	// nn.BatchNorm2d, nn.InstanceNorm2d and nn.GroupNorm in training mode
	// (a module's default) and nn.LayerNorm over the last three
	// dimensions: each output needs statistics over millions of values,
	// so the input is read twice, for them and to normalise, as the
	// generators count a batch norm (model's convNet.batchNorm). PyTorch
	// runs an instance norm as a batch norm of the input viewed as one
	// sample of n·c channels (aten/src/ATen/native/Normalization.cpp,
	// instance_norm): both are batch norms' kernels (kbBatchNorm); the
	// group and layer norms have kernels of their own, a layer norm's
	// forward kernel (compute.EffLayerNorm) for the operator model.
	"33": {kbBatchNorm(64 * 64 * 512 * 512)},
	"34": {kbBatchNorm(112 * 64 * 512 * 512)},
	"35": {kbMap(model.Norm, 112*64*512*512, 2, 1)},
	"40": {kbMap(model.Norm, 16*64*256*256, 2, 1)},
	// nn.MaxPool2d(4, stride 1, padding 1) of 32×64×512×512: 511×511 out.
	"42": {kbMap(model.Pool, 32*64*512*512, 1, 511.0*511/(512*512))},
	// nn.AvgPool2d(11) of 16×64×2048×2048, stride the kernel: 186×186 out.
	"45": {kbMap(model.Pool, 16*64*2048*2048, 1, 186.0*186/(2048*2048))},
	"47": {kbMap(model.Elementwise, kbReduced, 1, 1.0/4096)},
	"48": {kbMap(model.Elementwise, kbReduced, 1, 1.0/4096)},
	"49": {kbMap(model.Elementwise, kbReduced, 1, 1.0/4096)},
	"53": {kbMap(model.Elementwise, kbReduced, 1, 1.0/4096)},
	// AlexNet's first layer, nn.Conv2d(3, 96, 11, stride 4, padding 2)
	// with its bias (a kernel of its own after cuDNN's, as the generators'
	// biasAdd), on 256 images of 224×224.
	"50": {kbConv(256, 3, 224, 224, 96, 11, 4, 2, 1), kbMap(model.Elementwise, 256*96*55*55, 1, 1)},
	"55": {kbConv(8, 64, 512, 1024, 128, 3, 1, 0, 1)},
	"63": {kbConv(16, 16, 1024, 1024, 128, 3, 1, 0, 1)},
	"82": {kbConv(16, 64, 512, 512, 64, 3, 1, 0, 64)},
	"84": {kbConv(64, 128, 256, 512, 128, 3, 1, 0, 128)},
	// depthwise 3×3 (padding 1), then pointwise to 128 channels.
	"86": {kbConv(16, 64, 512, 512, 64, 3, 1, 1, 64), kbConv(16, 64, 512, 512, 128, 1, 1, 0, 1)},
	"87": {kbConv(16, 64, 1024, 1024, 128, 1, 1, 0, 1)},
}

// kbProblemsV01 lists the forwards of the problems of level1-v0.1.csv,
// at their first sizes (KernelBench/level1 at that file's commit).
var kbProblemsV01 = map[string][]kbOp{
	"1":  {kbProduct(1, 2048, 2048, 2048)},
	"2":  {kbProduct(1, 1024, 2048, 4096)},
	"3":  {kbProduct(128, 128, 512, 256)},
	"5":  {kbMap(model.Elementwise, 16384*4096, 1, 1)},
	"6":  {kbProduct(1, 256, 256, 131072)},
	"7":  {kbProduct(1, 16384, 16384, 32)},
	"8":  {kbProduct(1, 8205, 5921, 2949)},
	"9":  {kbProduct(1, 16384, 16384, 16)},
	"10": {kbProduct(1, 16*1024, 768, 2048)},
	"16": {kbProduct(1, 1024, 2048, 4096)},
	"17": {kbProduct(1, 1024, 2048, 4096)},
	"18": {kbProduct(1, 1024, 2048, 4096)},
	"33": {kbBatchNorm(16 * 64 * 256 * 256)},
	"34": {kbBatchNorm(16 * 64 * 256 * 256)},
	"35": {kbMap(model.Norm, 16*64*256*256, 2, 1)},
	"40": {kbMap(model.Norm, 16*64*256*256, 2, 1)},
	// nn.AvgPool2d(3) of 16×64×256×256: 85×85 out.
	"45": {kbMap(model.Pool, 16*64*256*256, 1, 85.0*85/(256*256))},
	"55": {kbConv(16, 3, 128, 256, 64, 3, 1, 0, 1)},
	"63": {kbConv(16, 3, 256, 256, 64, 3, 1, 0, 1)},
	// depthwise 3×3 without padding, then pointwise to 64 channels.
	"86": {kbConv(16, 3, 256, 256, 3, 3, 1, 0, 3), kbConv(16, 3, 254, 254, 64, 1, 1, 0, 1)},
	"87": {kbConv(16, 3, 256, 256, 64, 1, 1, 0, 1)},
}

// The minGPT block's sizes (KernelBench/level3/43 and 44): batch, tokens,
// width and heads.
const (
	kbGPTBatch, kbGPTTokens, kbGPTWidth, kbGPTHeads = 128, 512, 768, 8
)

// kbGPTAttention is minGPT's CausalSelfAttention.forward as eager PyTorch
// runs it at dropout 0 (at::dropout returns its input when p is 0): c_attn
// (addmm, its bias in cuBLASLt's epilogue); q and k^T copied by
// torch.matmul's reshape, their views not being foldable into one batch
// dimension; the score product; the scale; masked_fill as a clone and
// masked_fill_; softmax; v copied; the value product; the transpose's
// contiguous copy; c_proj. The mask's comparison (bias == 0, over 512 ×
// 512 values) is left out.
func kbGPTAttention() []kbOp {
	n := float64(kbGPTBatch * kbGPTTokens * kbGPTWidth) // values of x
	hs := int64(kbGPTWidth / kbGPTHeads)
	bh := int64(kbGPTBatch * kbGPTHeads)
	t := int64(kbGPTTokens)
	scores := float64(bh * t * t)
	tokens := int64(kbGPTBatch * kbGPTTokens)
	copyX := kbMap(model.Elementwise, n, 1, 1)
	return []kbOp{
		kbProduct(1, tokens, 3*kbGPTWidth, kbGPTWidth),
		copyX, copyX, // q, k
		kbProduct(bh, t, t, hs),
		kbMap(model.Elementwise, scores, 1, 1),       // × 1/√hs
		kbMap(model.Elementwise, scores, 1, 1),       // masked_fill's clone
		kbMap(model.Elementwise, scores, 1, 1),       // masked_fill_
		kbMap(model.Softmax, scores, 1, 1),           // rows of 512
		copyX,                                        // v
		kbProduct(bh, t, hs, t),                      // att @ v
		copyX,                                        // transpose(1, 2).contiguous()
		kbProduct(1, tokens, kbGPTWidth, kbGPTWidth), // c_proj
	}
}

// kbGPTBlock is minGPT's Block.forward: ln_1, the attention, the
// residual add, ln_2, c_fc, NewGELU as its eight kernels (pow, ×, +, ×,
// tanh, +, ×, ×: ten reads and eight writes of the 4·width activations),
// c_proj, the residual add.
func kbGPTBlock() []kbOp {
	n := float64(kbGPTBatch * kbGPTTokens * kbGPTWidth)
	tokens := int64(kbGPTBatch * kbGPTTokens)
	ops := []kbOp{kbMap(model.Norm, n, 1, 1)}
	ops = append(ops, kbGPTAttention()...)
	ops = append(ops,
		kbMap(model.Elementwise, n, 2, 1),
		kbMap(model.Norm, n, 1, 1),
		kbProduct(1, tokens, 4*kbGPTWidth, kbGPTWidth),
		kbMap(model.Elementwise, 4*n, 10, 8),
		kbProduct(1, tokens, kbGPTWidth, 4*kbGPTWidth),
		kbMap(model.Elementwise, n, 2, 1),
	)
	return ops
}

// kbSet is one CSV of KernelBench's times: its devices, in column order,
// and its problems' operators.
type kbSet struct {
	file     string
	devices  []string
	problems map[string][]kbOp
	kind     string // every row's kind on the page; empty: kbKind's
}

// kbSets are the three CSVs under testdata/measurements/kernelbench.
var kbSets = []kbSet{
	{"level1-h100.csv", []string{"h100-sxm5-80gb", "h100-pcie-80gb"}, kbProblems, ""},
	{"level1-v0.1.csv", []string{"a100-sxm4-40gb", "a100-sxm4-80gb", "t4"}, kbProblemsV01, ""},
	{"level3-gpt.csv", []string{"h100-sxm5-80gb", "h100-pcie-80gb", "a100-sxm4-40gb", "a100-sxm4-80gb", "t4"},
		map[string][]kbOp{"43": kbGPTAttention(), "44": kbGPTBlock()}, "GPT"},
}

// kbRow is one problem's measured and predicted times on each of its
// set's devices, milliseconds.
type kbRow struct {
	problem             string
	ops                 []kbOp
	measured, predicted []float64
}

// kbKind names a problem's row group on docs/validation-operators.md, by
// its first operator: a matrix product's K of at most 64 or N of 1
// (cuBLAS's matrix-vector case) apart, a grouped convolution as
// depthwise.
func kbKind(ops []kbOp) string {
	switch op := ops[0].op; op.Kind {
	case model.MatMul:
		if op.K <= 64 || op.N == 1 {
			return "matrix product, K ≤ 64 or one column"
		}
		return "matrix product"
	case model.Conv:
		return "convolution"
	case model.GroupedConv:
		return "depthwise convolution"
	case model.Elementwise:
		return "elementwise or reduction"
	case model.Softmax:
		return "softmax of rows of 393,216"
	default:
		return string(op.Kind)
	}
}

// kernelBench predicts each problem of set's CSV on its devices from the
// catalogue alone: the sum of its operators' device times
// (compute.OpTime) in eager PyTorch, NCHW; a convolution in TF32 where the
// device has TF32, else in fp32.
func kernelBench(t *testing.T, set kbSet) []kbRow {
	t.Helper()
	cat, _ := defaults(t)
	table := csvTable(t, "../testdata/measurements/kernelbench/"+set.file)
	header := []string{"problem"}
	for _, d := range set.devices {
		header = append(header, d+"_ms")
	}
	if got, want := strings.Join(table[0], ","), strings.Join(header, ","); got != want {
		t.Fatalf("%s: header %q, want %q", set.file, got, want)
	}
	var rows []kbRow
	seen := map[string]bool{}
	for _, rec := range table[1:] {
		id, _, _ := strings.Cut(rec[0], "_")
		ops, ok := set.problems[id]
		if !ok {
			t.Fatalf("%s: problem %s: no operators listed", set.file, rec[0])
		}
		seen[id] = true
		r := kbRow{problem: rec[0], ops: ops}
		for i, name := range set.devices {
			v, err := strconv.ParseFloat(rec[1+i], 64)
			if err != nil || !(v > 0) {
				t.Fatalf("%s: problem %s, %s: %q", set.file, rec[0], name, rec[1+i])
			}
			d := cat.DeviceCalled(name)
			var sum float64
			for _, o := range ops {
				prec := o.prec
				if prec == hw.TF32 && !(d.PeakFLOPs(hw.TF32) > 0) {
					prec = hw.FP32
				}
				c := compute.Config{Device: d, Precision: prec, Mode: compute.Eager, NCHW: true}
				op := o.op
				op.Pass = model.Forward
				tm, err := compute.OpTime(&c, &op)
				if err != nil {
					t.Fatal(err)
				}
				sum += float64(tm) / float64(units.Millisecond)
			}
			r.measured = append(r.measured, v)
			r.predicted = append(r.predicted, sum)
		}
		rows = append(rows, r)
	}
	for id := range set.problems {
		if !seen[id] {
			t.Errorf("%s: problem %s listed but not in the CSV", set.file, id)
		}
	}
	return rows
}

// TestKernelBenchOperators checks docs/validation-operators.md: for each
// CSV, its table of problems, each measured time against the operator
// model's from the catalogue alone on every device, and the mean |error|
// per kind of problem and over all of them; and the figures its text
// quotes. Run with -v to print the page's lines.
func TestKernelBenchOperators(t *testing.T) {
	say := docSay(t, "validation-operators.md")
	rowsOf := map[string][]kbRow{}
	for _, set := range kbSets {
		rows := kernelBench(t, set)
		rowsOf[set.file] = rows
		n := len(set.devices)
		type acc struct {
			sum []float64
			n   int
		}
		kinds := map[string]*acc{}
		var order []string
		all := &acc{sum: make([]float64, n)}
		for _, r := range rows {
			kind := cmp.Or(set.kind, kbKind(r.ops))
			a := kinds[kind]
			if a == nil {
				a = &acc{sum: make([]float64, n)}
				kinds[kind] = a
				order = append(order, kind)
			}
			line := fmt.Sprintf("| `%s` | %s |", r.problem, kind)
			for i := range set.devices {
				e := r.predicted[i]/r.measured[i] - 1
				a.sum[i] += math.Abs(e)
				all.sum[i] += math.Abs(e)
				line += fmt.Sprintf(" %.3g | %.3g | %s |", r.measured[i], r.predicted[i], signed(pct(e)))
			}
			a.n++
			all.n++
			say(line)
		}
		if len(order) > 1 {
			order = append(order, "all")
		}
		for _, kind := range order {
			a := kinds[kind]
			if kind == "all" {
				a = all
			}
			line := fmt.Sprintf("| %s | %d |", kind, a.n)
			for i := range set.devices {
				line += fmt.Sprintf(" %.1f %% |", pct(a.sum[i]/float64(a.n)))
			}
			say(line)
		}
	}
	// The GPT block on the H100 SXM5, as docs/validation-transformer.md
	// quotes it.
	for _, r := range rowsOf["level3-gpt.csv"] {
		if strings.HasPrefix(r.problem, "44_") {
			docQuote(t, "validation-transformer.md")(fmt.Sprintf("comes out %s on the H100 SXM5", signed(pct(r.predicted[0]/r.measured[0]-1))))
		}
	}
	// The bandwidth ReLU reaches on the H100s: 4,096 × 393,216 float32
	// values read and written, over the datasheet's.
	cat, _ := defaults(t)
	h100Devices := kbSets[0].devices
	for _, r := range rowsOf["level1-h100.csv"] {
		if r.problem != "19_ReLU" {
			continue
		}
		for i, name := range h100Devices {
			bw := 8 * kbActivations / (r.measured[i] * 1e-3)
			say(fmt.Sprintf("%s: %.2f TB/s, %.2f of", name, bw/1e12, bw/float64(cat.DeviceCalled(name).MemoryBandwidth)))
		}
	}
	// The quantisation of the A100's 1,024 × 2,048 products (problems 2,
	// 16, 17 and 18 of level1-v0.1.csv).
	q := compute.Quantisation(1024, 2048, 4096, 1, cat.DeviceCalled("a100-sxm4-40gb").SMs)
	say(fmt.Sprintf("quantisation gives them %.2f of the rate", q))
	// Problems 87 and 63 on the SXM5 without the model's NCHW transposes.
	sxm := cat.DeviceCalled(h100Devices[0])
	for _, id := range []string{"87", "63"} { // the page quotes them in this order
		op := kbProblems[id][0].op
		op.Pass = model.Forward
		tm, err := compute.OpTime(&compute.Config{Device: sxm, Precision: hw.TF32, Mode: compute.Eager}, &op)
		if err != nil {
			t.Fatal(err)
		}
		say(fmt.Sprintf("%.3g ms without the transposes", float64(tm)/float64(units.Millisecond)))
	}
}

// lstmRow is one DeepBench LSTM layer: measured and predicted milliseconds
// of its three calls (forward, backward of the inputs, backward of the
// weights).
type lstmRow struct {
	app                  string
	hidden, batch, steps int
	prec                 string
	measured, predicted  [3]float64
	kernels              [3]float64 // the kernels of each call's operators
}

// deepBenchLSTM predicts each row of testdata/measurements/deepbench/
// v100-lstm.csv from the catalogue alone: the device times
// (compute.OpTime) of model.LSTMRecurrence's operators, the forward ones
// for cudnnRNNForwardTraining, the input gradients and the gates'
// backward for cudnnRNNBackwardData, the weight gradients for
// cudnnRNNBackwardWeights; fp16 on the tensor cores, fp32 on the CUDA
// cores.
func deepBenchLSTM(t *testing.T) []lstmRow {
	t.Helper()
	cat, _ := defaults(t)
	d := cat.DeviceCalled("v100-sxm2-16gb")
	table := csvTable(t, "../testdata/measurements/deepbench/v100-lstm.csv")
	want := "application,hidden,batch,timesteps,precision,forward_ms,backward_inputs_ms,backward_weights_ms"
	if got := strings.Join(table[0], ","); got != want {
		t.Fatalf("v100-lstm.csv: header %q, want %q", got, want)
	}
	var rows []lstmRow
	for _, rec := range table[1:] {
		r := lstmRow{app: rec[0], prec: rec[4]}
		var err error
		for i, p := range []*int{&r.hidden, &r.batch, &r.steps} {
			if *p, err = strconv.Atoi(rec[1+i]); err != nil {
				t.Fatal(err)
			}
		}
		for i := range r.measured {
			if r.measured[i], err = strconv.ParseFloat(rec[5+i], 64); err != nil || !(r.measured[i] > 0) {
				t.Fatalf("v100-lstm.csv: %v: %q", rec, rec[5+i])
			}
		}
		prec := map[string]hw.Precision{"fp32": hw.FP32, "fp16": hw.FP16}[r.prec]
		ops, err := model.LSTMRecurrence(int64(r.hidden), r.batch, r.steps, model.Precision(prec))
		if err != nil {
			t.Fatal(err)
		}
		c := compute.Config{Device: d, Precision: prec}
		for i := range ops {
			tm, err := compute.OpTime(&c, &ops[i])
			if err != nil {
				t.Fatal(err)
			}
			k := 0
			switch {
			case strings.HasSuffix(ops[i].Name, ".grad_weight"):
				k = 2
			case ops[i].Pass == model.Backward:
				k = 1
			}
			r.predicted[k] += float64(tm) / float64(units.Millisecond)
			r.kernels[k] += float64(c.Kernels(&ops[i]))
		}
		rows = append(rows, r)
	}
	return rows
}

// TestDeepBenchLSTM checks docs/validation-operators.md ("cuDNN's LSTM on
// the V100"): each DeepBench layer's three calls measured against the
// operator model from the catalogue alone, the mean |error| of each call
// per precision, the range of the forward pass's time a step beyond the
// model in fp16, and the tile quantisation the model gives the fp32
// products of 16 rows. Run with -v to print the page's lines.
func TestDeepBenchLSTM(t *testing.T) {
	say := docSay(t, "validation-operators.md")
	type acc struct {
		sum [3]float64
		n   int
	}
	by := map[string]*acc{"fp32": {}, "fp16": {}}
	gapLo, gapHi := math.Inf(1), math.Inf(-1)
	fwdLo, fwdHi := math.Inf(1), math.Inf(-1)   // fp16 forward errors
	slowLo, slowHi := math.Inf(1), math.Inf(-1) // fp32 at batch ≤ 16, ≥ 1,536 units
	var step1024, big float64
	rows := deepBenchLSTM(t)
	for _, r := range rows {
		line := fmt.Sprintf("| %s | %d | %d | %d | %s |", r.app, r.hidden, r.batch, r.steps, r.prec)
		a := by[r.prec]
		for i := range r.measured {
			e := r.predicted[i]/r.measured[i] - 1
			a.sum[i] += math.Abs(e)
			line += fmt.Sprintf(" %.3g | %.3g | %s |", r.measured[i], r.predicted[i], signed(pct(e)))
		}
		a.n++
		say(line)
		switch {
		case r.prec == "fp16":
			gap := 1e3 * (r.measured[0] - r.predicted[0]) / float64(r.steps)
			gapLo, gapHi = math.Min(gapLo, gap), math.Max(gapHi, gap)
			e := r.predicted[0]/r.measured[0] - 1
			fwdLo, fwdHi = math.Min(fwdLo, e), math.Max(fwdHi, e)
			if r.hidden == 1024 && r.batch == 16 {
				step1024 = r.predicted[0]
			}
		case r.batch <= 16 && r.hidden >= 1536:
			x := r.predicted[0] / r.measured[0]
			slowLo, slowHi = math.Min(slowLo, x), math.Max(slowHi, x)
			if r.hidden == 4096 {
				big = r.measured[0]
			}
		}
	}
	for _, prec := range []string{"fp32", "fp16"} {
		a := by[prec]
		line := fmt.Sprintf("| %s | %d |", prec, a.n)
		for i := range a.sum {
			line += fmt.Sprintf(" %.1f %% |", pct(a.sum[i]/float64(a.n)))
		}
		say(line)
	}
	say(fmt.Sprintf("takes %.0f to %.0f µs a step more than the model in fp16", gapLo, gapHi))
	// A time per kernel fitted to the fp16 forward and data calls: the
	// least squares of ln((predicted + k·kernels)/measured), by ternary
	// search (the sum is convex in k), and their mean |error| without it
	// and with it.
	var fp16 []lstmRow
	for _, r := range rows {
		if r.prec == "fp16" {
			fp16 = append(fp16, r)
		}
	}
	mae := func(k float64) float64 {
		var sum float64
		for _, r := range fp16 {
			for i := range 2 {
				sum += math.Abs((r.predicted[i]+k*r.kernels[i])/r.measured[i] - 1)
			}
		}
		return sum / float64(2*len(fp16))
	}
	obj := func(k float64) (s float64) {
		for _, r := range fp16 {
			for i := range 2 {
				e := math.Log((r.predicted[i] + k*r.kernels[i]) / r.measured[i])
				s += e * e
			}
		}
		return s
	}
	lo, hi := 0.0, 0.2 // ms
	for range 200 {
		a, b := lo+(hi-lo)/3, hi-(hi-lo)/3
		if obj(a) < obj(b) {
			hi = b
		} else {
			lo = a
		}
	}
	k := (lo + hi) / 2
	say(fmt.Sprintf("a time of %.1f µs a kernel brings their mean |error| from %.1f %% to %.1f %%", 1e3*k, pct(mae(0)), pct(mae(k))))
	if got, want := math.Round(1e7*float64(compute.KernelTime))/10, math.Round(1e4*k)/10; got != want {
		t.Errorf("compute.KernelTime is %g µs, the fit to DeepBench's fp16 LSTM calls %g µs", got, want)
	}
	say(fmt.Sprintf("the model gives the forward step %.0f µs in all", 1e3*step1024/25))
	say(fmt.Sprintf("predicted too fast, by %.1f to %.1f %%", -pct(fwdHi), -pct(fwdLo)))
	say(fmt.Sprintf("the model takes %.1f to %.1f times the measured time", slowLo, slowHi))
	cat, _ := defaults(t)
	v100 := cat.DeviceCalled("v100-sxm2-16gb")
	q := compute.Quantisation(16, 4*4096, 4096, 1, v100.SMs)
	say(fmt.Sprintf("a tile quantisation of %.3f", q))
	w := 4 * 4096 * 4096 * 4.0 // fp32 weight_hh of 4,096 units
	say(fmt.Sprintf("reads the %.0f MB of weights in %.2f ms a step, %.2f of the V100's bandwidth",
		w/1e6, big/25, w/(big/25*1e-3)/float64(v100.MemoryBandwidth)))
}

// TestDeepBenchGEMM checks docs/validation-operators.md ("Matrix products
// on the V100"): each of DeepBench's V100 products timed as one operator
// of the model (compute.OpTime: its operands read and its result written
// once), fp16 on the tensor cores and fp32 on the CUDA cores, and the
// error per precision for products of at most 128 columns and of more:
// the mean |error|, the median error and the range. Run with -v to print
// every product.
func TestDeepBenchGEMM(t *testing.T) {
	cat, _ := defaults(t)
	d := cat.DeviceCalled("v100-sxm2-16gb")
	table := csvTable(t, "../testdata/measurements/deepbench/v100-gemm.csv")
	if got, want := strings.Join(table[0], ","), "application,m,n,k,a_transpose,b_transpose,precision,ms"; got != want {
		t.Fatalf("v100-gemm.csv: header %q, want %q", got, want)
	}
	groups := map[string][]float64{}
	for _, rec := range table[1:] {
		var dim [3]int64
		for i := range dim {
			v, err := strconv.ParseInt(rec[1+i], 10, 64)
			if err != nil || v < 1 {
				t.Fatalf("v100-gemm.csv: %v: %q", rec, rec[1+i])
			}
			dim[i] = v
		}
		ms, err := strconv.ParseFloat(rec[7], 64)
		if err != nil || !(ms > 0) {
			t.Fatalf("v100-gemm.csv: %v: %q", rec, rec[7])
		}
		prec, size := hw.FP32, 4.0
		if rec[6] == "fp16" {
			prec, size = hw.FP16, 2
		}
		m, n, k := dim[0], dim[1], dim[2]
		op := model.Op{Kind: model.MatMul, Pass: model.Forward, FLOPs: 2 * float64(m*n*k),
			Read: units.Bytes(size * float64(m*k+k*n)), Write: units.Bytes(size * float64(m*n)),
			M: m, N: n, K: k, Groups: 1}
		tm, err := compute.OpTime(&compute.Config{Device: d, Precision: prec}, &op)
		if err != nil {
			t.Fatal(err)
		}
		e := float64(tm)/(ms*float64(units.Millisecond)) - 1
		key := rec[6] + ", at most 128 columns"
		if n > 128 {
			key = rec[6] + ", more columns"
		}
		groups[key] = append(groups[key], e)
		t.Logf("%s %d×%d×%d %s%s %s: %g ms measured, %.3g predicted, %s", rec[0], m, n, k, rec[4], rec[5], rec[6], ms, float64(tm)/float64(units.Millisecond), signed(pct(e)))
	}
	say := docSay(t, "validation-operators.md")
	for _, key := range []string{"fp32, at most 128 columns", "fp32, more columns", "fp16, at most 128 columns", "fp16, more columns"} {
		say(fmt.Sprintf("| %s | %s |", key, errorCells(groups[key])))
	}
}

// errorCells returns relative errors' count, mean |error|, median and
// range as the cells of a docs table row.
func errorCells(e []float64) string {
	var sum float64
	for _, x := range e {
		sum += math.Abs(x)
	}
	return fmt.Sprintf("%d | %.1f %% | %s | %s to %s", len(e), pct(sum/float64(len(e))),
		signed(pct(median(e))), signed(pct(slices.Min(e))), signed(pct(slices.Max(e))))
}
