package cmd

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"scaleplan/internal/benchlog"
)

func TestBenchTrain(t *testing.T) {
	log := filepath.Join(t.TempDir(), "train.jsonl")
	stdout, stderr, code := runCLI("bench", "train", "--data", "synthetic", "--hidden", "64", "--epochs", "0.05", "--batch", "16", "--lr", "0.01",
		"--target", "0.2", "--out", log)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs := readLog(t, log)
	checkHeader(t, recs, "bench-train-mlp", "bench train")
	if len(recs) != 2 || recs[1].Kind != benchlog.KindConvergence || recs[1].Batch != 16 || recs[1].LearningRate != 0.01 || recs[1].Target != 0.2 {
		t.Fatalf("records %+v", recs)
	}
	if want := fmt.Sprintf("final test accuracy %.4f", recs[1].Accuracy); !strings.Contains(stdout, want) {
		t.Errorf("stdout lacks %q:\n%s", want, stdout)
	}
}

// bench train refuses a recipe the engine cannot train, with
// engine/recipe's reason (its tests cover the mapping).
func TestBenchTrainRecipe(t *testing.T) {
	_, stderr, code := runCLI("bench", "train", "--recipe", "mlperf-v0.7-resnet50", "--data", "synthetic")
	if code != exitRuntime || !strings.Contains(stderr, "trains resnet50; the engine trains mlp or cnn") {
		t.Errorf("resnet50 recipe: exit %d: %s", code, stderr)
	}
}
