//go:build !linux

package dist

import "os/exec"

// setDeathSignal does nothing outside Linux: workers end when their
// coordinator connection closes.
func setDeathSignal(cmd *exec.Cmd) {}
