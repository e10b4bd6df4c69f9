package optim_test

import (
	"fmt"

	"scaleplan/engine/optim"
)

// The MLPerf v0.7 ResNet-50 schedule of seed 000 on 8x V100: base rate 7.4,
// 2 warm-up epochs, 37 epochs, polynomial decay of power 2 to 1e-4, with
// 770 steps per epoch at global batch 1664.
func ExampleMLPerfPolynomial() {
	const spe = 770
	s := optim.MLPerfPolynomial(7.4, 37*spe, 2*spe)
	for _, step := range []int{0, 769, 1539, 1540, 15014, 28489} {
		fmt.Printf("step %5d  lr %.6f\n", step, s.LR(step))
	}
	// Output:
	// step     0  lr 0.004805
	// step   769  lr 3.700000
	// step  1539  lr 7.400000
	// step  1540  lr 7.399451
	// step 15014  lr 1.850075
	// step 28489  lr 0.000100
}

// One LARS step on a weight tensor and an excluded bias: the weight moves by
// the schedule's rate times its trust ratio, the bias by the plain rate.
func ExampleLARS() {
	opt := optim.NewLARS()
	groups := []optim.Group{
		{Name: "fc.weight", Params: []float32{3, 4}, Grads: []float32{0.6, 0.8}},
		{Name: "fc.bias", Params: []float32{0.5}, Grads: []float32{0.1}, Exclude: true},
	}
	fmt.Printf("trust ratio %.6f\n", opt.TrustRatio(groups[0]))
	opt.Step(groups, 1)
	fmt.Printf("weight %.6f %.6f\n", groups[0].Params[0], groups[0].Params[1])
	fmt.Printf("bias   %.6f\n", groups[1].Params[0])
	// Output:
	// trust ratio 0.004998
	// weight 2.997000 3.996000
	// bias   0.400000
}

// Building an optimizer and a schedule from command-line style settings.
func ExampleNew() {
	s, err := optim.Defaults("sgd")
	if err != nil {
		fmt.Println(err)
		return
	}
	s.Nesterov = true
	opt, err := optim.New(s)
	if err != nil {
		fmt.Println(err)
		return
	}
	sched, err := optim.NewSchedule(optim.ScheduleSettings{
		Kind: "multistep", Base: 0.1, MilestoneEpochs: []float64{30, 60, 80}, Gamma: 0.1,
	}, 100)
	if err != nil {
		fmt.Println(err)
		return
	}
	g := []optim.Group{{Params: []float32{1}, Grads: []float32{1}}}
	opt.Step(g, sched.LR(0))
	fmt.Printf("w %.4f, lr at epoch 30: %.4g\n", g[0].Params[0], sched.LR(3000))
	_, err = optim.New(optim.Settings{Kind: "sgd", Momentum: 1.5})
	fmt.Println(err)
	// Output:
	// w 0.8100, lr at epoch 30: 0.01
	// invalid settings: sgd momentum 1.5 not in [0, 1)
}
