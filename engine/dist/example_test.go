package dist_test

import (
	"context"
	"fmt"
	"sync"

	"scaleplan/engine/data"
	"scaleplan/engine/dist"
)

// Three ranks of an in-process ring average their vectors: every rank
// ends with the same mean.
func ExampleAllReduce() {
	ring := dist.NewInprocRing(3)
	bufs := [][]float32{{1, 10, 100, 1000}, {2, 20, 200, 2000}, {3, 30, 300, 3000}}
	var wg sync.WaitGroup
	for r, t := range ring {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := dist.AllReduce(t, bufs[r], 1.0/3); err != nil {
				fmt.Println(err)
			}
		}()
	}
	wg.Wait()
	for r, b := range bufs {
		fmt.Println("rank", r, b)
	}
	// Output:
	// rank 0 [2 20 200 2000]
	// rank 1 [2 20 200 2000]
	// rank 2 [2 20 200 2000]
}

// Two data-parallel workers train a small MLP on synthetic data with a
// global batch of 32, evaluating every 20 steps until the held-out
// accuracy reaches 95%.
func ExampleRun() {
	c := dist.Config{
		Model:   "mlp",
		Hidden:  []int{32},
		Workers: 2,
		Batch:   16,
		Steps:   200,
		Overlap: true,
		Eval:    dist.Eval{Every: 20, Target: 0.95, Stop: true},
	}
	c.Data.Synthetic = data.SyntheticConfig{Train: 2000, Test: 500, Rows: 28, Cols: 28, Classes: 10, Separation: 0.25, Noise: 0.2, Seed: 1}
	c.Schedule.Base = 0.02
	res, err := dist.Run(context.Background(), c)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("model:", c.ModelName(), "global batch:", c.GlobalBatch())
	fmt.Println("target reached at step", res.StepsToTarget, "accuracy above 0.95:", res.FinalAccuracy() >= 0.95)
	// Output:
	// model: mlp-784-32-10 global batch: 32
	// target reached at step 40 accuracy above 0.95: true
}

// The learning rates a steps-to-target search tries at global batch 1024:
// the linear-scaling rule from 0.05 at batch 64 gives 0.8, tried at half,
// once and twice, but capped at 1.
func ExampleLRGrid() {
	fmt.Println(dist.LRGrid(0.05, 64, 1024, []float64{0.5, 1, 2}, 1))
	// Output:
	// [0.4 0.8 1]
}

// A steps-to-target sweep over global batches 32 and 128 on 2000
// synthetic samples: each batch's trials are capped at two epochs and try
// the linear-scaling rate (0.02 at batch 32) at half and once, capped at
// 0.05.
func ExampleStepsSearch_Plan() {
	c := dist.Config{Model: "mlp", Hidden: []int{32}, Eval: dist.Eval{Every: 10, Target: 0.9}}
	c.Data.Synthetic = data.SyntheticConfig{Train: 2000, Test: 500, Rows: 28, Cols: 28, Classes: 10, Separation: 0.25, Noise: 0.2, Seed: 1}
	s := dist.StepsSearch{Batches: []int{32, 128}, MaxEpochs: 2, LR: 0.02, LRBatch: 32, LRFactors: []float64{0.5, 1}, LRMax: 0.05}
	p, err := s.Plan(c)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, cfg := range p.Configs {
		fmt.Printf("batch %d: at most %d steps, rates %v\n", s.Batches[i], cfg.Steps, p.Grids[i])
	}
	fmt.Println("trials:", p.Trials())
	// Output:
	// batch 32: at most 124 steps, rates [0.01 0.02]
	// batch 128: at most 30 steps, rates [0.025 0.05]
	// trials: 4
}
