//go:build !unix

package cmd

import "time"

// cpuTime reports no CPU time where the platform has no getrusage.
func cpuTime() (time.Duration, bool) { return 0, false }
