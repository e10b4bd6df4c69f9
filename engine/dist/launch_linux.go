package dist

import (
	"os/exec"
	"syscall"
)

// setDeathSignal makes the kernel kill cmd when this process dies.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
