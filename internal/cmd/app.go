package cmd

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/internal/version"
)

// Exit codes.
const (
	exitOK      = 0
	exitRuntime = 1 // the command ran and failed: bad input file, simulation error
	exitUsage   = 2 // the command line itself was wrong
)

// usageError marks an error in the command line (unknown flag, missing or
// extra argument); Main exits with exitUsage for it.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usage error.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// newApp builds the command-line application writing to stdout and stderr.
func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:  "scaleplan",
		Usage: "predict how long deep-learning training takes on a cluster, and why",
		Description: "scaleplan simulates data-parallel and pipelined training on the systems of its\n" +
			"hardware catalogue, calibrated by fitting v = b / (b/v0 + t) to measurements.\n\n" +
			"Examples:\n" +
			"   scaleplan catalog                 list systems, devices, models, recipes, scenarios\n" +
			"   scaleplan catalog show tsubame3   every figure of one entry, with units",
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "catalog", Usage: "extra catalogue `FILE|DIR` (YAML) that adds or overrides entries; repeatable"},
			profilesFlag,
			&cli.BoolFlag{Name: "version", Usage: "print the version (module version, VCS revision and time, Go version) and exit"},
		},
		Commands:       commands(),
		Action:         runApp,
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return flagError("scaleplan", c.App.Flags, err)
		},
	}
	return app
}

// runApp runs when no command is named: --version prints the version, a
// first argument that is not a command is an error that suggests the
// nearest one, and nothing prints the help.
func runApp(c *cli.Context) error {
	if c.Bool("version") {
		fmt.Fprintln(c.App.Writer, version.Line(version.Read()))
		return nil
	}
	if c.NArg() > 0 && c.Args().First() != "help" {
		return unknownCommand("scaleplan", c.Args().First(), c.App.Commands)
	}
	return cli.ShowAppHelp(c)
}

// Main runs the application with args (args[0] is the program name) and
// returns the process exit code. It never calls os.Exit.
func Main(args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	err := app.Run(args)
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "scaleplan: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) || isCLIUsage(err) {
		return exitUsage
	}
	return exitRuntime
}

// isCLIUsage recognises the errors urfave/cli returns for a bad command line
// without going through OnUsageError (unknown subcommand, flag parsing in
// subcommands).
func isCLIUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"flag provided but not defined", "No help topic for", "invalid value", "flag needs an argument", "Required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// commands lists the subcommands in the order --help shows them.
func commands() []*cli.Command {
	cmds := []*cli.Command{catalogCommand(), simulateCommand(), fitCommand(), plotCommand(), reportCommand(), predictCommand(), planCommand(), validateCommand(), benchCommand()}
	for _, c := range cmds {
		refuseEmptyValues(c)
		shortUsageErrors(c)
		if t, ok := multiTable[c.Name]; ok {
			c.Flags = append(c.Flags, tableFlag(t.names, t.main))
		}
	}
	return cmds
}

// multiTable lists the commands that print several tables, with the
// names of their tables and the one csv prints by default.
var multiTable = map[string]struct{ names, main string }{
	"catalog":  {"systems, devices, models, recipes, scenarios", "systems"},
	"fit":      {"throughput, excluded, comm, steps, steps_points, runs, collectives (those the logs give)", "the first of these"},
	"predict":  {"side_by_side (with several variants), one per variant (its label in snake_case), notes, answer", "side_by_side, else the only variant's"},
	"plan":     {"pareto, candidates, infeasible, summary", "pareto"},
	"validate": {"cases, summary; with --measured: measurements, groups, devices, summary or collectives, summary", "cases, measurements or collectives"},
}

// refuseEmptyValues makes c and its subcommands refuse a text flag given
// an empty value (--out "", --storage "$UNSET"): it would otherwise read
// as the flag left out, and the command would quietly do its default.
// Commands whose flags may follow their arguments (withArgs) check again
// once those are parsed.
func refuseEmptyValues(c *cli.Command) {
	for _, sub := range c.Subcommands {
		refuseEmptyValues(sub)
	}
	if c.Action == nil {
		return
	}
	action := c.Action
	c.Action = func(ctx *cli.Context) error {
		if err := emptyValue(ctx); err != nil {
			return err
		}
		if err := unknownSubcommand(ctx); err != nil {
			return err
		}
		if err := tableFormat(ctx); err != nil {
			return err
		}
		if hasFlag(ctx.Command, "table") {
			w := ctx.App.Writer
			ctx.App.Writer = &tableChoice{Writer: w, ctx: ctx}
			defer func() { ctx.App.Writer = w }()
		}
		return nameCommand(ctx, tableUsage(action(ctx)))
	}
}

// hasFlag reports whether c has a flag called name.
func hasFlag(c *cli.Command, name string) bool {
	for _, f := range c.Flags {
		if slices.Contains(f.Names(), name) {
			return true
		}
	}
	return false
}

// nameCommand puts the command's name before a usage error that starts
// with the flag it is about ("--workers: 0 is not a positive integer"), so
// that every message says which command refused what.
func nameCommand(ctx *cli.Context, err error) error {
	var ue usageError
	if errors.As(err, &ue) && strings.HasPrefix(ue.Error(), "--") {
		return usageError{fmt.Errorf("%s: %w", commandPath(ctx), ue.err)}
	}
	return err
}

// commandPath returns the names of ctx's command and those above it,
// outermost first, without the application's: "bench throughput".
func commandPath(ctx *cli.Context) string {
	var path []string
	for _, l := range ctx.Lineage() {
		if l.Command != nil && l.Command.Name != "" && l.Command.Name != ctx.App.Name {
			path = append([]string{l.Command.Name}, path...)
		}
	}
	return strings.Join(path, " ")
}

// emptyValue returns a usage error for the first text flag of ctx's
// command, or of the application, that is set to blank text.
func emptyValue(ctx *cli.Context) error {
	for _, l := range ctx.Lineage() {
		var flags []cli.Flag
		switch {
		case l.Command != nil && l.Command.Name != "":
			flags = l.Command.Flags
		case l.App != nil:
			flags = l.App.Flags
		}
		for _, f := range flags {
			name := f.Names()[0]
			if !l.IsSet(name) {
				continue
			}
			var vals []string
			switch f.(type) {
			case *cli.StringFlag:
				vals = []string{l.String(name)}
			case *cli.StringSliceFlag:
				vals = l.StringSlice(name)
			}
			for _, v := range vals {
				if strings.TrimSpace(v) == "" {
					return usagef("%s: --%s is empty: give it a value, or leave it out for its default", commandPath(ctx), name)
				}
			}
		}
	}
	return nil
}
