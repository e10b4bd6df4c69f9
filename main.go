package main

import (
	"os"

	"scaleplan/internal/cmd"
)

func main() {
	os.Exit(cmd.Main(os.Args, os.Stdout, os.Stderr))
}
