package validate

import (
	"math"
	"strings"
	"testing"

	"scaleplan/compute"
	"scaleplan/internal/units"
	"scaleplan/model"
	"scaleplan/predict"
	"scaleplan/sim"
)

// TestFairseqTensors counts the parameter tensors of
// transformer_wmt_en_de_big_t2t module by module as DeepLearningExamples'
// fairseq at 729963dd registers them (models/transformer.py,
// modules/multihead_attention.py), against fairseqTensors.
func TestFairseqTensors(t *testing.T) {
	attention := []string{"in_proj_weight_q", "in_proj_weight_k", "in_proj_weight_v",
		"in_proj_bias_q", "in_proj_bias_k", "in_proj_bias_v", "out_proj.weight", "out_proj.bias"}
	norm := []string{"weight", "bias"}
	linear := []string{"weight", "bias"}
	encoder := len(attention) + 2*len(norm) + 2*len(linear)   // self_attn, maybe_ln1/2, fc1, fc2
	decoder := 2*len(attention) + 3*len(norm) + 2*len(linear) // self_attn, encoder_attn, three norms, fc1, fc2
	want := 6*encoder + 6*decoder + 1 + 2*len(norm)           // the shared embedding, each stack's layer_norm
	big, err := model.LookupTransformer("transformer-big")
	if err != nil {
		t.Fatal(err)
	}
	if got := fairseqTensors(big); got != want || want != 257 {
		t.Errorf("transformer-big: %d parameter tensors, want %d (257)", got, want)
	}
}

// fairseqRow is a DeepLearningExamples Transformer (big) row of the
// published file's A100 TF32 figures on n GPUs.
func fairseqRow(n int, trainer string) Measured {
	m := Measured{Device: "a100-sxm4-40gb", Model: "transformer-big", Precision: "tf32", Devices: n, Batch: 10240,
		SamplesPerSec: 51057 * float64(n), Framework: "torch", Optimizer: model.FusedAdam, Trainer: trainer}
	if n > 1 {
		m.System = "dgx-a100-320gb"
	}
	return m
}

// TestFairseqStep checks fairseqStep's closed forms on a DGX A100 row of
// transformer-big in TF32 (float32 gradients, g = 4): on one GPU the
// update grows by the division's 2·g·P/B; on eight by the statistics'
// all-gather and 1 + 3·8 host synchronisations, the division started from
// the host, max(257 launches, 2·g·P/B), and the last bucket's division
// and copy back, 4·g bytes a value; the backward pass by apex's flatten, 2·g·P/B, the forward pass
// kept; buckets of 10⁷ float32 values.
func TestFairseqStep(t *testing.T) {
	cat, prof := defaults(t)
	mdl, err := prof.Model("transformer-big")
	if err != nil {
		t.Fatal(err)
	}
	d, err := cat.Device("a100-sxm4-40gb")
	if err != nil {
		t.Fatal(err)
	}
	pass := units.Seconds(2 * 4 * float64(mdl.Params) / float64(d.MemoryBandwidth))
	one := sim.Config{Nodes: 1, DevicesPerNode: 1, MicroBatch: 100, Compute: sim.Compute{PerSample: 1e-3, Fixed: 0.01, Update: 0.002}}
	m := fairseqRow(1, TrainerDLEFairseq)
	got := one
	if err := fairseqStep(&got, mdl, d, &m, 4); err != nil {
		t.Fatal(err)
	}
	if want := one.Compute.Update + pass; math.Abs(float64(got.Compute.Update-want)) > 1e-15 || got.Compute.Fixed != one.Compute.Fixed {
		t.Errorf("one GPU: update %v, fixed %v; want %v, %v", got.Compute.Update, got.Compute.Fixed, want, one.Compute.Fixed)
	}

	eight := one
	eight.DevicesPerNode = 8
	m = fairseqRow(8, "")
	if _, _, _, err := placeMeasured(&eight, cat, d, &m, nil); err != nil {
		t.Fatal(err)
	}
	gather, err := sim.CollectiveTime(eight, sim.OpAllGather, 8*16384)
	if err != nil {
		t.Fatal(err)
	}
	got = eight
	m.Trainer = TrainerDLEFairseq
	if err := fairseqStep(&got, mdl, d, &m, 4); err != nil {
		t.Fatal(err)
	}
	div := max(257*(compute.DispatchEager+compute.LaunchKernel), pass)
	lastValues := apexLastBucket(mdl)
	if lastValues < 34516992 || lastValues >= 34516992+1e7 {
		t.Errorf("last bucket %d values, want the embedding's 34,516,992 and less than 10⁷ more", lastValues)
	}
	last := units.Seconds(4 * 4 * float64(lastValues) / float64(d.MemoryBandwidth))
	want := eight.Compute.Update + gather + 25*compute.SyncLatency + div + last
	if math.Abs(float64(got.Compute.Update-want)) > 1e-12 {
		t.Errorf("eight GPUs: update %v, want %v", got.Compute.Update, want)
	}
	whole := func(c sim.Compute) float64 { return float64(100*c.PerSample + c.Fixed) }
	if w, g := whole(eight.Compute)+float64(pass), whole(got.Compute); math.Abs(g-w) > 1e-12 {
		t.Errorf("eight GPUs: micro-batch %v s, want %v", g, w)
	}
	if fwd, g := whole(eight.Compute)*sim.DefaultForwardFraction, whole(got.Compute)*got.Compute.ForwardFraction; math.Abs(g-fwd) > 1e-12 {
		t.Errorf("eight GPUs: forward %v s, want %v as before", g, fwd)
	}
	if got.Comm.Bucket != 4e7 {
		t.Errorf("bucket %v bytes, want 4e7", got.Comm.Bucket)
	}
}

// TestFairseqTrainerRows checks that the trainer applies to the rows
// that name it: a one-GPU row's step is the same row's without the
// column plus the division, 2·g·P/B, and the loss read's
// compute.SyncLatency; an eight-GPU row is slower than
// without; a row of another trainer is as before, and the column is
// refused on a model DeepLearningExamples' fairseq does not train and for
// another value.
func TestFairseqTrainerRows(t *testing.T) {
	cat, prof := defaults(t)
	rows := []Measured{fairseqRow(1, ""), fairseqRow(1, TrainerDLEFairseq), fairseqRow(8, ""), fairseqRow(8, TrainerDLEFairseq)}
	var pred []float64
	for _, r := range rows {
		rep, err := CompareMeasured([]Measured{r}, cat, prof, predict.Options{})
		if err != nil {
			t.Fatal(err)
		}
		pred = append(pred, rep.Groups[0].Rows[0].Predicted)
	}
	mdl, _ := prof.Model("transformer-big")
	d, _ := cat.Device("a100-sxm4-40gb")
	pass := 2 * 4 * float64(mdl.Params) / float64(d.MemoryBandwidth)
	// The device decides both passes at this batch: the loss read costs
	// its SyncLatency only.
	if got, want := 10240/pred[1]-10240/pred[0], pass+float64(compute.SyncLatency); math.Abs(got-want) > 1e-9 {
		t.Errorf("one GPU: step %v s longer, want %v", got, want)
	}
	if !(pred[3] < pred[2]) {
		t.Errorf("eight GPUs: %v samples/s with the trainer, %v without: want fewer", pred[3], pred[2])
	}
	bad := fairseqRow(1, TrainerDLEFairseq)
	bad.Model, bad.Batch = "bert-large", 8
	if _, err := CompareMeasured([]Measured{bad}, cat, prof, predict.Options{}); err == nil || !strings.Contains(err.Error(), "encoder-decoder") {
		t.Errorf("trainer on bert-large: %v, want an error naming the encoder-decoder", err)
	}
	d, _ = cat.Device("a100-sxm4-40gb")
	if c := measuredCompute(&rows[1], d, "tf32", model.FusedAdam, 0); !c.LossSync {
		t.Error("fairseq trainer: the loss is read before the backward pass, want LossSync")
	}
	if c := measuredCompute(&rows[0], d, "tf32", model.FusedAdam, 0); c.LossSync {
		t.Error("no trainer: LossSync set")
	}
	var m Measured
	if err := programLabels(&m, map[string]string{"trainer": "dle-fairseq"}); err != nil || m.Trainer != TrainerDLEFairseq {
		t.Errorf("%+v, %v: want the fairseq trainer", m, err)
	}
	if err := programLabels(&m, map[string]string{"trainer": "megatron"}); err == nil || !strings.Contains(err.Error(), "want dle-fairseq or none") {
		t.Errorf("trainer megatron: %v, want the valid values named", err)
	}
}

// TestApexLastBucket checks apex's bucketing on layouts worked by hand: a
// bucket ships once it holds 10⁷ values or more, and what is left at the
// end is the last.
func TestApexLastBucket(t *testing.T) {
	for _, c := range []struct {
		params []int64
		want   int64
	}{
		{[]int64{6e6, 6e6, 3e6, 2e7}, 2.3e7}, // 1.2e7 ships, then 3e6 + 2e7
		{[]int64{2e7, 4e6}, 4e6},             // 4e6 left at the end
		{[]int64{5e6, 5e6}, 1e7},             // exactly 10⁷ ships
	} {
		m := &model.Model{}
		for _, p := range c.params {
			m.Layers = append(m.Layers, model.Layer{Name: "l", Params: p})
			m.Params += p
		}
		if got := apexLastBucket(m); got != c.want {
			t.Errorf("%v: last bucket %d, want %d", c.params, got, c.want)
		}
	}
	if got := apexLastBucket(&model.Model{Params: 7}); got != 7 {
		t.Errorf("no layout: %d, want every parameter, 7", got)
	}
}
