package validate

import (
	"math"
	"testing"

	"scaleplan/internal/units"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// TestTTTHostDecode checks, for each GPU time-to-train case, what host
// decoding would have to sustain against what the host can: a run of E
// epochs of ImageNet's 1,281,167 images in the published score S on N
// nodes decoded at least E·1,281,167/(S·N) images/s per node (the score
// also holds initialisation and evaluation, so this is a lower bound), and
// a node's cores decode at most Cores/Decode (every core decoding,
// scenarios.HostDecode at the base clock). E is the mean epochs of the
// case's runs (internal/mlperfepochs/resnet.csv, docs/validation-mlperf.md).
// The table in docs/validation-mlperf.md gives these figures.
func TestTTTHostDecode(t *testing.T) {
	const images = 1281167
	cases := map[string]struct {
		nodes      int
		epochs     float64
		need, host float64 // images/s per node: the lower bound, the host's cores
	}{
		"mlperf-v2.0-dgxa100-n128-resnet50-ttt":        {128, 58.4, 17554, 23040},
		"mlperf-v2.0-dgxa100-n527-resnet50-ttt":        {527, 86, 10906, 23040},
		"mlperf-v3.0-dgxh100-n64-resnet50-ttt":         {64, 50, 32752, 17920},
		"mlperf-v3.0-dgxh100-n96-resnet50-ttt":         {96, 56, 33725, 17920},
		"mlperf-v3.0-coreweave-h100-n448-resnet50-ttt": {448, 77, 20055, 17920},
		"mlperf-v2.1-azure-n8-resnet50-ttt":            {8, 35, 20365, 17280},
		"mlperf-v2.1-hpe-xl675d-n8-resnet50-ttt":       {8, 35, 15839, 25088},
		"mlperf-v2.1-hpe-xl675d-n16-resnet50-ttt":      {16, 47, 22237, 25088},
	}
	seen := 0
	for _, c := range BuiltinCases().Cases {
		want, ok := cases[c.Name]
		if !ok {
			continue
		}
		seen++
		sec, err := units.ParseSeconds(c.Published)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		score := float64(sec)
		r, err := scenarios.Load(c.Scenario.Ref, scenarios.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Input.Decode != "device" {
			t.Errorf("%s: scenario %s decodes on the %s; the submission decoded with DALI on the GPUs", c.Name, c.Scenario.Ref, r.Input.Decode)
		}
		n, _ := c.devices()
		if n != want.nodes*r.Node.Devices {
			t.Errorf("%s: %d devices, want %d nodes of %d", c.Name, n, want.nodes, r.Node.Devices)
		}
		need := want.epochs * images / score / float64(want.nodes)
		var in sim.Input
		scenarios.HostDecode(&in, r.Data, r.Node, 0)
		host := in.DecodeParallelism() / float64(in.Decode)
		if math.Abs(need-want.need) > 0.5 || math.Abs(host-want.host) > 0.5 {
			t.Errorf("%s: needs %.1f images/s per node, host decodes %.1f; the table says %v and %v", c.Name, need, host, want.need, want.host)
		}
	}
	// The cached shard of one GPU at 1,024 and 4,216 GPUs.
	if a, b := math.Round(images/1024.0), math.Round(images/4216.0); a != 1251 || b != 304 {
		t.Errorf("shards of %v and %v images, want 1,251 and 304", a, b)
	}
	if seen != len(cases) {
		t.Errorf("found %d of the %d cases", seen, len(cases))
	}
}
