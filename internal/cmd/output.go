package cmd

import (
	"errors"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/internal/tables"
)

// formatFlag is the --format flag every command that prints tables has.
func formatFlag() cli.Flag {
	return &cli.StringFlag{Name: "format", Value: "text", Usage: "output `FORMAT`: text, csv, json or md; csv and json have snake_case keys and SI numbers (docs/output.md)"}
}

// tableFlag is the --table flag of a command that prints several tables:
// names lists them, main is the one csv prints when the flag is left out.
func tableFlag(names, main string) cli.Flag {
	return &cli.StringFlag{Name: "table", Usage: "with --format csv or json, print only the table `NAME`: " + names + " (csv default: " + main + ")"}
}

// checkFormat returns a usage error for an unknown format.
func checkFormat(f string) error {
	if err := tables.CheckFormat(f); err != nil {
		return usageError{err}
	}
	return nil
}

// tableChoice is the writer a command with a --table flag writes to: it
// carries the command's context, from which tables.Write reads the flag
// once the command's flags are all parsed.
type tableChoice struct {
	io.Writer
	ctx *cli.Context
}

// Chosen returns the table --table names, "" for the default.
func (tc *tableChoice) Chosen() string { return tc.ctx.String("table") }

// tableFormat returns a usage error for --table given with a format
// that prints every table (text, md).
func tableFormat(ctx *cli.Context) error {
	if !hasFlag(ctx.Command, "table") || ctx.String("table") == "" {
		return nil
	}
	if f := ctx.String("format"); f != "csv" && f != "json" {
		return usagef("%s: --table applies to --format csv or json; --format %s prints every table", commandPath(ctx), f)
	}
	return nil
}

// tableUsage turns the error of a --table that names no table of the
// command's output into a usage error about the flag.
func tableUsage(err error) error {
	var ut *tables.UnknownTableError
	if errors.As(err, &ut) {
		return usagef("--table %q: no such table in this output (valid: %s)", ut.Name, strings.Join(ut.Valid, ", "))
	}
	return err
}
