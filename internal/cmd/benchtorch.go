package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/engine/torchbench"
	"scaleplan/internal/tables"
)

// torchFlags are the flags of `bench throughput` that only
// --framework torch reads.
func torchFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "precision", Usage: "torch: `P,...` of fp32, tf32, amp-fp16, amp-bf16 (default fp32)"},
		&cli.StringFlag{Name: "device", Usage: "torch: auto (CUDA when available), cpu or cuda (default auto)"},
		&cli.StringFlag{Name: "python", Usage: "torch: interpreter to try first (default python3 on PATH, then /usr/bin/python3)"},
		&cli.IntFlag{Name: "image-size", Usage: "torch: square input size in pixels of the image models (default each model's own)"},
		&cli.BoolFlag{Name: "channels-last", Usage: "torch: train convolutional models in channels_last"},
		&cli.BoolFlag{Name: "compile", Usage: "torch: wrap the model in torch.compile (torch 2.0 or later)"},
		&cli.IntFlag{Name: "nodes", Value: 1, Usage: "torch: machines `N` that run this command together, each with its own --node-rank (torchrun's --nnodes); --workers is the workers of each, the world N × workers"},
		&cli.IntFlag{Name: "node-rank", Usage: "torch: this machine's rank `R` from 0 to --nodes − 1 (torchrun's --node_rank); node rank 0 hosts the rendezvous and writes the log and the table"},
		&cli.StringFlag{Name: "master-addr", Usage: "torch: `HOST` name or IP address of node rank 0 as every node reaches it (torchrun's --master_addr); needed with --nodes above 1"},
		&cli.IntFlag{Name: "master-port", Usage: "torch: TCP `PORT` of the rendezvous on node rank 0 (torchrun's --master_port); default 29500 with several nodes, a free port on one"},
		&cli.StringFlag{Name: "backend", Value: "auto", Usage: "torch: torch.distributed backend: auto (nccl on CUDA, gloo on the CPU), nccl or gloo"},
		&cli.BoolFlag{Name: "profile", Usage: "torch: after each batch's timed steps, profile 3 more with torch.profiler and write the per-operator table (calls, CPU and device time, FLOPs per step) beside --out, its .jsonl replaced by .profile.json, for fit --profile; one worker"},
	}
}

// Flags of `bench throughput` that only one framework reads; setting one
// for the other framework is a usage error rather than silently ignored.
var (
	torchOnlyFlags  = []string{"precision", "device", "python", "image-size", "channels-last", "compile", "nodes", "node-rank", "master-addr", "master-port", "backend", "profile"}
	engineOnlyFlags = []string{"hidden", "data", "seed", "transport", "overlap", "bucket", "prefetch", "accumulate", "chunk", "lr", "repeat", "rounds", "warm-rounds", "core-guard"}
)

// checkFrameworkFlags returns a usage error naming the first flag set on
// the command line that framework does not read.
func checkFrameworkFlags(c *cli.Context, framework string) error {
	other := torchOnlyFlags
	if framework == "torch" {
		other = engineOnlyFlags
	}
	for _, f := range other {
		if c.IsSet(f) {
			return usagef("--%s does not apply to --framework %s", f, framework)
		}
	}
	return nil
}

// torchOptions returns the torchbench options the flags of `bench
// throughput --framework torch` describe.
func torchOptions(c *cli.Context) (torchbench.Options, error) {
	opt := torchbench.Options{
		Python: c.String("python"), Models: []string{c.String("model")}, Precision: c.String("precision"),
		Steps: c.Int("steps"), Warmup: c.Int("warmup"), ChannelsLast: c.Bool("channels-last"), Compile: c.Bool("compile"),
		Device: c.String("device"), ImageSize: c.Int("image-size"), Threads: c.Int("threads"),
		StepRecords: c.Bool("step-records"), Run: runName(c, "throughput"),
		Nodes: c.Int("nodes"), NodeRank: c.Int("node-rank"), MasterAddr: c.String("master-addr"), MasterPort: c.Int("master-port"),
		Backend: c.String("backend"),
	}
	if c.Bool("profile") {
		out := c.String("out")
		if out == "" {
			return opt, usagef("--profile: name the log with --out; the profile is written beside it")
		}
		opt.Profile = profilePath(out)
	}
	if c.IsSet("timeout") {
		if opt.Timeout = c.Duration("timeout"); opt.Timeout <= 0 {
			return opt, usagef("--timeout %v: want a positive duration, such as 30s", opt.Timeout)
		}
	}
	if opt.Warmup < 0 {
		return opt, usagef("--warmup %d is negative", opt.Warmup)
	}
	if opt.Warmup == 0 {
		opt.Warmup = -1 // no warm-up, as asked; torchbench's 0 means its default
	}
	if opt.Steps < 1 { // torchbench's 0 would be its default
		return opt, usagef("--steps %d: want 1 or more timed steps", opt.Steps)
	}
	if c.IsSet("batch") {
		opt.Batches = c.IntSlice("batch")
		if err := positive("batch", opt.Batches); err != nil {
			return opt, err
		}
	}
	if err := distinct("precision", splitList(opt.Precision)); err != nil {
		return opt, err
	}
	if c.IsSet("workers") {
		w := c.IntSlice("workers")
		if len(w) != 1 {
			return opt, usagef("--framework torch measures one worker count per run, got --workers %s (run it once per count)", tables.JoinInts(w))
		}
		opt.NProc = w[0]
	}
	if err := opt.Validate(); err != nil {
		return opt, usagef("bench throughput --framework torch: %v", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return opt, nil
}

// runBenchTorch is `bench throughput --framework torch`: it runs the
// PyTorch bench script (engine/torchbench), writes its log to --out
// atomically and prints a table of what it measured.
func runBenchTorch(c *cli.Context) error {
	if err := checkFrameworkFlags(c, "torch"); err != nil {
		return err
	}
	format := c.String("format")
	if err := checkFormat(format); err != nil {
		return err
	}
	opt, err := torchOptions(c)
	if err != nil {
		return err
	}
	ctx, cancel := benchContext(c)
	defer cancel()
	var log bytes.Buffer
	berr := torchbench.Bench(ctx, opt, &log, c.App.ErrWriter)
	if opt.NodeRank > 0 {
		return otherNode(c, opt, berr)
	}
	if berr != nil && !errors.Is(berr, torchbench.ErrInterrupted) {
		return fmt.Errorf("bench throughput --framework torch: %w", berr)
	}
	// Interrupted (^C) after measuring something: keep and show what was
	// measured, then fail.
	t, err := tables.BenchTorch(bytes.NewReader(log.Bytes()))
	if err != nil {
		return fmt.Errorf("bench throughput --framework torch: %w", err)
	}
	if err := finish(c, log.Bytes(), t, format); err != nil {
		return err
	}
	if berr != nil {
		return fmt.Errorf("bench throughput --framework torch: %w", berr)
	}
	return nil
}

// otherNode ends bench throughput --framework torch on a node of rank
// above 0, whose workers' measurements are in node rank 0's log: it
// writes no log and no table, leaving --out as it was.
func otherNode(c *cli.Context, opt torchbench.Options, berr error) error {
	if berr != nil {
		return fmt.Errorf("bench throughput --framework torch: node rank %d: %w", opt.NodeRank, berr)
	}
	if out := c.String("out"); out != "" {
		fmt.Fprintf(c.App.ErrWriter, "bench: node rank %d: %s left as it was; the log is node rank 0's\n", opt.NodeRank, out)
	}
	return nil
}

// profilePath is the file of the per-operator profile beside the bench
// log out: its name with .profile.json in place of .jsonl (or added), as
// torchbench.py names it.
func profilePath(out string) string {
	return strings.TrimSuffix(out, ".jsonl") + ".profile.json"
}
