package llm

import (
	"math"
	"strings"
	"testing"

	"scaleplan/internal/units"
	"scaleplan/model"
)

// rate is the fake GPU's FLOP/s: every operator takes FLOPs/rate.
const rate = 1e14

func flopTime(op model.Op) units.Seconds { return units.Seconds(op.FLOPs / rate) }

// ringTime is a fake network: a ring's 2·(n − 1)/n·size/β + (n − 1)·α
// for an all-reduce, half the bytes for the others, α = 10 µs, β = 50 GB/s.
func ringTime(c Collective, g Group, size units.Bytes) (units.Seconds, error) {
	n := float64(g.Size())
	f := (n - 1) / n
	if c == AllReduce {
		f *= 2
	}
	return units.Seconds(f*float64(size)/50e9 + (n-1)*10e-6), nil
}

func fakeHW(comm CommTime) Hardware {
	return Hardware{GPUsPerNode: 8, Memory: 80 * units.GiB, Peak: 312e12, Compute: flopTime, Comm: comm}
}

func sameTime(a, b units.Seconds) bool {
	return math.Abs(float64(a-b)) <= 1e-9*math.Abs(float64(b))+1e-12
}

// TestDataParallelClosedForm: with TP = PP = CP = 1 a step is the whole
// model's compute for each micro-batch (the sum over model.Ops' forward
// and backward operators, listed for all layers at once), plus the
// gradient all-reduce of 4·Ψ bytes (fp32 gradients) when exposed, plus
// Adam's update.
func TestDataParallelClosedForm(t *testing.T) {
	sh, _ := model.LookupTransformer("gpt3-1.3b")
	l := Layout{TP: 1, PP: 1, DP: 8, CP: 1, EP: 1, MicroBatch: 2, GlobalBatch: 64, FP32Grads: true}
	h := fakeHW(ringTime)
	h.ExposeGradReduce = true
	got, err := l.StepTime(sh, h)
	if err != nil {
		t.Fatal(err)
	}
	// GPT-2's 50,257 tokens, padded as Megatron-LM pads them at TP 1.
	padded := sh
	padded.VocabMultiple = 128
	ops, err := padded.Ops(model.TransformerStep{Batch: 2, Precision: model.BF16})
	if err != nil {
		t.Fatal(err)
	}
	var fb, adam float64
	for _, op := range ops {
		if op.Pass == model.UpdatePass {
			adam += op.FLOPs
		} else {
			fb += op.FLOPs
		}
	}
	m := float64(l.MicroBatches())
	ar, _ := ringTime(AllReduce, Group{Nodes: 1, PerNode: 8}, units.Bytes(4*float64(sh.Params())))
	want := units.Seconds(m*fb/rate) + ar + units.Seconds(adam/rate)
	if !sameTime(got.Compute, units.Seconds(m*fb/rate)) || !sameTime(got.DP, ar) || !sameTime(got.Time, want) {
		t.Errorf("step %+v: want compute %v, dp %v, time %v", got, units.Seconds(m*fb/rate), ar, want)
	}
	// Overlapped with one micro-batch's backward, the all-reduce hides.
	h.ExposeGradReduce = false
	if o, _ := l.StepTime(sh, h); o.DP != max(0, ar-units.Seconds(bwdFLOPs(ops)/rate)) {
		t.Errorf("overlapped dp %v: want %v", o.DP, max(0, ar-units.Seconds(bwdFLOPs(ops)/rate)))
	}
}

func bwdFLOPs(ops []model.Op) float64 {
	var f float64
	for _, op := range ops {
		if op.Pass == model.Backward {
			f += op.FLOPs
		}
	}
	return f
}

// layersOnly times the layers' operators only, so that every pipeline
// stage takes the same time.
func layersOnly(op model.Op) units.Seconds {
	if !strings.HasPrefix(op.Name, "layers.") {
		return 0
	}
	return flopTime(op)
}

func noComm(Collective, Group, units.Bytes) (units.Seconds, error) { return 0, nil }

// TestPipelineBubble: equal stages and free communication give 1F1B's
// (M + PP − 1)·(t_f + t_b) and the interleaved schedule's bubble
// (PP − 1)/v·(t_f + t_b) (Narayanan et al. 2021, Section 2.2).
func TestPipelineBubble(t *testing.T) {
	sh, _ := model.LookupTransformer("gpt3-1.3b") // 24 layers
	h := fakeHW(noComm)
	h.Compute = layersOnly
	ops, _ := sh.Ops(model.TransformerStep{Batch: 1, Precision: model.BF16})
	var layers float64
	for _, op := range ops {
		if strings.HasPrefix(op.Name, "layers.") {
			layers += op.FLOPs
		}
	}
	const pp, m = 4, 8
	stage := units.Seconds(layers / rate / pp) // t_f + t_b of one stage and micro-batch
	for _, v := range []int{1, 2, 3, 6} {
		l := Layout{TP: 1, PP: pp, VirtualStages: v, DP: 1, CP: 1, EP: 1, MicroBatch: 1, GlobalBatch: m}
		got, err := l.StepTime(sh, h)
		if err != nil {
			t.Fatal(err)
		}
		bubble := units.Seconds(pp-1) / units.Seconds(v) * stage
		if !sameTime(got.Bubble, bubble) || !sameTime(got.Time, m*stage+bubble) {
			t.Errorf("v %d: bubble %v, time %v: want %v and %v", v, got.Bubble, got.Time, bubble, m*stage+bubble)
		}
		if v == 1 && !sameTime(got.Time, (m+pp-1)*stage) {
			t.Errorf("1F1B: time %v: want (m + p − 1)·t = %v", got.Time, (m+pp-1)*stage)
		}
	}
}

// TestTensorCommBytes: each layer all-reduces the b·s·d hidden state in
// bf16 twice forward and twice backward (three times each way under full
// recomputation); sequence parallelism all-gathers and reduce-scatters
// the same bytes instead.
func TestTensorCommBytes(t *testing.T) {
	sh, _ := model.LookupTransformer("gpt3-1.3b") // d 2048, s 2048, 24 layers
	type call struct {
		c    Collective
		size units.Bytes
	}
	for _, sp := range []bool{false, true} {
		for _, rc := range []model.Recompute{model.RecomputeNone, model.RecomputeFull} {
			var calls []call
			rec := func(c Collective, g Group, size units.Bytes) (units.Seconds, error) {
				if g != (Group{Nodes: 1, PerNode: 4}) {
					t.Errorf("%v on %+v: want the 4 GPUs of one node", c, g)
				}
				calls = append(calls, call{c, size})
				return ringTime(c, g, size)
			}
			l := Layout{TP: 4, SequenceParallel: sp, PP: 1, DP: 1, CP: 1, EP: 1, MicroBatch: 2, GlobalBatch: 4, Recompute: rc}
			got, err := l.StepTime(sh, fakeHW(rec))
			if err != nil {
				t.Fatal(err)
			}
			const hidden = 2 * 2048 * 2048 * 2 // b·s·d·2 bytes
			n := units.Seconds(4)
			if rc == model.RecomputeFull {
				n = 6
			}
			var per units.Seconds
			if sp {
				ag, _ := ringTime(AllGather, Group{1, 4}, hidden)
				rs, _ := ringTime(ReduceScatter, Group{1, 4}, hidden)
				per = ag + rs
			} else {
				per, _ = ringTime(AllReduce, Group{1, 4}, hidden)
			}
			if want := 2 * 24 * n * per; !sameTime(got.TP, want) {
				t.Errorf("sp %t, %s: tp comm %v: want %v", sp, rc, got.TP, want)
			}
			for _, c := range calls {
				if c.size != hidden {
					t.Errorf("sp %t: %v of %v bytes: want %d", sp, c.c, c.size, hidden)
				}
			}
		}
	}
}

// TestWeakScaling: doubling the data-parallel ranks with the global batch
// (the same work per GPU) never shortens a step, on a network whose
// collectives slow with the ranks; but for the optimizer's update, which
// a sharded optimizer splits over the ranks.
func TestWeakScaling(t *testing.T) {
	sh, _ := model.LookupTransformer("llama2-7b")
	for _, sharding := range []Sharding{ShardNone, ShardZeRO1, ShardZeRO3} {
		var prev units.Seconds
		for dp := 1; dp <= 256; dp *= 2 {
			l := Layout{TP: 2, SequenceParallel: true, PP: 2, DP: dp, CP: 1, EP: 1, MicroBatch: 1, GlobalBatch: 8 * dp, Sharding: sharding}
			s, err := l.StepTime(sh, fakeHW(ringTime))
			if err != nil {
				t.Fatal(err)
			}
			rest := s.Time
			if sharding != ShardNone {
				rest -= s.Optimizer
			}
			if rest < prev {
				t.Errorf("%s dp %d: step %v shorter than %v at dp %d", sharding, dp, rest, prev, dp/2)
			}
			prev = rest
		}
	}
}

// TestContextParallelOverlap: ring attention's exchange hides behind the
// attention it overlaps on a fast network, and shows on a slow one; the
// attention's FLOPs on each rank are 1/CP of the sequence's.
func TestContextParallelOverlap(t *testing.T) {
	sh, _ := model.LookupTransformer("llama3-8b")
	sh.FusedAttention = true
	l := Layout{TP: 1, PP: 1, DP: 1, CP: 4, EP: 1, MicroBatch: 1, GlobalBatch: 1}
	fast, err := l.StepTime(sh, fakeHW(ringTime))
	if err != nil {
		t.Fatal(err)
	}
	slow, _ := l.StepTime(sh, fakeHW(func(c Collective, g Group, size units.Bytes) (units.Seconds, error) {
		return units.Seconds(float64(size) / 1e8), nil
	}))
	if fast.CP != 0 || !(slow.CP > 0) {
		t.Errorf("cp exposed %v on a fast network, %v on a slow one: want 0 and positive", fast.CP, slow.CP)
	}
	one := l
	one.CP = 1
	whole, _ := one.StepTime(sh, fakeHW(ringTime))
	if r := float64(fast.Compute) / float64(whole.Compute); math.Abs(r-0.25) > 1e-9 {
		t.Errorf("cp 4 compute / cp 1 compute = %.6f: want 0.25", r)
	}
}

// TestMFUBounded: no layout of the search beats the roofline: MFU at most
// the matrix products' fraction of peak.
func TestMFUBounded(t *testing.T) {
	sh, _ := model.LookupTransformer("llama2-7b")
	sh.FusedAttention = true
	h := Hardware{GPUsPerNode: 8, Memory: 80 * units.GiB, Peak: 989e12,
		Compute: RooflineTime(989e12, 3.35e12, DefaultMatMulEfficiency), Comm: ringTime}
	res, err := Search{Shape: sh, GPUs: 64, GlobalBatch: 256, Hardware: h, Top: 1000}.Run()
	if err != nil {
		t.Fatal(err)
	}
	if res.Layouts < 1000 || res.Fit < 1 || res.Fit+res.TooLarge != res.Layouts {
		t.Errorf("layouts %d, fit %d, too large %d", res.Layouts, res.Fit, res.TooLarge)
	}
	for i, c := range res.Best {
		if mfu := c.Step.MFU(h.Peak, 64); mfu > DefaultMatMulEfficiency || mfu <= 0 {
			t.Errorf("%+v: mfu %.3f: want in (0, %.2f]", c.Layout, mfu, DefaultMatMulEfficiency)
		}
		if i > 0 && c.Step.Time < res.Best[i-1].Step.Time {
			t.Errorf("candidate %d faster than %d", i, i-1)
		}
		if c.Memory.Peak.Total() > h.Memory {
			t.Errorf("%+v needs %v", c.Layout, c.Memory.Peak.Total())
		}
	}
}

// TestStepErrors: a tensor group larger than a node and missing hardware
// are refused.
func TestStepErrors(t *testing.T) {
	sh, _ := model.LookupTransformer("gpt3-1.3b")
	l := Layout{TP: 16, PP: 1, DP: 1, CP: 1, EP: 1, MicroBatch: 1, GlobalBatch: 1}
	if _, err := l.StepTime(sh, fakeHW(ringTime)); err == nil || !strings.Contains(err.Error(), "tp 16") {
		t.Errorf("tp 16 on 8-GPU nodes: %v", err)
	}
	if _, err := (Layout{TP: 1, PP: 1, DP: 1, CP: 1, EP: 1, MicroBatch: 1, GlobalBatch: 1}).StepTime(sh, Hardware{}); err == nil {
		t.Error("empty hardware accepted")
	}
}

// BenchmarkSearch times the search of Llama-3-70B layouts on 1,024 GPUs
// with a closed-form network, so that it measures the layouts alone
// (docs/performance.md).
func BenchmarkSearch(b *testing.B) {
	sh, _ := model.LookupTransformer("llama3-70b")
	sh.FusedAttention = true
	h := Hardware{GPUsPerNode: 8, Memory: 80 * units.GiB, Peak: 989e12,
		Compute: RooflineTime(989e12, 3.35e12, DefaultMatMulEfficiency), Comm: ringTime}
	var n int
	for range b.N {
		res, err := Search{Shape: sh, GPUs: 1024, GlobalBatch: 2048, Hardware: h}.Run()
		if err != nil {
			b.Fatal(err)
		}
		n = res.Layouts
	}
	b.ReportMetric(float64(n), "layouts")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N*n)*1e6, "µs/layout")
}

// TestVocabPadding checks that a tokenizer's own vocabulary, not a
// multiple of 8, is padded as Megatron-LM pads it, to a multiple of 128
// per tensor-parallel rank, so that each rank's share of the output
// projection has 128·k outputs; a vocabulary already a multiple of 8 (a
// case's padded figure) is kept.
func TestVocabPadding(t *testing.T) {
	sh, err := model.LookupTransformer("gpt3-125m")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		vocab, tp int
		want      int64
	}{{50257, 1, 50304}, {50257, 8, 51200 / 8}, {50688, 8, 50688 / 8}, {32000, 2, 16000}} {
		s := sh
		s.Vocab = c.vocab
		var got int64
		f := func(op model.Op) units.Seconds {
			if op.Name == "lm_head" {
				got = op.N
			}
			return 0
		}
		if _, err := newComputeCost(s, computeKey{b: 1, s: 2048, tp: c.tp, cp: 1}, f); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("vocabulary %d at TP %d: the output projection's N per rank %d, want %d", c.vocab, c.tp, got, c.want)
		}
	}
}
