// Command scaleplan predicts how long deep-learning training takes on a
// cluster, and why. See README.md and `scaleplan --help`.
package main

import (
	"os"

	"scaleplan/internal/cmd"
)

func main() {
	os.Exit(cmd.Main(os.Args, os.Stdout, os.Stderr))
}
