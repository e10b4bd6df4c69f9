package cmd

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"scaleplan/internal/atomicfile"
)

// pathArg is a path a command was given and where: a flag ("--out") or
// an argument ("LOG").
type pathArg struct {
	Where string
	Path  string
}

// checkOutputs returns an error (exit 1) when an output path names
// the same file as an input path, or as another output: writing it would
// destroy what the command reads (`fit --out in.csv in.csv`, `report -o
// s.yaml s.yaml`). Two paths are the same when their cleaned absolute
// forms are equal, or, both existing, os.SameFile says so (a hard or
// symbolic link, a directory given two ways). Empty paths are skipped.
func checkOutputs(cmd string, outputs, inputs []pathArg) error {
	for i, out := range outputs {
		if out.Path == "" {
			continue
		}
		for _, in := range inputs {
			if in.Path != "" && atomicfile.Same(out.Path, in.Path) {
				return fmt.Errorf("%s: %s %s is the input %s %s: an output never overwrites an input; write it elsewhere", cmd, out.Where, out.Path, in.Where, in.Path)
			}
		}
		for _, other := range outputs[i+1:] {
			if other.Path != "" && atomicfile.Same(out.Path, other.Path) {
				return fmt.Errorf("%s: %s %s and %s %s are the same file: give each output its own path", cmd, out.Where, out.Path, other.Where, other.Path)
			}
		}
	}
	return nil
}

// flagPaths returns the paths given to flags (each name without its
// dashes) as pathArgs, the flag spelt as dashed gives it ("--name", or
// "-n" for a one-letter name).
func flagPaths(get func(string) string, names ...string) []pathArg {
	var out []pathArg
	for _, n := range names {
		if p := get(n); p != "" {
			out = append(out, pathArg{Where: dashed(n), Path: p})
		}
	}
	return out
}

// inputFlags are the flags of any command that name files it reads.
var inputFlags = []string{"catalog", "profiles", "calibration", "cases", "measured", "engine-from", "host"}

// commandInputs returns what c reads: args (named what) and the files of
// its input flags, where given.
func commandInputs(c *cli.Context, what string, args []string) []pathArg {
	in := make([]pathArg, len(args))
	for i, a := range args {
		in[i] = pathArg{Where: what, Path: a}
	}
	for _, name := range inputFlags {
		for _, p := range c.StringSlice(name) {
			in = append(in, pathArg{Where: "--" + name, Path: p})
		}
		if p := c.String(name); p != "" && len(c.StringSlice(name)) == 0 {
			in = append(in, pathArg{Where: "--" + name, Path: p})
		}
	}
	return in
}
