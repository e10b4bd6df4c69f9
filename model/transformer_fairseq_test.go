package model

import (
	"strings"
	"testing"

	"scaleplan/internal/units"
)

// fairseqOps returns the operators of a step of transformer-big or
// transformer-base over tokens token pairs at precision p.
func fairseqOps(t *testing.T, name string, tokens int, p Precision) []Op {
	t.Helper()
	ops, err := Ops(name, Shape{Batch: tokens, Precision: p})
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

// TestLabelSmoothedLossBytes checks the label-smoothed cross-entropy's
// bytes per logit against PyTorch's kernels as fairseq runs it for the
// Transformer, and DeepLearningExamples' LabelSmoothing for GNMT (a mean
// where fairseq sums): forward the log-softmax reads p and writes 4, the
// smoothing reduction reads 4; backward the gather's zero tensor writes
// 4, autograd's sum of the two gradients reads 4 and writes 4, the
// log-softmax's backward reads 8 and writes p.
func TestLabelSmoothedLossBytes(t *testing.T) {
	// transformer-big's logits: fairseq's dictionary, 33,708 padded to a
	// multiple of 8.
	const tokens, vocab = 1000, 33712
	const pairs, seq = 16, 20 // GNMT: sentence pairs of seq tokens
	for _, c := range []struct {
		p        Precision
		fwd, bwd float64 // bytes per logit
	}{{FP16, 2 + 4 + 4, 4 + 8 + 8 + 2}, {FP32, 4 + 4 + 4, 4 + 8 + 8 + 4}} {
		gnmt, err := Ops("gnmt", Shape{Batch: pairs, SeqLen: seq, Precision: c.p})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []struct {
			name   string
			ops    []Op
			logits float64
			vocab  float64
		}{
			{"transformer-big", fairseqOps(t, "transformer-big", tokens, c.p), tokens * vocab, vocab},
			{"gnmt", gnmt, pairs * seq * gnmtVocab, gnmtVocab},
		} {
			var fwd, bwd units.Bytes
			for _, o := range m.ops {
				if o.Kind != Loss {
					continue
				}
				if o.Pass == Forward {
					fwd += o.Read + o.Write
				} else {
					bwd += o.Read + o.Write
				}
			}
			// The smoothing reduction writes one float64-sized value per
			// token (its result and the gathered value), 8/V per logit.
			if got, want := float64(fwd)/m.logits, c.fwd+8.0/m.vocab; !near(got, want, 1e-9) {
				t.Errorf("%s %s forward: %.6f bytes per logit, want %.6f", m.name, c.p, got, want)
			}
			if got := float64(bwd) / m.logits; !near(got, c.bwd, 1e-9) {
				t.Errorf("%s %s backward: %.6f bytes per logit, want %g", m.name, c.p, got, c.bwd)
			}
		}
	}
}

// TestFairseqDropouts checks the dropouts of the two translation shapes:
// transformer_wmt_en_de_big_t2t sets relu_dropout 0.1, one dropout over
// the f = 4096 inner activations of each of the 12 layers' feed-forward
// block, and DeepLearningExamples drops out the two stacks' embeddings
// and every attention's probabilities in float32 under autocast;
// transformer-base, engine/torchbench's torch.nn.Transformer, has none of
// these operators.
func TestFairseqDropouts(t *testing.T) {
	const tokens = 640
	for _, c := range []struct {
		name              string
		ffn               int
		relu, embed, attn int
	}{{"transformer-big", 4096, 12, 2, 18}, {"transformer-base", 2048, 0, 0, 0}} {
		relu, embed, attn := 0, 0, 0
		for _, o := range fairseqOps(t, c.name, tokens, FP16) {
			if o.Pass != Forward {
				continue
			}
			switch {
			case strings.HasSuffix(o.Name, ".relu_dropout"):
				relu++
				if want := units.Bytes(2 * tokens * c.ffn); o.Read != want || o.Saved != want/2 {
					t.Errorf("%s %s: reads %v and keeps %v, want %v and a 1-byte mask %v", c.name, o.Name, o.Read, o.Saved, want, want/2)
				}
			case strings.HasSuffix(o.Name, "embed_dropout"):
				embed++
			case strings.HasSuffix(o.Name, ".attention.dropout"):
				attn++
				if !o.Float32 {
					t.Errorf("%s %s: not float32 under autocast", c.name, o.Name)
				}
			}
		}
		if relu != c.relu || embed != c.embed || attn != c.attn {
			t.Errorf("%s: %d ReLU, %d embedding, %d attention dropouts; want %d, %d, %d", c.name, relu, embed, attn, c.relu, c.embed, c.attn)
		}
	}
}

// TestSplitAttentionBytes checks fairseq's attention, split into its
// products, softmax and dropout, against the unsplit operator's FLOPs and
// the s² values PyTorch's kernels move: the score product writes the
// scores and the value product reads the probabilities (2 values a
// score), the softmax and the dropout each read and write one, and a
// decoder's causal mask is added in place (2 more).
func TestSplitAttentionBytes(t *testing.T) {
	const tokens, s, heads = 640, 32, 16
	scores := float64(tokens * s * heads)
	ops := fairseqOps(t, "transformer-big", tokens, FP16)
	moved := map[string]float64{}
	for _, o := range ops {
		if o.Pass != Forward {
			continue
		}
		for _, layer := range []string{"encoder.layers.0.self_attn.attention", "decoder.layers.0.self_attn.attention"} {
			if strings.HasPrefix(o.Name, layer+".") {
				moved[layer] += float64(o.Read+o.Write) / 2 // 16-bit values
			}
			if o.Name == layer {
				q := float64(3 * tokens * 1024)
				moved[layer] += float64(o.Read+o.Write)/2 - q - float64(tokens*1024) // less Q, K, V and the output
				if want := 4.0 * tokens * s * 1024; !near(o.FLOPs, want, 1e-12) {
					t.Errorf("%s: %g FLOPs, want 4·tokens·s·d = %g", o.Name, o.FLOPs, want)
				}
			}
		}
	}
	for layer, want := range map[string]float64{"encoder.layers.0.self_attn.attention": 6, "decoder.layers.0.self_attn.attention": 8} {
		if got := moved[layer] / scores; !near(got, want, 1e-12) {
			t.Errorf("%s: %g values moved per score forward, want %g", layer, got, want)
		}
	}
}

// near reports whether got is within rel of want.
func near(got, want, rel float64) bool {
	d := got - want
	if d < 0 {
		d = -d
	}
	return d <= rel*max(1, want)
}
