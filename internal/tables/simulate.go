package tables

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"scaleplan/internal/units"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// Simulation returns the table `scaleplan simulate` prints: one row per
// configuration of r's sweep, results in the sweep's order, each simulated
// for steps optimizer steps. The staleness, staging and cache warm-up
// columns appear only where r or a result has them.
func Simulation(r *scenarios.Resolved, results []*sim.Result, steps int) *Table {
	staging := r.Input.Staging
	async := r.Parallelism.AllReduce == "async-ps"
	t := &Table{
		Title: simulationTitle(r, steps),
		Header: []string{"devices", "nodes", "batch/device", "global batch", "step (ms)", "compute (ms)", "exposed comm (ms)",
			"exposed input (ms)", "bubble (ms)", "straggler (ms)", "samples/s", "utilisation (%)", "memory/device (GiB)"},
	}
	uneven := slices.ContainsFunc(results, func(r *sim.Result) bool { return r != nil && r.Placement != nil })
	if uneven {
		t.Header = slices.Insert(t.Header, 2, "placement")
	}
	if async {
		t.Header = append(t.Header, "staleness (updates)")
	}
	if staging {
		t.Header = append(t.Header, "staging (s)")
	}
	warm := anyWarmup(results)
	if warm {
		t.Header = append(t.Header, "cache warm-up (s)")
	}
	ms := func(s units.Seconds) string { return strconv.FormatFloat(float64(s)*1e3, 'f', 2, 64) }
	for _, res := range results {
		b := res.Breakdown
		row := []string{
			strconv.Itoa(res.Devices), strconv.Itoa(res.Nodes), strconv.Itoa(res.MicroBatch), strconv.Itoa(res.GlobalBatch),
			ms(res.StepTime), ms(b.Compute), ms(b.Comm), ms(b.Input), ms(b.Bubble), ms(b.Straggler),
			WholeCell(res.SamplesPerSec),
			strconv.FormatFloat(100*res.Utilisation, 'f', 1, 64),
			strconv.FormatFloat(float64(res.Memory.Total()/units.GiB), 'f', 2, 64),
		}
		if uneven {
			row = slices.Insert(row, 2, PlacementCell(res.Placement, res.Nodes, res.Devices))
		}
		if async {
			row = append(row, strconv.FormatFloat(res.MeanStaleness, 'f', 2, 64))
		}
		if staging {
			row = append(row, strconv.FormatFloat(float64(res.Staging), 'f', 1, 64))
		}
		if warm {
			row = append(row, strconv.FormatFloat(float64(res.CacheWarmup), 'f', 1, 64))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// PlacementCell returns the devices on each node joined by "+" ("1+2+3+4"),
// or for even nodes of placement nil "N×K".
func PlacementCell(placement []int, nodes, devices int) string {
	if placement == nil {
		return fmt.Sprintf("%d×%d", nodes, devices/max(nodes, 1))
	}
	parts := make([]string, len(placement))
	for i, k := range placement {
		parts[i] = strconv.Itoa(k)
	}
	return strings.Join(parts, "+")
}

// simulationTitle names the scenario, its model, system, exchange and
// storage, and how many steps the steady state is the mean of.
func simulationTitle(r *scenarios.Resolved, steps int) string {
	transport := r.Parallelism.Transport
	if transport == "" {
		transport = "none"
	}
	storage := r.Input.Storage
	if r.Input.Staging {
		storage += ", staged"
	}
	steady := "the mean of the last " + strconv.Itoa(steps-1)
	if steps == 1 {
		steady = "the only step"
	}
	return fmt.Sprintf("%s: %s on %s (%s), %s, %s over %s, storage %s; %d steps simulated, steady state %s",
		r.Name, r.Mdl.Name, r.Sys.Name, r.Device.Name, r.Precision, r.Parallelism.Exchange(), transport, storage, steps, steady)
}

// anyWarmup reports whether a result has a page cache warm-up.
func anyWarmup(results []*sim.Result) bool {
	return slices.ContainsFunc(results, func(res *sim.Result) bool { return res.CacheWarmup > 0 })
}

// SimulationNotes returns the lines `scaleplan simulate` prints under its
// text or Markdown table, each after a blank line: what the page cache
// serves, and the one-time cost of staging the data set at each node
// count of results. It returns none for no results.
func SimulationNotes(r *scenarios.Resolved, results []*sim.Result) []string {
	if len(results) == 0 {
		return nil
	}
	var notes []string
	if n := NetworkNote(r); n != "" {
		notes = append(notes, n)
	}
	if n := PageCacheNote(r); n != "" {
		if anyWarmup(results) {
			n += "; cache warm-up: the first epoch's extra time reading the drives"
		}
		notes = append(notes, n)
	}
	if !r.Input.Staging {
		return notes
	}
	var parts []string
	seen := map[int]bool{}
	for _, res := range results {
		if !seen[res.Nodes] {
			seen[res.Nodes] = true
			parts = append(parts, fmt.Sprintf("%.1f s at %d %s", float64(res.Staging), res.Nodes, Plural(res.Nodes, "node", "nodes")))
		}
	}
	return append(notes, fmt.Sprintf("one-time costs: staging %s (%v) onto every node's drives before training: %s",
		r.Data.Name, r.Data.TrainBytes(), strings.Join(parts, ", ")))
}
