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

// The step of Llama-3-8B on one 8-GPU node, on an H100's roofline and a
// network whose every collective takes 1 ms.
func ExampleLayout_StepTime() {
	llama, _ := model.LookupTransformer("llama3-8b")
	llama.FusedAttention = true
	h := llm.Hardware{GPUsPerNode: 8, Memory: 80 * units.GiB, Peak: 989e12,
		Compute: llm.RooflineTime(989e12, 3.35e12, llm.DefaultMatMulEfficiency),
		Comm: func(llm.Collective, llm.Group, units.Bytes) (units.Seconds, error) {
			return 1e-3, nil
		}}
	l := llm.Layout{TP: 2, SequenceParallel: true, PP: 1, DP: 4, CP: 1, EP: 1, MicroBatch: 1, GlobalBatch: 32,
		Recompute: model.RecomputeSelective, Sharding: llm.ShardDistOpt, FP32Grads: true}
	s, err := l.StepTime(llama, h)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("step %.3f s: compute %.3f s, tensor-parallel %.3f s, %.0f tokens/s, MFU %.2f\n",
		float64(s.Time), float64(s.Compute), float64(s.TP), s.TokensPerSecond(), s.MFU(h.Peak, l.World()))
	// The tensor-parallel part is 8 micro-batches × 32 layers × 4 ×
	// (all-gather + reduce-scatter, 1 ms each) = 2.048 s.
	// Output:
	// step 4.712 s: compute 2.655 s, tensor-parallel 2.048 s, 55635 tokens/s, MFU 0.42
}
