package hw

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"

	"scaleplan/internal/units"
)

// LocalhostName is the name of the device, node and system that describe
// this machine.
const LocalhostName = "localhost"

// Assumptions of the localhost entries where the machine does not say.
const (
	// AssumedClock is the clock used when /proc/cpuinfo gives none (non-Linux,
	// or Arm, whose cpuinfo has no clock).
	AssumedClock units.Hertz = 2 * units.GHz

	// AssumedMemory is the host memory used when /proc/meminfo is unreadable.
	AssumedMemory units.Bytes = 8 * units.GiB

	// AssumedMemoryBandwidth is the memory bandwidth of localhost: two
	// channels of DDR4-3200 (2 × 25.6 GB/s). It is not measured.
	AssumedMemoryBandwidth units.BytesPerSec = 51.2 * units.GBps

	// AssumedCopyLatency is the latency of handing a buffer from one
	// goroutine worker to another.
	AssumedCopyLatency units.Seconds = 1 * units.Microsecond
)

// CPUInfo is what ParseCPUInfo finds in a /proc/cpuinfo file.
type CPUInfo struct {
	Vendor         string      // vendor_id such as "GenuineIntel"; "" if absent
	Model          string      // model name; "" if absent
	Clock          units.Hertz // nominal clock: the "@ 2.40GHz" of the model name, else the largest "cpu MHz"; 0 if absent
	Logical        int         // processor entries
	Sockets        int         // distinct physical ids; 0 if absent
	CoresPerSocket int         // "cpu cores"; 0 if absent
	ThreadsPerCore int         // "siblings" / "cpu cores"; 0 if absent
	Flags          []string    // "flags" (x86) or "Features" (Arm) of the first processor
}

// Has reports whether flag is among i's flags.
func (i CPUInfo) Has(flag string) bool {
	for _, f := range i.Flags {
		if f == flag {
			return true
		}
	}
	return false
}

// FLOPsPerCycle returns the peak single-precision floating-point operations
// per cycle of one core, from its flags:
//
//	64  AVX-512 with FMA: 2 FMA units × 16 fp32 lanes × 2 operations
//	32  AVX2 with FMA:    2 FMA units ×  8 fp32 lanes × 2 operations
//	 8  otherwise:        one 4-lane SSE or NEON add and one multiply
//
// Double precision is half of these. Parts with a single AVX-512 FMA unit
// reach half of 64; the figure is an upper bound.
func (i CPUInfo) FLOPsPerCycle() float64 {
	switch {
	case i.Has("avx512f") && i.Has("fma"):
		return 64
	case i.Has("avx2") && i.Has("fma"):
		return 32
	}
	return 8
}

// ParseCPUInfo reads a Linux /proc/cpuinfo file. Fields it does not find
// stay zero; only a read error is an error.
func ParseCPUInfo(r io.Reader) (CPUInfo, error) {
	var info CPUInfo
	sockets := map[string]bool{}
	var maxMHz float64
	siblings := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "processor":
			info.Logical++
		case "vendor_id":
			if info.Vendor == "" {
				info.Vendor = val
			}
		case "model name":
			if info.Model == "" {
				info.Model = val
			}
		case "cpu MHz":
			if f, err := strconv.ParseFloat(val, 64); err == nil && f > maxMHz {
				maxMHz = f
			}
		case "physical id":
			sockets[val] = true
		case "cpu cores":
			if n, err := strconv.Atoi(val); err == nil && info.CoresPerSocket == 0 && n > 0 {
				info.CoresPerSocket = n
			}
		case "siblings":
			if n, err := strconv.Atoi(val); err == nil && siblings == 0 && n > 0 {
				siblings = n
			}
		case "flags", "Features":
			if info.Flags == nil {
				info.Flags = strings.Fields(val)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return info, fmt.Errorf("reading cpuinfo: %w", err)
	}
	info.Sockets = len(sockets)
	if info.CoresPerSocket > 0 && siblings >= info.CoresPerSocket {
		info.ThreadsPerCore = siblings / info.CoresPerSocket
	}
	info.Clock = modelClock(info.Model)
	if info.Clock == 0 && maxMHz > 0 {
		info.Clock = units.Hertz(maxMHz * 1e6)
	}
	return info, nil
}

// modelClock returns the clock in an Intel model name such as
// "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz", or 0.
func modelClock(model string) units.Hertz {
	_, after, ok := strings.Cut(model, "@")
	if !ok {
		return 0
	}
	h, err := units.ParseHertz(strings.TrimSpace(after))
	if err != nil || !(h > 0) {
		return 0
	}
	return h
}

// parseMemTotal returns MemTotal from a /proc/meminfo file, or 0.
func parseMemTotal(r io.Reader) units.Bytes {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0
		}
		n, err := strconv.ParseFloat(f[0], 64)
		if err != nil || n <= 0 {
			return 0
		}
		if len(f) > 1 && f[1] == "kB" { // the kernel's "kB" is KiB
			n *= 1024
		}
		return units.Bytes(n)
	}
	return 0
}

// Localhost describes this machine as a device, a node and a system, all
// named "localhost", for the reference engine, which runs its workers as
// goroutines on this CPU:
//
//   - the device is the whole CPU (kind cpu): its peak is
//     cores × clock × FLOPsPerCycle in fp32, half that in fp64, where cores
//     are physical cores, runtime.NumCPU() divided by the threads per core;
//     its memory is the host memory.
//   - the node holds that one device; its CPU counts runtime.NumCPU()
//     logical CPUs as one socket (what the input pipeline can use); its
//     intra-node link is memory copies at half the memory bandwidth (a copy
//     reads and writes) with peer_to_peer true.
//   - the system has one node and the shm transport.
//
// Model name, vendor, clock and flags come from /proc/cpuinfo and the memory
// from /proc/meminfo. Where they are absent (non-Linux systems, or Arm,
// whose cpuinfo has no clock) Localhost falls back to AssumedClock and
// AssumedMemory; the memory bandwidth is always AssumedMemoryBandwidth. The
// device's Source says what was detected and what was assumed.
func Localhost() (*Device, *Node, *System) {
	var info CPUInfo
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		info, _ = ParseCPUInfo(f)
		f.Close()
	}
	var mem units.Bytes
	if f, err := os.Open("/proc/meminfo"); err == nil {
		mem = parseMemTotal(f)
		f.Close()
	}
	return localhost(info, mem, runtime.NumCPU())
}

// localhost builds the localhost entries from what was read.
func localhost(info CPUInfo, mem units.Bytes, numCPU int) (*Device, *Node, *System) {
	numCPU = max(numCPU, 1)
	var assumed []string
	clock := info.Clock
	if clockSpan.outside(clock) { // absent, or a figure Validate refuses
		clock = AssumedClock
		assumed = append(assumed, "clock "+clock.String())
	}
	if memorySpan.outside(mem) {
		mem = AssumedMemory
		assumed = append(assumed, "memory "+mem.String())
	}
	assumed = append(assumed, "memory bandwidth "+AssumedMemoryBandwidth.String())
	threads := max(info.ThreadsPerCore, 1)
	cores := max(numCPU/threads, 1)
	fpc := info.FLOPsPerCycle()
	fp32 := units.FLOPsPerSec(float64(cores) * float64(clock) * fpc)

	model := info.Model
	if model == "" {
		model = runtime.GOARCH + " CPU"
	}
	vendor := info.Vendor
	switch vendor {
	case "GenuineIntel":
		vendor = "Intel"
	case "AuthenticAMD":
		vendor = "AMD"
	case "":
		vendor = "unknown"
	}
	src := fmt.Sprintf("detected at run time: %d logical CPUs (runtime.NumCPU), %d physical cores, %g FLOP/cycle/core in fp32; assumed: %s",
		numCPU, cores, fpc, strings.Join(assumed, ", "))

	dev := &Device{
		Name:            LocalhostName,
		Model:           model,
		Vendor:          vendor,
		Kind:            CPU,
		Peak:            Peak{FP64: fp32 / 2, FP32: fp32},
		Memory:          mem,
		MemoryBandwidth: AssumedMemoryBandwidth,
		Source:          src,
	}
	copyBW := AssumedMemoryBandwidth / 2
	node := &Node{
		Name:    LocalhostName,
		Model:   "this machine",
		Device:  LocalhostName,
		Devices: 1,
		CPU: HostCPU{
			Model:          model,
			Device:         LocalhostName,
			Sockets:        1,
			CoresPerSocket: numCPU,
			Clock:          clock,
		},
		HostMemory:   mem,
		Link:         Link{Kind: Memory, Bandwidth: copyBW, Latency: AssumedCopyLatency, PeerToPeer: true},
		HostToDevice: copyBW,
	}
	sys := &System{
		Name:        LocalhostName,
		Description: "this machine: the reference engine's goroutine workers on its CPU",
		Node:        LocalhostName,
		MaxNodes:    1,
		Fabric:      Fabric{Oversubscription: 1},
		Transports: map[string]Transport{
			SHM: {Efficiency: 1, Overhead: 0, Scope: ScopeNode, Source: "the intra-node link bandwidth is already the assumed copy bandwidth"},
		},
	}
	return dev, node, sys
}
