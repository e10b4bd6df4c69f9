package model

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// These tests recompute parameter and FLOP counts from the published
// architectures, independently of the YAML, and compare them with the
// shipped profiles and with published figures.

func defaultModel(t *testing.T, name string) *Model {
	t.Helper()
	p, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	m, err := p.Model(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sumsBy groups a model's layers by key(name) and sums their parameters.
func sumsBy(m *Model, key func(string) string) map[string]int64 {
	s := map[string]int64{}
	for _, l := range m.Layers {
		s[key(l.Name)] += l.Params
	}
	return s
}

func relErr(got, want float64) float64 { return math.Abs(got-want) / math.Abs(want) }

// convMACs returns the multiply-adds of a k×k convolution producing an
// h×w×cout output from cin input channels in groups.
func convMACs(h, w, cin, cout, k, groups int) int64 {
	return int64(h) * int64(w) * int64(cout) * int64(cin/groups) * int64(k*k)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// TestResNet50Architecture rebuilds ResNet-50 v1.5 (He et al. 2016, with
// the stride on the 3x3 convolution as in torchvision) stage by stage.
func TestResNet50Architecture(t *testing.T) {
	m := defaultModel(t, "resnet50")
	want := map[string]int64{}
	var macs int64

	// Stem: 7x7/2 convolution 3→64 and batch norm, then a 3x3/2 max-pool.
	want["stem"] = 7*7*3*64 + 2*64
	h := 112
	macs += convMACs(h, h, 3, 64, 7, 1)
	h = 56

	cin := 64
	for i, st := range []struct{ blocks, width, stride int }{{3, 64, 1}, {4, 128, 2}, {6, 256, 2}, {3, 512, 2}} {
		var p int64
		w, out := st.width, 4*st.width
		for b := 0; b < st.blocks; b++ {
			stride := 1
			if b == 0 {
				stride = st.stride
			}
			ho := ceilDiv(h, stride)
			p += int64(cin*w+2*w) + int64(9*w*w+2*w) + int64(w*out+2*out)
			macs += convMACs(h, h, cin, w, 1, 1) + convMACs(ho, ho, w, w, 3, 1) + convMACs(ho, ho, w, out, 1, 1)
			if b == 0 {
				p += int64(cin*out + 2*out)
				macs += convMACs(ho, ho, cin, out, 1, 1)
			}
			h, cin = ho, out
		}
		want["layer"+strconv.Itoa(i+1)] = p
	}
	want["fc"] = 2048*1000 + 1000
	macs += 2048 * 1000

	got := sumsBy(m, func(n string) string {
		switch {
		case n == "conv1" || n == "bn1":
			return "stem"
		case strings.HasPrefix(n, "fc."):
			return "fc"
		}
		return n[:strings.IndexByte(n, '.')]
	})
	var total int64
	for k, v := range want {
		if got[k] != v {
			t.Errorf("resnet50 %s: layout has %d parameters, architecture %d", k, got[k], v)
		}
		total += v
	}
	if len(got) != len(want) {
		t.Errorf("resnet50 layout groups %v, want %v", got, want)
	}
	// torchvision's resnet50: num_params 25,557,032.
	if total != 25557032 || m.Params != 25557032 {
		t.Errorf("resnet50 params: architecture %d, profile %d, want 25557032", total, m.Params)
	}
	// The profile's FLOPs are the architecture's multiply-adds times two.
	if e := relErr(float64(m.ForwardFLOPs), 2*float64(macs)); e > 1e-12 {
		t.Errorf("resnet50 forward FLOPs %v, architecture 2 × %d", m.ForwardFLOPs, macs)
	}
	// Published: about 4.1 G multiply-adds (torchvision lists 4.09 "GFLOPS").
	if e := relErr(float64(m.ForwardFLOPs), 2*4.1e9); e > 0.05 {
		t.Errorf("resnet50 forward FLOPs %v is %.1f%% from 2 × 4.1 G", m.ForwardFLOPs, 100*e)
	}
	// Normalization and bias entries: 53 batch norms and the fc bias.
	var norms int
	for _, l := range m.Layers {
		if l.NormOrBias {
			norms++
		}
	}
	if norms != 54 {
		t.Errorf("resnet50 has %d norm-or-bias entries, want 53 batch norms + fc bias", norms)
	}
	if first := m.Layers[0].Name; first != "fc.bias" {
		t.Errorf("resnet50 layout starts with %q; backward order starts at the classifier", first)
	}
}

func TestMLPArchitecture(t *testing.T) {
	m := defaultModel(t, "mlp")
	sizes := []int{784, 1024, 1024, 10}
	var params, macs int64
	for i := 0; i+1 < len(sizes); i++ {
		params += int64(sizes[i]*sizes[i+1] + sizes[i+1])
		macs += int64(sizes[i] * sizes[i+1])
	}
	// 784·1024+1024 + 1024·1024+1024 + 1024·10+10
	if want := int64(784*1024 + 1024 + 1024*1024 + 1024 + 1024*10 + 10); params != want {
		t.Fatalf("recomputed %d parameters, formula gives %d", params, want)
	}
	if m.Params != params {
		t.Errorf("mlp params %d, architecture %d", m.Params, params)
	}
	if float64(m.ForwardFLOPs) != 2*float64(macs) {
		t.Errorf("mlp forward FLOPs %v, architecture 2 × %d", m.ForwardFLOPs, macs)
	}
}

// TestCNNArchitecture rebuilds the engine's CNN with valid padding:
// 28x28x1 → conv 3x3x32 → 26x26x32 → conv 3x3x64 → 24x24x64 → max-pool 2x2
// → 12x12x64 → dense 128 → dense 10.
func TestCNNArchitecture(t *testing.T) {
	m := defaultModel(t, "cnn")
	var params, macs int64
	h, c := 28, 1
	for _, out := range []int{32, 64} {
		h -= 2 // valid 3x3
		params += int64(9*c*out + out)
		macs += convMACs(h, h, c, out, 3, 1)
		c = out
	}
	h /= 2
	in := h * h * c
	for _, out := range []int{128, 10} {
		params += int64(in*out + out)
		macs += int64(in * out)
		in = out
	}
	// The Keras MNIST CNN example (same layers, valid padding) prints
	// "Total params: 1,199,882".
	if params != 1199882 || m.Params != params {
		t.Errorf("cnn params: architecture %d, profile %d, want 1199882", params, m.Params)
	}
	if float64(m.ForwardFLOPs) != 2*float64(macs) {
		t.Errorf("cnn forward FLOPs %v, architecture 2 × %d", m.ForwardFLOPs, macs)
	}
}

// effNetParams returns the per-block parameter counts of EfficientNet-B4
// (width 1.4, depth 1.8) with the given expansion ratio and group size
// (1: depthwise), plus stem, head and classifier, and the total.
func effNetParams(expand, groupDim int) (blocks []int64, total int64) {
	round := func(f int) int {
		x := float64(f) * 1.4
		n := int(x+4) / 8 * 8
		n = max(8, n)
		if float64(n) < 0.9*x {
			n += 8
		}
		return n
	}
	base := []struct{ k, r, out, e, s int }{
		{3, 1, 16, 1, 1}, {3, 2, 24, 6, 2}, {5, 2, 40, 6, 2}, {3, 3, 80, 6, 2},
		{5, 3, 112, 6, 1}, {5, 4, 192, 6, 2}, {3, 1, 320, 6, 1},
	}
	stem := round(32)
	total = int64(27*stem + 2*stem)
	cin := stem
	for _, b := range base {
		out := round(b.out)
		for j := 0; j < int(math.Ceil(1.8*float64(b.r))); j++ {
			e := expand
			if b.e == 1 {
				e = 1
			}
			mid := cin * e
			var p int64
			if e != 1 {
				p += int64(cin*mid + 2*mid)
			}
			groups := mid
			if groupDim > 1 {
				groups = max(mid/groupDim, 1)
			}
			p += int64(b.k*b.k*(mid/groups)*mid + 2*mid)
			red := max(1, cin/4)
			p += int64(mid*red+red) + int64(red*mid+mid)
			p += int64(mid*out + 2*out)
			blocks = append(blocks, p)
			total += p
			cin = out
		}
	}
	top := round(1280)
	total += int64(cin*top+2*top) + int64(top*1000+1000)
	return blocks, total
}

func TestEfficientNetArchitecture(t *testing.T) {
	for _, c := range []struct {
		model            string
		expand, groupDim int
		published        float64 // parameters, 0 if none
		tol              float64
	}{
		// Tan and Le 2019, Table 2: 19 M parameters for B4.
		{"efficientnet-b4", 6, 1, 19.3e6, 0.005},
		// Graphcore's implementation with group_dim 16, expand_ratio 4.
		{"efficientnet-b4-g16", 4, 16, 0, 0},
	} {
		m := defaultModel(t, c.model)
		blocks, total := effNetParams(c.expand, c.groupDim)
		if len(blocks) != 32 {
			t.Fatalf("%s: %d blocks, want 32", c.model, len(blocks))
		}
		if m.Params != total {
			t.Errorf("%s params %d, architecture %d", c.model, m.Params, total)
		}
		if c.published > 0 {
			if e := relErr(float64(total), c.published); e > c.tol {
				t.Errorf("%s: architecture gives %d parameters, %.2f%% from the published %g", c.model, total, 100*e, c.published)
			}
		}
		got := sumsBy(m, func(n string) string {
			if !strings.HasPrefix(n, "blocks.") {
				return "other"
			}
			return strings.TrimSuffix(n, ".norm_bias")
		})
		for i, p := range blocks {
			name := "blocks." + strconv.Itoa(i)
			if got[name] != p {
				t.Errorf("%s %s: layout %d parameters, architecture %d", c.model, name, got[name], p)
			}
		}
	}
	// timm's efficientnet_b4 has 19,341,616 parameters.
	if _, total := effNetParams(6, 1); total != 19341616 {
		t.Errorf("efficientnet-b4 architecture gives %d, timm 19341616", total)
	}
}

func TestTranslationArchitectures(t *testing.T) {
	lstm := func(in, h int) int64 { return int64(4*h*(in+h) + 8*h) } // PyTorch: two bias vectors
	const V, H = 32320, 1024
	gnmt := int64(V*H) + // shared embedding
		2*lstm(H, H) + lstm(2*H, H) + 2*lstm(H, H) + // encoder: bidirectional, then 3 layers
		lstm(H, H) + // decoder attention LSTM
		int64(2*H*H+H+1+H) + // normalized Bahdanau attention
		3*lstm(2*H, H) + // decoder layers with the context concatenated
		int64(V*H+V) // classifier
	// "MLPerf GNMT has 160671297 parameters" (NVIDIA apex).
	if gnmt != 160671297 {
		t.Errorf("gnmt architecture gives %d, published 160671297", gnmt)
	}
	if m := defaultModel(t, "gnmt"); m.Params != gnmt {
		t.Errorf("gnmt params %d, architecture %d", m.Params, gnmt)
	}

	transformer := func(d, ff, layers, vocab int, preNorm bool) int64 {
		attn := int64(4 * (d*d + d))
		ffn := int64(d*ff + ff + ff*d + d)
		enc := attn + ffn + int64(2*2*d)
		dec := 2*attn + ffn + int64(3*2*d)
		p := int64(vocab*d) + int64(layers)*(enc+dec)
		if preNorm {
			p += int64(2 * 2 * d)
		}
		return p
	}
	for _, c := range []struct {
		model                string
		d, ff, layers, vocab int
		preNorm              bool
	}{
		{"transformer-big", 1024, 4096, 6, 33708, true},
		{"transformer-base", 512, 2048, 6, 33708, false},
	} {
		m := defaultModel(t, c.model)
		want := transformer(c.d, c.ff, c.layers, c.vocab, c.preNorm)
		if m.Params != want {
			t.Errorf("%s params %d, architecture %d", c.model, m.Params, want)
		}
		// Forward FLOPs per token pair are 2 × parameters (the 6N rule).
		if float64(m.ForwardFLOPs) != 2*float64(want) {
			t.Errorf("%s forward FLOPs %v, want 2 × %d", c.model, m.ForwardFLOPs, want)
		}
	}
}

// TestSSDArchitecture rebuilds MLPerf's SSD300-ResNet34.
func TestSSDArchitecture(t *testing.T) {
	var p int64
	p += 7*7*3*64 + 2*64 // stem
	cin := 64
	for _, st := range []struct{ blocks, c, stride int }{{3, 64, 1}, {4, 128, 2}, {6, 256, 1}} {
		for b := 0; b < st.blocks; b++ {
			p += int64(9*cin*st.c+2*st.c) + int64(9*st.c*st.c+2*st.c)
			if b == 0 && cin != st.c {
				p += int64(cin*st.c + 2*st.c) // 1x1 projection
			}
			cin = st.c
		}
	}
	outs := []int{256, 512, 512, 256, 256, 256}
	mids := []int{256, 256, 128, 128, 128}
	for i, mid := range mids {
		p += int64(outs[i]*mid+mid) + int64(9*mid*outs[i+1]+outs[i+1])
	}
	anchors := []int{4, 6, 6, 6, 4, 4}
	for i, a := range anchors {
		p += int64(9*outs[i]*a*4+a*4) + int64(9*outs[i]*a*81+a*81)
	}
	if m := defaultModel(t, "ssd-resnet34"); m.Params != p {
		t.Errorf("ssd-resnet34 params %d, architecture %d", m.Params, p)
	}
}
