package model

import (
	"encoding/csv"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestTotals sums a hand-made list of operators.
func TestTotals(t *testing.T) {
	ops := []Op{
		{Name: "fc", Kind: MatMul, Pass: Forward, FLOPs: 2 * 4 * 3 * 5, Read: 100, Write: 20, Params: 15, Saved: 48, M: 4, N: 3, K: 5},
		{Name: "fc.grad", Kind: MatMul, Pass: Backward, FLOPs: 240, Read: 200, Write: 80},
		{Name: "relu", Kind: Elementwise, Pass: Forward, FLOPs: 12, Read: 48, Write: 48},
		{Name: "sgd", Kind: Update, Pass: UpdatePass, FLOPs: 30, Read: 120, Write: 60},
	}
	got := Totals(ops)
	if got.Params != 15 || got.Forward != 132 || got.Backward != 240 || got.Step != 30 || got.FLOPs != 402 {
		t.Errorf("totals %+v: want params 15, forward 132, backward 240, step 30, all 402", got)
	}
	if got.Bytes != 676 || got.Saved != 48 {
		t.Errorf("bytes %v, saved %v: want 676 and 48", got.Bytes, got.Saved)
	}
	if got.ByKind[MatMul] != 360 || got.ByKind[Elementwise] != 12 || got.ByKind[Update] != 30 {
		t.Errorf("by kind %v", got.ByKind)
	}
	if i := ops[0].Intensity(); i != 120.0/120 {
		t.Errorf("intensity %v: want 1", i)
	}
	if i := (&Op{FLOPs: 5}).Intensity(); i != 0 {
		t.Errorf("intensity without bytes %v: want 0", i)
	}
}

// TestOpsErrors checks the requests Ops refuses.
func TestOpsErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		s    Shape
		msg  string
	}{
		{"no-such-model", Shape{Batch: 1}, `no operator generator for model "no-such-model"`},
	} {
		_, err := Ops(c.name, c.s)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Ops(%q, %+v): %v; want %q", c.name, c.s, err, c.msg)
		}
	}
}

func TestParamTensors(t *testing.T) {
	for _, c := range []struct {
		op   Op
		want int
	}{
		{Op{Kind: Elementwise}, 0},
		{Op{Kind: Norm, Params: 128}, 2},
		{Op{Kind: MatMul, Params: 1024*10 + 10, K: 1024, N: 10, Groups: 1}, 2}, // a linear layer with a bias
		{Op{Kind: Conv, Params: 64 * 147, K: 147, N: 64, Groups: 1}, 1},        // a convolution without
		{Op{Kind: GroupedConv, Params: 32*9 + 32, K: 9, N: 1, Groups: 32}, 2},  // depthwise, 32 channels, biased
		{Op{Kind: Embedding, Params: 1000}, 1},
	} {
		if got := c.op.ParamTensors(); got != c.want {
			t.Errorf("%s of %d parameters: %d tensors, want %d", c.op.Kind, c.op.Params, got, c.want)
		}
	}
	// The engine's MLP: three linear layers with biases, six tensors.
	ops, err := Ops("mlp", Shape{Batch: 4})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range ops {
		n += ops[i].ParamTensors()
	}
	if n != 6 {
		t.Errorf("mlp: %d parameter tensors, want 6", n)
	}
}

// TestFloat32Ops checks which operators autocast runs in float32: the
// classifier's log-softmax and loss and their gradients, a transformer's
// layer norms and residual additions, fairseq's attention softmax and
// dropout; never a product or a batch norm.
func TestFloat32Ops(t *testing.T) {
	want := map[string]map[string]bool{
		"resnet50": {"loss.log_softmax": true, "loss.nll.grad": true, "bn1": false, "conv1": false, "layer1.0.add": false},
		"transformer-base": {"encoder.layers.0.self_attn_norm": true, "encoder.layers.0.self_attn.residual": true, "encoder.layers.0.self_attn.residual.grad": true, "encoder.layers.0.ffn.fc1": false, "encoder.layers.0.ffn.dropout": false,
			// The label-smoothed loss's log-softmax writes float32 itself
			// (dtype=torch.float32).
			"loss.log_softmax": false},
		// DeepLearningExamples' attention: softmax and dropout under autocast.
		"transformer-big": {"encoder.layers.0.self_attn.attention.softmax": true, "encoder.layers.0.self_attn.attention.dropout.grad": true,
			"encoder.layers.0.self_attn.attention": false},
		"gpt3-125m": {"loss": true, "layers.0.self_attn.attention": false},
	}
	for name, w := range want {
		ops, err := Ops(name, Shape{Batch: 2, Precision: FP16})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for i := range ops {
			if f, ok := w[ops[i].Name]; ok {
				seen[ops[i].Name] = true
				if ops[i].Float32 != f {
					t.Errorf("%s %s: Float32 %v, want %v", name, ops[i].Name, ops[i].Float32, f)
				}
			}
		}
		for op := range w {
			if !seen[op] {
				t.Errorf("%s: no operator %s", name, op)
			}
		}
	}
}

// TestOpsFLOPsMatchTorch checks the generators' products and convolutions
// against PyTorch's own count of them in engine/torchbench's networks
// (testdata/torch-flops.csv: torch.profiler's FLOPs over one training step
// of 2 samples): every matrix product and attention product of model.Ops,
// forward and backward, against torch's aten::mm, addmm, bmm and baddbmm;
// the forward convolutions, dense and grouped, against its aten::conv2d
// (torch does not count the backward's). Transformers run on 16 tokens a
// sample (transformer-base, profiled per token pair, 32 token pairs), the
// image models on 64×64 images. Each must be torch's within rounding.
func TestOpsFLOPsMatchTorch(t *testing.T) {
	f, err := os.Open("testdata/torch-flops.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comment = '#'
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		model       string
		batch, size int
	}
	products, convs := map[key]float64{}, map[key]float64{}
	for _, row := range rows[1:] {
		b, err1 := strconv.Atoi(row[1])
		n, err2 := strconv.Atoi(row[2])
		v, err3 := strconv.ParseFloat(row[4], 64)
		if err := errors.Join(err1, err2, err3); err != nil {
			t.Fatalf("row %v: %v", row, err)
		}
		k := key{row[0], b, n}
		if row[3] == "aten::conv2d" {
			convs[k] += v
		} else {
			products[k] += v
		}
	}
	if len(products) != 7 {
		t.Fatalf("%d models in the table, want 7", len(products))
	}
	for k, want := range products {
		s := Shape{Batch: k.batch}
		switch k.model {
		case "transformer-base":
			s.Batch, s.SeqLen = k.batch*k.size, k.size // token pairs
		case "gpt3-125m", "bert-base-squad":
			s.SeqLen = k.size
		default:
			s.Resolution = k.size
		}
		ops, err := Ops(k.model, s)
		if err != nil {
			t.Fatal(err)
		}
		var prod, conv float64
		for _, o := range ops {
			switch {
			case o.Kind == MatMul || o.Kind == Attention:
				prod += o.FLOPs
			case (o.Kind == Conv || o.Kind == GroupedConv) && o.Pass == Forward:
				conv += o.FLOPs
			}
		}
		if relErr(prod, want) > 1e-9 {
			t.Errorf("%s at %d × %d: products of %.0f FLOPs a step, torch counts %.0f", k.model, k.batch, k.size, prod, want)
		}
		if c := convs[k]; (c > 0 || conv > 0) && relErr(conv, c) > 1e-9 {
			t.Errorf("%s at %d × %d: forward convolutions of %.0f FLOPs, torch counts %.0f", k.model, k.batch, k.size, conv, c)
		}
	}
}
