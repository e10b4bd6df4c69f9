package llm

import (
	"strings"
	"testing"

	"scaleplan/internal/units"
	"scaleplan/model"
)

func good() Layout {
	return Layout{TP: 8, PP: 4, DP: 2, CP: 1, EP: 1, MicroBatch: 1, GlobalBatch: 16}
}

// TestValidate checks that each bad field is named with its valid
// choices, and that a good layout passes.
func TestValidate(t *testing.T) {
	llama, _ := model.LookupTransformer("llama2-70b") // 64 heads, 8 kv heads, 80 layers
	mix, _ := model.LookupTransformer("mixtral-8x7b")
	oddFFN := llama
	oddFFN.FFN = 28670
	if err := good().Validate(llama); err != nil {
		t.Fatalf("good layout: %v", err)
	}
	cases := []struct {
		name  string
		sh    model.TransformerShape
		edit  func(*Layout)
		wants []string
	}{
		{"zero degree", llama, func(l *Layout) { l.DP = 0 }, []string{"dp 0", "at least 1"}},
		{"tp heads", llama, func(l *Layout) { l.TP = 3 }, []string{"tp 3", "divisor of the 64 heads"}},
		{"tp kv", llama, func(l *Layout) { l.TP = 32; l.PP = 1; l.GlobalBatch = 2 }, []string{}},
		{"tp ffn", oddFFN, func(l *Layout) {}, []string{"tp 8", "feed-forward width 28670"}},
		{"pp layers", llama, func(l *Layout) { l.PP = 3; l.GlobalBatch = 18 }, []string{"pp 3", "divisor of the 80 layers"}},
		{"virtual layers", llama, func(l *Layout) { l.VirtualStages = 3 }, []string{"virtual stages 3", "80 layers"}},
		{"virtual micro-batches", llama, func(l *Layout) { l.VirtualStages = 2; l.GlobalBatch = 12 }, []string{"6 micro-batches", "multiple of pp 4"}},
		{"virtual without pp", llama, func(l *Layout) { l.PP = 1; l.VirtualStages = 2 }, []string{"virtual stages 2", "without pipeline"}},
		{"global batch", llama, func(l *Layout) { l.GlobalBatch = 15 }, []string{"global batch 15", "micro-batch × dp = 2"}},
		{"micro-batch", llama, func(l *Layout) { l.MicroBatch = 0 }, []string{"micro-batch 0"}},
		{"cp seq", llama, func(l *Layout) { l.CP = 3; l.GlobalBatch = 16 }, []string{"cp 3", "multiple of 2·cp"}},
		{"cp fused", llama, func(l *Layout) { l.CP = 2 }, []string{"cp 2", "fused attention"}},
		{"ep dense", llama, func(l *Layout) { l.EP = 2 }, []string{"ep 2", "divisor of the 0 experts"}},
		{"ep experts", mix, func(l *Layout) { l.EP = 3; l.DP = 3; l.GlobalBatch = 3 }, []string{"ep 3", "divisor of the 8 experts"}},
		{"ep dp", mix, func(l *Layout) { l.EP = 4 }, []string{"ep 4", "divisor of dp·cp 2"}},
		{"sharding", llama, func(l *Layout) { l.Sharding = "zero4" }, []string{`sharding "zero4"`, "zero1", "distopt"}},
		{"hsdp node", llama, func(l *Layout) { l.Sharding = ShardHSDP }, []string{"node gpus 0", "hsdp"}},
		{"hsdp group", llama, func(l *Layout) { l.Sharding, l.NodeGPUs, l.DP, l.GlobalBatch = ShardHSDP, 24, 4, 16 }, []string{"shard group of 3", "divide dp·cp 4"}},
		{"recompute", llama, func(l *Layout) { l.Recompute = "some" }, []string{`recompute "some"`, "none, selective or full"}},
		{"sequence", llama, func(l *Layout) { l.SeqLen = -1 }, []string{"sequence length -1"}},
		{"sp tokens", llama, func(l *Layout) { l.SequenceParallel = true; l.SeqLen = 100 }, []string{"sequence parallel", "multiple of tp 8"}},
	}
	for _, c := range cases {
		l := good()
		c.edit(&l)
		err := l.Validate(c.sh)
		if len(c.wants) == 0 {
			// 32 ranks over 8 kv heads: each kv head replicated 4 times.
			if err != nil {
				t.Errorf("%s: %v, want none", c.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: no error, want %q", c.name, c.wants)
			continue
		}
		for _, w := range c.wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q, want it to contain %q", c.name, err, w)
			}
		}
	}
}

// TestValidateShapes checks the shapes a layout refuses: an invalid shape
// and an encoder-decoder.
func TestValidateShapes(t *testing.T) {
	tb, _ := model.LookupTransformer("transformer-big")
	l := Layout{TP: 1, PP: 1, DP: 1, CP: 1, EP: 1, MicroBatch: 1, GlobalBatch: 1}
	if err := l.Validate(tb); err == nil || !strings.Contains(err.Error(), "encoder-decoder") {
		t.Errorf("encoder-decoder: %v, want an error naming it", err)
	}
	if _, err := l.Memory(model.TransformerShape{Name: "empty"}); err == nil {
		t.Error("empty shape: no error")
	}
	g, _ := model.LookupTransformer("gpt3-125m")
	if _, err := l.MemoryWith(g, Allowance{Fraction: 1}); err == nil || !strings.Contains(err.Error(), "fraction") {
		t.Errorf("allowance fraction 1: %v, want an error naming the fraction", err)
	}
	if _, _, err := (Layout{DP: 0}).MaxMicroBatch(g, units.GiB); err == nil {
		t.Error("max micro-batch of dp 0: no error")
	}
}

// TestNoPanic runs odd layouts through Memory: each returns a value or
// an error.
func TestNoPanic(t *testing.T) {
	g, _ := model.LookupTransformer("gpt3-125m")
	vals := []int{-1, 0, 1, 2, 3, 12}
	for _, tp := range vals {
		for _, pp := range vals {
			for _, dp := range vals {
				for _, v := range vals {
					l := Layout{TP: tp, PP: pp, DP: dp, CP: 1, EP: 1, VirtualStages: v, MicroBatch: 1, GlobalBatch: 24}
					if m, err := l.Memory(g); err == nil && !(m.Peak.Total() > 0) {
						t.Errorf("%+v: total %v", l, m.Peak.Total())
					}
				}
			}
		}
	}
}

// TestGQAReplicatedKV checks the key and value activations of a tensor-
// parallel rank under grouped-query attention: Llama-3-70B's 8 kv heads of
// 128 split over 8 ranks give one head each, and over 16 ranks one head
// each too (replicated), so that going from 8 to 16 ranks halves Q and the
// output projection's input but not K and V.
func TestGQAReplicatedKV(t *testing.T) {
	sh, _ := model.LookupTransformer("llama3-70b")
	sh.FusedAttention = true
	l8 := Layout{TP: 8, SequenceParallel: true, PP: 1, DP: 1, CP: 1, EP: 1, MicroBatch: 1, GlobalBatch: 1}
	l16 := l8
	l16.TP = 16
	tok, d, f, hd := 8192.0, 8192.0, 28672.0, 128.0
	layer := func(tp float64) float64 {
		return tok * (2*4*d/tp + 2*(2*d/tp+2*hd) + 2*3*f/tp + 4*64/tp)
	}
	near(t, "tp 8", l8.LayerActivations(sh), layer(8), 1e-12)
	near(t, "tp 16", l16.LayerActivations(sh), layer(16), 1e-12)
}
