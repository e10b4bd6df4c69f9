package report

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/plots"
	"scaleplan/predict"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// recipeStepsRule says how the recipe's steps follow from the global batch B.
func recipeStepsRule(r *scenarios.Resolved) string {
	epochs, iterations := r.Rcp.Length()
	if epochs > 0 {
		return fmt.Sprintf("%s epochs × ⌈%d / B⌉", num(epochs), r.Data.TrainSamples)
	}
	return fmt.Sprintf("⌈%d × %d / B⌉", iterations, r.Rcp.GlobalBatch)
}

// scalingEfficiencies returns the scaling efficiency of each result, in percent,
// against the smallest device count with the same per-device batch:
//
//	E(n) = T(n0) · n0 / (T(n) · n)
func scalingEfficiencies(run *Run) []float64 {
	n0 := map[int]int{} // per-device batch → index of its smallest device count
	for i, res := range run.Results {
		if j, ok := n0[res.MicroBatch]; !ok || res.Devices < run.Results[j].Devices {
			n0[res.MicroBatch] = i
		}
	}
	out := make([]float64, len(run.Results))
	for i, res := range run.Results {
		j := n0[res.MicroBatch]
		out[i] = 100 * float64(run.Time(j)) * float64(run.Results[j].Devices) / (float64(run.Time(i)) * float64(res.Devices))
	}
	return out
}

// predictions is one row per configuration, with the published time
// to train and the prediction's error where the scenario has one.
func predictions(run *Run) (*Table, []string) {
	r := run.R
	pub := map[int]float64{}
	if c, ok := Published(r, r.Name); ok {
		for i := range c.X {
			pub[int(c.X[i])] = c.Y[i]
		}
	}
	t := &Table{Header: []string{"devices", "nodes", "batch/device", "global batch", "step (ms)", "compute (ms)", "exposed comm (ms)",
		"exposed input (ms)", "bubble (ms)", "straggler (ms)", "samples/s", "steps", "time to train", "efficiency (%)"}}
	if len(pub) > 0 {
		t.Header = append(t.Header, "published", "error (%)")
	}
	var notes []string
	ms := func(s units.Seconds) string { return strconv.FormatFloat(float64(s)*1e3, 'f', 2, 64) }
	eff := scalingEfficiencies(run)
	for i, res := range run.Results {
		b := res.Breakdown
		ttt := run.Time(i)
		row := []string{strconv.Itoa(res.Devices), strconv.Itoa(res.Nodes), strconv.Itoa(res.MicroBatch), strconv.Itoa(res.GlobalBatch),
			ms(res.StepTime), ms(b.Compute), ms(b.Comm), ms(b.Input), ms(b.Bubble), ms(b.Straggler),
			wholeCell(res.SamplesPerSec), predict.Group(int64(r.Rcp.Steps(res.GlobalBatch))),
			shortDuration(ttt), strconv.FormatFloat(eff[i], 'f', 1, 64)}
		if len(pub) > 0 {
			if v, ok := pub[res.Devices]; ok {
				row = append(row, shortDuration(units.Seconds(v)), fmt.Sprintf("%+.1f", 100*(float64(ttt)-v)/v))
			} else {
				row = append(row, "", "")
			}
		}
		t.Rows = append(t.Rows, row)
		if mx := r.Rcp.MaxGlobalBatch; mx > 0 && int64(res.GlobalBatch) > mx {
			notes = append(notes, fmt.Sprintf("At %s the global batch %d is past the largest with which recipe %s is known to reach its target (%d): the time to train assumes it still does.",
				DevicesName(res.Devices), res.GlobalBatch, r.Rcp.Name, mx))
		}
	}
	if len(pub) > 0 {
		notes = append(notes, "Published: "+r.Rcp.Source+" (recipe "+r.Rcp.Name+"); error = (predicted − published) / published.")
	}
	if r.Input.Staging && len(run.Results) > 0 {
		notes = append(notes, fmt.Sprintf("Time to train includes staging %s (%v) onto every node's drives, %s at %s.",
			r.Data.Name, units.Bytes(float64(r.Data.TrainSamples)*float64(r.Data.BytesPerSample)),
			run.Results[len(run.Results)-1].Staging, DevicesName(run.Results[len(run.Results)-1].Devices)))
	}
	return t, notes
}

// shortDuration prints a time to train to four digits in s, min or h,
// whichever suits it.
func shortDuration(s units.Seconds) string {
	v := float64(s)
	switch {
	case v >= 3600:
		return num(v/3600) + " h"
	case v >= 60:
		return num(v/60) + " min"
	}
	return num(v) + " s"
}

// humanDuration prints a time to train in seconds and in hours and minutes.
func humanDuration(s units.Seconds) string {
	v := float64(s)
	switch {
	case v >= 3600:
		h := math.Floor(v / 3600)
		return fmt.Sprintf("%.0f s (%.0f h %02.0f min)", v, h, math.Floor((v-3600*h)/60))
	case v >= 60:
		return fmt.Sprintf("%.0f s (%.1f min)", v, v/60)
	}
	return s.String()
}

// shares is the breakdown of each configuration in percent of its
// step time.
func shares(run *Run) *Table {
	labels, xl := barLabels(run)
	t := &Table{Header: append([]string{xl, "step (ms)"}, plots.BreakdownParts...)}
	for i := range t.Header[2:] {
		t.Header[2+i] += " (%)"
	}
	for i, res := range run.Results {
		b := res.Breakdown
		row := []string{labels[i], strconv.FormatFloat(float64(res.StepTime)*1e3, 'f', 2, 64)}
		for _, v := range []units.Seconds{b.Compute, b.Comm, b.Input, b.Bubble, b.Straggler} {
			row = append(row, strconv.FormatFloat(100*float64(v/res.StepTime), 'f', 1, 64))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// summary is one sentence on the largest configuration: its time to train
// and where its step time goes beyond compute.
func summary(run *Run) string {
	if len(run.Results) == 0 {
		return ""
	}
	i := len(run.Results) - 1
	res := run.Results[i]
	b := res.Breakdown
	parts := []struct {
		name string
		v    units.Seconds
	}{{"exposed communication", b.Comm}, {"waiting for input", b.Input}, {"pipeline bubble", b.Bubble}, {"waiting for stragglers", b.Straggler}}
	big := parts[0]
	for _, q := range parts[1:] {
		if q.v > big.v {
			big = q
		}
	}
	s := fmt.Sprintf("On %s (global batch %d) a step takes %v and training takes %s; %.1f %% of the step is compute",
		DevicesName(res.Devices), res.GlobalBatch, res.StepTime, humanDuration(run.Time(i)), 100*float64(b.Compute/res.StepTime))
	if big.v > 0 {
		s += fmt.Sprintf(", %.1f %% %s", 100*float64(big.v/res.StepTime), big.name)
	}
	return s + "."
}

// inputs lists the scenario's inputs, resolved: every figure the
// simulation used, with its unit.
func inputs(run *Run) []InputGroup {
	r := run.R
	maxNodes := 0
	for _, res := range run.Results {
		maxNodes = max(maxNodes, res.Nodes)
	}
	return []InputGroup{systemInputs(r, maxNodes), {"Node", nodeInputs(r)}, {"Device", deviceInputs(r)}, {"Model", modelInputs(r)},
		{"Recipe", recipeInputs(r)}, {"Parallelism", parallelismInputs(r)}, {"Input pipeline", pipelineInputs(r)}}
}

// joined joins the parts that are not empty with "; ".
func joined(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "; ")
}

// transport describes transport name of r's system.
func transport(r *scenarios.Resolved, name string) string {
	if name == "" {
		return "none (the link as it is)"
	}
	t, err := r.Sys.Transport(name)
	if err != nil {
		return name
	}
	s := fmt.Sprintf("%s: %.0f %% of link bandwidth", name, 100*t.Efficiency)
	if t.Overhead > 0 {
		s += fmt.Sprintf(", %v per message", t.Overhead)
	}
	return s
}

// systemInputs is the system's group; maxNodes is the most nodes a
// configuration used.
func systemInputs(r *scenarios.Resolved, maxNodes int) InputGroup {
	sys := r.Sys
	system := InputGroup{Name: "System", Rows: [][2]string{
		{"name", joined(sys.Name, sys.Description)},
		{"nodes", fmt.Sprintf("%d used at most, of %d", maxNodes, sys.MaxNodes)},
	}}
	if sys.MaxNodes > 1 {
		f := sys.Fabric
		s := fmt.Sprintf("%s, %v per link and direction", f.Kind, f.Bandwidth)
		if f.Latency > 0 {
			s += fmt.Sprintf(", latency %v", f.Latency)
		}
		if f.Oversubscription > 1 {
			s += fmt.Sprintf(", oversubscribed %g:1", f.Oversubscription)
		}
		system.Rows = append(system.Rows, [2]string{"fabric", s})
	}
	if ss := sys.SharedStorage; ss != nil {
		s := fmt.Sprintf("%s, %v aggregate, %v per client", cmp.Or(ss.Kind, "shared"), ss.Aggregate, ss.PerClient)
		if ss.Latency > 0 {
			s += fmt.Sprintf(", %v per request", ss.Latency)
		}
		system.Rows = append(system.Rows, [2]string{"shared storage", s})
	}

	return system
}

// nodeInputs are the rows of the node's group.
func nodeInputs(r *scenarios.Resolved) [][2]string {
	node, par := r.Node, r.Parallelism
	cpu := node.CPU
	nodeRows := [][2]string{
		{"name", joined(node.Name, node.Model)},
		{"devices", fmt.Sprintf("%d × %s, %d used per node", node.Devices, node.Device, par.DevicesPerNode)},
		{"CPU", fmt.Sprintf("%d × %s, %d cores at %v each", cpu.Sockets, cpu.Model, cpu.CoresPerSocket, cpu.Clock)},
		{"host memory", node.HostMemory.String()},
		{"device link", fmt.Sprintf("%s, %v per direction, peer-to-peer %s", node.Link.Kind, node.Link.Bandwidth, yesNo(node.Link.PeerToPeer))},
	}
	for _, st := range node.Storage {
		nodeRows = append(nodeRows, [2]string{"local storage", fmt.Sprintf("%d × %s %v, read %v each", st.Count, st.Kind, st.Capacity, st.Read)})
	}
	for _, n := range node.NICs {
		nic := fmt.Sprintf("%d × %s, %v", n.Count, n.Kind, n.Bandwidth)
		if n.Ports > 1 {
			nic = fmt.Sprintf("%d × %s, %d ports of %v", n.Count, n.Kind, n.Ports, n.Bandwidth)
		}
		nodeRows = append(nodeRows, [2]string{"network", nic})
	}

	return nodeRows
}

// deviceInputs are the rows of the device's group.
func deviceInputs(r *scenarios.Resolved) [][2]string {
	dev := r.Device
	return [][2]string{
		{"name", joined(dev.Name, strings.TrimSpace(dev.Vendor+" "+dev.Model), string(dev.Kind))},
		{"peak at " + r.Precision, dev.PeakFLOPs(hw.Precision(r.Precision)).String()},
		{"memory", fmt.Sprintf("%v at %v", dev.Memory, dev.MemoryBandwidth)},
	}

}

// modelInputs are the rows of the model's group.
func modelInputs(r *scenarios.Resolved) [][2]string {
	mdl := r.Mdl
	mdlRows := [][2]string{
		{"name", joined(mdl.Name, mdl.Description)},
		{"task", mdl.Task},
		{"parameters", fmt.Sprintf("%s (gradient %v at %s)", predict.Group(mdl.Params), gradientBytes(r), r.Precision)},
		{"forward", mdl.ForwardFLOPs.String() + " per sample"},
		{"class", string(mdl.Class)},
	}
	if c := r.Calibration; c != nil {
		mdlRows = append(mdlRows, [2]string{"calibration", joined(fmt.Sprintf("v0 = %s samples/s, t = %v on %s", num(c.V0), c.T, DevicesName(c.Devices)), c.Source)})
	} else {
		mdlRows = append(mdlRows, [2]string{"compute", "roofline (no calibration)"})
	}

	return mdlRows
}

// recipeInputs are the rows of the recipe's group.
func recipeInputs(r *scenarios.Resolved) [][2]string {
	rcp, data := r.Rcp, r.Data
	length := fmt.Sprintf("%s epochs", num(rcp.Epochs))
	if rcp.Epochs == 0 {
		length = fmt.Sprintf("%d iterations at global batch %d", rcp.Iterations, rcp.GlobalBatch)
	}
	if x := rcp.Reached; x != nil {
		at := fmt.Sprintf("%s epochs", num(x.Epochs))
		if x.Epochs == 0 {
			at = fmt.Sprintf("%d iterations", x.Iterations)
		}
		length = fmt.Sprintf("%s at most; published runs reached the target at %s (%s)", length, at, x.Source)
	}
	rcpRows := [][2]string{
		{"name", joined(rcp.Name, rcp.Source)},
		{"optimizer", string(rcp.Optimizer)},
		{"length", length},
		{"reference run", fmt.Sprintf("%d devices, %d per device, global batch %d", rcp.Devices, rcp.PerDeviceBatch, rcp.GlobalBatch)},
		{"precision", r.Precision},
	}
	if tg := rcp.Target(); tg.Metric != "" {
		rcpRows = append(rcpRows, [2]string{"target", fmt.Sprintf("%s %s", tg.Metric, num(tg.Value))})
	}
	if rcp.MaxGlobalBatch > 0 {
		rcpRows = append(rcpRows, [2]string{"largest global batch known to reach it", strconv.FormatInt(rcp.MaxGlobalBatch, 10)})
	}
	rcpRows = append(rcpRows, [2]string{"data set", fmt.Sprintf("%s: %s training samples of %v", data.Name, predict.Group(data.TrainSamples), data.BytesPerSample)})

	return rcpRows
}

// parallelismInputs are the rows of the parallelism's group.
func parallelismInputs(r *scenarios.Resolved) [][2]string {
	par := r.Parallelism
	parRows := [][2]string{
		{"replicas × stages", fmt.Sprintf("data-parallel replicas of %d pipeline %s, %d %s per step", par.PipelineStages,
			plural(par.PipelineStages, "stage", "stages"), par.Accumulation, plural(par.Accumulation, "micro-batch", "micro-batches"))},
		{"gradient exchange", fmt.Sprintf("%s, buckets of %v", par.Exchange(), par.Bucket)},
		{"between nodes", transport(r, par.Transport)},
		{"inside a node", transport(r, par.IntraTransport)},
	}
	if row, ok := hostMemoryExchange(r); ok {
		parRows = append(parRows, [2]string{"devices of a node", row})
	}
	if par.PipelineStages > 1 {
		parRows = append(parRows, [2]string{"schedule", par.Schedule})
	}
	if par.Recompute {
		parRows = append(parRows, [2]string{"recompute", "activations recomputed in the backward pass"})
	}
	if par.AllReduce == "ps" || par.AllReduce == "async-ps" {
		parRows = append(parRows, [2]string{"parameter-server shards", strconv.Itoa(par.PSShards)})
	}
	var devs, batches []string
	for _, n := range r.Sweep.Devices {
		devs = append(devs, strconv.Itoa(n))
	}
	for _, b := range r.Sweep.Batch {
		batches = append(batches, strconv.Itoa(b))
	}
	parRows = append(parRows, [2]string{"sweep", fmt.Sprintf("devices %s; batch per device %s", strings.Join(devs, ", "), strings.Join(batches, ", "))})
	if r.Stragglers.Jitter > 0 {
		parRows = append(parRows, [2]string{"straggler jitter", fmt.Sprintf("%.3g (coefficient of variation of compute per step), seed %d", r.Stragglers.Jitter, r.Seed)})
	}

	return parRows
}

// hostMemoryExchange describes how the devices of r's node exchange when
// they do so through host memory (a link without peer-to-peer, or
// NCCL_P2P_DISABLE=1), as scenarios.Build builds it: by host-staged copies
// and a sum on the CPU, or with NCCL's shared-memory transport at the
// node's rate (hw.Node.SHMRate). ok is false when they talk peer-to-peer.
func hostMemoryExchange(r *scenarios.Resolved) (row string, ok bool) {
	par := r.Parallelism
	if r.Node == nil || r.PeerToPeer() {
		return "", false
	}
	why := "the node's link has no peer-to-peer"
	if par.NCCLP2PDisable {
		why = "NCCL_P2P_DISABLE=1"
	}
	if par.AllReduce == "host-staged" {
		return fmt.Sprintf("exchange through host memory (%s): staged copies at the host link's rate, summed on the CPU", why), true
	}
	return fmt.Sprintf("exchange through host memory (%s): NCCL's shared memory at %v per device", why, r.Node.SHMRate()), true
}

// pipelineInputs are the rows of the input pipeline's group.
func pipelineInputs(r *scenarios.Resolved) [][2]string {
	in := r.Input
	staging := "no"
	if in.Staging {
		staging = "yes: copied from the shared file server onto each node's drives before training"
	}
	inRows := [][2]string{
		{"storage", in.Storage},
		{"staging", staging},
		{"prefetch", fmt.Sprintf("%d batches", in.Prefetch)},
		{"precision to the device", in.Precision},
	}
	if o := r.Overheads; o.Startup > 0 || o.Evaluation > 0 {
		inRows = append(inRows, [2]string{"overheads", fmt.Sprintf("start-up %v, evaluation %v", o.Startup, o.Evaluation)})
	}
	return inRows
}

// gradientBytes is the size of r's gradients at its precision, stored as
// the simulator stores them (sim.StoragePrecision). Resolving a scenario
// admits only precisions StoragePrecision takes.
func gradientBytes(r *scenarios.Resolved) units.Bytes {
	sp, err := sim.StoragePrecision(hw.Precision(r.Precision))
	if err != nil {
		panic("report: " + err.Error())
	}
	return r.Mdl.GradientBytes(sp)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// num prints x as the tables do (units.FormatNumber).
func num(x float64) string { return units.FormatNumber(x) }

// wholeCell formats a throughput for a table cell as the command's tables
// do: a whole number from 10 up, three significant digits below.
func wholeCell(v float64) string {
	if math.Abs(v) < 9.5 && v != 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// plural returns one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
