package benchlog_test

import (
	"fmt"

	"scaleplan/internal/benchlog"
)

// A log of a header, its configuration as the run gave it, and one
// measurement.
func ExampleEncode() {
	hdr, err := benchlog.Header("r1", "scaleplan-engine", &benchlog.Machine{Cores: 2}, map[string]any{"command": "bench throughput", "seed": uint64(1<<63 + 1)})
	if err != nil {
		panic(err)
	}
	m := benchlog.Record{Kind: benchlog.KindMeasurement, Run: "r1", Model: "mlp", Batch: 64, Steps: 20, StepTime: 0.0061, SamplesPerSec: 10491}
	b, err := benchlog.Encode([]benchlog.Record{hdr, m})
	if err != nil {
		panic(err)
	}
	fmt.Print(string(b))
	// Output:
	// {"kind":"header","run":"r1","tool":"scaleplan-engine","machine":{"cores":2},"config":{"command":"bench throughput","seed":9223372036854775809}}
	// {"kind":"measurement","run":"r1","model":"mlp","batch":64,"steps":20,"step_time_s":0.0061,"samples_per_s":10491}
}
