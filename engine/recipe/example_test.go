package recipe_test

import (
	"fmt"

	"scaleplan/engine/recipe"
	"scaleplan/model"
)

// The engine's MLP recipe of the shipped model profiles becomes an engine
// configuration and its accuracy target.
func ExampleConfig() {
	prof, err := model.Load()
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := prof.Recipe("engine-mlp")
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg, target, err := recipe.Config(r)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %d worker(s) x batch %d, %g epochs\n", cfg.Model, cfg.Workers, cfg.Batch, cfg.Epochs)
	fmt.Printf("%s momentum %g, %s schedule from %g; target %g\n", cfg.Optimizer.Kind, cfg.Optimizer.Momentum, cfg.Schedule.Kind, cfg.Schedule.Base, target)
	// Output:
	// mlp: 1 worker(s) x batch 64, 10 epochs
	// sgd momentum 0.9, cosine schedule from 0.05; target 0.88
}
