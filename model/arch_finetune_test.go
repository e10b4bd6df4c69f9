package model

import (
	"strconv"
	"strings"
	"testing"
)

// TestResNet18CIFARArchitecture rebuilds the CIFAR ResNet-18 of
// kuangliu/pytorch-cifar (a 3x3 stem of 64 channels without pooling, two
// BasicBlocks a stage at 64, 128, 256 and 512 channels on 32, 16, 8 and 4
// pixels, a 1x1 projection shortcut where the width changes, a 512x10
// classifier) and checks the profile's parameters, stage by stage, and
// forward FLOPs.
func TestResNet18CIFARArchitecture(t *testing.T) {
	m := defaultModel(t, "resnet18-cifar")
	want := map[string]int64{"conv1": 3 * 3 * 3 * 64, "bn1": 2 * 64, "linear": 512*10 + 10}
	macs := convMACs(32, 32, 3, 64, 3, 1) + 512*10
	h, cin := 32, 64
	for i, cout := range []int{64, 128, 256, 512} {
		stage := "layer" + strconv.Itoa(i+1)
		if cout != cin {
			h /= 2
			want[stage] += int64(cin*cout + 2*cout) // projection and its batch norm
			macs += convMACs(h, h, cin, cout, 1, 1)
		}
		want[stage] += int64(9*cin*cout+2*cout) + int64(9*cout*cout+2*cout) + 2*int64(9*cout*cout+2*cout)
		macs += convMACs(h, h, cin, cout, 3, 1) + 3*convMACs(h, h, cout, cout, 3, 1)
		cin = cout
	}
	got := sumsBy(m, func(n string) string { s, _, _ := strings.Cut(n, "."); return s })
	var total int64
	for k, v := range want {
		total += v
		if got[k] != v {
			t.Errorf("%s: profile %d parameters, architecture %d", k, got[k], v)
		}
	}
	if m.Params != total || total != 11173962 {
		t.Errorf("params %d, architecture %d, want 11173962", m.Params, total)
	}
	if f := float64(m.ForwardFLOPs); f != 2*float64(macs) || macs != 555422720 {
		t.Errorf("forward FLOPs %g, architecture 2 x %d multiply-adds", f, macs)
	}
}

// TestBERTSQuADArchitecture rebuilds BERT-base and BERT-large (Devlin
// et al. 2019: 12 layers, d 768, FFN 3072; 24 layers, d 1024, FFN 4096;
// the uncased vocabulary of 30,522, 512 positions, 2 segments) with the
// question-answering span head, a d×2 linear layer, and no pooler
// (transformers' BertForQuestionAnswering; DeepLearningExamples'
// run_squad.py leaves it out of the optimizer), and checks the profiles'
// parameters per layer, their totals (BERT-large's against the bert-large
// shape's BertModel, 335,141,888, less the pooler, d² + d, plus the head)
// and their forward FLOPs at 384 tokens.
func TestBERTSQuADArchitecture(t *testing.T) {
	const s = 384
	for _, tc := range []struct {
		name, shape  string
		d, f, layers int64
		total        int64
	}{
		{"bert-base-squad", "bert-base", 768, 3072, 12, 108893186},
		{"bert-large-squad", "bert-large", 1024, 4096, 24, 334094338},
	} {
		d, f, layers := tc.d, tc.f, tc.layers
		m := defaultModel(t, tc.name)
		layer := 4*(d*d+d) + 2*d + (d*f + f) + (f*d + d) + 2*d
		embed := (30522+512+2)*d + 2*d
		head := 2*d + 2
		got := sumsBy(m, bertPart)
		if got["embeddings"] != embed || got["qa_outputs"] != head || got["pooler"] != 0 {
			t.Errorf("%s: embeddings %d, head %d, pooler %d; architecture %d, %d and none", tc.name, got["embeddings"], got["qa_outputs"], got["pooler"], embed, head)
		}
		checkLayers(t, got, int(layers), layer)
		shape, err := LookupTransformer(tc.shape)
		if err != nil {
			t.Fatal(err)
		}
		total := embed + layers*layer + head
		if m.Params != total || total != shape.Params()-(d*d+d)+head || total != tc.total {
			t.Errorf("%s: params %d, architecture %d, want %d", tc.name, m.Params, total, tc.total)
		}
		macs := float64(s)*float64(layers*(4*d*d+2*d*f)+2*d) + float64(layers)*2*s*s*float64(d)
		if fl := float64(m.ForwardFLOPs); relErr(fl, 2*macs) > 1e-12 {
			t.Errorf("%s: forward FLOPs %g, architecture 2 x %g multiply-adds", tc.name, fl, macs)
		}
	}
}

// TestBERTLargePretrainingArchitecture rebuilds BERT-large (Devlin et al.
// 2019: 24 layers, d 1024, FFN 4096; the uncased vocabulary of 30,522,
// 512 positions, 2 segments, the pooler) with the pre-training heads of
// MLPerf's BERT (the masked-LM transform and its LayerNorm, the output
// bias over the vocabulary under the tied token table, the next-sentence
// classifier) and checks the profile's parameters per layer, the encoder's
// against the bert-large transformer shape's (BertModel's 335,141,888),
// and the forward FLOPs at 512 tokens with 76 masked-LM predictions.
func TestBERTLargePretrainingArchitecture(t *testing.T) {
	const d, f, layers, s, v, pred = 1024, 4096, 24, 512, 30522, 76
	m := defaultModel(t, "bert-large")
	layer := int64(4*(d*d+d) + 2*d + (d*f + f) + (f*d + d) + 2*d)
	embed := int64((v+512+2)*d + 2*d)
	got := sumsBy(m, bertPart)
	want := map[string]int64{"embeddings": embed, "pooler": d*d + d, "cls": (d*d + d + 2*d) + v + (2*d + 2)}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: profile %d parameters, architecture %d", k, got[k], w)
		}
	}
	checkLayers(t, got, layers, layer)
	shape, err := LookupTransformer("bert-large")
	if err != nil {
		t.Fatal(err)
	}
	encoder := embed + layers*layer + want["pooler"]
	if encoder != shape.Params() || encoder != 335141888 {
		t.Errorf("encoder and pooler %d, shape %d, want 335141888", encoder, shape.Params())
	}
	if total := encoder + want["cls"]; m.Params != total {
		t.Errorf("params %d, architecture %d", m.Params, total)
	}
	macs := float64(s)*float64(layers*(4*d*d+2*d*f)) + layers*2*float64(s)*float64(s)*d +
		d*d + pred*(d*d+d*v) + 2*d
	if f := float64(m.ForwardFLOPs); relErr(f, 2*macs) > 1e-12 {
		t.Errorf("forward FLOPs %g, architecture 2 x %g multiply-adds", f, macs)
	}
}

// bertPart groups a BERT parameter by what it belongs to: "layerI" for
// encoder layer I, else the first name after "bert." (embeddings, pooler)
// or the head's own first name (qa_outputs, cls).
func bertPart(n string) string {
	if rest, ok := strings.CutPrefix(n, "bert.encoder.layer."); ok {
		i, _, _ := strings.Cut(rest, ".")
		return "layer" + i
	}
	s, _, _ := strings.Cut(strings.TrimPrefix(n, "bert."), ".")
	return s
}

// checkLayers checks that each of the n encoder layers of got (sumsBy's
// parameters per part, "layer0" on) holds layer parameters.
func checkLayers(t *testing.T, got map[string]int64, n int, layer int64) {
	t.Helper()
	for i := range n {
		if k := "layer" + strconv.Itoa(i); got[k] != layer {
			t.Errorf("%s: %d parameters, architecture %d", k, got[k], layer)
		}
	}
}
