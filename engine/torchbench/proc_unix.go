//go:build unix

package torchbench

import (
	"os/exec"
	"syscall"
	"time"
)

// setProcessGroup starts cmd in a process group of its own so that
// cancelling the context stops the script's workers too: it sends SIGTERM
// to the group, then SIGKILL to the script if it has not exited 10 s
// later.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
	cmd.WaitDelay = 10 * time.Second
}
