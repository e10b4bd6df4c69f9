package llm_test

import (
	"fmt"

	"scaleplan/internal/units"
	"scaleplan/llm"
	"scaleplan/model"
)

// GPT-3 175B on 1,024 A100 80GB with Narayanan et al. 2021's layout.
func Example() {
	gpt3, _ := model.LookupTransformer("gpt3-175b")
	l := llm.Layout{TP: 8, PP: 16, DP: 8, CP: 1, EP: 1, MicroBatch: 1, GlobalBatch: 1536,
		Recompute: model.RecomputeFull, FP32Grads: true}
	m, err := l.Memory(gpt3)
	if err != nil {
		fmt.Println(err)
		return
	}
	p := m.Peak
	gib := func(b units.Bytes) float64 { return float64(b / units.GiB) }
	fmt.Printf("GPUs %d, stage %d holds %.3f B parameters\n", l.World(), p.Stage, float64(p.Params)/1e9)
	fmt.Printf("weights %.1f GiB, gradients %.1f GiB, optimizer %.1f GiB\n", gib(p.Weights), gib(p.Gradients), gib(p.Optimizer))
	fmt.Printf("activations %.1f GiB, recomputed layer %.2f GiB, allowance %.1f GiB\n", gib(p.Activations), gib(p.Recomputed), gib(p.Allowance))
	fmt.Printf("total %.1f GiB, %.1f GiB free of 80\n", gib(p.Total()), gib(m.Headroom(80*units.GiB)))
	// Output:
	// GPUs 1024, stage 0 holds 1.462 B parameters
	// weights 2.7 GiB, gradients 5.4 GiB, optimizer 16.3 GiB
	// activations 4.9 GiB, recomputed layer 0.49 GiB, allowance 2.5 GiB
	// total 32.4 GiB, 47.6 GiB free of 80
}

// The largest micro-batch of Llama-2-7B with ZeRO-1 on 8 H100 80GB.
func ExampleLayout_MaxMicroBatch() {
	llama, _ := model.LookupTransformer("llama2-7b")
	llama.FusedAttention = true
	l := llm.Layout{TP: 1, PP: 1, DP: 8, CP: 1, EP: 1, GlobalBatch: 1024, Sharding: llm.ShardZeRO1}
	b, m, err := l.MaxMicroBatch(llama, 80*units.GiB)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("micro-batch %d: %.1f GiB per GPU\n", b, float64(m.Peak.Total()/units.GiB))
	// Output:
	// micro-batch 2: 72.2 GiB per GPU
}
