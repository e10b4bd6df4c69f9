package sim

import (
	"fmt"
	"reflect"
	"testing"

	"scaleplan/internal/units"
)

// TestCalendarQueuesSameResults runs pipelines, data-parallel steps
// (traced, with input pipelines, with interference, which cancels
// events), an asynchronous parameter server and the fuzz test's random
// configurations on the calendar queues (the scheduler's and the
// network's finish queue) and on their reference, sorted lists
// (event.Scheduler.UseSortedQueue), and requires the same Result, bit for
// bit: the same events in the same order give the same times. It
// compares the same way an arrival that reads the micro-batch its rank
// waits for with its reference, which reads the rank's next task
// (run.refArrive).
func TestCalendarQueuesSameResults(t *testing.T) {
	cases := map[string]Config{}
	for _, nodes := range []int{16, 64, 128} {
		c := transformerPipeline(t, nodes)
		cases[fmt.Sprintf("1f1b/gpus=%d", 8*nodes)] = c
		c.Schedule, c.Steps, c.Jitter = GPipe, 2, 0
		cases[fmt.Sprintf("gpipe/gpus=%d", 8*nodes)] = c
	}
	dp := resnet50OnDGXA100(t, 16)
	dp.Steps = 3
	cases["dp/gpus=128"] = dp
	dp.Comm.Algorithm, dp.Steps, dp.TraceSteps = Ring, 2, 1
	cases["dp-ring-traced/gpus=128"] = dp
	inter := interferenceCase(units.GBps, 0.5)
	inter.Steps, inter.Jitter, inter.Seed = 4, 0.1, 3
	cases["interference"] = inter
	cases["async-ps"] = Config{Nodes: 4, DevicesPerNode: 1, MicroBatch: 32, Compute: Compute{PerSample: 1e-3},
		Memory: Memory{Gradients: 10 * units.MB}, Comm: Comm{Algorithm: AsyncParameterServer, Servers: 1},
		Network: Network{NIC: Link{Bandwidth: 10 * units.GBps}}, Steps: 20, Jitter: 0.05, Seed: 2}
	for seed := range uint64(40) {
		c := randomConfig(seed, uint8(seed), uint8(seed/3), 0.05*float64(seed%3), seed%4 == 1, seed%5 == 2)
		if d := c; d.validate() == nil && withinBudget(&d) {
			cases[fmt.Sprintf("random/%d", seed)] = c
		}
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Run(c)
			want, werr := runWith(c, func(r *run) { r.s.UseSortedQueue() })
			ref, rerr := runWith(c, func(r *run) { r.refArrive = true })
			if err != nil || werr != nil || rerr != nil {
				if err != nil && werr != nil && rerr != nil && err.Error() == werr.Error() && err.Error() == rerr.Error() {
					t.Skipf("not a valid configuration: %v", err)
				}
				t.Fatalf("calendar queues: %v; sorted lists: %v; reference arrivals: %v", err, werr, rerr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("calendar queues: step %v, %d events; sorted lists: step %v, %d events",
					got.StepTime, got.Events, want.StepTime, want.Events)
			}
			if !reflect.DeepEqual(got, ref) {
				t.Errorf("waits naming their micro-batch: step %v, %d events; reference (run.refArrive): step %v, %d events",
					got.StepTime, got.Events, ref.StepTime, ref.Events)
			}
		})
	}
}
