//go:build !unix

package torchbench

import "os/exec"

// setProcessGroup leaves cmd as it is: cancelling the context kills the
// script only.
func setProcessGroup(cmd *exec.Cmd) {}
