package tables

import (
	"slices"
	"strings"
	"testing"

	"scaleplan/internal/units"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// TestSimulationRows checks a row's cells against figures converted by
// hand (seconds to ms, bytes to GiB, a fraction to %), the staging column
// of a staged scenario, and the title of a one-step simulation.
func TestSimulationRows(t *testing.T) {
	r, err := scenarios.Load("tsubame3-resnet50-caffe2-verbs", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := &sim.Result{
		Devices: 8, Nodes: 2, MicroBatch: 32, GlobalBatch: 256,
		StepTime:      0.1234,
		Breakdown:     sim.Breakdown{Compute: 0.1, Comm: 0.02, Input: 0.0034},
		SamplesPerSec: 2074.6, Utilisation: 0.4567,
		Memory:  sim.Footprint{Weights: 3 * units.GiB, Activations: units.GiB / 2},
		Staging: 78.26,
	}
	tab := Simulation(r, []*sim.Result{res}, 1)
	if !strings.HasSuffix(tab.Title, "; 1 steps simulated, steady state the only step") {
		t.Errorf("title %q", tab.Title)
	}
	if tab.Header[len(tab.Header)-1] != "staging (s)" || slices.Contains(tab.Header, "cache warm-up (s)") {
		t.Errorf("header %q: want staging last and no cache warm-up", tab.Header)
	}
	want := []string{"8", "2", "32", "256", "123.40", "100.00", "20.00", "3.40", "0.00", "0.00", "2075", "45.7", "3.50", "78.3"}
	if got := tab.Rows[0]; !slices.Equal(got, want) {
		t.Errorf("row\n got %q\nwant %q", got, want)
	}
}

// TestSimulationNotes checks the staging note: one figure per node count,
// in the results' order, "node" for one.
func TestSimulationNotes(t *testing.T) {
	r, err := scenarios.Load("tsubame3-resnet50-caffe2-verbs", scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := SimulationNotes(r, nil); n != nil {
		t.Errorf("notes of no results: %q", n)
	}
	results := []*sim.Result{{Nodes: 1, Staging: 78.26}, {Nodes: 4, Staging: 80}, {Nodes: 4, Staging: 80}}
	notes := SimulationNotes(r, results)
	want := "one-time costs: staging imagenet-1k (140.9 GB) onto every node's drives before training: 78.3 s at 1 node, 80.0 s at 4 nodes"
	if len(notes) == 0 || notes[len(notes)-1] != want {
		t.Errorf("notes %q\nwant last %q", notes, want)
	}
}
