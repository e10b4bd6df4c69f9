package report

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"scaleplan/internal/units"
	"scaleplan/plots"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// Scenario chart kinds, which are also the base names of their files.
const (
	Scaling    = "scaling"    // time to train vs devices, all runs in one chart
	Efficiency = "efficiency" // scaling efficiency vs devices, all runs in one chart
	Breakdown  = "breakdown"  // step-time breakdown, one chart per run
	Timeline   = "timeline"   // one step, one chart per run with a trace
)

// publishedSetups maps the shipped scenarios whose recipe lists published
// times to train for several software setups to their own setup
// (model.Measurement.Setup in the recipe's time_to_train). Seed 001's
// Table 2, in recipe tsubame3-resnet50, gives Caffe2's time to 90 epochs
// on 1, 4, 32 and 128 GPUs, in seconds:
//
//	(a) default          604987  154931  44862  135905
//	(b) staged           593992   88185  21111   10089
//	(c) staged + verbs   608629  152852  21774    5989
//
// A scenario not listed here gets the recipe's entries without a setup.
var publishedSetups = map[string]string{
	"tsubame3-resnet50-caffe2-default": "a-default",
	"tsubame3-resnet50-caffe2-staged":  "b-staged",
	"tsubame3-resnet50-caffe2-verbs":   "c-staged-verbs",
}

// Published returns r's published times to train as a curve named name:
// its recipe's time_to_train entries measured on r's system, with r's
// setup, that are not upper bounds, and whose global batch, where given,
// is the one r's sweep has at that device count (or r's sweep does not
// have that count). ok is false when there is none.
func Published(r *scenarios.Resolved, name string) (c plots.Curve, ok bool) {
	setup := publishedSetups[r.Name]
	batches := map[int][]int{}
	for _, p := range r.Points() {
		batches[p.Devices] = append(batches[p.Devices], p.GlobalBatch)
	}
	c.Name = name
	for _, m := range r.Rcp.TimeToTrain {
		if m.System != r.Sys.Name || m.Setup != setup || m.UpperBound || m.Devices < 1 || !(m.Time > 0) {
			continue
		}
		if bs, swept := batches[m.Devices]; swept && m.GlobalBatch > 0 && !slices.Contains(bs, int(m.GlobalBatch)) {
			continue
		}
		c.X = append(c.X, float64(m.Devices))
		c.Y = append(c.Y, float64(m.Time))
	}
	return c, len(c.X) > 0
}

// shortNames returns the scenario names without the dash-separated words
// they all begin with ("tsubame3-resnet50-caffe2-default" and
// "...-staged" become "default" and "staged"); one name, or names that
// would become empty, stay whole.
func shortNames(names []string) []string {
	if len(names) < 2 {
		return slices.Clone(names)
	}
	words := make([][]string, len(names))
	for i, n := range names {
		words[i] = strings.Split(n, "-")
	}
	common := len(words[0])
	for _, w := range words[1:] {
		k := 0
		for k < min(common, len(w)) && w[k] == words[0][k] {
			k++
		}
		common = k
	}
	out := make([]string, len(names))
	for i, w := range words {
		if common >= len(w) {
			return slices.Clone(names)
		}
		out[i] = strings.Join(w[common:], "-")
	}
	return out
}

// subject is "MODEL on SYSTEM" when every run trains the same model on the
// same system, else "".
func subject(runs []*Run) string {
	if len(runs) == 0 {
		return ""
	}
	r0 := runs[0].R
	for _, s := range runs[1:] {
		if s.R.Mdl.Name != r0.Mdl.Name || s.R.Sys.Name != r0.Sys.Name {
			return ""
		}
	}
	return r0.Mdl.Name + " on " + r0.Sys.Name
}

// ScalingData returns the input of the time-to-train and efficiency
// charts: one predicted curve per run (per run and per-device batch when
// a run sweeps several batches) of time to train against device count,
// and each run's published times as a measured curve of the same name.
// Curves are named by the scenarios' names less the words they all begin
// with.
func ScalingData(runs []*Run) plots.ScalingData {
	names := make([]string, len(runs))
	for i, s := range runs {
		names[i] = s.R.Name
	}
	short := shortNames(names)
	d := plots.ScalingData{Subject: subject(runs)}
	for i, s := range runs {
		bs := s.batchesPerDevice()
		for _, b := range bs {
			c := plots.Curve{Name: short[i]}
			if len(bs) > 1 {
				c.Name = fmt.Sprintf("%s, batch %d", short[i], b)
			}
			for j, res := range s.Results {
				if res.MicroBatch == b {
					c.X = append(c.X, float64(res.Devices))
					c.Y = append(c.Y, float64(s.Time(j)))
				}
			}
			d.Predicted = append(d.Predicted, c)
		}
		if c, ok := Published(s.R, short[i]); ok {
			d.Measured = append(d.Measured, c)
		}
	}
	return d
}

// barLabels returns the breakdown bars' labels and axis label: the device
// counts, or device count × per-device batch when a device count repeats.
func barLabels(run *Run) (labels []string, xLabel string) {
	labels = make([]string, len(run.Results))
	if run.deviceCounts() == len(run.Results) {
		for i, res := range run.Results {
			labels[i] = strconv.Itoa(res.Devices)
		}
		return labels, "devices"
	}
	for i, res := range run.Results {
		labels[i] = fmt.Sprintf("%d×%d", res.Devices, res.MicroBatch)
	}
	return labels, "devices × batch per device"
}

// BreakdownData returns the input of the breakdown chart: one bar per
// configuration, its parts sim.Breakdown's compute, exposed
// communication, exposed input, bubble and straggler wait (the order of
// plots.BreakdownParts), which sum to the step time.
func BreakdownData(run *Run) plots.BreakdownData {
	labels, xl := barLabels(run)
	d := plots.BreakdownData{Subject: run.R.Name, XLabel: xl}
	for i, res := range run.Results {
		b := res.Breakdown
		d.Bars = append(d.Bars, plots.Breakdown{Label: labels[i],
			Parts: []float64{float64(b.Compute), float64(b.Comm), float64(b.Input), float64(b.Bubble), float64(b.Straggler)}})
	}
	return d
}

// ErrNoTrace is returned by TimelineData for a run without a traced
// synchronous step.
var ErrNoTrace = errors.New("no traced step (the asynchronous parameter server has no synchronous steps)")

// lastTraced returns the last result of run with a trace and steps, nil
// if none has.
func lastTraced(run *Run) *sim.Result {
	var res *sim.Result
	for _, r := range run.Results {
		if r.Trace != nil && len(r.Steps) > 0 {
			res = r
		}
	}
	return res
}

// TimelineData returns the input of the timeline chart: the last step of
// the last traced result of run, from its Chrome trace. Rows are the
// traced devices (their track names, e.g. "device 0 (node 0)"), then the
// gradient exchange of each pipeline stage, then node 0's input pipeline
// and the shared database file; kinds are the devices' forward, backward
// and update, "communication" and "input". Waits are left out (the
// timeline shows them as gaps). Spans are clipped to the step and timed
// from its start.
func TimelineData(run *Run) (plots.TimelineData, error) {
	res := lastTraced(run)
	if res == nil {
		return plots.TimelineData{}, ErrNoTrace
	}
	spans := stepSpans(res)
	if len(spans) == 0 {
		return plots.TimelineData{}, ErrNoTrace
	}
	d := plots.TimelineData{Subject: fmt.Sprintf("%s, %s, batch %d", run.R.Name, DevicesName(res.Devices), res.MicroBatch)}
	for _, s := range spans {
		d.Spans = append(d.Spans, s.s)
	}
	return d, nil
}

// traceSpan is a span of the timeline with the trace track it came from.
type traceSpan struct {
	pid, tid int
	s        plots.Span
}

// stepSpans returns the spans of res's last step, ordered by track and
// start (TimelineData).
func stepSpans(res *sim.Result) []traceSpan {
	step := res.Steps[len(res.Steps)-1]
	t0, t1 := float64(step.Start)*1e6, float64(step.End)*1e6 // µs, as the trace
	tracks := map[[2]int]string{}
	stages := 0
	for _, e := range res.Trace.Events {
		if e.Ph == "M" && e.Name == "thread_name" {
			tracks[[2]int{e.Pid, e.Tid}] = e.Args["name"]
			if e.Pid == 2 {
				stages++
			}
		}
	}
	var spans []traceSpan
	for _, e := range res.Trace.Events {
		if e.Ph != "X" || e.Cat == "wait" {
			continue
		}
		a, b := max(e.Ts, t0), min(e.Ts+e.Dur, t1)
		if !(b > a) {
			continue
		}
		s := plots.Span{Start: units.Seconds((a - t0) / 1e6), End: units.Seconds((b - t0) / 1e6)}
		switch e.Pid {
		case 1:
			s.Row, s.Kind = tracks[[2]int{e.Pid, e.Tid}], e.Name
		case 2:
			s.Row, s.Kind = "gradient exchange", "communication"
			if stages > 1 {
				s.Row = fmt.Sprintf("gradient exchange, stage %d", e.Tid)
			}
		case 3:
			s.Row, s.Kind = tracks[[2]int{e.Pid, e.Tid}], "input"
		default: // links (pid 4): the timeline has a row per device, not per link
			continue
		}
		if s.Row == "" {
			s.Row = fmt.Sprintf("track %d.%d", e.Pid, e.Tid)
		}
		spans = append(spans, traceSpan{e.Pid, e.Tid, s})
	}
	slices.SortStableFunc(spans, func(x, y traceSpan) int {
		return cmp.Or(cmp.Compare(x.pid, y.pid), cmp.Compare(x.tid, y.tid), cmp.Compare(x.s.Start, y.s.Start))
	})
	return spans
}

// Charts draws the charts of kind for runs: one chart over all runs for
// Scaling and Efficiency, one per run for Breakdown and Timeline. Each
// chart's Kind is kind. An unknown kind is a programmer's error: Charts
// panics.
func Charts(kind string, runs []*Run) ([]*plots.Chart, error) {
	var out []*plots.Chart
	add := func(ch *plots.Chart, err error) error {
		if err != nil {
			return err
		}
		ch.Kind = kind
		out = append(out, ch)
		return nil
	}
	switch kind {
	case Scaling:
		if err := add(plots.TimeToTrain(ScalingData(runs))); err != nil {
			return nil, err
		}
	case Efficiency:
		if err := add(plots.Efficiency(ScalingData(runs))); err != nil {
			return nil, err
		}
	case Breakdown:
		for _, s := range runs {
			if err := add(plots.StepBreakdown(BreakdownData(s))); err != nil {
				return nil, fmt.Errorf("%s: %w", s.R.Name, err)
			}
		}
	case Timeline:
		for _, s := range runs {
			d, err := TimelineData(s)
			if err != nil {
				return nil, fmt.Errorf("%s: timeline: %w", s.R.Name, err)
			}
			if err := add(plots.Timeline(d)); err != nil {
				return nil, fmt.Errorf("%s: %w", s.R.Name, err)
			}
		}
	default:
		panic("report: unknown scenario chart kind " + kind)
	}
	return out, nil
}

// AllCharts draws every chart the runs support: time to train and
// efficiency when some run has two device counts or more, the breakdown of
// every run, and the timeline of every run with a traced step. What it
// leaves out it says in notes.
func AllCharts(runs []*Run) (charts []*plots.Chart, notes []string, err error) {
	counts := 0
	for _, s := range runs {
		counts = max(counts, s.deviceCounts())
	}
	kinds := []string{Breakdown}
	if counts >= 2 {
		kinds = append([]string{Scaling, Efficiency}, kinds...)
	} else {
		notes = append(notes, "one device count: no time-to-train or efficiency chart (sweep several, e.g. --devices 1,4,32)")
	}
	for _, k := range kinds {
		chs, err := Charts(k, runs)
		if err != nil {
			return nil, nil, err
		}
		charts = append(charts, chs...)
	}
	for _, s := range runs {
		d, err := TimelineData(s)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: no timeline chart: %v", s.R.Name, err))
			continue
		}
		ch, err := plots.Timeline(d)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", s.R.Name, err)
		}
		ch.Kind = Timeline
		charts = append(charts, ch)
	}
	return charts, notes, nil
}
