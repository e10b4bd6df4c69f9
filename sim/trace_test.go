package sim

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"scaleplan/internal/units"
)

// TestTrace checks that a trace is Chrome trace-event JSON whose device
// tracks tile the traced steps (every moment is compute or a named wait),
// and that a large cluster traces a sample of its devices.
func TestTrace(t *testing.T) {
	for _, c := range []struct {
		nodes, per, stages int
		storage            Storage
		devices            int // device tracks expected
	}{
		{1, 4, 2, SharedDB, 4},
		{2, 4, 1, Local, 8},
		{8, 4, 1, SharedDB, 6}, // first node, slowest, last
	} {
		cfg := Config{Nodes: c.nodes, DevicesPerNode: c.per, Stages: c.stages, MicroBatch: 16, Accumulation: 2,
			Compute: Compute{PerSample: 2e-3, Update: 1e-3}, Memory: Memory{Gradients: 50 * units.MB},
			Comm:    Comm{Boundary: 1 * units.MB},
			Network: Network{Intra: Link{Bandwidth: 50e9}, NIC: Link{Bandwidth: 12.5e9}},
			Input: Input{Storage: c.storage, SampleBytes: 100e3, Local: 2e9, Shared: SharedStorage{Aggregate: 100e9, PerClient: 3e9},
				DB: DB{Service: 1e-4}, Decode: 4e-3, Cores: 16}, Jitter: 0.1, Steps: 4, TraceSteps: 2}
		events, res := traceDoc(t, cfg)
		start, end := float64(res.Steps[2].Start)*1e6, float64(res.Steps[3].End)*1e6
		busy := map[int]float64{}
		names := map[int]bool{}
		for _, e := range events {
			switch {
			case e.Ph == "M" && e.Pid == pidDevices && e.Name == "thread_name":
				names[e.Tid] = true
			case e.Ph == "X" && e.Pid == pidDevices:
				if e.Ts < start-1e-6 || e.Ts+e.Dur > end+1e-6 || e.Dur < 0 {
					t.Errorf("event %+v outside the traced steps [%v, %v]", e, start, end)
				}
				busy[e.Tid] += e.Dur
			}
		}
		if len(names) != c.devices || len(busy) != c.devices {
			t.Errorf("%d nodes of %d: %d device tracks with %d busy, want %d", c.nodes, c.per, len(names), len(busy), c.devices)
		}
		for tid, d := range busy {
			if math.Abs(d-(end-start)) > 1e-6*(end-start) {
				t.Errorf("device %d: spans cover %v us of %v", tid, d, end-start)
			}
		}
	}
}

// traceDoc runs cfg and returns its trace decoded from JSON, and the
// result.
func traceDoc(t *testing.T, cfg Config) ([]TraceEvent, *Result) {
	t.Helper()
	res, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := res.Trace.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []TraceEvent `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("trace is not JSON: %v", err)
	}
	return doc.TraceEvents, res
}

// linkTracks returns the link tracks of a trace by name, the bandwidth in
// parentheses cut off, each with its slices in time order.
func linkTracks(events []TraceEvent) map[string][]TraceEvent {
	names := map[int]string{}
	for _, e := range events {
		if e.Ph == "M" && e.Pid == pidLinks && e.Name == "thread_name" {
			n := e.Args["name"]
			if i := strings.LastIndex(n, " ("); i >= 0 {
				n = n[:i]
			}
			names[e.Tid] = n
		}
	}
	out := map[string][]TraceEvent{}
	for _, n := range names {
		out[n] = nil
	}
	for _, e := range events {
		if e.Ph == "X" && e.Pid == pidLinks {
			out[names[e.Tid]] = append(out[names[e.Tid]], e)
		}
	}
	for _, s := range out {
		slices.SortStableFunc(s, func(a, b TraceEvent) int { return cmp.Compare(a.Ts, b.Ts) })
	}
	return out
}

// TestTraceLinkSharing checks a link track against processor sharing in
// closed form: two nodes read micro-batches of S = 64 samples × 1 MB from
// shared storage at the same moments, so the storage link (bandwidth B)
// carries two equal flows that each get
//
//	min(B/2, C)
//
// for a per-client limit C, and a read of S ends S/min(B/2, C) after it
// began (2S/B when the storage is the bottleneck). Back-to-back reads with
// the same flows are one slice.
func TestTraceLinkSharing(t *testing.T) {
	const (
		S = 64 * 1e6 // bytes per node per micro-batch
		B = 4e9      // storage aggregate bandwidth
	)
	type slice struct {
		start, end float64 // s
		flows      string
		share      float64 // bytes/s per flow
	}
	for _, c := range []struct {
		name           string
		acc, prefetch  int
		client         float64 // per-client bandwidth
		storage, node0 []slice
	}{
		{"one read each, storage-bound", 1, 1, 100e9,
			[]slice{{0, 2 * S / B, "2", B / 2}}, []slice{{0, 2 * S / B, "1", B / 2}}},
		{"two reads each, back to back", 2, 2, 100e9,
			[]slice{{0, 4 * S / B, "2", B / 2}}, []slice{{0, 4 * S / B, "1", B / 2}}},
		{"client-bound", 1, 1, B / 4,
			[]slice{{0, S / (B / 4), "2", B / 4}}, []slice{{0, S / (B / 4), "1", B / 4}}},
	} {
		cfg := Config{Nodes: 2, DevicesPerNode: 1, MicroBatch: 64, Accumulation: c.acc,
			Compute: Compute{PerSample: 1e-3, Update: 1e-3}, Memory: Memory{Gradients: 1 * units.MB},
			Network: Network{NIC: Link{Bandwidth: 100e9}},
			Input: Input{Storage: Shared, SampleBytes: 1e6, Shared: SharedStorage{Aggregate: B, PerClient: units.BytesPerSec(c.client)},
				Prefetch: c.prefetch, Cores: 1}, Steps: 1, TraceSteps: 1}
		events, _ := traceDoc(t, cfg)
		tracks := linkTracks(events)
		for _, tc := range []struct {
			track, label string
			want         []slice
		}{
			{"shared storage", "input read, node 0 + input read, node 1", c.storage},
			{"node 0 storage client", "input read, node 0", c.node0},
		} {
			got := tracks[tc.track]
			if len(got) != len(tc.want) {
				t.Errorf("%s: %s has %d slices %+v, want %d", c.name, tc.track, len(got), got, len(tc.want))
				continue
			}
			for i, w := range tc.want {
				g := got[i]
				share := units.BytesPerSec(w.share).String() + " each"
				if !near(g.Ts/1e6, w.start, 1e-9) || !near((g.Ts+g.Dur)/1e6, w.end, 1e-9) ||
					g.Name != tc.label || g.Args["flows"] != w.flows || g.Args["share"] != share {
					t.Errorf("%s: %s slice %d: %q [%v, %v] s, flows %s, share %s; want %q [%v, %v], flows %s, share %s",
						c.name, tc.track, i, g.Name, g.Ts/1e6, (g.Ts+g.Dur)/1e6, g.Args["flows"], g.Args["share"],
						tc.label, w.start, w.end, w.flows, share)
				}
			}
		}
		if u := tracks["shared storage"][0].Args["utilisation"]; (c.client >= B/2) != (u == "1") {
			t.Errorf("%s: storage utilisation %s", c.name, u)
		}
	}
}

// TestTraceLinkTracks checks that the link tracks are exactly the links
// that carried bytes in the traced steps, found by following each
// exchange's routes by hand, and that idle links (those of the unused
// direction, PCIe with peer-to-peer access) have none.
func TestTraceLinkTracks(t *testing.T) {
	base := func(nodes, per int) Config {
		return Config{Nodes: nodes, DevicesPerNode: per, MicroBatch: 8,
			Compute: Compute{PerSample: 1e-3, Update: 1e-3}, Memory: Memory{Gradients: 40 * units.MB},
			Network: Network{Intra: Link{Bandwidth: 50e9}, PCIe: Link{Bandwidth: 12e9}, NIC: Link{Bandwidth: 12.5e9}},
			Steps:   3, TraceSteps: 2}
	}
	intra := func(dir string, ranks ...int) []string {
		var out []string
		for _, r := range ranks {
			out = append(out, fmt.Sprintf("device %d intra-node %s", r, dir))
		}
		return out
	}
	cat := func(xs ...[]string) []string { return slices.Concat(xs...) }
	for _, c := range []struct {
		name string
		edit func(*Config)
		want []string
	}{
		// A ring of p devices in a node: each sends to the next and
		// receives from the previous.
		{"1×4 ring", func(c *Config) { *c = base(1, 4) }, cat(intra("out", 0, 1, 2, 3), intra("in", 0, 1, 2, 3))},
		// Hierarchical on 2 nodes of 2: rings in each node, then rank 0
		// with 2 and 1 with 3 over the node's single NIC and the core.
		{"2×2 hierarchical", func(c *Config) { *c = base(2, 2); c.Comm.Algorithm = Hierarchical },
			cat(intra("out", 0, 1, 2, 3), intra("in", 0, 1, 2, 3),
				[]string{"node 0 NIC out", "node 0 NIC in", "node 1 NIC out", "node 1 NIC in", "fabric core"})},
		// Two NICs per node: the second device of each node uses NIC 1.
		{"2×2 hierarchical, 2 NICs", func(c *Config) { *c = base(2, 2); c.Comm.Algorithm = Hierarchical; c.Network.NICs = 2 },
			cat(intra("out", 0, 1, 2, 3), intra("in", 0, 1, 2, 3),
				[]string{"node 0 NIC 0 out", "node 0 NIC 0 in", "node 0 NIC 1 out", "node 0 NIC 1 in",
					"node 1 NIC 0 out", "node 1 NIC 0 in", "node 1 NIC 1 out", "node 1 NIC 1 in", "fabric core"})},
		// A flat ring on 2 nodes of 2 with 2 NICs runs two rings (NCCL's
		// channels): 0→1→2→3→0 crosses from node 0's NIC 1 into node 1's
		// NIC 0 (1→2) and from node 1's NIC 1 into node 0's NIC 0 (3→0);
		// 1→0→3→2→1, each node's ranks turned, crosses on the other ends
		// (0→3 and 2→1). Every device port and NIC end carries a ring; PCIe
		// stays idle.
		{"2×2 flat ring, 2 NICs", func(c *Config) { *c = base(2, 2); c.Network.NICs = 2 },
			cat(intra("out", 0, 1, 2, 3), intra("in", 0, 1, 2, 3),
				[]string{"node 0 NIC 0 out", "node 0 NIC 0 in", "node 0 NIC 1 out", "node 0 NIC 1 in",
					"node 1 NIC 0 out", "node 1 NIC 0 in", "node 1 NIC 1 out", "node 1 NIC 1 in", "fabric core"})},
		// The same on a rail-optimised fabric: every hop between nodes
		// changes rail (NIC 1 into NIC 0, NIC 0 into NIC 1), so the spine
		// carries them and the rail leaves stay idle.
		{"2×2 flat ring, 2 NICs, rails", func(c *Config) { *c = base(2, 2); c.Network.NICs = 2; c.Network.Rails = true },
			cat(intra("out", 0, 1, 2, 3), intra("in", 0, 1, 2, 3),
				[]string{"node 0 NIC 0 out", "node 0 NIC 0 in", "node 0 NIC 1 out", "node 0 NIC 1 in",
					"node 1 NIC 0 out", "node 1 NIC 0 in", "node 1 NIC 1 out", "node 1 NIC 1 in", "fabric spine"})},
		// A ring of 4 devices behind 2 PCIe switches of 2: 1→2 goes up
		// switch 0 and down switch 1, 3→0 up switch 1 and down switch 0.
		{"1×4 ring, 2 PCIe switches", func(c *Config) {
			*c = base(1, 4)
			c.Network.DevicesPerSwitch, c.Network.SwitchUplink = 2, Link{Bandwidth: 16e9}
		}, cat(intra("out", 0, 1, 2, 3), intra("in", 0, 1, 2, 3),
			[]string{"node 0 PCIe switch 0 up", "node 0 PCIe switch 0 down", "node 0 PCIe switch 1 up", "node 0 PCIe switch 1 down"})},
		// A pipeline of 2 stages on one node and no replicas: activations
		// 0→1 and gradients 1→0, no all-reduce.
		{"pipeline 2 stages", func(c *Config) { *c = base(1, 2); c.Stages = 2; c.Accumulation = 4; c.Comm.Boundary = 1 * units.MB },
			cat(intra("out", 0, 1), intra("in", 0, 1))},
		// A parameter server on 2 nodes of 1: pushes cross each node's NIC
		// out, the core and the server's NIC in; pulls the reverse.
		{"parameter server", func(c *Config) { *c = base(2, 1); c.Comm.Algorithm = ParameterServer; c.Comm.Servers = 1 },
			[]string{"node 0 NIC out", "node 1 NIC out", "node 0 NIC in", "node 1 NIC in", "fabric core", "server 0 NIC out", "server 0 NIC in"}},
		// Shared storage: reads cross the storage, each node's client link
		// and its NIC in; the gradients the NICs and core.
		{"2×1 ring, shared storage", func(c *Config) {
			*c = base(2, 1)
			c.Input = Input{Storage: Shared, SampleBytes: 100e3, Shared: SharedStorage{Aggregate: 10e9, PerClient: 2e9}, Cores: 4}
			c.TraceSteps = c.Steps // the reads run ahead: all are in the first step
		}, []string{"node 0 NIC out", "node 1 NIC out", "node 0 NIC in", "node 1 NIC in", "fabric core",
			"shared storage", "node 0 storage client", "node 1 storage client"}},
		// Beyond 16 devices the links of the first node's devices, the
		// last device and the first and last nodes are traced, with the
		// core. A flat ring on 8 nodes of 4: 0→1→2→3 inside node 0,
		// 3→4 out of node 0, 27→28 into node 7, 30→31 into device 31,
		// 31→0 out of node 7 into node 0.
		{"8×4 flat ring, sampled", func(c *Config) { *c = base(8, 4) },
			cat(intra("out", 0, 1, 2), intra("in", 1, 2, 3, 31),
				[]string{"node 0 NIC out", "node 0 NIC in", "node 7 NIC out", "node 7 NIC in", "fabric core"})},
	} {
		var cfg Config
		c.edit(&cfg)
		events, _ := traceDoc(t, cfg)
		tracks := linkTracks(events)
		var got []string
		for n, s := range tracks {
			got = append(got, n)
			if len(s) == 0 {
				t.Errorf("%s: track %q has no slices", c.name, n)
			}
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(c.want))
		if !slices.Equal(got, want) {
			t.Errorf("%s: %d link tracks %q, want %d %q", c.name, len(got), got, len(want), want)
		}
	}
}

// TestTraceFormat checks every event of traces of several configurations
// for the fields Perfetto reads (ph, ts, pid, tid, name; dur on complete
// events; a name in metadata args), that every track with events is
// named, and that a link's slices do not overlap and lie inside the
// traced steps.
func TestTraceFormat(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"pipeline, shared database", Config{Nodes: 2, DevicesPerNode: 4, Stages: 2, MicroBatch: 16, Accumulation: 4,
			Compute: Compute{PerSample: 2e-3, Update: 1e-3}, Memory: Memory{Gradients: 50 * units.MB},
			Comm:    Comm{Boundary: 1 * units.MB},
			Network: Network{Intra: Link{Bandwidth: 50e9}, NIC: Link{Bandwidth: 12.5e9}},
			Input: Input{Storage: SharedDB, SampleBytes: 100e3, Shared: SharedStorage{Aggregate: 10e9, PerClient: 3e9},
				DB: DB{Service: 1e-4}, Decode: 4e-3, Cores: 16}, Jitter: 0.1, Steps: 4, TraceSteps: 2}},
		{"host-staged, shared storage", Config{Nodes: 2, DevicesPerNode: 2, MicroBatch: 16,
			Compute: Compute{PerSample: 2e-3, Update: 1e-3}, Memory: Memory{Gradients: 50 * units.MB},
			Comm: Comm{Algorithm: HostStaged},
			Network: Network{NoPeerToPeer: true, PCIe: Link{Bandwidth: 12e9, Latency: 5e-6}, HostMemory: 20e9,
				NIC: Link{Bandwidth: 12.5e9, Latency: 2e-6}},
			Input: Input{Storage: Shared, SampleBytes: 100e3, Shared: SharedStorage{Aggregate: 10e9, PerClient: 3e9}, Cores: 16},
			Steps: 3, TraceSteps: 2}},
	} {
		res, err := Run(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := res.Trace.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			TraceEvents []map[string]any `json:"traceEvents"`
		}
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatalf("%s: trace is not JSON: %v", c.name, err)
		}
		start := float64(res.Steps[len(res.Steps)-2].Start) * 1e6
		end := float64(res.Steps[len(res.Steps)-1].End) * 1e6
		named := map[[2]float64]bool{}
		type span struct{ ts, end float64 }
		links := map[float64][]span{}
		for i, e := range doc.TraceEvents {
			ph, _ := e["ph"].(string)
			_, name := e["name"].(string)
			ts, okTs := e["ts"].(float64)
			pid, okPid := e["pid"].(float64)
			tid, okTid := e["tid"].(float64)
			if !name || !okTs || !okPid || !okTid || (ph != "X" && ph != "M") {
				t.Errorf("%s: event %d lacks a field Perfetto needs: %v", c.name, i, e)
				continue
			}
			switch ph {
			case "M":
				args, _ := e["args"].(map[string]any)
				if n, _ := args["name"].(string); n == "" {
					t.Errorf("%s: metadata %d without a name: %v", c.name, i, e)
				}
				if e["name"] == "thread_name" {
					named[[2]float64{pid, tid}] = true
				}
			case "X":
				dur, ok := e["dur"].(float64)
				if !ok || dur < 0 {
					t.Errorf("%s: complete event %d without a duration: %v", c.name, i, e)
				}
				if pid == pidLinks {
					links[tid] = append(links[tid], span{ts, ts + dur})
				}
			}
		}
		for _, e := range doc.TraceEvents {
			if e["ph"] == "X" && !named[[2]float64{e["pid"].(float64), e["tid"].(float64)}] {
				t.Errorf("%s: event on an unnamed track: %v", c.name, e)
			}
		}
		if len(links) == 0 {
			t.Errorf("%s: no link tracks", c.name)
		}
		for tid, s := range links {
			slices.SortFunc(s, func(a, b span) int { return cmp.Compare(a.ts, b.ts) })
			for i, x := range s {
				if x.ts < start-1e-6 || x.end > end+1e-6 || !(x.end > x.ts) {
					t.Errorf("%s: link %v slice [%v, %v] outside the traced steps [%v, %v] or empty", c.name, tid, x.ts, x.end, start, end)
				}
				if i > 0 && x.ts < s[i-1].end-1e-9*end {
					t.Errorf("%s: link %v slices [%v, %v] and [%v, %v] overlap", c.name, tid, s[i-1].ts, s[i-1].end, x.ts, x.end)
				}
			}
		}
	}
}

// TestTraceDeterministic checks that a trace repeats byte for byte for the
// same configuration and seed, and changes with the seed (the jitter moves
// every span).
func TestTraceDeterministic(t *testing.T) {
	cfg := Config{Nodes: 2, DevicesPerNode: 4, Stages: 2, MicroBatch: 16, Accumulation: 4,
		Compute: Compute{PerSample: 2e-3, Update: 1e-3}, Memory: Memory{Gradients: 50 * units.MB},
		Comm:    Comm{Boundary: 1 * units.MB, Algorithm: Hierarchical},
		Network: Network{Intra: Link{Bandwidth: 50e9}, NIC: Link{Bandwidth: 12.5e9}, NICs: 2},
		Input: Input{Storage: Shared, SampleBytes: 100e3, Shared: SharedStorage{Aggregate: 10e9, PerClient: 3e9},
			Decode: 4e-3, Cores: 16}, Jitter: 0.1, Seed: 7, Steps: 4, TraceSteps: 2}
	run := func(seed uint64) []byte {
		c := cfg
		c.Seed = seed
		res, err := Run(c)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := res.Trace.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	a, b, other := run(7), run(7), run(8)
	if !bytes.Equal(a, b) {
		t.Errorf("two traces of seed 7 differ (%d and %d bytes)", len(a), len(b))
	}
	if bytes.Equal(a, other) {
		t.Errorf("traces of seeds 7 and 8 are identical")
	}
	if !bytes.Contains(a, []byte(`"pid":4`)) {
		t.Errorf("trace has no link events")
	}
}
