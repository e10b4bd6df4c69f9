package llm_test

import (
	"fmt"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/llm"
	"scaleplan/model"
)

// GPT-3 175B on 300 B tokens on 1,024 A100 80GB (128 DGX A100), with
// GPT-3's batch ramp-up as Megatron-LM writes it, Narayanan et al. 2021's
// step time (Section 5.1: 8·T·P/(n·X) with X = 140 TFLOP/s per GPU,
// taken constant over the ramp), Llama 3's interruption rate,
// synchronous checkpoints to the nodes' NVMe drives and a restart of 10
// minutes (an assumption).
func ExampleEstimateTraining() {
	gpt3, _ := model.LookupTransformer("gpt3-175b")
	sched, _ := llm.ScheduleTokens(300e9, 2048, 1536, llm.Rampup{Start: 16, Increment: 16, Samples: 5859375})
	const gpus = 1024
	step := func(b int) (units.Seconds, error) {
		return units.Seconds(8 * float64(b*2048) * float64(gpt3.Params()) / (gpus * 140e12)), nil
	}
	cat, _ := hw.Default()
	sys, node, dev, _ := cat.Resolve("dgx-a100")
	size, _ := llm.CheckpointBytes(gpt3, llm.CheckpointFull)
	ck, _ := llm.CheckpointCostOn(sys, node, dev, gpus, size, llm.TargetLocal, false)
	r := llm.Reliability{PerGPUHour: llm.Llama3Interruptions.PerGPUHour(), Restart: 10 * units.Minute}
	e, err := llm.EstimateTraining(sched, step, gpus, r, ck, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	day := float64(units.Day)
	fmt.Printf("%d steps at %d batches, %.3g tokens\n", e.Schedule.Steps, len(e.Phases), e.Schedule.Tokens)
	fmt.Printf("checkpoint %.2f TB, %.2f s each, every %.1f min\n", float64(ck.Size/units.TB), float64(ck.Stall), float64(e.Interval/units.Minute))
	fmt.Printf("interruption every %.1f h, %.1f in all\n", float64(e.MTBF/units.Hour), e.Interruptions)
	fmt.Printf("compute %.2f d + checkpoints %.2f d + lost work %.2f d + restarts %.2f d = %.2f d\n",
		float64(e.Compute)/day, float64(e.Checkpoints)/day, float64(e.LostWork)/day, float64(e.Restarts)/day, float64(e.Wall)/day)
	fmt.Printf("goodput %.1f %%\n", 100*e.Goodput)
	// Output:
	// 111354 steps at 96 batches, 3e+11 tokens
	// checkpoint 2.44 TB, 0.76 s each, every 8.7 min
	// interruption every 49.5 h, 16.5 in all
	// compute 33.83 d + checkpoints 0.05 d + lost work 0.05 d + restarts 0.11 d = 34.05 d
	// goodput 99.4 %
}
