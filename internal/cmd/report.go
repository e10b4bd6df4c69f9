package cmd

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/hw"
	"scaleplan/internal/atomicfile"
	"scaleplan/internal/progress"
	"scaleplan/internal/units"
	"scaleplan/plots"
	"scaleplan/predict"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// reportCommand is `scaleplan report SCENARIO [-o FILE]`.
func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "write a scenario's predictions, breakdown and charts as one self-contained HTML file",
		ArgsUsage: "SCENARIO [-o FILE]",
		Description: "Simulates every configuration of the scenario's sweep (a shipped scenario's name or a\n" +
			"YAML file) as `scaleplan simulate` does and writes one HTML file that needs nothing\n" +
			"else to open: the predictions per configuration (step time and its parts, samples/s,\n" +
			"time to train, scaling efficiency, published times where the scenario has them),\n" +
			"where the step time goes, the charts (time to train and efficiency against device\n" +
			"count, the breakdown, the last configuration's last step as a timeline) as inline\n" +
			"SVG, and every input: system, node, device, model, recipe, parallelism, input\n" +
			"pipeline. Time to train is the recipe's steps at the global batch times the step\n" +
			"time, plus staging and the scenario's overheads. Prints the path written.\n" +
			"Flags may come before or after the scenario.\n\n" +
			"Examples:\n" +
			"   scaleplan report tsubame3-resnet50-caffe2-verbs -o report.html\n" +
			"   scaleplan report --devices 8,16,32,64 ipu-pod64-efficientnet-b4 -o ipu.html",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Value: "report.html", Usage: "write the report to `FILE`"},
			&cli.StringFlag{Name: "devices", Usage: "simulate device counts `N,N,...` instead of the sweep's"},
			calibrationFlag(),
			&cli.IntFlag{Name: "steps", Value: sim.DefaultSteps, Usage: "optimizer steps to simulate per configuration, `N` ≥ 1; the first is left out of the steady state"},
		},
		Action: withArgs(runReport),
	}
}

func runReport(c *cli.Context, args []string) error {
	if len(args) != 1 {
		return usagef("report takes one SCENARIO (a shipped scenario's name or a YAML file); `scaleplan catalog` lists them")
	}
	if err := checkOutputs("report", flagPaths(c.String, "out"), commandInputs(c, "SCENARIO", args)); err != nil {
		return err
	}
	steps := c.Int("steps")
	if steps < 1 || steps > sim.MaxSteps {
		return usagef("report: --steps %d: want 1 to %d", steps, sim.MaxSteps)
	}
	opt := scenarioOptions(c)
	if s := c.String("devices"); s != "" {
		devices, err := parseInts("devices", s)
		if err != nil {
			return usagef("report: --devices %q: want positive integers separated by commas, such as 1,4,32", s)
		}
		ov := &simOverrides{devices: devices}
		opt.Edit, opt.Overrides = ov.edit, ov.sources()
	}
	if err := readCalibrations("report", c.StringSlice("calibration"), &opt); err != nil {
		return err
	}
	rs, err := loadScenarios("report", opt, args[0])
	if err != nil {
		return err
	}
	r := rs[0]
	bar := newBar(c, "report", len(r.Points())+4)
	defer bar.Done()
	run, err := simulateSweep(r, steps, true, bar)
	if err != nil {
		return err
	}
	page, err := renderReport(run, steps, bar)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	path := c.String("out")
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	if err := atomicfile.WriteBytes(path, page); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	bar.Done()
	fmt.Fprintln(c.App.Writer, path)
	return nil
}

// reportPage is what the report template fills in.
type reportPage struct {
	Name, Description, Source string
	Summary                   string
	Predictions               *table
	Notes                     []string // under the prediction table
	Shares                    *table   // the breakdown in percent
	Breakdown                 *reportFigure
	Charts                    []*reportFigure // time to train, efficiency, timeline
	Left                      []string        // charts left out, and why
	Inputs                    []reportInputGroup
}

// reportFigure is one chart as inline SVG.
type reportFigure struct {
	ID, Title, Caption string
	SVG                template.HTML
}

// reportInputGroup is one group of the inputs' definition table.
type reportInputGroup struct {
	Name string
	Rows [][2]string // term, definition
}

// renderReport returns the report of run as HTML. bar, which may be nil,
// counts one per chart.
func renderReport(run *scenarioRun, steps int, bar *progress.Bar) ([]byte, error) {
	r := run.R
	p := &reportPage{Name: r.Name, Description: r.Description, Source: r.Source}
	p.Predictions, p.Notes = reportPredictions(run)
	p.Shares = reportShares(run)
	p.Summary = reportSummary(run)
	p.Notes = append(p.Notes, fmt.Sprintf("Each configuration is %d simulated optimizer steps; the step time is the mean of the steps after the first, "+
		"which fills the prefetch queue. Time to train = steps × step time + staging + start-up + evaluation, with steps = %s at the global batch. "+
		"Efficiency = T(n0)·n0 / (T(n)·n) against the smallest device count n0 at the same batch per device.", steps, recipeStepsRule(r)))

	dir, err := os.MkdirTemp("", "scaleplan-report-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	charts, notes, err := allScenarioCharts([]*scenarioRun{run})
	if err != nil {
		return nil, err
	}
	p.Left = notes
	captions := map[string]string{
		chartScaling:    "Time to train against device count, log–log; published times as squares where the scenario has them, and ideal linear scaling from the smallest count dashed.",
		chartEfficiency: "Scaling efficiency against device count: 100 % is ideal linear scaling from the smallest count.",
		chartBreakdown:  "The steady-state step of each configuration split into its parts, which add up to the step time printed above each bar.",
		chartTimeline:   "The last simulated step of the last configuration: one row per traced device, the gradient exchange and node 0's input pipeline; gaps are waits.",
	}
	for _, ch := range charts {
		svg, err := inlineSVG(ch, filepath.Join(dir, ch.Kind+".svg"))
		if err != nil {
			return nil, err
		}
		f := &reportFigure{ID: ch.Kind, Title: ch.Plot.Title.Text, Caption: captions[ch.Kind], SVG: svg}
		if ch.Kind == chartBreakdown {
			p.Breakdown = f
		} else {
			p.Charts = append(p.Charts, f)
		}
		bar.Add(1)
	}
	p.Inputs = reportInputs(run)
	var b bytes.Buffer
	if err := reportTemplate.Execute(&b, p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// svgOpen matches the size attributes of the opening tag vgsvg writes.
var svgOpen = regexp.MustCompile(`^<svg width="([0-9.]+)pt" height="([0-9.]+)pt"`)

// inlineSVG returns ch drawn as SVG to put inside HTML: without the XML
// prologue, sized in pixels (a point is 4/3 of a pixel), labelled by its
// title. path is a scratch file: plots.Save draws only to files.
func inlineSVG(ch *plots.Chart, path string) (template.HTML, error) {
	if err := plots.Save(ch.Plot, path, plots.Width, plots.Height); err != nil {
		return "", err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	i := bytes.Index(data, []byte("<svg"))
	if i < 0 {
		return "", fmt.Errorf("%s chart: no <svg> element in the drawing", ch.Kind)
	}
	data = data[i:]
	m := svgOpen.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("%s chart: unexpected <svg> tag %.60q", ch.Kind, data)
	}
	w, _ := strconv.ParseFloat(string(m[1]), 64)
	h, _ := strconv.ParseFloat(string(m[2]), 64)
	tag := fmt.Sprintf(`<svg width="%d" height="%d" role="img" aria-label="%s" class="chart"`,
		int(math.Round(w*4/3)), int(math.Round(h*4/3)), template.HTMLEscapeString(ch.Plot.Title.Text))
	return template.HTML(tag + string(data[len(m[0]):])), nil
}

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
func scalingEfficiencies(run *scenarioRun) []float64 {
	n0 := map[int]int{} // per-device batch → index of its smallest device count
	for i, res := range run.Results {
		if j, ok := n0[res.MicroBatch]; !ok || res.Devices < run.Results[j].Devices {
			n0[res.MicroBatch] = i
		}
	}
	out := make([]float64, len(run.Results))
	for i, res := range run.Results {
		j := n0[res.MicroBatch]
		out[i] = 100 * float64(run.ttt(j)) * float64(run.Results[j].Devices) / (float64(run.ttt(i)) * float64(res.Devices))
	}
	return out
}

// reportPredictions is one row per configuration, with the published time
// to train and the prediction's error where the scenario has one.
func reportPredictions(run *scenarioRun) (*table, []string) {
	r := run.R
	pub := map[int]float64{}
	if c, ok := published(r, r.Name); ok {
		for i := range c.X {
			pub[int(c.X[i])] = c.Y[i]
		}
	}
	t := &table{Header: []string{"devices", "nodes", "batch/device", "global batch", "step (ms)", "compute (ms)", "exposed comm (ms)",
		"exposed input (ms)", "bubble (ms)", "straggler (ms)", "samples/s", "steps", "time to train", "efficiency (%)"}}
	if len(pub) > 0 {
		t.Header = append(t.Header, "published", "error (%)")
	}
	var notes []string
	ms := func(s units.Seconds) string { return strconv.FormatFloat(float64(s)*1e3, 'f', 2, 64) }
	eff := scalingEfficiencies(run)
	for i, res := range run.Results {
		b := res.Breakdown
		ttt := run.ttt(i)
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
				devicesName(res.Devices), res.GlobalBatch, r.Rcp.Name, mx))
		}
	}
	if len(pub) > 0 {
		notes = append(notes, "Published: "+r.Rcp.Source+" (recipe "+r.Rcp.Name+"); error = (predicted − published) / published.")
	}
	if r.Input.Staging && len(run.Results) > 0 {
		notes = append(notes, fmt.Sprintf("Time to train includes staging %s (%v) onto every node's drives, %s at %s.",
			r.Data.Name, units.Bytes(float64(r.Data.TrainSamples)*float64(r.Data.BytesPerSample)),
			run.Results[len(run.Results)-1].Staging, devicesName(run.Results[len(run.Results)-1].Devices)))
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

// reportShares is the breakdown of each configuration in percent of its
// step time.
func reportShares(run *scenarioRun) *table {
	labels, xl := barLabels(run)
	t := &table{Header: append([]string{xl, "step (ms)"}, plots.BreakdownParts...)}
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

// reportSummary is one sentence on the largest configuration: its time to train
// and where its step time goes beyond compute.
func reportSummary(run *scenarioRun) string {
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
		devicesName(res.Devices), res.GlobalBatch, res.StepTime, humanDuration(run.ttt(i)), 100*float64(b.Compute/res.StepTime))
	if big.v > 0 {
		s += fmt.Sprintf(", %.1f %% %s", 100*float64(big.v/res.StepTime), big.name)
	}
	return s + "."
}

// reportInputs lists the scenario's inputs, resolved: every figure the
// simulation used, with its unit.
func reportInputs(run *scenarioRun) []reportInputGroup {
	r := run.R
	sys, node, dev, mdl, rcp, data := r.Sys, r.Node, r.Device, r.Mdl, r.Rcp, r.Data
	par, in := r.Parallelism, r.Input
	joined := func(parts ...string) string {
		var out []string
		for _, p := range parts {
			if p != "" {
				out = append(out, p)
			}
		}
		return strings.Join(out, "; ")
	}
	maxNodes := 0
	for _, res := range run.Results {
		maxNodes = max(maxNodes, res.Nodes)
	}
	transport := func(name string) string {
		if name == "" {
			return "none (the link as it is)"
		}
		t, err := sys.Transport(name)
		if err != nil {
			return name
		}
		s := fmt.Sprintf("%s: %.0f %% of link bandwidth", name, 100*t.Efficiency)
		if t.Overhead > 0 {
			s += fmt.Sprintf(", %v per message", t.Overhead)
		}
		return s
	}
	system := reportInputGroup{Name: "System", Rows: [][2]string{
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

	cpu := node.CPU
	nodeRows := [][2]string{
		{"name", joined(node.Name, node.Model)},
		{"devices", fmt.Sprintf("%d × %s, %d used per node", node.Devices, node.Device, par.DevicesPerNode)},
		{"CPU", fmt.Sprintf("%d × %s, %d cores at %v each", cpu.Sockets, cpu.Model, cpu.CoresPerSocket, cpu.Clock)},
		{"host memory", node.HostMemory.String()},
		{"device link", fmt.Sprintf("%s, %v per direction, peer-to-peer %s", node.Link.Kind, node.Link.Bandwidth, reportYesNo(node.Link.PeerToPeer))},
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

	devRows := [][2]string{
		{"name", joined(dev.Name, strings.TrimSpace(dev.Vendor+" "+dev.Model), string(dev.Kind))},
		{"peak at " + r.Precision, dev.PeakFLOPs(hw.Precision(r.Precision)).String()},
		{"memory", fmt.Sprintf("%v at %v", dev.Memory, dev.MemoryBandwidth)},
	}

	mdlRows := [][2]string{
		{"name", joined(mdl.Name, mdl.Description)},
		{"task", mdl.Task},
		{"parameters", fmt.Sprintf("%s (gradient %v at %s)", predict.Group(mdl.Params), units.Bytes(float64(mdl.Params)*gradientBytesPer(r.Precision)), r.Precision)},
		{"forward", mdl.ForwardFLOPs.String() + " per sample"},
		{"class", string(mdl.Class)},
	}
	if c := r.Calibration; c != nil {
		mdlRows = append(mdlRows, [2]string{"calibration", joined(fmt.Sprintf("v0 = %s samples/s, t = %v on %s", num(c.V0), c.T, devicesName(c.Devices)), c.Source)})
	} else {
		mdlRows = append(mdlRows, [2]string{"compute", "roofline (no calibration)"})
	}

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

	parRows := [][2]string{
		{"replicas × stages", fmt.Sprintf("data-parallel replicas of %d pipeline %s, %d %s per step", par.PipelineStages,
			plural(par.PipelineStages, "stage", "stages"), par.Accumulation, plural(par.Accumulation, "micro-batch", "micro-batches"))},
		{"gradient exchange", fmt.Sprintf("%s, buckets of %v", par.Exchange(), par.Bucket)},
		{"between nodes", transport(par.Transport)},
		{"inside a node", transport(par.IntraTransport)},
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
	return []reportInputGroup{system, {"Node", nodeRows}, {"Device", devRows}, {"Model", mdlRows}, {"Recipe", rcpRows},
		{"Parallelism", parRows}, {"Input pipeline", inRows}}
}

// gradientBytesPer is the bytes of a gradient value at precision p.
func gradientBytesPer(p string) float64 {
	if p == "fp16" || p == "bf16" {
		return 2
	}
	return 4
}

func reportYesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// numericCell reports whether a table cell holds a number (right-aligned).
func numericCell(s string) bool {
	s = strings.TrimLeft(s, "+-")
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != ',' }) < 0
}

// reportTemplate is the page: no script, no external file, no web font;
// the charts are inline SVG.
var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{"numericCell": numericCell}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="scaleplan report">
<title>scaleplan report: {{.Name}}</title>
<style>
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; color: #222; max-width: 1150px; margin: 0 auto; padding: 1em 1.5em 3em; line-height: 1.45; }
h1 { font-size: 1.7em; margin-bottom: 0.2em; }
h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; }
h3 { font-size: 1.05em; margin: 1.2em 0 0.3em; }
nav a { margin-right: 1em; }
.lead { font-size: 1.1em; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { padding: 0.25em 0.45em; border-bottom: 1px solid #ddd; vertical-align: top; }
thead th { border-bottom: 2px solid #999; text-align: right; }
thead th:first-child { text-align: left; }
td.n, td.t { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.defs th { text-align: left; font-weight: normal; color: #555; white-space: nowrap; }
table.defs th[colspan] { color: #222; font-weight: bold; padding-top: 0.9em; border-bottom: 2px solid #999; }
figure { margin: 1.5em 0; }
figure svg { display: block; max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; max-width: 800px; }
.notes { color: #444; font-size: 0.9em; }
footer { margin-top: 3em; color: #777; font-size: 0.85em; }
</style>
</head>
<body>
<header>
<h1>{{.Name}}</h1>
{{if .Description}}<p>{{.Description}}</p>{{end}}
{{if .Source}}<p class="notes">Source: {{.Source}}</p>{{end}}
<p class="lead">{{.Summary}}</p>
<nav><a href="#predictions">Predictions</a><a href="#breakdown">Breakdown</a><a href="#charts">Charts</a><a href="#inputs">Inputs</a></nav>
</header>

<section id="predictions">
<h2>Predictions</h2>
<div class="scroll"><table>
<thead><tr>{{range .Predictions.Header}}<th scope="col">{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Predictions.Rows}}<tr>{{range .}}<td class="{{if numericCell .}}n{{else}}t{{end}}">{{.}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
<ul class="notes">
{{range .Notes}}<li>{{.}}</li>
{{end}}</ul>
</section>

<section id="breakdown">
<h2>Where the step time goes</h2>
<div class="scroll"><table>
<thead><tr>{{range .Shares.Header}}<th scope="col">{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Shares.Rows}}<tr>{{range .}}<td class="n">{{.}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
{{with .Breakdown}}<figure id="chart-{{.ID}}">
{{.SVG}}
<figcaption>{{.Caption}}</figcaption>
</figure>{{end}}
</section>

<section id="charts">
<h2>Charts</h2>
{{range .Charts}}<figure id="chart-{{.ID}}">
{{.SVG}}
<figcaption>{{.Caption}}</figcaption>
</figure>
{{end}}{{range .Left}}<p class="notes">Not drawn: {{.}}</p>
{{end}}</section>

<section id="inputs">
<h2>Inputs</h2>
<table class="defs">
{{range .Inputs}}<tr><th colspan="2" scope="rowgroup">{{.Name}}</th></tr>
{{range .Rows}}<tr><th scope="row">{{index . 0}}</th><td>{{index . 1}}</td></tr>
{{end}}{{end}}</table>
</section>

<footer>Written by <code>scaleplan report</code>. The file is self-contained: the charts are inline SVG, and it loads nothing else.</footer>
</body>
</html>
`))
