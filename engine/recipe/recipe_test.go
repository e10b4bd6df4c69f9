package recipe

import (
	"strings"
	"testing"

	"scaleplan/model"
)

// The engine recipes of the model profiles become engine settings.
func TestConfig(t *testing.T) {
	prof, err := model.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"engine-mlp", "engine-cnn"} {
		r, err := prof.Recipe(name)
		if err != nil {
			t.Fatal(err)
		}
		cfg, target, err := Config(r)
		if err != nil {
			t.Fatal(err)
		}
		// engine.yaml: batch 64 on one device, momentum 0.9, lr 0.05,
		// cosine (mlp) or constant (cnn), 10 epochs; targets 0.88 (mlp)
		// and 0.90 (cnn).
		want := map[string]float64{"engine-mlp": 0.88, "engine-cnn": 0.90}[name]
		kind := map[string]string{"engine-mlp": "cosine", "engine-cnn": "constant"}[name]
		if cfg.Batch != 64 || cfg.Workers != 1 || cfg.Epochs != 10 || cfg.Optimizer.Kind != "sgd" || cfg.Optimizer.Momentum != 0.9 ||
			cfg.Schedule.Kind != kind || cfg.Schedule.Base != 0.05 || cfg.Schedule.Epochs != 10 || target != want {
			t.Errorf("%s: %+v, target %g", name, cfg, target)
		}
	}
}

// Recipes the engine cannot train give an error naming the recipe and
// what it lacks; those it can map their optimizer and schedule.
func TestConfigCases(t *testing.T) {
	base := func() model.Recipe {
		return model.Recipe{Name: "r", Model: "mlp", Optimizer: model.Momentum, PerDeviceBatch: 32, Devices: 2, BaseLR: 0.1, Momentum: 0.9,
			Epochs: 4, Schedule: model.Schedule{Kind: model.Constant}}
	}
	for _, c := range []struct {
		name    string
		edit    func(*model.Recipe)
		wantErr string
	}{
		{"resnet50", func(r *model.Recipe) { r.Model = "resnet50" }, "recipe r trains resnet50; the engine trains mlp or cnn"},
		{"steps schedule", func(r *model.Recipe) { r.Warmup.Steps = 100 }, "recipe r: the engine's schedules are given in epochs"},
		{"rmsprop", func(r *model.Recipe) { r.Optimizer = model.RMSProp }, "recipe r: the engine has no optimizer rmsprop"},
		{"invsqrt", func(r *model.Recipe) { r.Schedule.Kind = model.InvSqrt }, "recipe r: the engine has no invsqrt schedule"},
		{"multistep", func(r *model.Recipe) {
			r.Schedule = model.Schedule{Kind: model.MultiStep, Factor: 0.1, MilestoneEpochs: []float64{2, 3}}
		}, ""},
		{"lars", func(r *model.Recipe) { r.Optimizer, r.LARSEta = model.LARS, 0.001 }, ""},
	} {
		r := base()
		c.edit(&r)
		cfg, _, err := Config(&r)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if cfg.Batch != 32 || cfg.Workers != 2 || cfg.Accumulate != 1 || cfg.Schedule.Base != 0.1 || cfg.Optimizer.Momentum != 0.9 {
			t.Errorf("%s: %+v", c.name, cfg)
		}
		switch c.name {
		case "multistep":
			if cfg.Schedule.Kind != "multistep" || cfg.Schedule.Gamma != 0.1 || len(cfg.Schedule.MilestoneEpochs) != 2 {
				t.Errorf("multistep: %+v", cfg.Schedule)
			}
		case "lars":
			if cfg.Optimizer.Kind != "lars" || cfg.Optimizer.Eta != 0.001 {
				t.Errorf("lars: %+v", cfg.Optimizer)
			}
		}
	}
}
