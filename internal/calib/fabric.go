package calib

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"scaleplan/internal/config"
	"scaleplan/internal/units"
)

// Levels of a system's network that a FabricEntry calibrates.
const (
	// Intra is the link between the devices of one node (NVLink, PCIe):
	// each device's port into the node's peer-to-peer fabric.
	Intra = "intra"
	// Inter is the fabric between nodes: each NIC (or port) that carries
	// collective traffic.
	Inter = "inter"
)

// FabricLevels lists the levels a FabricEntry may name.
var FabricLevels = []string{Intra, Inter}

// FabricEntry is one level of a catalogue system's network fitted to
// collective benchmarks (nccl-tests) by inverting the simulator: the link
// bandwidth and per-message latency that make the simulated collective
// times of the tests closest to the measured ones (least squares of the
// log of the time ratio over every size of every test). A scenario on
// System takes them in place of the catalogue's link and transport
// figures of that level.
type FabricEntry struct {
	System string `yaml:"system"` // catalogue system the tests ran on
	Level  string `yaml:"level"`  // Intra or Inter
	// Transport is the system's transport between nodes (Inter) or inside
	// a node (Intra) the tests crossed, as a scenario names it; "" for the
	// system's default. An entry applies to scenarios on that transport.
	Transport string `yaml:"transport,omitempty"`

	// Bandwidth is the link's effective bandwidth per direction: a
	// device's port into the node's fabric (Intra), one NIC or port
	// (Inter), after the transport's efficiency.
	Bandwidth         units.BytesPerSec   `yaml:"bandwidth"`
	BandwidthInterval []units.BytesPerSec `yaml:"bandwidth_interval,flow,omitempty"` // [low, high]; absent where the fit gives none
	// Latency is the time each message (hop) on the level adds, with the
	// transport's overhead and the switches' latency. Fitted with the
	// "nccl" algorithm, inside a node it is the latency of NCCL's LL ring
	// hop, from which NCCL's other hop latencies of the node's link class
	// scale (sim.Network.NCCLHopLatency); between nodes the network's own
	// latency NCCL adds to each hop.
	Latency         units.Seconds   `yaml:"latency"`
	LatencyInterval []units.Seconds `yaml:"latency_interval,flow,omitempty"` // [low, high]; absent where the fit gives none

	// Undetermined names the figure ("bandwidth" or "latency") that no
	// size of the tests depended on at the fit: another link bounded
	// them all, and the figure is where the search stopped.
	Undetermined []string `yaml:"undetermined,flow,omitempty"`

	// Algorithm is the simulator's exchange the fit inverted ("ring",
	// "nccl", ...); it sets what Latency means inside a node.
	Algorithm string `yaml:"algorithm"`
	// Error is the mean |predicted − measured|/measured time over the
	// sizes fitted, after the fit.
	Error  float64 `yaml:"error"`
	Tests  int     `yaml:"tests"`            // tests fitted
	Sizes  int     `yaml:"sizes"`            // message sizes fitted, over all tests
	Ranks  []int   `yaml:"ranks,flow"`       // [fewest, most] ranks of the tests
	Source string  `yaml:"source,omitempty"` // log files, comma-separated
}

// validateFabric adds the problems of c's fabric entries to ps.
func (c *Calibration) validateFabric(ps *config.Problems) {
	seen := map[string]int{}
	for i, e := range c.Fabric {
		p := fmt.Sprintf("fabric[%d]", i)
		if e.System == "" {
			ps.Addf(p+".system", "missing: the catalogue system the tests ran on")
		}
		if !slices.Contains(FabricLevels, e.Level) {
			ps.Addf(p+".level", "%q: want one of %s", e.Level, strings.Join(FabricLevels, ", "))
		}
		if !(e.Bandwidth > 0) || !finite(float64(e.Bandwidth)) {
			ps.Addf(p+".bandwidth", "%v: must be a finite rate > 0 (e.g. 46 GB/s)", float64(e.Bandwidth))
		}
		if !(e.Latency >= 0) || !finite(float64(e.Latency)) {
			ps.Addf(p+".latency", "%v: must be a finite time >= 0 (e.g. 7 us)", float64(e.Latency))
		}
		checkPair(ps, p+".bandwidth_interval", floats(e.BandwidthInterval))
		checkPair(ps, p+".latency_interval", floats(e.LatencyInterval))
		for _, u := range e.Undetermined {
			if u != "bandwidth" && u != "latency" {
				ps.Addf(p+".undetermined", "%q: want bandwidth or latency", u)
			}
		}
		if e.Algorithm == "" {
			ps.Addf(p+".algorithm", "missing: the simulator's all-reduce the fit inverted (ring)")
		}
		if !(e.Error >= 0) || !finite(e.Error) {
			ps.Addf(p+".error", "%v: must be a finite fraction >= 0", e.Error)
		}
		if e.Tests < 1 {
			ps.Addf(p+".tests", "%d: a fit needs at least 1 test", e.Tests)
		}
		if e.Sizes < 2 {
			ps.Addf(p+".sizes", "%d: a fit of two parameters needs at least 2 sizes", e.Sizes)
		}
		if r := e.Ranks; r != nil && (len(r) != 2 || r[0] < 2 || r[0] > r[1]) {
			ps.Addf(p+".ranks", "%v: want [fewest, most] with 2 <= fewest <= most", r)
		}
		k := e.System + "\x00" + e.Level + "\x00" + e.Transport
		if j, dup := seen[k]; dup {
			ps.Addf(p, "same system, level and transport as fabric[%d]", j)
		} else {
			seen[k] = i
		}
	}
}

// checkPair adds a problem at path unless iv is nil or [low, high] with
// 0 <= low <= high, both finite.
func checkPair(ps *config.Problems, path string, iv []float64) {
	switch {
	case iv == nil:
	case len(iv) != 2:
		ps.Addf(path, "want [low, high], have %d values", len(iv))
	case math.IsNaN(iv[0]) || math.IsNaN(iv[1]) || math.IsInf(iv[0], 0) || math.IsInf(iv[1], 0):
		ps.Addf(path, "[%v, %v]: want finite numbers", iv[0], iv[1])
	case iv[0] > iv[1]:
		ps.Addf(path, "[%v, %v]: low is above high", iv[0], iv[1])
	case iv[0] < 0:
		ps.Addf(path, "[%v, %v]: must be >= 0", iv[0], iv[1])
	}
}

// LookupFabric returns the entry of c for level of system over
// transport: one naming that transport, else one naming none.
func (c *Calibration) LookupFabric(system, level, transport string) (FabricEntry, bool) {
	var best *FabricEntry
	for i := range c.Fabric {
		e := &c.Fabric[i]
		if e.System != system || e.Level != level {
			continue
		}
		if e.Transport == transport {
			return *e, true
		}
		if e.Transport == "" && best == nil {
			best = e
		}
	}
	if best == nil {
		return FabricEntry{}, false
	}
	return *best, true
}
