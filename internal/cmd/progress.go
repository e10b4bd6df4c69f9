package cmd

import (
	"github.com/urfave/cli/v2"

	"scaleplan/internal/progress"
)

// newCountdown is progress.NewCountdown on c's stderr.
func newCountdown(c *cli.Context, label, verb, noun string, total *int) *progress.Countdown {
	return progress.NewCountdown(c.App.ErrWriter, label, verb, noun, total)
}
