package cmd

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/internal/config"
)

// commandNames returns the names and aliases of cmds but the help
// command urfave/cli adds.
func commandNames(cmds []*cli.Command) []string {
	var names []string
	for _, c := range cmds {
		if c.Name != "help" {
			names = append(names, c.Names()...)
		}
	}
	return names
}

// unknownCommand is the usage error for a command path that names no
// command: it names the word, suggests the nearest command, and says
// where the list is.
func unknownCommand(path, word string, cmds []*cli.Command) error {
	msg := fmt.Sprintf("unknown command %q", word)
	if path != "scaleplan" {
		msg = path + ": " + msg
	}
	if s := config.Suggest(word, commandNames(cmds)); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return usagef("%s\nrun '%s --help' for the commands", msg, helpPath(path))
}

// helpPath is the command line of path's help: "scaleplan" for the
// application, "scaleplan bench" for a command.
func helpPath(path string) string {
	if path == "scaleplan" {
		return path
	}
	return "scaleplan " + path
}

// unknownSubcommand returns the usage error of a command with
// subcommands whose first argument is not one of them but close to one
// ("bench thruput"); nil otherwise, the command's own checks then saying
// what is wrong with its arguments.
func unknownSubcommand(ctx *cli.Context) error {
	subs := commandNames(ctx.Command.Subcommands)
	if len(subs) == 0 || ctx.NArg() == 0 {
		return nil
	}
	first := ctx.Args().First()
	if strings.HasPrefix(first, "-") || config.Suggest(first, subs) == "" {
		return nil
	}
	return unknownCommand(commandPath(ctx), first, ctx.Command.Subcommands)
}

// shortUsageErrors makes c and its subcommands answer a command line
// their flags refuse with flagError rather than the whole help text.
func shortUsageErrors(c *cli.Command) {
	shortUsageErrorsUnder(c, "")
}

func shortUsageErrorsUnder(c *cli.Command, parent string) {
	path := strings.TrimSpace(parent + " " + c.Name)
	for _, sub := range c.Subcommands {
		shortUsageErrorsUnder(sub, path)
	}
	c.OnUsageError = func(ctx *cli.Context, err error, _ bool) error {
		return flagError(path, c.Flags, err)
	}
}

// undefinedFlag matches the flag package's error for an unknown flag.
var undefinedFlag = regexp.MustCompile(`^flag provided but not defined: -+(.+)$`)

// flagError returns the usage error for err, an error of flag parsing in
// the command path ("scaleplan" for the application's own flags) whose
// flags are flags: one line saying what is wrong, naming the nearest flag
// for an unknown one, and one line saying where the flags are listed.
func flagError(path string, flags []cli.Flag, err error) error {
	msg := err.Error()
	if m := undefinedFlag.FindStringSubmatch(msg); m != nil {
		msg = "unknown flag " + dashed(m[1])
		var names []string
		for _, f := range flags {
			names = append(names, f.Names()...)
		}
		if s := config.Suggest(m[1], append(names, "help")); s != "" {
			msg += "; did you mean " + dashed(s) + "?"
		}
	}
	if path != "scaleplan" {
		msg = path + ": " + msg
	}
	return usagef("%s\nrun '%s --help' for its flags", msg, helpPath(path))
}

// dashed writes a flag's name as it is given: -h, --format.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}
