package logs

import (
	"math"
	"path/filepath"
	"testing"
)

// ncclBusFactor is nccl-tests' bus bandwidth factor of an op over n ranks,
// as its doc/PERFORMANCE.md defines it (github.com/NVIDIA/nccl-tests,
// "Bus bandwidth"): 2(n−1)/n for all_reduce, (n−1)/n for all_gather,
// reduce_scatter and alltoall, 1 for broadcast, reduce and sendrecv.
func ncclBusFactor(op string, n int) (float64, bool) {
	p := float64(n)
	switch op {
	case "all_reduce":
		return 2 * (p - 1) / p, true
	case "all_gather", "reduce_scatter", "alltoall":
		return (p - 1) / p, true
	case "broadcast", "reduce", "sendrecv":
		return 1, true
	}
	return 0, false
}

// TestReadPublishedNCCL reads every published table of
// testdata/measurements/nccl-tests and checks what the reader takes from
// each against the printed figures themselves: every line read, each test
// with its op, ranks and nodes, and each row's algorithm bandwidth equal to
// its size over its time and its bus bandwidth to that times the op's
// factor of nccl-tests' doc/PERFORMANCE.md, within the two decimals the
// tables print. A row copied wrong into a file, or a file the reader takes
// otherwise than its source printed it, fails here.
func TestReadPublishedNCCL(t *testing.T) {
	files, err := filepath.Glob("../../testdata/measurements/nccl-tests/*.txt")
	if err != nil || len(files) < 20 {
		t.Fatalf("published tables: %d files (%v), want at least 20", len(files), err)
	}
	for _, f := range files {
		lg, err := ReadFile(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if lg.Malformed > 0 || len(lg.Collectives) == 0 {
			t.Errorf("%s: %d malformed lines %v, %d tests", f, lg.Malformed, lg.Errors, len(lg.Collectives))
		}
		for _, c := range lg.Collectives {
			factor, ok := ncclBusFactor(c.Op, c.Ranks)
			if !ok || c.Ranks < 2 || c.Nodes < 1 || len(c.Points) < 4 {
				t.Errorf("%s:%d: op %q, %d ranks, %d nodes, %d sizes", f, c.Line, c.Op, c.Ranks, c.Nodes, len(c.Points))
				continue
			}
			for _, p := range c.Points {
				alg := float64(p.Bytes) / float64(p.Time) / 1e9
				// The time is printed to 4 significant digits, the
				// bandwidths to 0.01 GB/s.
				if math.Abs(alg-float64(p.AlgBW)/1e9) > 0.006+alg*6e-4 {
					t.Errorf("%s:%d: algbw %.2f GB/s printed, size/time %.3f", f, p.Line, float64(p.AlgBW)/1e9, alg)
				}
				bus := float64(p.AlgBW) / 1e9 * factor
				if math.Abs(bus-float64(p.BusBW)/1e9) > 0.006+0.006*factor {
					t.Errorf("%s:%d: busbw %.2f GB/s printed, algbw × %.4f = %.3f", f, p.Line, float64(p.BusBW)/1e9, factor, bus)
				}
			}
		}
	}
}
