package cmd

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/compute"
	"scaleplan/engine/torchbench"
	"scaleplan/internal/atomicfile"
)

// benchHostCommand is `bench host`: the host's cost per operator of eager
// PyTorch, the table --host reads.
func benchHostCommand() *cli.Command {
	return &cli.Command{
		Name:      "host",
		Usage:     "measure this host's cost per operator of eager PyTorch: the table --host reads",
		ArgsUsage: " ",
		Description: "Runs engine/torchbench's torchhost.py (scripts/torchhost.py) with the python3 that can\n" +
			"import torch: a small operator's dispatch, autograd's record, an nn.Module call, the\n" +
			"foreach optimizers' and the gradient scaler's costs per parameter tensor, on CPU\n" +
			"tensors, and where torch sees a CUDA device its small operator's dispatch and launch\n" +
			"(cuda_op), a synchronisation (cuda_sync) and a timing event (cuda_event): a few\n" +
			"seconds, no training. validate, simulate, predict, report, plan and fit --operators\n" +
			"take the table with --host (docs/compute-calibration.md, \"The host's own costs\").\n\n" +
			"Examples:\n" +
			"   scaleplan bench host --out host.csv\n" +
			"   scaleplan validate --measured sweep.jsonl --host host.csv",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "write the table to `FILE` (atomically); default standard output"},
			&cli.StringFlag{Name: "device", Value: "auto", Usage: "`DEVICE` whose operators to time besides the CPU's: auto (CUDA where torch sees a device), cpu or cuda"},
			&cli.StringFlag{Name: "python", Usage: "interpreter to try first (default python3 on PATH, then /usr/bin/python3)"},
			&cli.IntFlag{Name: "rounds", Usage: "medians of timings of which the table keeps the least, `N` from 1 to 100 (default the script's 9; fewer is faster and noisier)"},
		},
		Action: runBenchHost,
	}
}

// runBenchHost is `bench host`.
func runBenchHost(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("bench host takes no arguments (got %q)", c.Args().First())
	}
	if d := c.String("device"); !slices.Contains(torchbench.HostDevices, d) {
		return usagef("bench host: --device %q: want one of %s", d, strings.Join(torchbench.HostDevices, ", "))
	}
	if n := c.Int("rounds"); c.IsSet("rounds") && (n < 1 || n > 100) {
		return usagef("bench host: --rounds %d: want 1 to 100", n)
	}
	if err := checkOutputs("bench host", flagPaths(c.String, "out"), commandInputs(c, "", nil)); err != nil {
		return err
	}
	ctx, cancel := benchContext(c)
	defer cancel()
	table, err := torchbench.HostTable(ctx, torchbench.HostOptions{Python: c.String("python"), Device: c.String("device"), Rounds: c.Int("rounds")})
	if err != nil {
		return fmt.Errorf("bench host: %w", err)
	}
	if _, err := compute.ReadHostTable(bytes.NewReader(table)); err != nil {
		return fmt.Errorf("bench host: the script's table does not read back: %w", err)
	}
	out := c.String("out")
	if out == "" {
		_, err := c.App.Writer.Write(table)
		return err
	}
	return atomicfile.Write(out, func(w io.Writer) error {
		_, err := w.Write(table)
		return err
	})
}
