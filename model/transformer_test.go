package model

import (
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"scaleplan/internal/units"
)

func tfShape(t testing.TB, name string) TransformerShape {
	t.Helper()
	s, err := LookupTransformer(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTransformerParams compares the closed-form parameter counts with the
// published figures, within 2 %, and with exact counts where the
// publishers give them.
func TestTransformerParams(t *testing.T) {
	for _, c := range []struct {
		name      string
		published float64 // what the source states
		exact     int64   // an exact published count; 0 where none
		source    string
	}{
		{"gpt3-125m", 125e6, 0, "Brown et al. 2020, Table 2.1"},
		{"gpt3-350m", 350e6, 0, "Brown et al. 2020, Table 2.1"},
		{"gpt3-760m", 760e6, 0, "Brown et al. 2020, Table 2.1"},
		{"gpt3-1.3b", 1.3e9, 0, "Brown et al. 2020, Table 2.1"},
		{"gpt3-2.7b", 2.7e9, 0, "Brown et al. 2020, Table 2.1"},
		{"gpt3-6.7b", 6.7e9, 0, "Brown et al. 2020, Table 2.1"},
		{"gpt3-13b", 13e9, 0, "Brown et al. 2020, Table 2.1"},
		{"gpt3-175b", 175e9, 0, "Brown et al. 2020, Table 2.1"},
		{"llama2-7b", 6.74e9, 6738415616, "meta-llama/Llama-2-7b-hf model card (6.74 B) and safetensors index"},
		{"llama2-13b", 13e9, 0, "Touvron et al. 2023, Table 1"},
		{"llama2-70b", 70e9, 0, "Touvron et al. 2023, Table 1"},
		{"llama3-8b", 8.03e9, 0, "meta-llama/Meta-Llama-3-8B model card (8.03 B)"},
		{"llama3-70b", 70.6e9, 0, "meta-llama/Meta-Llama-3-70B model card (70.6 B)"},
		{"llama3-405b", 405e9, 0, "Llama Team 2024, Table 3"},
		{"mixtral-8x7b", 46.7e9, 0, "mistral.ai/news/mixtral-of-experts (46.7 B)"},
		{"bert-base", 110e6, 109482240, "Devlin et al. 2019 (110 M); Hugging Face bert-base-uncased"},
		{"bert-large", 340e6, 335141888, "Devlin et al. 2019 (340 M); Hugging Face bert-large-uncased (335 M)"},
	} {
		s := tfShape(t, c.name)
		got := s.Params()
		if e := relErr(float64(got), c.published); e > 0.02 {
			t.Errorf("%s: %d parameters, %.3g published (%s): off by %.2f %%", c.name, got, c.published, c.source, 100*e)
		}
		if c.exact != 0 && got != c.exact {
			t.Errorf("%s: %d parameters, exactly %d published (%s)", c.name, got, c.exact, c.source)
		}
	}
	// Mixtral: 12.9 B of the parameters serve each token.
	if got := tfShape(t, "mixtral-8x7b").ActiveParams(); relErr(float64(got), 12.9e9) > 0.02 {
		t.Errorf("mixtral-8x7b: %d active parameters, 12.9 B published", got)
	}
	if s := tfShape(t, "llama2-7b"); s.ActiveParams() != s.Params() {
		t.Errorf("dense llama2-7b: active %d, all %d", s.ActiveParams(), s.Params())
	}
}

// TestTransformerParamsByHand recounts GPT-3 175B's parameters from its
// parts: the token and position tables, 96 layers of 12·d² + 13·d, and
// the final norm.
func TestTransformerParamsByHand(t *testing.T) {
	const d, L, V, P = 12288, 96, 50257, 2048
	want := int64(V*d+P*d) + L*(12*d*d+13*d) + 2*d
	if got := tfShape(t, "gpt3-175b").Params(); got != want {
		t.Errorf("gpt3-175b: %d parameters, by hand %d", got, want)
	}
}

// TestTranslationTransformerParams checks the fairseq counts of the
// shipped profiles and the paper's: with Vaswani et al.'s shared
// vocabulary of about 37,000 tokens the architecture gives 63.1 M for the
// base model (the paper says 65 M) and 214.2 M for the big one (213 M).
func TestTranslationTransformerParams(t *testing.T) {
	for _, c := range []struct {
		name   string
		paper  float64
		within float64
	}{
		{"transformer-base", 65e6, 0.035},
		{"transformer-big", 213e6, 0.01},
	} {
		s := tfShape(t, c.name)
		if m := defaultModel(t, c.name); s.Params() != m.Params {
			t.Errorf("%s: %d parameters, the shipped profile %d", c.name, s.Params(), m.Params)
		}
		s.Vocab = 37000
		if e := relErr(float64(s.Params()), c.paper); e > c.within {
			t.Errorf("%s with 37,000 tokens: %d parameters, the paper %.3g: off by %.2f %%", c.name, s.Params(), c.paper, 100*e)
		}
	}
}

// narayanan returns Narayanan et al. 2021 eq. (3): a training iteration's
// FLOPs for B sequences of s tokens of a GPT of l layers, width h and
// vocabulary V, with full recomputation (96) or without (72: one forward
// pass fewer over the layers, and the logits' 6·B·s·h·V either way).
func narayanan(B, s, l, h, V float64, recompute bool) float64 {
	if recompute {
		return 96 * B * s * l * h * h * (1 + s/(6*h) + V/(16*l*h))
	}
	return 72 * B * s * l * h * h * (1 + s/(6*h) + V/(12*l*h))
}

// tfModelFLOPs sums the matrix-product and attention FLOPs of ops.
func tfModelFLOPs(ops []Op) float64 {
	tot := Totals(ops)
	return tot.ByKind[MatMul] + tot.ByKind[Attention]
}

// TestTransformerTrainFLOPs compares a GPT step's matrix-product and
// attention FLOPs with Narayanan et al. 2021 eq. (3), without and with
// full recomputation.
func TestTransformerTrainFLOPs(t *testing.T) {
	for _, s := range TransformerShapes() {
		if !strings.HasPrefix(s.Name, "gpt3-") {
			continue
		}
		const b, seq = 4, 2048
		want := narayanan(b, seq, float64(s.Layers), float64(s.Hidden), float64(s.Vocab), false)
		if got := s.TrainFLOPs(b, seq); relErr(got, want) > 1e-9 {
			t.Errorf("%s: TrainFLOPs %.12g, eq. (3) %.12g", s.Name, got, want)
		}
		for _, rc := range []Recompute{RecomputeNone, RecomputeFull} {
			ops, err := s.Ops(TransformerStep{Batch: b, Precision: BF16, Recompute: rc})
			if err != nil {
				t.Fatal(err)
			}
			want := narayanan(b, seq, float64(s.Layers), float64(s.Hidden), float64(s.Vocab), rc == RecomputeFull)
			if got := tfModelFLOPs(ops); relErr(got, want) > 1e-9 {
				t.Errorf("%s, recompute %s: operators' FLOPs %.12g, eq. (3) %.12g", s.Name, rc, got, want)
			}
		}
	}
}

// TestTransformerTrainFLOPsMatchOps checks the closed form against the
// operator list for the other shapes (GQA, SwiGLU, MoE, encoders), and
// the attention conventions: causal halving only under CausalSkip, a
// fused backward 2.5 times the forward.
func TestTransformerTrainFLOPsMatchOps(t *testing.T) {
	for _, s := range TransformerShapes() {
		for _, v := range []struct {
			causal, fused bool
		}{{false, false}, {true, true}} {
			s.CausalSkip, s.FusedAttention = v.causal, v.fused
			ops, err := s.Ops(TransformerStep{Batch: 2, SeqLen: 256})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := tfModelFLOPs(ops), s.TrainFLOPs(2, 256); relErr(got, want) > 1e-9 {
				t.Errorf("%s %+v: operators %.12g, TrainFLOPs %.12g", s.Name, v, got, want)
			}
		}
	}
	s := tfShape(t, "llama2-7b")
	attn := func(s TransformerShape) (fwd, bwd float64) {
		ops, err := s.Ops(TransformerStep{Batch: 1, SeqLen: 1024})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range ops {
			if o.Kind == Attention && o.Pass == Forward {
				fwd += o.FLOPs
			} else if o.Kind == Attention {
				bwd += o.FLOPs
			}
		}
		return fwd, bwd
	}
	// 4·b·s²·d per layer forward.
	f, b := attn(s)
	if want := 4.0 * 1024 * 1024 * 4096 * 32; f != want || b != 2*want {
		t.Errorf("attention forward %g, backward %g: want %g and twice", f, b, want)
	}
	s.CausalSkip, s.FusedAttention = true, true
	if f2, b2 := attn(s); f2 != f/2 || b2 != 2.5*f2 {
		t.Errorf("causal fused attention forward %g, backward %g: want %g and 2.5 times", f2, b2, f/2)
	}
}

// korthikanti returns Korthikanti et al. 2022's activation bytes per
// layer without parallelism (Section 4.1; Table 2 with t = 1).
func korthikanti(s, b, h, a float64, rc Recompute) float64 {
	switch rc {
	case RecomputeSelective:
		return 34 * s * b * h
	case RecomputeFull:
		return 2 * s * b * h
	}
	return s * b * h * (34 + 5*a*s/h)
}

// TestTransformerActivations compares the bytes a layer keeps with
// Korthikanti et al. 2022 for the configurations of their Table 3
// (sequence 2,048; micro-batch 4 for 22B, 1 otherwise), at 16-bit.
func TestTransformerActivations(t *testing.T) {
	for _, c := range []struct {
		name                  string
		heads, hidden, layers int
		micro                 int
	}{
		{"22b", 64, 6144, 48, 4},
		{"175b", 96, 12288, 96, 1},
		{"530b", 128, 20480, 105, 1},
		{"1t", 160, 25600, 128, 1},
	} {
		s := gpt3(c.name, c.layers, c.hidden, c.heads, 0)
		s.Vocab = 51200 // Megatron's padded GPT-2 vocabulary; no bearing on a layer
		for _, rc := range []Recompute{RecomputeNone, RecomputeSelective, RecomputeFull} {
			got, err := s.ActivationBytesPerLayer(TransformerStep{Batch: c.micro, SeqLen: 2048, Precision: FP16, Recompute: rc})
			if err != nil {
				t.Fatal(err)
			}
			want := korthikanti(2048, float64(c.micro), float64(c.hidden), float64(c.heads), rc)
			if relErr(float64(got), want) > 1e-12 {
				t.Errorf("%s, recompute %s: %v per layer, Korthikanti %g B", c.name, rc, float64(got), want)
			}
		}
	}
}

// TestTransformerActivationsFused checks the fused kernel keeps no s²
// matrix: 34·s·b·d plus the fp32 log-sum-exp, 4·a·s·b bytes.
func TestTransformerActivationsFused(t *testing.T) {
	s := tfShape(t, "gpt3-175b")
	s.FusedAttention = true
	got, err := s.ActivationBytesPerLayer(TransformerStep{Batch: 2, Precision: BF16})
	if err != nil {
		t.Fatal(err)
	}
	if want := 34.0*2048*2*12288 + 4*96*2048*2; relErr(float64(got), want) > 1e-12 {
		t.Errorf("fused: %v per layer, want %g B", float64(got), want)
	}
}

// TestTransformerValidate checks the shapes Validate refuses, and that
// the shipped ones pass.
func TestTransformerValidate(t *testing.T) {
	for _, s := range TransformerShapes() {
		if err := s.Validate(); err != nil {
			t.Errorf("shipped %s: %v", s.Name, err)
		}
	}
	good := tfShape(t, "llama3-8b")
	for _, c := range []struct {
		edit func(*TransformerShape)
		msg  string
	}{
		{func(s *TransformerShape) { s.Stack = "ring" }, `stack "ring"`},
		{func(s *TransformerShape) { s.Layers = 0 }, "layers 0: want 1 to 10000"},
		{func(s *TransformerShape) { s.DecoderLayers = 2 }, "decoder layers 2"},
		{func(s *TransformerShape) { s.Heads = 0 }, "heads 0"},
		{func(s *TransformerShape) { s.Hidden = 4095 }, "hidden 4095"},
		{func(s *TransformerShape) { s.KVHeads = 5 }, "kv heads 5"},
		{func(s *TransformerShape) { s.Vocab = 0 }, "vocab 0"},
		{func(s *TransformerShape) { s.VocabMultiple = -8 }, "vocab multiple -8: want 0 (no padding) to 131072"},
		{func(s *TransformerShape) { s.Activation = "tanh" }, `activation "tanh"`},
		{func(s *TransformerShape) { s.Positions = "alibi" }, `positions "alibi"`},
		{func(s *TransformerShape) { s.Norm = "batchnorm" }, `norm "batchnorm"`},
		{func(s *TransformerShape) { s.Experts, s.TopK = 8, 9 }, "top-k 9"},
		{func(s *TransformerShape) { s.CapacityFactor = 0.5 }, "capacity factor 0.5"},
		{func(s *TransformerShape) { s.ScaledEmbeddings, s.TokenTypes = true, 2 }, "scaled embeddings with 2 token types"},
	} {
		s := good
		c.edit(&s)
		err := s.Validate()
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Validate: %v; want %q", err, c.msg)
		}
		if _, err := s.Ops(TransformerStep{Batch: 1}); err == nil {
			t.Errorf("Ops of an invalid shape (%s): no error", c.msg)
		}
	}
	for _, st := range []TransformerStep{
		{Batch: 0}, {Batch: 1, SeqLen: -1}, {Batch: 1, Precision: "fp8"}, {Batch: 1, Recompute: "some"},
	} {
		if _, err := good.Ops(st); err == nil {
			t.Errorf("Ops(%+v): no error", st)
		}
		if _, err := good.ActivationBytesPerLayer(st); err == nil {
			t.Errorf("ActivationBytesPerLayer(%+v): no error", st)
		}
	}
	if _, err := LookupTransformer("gpt5"); err == nil || !strings.Contains(err.Error(), "gpt3-175b") {
		t.Errorf("LookupTransformer(gpt5): %v; want the valid names", err)
	}
}

// TestTransformerMoE checks the expert products: TopK × capacity of the
// tokens through E groups, and the router.
func TestTransformerMoE(t *testing.T) {
	s := tfShape(t, "mixtral-8x7b")
	s.CapacityFactor = 1.25
	ops, err := s.Ops(TransformerStep{Batch: 1, SeqLen: 4096, Precision: BF16})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, o := range ops {
		if o.Name == "layers.0.ffn.experts.fc1" {
			found = true
			// 2 experts × 1.25 × 4096 tokens over 8 experts: 1280 rows each.
			if o.Groups != 8 || o.M != 1280 || o.K != 4096 || o.N != 2*14336 {
				t.Errorf("expert fc1 %+v: want 8 groups of 1280×4096 by 4096×28672", o)
			}
			if want := 2.0 * 2 * 1.25 * 4096 * 4096 * 2 * 14336; math.Abs(o.FLOPs-want) > 1e-9*want {
				t.Errorf("expert fc1 FLOPs %g, want %g", o.FLOPs, want)
			}
		}
	}
	if !found {
		t.Error("no layers.0.ffn.experts.fc1")
	}
}

// BenchmarkTransformerOps generates the operators of a Llama 3 405B step.
func BenchmarkTransformerOps(b *testing.B) {
	s := tfShape(b, "llama3-405b")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Ops(TransformerStep{Batch: 1, Precision: BF16, Recompute: RecomputeSelective}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTransformerShapesDoc checks docs/models.md's table of shapes against
// the closed forms: every shipped shape has a row whose parameter count
// (and active count under MoE) is the one Params gives.
func TestTransformerShapesDoc(t *testing.T) {
	doc, err := os.ReadFile("../docs/models.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		if f := strings.Split(line, "|"); len(f) == 11 {
			rows[strings.TrimSpace(f[1])] = strings.TrimSpace(f[7])
		}
	}
	for _, s := range TransformerShapes() {
		want := tfCommas(s.Params())
		if s.Experts > 0 {
			want += " (active " + tfCommas(s.ActiveParams()) + ")"
		}
		if got, ok := rows[s.Name]; !ok || got != want {
			t.Errorf("docs/models.md: %s's parameters %q, want %q", s.Name, got, want)
		}
	}
}

// tfCommas writes n with thousands separators.
func tfCommas(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestBERTSQuADShape checks bert-base-squad and bert-large-squad against
// Devlin et al. 2019's BERT-base and BERT-large (110 M and 340 M with the
// pooler, within 2 %) and against the counts by hand of
// BertForQuestionAnswering: embeddings (30,522 + 512 + 2) × d and a
// LayerNorm, L layers of 4·(d² + d) + d·f + f + f·d + d + 2 LayerNorms,
// the d × 2 span head; forward 2·384·(L·(4·d² + 2·d·f) + 2·d) FLOPs for
// the linear layers and L·4·384²·d for attention's two products per
// 384-token sequence.
func TestBERTSQuADShape(t *testing.T) {
	for _, c := range []struct {
		name      string
		layers, d int64
		want      int64
		published float64
	}{
		{"bert-base-squad", 12, 768, 108893186, 110e6},
		{"bert-large-squad", 24, 1024, 334094338, 340e6},
	} {
		s, err := LookupTransformer(c.name)
		if err != nil {
			t.Fatal(err)
		}
		d, f := c.d, 4*c.d
		layer := 4*(d*d+d) + d*f + f + f*d + d + 2*2*d
		want := (30522+512+2)*d + 2*d + c.layers*layer + 2*d + 2
		if want != c.want || s.Params() != want {
			t.Errorf("%s: parameters %d, by hand %d, profile's %d", c.name, s.Params(), want, c.want)
		}
		if e := math.Abs(float64(s.Params())/c.published - 1); e > 0.02 {
			t.Errorf("%s: parameters %d: %.1f %% from the published %g", c.name, s.Params(), 100*e, c.published)
		}
		ops, err := s.Ops(TransformerStep{Batch: 1})
		if err != nil {
			t.Fatal(err)
		}
		var fwd float64
		for _, o := range ops {
			if o.Pass == Forward && (o.Kind == MatMul || o.Kind == Attention) {
				fwd += o.FLOPs
			}
		}
		wantFwd := 2*384*(c.layers*(4*d*d+2*d*f)+2*d) + c.layers*4*384*384*d
		if relErr(fwd, float64(wantFwd)) > 1e-12 {
			t.Errorf("%s: forward FLOPs %.12g, by hand %d", c.name, fwd, wantFwd)
		}
	}
}

// TestBERTScoreKernels checks BERT's attention as DeepLearningExamples'
// modeling.py runs it eagerly: three projections, and the scores' scaling
// (forward and backward) and mask (forward) each reading and writing the
// b·a·s² scores, 4 bytes a value in fp32; none of them when the program
// fuses (Fused), nor in a GPT shape.
func TestBERTScoreKernels(t *testing.T) {
	s, err := LookupTransformer("bert-base")
	if err != nil {
		t.Fatal(err)
	}
	const b, seq = 2, 128
	scores := float64(b * 12 * seq * seq)
	byName := func(ops []Op) map[string][]Op {
		m := map[string][]Op{}
		for _, o := range ops {
			m[o.Name] = append(m[o.Name], o)
		}
		return m
	}
	ops, err := s.Ops(TransformerStep{Batch: b, SeqLen: seq})
	if err != nil {
		t.Fatal(err)
	}
	m := byName(ops)
	for _, n := range []string{"layers.0.self_attn.attention.scale", "layers.0.self_attn.attention.scale.grad", "layers.0.self_attn.attention.mask"} {
		o := m[n]
		if len(o) != 1 || float64(o[0].Read) != 4*scores || float64(o[0].Write) != 4*scores {
			t.Errorf("%s: %+v, want one reading and writing %v bytes", n, o, 4*scores)
		}
	}
	if len(m["layers.0.self_attn.attention.mask.grad"]) != 0 {
		t.Error("the mask's gradient is the identity: want no kernel")
	}
	if o := m["layers.0.self_attn.attention.mask"]; len(o) != 1 || !o[0].Broadcast || m["layers.0.self_attn.attention.scale"][0].Broadcast {
		t.Error("the mask of one row a sequence is broadcast over the scores (Op.Broadcast), the scaling is not")
	}
	for _, n := range []string{"q", "k", "v"} {
		if o := m["layers.11.self_attn."+n]; len(o) != 1 || o[0].Params != 768*768+768 {
			t.Errorf("projection %s: %+v, want one of 768×768 + 768 parameters", n, o)
		}
	}
	fused, err := s.Ops(TransformerStep{Batch: b, SeqLen: seq, Fused: true})
	if err != nil {
		t.Fatal(err)
	}
	var biases int
	for _, o := range ops {
		if strings.HasSuffix(o.Name, ".grad_bias") {
			biases++
		}
	}
	if got, want := len(fused), len(ops)-7*12-biases; got != want || biases < 6*12 {
		t.Errorf("fused: %d operators, want %d (no scaling, its gradient or mask, no softmax or dropout of their own and their gradients in 12 layers, no bias gradient's reduction of %d)", got, want, biases)
	}
	sm, do := m["layers.0.self_attn.attention.softmax"], m["layers.0.self_attn.attention.dropout"]
	if len(sm) != 1 || sm[0].Kind != Softmax || float64(sm[0].Read) != 4*scores || len(do) != 1 || !do[0].Random || float64(do[0].Write) != 4*scores {
		t.Errorf("eager attention's softmax %+v and dropout %+v: want one of each over the %v scores, the dropout drawing its mask (Op.Random)", sm, do, scores)
	}
	g, _ := LookupTransformer("gpt3-125m")
	gops, _ := g.Ops(TransformerStep{Batch: 1, SeqLen: seq})
	if len(byName(gops)["layers.0.self_attn.attention.scale"]) != 0 {
		t.Error("gpt3-125m: want no separate scaling kernel")
	}
}

// TestGPT3Profiles checks the shipped profiles of the four GPT-3 shapes
// engine/torchbench trains against their transformer shapes and against
// counts by hand: parameters L·(12d² + 13d) + (50,257 + 2,048)·d + 2d,
// within 2 % of Brown et al. 2020's Table 2.1; forward FLOPs per
// 2,048-token sequence 2·s·(L·12d² + d·V) + L·4·s²·d (the linear layers,
// attention's two products, the logits); stored activations per sequence
// L·s·d·(34 + 5·a·s/d) + 5·s·d + 4·s·V bytes in 16-bit (Korthikanti et
// al. 2022, Sections 4.1 and 4.3).
func TestGPT3Profiles(t *testing.T) {
	p, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	const s, v = 2048, 50257
	for _, c := range []struct {
		name         string
		layers, d, a float64
	}{
		{"gpt3-125m", 12, 768, 12},
		{"gpt3-350m", 24, 1024, 16},
		{"gpt3-760m", 24, 1536, 16},
		{"gpt3-1.3b", 24, 2048, 16},
	} {
		m, err := p.Model(c.name)
		if err != nil {
			t.Fatal(err)
		}
		sh, err := LookupTransformer(c.name)
		if err != nil {
			t.Fatal(err)
		}
		l, d := c.layers, c.d
		params := l*(12*d*d+13*d) + (v+2048)*d + 2*d
		if float64(m.Params) != params || float64(sh.Params()) != params {
			t.Errorf("%s: profile %d parameters, shape %d, by hand %.0f", c.name, m.Params, sh.Params(), params)
		}
		if e := math.Abs(params/sh.Published - 1); e > 0.02 {
			t.Errorf("%s: %.0f parameters, %.1f %% from the published %g", c.name, params, 100*e, sh.Published)
		}
		fwd := 2*s*(l*12*d*d+d*v) + l*4*s*s*d
		if relErr(float64(m.ForwardFLOPs), fwd) > 1e-9 || relErr(sh.TrainFLOPs(1, s)/3, fwd) > 1e-12 {
			t.Errorf("%s: forward FLOPs %v in the profile, %v by the shape, %v by hand", c.name, float64(m.ForwardFLOPs), sh.TrainFLOPs(1, s)/3, fwd)
		}
		act := l*s*d*(34+5*c.a*s/d) + 5*s*d + 4*s*v
		if relErr(float64(m.Activations.FP16), act) > 1e-9 {
			t.Errorf("%s: activations %v in 16-bit, by hand %v", c.name, float64(m.Activations.FP16), act)
		}
		// In fp32 the layers keep their operators' values at 4 bytes,
		// dropout masks at 1, so less than twice the 16-bit figure.
		a32, err := sh.ActivationBytesPerLayer(TransformerStep{Batch: 1, Precision: FP32})
		if err != nil {
			t.Fatal(err)
		}
		if want := l*float64(a32) + 9*s*d + 4*s*v; relErr(float64(m.Activations.FP32), want) > 1e-9 || !(want < 2*act) {
			t.Errorf("%s: activations %v in fp32, want %v (below twice the 16-bit %v)", c.name, float64(m.Activations.FP32), want, act)
		}
	}
}

// TestShapeFusedAttention checks that Shape.FusedAttention runs a GPT
// shape's attention fused whatever the shape says: the operators of one
// layer keep Korthikanti et al. 2022's s·d·34 bytes in 16-bit (Section
// 4.1, with the 5·a·s² of the scores, softmax and dropout gone) and the
// fp32 log-sum-exp per head and token (4·a·s), and the backward pass's
// attention costs 2.5 times the forward's products (the recomputed
// scores), against 2 unfused.
func TestShapeFusedAttention(t *testing.T) {
	const s, d, a = 2048, 768, 12
	layer0 := func(fused bool) (saved, fwd, bwd float64) {
		ops, err := Ops("gpt3-125m", Shape{Batch: 1, SeqLen: s, Precision: FP16, FusedAttention: fused})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range ops {
			if !strings.Contains(o.Name, "layers.0.") {
				continue
			}
			if o.Pass == Forward {
				saved += float64(o.Saved)
			}
			if o.Kind == Attention {
				if o.Pass == Forward {
					fwd += o.FLOPs
				} else {
					bwd += o.FLOPs
				}
			}
		}
		return saved, fwd, bwd
	}
	saved, fwd, bwd := layer0(true)
	if want := float64(s*d*34 + 4*a*s); saved != want {
		t.Errorf("fused: a layer keeps %v bytes, want s·d·34 + 4·a·s = %v", saved, want)
	}
	if bwd != 2.5*fwd {
		t.Errorf("fused: backward %v FLOPs, want 2.5 × the forward's %v", bwd, fwd)
	}
	saved, fwd, bwd = layer0(false)
	if want := float64(s*d*34 + 5*a*s*s); saved != want || bwd != 2*fwd {
		t.Errorf("unfused: a layer keeps %v bytes (want %v), backward %v FLOPs (want 2 × %v)", saved, want, bwd, fwd)
	}
}

// TestPositionLimit checks the longest sequence each kind of position
// encoding bounds: GPT-3's table of its 2,048-token context, BERT's 512
// rows (its SQuAD shape too, whose sequences are 384), none for rotary
// (Llama) or sinusoidal (the translation Transformer) positions.
func TestPositionLimit(t *testing.T) {
	for name, want := range map[string]int{"gpt3-125m": 2048, "gpt3-175b": 2048, "bert-large": 512,
		"bert-base-squad": 512, "llama2-7b": 0, "transformer-base": 0} {
		s, err := LookupTransformer(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.PositionLimit(); got != want {
			t.Errorf("%s: position limit %d, want %d", name, got, want)
		}
	}
}

// TestTableVocab checks the output projection's outputs of the shapes
// whose programs pad the vocabulary (fairseq's dictionary,
// DeepLearningExamples' BERT: multiples of 8) and of those that do not
// (engine/torchbench's nn.Embedding, GPT-2's tokenizer), and that the
// published parameters count the vocabulary unpadded.
func TestTableVocab(t *testing.T) {
	for name, want := range map[string]int64{"transformer-big": 33712, "bert-large": 30528, "transformer-base": 33708, "gpt3-125m": 50257} {
		sh, err := LookupTransformer(name)
		if err != nil {
			t.Fatal(err)
		}
		ops, err := sh.Ops(TransformerStep{Batch: 1, Precision: FP16})
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, op := range ops {
			if op.Name == "lm_head" {
				n = op.N
			}
		}
		if n != want {
			t.Errorf("%s: the output projection's N %d, want %d", name, n, want)
		}
		padded := sh
		padded.VocabMultiple = 0
		if sh.Params() != padded.Params() {
			t.Errorf("%s: %d parameters padded, %d not: want the same", name, sh.Params(), padded.Params())
		}
	}
}

// TestLossTransient checks the profiles' activations.transient against
// the logits of their operators' loss (model.Ops, one sample): PyTorch's
// cross-entropy, plain or label-smoothed, allocates two float32 tensors
// of them in its backward pass, 8 bytes a logit; the profiles of the
// other models give none.
func TestLossTransient(t *testing.T) {
	p, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	withLoss := map[string]bool{"gpt3-125m": true, "gpt3-350m": true, "gpt3-760m": true, "gpt3-1.3b": true,
		"transformer-base": true, "transformer-big": true}
	for name, m := range p.Models {
		got := float64(m.Activations.Transient)
		if !withLoss[name] {
			if got != 0 {
				t.Errorf("%s: transient %v, want none", name, got)
			}
			continue
		}
		ops, err := Ops(name, Shape{Batch: 1, Precision: FP32})
		if err != nil {
			t.Fatal(err)
		}
		var logits float64
		for _, o := range ops {
			if o.Name == "loss" || o.Name == "loss.log_softmax" {
				logits += o.FLOPs / seqLossFLOPs
			}
		}
		if logits == 0 || got != 8*logits {
			t.Errorf("%s: transient %v, want 8 bytes a logit of its loss's %v", name, got, logits)
		}
	}
}

// TestBiasGradient checks a biased linear's backward reduction against its
// closed form: bert-base's query projection at 2 × 128 tokens in fp32
// reads its output's gradient, 256 × 768 values of 4 bytes, and writes the
// bias's 768; an unbiased projection (Llama 2's), a fused step and a
// program that sums it in the weight's product (FusedBiasGrad) have none.
func TestBiasGradient(t *testing.T) {
	ops, err := Ops("bert-base-squad", Shape{Batch: 2, SeqLen: 128, Precision: FP32})
	if err != nil {
		t.Fatal(err)
	}
	var got []Op
	for _, o := range ops {
		if o.Name == "layers.0.self_attn.q.grad_bias" {
			got = append(got, o)
		}
	}
	if len(got) != 1 || got[0].Read != 256*768*4 || got[0].Write != 768*4 || got[0].Kind != Elementwise || got[0].Pass != Backward || !got[0].Reduce {
		t.Errorf("q's bias gradient: %+v, want one backward reduction reading %d bytes and writing %d", got, 256*768*4, 768*4)
	}
	for _, c := range []struct {
		name              string
		fused, inProducts bool
	}{{"llama2-7b", false, false}, {"bert-base-squad", true, false}, {"bert-base-squad", false, true}} {
		s, err := LookupTransformer(c.name)
		if err != nil {
			t.Fatal(err)
		}
		s.FusedBiasGrad = c.inProducts
		ops, err := s.Ops(TransformerStep{Batch: 1, SeqLen: 128, Fused: c.fused})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range ops {
			if strings.HasSuffix(o.Name, ".grad_bias") {
				t.Errorf("%s (fused %v, in the products %v): %s, want no bias gradient's reduction", c.name, c.fused, c.inProducts, o.Name)
				break
			}
		}
	}
}

// TestNormBackward checks a norm's backward operators against the closed
// form: for each layer norm of BERT-base (post-norm) and RMSNorm of
// Llama 2 7B (pre-norm), at 256 tokens in fp32, the input's gradient reads
// the output's gradient and the input (2·256·d values) and writes one
// gradient, and the parameters' gradients, a reduction over the tokens
// (Op.Reduce), read the same two tensors and write the parameters.
func TestNormBackward(t *testing.T) {
	for _, name := range []string{"bert-base-squad", "llama2-7b"} {
		s, err := LookupTransformer(name)
		if err != nil {
			t.Fatal(err)
		}
		ops, err := s.Ops(TransformerStep{Batch: 1, SeqLen: 256, Precision: FP32})
		if err != nil {
			t.Fatal(err)
		}
		x := units.Bytes(256 * s.Hidden * 4)
		norms, grads, reduces := map[string]Op{}, 0, 0
		for _, o := range ops {
			if o.Kind == Norm && o.Pass == Forward {
				norms[o.Name] = o
			}
		}
		for _, o := range ops {
			if o.Kind != Norm || o.Pass != Backward {
				continue
			}
			switch {
			case strings.HasSuffix(o.Name, ".grad_weight"):
				f, ok := norms[strings.TrimSuffix(o.Name, ".grad_weight")]
				if !ok || !o.Reduce || o.Read != 2*x || o.Write != units.Bytes(4*f.Params) {
					t.Errorf("%s: %s reads %v, writes %v, reduce %v; want a reduction reading %v and writing its norm's %d parameters",
						name, o.Name, o.Read, o.Write, o.Reduce, 2*x, f.Params)
				}
				reduces++
			case strings.HasSuffix(o.Name, ".grad"):
				if o.Reduce || o.Read != 2*x || o.Write != x {
					t.Errorf("%s: %s reads %v, writes %v; want %v and %v", name, o.Name, o.Read, o.Write, 2*x, x)
				}
				grads++
			}
		}
		if len(norms) == 0 || grads != len(norms) || reduces != len(norms) {
			t.Errorf("%s: %d norms, %d input gradients, %d parameter gradients; want one of each a norm", name, len(norms), grads, reduces)
		}
	}
}

// TestTorchMHA counts what torch.nn.MultiheadAttention adds to
// transformer-base where the framework names engine/torchbench's program
// (ProgramTransformer), by hand from F.multi_head_attention_forward: in
// each of the 12 self-attentions the packed q, k, v projection's copy and,
// backward, three select_backward's (a zeroed whole and the part's copy),
// two sums of the parts' gradients and the permuted sum's copy; in each of
// the 6 cross-attentions the same of the packed k, v (two parts, one sum);
// around each of the 18 attentions its output's copy and the gradient's.
// The copies of permuted views are Strided; fairseq's program (a bare
// "torch") lists none of them and keeps attention unfused.
func TestTorchMHA(t *testing.T) {
	const d, tokens = 512, 4096 // 4,096 token pairs: 4,096 tokens a stack
	torchbench := "torch 2.11.0+cu130 torchvision 0.26.0+cu130"
	for _, fw := range []string{torchbench, "torch", ""} {
		pt, err := ProgramTransformer("transformer-base", fw)
		if err != nil {
			t.Fatal(err)
		}
		want := fw == torchbench
		if pt.TorchMHA != want || pt.FusedAttention != want {
			t.Errorf("%q: TorchMHA %v, FusedAttention %v, want both %v", fw, pt.TorchMHA, pt.FusedAttention, want)
		}
		ops, err := Ops("transformer-base", Shape{Batch: tokens, Precision: FP16, Framework: fw})
		if err != nil {
			t.Fatal(err)
		}
		count := map[string]int{}
		var kernels int
		for _, o := range ops {
			switch {
			case o.Strided:
				count["strided"]++
				var want units.Bytes
				switch {
				case strings.Contains(o.Name, "self_attn.qkv"):
					want = 2 * 3 * d * tokens
				case strings.Contains(o.Name, ".kv"):
					want = 2 * 2 * d * tokens
				default:
					want = 2 * d * tokens
				}
				if o.Read != want || o.Write != want {
					t.Errorf("%s: reads %v, writes %v, want %v each", o.Name, o.Read, o.Write, want)
				}
			case strings.HasSuffix(o.Name, ".select.grad"):
				count["select"]++
				kernels += o.KernelCount()
			case strings.HasSuffix(o.Name, ".accumulate"):
				count["sum"]++
			}
			// Fused, attention keeps q, k, v and a float32 log-sum-exp per
			// token and head (8 heads); unfused, its scores besides.
			if fused := units.Bytes(2*3*d*tokens + 4*tokens*8); o.Kind == Attention && o.Pass == Forward && (o.Saved == fused) != want {
				t.Errorf("%q: %s keeps %v, fused %v: want fused %v", fw, o.Name, o.Saved, fused, want)
			}
		}
		wantCount := map[string]int{}
		if want {
			wantCount = map[string]int{"strided": 12*2 + 6*2 + 18*2, "select": 12*3 + 6*2, "sum": 12*2 + 6*1}
		}
		for _, k := range []string{"strided", "select", "sum"} {
			if count[k] != wantCount[k] {
				t.Errorf("%q: %d %s operators, want %d", fw, count[k], k, wantCount[k])
			}
		}
		if want && kernels != 2*wantCount["select"] {
			t.Errorf("select_backward's kernels %d, want a fill and a copy each, %d", kernels, 2*wantCount["select"])
		}
	}
}
