package llm

import (
	"math"
	"testing"

	"scaleplan/internal/units"
	"scaleplan/model"
)

// korthikanti returns a model of Korthikanti et al. 2022, Table 3: GPT-3
// layers (GELU, f = 4h, learned positions, pre-norm LayerNorm, biases,
// dropout, tied embeddings) with a vocabulary of 51,200 and sequences of
// 2,048 tokens.
func korthikanti(name string, heads, hidden, layers int) model.TransformerShape {
	return model.TransformerShape{Name: name, Stack: model.DecoderOnly, Layers: layers, Hidden: hidden, Heads: heads,
		FFN: 4 * hidden, Activation: model.FFNGELU, Vocab: 51200, SeqLen: 2048, Positions: model.LearnedPositions,
		TiedEmbeddings: true, Norm: model.NormLayer, PreNorm: true, Bias: true, Dropout: true}
}

// table3 is Korthikanti et al. 2022, Table 3: the model (heads, hidden,
// layers), its tensor- and pipeline-parallel sizes, the GPUs, global
// batch and micro-batch.
var table3 = []struct {
	name                 string
	heads, hidden, layer int
	tp, pp, gpus, gbs, b int
}{
	{"22B", 64, 6144, 48, 8, 1, 8, 4, 4},
	{"175B", 96, 12288, 96, 8, 8, 64, 64, 1},
	{"530B", 128, 20480, 105, 8, 35, 280, 280, 1},
	{"1T", 160, 25600, 128, 8, 64, 512, 512, 1},
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol*math.Abs(want) {
		t.Errorf("%s: %.6g, want %.6g (±%.2g %%)", what, got, want, 100*tol)
	}
}

// TestKorthikantiTable2 checks one layer's activations against
// Korthikanti et al. 2022, Table 2, row by row, for the Table 3 models.
func TestKorthikantiTable2(t *testing.T) {
	for _, c := range table3 {
		sh := korthikanti(c.name, c.heads, c.hidden, c.layer)
		s, b, h, a, tp := 2048.0, float64(c.b), float64(c.hidden), float64(c.heads), float64(c.tp)
		sbh := s * b * h
		rows := []struct {
			sp   bool
			rc   model.Recompute
			want float64
		}{
			{false, model.RecomputeNone, sbh * (10 + 24/tp + 5*a*s/(h*tp))},
			{true, model.RecomputeNone, sbh / tp * (34 + 5*a*s/h)},
			{false, model.RecomputeSelective, sbh * (10 + 24/tp)},
			{true, model.RecomputeSelective, sbh * 34 / tp},
			{false, model.RecomputeFull, 2 * sbh},
		}
		for _, r := range rows {
			l := Layout{TP: c.tp, SequenceParallel: r.sp, PP: c.pp, DP: 1, CP: 1, EP: 1, MicroBatch: c.b, GlobalBatch: c.gbs, Recompute: r.rc}
			near(t, c.name+" "+string(r.rc), l.LayerActivations(sh), r.want, 1e-12)
		}
	}
}

// TestKorthikantiFirstStage checks the first pipeline stage's activations
// per GPU for the Table 3 configurations against Korthikanti et al.
// 2022: eq. (5) and Table 2 times the L layers the first stage keeps
// under 1F1B (Section 4.2.3), plus Section 4.3's input-embedding dropout
// and, without pipelining, the final norm, output layer and logits:
//
//	sbhL/t·(p/L + δ(p=1)·4/L·(1 + v/h))
//
// Without sequence parallelism the replicated edge terms are left out of
// the reference (the paper gives them under sequence parallelism only),
// hence the 5 % tolerance.
func TestKorthikantiFirstStage(t *testing.T) {
	for _, c := range table3 {
		sh := korthikanti(c.name, c.heads, c.hidden, c.layer)
		s, b, h, a, tp, p, L := 2048.0, float64(c.b), float64(c.hidden), float64(c.heads), float64(c.tp), float64(c.pp), float64(c.layer)
		if c.tp*c.pp != c.gpus {
			t.Fatalf("%s: tp·pp %d, want the %d GPUs of Table 3", c.name, c.tp*c.pp, c.gpus)
		}
		sbhL := s * b * h * L
		extra := sbhL / tp * p / L
		if c.pp == 1 {
			extra += sbhL / tp * 4 / L * (1 + 51200/h)
		}
		rows := []struct {
			sp   bool
			rc   model.Recompute
			want float64
		}{
			{true, model.RecomputeNone, sbhL/tp*(34+5*a*s/h) + extra},
			{true, model.RecomputeSelective, sbhL*34/tp + extra},
			{false, model.RecomputeNone, sbhL * (10 + 24/tp + 5*a*s/(h*tp))},
			{false, model.RecomputeSelective, sbhL * (10 + 24/tp)},
		}
		for _, r := range rows {
			l := Layout{TP: c.tp, SequenceParallel: r.sp, PP: c.pp, DP: 1, CP: 1, EP: 1, MicroBatch: c.b, GlobalBatch: c.gbs, Recompute: r.rc}
			m, err := l.Memory(sh)
			if err != nil {
				t.Fatal(err)
			}
			tol := 1e-9
			if !r.sp {
				tol = 0.05
			}
			near(t, c.name+" "+string(r.rc), float64(m.First.Activations), r.want, tol)
		}
	}
}

// TestKorthikantiFiveTimes checks the paper's headline (abstract and
// Section 6.1, Figure 7): sequence parallelism with selective
// recomputation needs about a fifth of the activations of tensor
// parallelism alone, for each Table 3 model.
func TestKorthikantiFiveTimes(t *testing.T) {
	for _, c := range table3 {
		sh := korthikanti(c.name, c.heads, c.hidden, c.layer)
		base := Layout{TP: c.tp, PP: c.pp, DP: 1, CP: 1, EP: 1, MicroBatch: c.b, GlobalBatch: c.gbs}
		both := base
		both.SequenceParallel, both.Recompute = true, model.RecomputeSelective
		mb, err := base.Memory(sh)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := both.Memory(sh)
		if err != nil {
			t.Fatal(err)
		}
		if r := float64(mb.First.Activations / ms.First.Activations); r < 4.5 || r > 6.5 {
			t.Errorf("%s: tensor parallel alone keeps %.2f times the activations of sequence parallel + selective, want about 5", c.name, r)
		}
	}
}

// TestKorthikantiSelectiveSaving checks Korthikanti et al. 2022, Section
// 5: selective recomputation of the attention's s² part saves 70 % of a
// layer's activations for GPT-3 (5as/h = 80) and 65 % for MT-NLG 530B
// (5as/h = 64), with tensor parallelism 8 and sequence parallelism as in
// Table 3 (the paper rounds to whole percent).
func TestKorthikantiSelectiveSaving(t *testing.T) {
	for _, c := range []struct {
		sh   model.TransformerShape
		want float64
	}{{korthikanti("175B", 96, 12288, 96), 70}, {korthikanti("530B", 128, 20480, 105), 65}} {
		l := Layout{TP: 8, SequenceParallel: true, PP: 1, DP: 1, CP: 1, EP: 1, MicroBatch: 1, GlobalBatch: 1}
		none := l.LayerActivations(c.sh)
		l.Recompute = model.RecomputeSelective
		if got := 100 * (1 - l.LayerActivations(c.sh)/none); math.Abs(got-c.want) > 0.5 {
			t.Errorf("%s: selective recomputation saves %.1f %% of a layer's activations, the paper %g %%", c.sh.Name, got, c.want)
		}
	}
}

// TestInterleavedFactor checks the first stage of the interleaved
// schedule: L·(1 + (p − 1)/(p·v)) layers in flight (Korthikanti et al.
// 2022, Section 4.2.3).
func TestInterleavedFactor(t *testing.T) {
	sh := korthikanti("175B", 96, 12288, 96)
	for _, v := range []int{2, 3, 4} {
		l := Layout{TP: 8, SequenceParallel: true, PP: 8, VirtualStages: v, DP: 1, CP: 1, EP: 1, MicroBatch: 1, GlobalBatch: 64}
		p := 8.0
		near(t, "interleaved", l.inFlight(sh, 0), 96*(1+(p-1)/(p*float64(v))), 1e-12)
	}
	l := Layout{TP: 8, PP: 8, DP: 1, CP: 1, EP: 1, MicroBatch: 1, GlobalBatch: 4}
	if got := l.inFlight(sh, 0); got != 12*4 {
		t.Errorf("1F1B with 4 micro-batches on 8 stages: %g layers in flight, want 48", got)
	}
}

// TestZeROFigure1 checks the model states of Rajbhandari et al. 2020,
// Figure 1: Ψ = 7.5 B parameters, N_d = 64, K = 12: 120 GB, 31.4 GB,
// 16.6 GB and 1.9 GB per GPU for the baseline, P_os, P_os+g, P_os+g+p.
func TestZeROFigure1(t *testing.T) {
	for _, c := range []struct {
		sh   Sharding
		want float64
	}{{ShardNone, 120}, {ShardZeRO1, 31.4}, {ShardZeRO2, 16.6}, {ShardZeRO3, 1.9}} {
		got := ModelStates(7.5e9, 64, c.sh, 2).Total() / 1e9
		if math.Abs(got-c.want) > 0.05 {
			t.Errorf("%s: %.3f GB, want %.1f GB", c.sh, got, c.want)
		}
	}
}

// TestDistributedOptimizer checks Megatron-LM's bytes per parameter
// (docs, "Distributed Optimizer"): bf16 weights, fp32 gradients, 18
// without and 6 + 12/d with the distributed optimizer, d = DP·CP.
func TestDistributedOptimizer(t *testing.T) {
	sh, _ := model.LookupTransformer("llama2-7b")
	for _, c := range []struct {
		sharding Sharding
		dp, cp   int
		want     float64
	}{{ShardNone, 8, 1, 18}, {ShardDistOpt, 8, 1, 6 + 12.0/8}, {ShardDistOpt, 4, 2, 6 + 12.0/8}, {ShardDistOpt, 64, 1, 6 + 12.0/64}} {
		l := Layout{TP: 1, PP: 1, DP: c.dp, CP: c.cp, EP: 1, MicroBatch: 1, GlobalBatch: c.dp, Sharding: c.sharding, FP32Grads: true}
		sh.FusedAttention = true
		m, err := l.Memory(sh)
		if err != nil {
			t.Fatal(err)
		}
		got := float64(m.First.Weights+m.First.Gradients+m.First.Optimizer) / float64(sh.Params())
		near(t, string(c.sharding), got, c.want, 1e-12)
	}
}

// TestParamsSplit checks that the stages' parameters add up to the
// shape's closed-form count (model.TransformerShape.Params): one stage
// holds them all; two stages hold them all plus, for tied embeddings, the
// last stage's copy of the token table (none under a span head, which has
// no output projection).
func TestParamsSplit(t *testing.T) {
	for _, sh := range model.TransformerShapes() {
		if sh.Stack == model.EncoderDecoder {
			continue
		}
		one := Layout{TP: 1, PP: 1, DP: 1, CP: 1, EP: 1}
		if got := one.params(sh, 0); got.dense+got.expert != sh.Params() {
			t.Errorf("%s on one stage: %d parameters, want %d", sh.Name, got.dense+got.expert, sh.Params())
		}
		two := one
		two.PP = 2
		want := sh.Params()
		if sh.TiedEmbeddings && !sh.SpanHead {
			want += int64(sh.Vocab) * int64(sh.Hidden)
		}
		f, l := two.params(sh, 0), two.params(sh, 1)
		if got := f.dense + f.expert + l.dense + l.expert; got != want {
			t.Errorf("%s on two stages: %d parameters, want %d", sh.Name, got, want)
		}
	}
}

// TestParamsTensorParallel checks one GPU's share of GPT-3 175B under
// tensor parallelism 8 and 16 stages by hand: per layer the q, k, v,
// output and feed-forward matrices 12·d²/8, their split biases
// (3d + 4d)/8, the replicated output biases 2d and norms 4d; the first
// stage adds the token table V·d/8 and the position table 2048·d.
func TestParamsTensorParallel(t *testing.T) {
	sh, _ := model.LookupTransformer("gpt3-175b")
	l := Layout{TP: 8, PP: 16, DP: 1, CP: 1, EP: 1}
	d := int64(12288)
	layer := 12*d*d/8 + 7*d/8 + 2*d + 4*d
	want := 6*layer + 50257*d/8 + 2048*d
	if got := l.params(sh, 0); got.dense != want {
		t.Errorf("first stage: %d parameters, want %d", got.dense, want)
	}
	// Mixtral 8x7B with 8-way expert parallelism keeps one expert of
	// each layer: the total less 7 of the 8 experts of its 32 layers.
	mx, _ := model.LookupTransformer("mixtral-8x7b")
	e := Layout{TP: 1, PP: 1, DP: 8, CP: 1, EP: 8}
	p := e.params(mx, 0)
	if got, want := p.dense+p.expert, mx.Params()-32*7*mx.ExpertParams(); got != want {
		t.Errorf("mixtral-8x7b, ep 8: %d parameters, want %d", got, want)
	}
}

// TestGPT3On1024A100 checks that GPT-3 175B fits 1,024 A100 80GB with
// Narayanan et al. 2021's layout (tensor 8, pipeline 16, data 8,
// micro-batch 1, full recomputation, fp32 gradients, no optimizer
// sharding), against a hand count: 18 bytes for each of the first
// stage's 1,461,821,952 parameters (TestParamsTensorParallel); 2·sbh for
// each of the 96 layer-micro-batches in flight, the embedding dropout
// masks sbh of 16 micro-batches, and one layer recomputed,
// sbh·(10 + 24/8 + 5·96·2048/(12288·8)) − 2·sbh = 21·sbh.
func TestGPT3On1024A100(t *testing.T) {
	sh, _ := model.LookupTransformer("gpt3-175b")
	l := Layout{TP: 8, PP: 16, DP: 8, CP: 1, EP: 1, MicroBatch: 1, GlobalBatch: 1536,
		Recompute: model.RecomputeFull, FP32Grads: true}
	if l.World() != 1024 {
		t.Fatalf("world %d, want 1024", l.World())
	}
	m, err := l.Memory(sh)
	if err != nil {
		t.Fatal(err)
	}
	sbh := 2048.0 * 12288
	counted := 18*1461821952 + (2*96+16+21)*sbh
	want := counted*1.05 + float64(units.GiB)
	near(t, "gpt3-175b per GPU", float64(m.Peak.Total()), want, 1e-9)
	if m.Peak.Stage != 0 {
		t.Errorf("peak on stage %d, want the first", m.Peak.Stage)
	}
	if h := m.Headroom(80 * units.GiB); h <= 0 {
		t.Errorf("gpt3-175b does not fit an A100 80GB: %v over", -h)
	}
}

// TestLlama2On8H100 checks that Llama-2-7B fits 8 H100 80GB with ZeRO-1,
// micro-batch 1 of 4,096 tokens and fused attention (Touvron et al.
// 2023, Section 2.4: xformers' memory-efficient attention), by hand:
// 2 + 2 bytes per parameter and 12/8 for the sharded optimizer; per layer
// and token 2·(4d) for the norms' and projections' inputs, 2·(4d) for
// Q, K, V and the output projection's input, 2·3f for SwiGLU's inputs
// and 4·32 for the fp32 log-sum-exp; the final norm's and output
// projection's inputs 2·2d and the fp32 logits 4V per token.
func TestLlama2On8H100(t *testing.T) {
	sh, _, m := llama7b(t, ShardZeRO1, 1024)
	states, act := llamaHand(sh)
	near(t, "llama2-7b per GPU", float64(m.Peak.Total()), (states+act)*1.05+float64(units.GiB), 1e-9)
	if h := m.Headroom(80 * units.GiB); h <= 0 {
		t.Errorf("llama2-7b does not fit an H100 80GB: %v over", -h)
	}
}

// llama7b returns Llama-2-7B with fused attention, a layout of 8
// data-parallel ranks with sharding sh, micro-batch 1 and global batch
// gbs, and its memory.
func llama7b(t *testing.T, sh Sharding, gbs int) (model.TransformerShape, Layout, Memory) {
	t.Helper()
	s, _ := model.LookupTransformer("llama2-7b")
	s.FusedAttention = true
	l := Layout{TP: 1, PP: 1, DP: 8, CP: 1, EP: 1, MicroBatch: 1, GlobalBatch: gbs, Sharding: sh}
	m, err := l.Memory(s)
	if err != nil {
		t.Fatal(err)
	}
	return s, l, m
}

// llamaHand returns Llama-2-7B's model states under ZeRO-1 on 8 GPUs and
// its activations per micro-batch of one sequence, by hand.
func llamaHand(sh model.TransformerShape) (states, act float64) {
	d, f, tok := 4096.0, 11008.0, 4096.0
	states = (2 + 2 + 12.0/8) * float64(sh.Params())
	layer := tok * (2*4*d + 2*4*d + 2*3*f + 4*32)
	act = 32*layer + tok*(2*2*d+4*32000)
	return states, act
}

// TestMaxMicroBatch checks the largest micro-batch of Llama-2-7B on an
// H100 80GB against the hand count of TestLlama2On8H100: activations grow
// linearly in b without pipelining, so b ≤ ((80 GiB − 1 GiB)/1.05 −
// states)/act.
func TestMaxMicroBatch(t *testing.T) {
	sh, l, _ := llama7b(t, ShardZeRO1, 1024)
	states, act := llamaHand(sh)
	want := int(math.Floor(((80*float64(units.GiB)-float64(units.GiB))/1.05 - states) / act))
	got, m, err := l.MaxMicroBatch(sh, 80*units.GiB)
	if err != nil {
		t.Fatal(err)
	}
	if got != want || want < 1 {
		t.Errorf("largest micro-batch %d, want %d", got, want)
	}
	if m.Headroom(80*units.GiB) < 0 {
		t.Errorf("the largest micro-batch's memory %v exceeds 80 GiB", m.Peak.Total())
	}
	if _, _, err := l.MaxMicroBatch(sh, 40*units.GiB); err == nil {
		t.Error("llama2-7b on a 40 GiB GPU: no error, want none fits")
	}
}

// TestZeRO3Gathered checks FSDP's states and its gathered layers: the
// states shared by all 8 ranks, plus two layers' 16-bit weights and one
// layer's gradients unsharded.
func TestZeRO3Gathered(t *testing.T) {
	sh, l, m := llama7b(t, ShardFSDP, 8)
	layer, _ := sh.LayerParams()
	near(t, "fsdp states", float64(m.First.Weights+m.First.Gradients+m.First.Optimizer), 16*float64(sh.Params())/8, 1e-12)
	near(t, "fsdp gathered", float64(m.First.Gathered), 6*float64(layer), 1e-12)
	h := l
	h.Sharding, h.DP, h.GlobalBatch, h.NodeGPUs = ShardHSDP, 32, 32, 8
	mh, err := h.Memory(sh)
	if err != nil {
		t.Fatal(err)
	}
	if mh.First.Group != 8 {
		t.Errorf("hsdp over 32 ranks, 8 a node: shard group %d, want 8", mh.First.Group)
	}
}

// TestContextParallel checks that context parallelism divides a layer's
// activations by CP (fused attention has no s² part).
func TestContextParallel(t *testing.T) {
	sh, _ := model.LookupTransformer("llama3-8b")
	sh.FusedAttention = true
	one := Layout{TP: 1, PP: 1, DP: 4, CP: 1, EP: 1, MicroBatch: 1, GlobalBatch: 4}
	four := one
	four.CP = 4
	near(t, "cp 4", four.LayerActivations(sh), one.LayerActivations(sh)/4, 1e-12)
}
