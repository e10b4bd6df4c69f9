package fit

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"scaleplan/fit/logs"
	"scaleplan/internal/benchlog"
	"scaleplan/internal/calib"
	"scaleplan/internal/config"
	"scaleplan/internal/units"
)

// ErrNoData is returned by Fit, wrapped where it says more, when the logs
// hold no throughput measurement (or none at or above Options.MinBatch),
// no convergence record and no run.
var ErrNoData = errors.New("no throughput, convergence or run records")

// Options control Fit. The zero value groups by model, device kind,
// device count and precision, and uses DefaultSettings.
type Options struct {
	// GroupBy names labels whose values also split the groups, e.g.
	// "framework". A record without the label has the value "", but for
	// "transport", whose value is then the record's Transport.
	GroupBy []string
	// GradientSize is S, the bytes all-reduced per step, for the bandwidth
	// estimate of the fits across device counts; 0 leaves it out.
	GradientSize units.Bytes
	// Settings of the fits; nil means DefaultSettings.
	Settings *Settings
	// Target is a validation accuracy, a fraction in (0, 1], for the runs
	// whose logs evaluate without naming a target (logs.Run.Evals, torchvision's
	// train.py): each such run gives a convergence record, reached at the
	// steps of its first evaluation at or above Target, or not reached
	// after the steps of its last. 0 leaves them out.
	Target float64
	// MinBatch leaves the throughput measurements of global batches under
	// it out of the fits (Group.BelowMin counts them): on a GPU the
	// smallest batches are bound by the host launching kernels, which
	// overlaps the device's work instead of adding a fixed time to it as
	// the law's t does. 0 keeps every batch.
	MinBatch int
}

// Key identifies a group of throughput measurements.
type Key struct {
	Model     string
	Device    string // device kind
	Devices   int    // device count; 0 if the log does not say (MLPerf)
	Precision string
	Labels    map[string]string // the Options.GroupBy labels
}

// String returns the key as "model device ×devices precision k=v ...",
// leaving out what is empty.
func (k Key) String() string {
	parts := []string{cmp.Or(k.Model, "?")}
	if k.Device != "" {
		parts = append(parts, k.Device)
	}
	if k.Devices > 0 {
		parts = append(parts, "×"+strconv.Itoa(k.Devices))
	}
	if k.Precision != "" {
		parts = append(parts, k.Precision)
	}
	if l := calib.LabelString(k.Labels); l != "" {
		parts = append(parts, l)
	}
	return strings.Join(parts, " ")
}

// Point is one throughput measurement of a group.
type Point struct {
	Batch      int     // global batch, samples per step
	Throughput float64 // samples per second over all devices
	Fitted     float64 // the law at Batch; NaN if the group has no fit
	Residual   float64 // (Throughput − Fitted)/Fitted
	Z          float64 // standardized prediction residual; NaN where not tested
	Excluded   bool    // the law does not explain it; left out of the fit
	Kind       string  // benchlog.KindMeasurement or benchlog.KindStep
	Source     string  // file
	Line       int     // line in Source
}

// Group is the throughput law fitted to one group of measurements.
type Group struct {
	Key    Key
	Points []Point
	OOM    []int          // global batches that ran out of device memory, ascending
	Fit    *ThroughputFit // nil when Err is set
	Err    error
	// Ignored counts step records left out because the group has
	// measurement records (which summarize them).
	Ignored int
	// BelowMin counts the measurements left out for a global batch under
	// Options.MinBatch.
	BelowMin int
}

// StepsPoint is one convergence record.
type StepsPoint struct {
	Batch    int     // global batch
	Steps    int     // steps to reach the target, or the cap when not Reached
	Reached  bool    // whether the run reached the target
	Accuracy float64 // best accuracy reached, fraction
	Fitted   float64 // S(Batch) of the fit; NaN without one
	Regime   Regime  // regime of the fitted curve at Batch; Unclassified without one
	Residual float64 // (Steps − Fitted)/Fitted of reached points
	Z        float64 // standardized prediction residual; NaN where not tested
	Excluded bool    // the curve does not explain it
	Source   string
	Line     int
}

// StepsGroup is the steps-to-target curve of one model and target.
type StepsGroup struct {
	Model  string
	Target float64 // target accuracy, fraction; 0 if the log does not say
	Labels map[string]string
	Points []StepsPoint // reached and not, in input order
	Fit    *StepsFit    // fitted to the reached points; nil when Err is set
	Err    error
	// MaxReached is the largest global batch that reached the target.
	MaxReached int
}

// CommGroup is the split of t across device counts for one model and
// device kind.
type CommGroup struct {
	Model, Device, Precision string
	Labels                   map[string]string
	Fit                      *CommFit
	Err                      error
}

// Report is everything Fit found.
type Report struct {
	Groups []Group      // throughput law per group
	Comm   []CommGroup  // across device counts, where a group has two or more
	Steps  []StepsGroup // steps-to-target curves
	Runs   []SourcedRun // training runs (MLPerf)
	// Collectives are the latency–bandwidth fits of the collective tests
	// of nccl-tests logs, in the order read.
	Collectives []CollectiveFit
}

// SourcedRun is a logs.Run and the file it came from.
type SourcedRun struct {
	Source string
	logs.Run
}

// Fit fits the throughput law to every group of measurement (or step)
// records of lgs, the communication split across device counts, and the
// steps-to-target curve to the convergence records, grouped by model,
// target and the GroupBy labels. In a group that has measurement records,
// step records are ignored: a measurement summarizes its steps. A group
// that cannot be fitted has its Err set; Fit returns ErrNoData only when
// there is nothing to report at all.
func Fit(lgs []*logs.Log, opt *Options) (*Report, error) {
	var o Options
	if opt != nil {
		o = *opt
	}
	if !(o.Target >= 0 && o.Target <= 1) {
		return nil, fmt.Errorf("target %v: want an accuracy in (0, 1], or 0 for none", o.Target)
	}
	if err := checkGroupBy(lgs, o.GroupBy); err != nil {
		return nil, err
	}
	rep := &Report{}
	groups := map[string]*Group{}
	steps := map[string]*StepsGroup{}
	addSteps := func(r benchlog.Record, source string, line int) {
		labels := pick(r.Labels, o.GroupBy)
		key := r.Model + "\x00" + strconv.FormatFloat(r.Target, 'g', -1, 64) + "\x00" + calib.LabelString(labels)
		sg := steps[key]
		if sg == nil {
			sg = &StepsGroup{Model: r.Model, Target: r.Target, Labels: labels}
			steps[key] = sg
		}
		sg.Points = append(sg.Points, StepsPoint{
			Batch: r.EffectiveGlobalBatch(), Steps: r.StepsToTarget, Reached: r.Reached,
			Accuracy: r.Accuracy, Source: source, Line: line,
		})
	}
	for _, lg := range lgs {
		for _, c := range lg.Collectives {
			rep.Collectives = append(rep.Collectives, FitCollective(lg.Name, c))
		}
		for _, r := range lg.Runs {
			rep.Runs = append(rep.Runs, SourcedRun{Source: lg.Name, Run: r})
			if c, line, ok := r.Convergence(o.Target); ok && c.Validate() == nil {
				addSteps(c, lg.Name, line)
			}
		}
		for i, r := range lg.Records {
			line := 0
			if i < len(lg.Lines) {
				line = lg.Lines[i]
			}
			switch r.Kind {
			case benchlog.KindMeasurement, benchlog.KindStep, benchlog.KindOOM:
				k := Key{Model: r.Model, Device: r.Device, Devices: r.Workers, Precision: r.Precision, Labels: pick(r.Labels, o.GroupBy)}
				for _, name := range calib.KeptLabels {
					// Samples of another unit than the profile's (a
					// sentence pair of tokens), and a model run in another
					// memory format or compiled, are a group of their own
					// whether or not GroupBy names the label, and their
					// calibration entry says so.
					if v := r.Labels[name]; v != "" {
						k.Labels = setLabel(k.Labels, name, v)
					}
				}
				if r.Nodes > 1 {
					// W devices on several nodes exchange gradients over
					// the network, W on one over the node's links: two
					// groups, and two sets of the fit across counts.
					k.Labels = setLabel(k.Labels, benchlog.NodesLabel, strconv.Itoa(r.Nodes))
				}
				if v, ok := k.Labels["transport"]; ok && v == "" && r.Transport != "" {
					// --group-by transport splits by the record's own
					// transport where no label of that name says otherwise.
					k.Labels["transport"] = r.Transport
				}
				if r.Transport == "none" {
					// Workers that exchanged nothing (the engine's
					// independent workers) are a group of their own: their
					// step has no communication to fit across counts.
					k.Labels = setLabel(k.Labels, "transport", "none")
					if v := r.Labels[benchlog.InStep]; v != "" {
						// Workers kept in step over a transport wait for
						// each other every step: not the same group as
						// workers that run on as they will.
						k.Labels = setLabel(k.Labels, benchlog.InStep, v)
					}
				}
				g := groups[keyString(k)]
				if g == nil {
					g = &Group{Key: k}
					groups[keyString(k)] = g
				}
				if r.Kind == benchlog.KindOOM {
					if b := r.EffectiveGlobalBatch(); b > 0 {
						g.OOM = append(g.OOM, b)
					}
					continue
				}
				b := r.EffectiveGlobalBatch()
				if b < o.MinBatch {
					g.BelowMin++
					continue
				}
				g.Points = append(g.Points, Point{
					Batch: b, Throughput: r.Throughput(),
					Kind: r.Kind, Source: lg.Name, Line: line,
				})
			case benchlog.KindConvergence:
				addSteps(r, lg.Name, line)
			}
		}
	}
	for _, g := range groups {
		fitGroup(g, o.Settings)
		rep.Groups = append(rep.Groups, *g)
	}
	sort.Slice(rep.Groups, func(i, j int) bool { return lessKey(rep.Groups[i].Key, rep.Groups[j].Key) })
	for _, sg := range steps {
		fitSteps(sg, o.Settings)
		rep.Steps = append(rep.Steps, *sg)
	}
	sort.Slice(rep.Steps, func(i, j int) bool {
		a, b := rep.Steps[i], rep.Steps[j]
		return cmp.Or(cmp.Compare(a.Model, b.Model), cmp.Compare(a.Target, b.Target), cmp.Compare(calib.LabelString(a.Labels), calib.LabelString(b.Labels))) < 0
	})
	rep.Comm = fitComm(rep.Groups, o.GradientSize, o.Settings)
	if len(rep.Runs) == 0 && len(rep.Steps) == 0 && len(rep.Collectives) == 0 && !hasPoints(rep.Groups) {
		below := 0
		for _, g := range rep.Groups {
			below += g.BelowMin
		}
		if below > 0 {
			return nil, fmt.Errorf("%w: the %d throughput measurements are all under the minimum batch %d", ErrNoData, below, o.MinBatch)
		}
		return nil, ErrNoData
	}
	return rep, nil
}

func hasPoints(gs []Group) bool {
	for _, g := range gs {
		if len(g.Points) > 0 {
			return true
		}
	}
	return false
}

// fitGroup fits the law to a group's points.
func fitGroup(g *Group, s *Settings) {
	slices.Sort(g.OOM)
	g.OOM = slices.Compact(g.OOM)
	hasMeasurement := false
	for _, p := range g.Points {
		hasMeasurement = hasMeasurement || p.Kind == benchlog.KindMeasurement
	}
	if hasMeasurement {
		kept := g.Points[:0]
		for _, p := range g.Points {
			if p.Kind == benchlog.KindStep {
				g.Ignored++
				continue
			}
			kept = append(kept, p)
		}
		g.Points = kept
	}
	for i := range g.Points {
		g.Points[i].Fitted, g.Points[i].Residual, g.Points[i].Z = math.NaN(), math.NaN(), math.NaN()
	}
	if len(g.Points) == 0 {
		g.Err = errors.New("no throughput measurements (only out-of-memory records)")
		if g.BelowMin > 0 {
			g.Err = fmt.Errorf("no throughput measurement at or above the minimum batch (%d under it)", g.BelowMin)
		}
		return
	}
	b := make([]float64, len(g.Points))
	v := make([]float64, len(g.Points))
	for i, p := range g.Points {
		b[i], v[i] = float64(p.Batch), p.Throughput
	}
	f, err := Throughput(b, v, s)
	if err != nil {
		g.Err = err
		return
	}
	if err := finiteLaw(f); err != nil {
		g.Err = err
		return
	}
	g.Fit = f
	for i := range g.Points {
		p := &g.Points[i]
		p.Fitted, p.Residual, p.Z, p.Excluded = f.Fitted[i], f.Residuals[i], f.Z[i], f.Excluded[i]
	}
}

// fitSteps fits the steps curve to the reached points of a group.
func fitSteps(sg *StepsGroup, s *Settings) {
	var b, st []float64
	var idx []int
	for i, p := range sg.Points {
		sg.Points[i].Fitted, sg.Points[i].Residual, sg.Points[i].Z = math.NaN(), math.NaN(), math.NaN()
		if p.Reached {
			b = append(b, float64(p.Batch))
			st = append(st, float64(p.Steps))
			idx = append(idx, i)
			sg.MaxReached = max(sg.MaxReached, p.Batch)
		}
	}
	if len(b) == 0 {
		sg.Err = fmt.Errorf("no batch reached the target (%d runs)", len(sg.Points))
		return
	}
	f, err := Steps(b, st, s)
	if err == nil && (!finite(f.SMin) || !finite(f.BNoise)) {
		err = fmt.Errorf("the fit gives S_min = %v, B_noise = %v: want finite values", f.SMin, f.BNoise)
	}
	if err != nil {
		sg.Err = fmt.Errorf("batches that reached the target: %w", err)
		return
	}
	sg.Fit = f
	for j, i := range idx {
		p := &sg.Points[i]
		p.Residual, p.Z, p.Excluded = f.Residuals[j], f.Z[j], f.Excluded[j]
	}
	for i := range sg.Points {
		p := &sg.Points[i]
		p.Fitted = f.Predict(float64(p.Batch))
		p.Regime = f.Regime(float64(p.Batch))
	}
}

// fitComm fits t across device counts for every set of groups that differ
// only in their count.
func fitComm(groups []Group, gradient units.Bytes, s *Settings) []CommGroup {
	type set struct {
		cg CommGroup
		gs []*Group
	}
	sets := map[string]*set{}
	var order []string
	for i := range groups {
		g := &groups[i]
		if g.Fit == nil || g.Key.Devices < 1 {
			continue
		}
		k := g.Key
		k.Devices = 0
		ks := keyString(k)
		st := sets[ks]
		if st == nil {
			st = &set{cg: CommGroup{Model: k.Model, Device: k.Device, Precision: k.Precision, Labels: k.Labels}}
			sets[ks] = st
			order = append(order, ks)
		}
		st.gs = append(st.gs, g)
	}
	var out []CommGroup
	for _, ks := range order {
		st := sets[ks]
		if len(st.gs) < 2 {
			continue
		}
		sort.Slice(st.gs, func(i, j int) bool { return st.gs[i].Key.Devices < st.gs[j].Key.Devices })
		p := make([]int, len(st.gs))
		t := make([]units.Seconds, len(st.gs))
		se := make([]units.Seconds, len(st.gs))
		for i, g := range st.gs {
			p[i], t[i] = g.Key.Devices, g.Fit.T
			se[i] = units.Seconds(math.Sqrt(g.Fit.Cov[1][1]))
		}
		st.cg.Fit, st.cg.Err = Comm(p, t, se, gradient, s)
		out = append(out, st.cg)
	}
	return out
}

// setLabel sets name to v in labels, a key's own map (pick builds a new
// one), making it when there is none, and returns it.
func setLabel(labels map[string]string, name, v string) map[string]string {
	if labels == nil {
		labels = map[string]string{}
	}
	labels[name] = v
	return labels
}

// checkGroupBy returns an error naming a label of names that no record of
// lgs has, and the labels they have: a misspelt label would split
// nothing and say nothing. A record's transport (benchlog.Record.Transport)
// counts as its label "transport".
func checkGroupBy(lgs []*logs.Log, names []string) error {
	have := map[string]bool{}
	for _, lg := range lgs {
		for _, r := range lg.Records {
			for k := range r.Labels {
				have[k] = true
			}
			if r.Transport != "" {
				have["transport"] = true
			}
		}
	}
	for _, name := range names {
		if name == "" {
			return errors.New("group-by: an empty label name")
		}
		if have[name] {
			continue
		}
		if len(have) == 0 {
			return fmt.Errorf("group-by %q: the records of these logs have no labels", name)
		}
		return fmt.Errorf("group-by: %s", config.Unknown("label", name, slices.Sorted(maps.Keys(have))))
	}
	return nil
}

// pick returns the labels of names, "" for those missing; nil without names.
func pick(labels map[string]string, names []string) map[string]string {
	if len(names) == 0 {
		return nil
	}
	m := make(map[string]string, len(names))
	for _, n := range names {
		m[n] = labels[n]
	}
	return m
}

func keyString(k Key) string {
	return strings.Join([]string{k.Model, k.Device, strconv.Itoa(k.Devices), k.Precision, calib.LabelString(k.Labels)}, "\x00")
}

func lessKey(a, b Key) bool {
	return cmp.Or(
		cmp.Compare(a.Model, b.Model),
		cmp.Compare(a.Device, b.Device),
		cmp.Compare(a.Devices, b.Devices),
		cmp.Compare(a.Precision, b.Precision),
		cmp.Compare(calib.LabelString(a.Labels), calib.LabelString(b.Labels)),
	) < 0
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// finiteLaw returns an error for a fit whose v0 or t is not finite: the
// readers' bounds keep the points finite, and a law that is not would
// calibrate the simulator with infinities.
func finiteLaw(f *ThroughputFit) error {
	if !finite(f.V0) || !finite(float64(f.T)) {
		return fmt.Errorf("the fit gives v0 = %v samples/s, t = %v s: want finite values", f.V0, float64(f.T))
	}
	return nil
}

// ErrNoneFitted is returned, wrapped, by Report.NoneFitted.
var ErrNoneFitted = errors.New("no group could be fitted")

// NoneFitted returns an error saying why each group failed when the
// report has groups (throughput, steps-to-target or collective tests)
// and not one of them could be fitted; nil when one was, or there are
// none. A collective test fitted to its latency alone (ErrLatencyOnly)
// counts as fitted.
func (r *Report) NoneFitted() error {
	var why []string
	for _, g := range r.Groups {
		if g.Fit != nil {
			return nil
		}
		why = append(why, fmt.Sprintf("throughput group %v: %v", g.Key, g.Err))
	}
	for _, s := range r.Steps {
		if s.Fit != nil {
			return nil
		}
		why = append(why, fmt.Sprintf("steps-to-target curve of %s: %v", cmp.Or(s.Model, "?"), s.Err))
	}
	for _, c := range r.Collectives {
		if c.Err == nil || errors.Is(c.Err, ErrLatencyOnly) {
			return nil
		}
		why = append(why, fmt.Sprintf("collective test of %s, line %d: %v", c.Source, c.Line, c.Err))
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("%w:\n  %s", ErrNoneFitted, strings.Join(why, "\n  "))
}
