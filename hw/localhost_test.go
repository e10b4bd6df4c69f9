package hw

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"testing/iotest"

	"scaleplan/internal/units"
)

func readCPUInfo(t *testing.T, name string) CPUInfo {
	t.Helper()
	f, err := os.Open("testdata/cpuinfo/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, err := ParseCPUInfo(f)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func TestParseCPUInfo(t *testing.T) {
	cases := []struct {
		file    string
		vendor  string
		model   string
		clock   units.Hertz
		logical int
		sockets int
		cores   int
		threads int
		fpc     float64
	}{
		// The clock comes from the model name, not from the varying "cpu MHz".
		{"xeon-e5-2680-v4.txt", "GenuineIntel", "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz", 2.4 * units.GHz, 4, 2, 14, 2, 32},
		{"xeon-gold-6248.txt", "GenuineIntel", "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz", 2.5 * units.GHz, 4, 2, 20, 2, 64},
		// No clock in the model name: the largest "cpu MHz".
		{"epyc-7742.txt", "AuthenticAMD", "AMD EPYC 7742 64-Core Processor", 2.25 * units.GHz, 2, 1, 64, 2, 32},
		// Arm: no model name, no clock, NEON only.
		{"arm64.txt", "", "", 0, 2, 0, 0, 0, 8},
	}
	for _, tc := range cases {
		i := readCPUInfo(t, tc.file)
		if i.Vendor != tc.vendor || i.Model != tc.model || i.Clock != tc.clock || i.Logical != tc.logical ||
			i.Sockets != tc.sockets || i.CoresPerSocket != tc.cores || i.ThreadsPerCore != tc.threads || i.FLOPsPerCycle() != tc.fpc {
			t.Errorf("%s: got %+v (FLOP/cycle %g)", tc.file, i, i.FLOPsPerCycle())
		}
	}

	info, err := ParseCPUInfo(strings.NewReader(""))
	if err != nil || info.Logical != 0 || info.Flags != nil {
		t.Errorf("empty: %+v, %v", info, err)
	}
	_, err = ParseCPUInfo(iotest.ErrReader(errors.New("disk on fire")))
	if err == nil || err.Error() != "reading cpuinfo: disk on fire" {
		t.Errorf("read error: %v", err)
	}
}

// TestLocalhostFromCPUInfo checks the localhost peak against the catalogue's
// CPU devices, whose peaks come from Intel's and AMD's core counts and clocks:
// a whole two-socket machine is twice the per-socket peak.
func TestLocalhostFromCPUInfo(t *testing.T) {
	c := mustDefault(t)
	cases := []struct {
		file    string
		numCPU  int // logical CPUs of the whole machine
		catalog string
		sockets float64
	}{
		{"xeon-e5-2680-v4.txt", 56, "xeon-e5-2680-v4", 2},
		{"xeon-gold-6248.txt", 80, "xeon-gold-6248", 2},
		{"epyc-7742.txt", 128, "epyc-7742", 1},
	}
	for _, tc := range cases {
		info := readCPUInfo(t, tc.file)
		d, n, s := localhost(info, 256*units.GiB, tc.numCPU)
		ref, err := c.Device(tc.catalog)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []Precision{FP64, FP32} {
			want := tc.sockets * float64(ref.PeakFLOPs(p))
			if rel := math.Abs(float64(d.PeakFLOPs(p))/want - 1); rel > 1e-12 {
				t.Errorf("%s %s: %s, want %s", tc.file, p, d.PeakFLOPs(p), units.FLOPsPerSec(want))
			}
		}
		if d.Model != info.Model || d.Kind != CPU || d.Memory != 256*units.GiB {
			t.Errorf("%s: device %+v", tc.file, d)
		}
		if n.CPU.Cores() != tc.numCPU || n.Devices != 1 || n.Device != LocalhostName || !n.Link.PeerToPeer || n.Link.Kind != Memory {
			t.Errorf("%s: node %+v", tc.file, n)
		}
		if s.MaxNodes != 1 || s.Node != LocalhostName {
			t.Errorf("%s: system %+v", tc.file, s)
		}
		cat := &Catalog{
			Devices: map[string]*Device{d.Name: d},
			Nodes:   map[string]*Node{n.Name: n},
			Systems: map[string]*System{s.Name: s},
		}
		if err := cat.Validate(); err != nil {
			t.Errorf("%s: %v", tc.file, err)
		}
	}
}

// TestLocalhostFallbacks checks what a machine without /proc gets.
func TestLocalhostFallbacks(t *testing.T) {
	d, n, _ := localhost(CPUInfo{}, 0, 4)
	// 4 cores × 2 GHz × 8 FLOP/cycle.
	if d.Peak.FP32 != 64*units.GFLOPPS || d.Peak.FP64 != 32*units.GFLOPPS {
		t.Errorf("peak %+v", d.Peak)
	}
	if d.Memory != AssumedMemory || n.HostMemory != AssumedMemory || n.CPU.Clock != AssumedClock || d.Vendor != "unknown" {
		t.Errorf("device %+v node %+v", d, n)
	}
	if !strings.Contains(d.Source, "assumed: clock 2 GHz, memory 8 GiB, memory bandwidth 51.2 GB/s") {
		t.Errorf("source %q", d.Source)
	}
	// Figures Validate would refuse are replaced by the assumed ones, so
	// that a strange /proc cannot make the built-in catalogue invalid.
	d, n, s := localhost(CPUInfo{Clock: 1e300}, 1e300, 1<<16)
	if n.CPU.Clock != AssumedClock || d.Memory != AssumedMemory {
		t.Errorf("clock %s, memory %s; want the assumed ones", n.CPU.Clock, d.Memory)
	}
	c := &Catalog{Devices: map[string]*Device{d.Name: d}, Nodes: map[string]*Node{n.Name: n}, Systems: map[string]*System{s.Name: s}}
	if err := c.Validate(); err != nil {
		t.Errorf("localhost of 65536 CPUs: %v", err)
	}
	// Arm: 2 logical CPUs, no SMT reported.
	d, _, _ = localhost(readCPUInfo(t, "arm64.txt"), units.GiB, 2)
	if d.Peak.FP32 != 32*units.GFLOPPS {
		t.Errorf("arm64 fp32 %s", d.Peak.FP32)
	}
}

func TestParseMemTotal(t *testing.T) {
	f, err := os.Open("testdata/meminfo.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, want := parseMemTotal(f), units.Bytes(263855872*1024); got != want {
		t.Errorf("MemTotal = %s, want %s", got, want)
	}
	for _, s := range []string{"", "MemTotal:\n", "MemTotal: lots kB\n", "MemFree: 10 kB\n"} {
		if got := parseMemTotal(strings.NewReader(s)); got != 0 {
			t.Errorf("parseMemTotal(%q) = %s", s, got)
		}
	}
}

// TestLocalhostHere checks the entries of the machine running the test: in
// the default catalogue, valid, with this machine's CPU count.
func TestLocalhostHere(t *testing.T) {
	c := mustDefault(t)
	s, n, d, err := c.Resolve(LocalhostName)
	if err != nil {
		t.Fatal(err)
	}
	if !(d.Peak.FP32 > 0) || n.CPU.Cores() < 1 || s.MaxNodes != 1 {
		t.Errorf("localhost: %+v %+v %+v", d, n, s)
	}
	if _, err := s.Transport(SHM); err != nil {
		t.Error(err)
	}
}
