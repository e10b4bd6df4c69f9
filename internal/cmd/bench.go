package cmd

import (
	"github.com/urfave/cli/v2"

	"scaleplan/engine/dist"
)

// Frameworks `bench throughput --framework` accepts: scaleplan's engine
// and PyTorch (engine/torchbench).
var benchFrameworks = []string{"engine", "torch"}

// benchTool is the bench log's Tool for engine runs.
const benchTool = "scaleplan-engine"

// benchCommand is `scaleplan bench`.
func benchCommand() *cli.Command {
	tp := benchThroughputCommand()
	return &cli.Command{
		Name:  "bench",
		Usage: "run the reference training engine and write a bench log",
		Description: "Trains scaleplan's own engine (engine/dist: data-parallel workers with a ring\n" +
			"all-reduce) on Fashion-MNIST, or synthetic data when it is not installed, and\n" +
			"writes what it measured as a bench log (JSON lines) for `scaleplan fit`:\n\n" +
			"   throughput  step time and samples/s per worker count and batch\n" +
			"   steps       steps to a target accuracy per global batch, learning rate searched\n" +
			"   train       train to a recipe's accuracy target and report the test accuracy\n" +
			"   host        this host's cost per operator of eager PyTorch (a table, not a log)\n\n" +
			"With no subcommand, bench is bench throughput and takes its flags. With\n" +
			"--framework torch it measures PyTorch instead (engine/torchbench: ResNet-50,\n" +
			"EfficientNet-B4, Transformer, Mask R-CNN, the MLP and CNN; on CUDA or the CPU)\n" +
			"with the python3 on PATH, or /usr/bin/python3, that can import torch.\n\n" +
			"Every log starts with a header record holding the run's full configuration and\n" +
			"the machine (CPU model, cores, BLAS backend, Go version). Builds with -tags\n" +
			"openblas are an order of magnitude faster; run them with OPENBLAS_CORETYPE set\n" +
			"(SkylakeX on AVX-512 Xeons). docs/engine.md has the details.\n\n" +
			"Examples:\n" +
			"   scaleplan bench throughput --workers 1,2 --batch 16,64,256,1024 --out mlp.jsonl\n" +
			"   scaleplan bench throughput --workers 2 --transport tcp --model cnn --batch 64\n" +
			"   scaleplan bench steps --target 0.85 --out steps.jsonl\n" +
			"   scaleplan bench train --model cnn\n" +
			"   scaleplan bench --framework torch --model cnn --batch 16,32,64 --steps 5 --out torch.jsonl",
		Flags:       tp.Flags,
		Action:      runBenchThroughput,
		Subcommands: []*cli.Command{tp, benchStepsCommand(), benchTrainCommand(), benchHostCommand(), benchWorkerCommand()},
	}
}

// sweepTemplate returns the engine configuration shared by a sweep's
// runs for its header: defaults filled in, with the fields that vary
// (workers, batch, steps and the threads that follow from the workers)
// as the flags gave them.
func sweepTemplate(base dist.Config) dist.Config {
	e := base.WithDefaults()
	e.Workers, e.Batch, e.Steps, e.Threads = base.Workers, base.Batch, base.Steps, base.Threads
	return e
}

func benchWorkerCommand() *cli.Command {
	return &cli.Command{
		Name:   "worker",
		Usage:  "run one worker process of a --transport tcp bench (started by bench itself)",
		Hidden: true,
		Action: func(c *cli.Context) error {
			if !dist.IsWorker() {
				return usagef("bench worker is started by `bench --transport tcp`; it needs %s, %s and %s", dist.EnvCoordinator, dist.EnvRank, dist.EnvToken)
			}
			ctx, cancel := benchContext(c)
			defer cancel()
			return dist.RunWorker(ctx, c.App.ErrWriter)
		},
	}
}
