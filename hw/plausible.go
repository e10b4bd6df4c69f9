package hw

import (
	"strconv"
	"strings"

	"scaleplan/internal/config"
	"scaleplan/internal/units"
)

// quantity is a float64 quantity that prints with its unit.
type quantity interface {
	~float64
	String() string
}

// span is the plausible range of a catalogue figure, bounds included.
type span[T quantity] struct{ lo, hi T }

// The plausible ranges of catalogue figures. Validate refuses a value
// outside its range, with its path and the range: such a value is a
// mistake (a unit typo, "1e-300", "5e-324") that the simulator would
// otherwise turn into step times that blame the model. Every range holds
// the shipped entries with a margin of at least 20 on each side (shipped,
// in brackets).
var (
	// peakSpan bounds a device's peak per precision: 1 MFLOP/s to 1
	// EFLOP/s [166 GFLOP/s to 2.25 PFLOP/s].
	peakSpan = span[units.FLOPsPerSec]{1e6, 1e18}
	// systemPeakSpan bounds a system's published peak: 1 MFLOP/s to 10,000
	// EFLOP/s [12.2 to 47.2 PFLOP/s].
	systemPeakSpan = span[units.FLOPsPerSec]{1e6, 1e22}
	// byteRateSpan bounds memory bandwidth, host links, intra-node links,
	// drives and shared storage: 1 MB/s to 1 PB/s [500 MB/s to 47.5 TB/s].
	byteRateSpan = span[units.BytesPerSec]{1e6, 1e15}
	// bitRateSpan bounds NICs and fabrics: 1 Mbit/s to 1 Pbit/s [1 to
	// 400 Gbit/s].
	bitRateSpan = span[units.BitsPerSec]{1e6, 1e15}
	// memorySpan bounds device and host memory: 1 MiB to 100 TiB [900 MB
	// to 2 TB].
	memorySpan = span[units.Bytes]{1 << 20, 100 << 40}
	// sramSpan bounds on-chip memory: 1 KiB to 100 TiB [900 MB].
	sramSpan = span[units.Bytes]{1 << 10, 100 << 40}
	// driveSpan bounds one drive's capacity: 1 MiB to 1 PiB [960 GB to
	// 3.84 TB].
	driveSpan = span[units.Bytes]{1 << 20, 1 << 50}
	// clockSpan bounds a CPU clock: 1 MHz to 100 GHz [2 to 4 GHz].
	clockSpan = span[units.Hertz]{1e6, 1e11}
	// powerSpan bounds a TDP or a node's or system's power: 1 W to 1 GW
	// [70 W to 14.3 kW].
	powerSpan = span[units.Watts]{1, 1e9}
)

// Upper bounds of latencies, counts, ratios and prices [shipped].
const (
	maxLatency          = units.Seconds(1) // links, fabrics, transport overheads, storage requests [1 us to 1 ms]
	maxNodeDevices      = 4096             // devices in a node [1 to 16]
	maxNodes            = 1 << 17          // nodes in a system, the simulator's rank limit [1 to 540]
	maxSockets          = 64               // CPU sockets in a node [1 to 2]
	maxThreadsPerCore   = 8                // [1 to 2]; IBM POWER runs 8
	maxCoresPerSocket   = 1 << 16          // [4 to 64]; localhost counts every logical CPU of the machine
	maxDrives           = 1024             // drives of one kind in a node [1 to 8]
	maxNICs             = 1024             // adapters of one kind in a node [1 to 8]
	maxPorts            = 64               // ports per adapter [0 to 2]
	maxOversubscription = 1000             // [1 to 5.12]
	maxPrice            = 10000            // US dollars per device-hour [0.35 to 12.3]
	maxTreeSockets      = 8                // CPU sockets a PCIe tree models: netsim.MaxSockets [1 to 2]
	maxStreams          = 64               // streams per transfer between nodes: NCCL's MAX_SOCKETS (src/transport/net_socket.cc) [1]
	maxSMs              = 1 << 16          // streaming multiprocessors of a GPU [40 to 148]
	maxNCCLChannels     = 64               // NCCL's MAXCHANNELS (src/include/device.h) [8 to 32]
)

// show prints v with its unit; a value too large for its unit's prefixes
// is printed in base units with four digits.
func show[T quantity](v T) string {
	s := v.String()
	if len(s) <= 24 {
		return s
	}
	unit := strings.TrimPrefix(T(1).String(), "1 ")
	return strconv.FormatFloat(float64(v), 'g', 4, 64) + " " + unit
}

// outside reports whether v is not a number within s: NaN and, as every
// span's bounds are finite, ±Inf are outside.
func (s span[T]) outside(v T) bool {
	return !(v >= s.lo && v <= s.hi)
}

// need reports a required figure that is not > 0 or not within s.
func need[T quantity](ps *config.Problems, path string, v T, s span[T]) {
	switch {
	case v == 0:
		ps.Addf(path, "must be > 0")
	case !(v > 0):
		ps.Addf(path, "must be > 0, not %s", show(v))
	case s.outside(v):
		ps.Addf(path, "must be within %s to %s, not %s", s.lo, s.hi, show(v))
	}
}

// optional reports a figure that is neither 0 (not given) nor within s.
func optional[T quantity](ps *config.Problems, path string, v T, s span[T]) {
	switch {
	case v == 0:
	case !(v > 0):
		ps.Addf(path, "must be >= 0, not %s", show(v))
	case s.outside(v):
		ps.Addf(path, "must be 0 or within %s to %s, not %s", s.lo, s.hi, show(v))
	}
}

// latency reports a latency or overhead outside 0 to maxLatency.
func latency(ps *config.Problems, path string, v units.Seconds) {
	switch {
	case !(v >= 0):
		ps.Addf(path, "must be >= 0, not %s", show(v))
	case v > maxLatency:
		ps.Addf(path, "must be at most %s, not %s", maxLatency, show(v))
	}
}

// optionalCount reports a count that is neither 0 (not given) nor
// within 1 to hi.
func optionalCount(ps *config.Problems, path string, n, hi int) {
	if n < 0 || n > hi {
		ps.Addf(path, "must be 0 (not given) or within 1 to %d, not %d", hi, n)
	}
}

// count reports a count outside 1 to hi.
func count(ps *config.Problems, path string, n, hi int) {
	switch {
	case n < 1:
		ps.Addf(path, "must be >= 1, not %d", n)
	case n > hi:
		ps.Addf(path, "must be at most %d, not %d", hi, n)
	}
}
