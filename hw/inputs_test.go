package hw

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"scaleplan/internal/config"
	"scaleplan/internal/units"
)

// The catalogues catalogYAML writes.
const (
	valid    = iota // n devices, each with a node and a system
	repeated        // n devices of one name "x", and nothing else
	unknown         // as valid, but each node names a device that is not there
)

// catalogYAML writes a catalogue of n GPUs of the given kind.
func catalogYAML(n, kind int) []byte {
	var b bytes.Buffer
	b.WriteString("devices:\n")
	for i := range n {
		name := fmt.Sprintf("gpu-%d", i)
		if kind == repeated {
			name = "x"
		}
		fmt.Fprintf(&b, "  %s:\n    model: GPU %d\n    vendor: Acme\n    kind: gpu\n"+
			"    peak: {fp32: 15 TFLOP/s}\n    memory: 16 GiB\n    memory_bandwidth: 900 GB/s\n"+
			"    host_link: {gen: 3, lanes: 16}\n", name, i)
	}
	if kind == repeated {
		return b.Bytes()
	}
	dev := "gpu"
	if kind == unknown {
		dev = "gpx"
	}
	b.WriteString("nodes:\n")
	for i := range n {
		fmt.Fprintf(&b, "  node-%d:\n    model: Node %d\n    device: %s-%d\n    devices: 4\n"+
			"    cpu: {model: Xeon, sockets: 2, cores_per_socket: 14, clock: 2.4 GHz}\n"+
			"    host_memory: 256 GiB\n    link: {kind: nvlink, bandwidth: 50 GB/s}\n", i, i, dev, i)
	}
	b.WriteString("systems:\n")
	for i := range n {
		fmt.Fprintf(&b, "  sys-%d:\n    node: node-%d\n    max_nodes: 1\n    transports: {nccl: {efficiency: 0.8}}\n", i, i)
	}
	return b.Bytes()
}

// TestParseRepeatedDevices gives 8,000 devices of one name: refused, each
// repeat with its line and the line of the first, the first MaxListed
// listed and the rest counted. Duplicate keys were found by comparing every
// key with every other (9 s and 812 MB at 8,000); the check is now linear.
func TestParseRepeatedDevices(t *testing.T) {
	const n = 8000
	_, err := Parse(bytes.NewReader(catalogYAML(n, repeated)))
	if err == nil {
		t.Fatal("Parse accepted 8,000 devices of one name")
	}
	lines := strings.Split(err.Error(), "\n")
	if want := fmt.Sprintf("%d problems:", n-1); lines[0] != want {
		t.Errorf("first line %q, want %q", lines[0], want)
	}
	// Each device takes 8 lines; the second starts at line 10.
	if want := `  line 10: devices: mapping key "x" already defined at line 2`; len(lines) < 2 || lines[1] != want {
		t.Errorf("second line %q, want %q", lines[1], want)
	}
	if want := fmt.Sprintf("  and %d more", n-1-config.MaxListed); lines[len(lines)-1] != want {
		t.Errorf("last line %q, want %q", lines[len(lines)-1], want)
	}
}

// TestParseManyDevices checks that a large valid catalogue parses whole.
func TestParseManyDevices(t *testing.T) {
	const n = 2000
	c, err := Parse(bytes.NewReader(catalogYAML(n, valid)))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Devices) != n || len(c.Nodes) != n || len(c.Systems) != n {
		t.Fatalf("%d devices, %d nodes, %d systems; want %d each", len(c.Devices), len(c.Nodes), len(c.Systems), n)
	}
	if _, _, d, err := c.Resolve("sys-1234"); err != nil || d.Name != "gpu-1234" {
		t.Errorf("Resolve(sys-1234) = %v, %v", d, err)
	}
}

// TestParseManyUnknownDevices gives 2,000 nodes that each name a device
// not in the catalogue of 2,000: each is reported, the first
// config.MaxListed with near names. Searching every valid name for each
// unknown one took minutes at 8,000.
func TestParseManyUnknownDevices(t *testing.T) {
	const n = 2000
	_, err := Parse(bytes.NewReader(catalogYAML(n, unknown)))
	if err == nil {
		t.Fatal("accepted")
	}
	msg := err.Error()
	for _, want := range []string{
		fmt.Sprintf("%d problems:\n", n),
		`nodes.node-0.device: unknown device "gpx-0"; did you mean "gpu-0" or "gpu-1" or "gpu-10"?`,
		fmt.Sprintf("\n  and %d more", n-config.MaxListed),
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %.500s\nwant %q in it", msg, want)
		}
	}
}

// BenchmarkParseCatalog parses catalogues of 1,000 and 8,000 devices (each
// with a node and a system), of 1,000 and 8,000 devices of one name, and of
// 1,000 and 8,000 nodes naming unknown devices.
func BenchmarkParseCatalog(b *testing.B) {
	for _, kind := range []int{valid, repeated, unknown} {
		for _, n := range []int{1000, 8000} {
			data := catalogYAML(n, kind)
			name := fmt.Sprintf("%s=%d", []string{"entries", "repeated", "unknown"}[kind], n)
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					_, err := Parse(bytes.NewReader(data))
					if (err != nil) != (kind != valid) {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// plausibleBase is a valid catalogue with every figure a range bounds.
const plausibleBase = `
devices:
  gpu:
    model: GPU
    vendor: Acme
    kind: gpu
    peak: {fp32: 15 TFLOP/s, fp16: 120 TFLOP/s}
    memory: 16 GiB
    memory_bandwidth: 900 GB/s
    sram: 40 MiB
    tdp: 300 W
    host_link: {gen: 3, lanes: 16}
nodes:
  node:
    model: Node
    device: gpu
    devices: 8
    cpu: {model: Xeon, sockets: 2, cores_per_socket: 20, clock: 2.4 GHz}
    host_memory: 512 GiB
    storage: [{kind: nvme, count: 2, capacity: 2 TB, read: 3 GB/s, write: 2 GB/s}]
    link: {kind: nvlink, bandwidth: 150 GB/s, latency: 2 us}
    host_to_device: 12 GB/s
    nics: [{count: 4, kind: infiniband-edr, bandwidth: 100 Gbit/s}]
    power: 3500 W
systems:
  sys:
    node: node
    max_nodes: 64
    fabric: {kind: infiniband-edr, bandwidth: 100 Gbit/s, latency: 1 us, oversubscription: 2}
    transports: {nccl: {efficiency: 0.8, overhead: 5 us}}
    shared_storage: {aggregate: 100 GB/s, per_client: 5 GB/s, latency: 1 ms}
    power: 300 kW
    published_peak: {fp16: 60 PFLOP/s}
`

// TestPlausibleRanges sets each bounded figure to the edges of its range
// (accepted), just past them, and to values no device has (refused with
// the path, the range and the value).
func TestPlausibleRanges(t *testing.T) {
	base, err := Parse(strings.NewReader(plausibleBase))
	if err != nil {
		t.Fatal(err)
	}
	type setter func(c *Catalog, v float64)
	dev := func(f func(d *Device, v float64)) setter {
		return func(c *Catalog, v float64) { f(c.Devices["gpu"], v) }
	}
	node := func(f func(n *Node, v float64)) setter {
		return func(c *Catalog, v float64) { f(c.Nodes["node"], v) }
	}
	sys := func(f func(s *System, v float64)) setter {
		return func(c *Catalog, v float64) { f(c.Systems["sys"], v) }
	}
	cases := []struct {
		path     string
		set      setter
		lo, hi   float64
		rng      string // as the error gives it
		optional bool   // 0 is accepted
	}{
		{"devices.gpu.peak.fp32", dev(func(d *Device, v float64) { d.Peak.FP32 = units.FLOPsPerSec(v) }), 1e6, 1e18, "1 MFLOP/s to 1 EFLOP/s", false},
		{"devices.gpu.peak.fp16", dev(func(d *Device, v float64) { d.Peak.FP16 = units.FLOPsPerSec(v) }), 1e6, 1e18, "1 MFLOP/s to 1 EFLOP/s", true},
		{"devices.gpu.memory", dev(func(d *Device, v float64) { d.Memory = units.Bytes(v) }), 1 << 20, 100 << 40, "1 MiB to 100 TiB", false},
		{"devices.gpu.memory_bandwidth", dev(func(d *Device, v float64) { d.MemoryBandwidth = units.BytesPerSec(v) }), 1e6, 1e15, "1 MB/s to 1 PB/s", false},
		{"devices.gpu.sram", dev(func(d *Device, v float64) { d.SRAM = units.Bytes(v) }), 1 << 10, 100 << 40, "1 KiB to 100 TiB", true},
		{"devices.gpu.tdp", dev(func(d *Device, v float64) { d.TDP = units.Watts(v) }), 1, 1e9, "1 W to 1 GW", true},
		{"devices.gpu.host_link.bandwidth", dev(func(d *Device, v float64) { d.HostLink.Bandwidth = units.BytesPerSec(v) }), 1e6, 1e15, "1 MB/s to 1 PB/s", true},
		{"nodes.node.cpu.clock", node(func(n *Node, v float64) { n.CPU.Clock = units.Hertz(v) }), 1e6, 1e11, "1 MHz to 100 GHz", false},
		{"nodes.node.host_memory", node(func(n *Node, v float64) { n.HostMemory = units.Bytes(v) }), 1 << 20, 100 << 40, "1 MiB to 100 TiB", false},
		{"nodes.node.storage[0].capacity", node(func(n *Node, v float64) { n.Storage[0].Capacity = units.Bytes(v) }), 1 << 20, 1 << 50, "1 MiB to 1 PiB", false},
		{"nodes.node.storage[0].read", node(func(n *Node, v float64) { n.Storage[0].Read = units.BytesPerSec(v) }), 1e6, 1e15, "1 MB/s to 1 PB/s", false},
		{"nodes.node.link.bandwidth", node(func(n *Node, v float64) { n.Link.Bandwidth = units.BytesPerSec(v) }), 1e6, 1e15, "1 MB/s to 1 PB/s", false},
		{"nodes.node.host_to_device", node(func(n *Node, v float64) { n.HostToDevice = units.BytesPerSec(v) }), 1e6, 1e15, "1 MB/s to 1 PB/s", true},
		{"nodes.node.shm_bandwidth", node(func(n *Node, v float64) { n.SHMBandwidth = units.BytesPerSec(v) }), 1e6, 1e15, "1 MB/s to 1 PB/s", true},
		{"nodes.node.nics[0].bandwidth", node(func(n *Node, v float64) { n.NICs[0].Bandwidth = units.BitsPerSec(v) }), 1e6, 1e15, "1 Mbit/s to 1 Pbit/s", false},
		{"nodes.node.power", node(func(n *Node, v float64) { n.Power = units.Watts(v) }), 1, 1e9, "1 W to 1 GW", true},
		{"systems.sys.fabric.bandwidth", sys(func(s *System, v float64) { s.Fabric.Bandwidth = units.BitsPerSec(v) }), 1e6, 1e15, "1 Mbit/s to 1 Pbit/s", false},
		{"systems.sys.shared_storage.per_client", sys(func(s *System, v float64) {
			s.SharedStorage.PerClient, s.SharedStorage.Aggregate = units.BytesPerSec(v), 1e15
		}), 1e6, 1e15, "1 MB/s to 1 PB/s", false},
		{"systems.sys.published_peak.fp16", sys(func(s *System, v float64) { s.PublishedPeak.FP16 = units.FLOPsPerSec(v) }), 1e6, 1e22, "1 MFLOP/s to 10000 EFLOP/s", true},
	}
	check := func(path string, set setter, v float64) error {
		c := base.Clone()
		set(c, v)
		ps := c.validate(true)
		for _, p := range ps.List {
			if p.Path != path {
				t.Errorf("%s = %g: problem of another field: %s", path, v, p)
			}
		}
		return ps.Err()
	}
	for _, c := range cases {
		for _, v := range []float64{c.lo, c.hi} {
			if err := check(c.path, c.set, v); err != nil {
				t.Errorf("%s = %g (an edge) refused: %v", c.path, v, err)
			}
		}
		want := c.path + ": must be within " + c.rng + ", not "
		if c.optional {
			want = c.path + ": must be 0 or within " + c.rng + ", not "
		}
		for _, v := range []float64{c.lo * (1 - 1e-9), c.hi * (1 + 1e-9), 5e-324, 1e-300, 1e308} {
			if err := check(c.path, c.set, v); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s = %g: %v, want %q", c.path, v, err, want)
			}
		}
		for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -1} {
			if err := check(c.path, c.set, v); err == nil || !strings.Contains(err.Error(), c.path+": must be ") {
				t.Errorf("%s = %g: %v, want an error", c.path, v, err)
			}
		}
		if err := check(c.path, c.set, 0); (err == nil) != c.optional {
			t.Errorf("%s = 0: %v, optional %v", c.path, err, c.optional)
		}
	}
}

// TestPlausibleLimits checks the bounds of latencies, counts, ratios and
// prices at their edges.
func TestPlausibleLimits(t *testing.T) {
	base, err := Parse(strings.NewReader(plausibleBase))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		set      func(c *Catalog, bad bool)
		wantPath string
		wantMsg  string
	}{
		{func(c *Catalog, bad bool) { c.Nodes["node"].Link.Latency = units.Seconds(pick(bad, 1, 1.001)) }, "nodes.node.link.latency", "must be at most 1 s, not 1.001 s"},
		{func(c *Catalog, bad bool) {
			c.Systems["sys"].Transports["nccl"] = Transport{Efficiency: 1, Overhead: units.Seconds(pick(bad, 1, 1e300))}
		}, "systems.sys.transports.nccl.overhead", "must be at most 1 s, not 1e+300 s"},
		{func(c *Catalog, bad bool) { c.Nodes["node"].Devices = int(pick(bad, 4096, 4097)) }, "nodes.node.devices", "must be at most 4096, not 4097"},
		{func(c *Catalog, bad bool) {
			c.Systems["sys"].Transports["nccl"] = Transport{Efficiency: 1, PerFlow: 10e9, Streams: int(pick(bad, 64, 65))}
		}, "systems.sys.transports.nccl.streams", "must be within 1 to 64, not 65"},
		{func(c *Catalog, bad bool) {
			c.Systems["sys"].Transports["nccl"] = Transport{Efficiency: 1, PerFlow: units.BitsPerSec(pick(bad, 1e6, 1e5))}
		}, "systems.sys.transports.nccl.per_flow", "must be 0 or within 1 Mbit/s to 1 Pbit/s, not 100 kbit/s"},
		{func(c *Catalog, bad bool) { c.Systems["sys"].MaxNodes = int(pick(bad, 131072, 131073)) }, "systems.sys.max_nodes", "must be at most 131072, not 131073"},
		{func(c *Catalog, bad bool) { c.Nodes["node"].CPU.Sockets = int(pick(bad, 64, 65)) }, "nodes.node.cpu.sockets", "must be at most 64, not 65"},
		{func(c *Catalog, bad bool) { c.Nodes["node"].CPU.CoresPerSocket = int(pick(bad, 65536, 1e9)) }, "nodes.node.cpu.cores_per_socket", "must be at most 65536, not 1000000000"},
		{func(c *Catalog, bad bool) { c.Nodes["node"].CPU.ThreadsPerCore = int(pick(bad, 8, 9)) }, "nodes.node.cpu.threads_per_core", "must be 0 (not given) or within 1 to 8, not 9"},
		{func(c *Catalog, bad bool) { c.Nodes["node"].CPU.Boost = units.Hertz(pick(bad, 2.4e9, 2.3e9)) }, "nodes.node.cpu.boost_clock", "2.3 GHz is below the base clock 2.4 GHz"},
		{func(c *Catalog, bad bool) { c.Nodes["node"].NICs[0].Ports = int(pick(bad, 64, 65)) }, "nodes.node.nics[0].ports", "must be within 1 to 64 (0 means 1), not 65"},
		{func(c *Catalog, bad bool) { c.Nodes["node"].SHMCrossSocket = pick(bad, 1, 1.5) }, "nodes.node.shm_cross_socket", "must be 0 (the default share) or in (0, 1], not 1.5"},
		{func(c *Catalog, bad bool) { c.Nodes["node"].SHMCrossSocket = pick(bad, 0.36, math.NaN()) }, "nodes.node.shm_cross_socket", "must be 0 (the default share) or in (0, 1], not NaN"},
		{func(c *Catalog, bad bool) { c.Systems["sys"].Fabric.Oversubscription = pick(bad, 1000, 1000.5) }, "systems.sys.fabric.oversubscription", "must be at most 1000, not 1000.5"},
		{func(c *Catalog, bad bool) { c.Systems["sys"].PricePerDeviceHour = pick(bad, 10000, math.Inf(1)) }, "systems.sys.price_per_device_hour", "must be at most 10000, not +Inf"},
		{func(c *Catalog, bad bool) { c.Devices["gpu"].SMs = int(pick(bad, 65536, 65537)) }, "devices.gpu.sms", "must be 0 (not given) or within 1 to 65536, not 65537"},
		{func(c *Catalog, bad bool) { c.Devices["gpu"].SMs = int(pick(bad, 0, -1)) }, "devices.gpu.sms", "must be 0 (not given) or within 1 to 65536, not -1"},
		{func(c *Catalog, bad bool) { c.Devices["gpu"].NCCLChannels = int(pick(bad, 64, 65)) }, "devices.gpu.nccl_channels", "must be 0 (not given) or within 1 to 64, not 65"},
		{func(c *Catalog, bad bool) {
			c.Devices["gpu"].NCCLArch = map[bool]string{false: "hopper", true: "Hopper"}[bad]
		}, "devices.gpu.nccl_arch", `unknown NCCL architecture "Hopper"; did you mean "hopper"?`},
		{func(c *Catalog, bad bool) { c.Devices["gpu"].ConvEfficiency.Tensor = pick(bad, 1, 1.01) }, "devices.gpu.conv_efficiency.tensor", "must be 0 (not measured) or in (0, 1], not 1.01"},
		{func(c *Catalog, bad bool) { c.Devices["gpu"].ConvEfficiency.CUDA = pick(bad, 0, -0.5) }, "devices.gpu.conv_efficiency.cuda", "must be 0 (not measured) or in (0, 1], not -0.5"},
		{func(c *Catalog, bad bool) { c.Devices["gpu"].ConvEfficiency.CUDA = pick(bad, 0.5, math.NaN()) }, "devices.gpu.conv_efficiency.cuda", "must be 0 (not measured) or in (0, 1], not NaN"},
		{func(c *Catalog, bad bool) { c.Devices["gpu"].GEMMEfficiency.Tensor = pick(bad, 0.7, 1.5) }, "devices.gpu.gemm_efficiency.tensor", "must be 0 (not measured) or in (0, 1], not 1.5"},
		{func(c *Catalog, bad bool) { c.Devices["gpu"].GEMMEfficiency.CUDA = pick(bad, 0.84, -0.2) }, "devices.gpu.gemm_efficiency.cuda", "must be 0 (not measured) or in (0, 1], not -0.2"},
		{func(c *Catalog, bad bool) { c.Devices["gpu"].NCHWBatchNorm = pick(bad, 0.0083, -0.01) }, "devices.gpu.nchw_batch_norm", "must be 0 (not measured) or in (0, 1], not -0.01"},
		{func(c *Catalog, bad bool) { c.Devices["gpu"].MisalignedGEMM = pick(bad, 3, 0.5) }, "devices.gpu.misaligned_gemm", "must be 0 (not measured) or in [1, 16] times an aligned product's time, not 0.5"},
		{func(c *Catalog, bad bool) { c.Devices["gpu"].OddGEMM = pick(bad, 5.8, 17) }, "devices.gpu.odd_gemm", "must be 0 (as misaligned_gemm) or in [1, 16] times an aligned product's time, not 17"},
		{func(c *Catalog, bad bool) { c.Devices["gpu"].Winograd.Forward.Rate = pick(bad, 4, 4.5) }, "devices.gpu.winograd.forward.rate", "must be 0 (not measured) or in (0, 4] times the fp32 peak, not 4.5"},
		{func(c *Catalog, bad bool) {
			c.Devices["gpu"].Winograd.GradWeight = WinogradPass{Rate: 2, Channels: pick(bad, 30, -1)}
		}, "devices.gpu.winograd.grad_weight.channels", "must be in [0, 4096], not -1"},
		{func(c *Catalog, bad bool) { c.Devices["gpu"].Winograd.GradInput.Channels = pick(bad, 0, 30) }, "devices.gpu.winograd.grad_input.channels", "is 30 without a rate"},
		{func(c *Catalog, bad bool) { c.Devices["gpu"].L2Bandwidth = units.BytesPerSec(pick(bad, 900e9, 899e9)) }, "devices.gpu.l2_bandwidth", "must be at least memory_bandwidth (900 GB/s), not 899 GB/s"},
		{func(c *Catalog, bad bool) { c.Devices["gpu"].L2Bandwidth = units.BytesPerSec(pick(bad, 1e15, 1.1e15)) }, "devices.gpu.l2_bandwidth", "must be 0 or within 1 MB/s to 1 PB/s, not 1.1 PB/s"},
		{func(c *Catalog, bad bool) {
			pr := map[bool]string{false: "simple", true: "Simple"}[bad]
			c.Systems["sys"].Transports["nccl"] = Transport{Efficiency: 1, NCCLProtocols: []string{"ll128", pr}}
		}, "systems.sys.transports.nccl.nccl_protocols[1]", `unknown NCCL protocol "Simple"; did you mean "simple"?`},
		{func(c *Catalog, bad bool) {
			c.Systems["sys"].Transports["nccl"] = Transport{Efficiency: 1, NCCLBuffSize: units.Bytes(pick(bad, float64(units.GiB), 2*float64(units.GiB)))}
		}, "systems.sys.transports.nccl.nccl_buffsize", "must be within 0 (NCCL's default) to 1 GiB, not 2 GiB"},
	}
	for _, tc := range cases {
		c := base.Clone()
		tc.set(c, false)
		if err := c.Validate(); err != nil {
			t.Errorf("%s at its edge: %v", tc.wantPath, err)
		}
		c = base.Clone()
		tc.set(c, true)
		if err, want := c.Validate(), tc.wantPath+": "+tc.wantMsg; err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
	}
}

func pick(bad bool, good, worse float64) float64 {
	if bad {
		return worse
	}
	return good
}

// TestParseDenormalPeak is the case: a peak of 5e-324 FLOP/s was
// accepted, and the simulator then blamed the model's FLOPs.
func TestParseDenormalPeak(t *testing.T) {
	for _, c := range []struct{ peak, want string }{
		{"5e-324 FLOP/s", "line 7: devices.gpu.peak.fp32: must be within 1 MFLOP/s to 1 EFLOP/s, not 4.941e-324 FLOP/s"},
		{"1e-300 FLOP/s", "line 7: devices.gpu.peak.fp32: must be within 1 MFLOP/s to 1 EFLOP/s, not 1e-300 FLOP/s"},
		{"1e308 FLOP/s", "line 7: devices.gpu.peak.fp32: must be within 1 MFLOP/s to 1 EFLOP/s, not 1e+308 FLOP/s"},
	} {
		src := strings.Replace(plausibleBase, "fp32: 15 TFLOP/s", "fp32: "+c.peak, 1)
		_, err := Parse(strings.NewReader(src))
		if err == nil || err.Error() != c.want {
			t.Errorf("peak %s: %v\nwant %s", c.peak, err, c.want)
		}
	}
}

// TestPCIeTreeValidate: a node's PCIe tree needs switches of 1 to the
// node's devices, an uplink, and with two sockets an inter-socket
// bandwidth; each problem is named with its path.
func TestPCIeTreeValidate(t *testing.T) {
	base, err := Parse(strings.NewReader(plausibleBase))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tree *PCIeTree
		want string
	}{
		{&PCIeTree{DevicesPerSwitch: 2, Uplink: 16e9, InterSocket: 20e9}, ""},
		{&PCIeTree{DevicesPerSwitch: 9, Uplink: 16e9, InterSocket: 20e9}, "nodes.node.pcie_tree.devices_per_switch: must be within 1 to the node's 8 devices, not 9"},
		{&PCIeTree{DevicesPerSwitch: 2, InterSocket: 20e9}, "nodes.node.pcie_tree.uplink: must be > 0"},
		{&PCIeTree{DevicesPerSwitch: 2, Uplink: 16e9}, "nodes.node.pcie_tree.inter_socket: must be > 0"},
		{&PCIeTree{DevicesPerSwitch: 2, Uplink: 16e9, InterSocket: 20e9, NICsPerSwitch: 1}, ""},
		{&PCIeTree{DevicesPerSwitch: 2, Uplink: 16e9, InterSocket: 20e9, NICsPerSwitch: -1}, "nodes.node.pcie_tree.nics_per_switch: must be within 0 (NICs on the root complex) to the node's 4 NIC ports, not -1"},
		{&PCIeTree{DevicesPerSwitch: 2, Uplink: 16e9, InterSocket: 20e9, NICsPerSwitch: 5}, "nodes.node.pcie_tree.nics_per_switch: must be within 0 (NICs on the root complex) to the node's 4 NIC ports, not 5"},
	} {
		c := base.Clone()
		c.Nodes["node"].PCIeTree = tc.tree
		err := c.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && err.Error() != tc.want) {
			t.Errorf("tree %+v: %v, want %q", *tc.tree, err, tc.want)
		}
	}
}
