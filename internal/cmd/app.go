package cmd

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
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
		},
		Commands:       commands(),
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return usageError{err}
		},
	}
	return app
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
	return []*cli.Command{catalogCommand(), simulateCommand(), fitCommand(), plotCommand(), reportCommand(), predictCommand(), planCommand(), validateCommand(), benchCommand()}
}
