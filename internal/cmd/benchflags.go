package cmd

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"scaleplan/engine/data"
	"scaleplan/engine/dist"
	"scaleplan/engine/torchbench"
	"scaleplan/internal/units"
)

// engineFlags are the flags every bench subcommand that trains has.
func engineFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "model", Value: "mlp", Usage: "network: mlp (784-1024-1024-10) or cnn (conv 3x3x32, conv 3x3x64, max-pool, dense 128, dense 10); with --framework torch also " + strings.Join(slices.DeleteFunc(torchbench.Models(), func(m string) bool { return m == "mlp" || m == "cnn" }), ", ")},
		&cli.IntSliceFlag{Name: "hidden", Value: cli.NewIntSlice(1024, 1024), Usage: "hidden layer widths `H,...` of the mlp"},
		&cli.StringFlag{Name: "data", Usage: "`DIR` of an MNIST-shaped IDX data set, or 'synthetic'; default Fashion-MNIST at " + data.FashionMNISTDir + " if installed, else synthetic"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "`SEED` of the initial weights and the shuffling"},
		&cli.StringFlag{Name: "transport", Value: "inproc", Usage: "how workers exchange gradients: inproc (goroutines), tcp (worker processes on 127.0.0.1), or none (bench throughput only: independent workers, each training its own replica on its shard, the compute of W workers without their all-reduce; logged as transport none)"},
		&cli.BoolFlag{Name: "in-step", Usage: "bench throughput only: independent workers, as with --transport none, that meet once a step over --transport (inproc or tcp) where they would all-reduce, so that they compute in step as exchanging workers do; logged as transport none with the label in_step"},
		&cli.BoolFlag{Name: "overlap", Value: true, Usage: "start each bucket's all-reduce during backward"},
		&cli.StringFlag{Name: "bucket", Value: "1 MiB", Usage: "gradient bucket `SIZE` of the all-reduce"},
		&cli.IntFlag{Name: "threads", Usage: "goroutines per worker for tensor operations (`N`); default cores/workers (bench throughput: cores over the largest of --workers, for every count)"},
		&cli.IntFlag{Name: "chunk", Usage: "most samples a worker runs forward and backward at once (`N`); 0: for the cnn 32 (a power of two whose activations fit in 16 MiB), the mlp whole; -1: whole micro-batches"},
		&cli.IntFlag{Name: "prefetch", Value: 2, Usage: "batches each worker's loader prepares ahead"},
		&cli.DurationFlag{Name: "timeout", Value: dist.DefaultTimeout, Usage: "longest wait for another worker"},
		&cli.StringFlag{Name: "out", Usage: "write the bench log to `FILE`; bench throughput and steps write it record by record, and a run cut short (interrupted, or failing) leaves the records made so far, ending with one that marks the log incomplete"},
		&cli.StringFlag{Name: "run", Usage: "run `NAME` in the records; default bench-SUBCOMMAND-MODEL"},
		formatFlag(),
	}
}

// engineConfig returns the dist configuration the common flags describe
// for bench subcommand name. --transport none, independent workers, is
// for bench throughput alone: the workers of the others must train one
// model together.
func engineConfig(c *cli.Context, name string) (dist.Config, error) {
	cfg := dist.Config{
		Model: c.String("model"), Hidden: c.IntSlice("hidden"), Seed: c.Uint64("seed"), Transport: c.String("transport"), Overlap: c.Bool("overlap"),
		Threads: c.Int("threads"), Prefetch: c.Int("prefetch"), Timeout: c.Duration("timeout"), Chunk: c.Int("chunk"),
	}
	if cfg.Timeout <= 0 {
		// dist.Config reads 0 as its default; a command line that says
		// 0 means something else.
		return cfg, usagef("--timeout %v: want a positive duration, such as 30s", cfg.Timeout)
	}
	bucket, err := units.ParseBytes(c.String("bucket"))
	if err != nil {
		return cfg, usagef("--bucket: %v", err)
	}
	if bucket < 4 || bucket > units.GiB {
		return cfg, usagef("--bucket %v not between 4 B and 1 GiB", bucket)
	}
	cfg.BucketBytes = int(bucket)
	switch d := c.String("data"); d {
	case "":
		if dir := data.DefaultDir(); dir != "" {
			cfg.Data.Dir = dir
		} else {
			fmt.Fprintf(c.App.ErrWriter, "bench: Fashion-MNIST is not installed at %s; using synthetic data\n", data.FashionMNISTDir)
		}
	case "synthetic":
	default:
		cfg.Data.Dir = d
	}
	if c.Bool("in-step") {
		if name != "throughput" || cfg.Transport == "none" {
			return cfg, usagef("bench %s --in-step --transport %s: independent workers in step meet over inproc or tcp; only bench throughput measures them", name, cfg.Transport)
		}
		cfg.Independent, cfg.InStep = true, true
	}
	switch cfg.Transport {
	case "tcp":
		cfg.Spawn = &dist.Spawn{Args: []string{"bench", "worker"}, Stderr: c.App.ErrWriter}
		cfg.Log = c.App.ErrWriter
	case "none":
		if name != "throughput" {
			return cfg, usagef("bench %s --transport none: independent workers train replicas of their own; only bench throughput measures them (valid here: %s)", name, strings.Join(dist.Transports, ", "))
		}
		cfg.Transport, cfg.Independent = "inproc", true
	default:
		if name == "throughput" && !slices.Contains(dist.Transports, cfg.Transport) {
			return cfg, usagef("bench throughput: unknown transport %q (valid: %s, none)", cfg.Transport, strings.Join(dist.Transports, ", "))
		}
	}
	return cfg, nil
}

// checkConfig returns a usage error for a configuration the flags of
// command name made invalid.
func checkConfig(name string, cfg dist.Config) error {
	if err := cfg.Validate(); err != nil {
		return usagef("%s: %v", name, strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return nil
}

// positive returns a usage error unless every value of the flag is >= 1.
func positive(flag string, vs []int) error {
	if len(vs) == 0 {
		return usagef("--%s: no value", flag)
	}
	for _, v := range vs {
		if v < 1 {
			return usagef("--%s: %d is not a positive integer", flag, v)
		}
	}
	return distinct(flag, vs)
}

// distinct returns a usage error for the first value of the list flag
// given twice: measuring a configuration twice over is --repeat's or
// --rounds' work, and a value given twice is more likely a slip.
func distinct[T comparable](flag string, vs []T) error {
	for i, v := range vs {
		if slices.Index(vs, v) < i {
			return usagef("--%s: %v is given twice", flag, v)
		}
	}
	return nil
}

// runName returns the --run flag or bench-SUB-MODEL.
func runName(c *cli.Context, sub string) string {
	if r := c.String("run"); r != "" {
		return r
	}
	return "bench-" + sub + "-" + c.String("model")
}

// benchContext returns the command's context, cancelled on an interrupt
// (SIGINT) or SIGTERM, so that workers are stopped and the log written so
// far is put in place, marked incomplete (benchlog.Stream).
func benchContext(c *cli.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
}

// plotFlag is bench's --plot.
func plotFlag() cli.Flag {
	return &cli.StringFlag{Name: "plot", Usage: "fit the log and write its charts (throughput law, or steps to target) as PNG and SVG into `DIR`"}
}

// checkBenchArgs returns the --format of bench subcommand who, or a usage
// error for an argument, an output path that clashes with an input or
// another output, or an unknown format.
func checkBenchArgs(c *cli.Context, who string) (string, error) {
	if c.NArg() > 0 {
		return "", usagef("%s takes no argument, got %q", who, c.Args().First())
	}
	if err := checkOutputs(who, flagPaths(c.String, "out", "plot"), commandInputs(c, "", nil)); err != nil {
		return "", err
	}
	format := c.String("format")
	return format, checkFormat(format)
}
