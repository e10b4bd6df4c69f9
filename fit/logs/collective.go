package logs

import "scaleplan/internal/units"

// Collective is one test of nccl-tests (or ROCm's rccl-tests): a
// collective operation timed at a sweep of message sizes over a group of
// ranks, one device each.
type Collective struct {
	Line   int    // line of the test's "# nThread" header
	Op     string // "all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce", "sendrecv", ...; "" where the log does not say
	Ranks  int    // ranks of the test, from its "#  Rank" lines; 0 if it lists none
	Nodes  int    // distinct hosts of those ranks; 0 if it lists none
	Device string // device name of rank 0 ("NVIDIA H100 80GB HBM3"); "" if it lists none
	Type   string // data type of the first row, "float"
	// Threads and GPUs are the header's "nThread T nGpus G": the threads
	// of each process, and the devices each thread drives (one
	// ncclGroupStart/End enqueueing G calls a test); 0 where the header
	// does not say.
	Threads, GPUs int
	// AvgBusBW is the mean bus bandwidth the test prints at its end ("# Avg
	// bus bandwidth"); 0 if it prints none.
	AvgBusBW units.BytesPerSec
	Points   []CollectivePoint // in the order printed
}

// CollectivePoint is one message size of a Collective, out of place.
type CollectivePoint struct {
	Line  int
	Bytes units.Bytes       // message size as nccl-tests counts it (the whole buffer)
	Time  units.Seconds     // mean time of one operation
	AlgBW units.BytesPerSec // Bytes / Time, as printed (GB/s of 10^9 bytes)
	BusBW units.BytesPerSec // AlgBW × fit.BusFactor, as printed
}
