//go:build unix

package cmd

import (
	"syscall"
	"time"
)

// cpuTime returns the process's user and system CPU time so far, and
// whether the platform reports it.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
