//go:build !unix

package tensor

import "time"

// cpuTime returns 0 where the process CPU time is not available; the
// benchmarks then skip their per-CPU-second metric.
func cpuTime() time.Duration { return 0 }
