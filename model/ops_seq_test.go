package model

import (
	"math"
	"strings"
	"testing"

	"scaleplan/internal/units"
)

// seqGenerators are the sequence models' generator names.
func seqGenerators() []string {
	names := []string{"transformer-base", "transformer-big", "gnmt"}
	for _, s := range TransformerShapes() {
		if !strings.HasPrefix(s.Name, "transformer-") {
			names = append(names, s.Name)
		}
	}
	return names
}

// smallSeq is a sequence length that keeps the tests quick; 0 for the
// models whose default is already short.
func smallSeq(name string) int {
	if strings.HasPrefix(name, "transformer-") || name == "gnmt" {
		return 0
	}
	return 128
}

// TestSeqOpsInvariants checks every sequence generator's operators: finite
// and non-negative figures, forward operators' parameters summing to the
// model's, matrix products whose FLOPs are 2·M·N·K·Groups, the backward
// pass's matrix products twice the forward's.
func TestSeqOpsInvariants(t *testing.T) {
	for _, name := range seqGenerators() {
		for _, p := range []Precision{FP32, BF16} {
			ops, err := Ops(name, Shape{Batch: 3, SeqLen: smallSeq(name), Precision: p})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var params int64
			var fwd, bwd float64
			for _, o := range ops {
				for _, v := range []float64{o.FLOPs, float64(o.Read), float64(o.Write), float64(o.Saved), float64(o.Params)} {
					if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
						t.Fatalf("%s %s: %+v has a negative or non-finite figure", name, p, o)
					}
				}
				if o.Pass != Forward && (o.Params != 0 || o.Saved != 0) {
					t.Errorf("%s %s: %s keeps parameters or activations", name, p, o.Name)
				}
				if o.Kind == MatMul && !strings.Contains(o.Name, "experts") {
					if want := 2 * float64(o.M*o.N*o.K*o.Groups); math.Abs(o.FLOPs-want) > 1e-9*want {
						t.Errorf("%s: %s FLOPs %g, 2·M·N·K·G %g", name, o.Name, o.FLOPs, want)
					}
				}
				if o.Kind == MatMul && o.Pass == Forward {
					fwd += o.FLOPs
				} else if o.Kind == MatMul && !strings.HasSuffix(o.Name, ".recompute") {
					bwd += o.FLOPs
				}
				params += o.Params
			}
			if want := seqModelParams(t, name); params != want {
				t.Errorf("%s: operators own %d parameters, the model has %d", name, params, want)
			}
			if relErr(bwd, 2*fwd) > 1e-12 {
				t.Errorf("%s: backward matrix products %g, forward %g", name, bwd, fwd)
			}
			if last := ops[len(ops)-1]; last.Pass != UpdatePass || last.Kind != Update {
				t.Errorf("%s: last operator %s, want the update", name, last.Name)
			}
		}
	}
}

// seqModelParams returns a sequence model's parameters: the shipped profile's
// for the translation models, the shape's closed form otherwise.
func seqModelParams(t *testing.T, name string) int64 {
	if name == "gnmt" || strings.HasPrefix(name, "transformer-") {
		return defaultModel(t, name).Params
	}
	return tfShape(t, name).Params()
}

// TestSeqOpsLinearInBatch checks that the FLOPs and kept activations
// double with the batch, that the bytes moved grow by the same amount per
// sample (the weights' bytes are the constant part), and that the update
// does not depend on the batch.
func TestSeqOpsLinearInBatch(t *testing.T) {
	for _, name := range seqGenerators() {
		tot := func(b int) (OpTotals, Op) {
			ops, err := Ops(name, Shape{Batch: b, SeqLen: smallSeq(name), Precision: FP16})
			if err != nil {
				t.Fatal(err)
			}
			return Totals(ops[:len(ops)-1]), ops[len(ops)-1]
		}
		two, u2 := tot(2)
		four, u4 := tot(4)
		six, _ := tot(6)
		for _, c := range []struct {
			what     string
			one, two float64
		}{
			{"forward", two.Forward, four.Forward}, {"backward", two.Backward, four.Backward},
			{"saved", float64(two.Saved), float64(four.Saved)},
			{"bytes per two samples", float64(four.Bytes - two.Bytes), float64(six.Bytes - two.Bytes)},
		} {
			if relErr(c.two, 2*c.one) > 1e-12 {
				t.Errorf("%s: %s %g, then %g: not twice", name, c.what, c.one, c.two)
			}
		}
		if u2 != u4 {
			t.Errorf("%s: the update depends on the batch: %+v, %+v", name, u2, u4)
		}
	}
}

// TestSeqOpsAdam checks the update by hand: Adam reads the fp32 weight,
// two fp32 moments and the gradient, writes the weight and the moments
// (and the 16-bit copy under mixed precision), 14 FLOPs per parameter.
func TestSeqOpsAdam(t *testing.T) {
	n := float64(tfShape(t, "bert-base").Params())
	for _, c := range []struct {
		p           Precision
		read, write float64
	}{{FP32, 16 * n, 12 * n}, {BF16, 14 * n, 14 * n}} {
		ops, err := Ops("bert-base", Shape{Batch: 1, SeqLen: 128, Precision: c.p})
		if err != nil {
			t.Fatal(err)
		}
		u := ops[len(ops)-1]
		if float64(u.Read) != c.read || float64(u.Write) != c.write || u.FLOPs != 14*n {
			t.Errorf("%s: update %+v: want read %g, write %g, FLOPs %g", c.p, u, c.read, c.write, 14*n)
		}
	}
}

// TestSeqOpsAgainstProfiles compares the translation generators' forward
// FLOPs per sample with the shipped profiles' forward_flops. The profiles
// count 2 FLOPs per parameter per token pair and leave attention out: the
// generator's matrix products (which leave the 2 FLOPs of each bias and
// norm parameter out) are within 0.5 % of it, and its attention adds
// 4·s·d per token pair and attention block (6 encoder, 12 decoder).
// GNMT's profile counts exactly what the generator's matrix products and
// attention do at 28 + 28 tokens.
func TestSeqOpsAgainstProfiles(t *testing.T) {
	const batch = 4096 // token pairs, or sentence pairs for GNMT
	for _, c := range []struct {
		name      string
		d, s      float64 // width and sentence length of attention
		mmWithin  float64
		attnBlock float64
	}{
		{"transformer-base", 512, 32, 0.005, 18},
		{"transformer-big", 1024, 32, 0.005, 18},
		{"gnmt", 0, 0, 1e-12, 0},
	} {
		ops, err := Ops(c.name, Shape{Batch: batch, Precision: FP16})
		if err != nil {
			t.Fatal(err)
		}
		var mm, attn float64
		for _, o := range ops {
			if o.Pass == Forward && o.Kind == MatMul {
				mm += o.FLOPs / batch
			} else if o.Pass == Forward && o.Kind == Attention {
				attn += o.FLOPs / batch
			}
		}
		profile := float64(defaultModel(t, c.name).ForwardFLOPs)
		if c.name == "gnmt" {
			mm += attn
			attn = 0
		}
		if e := relErr(mm, profile); e > c.mmWithin {
			t.Errorf("%s: matrix products %g FLOPs per sample, profile %g: off by %.3g %%", c.name, mm, profile, 100*e)
		}
		if want := c.attnBlock * 4 * c.s * c.d; relErr(attn+1, want+1) > 1e-12 {
			t.Errorf("%s: attention %g FLOPs per sample, want %g", c.name, attn, want)
		}
	}
}

// TestGNMTParams checks the generator's parameters against MLPerf's
// count: "MLPerf GNMT has 160671297 parameters" (NVIDIA apex, contrib
// distributed-optimizer test).
func TestGNMTParams(t *testing.T) {
	ops, err := Ops("gnmt", Shape{Batch: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := Totals(ops).Params; got != 160671297 {
		t.Errorf("gnmt operators own %d parameters, MLPerf 160671297", got)
	}
}

// TestSeqOpsConventions checks what Batch and SeqLen mean: sequences for
// a transformer shape (tokens = Batch·SeqLen), token pairs for the
// translation Transformers (SeqLen is the attention span only), sentence
// pairs of SeqLen tokens each way for GNMT.
func TestSeqOpsConventions(t *testing.T) {
	logits := func(name string, s Shape) float64 {
		ops, err := Ops(name, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range ops {
			if o.Name == "lm_head" || o.Name == "decoder.classifier" {
				return float64(o.M)
			}
		}
		t.Fatalf("%s: no output projection", name)
		return 0
	}
	for _, c := range []struct {
		name   string
		s      Shape
		tokens float64
	}{
		{"llama2-7b", Shape{Batch: 3}, 3 * 4096},
		{"llama2-7b", Shape{Batch: 3, SeqLen: 100}, 300},
		{"bert-large", Shape{Batch: 2}, 1024},
		{"transformer-big", Shape{Batch: 1000}, 1000},
		{"transformer-big", Shape{Batch: 1000, SeqLen: 64}, 1000},
		{"gnmt", Shape{Batch: 2}, 56},
		{"gnmt", Shape{Batch: 2, SeqLen: 50}, 100},
	} {
		if got := logits(c.name, c.s); got != c.tokens {
			t.Errorf("%s %+v: %g output rows, want %g tokens", c.name, c.s, got, c.tokens)
		}
	}
}

// TestSeqOpsErrors checks that a bad shape is refused, not crashed on.
func TestSeqOpsErrors(t *testing.T) {
	if _, err := Ops("gnmt", Shape{Batch: 1, SeqLen: 5000}); err == nil || !strings.Contains(err.Error(), "at most 4096") {
		t.Errorf("gnmt at 5000 tokens: %v; want at most 4096", err)
	}
	for _, name := range []string{"gpt3-125m", "transformer-base", "gnmt"} {
		for _, s := range []Shape{{Batch: 0}, {Batch: 1, SeqLen: -3}, {Batch: 1, Precision: "fp8"}} {
			if _, err := Ops(name, s); err == nil {
				t.Errorf("Ops(%s, %+v): no error", name, s)
			}
		}
	}
}

// TestLSTMRecurrence checks the exported recurrence against the gnmt
// generator's attention LSTM, whose recurrence it is (the same hidden
// size): the same operators, FLOPs and bytes, the first step's product
// owning the layer's 4h² + 4h recurrent parameters; and its errors.
func TestLSTMRecurrence(t *testing.T) {
	const batch, seq = 24, 7
	rec, err := LSTMRecurrence(gnmtHidden, batch, seq, FP16)
	if err != nil {
		t.Fatal(err)
	}
	all, err := Ops("gnmt", Shape{Batch: batch, SeqLen: seq, Precision: FP16})
	if err != nil {
		t.Fatal(err)
	}
	sum := func(ops []Op, keep func(string) bool) (n int, fl float64, b units.Bytes, params int64) {
		for _, o := range ops {
			if keep(o.Name) {
				n++
				fl += o.FLOPs
				b += o.Read + o.Write
				params += o.Params
			}
		}
		return
	}
	gn, gfl, gb, gp := sum(all, func(s string) bool {
		return strings.HasPrefix(s, "decoder.att_rnn.hh.") || strings.HasPrefix(s, "decoder.att_rnn.gates")
	})
	rn, rfl, rb, rp := sum(rec, func(string) bool { return true })
	if gn != rn || gfl != rfl || gb != rb || gp != rp {
		t.Errorf("LSTMRecurrence: %d operators, %g FLOPs, %v, %d parameters; gnmt's attention LSTM %d, %g, %v, %d", rn, rfl, rb, rp, gn, gfl, gb, gp)
	}
	if want := int64(4*gnmtHidden*gnmtHidden + 4*gnmtHidden); rp != want {
		t.Errorf("parameters %d, want %d", rp, want)
	}
	for _, c := range []struct {
		h          int64
		batch, seq int
	}{{0, 1, 1}, {8, 0, 1}, {8, 1, 0}, {8, 1, gnmtMaxSeqLen + 1}} {
		if _, err := LSTMRecurrence(c.h, c.batch, c.seq, FP32); err == nil {
			t.Errorf("LSTMRecurrence(%d, %d, %d): no error", c.h, c.batch, c.seq)
		}
	}
}
