package validate

import (
	"math"
	"strings"
	"testing"

	"scaleplan/fit/logs"
	"scaleplan/model"
	"scaleplan/predict"
)

// TestAttentionLabel checks a bench record's attention label: sdpa marks
// PyTorch's fused scaled_dot_product_attention, no label the unfused
// products, anything else an error naming the record and the valid value.
func TestAttentionLabel(t *testing.T) {
	for v, want := range map[string]bool{"sdpa": true, "": false} {
		got, err := fusedAttention(v)
		if err != nil || got != want {
			t.Errorf("attention %q: %v, %v; want %v", v, got, err, want)
		}
	}
	cat, prof := defaults(t)
	const header = `{"kind":"header","run":"r","tool":"torchbench","machine":{"cpu":"x","cores":16,"device_name":"NVIDIA H100 80GB HBM3","framework":"torch 2.5.0"},"config":{"seq_len":2048}}` + "\n"
	rec := `{"kind":"measurement","run":"r","model":"gpt3-125m","device":"h100-sxm5-80gb","precision":"amp-bf16","workers":1,"batch":8,"global_batch":8,"steps":10,"step_time_s":0.1,"samples_per_s":80,"labels":{"seq_len":"2048"ATTN}}` + "\n"
	read := func(attn string) ([]Measured, error) {
		lg, err := logs.Read(strings.NewReader(header+strings.Replace(rec, "ATTN", attn, 1)), "t.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		return (&LogReader{Catalog: cat}).Measurements(lg, prof, map[string]int{})
	}
	ms, err := read(`,"attention":"sdpa"`)
	if err != nil || len(ms) != 1 || !ms[0].FusedAttention || ms[0].SeqLen != 2048 || ms[0].Variant != "attention=sdpa seq_len=2048" {
		t.Fatalf("read %+v, %v; want one fused row of 2,048 tokens, its variant attention=sdpa seq_len=2048", ms, err)
	}
	// The operator fit lists the row's operators as validate predicts
	// them: fused, as the label says.
	c, ops, _, err := operatorList(&ms[0], cat.DeviceCalled(ms[0].Device), prof)
	if err != nil || !c.FusedAttention {
		t.Errorf("operatorList of the sdpa row: fused %v, %v; want fused", c.FusedAttention, err)
	}
	unfused, err := model.Ops("gpt3-125m", model.Shape{Batch: 8, Precision: model.BF16, SeqLen: 2048})
	if err != nil {
		t.Fatal(err)
	}
	attnBytes := func(ops []model.Op) (b float64) {
		for _, op := range ops {
			if op.Kind == model.Attention {
				b += float64(op.Read + op.Write)
			}
		}
		return b
	}
	if f, u := attnBytes(ops), attnBytes(unfused); !(f > 0 && f < u/2) {
		t.Errorf("operatorList of the sdpa row: attention moves %.4g bytes, unfused %.4g; want under half, no s² scores", f, u)
	}
	if _, err := read(`,"attention":"flash"`); err == nil || !strings.Contains(err.Error(), `t.jsonl:2: attention "flash": want sdpa`) {
		t.Errorf("attention flash: %v, want the record and the valid value", err)
	}
	// A sequence longer than GPT-3's position table cannot have run.
	m := ms[0]
	m.SeqLen = 4096
	if _, err := CompareMeasured([]Measured{m}, cat, prof, predict.Options{}); err == nil || !strings.Contains(err.Error(), "sequence length 4096: gpt3-125m's learned positions hold at most 2048 tokens") {
		t.Errorf("4,096 tokens of gpt3-125m: %v, want the position table's limit", err)
	}
}

// TestAtSeqLenFused checks the memory model's activations of GPT-3 Small
// against Korthikanti et al. 2022's bytes per layer in 16-bit, s·d·34 +
// 5·a·s² unfused (Section 4.1) and s·d·34 fused with its fp32 log-sum-exp,
// 4·a·s: the profile's figure, at 2,048 tokens unfused, scales by their
// ratio to another length or to fused attention, and is kept as it is
// when neither changes.
func TestAtSeqLenFused(t *testing.T) {
	_, prof := defaults(t)
	m, err := prof.Model("gpt3-125m")
	if err != nil {
		t.Fatal(err)
	}
	const d, a = 768, 12
	layer := func(s float64, fused bool) float64 {
		if fused {
			return s*d*34 + 4*a*s
		}
		return s*d*34 + 5*a*s*s
	}
	for _, c := range []struct {
		seq   int
		fused bool
	}{{0, false}, {2048, false}, {1024, false}, {0, true}, {2048, true}, {512, true}} {
		got, err := atSeqLen(m, c.seq, c.fused, "")
		if err != nil {
			t.Fatal(err)
		}
		s := float64(c.seq)
		if s == 0 {
			s = 2048
		}
		want := float64(m.Activations.FP16) * layer(s, c.fused) / layer(2048, false)
		if g := float64(got.Activations.FP16); math.Abs(g/want-1) > 1e-12 {
			t.Errorf("seq %d, fused %v: %v bytes a sequence, want %v", c.seq, c.fused, g, want)
		}
		if (c.seq == 0 || c.seq == 2048) && !c.fused && got != m {
			t.Errorf("seq %d unfused: a copy, want the profile itself", c.seq)
		}
	}
}
