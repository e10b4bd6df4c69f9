package validate

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	"gonum.org/v1/gonum/stat"

	"scaleplan/hw"
	"scaleplan/internal/config"
	"scaleplan/internal/units"
	"scaleplan/predict"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

//go:embed cases.yaml
var builtinCases []byte

// The metrics a validation case compares.
const (
	// TimeToTrain is predict.Row.Time: steps × step time + overheads, seconds.
	TimeToTrain = "time_to_train"
	// SamplesPerSecond is the simulated global throughput, samples/s.
	SamplesPerSecond = "samples_per_second"
	// StepTime is the simulated steady-state step time, seconds.
	StepTime = "step_time"
	// EpochTime is ⌈training samples / global batch⌉ · step time, seconds:
	// one pass over the data set without overheads.
	EpochTime = "epoch_time"
	// V0 and T are the throughput law v = B/(B/v0 + t) fitted by the
	// regression 1/v = 1/v0 + t·(1/B) (gonum stat.LinearRegression) to the
	// simulated global throughput v at every per-device batch of the
	// scenario's sweep, B the global batch: samples/s and seconds.
	V0 = "v0"
	T  = "t"
)

// Metrics lists the metrics in the order the documentation gives them.
var Metrics = []string{TimeToTrain, SamplesPerSecond, StepTime, EpochTime, V0, T}

// The keys of Case.Set.
var setKeys = []string{"devices", "gpus", "ipus", "batch"}

// CaseFile is a list of validation cases, the YAML form:
//
//	cases:
//	  - name: tsubame3-caffe2-c-128
//	    scenario: tsubame3-resnet50-caffe2-verbs
//	    set: {gpus: 128}
//	    metric: time_to_train
//	    published: 5989 s
//	    source: seed 001, Table 2 (c)
//	    calibrated_by: [tsubame3-caffe2-c-1]
type CaseFile struct {
	Cases []Case `yaml:"cases"`
	// File is the file the cases were read from; relative scenario paths
	// are anchored at its directory. Default "".
	File string `yaml:"-"`
}

// Case is one published figure and the configuration that predicts it.
type Case struct {
	Name string `yaml:"name"` // unique; required
	// Scenario is a shipped scenario's name, a scenario file's path
	// (relative to the case file), or an inline scenario. Required.
	Scenario CaseScenario `yaml:"scenario"`
	// Set picks the configuration: devices (or gpus, ipus) and batch (per
	// device) replace the scenario's sweep. Default: the scenario's sweep,
	// which must then have one configuration (one device count for v0 and
	// t).
	Set map[string]int `yaml:"set"`
	// Metric is one of Metrics. Required.
	Metric string `yaml:"metric"`
	// Published is the published figure with its unit ("5989 s", "115.22
	// min"; a number of samples/s for samples_per_second and v0), or a
	// bound: "< 2 h", "<= 100 min", "> 1000". Required.
	Published string `yaml:"published"`
	Source    string `yaml:"source"` // where the figure is published; required
	URL       string `yaml:"url"`    // a link to the source; default ""

	// Calibrates marks a figure used to calibrate: it sets the parameters
	// listed in Fits and is left out of the error. Default false.
	Calibrates bool `yaml:"calibrates"`
	// Fits lists the parameters a calibrating case sets: v0 (the compute
	// calibration's ideal throughput, solved so that the prediction
	// matches the figure) and t (its cost time; from a t metric, or
	// together with v0 from this figure and With's). Required with
	// Calibrates.
	Fits []string `yaml:"fits"`
	// With names a second calibrating case of another configuration (a
	// batch or device count) whose figure, with this case's, sets v0 and
	// t together: both fit [v0, t] and name each other, and v0 (one
	// device's) and t are solved so that both predictions match their
	// figures. Default "".
	With string `yaml:"with"`
	// CalibratedBy names the calibrating cases whose fitted parameters
	// this case's prediction uses. Their scenarios must train the same
	// model at the same precision with the same framework on a device of
	// the same peak rate and memory bandwidth (v0 is one device's
	// throughput on one model): the same scenario, or another such as the
	// same GPU in another vendor's server. Default none.
	CalibratedBy []string `yaml:"calibrated_by"`
	// Tuned names the parameters that were chosen with this figure in
	// view, so that its error is a consistency check rather than a
	// prediction: left out of the main error, counted in the second.
	// Default "" (none).
	Tuned string `yaml:"tuned"`
	Note  string `yaml:"note"` // free text; default ""
	// Epochs replaces the scenario's steps to target with the epochs law
	// fitted to MLPerf history without the case's round (time_to_train
	// only). Default nil: the scenario's.
	Epochs *CaseEpochs `yaml:"epochs"`
}

// CaseScenario is a case's scenario: a reference or an inline scenario.
type CaseScenario struct {
	Ref    string     // a shipped name or a path; "" when inline
	Inline *yaml.Node // the inline scenario mapping; nil for a reference
}

// UnmarshalYAML reads a scalar reference or an inline mapping.
func (s *CaseScenario) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		s.Ref = n.Value
		return nil
	case yaml.MappingNode:
		s.Inline = n
		return nil
	}
	return fmt.Errorf("line %d: scenario: want a scenario's name, a path or an inline scenario", n.Line)
}

// MarshalYAML writes the reference or the inline mapping.
func (s CaseScenario) MarshalYAML() (any, error) {
	if s.Inline != nil {
		return s.Inline, nil
	}
	return s.Ref, nil
}

// String returns the reference, or "inline".
func (s CaseScenario) String() string {
	if s.Inline != nil {
		return "inline"
	}
	return s.Ref
}

// Published is a parsed published figure.
type Published struct {
	// Value is the figure in the metric's unit: seconds, or samples/s.
	Value float64
	// Bound is "<", "<=", ">" or ">=" for a bound, "" for a value.
	Bound string
}

// ParsePublished reads a published figure of metric: an optional bound
// ("<", "<=", "≤", ">", ">=", "≥"), then a duration with its unit for
// time metrics, or a number optionally followed by "samples/s" or
// "images/s" for throughputs.
func ParsePublished(metric, s string) (Published, error) {
	var p Published
	t := strings.TrimSpace(s)
	for _, b := range []struct{ in, out string }{{"<=", "<="}, {"≤", "<="}, {">=", ">="}, {"≥", ">="}, {"<", "<"}, {">", ">"}} {
		if rest, ok := strings.CutPrefix(t, b.in); ok {
			p.Bound, t = b.out, strings.TrimSpace(rest)
			break
		}
	}
	switch metric {
	case TimeToTrain, StepTime, EpochTime, T:
		v, err := units.ParseSeconds(t)
		if err != nil {
			return p, err
		}
		p.Value = float64(v)
	case SamplesPerSecond, V0:
		for _, suf := range []string{"samples/s", "images/s", "img/s", "/s"} {
			if rest, ok := strings.CutSuffix(t, suf); ok {
				t = strings.TrimSpace(rest)
				break
			}
		}
		v, err := strconv.ParseFloat(t, 64)
		if err != nil {
			return p, fmt.Errorf("%q is not a number of samples/s", s)
		}
		p.Value = v
	default:
		return p, errors.New(config.Unknown("metric", metric, Metrics))
	}
	if !(p.Value > 0) || math.IsInf(p.Value, 0) {
		return p, fmt.Errorf("%q: the figure must be a finite number > 0", s)
	}
	return p, nil
}

// Holds reports whether x satisfies the bound; for a value it is true.
func (p Published) Holds(x float64) bool {
	switch p.Bound {
	case "<":
		return x < p.Value
	case "<=":
		return x <= p.Value
	case ">":
		return x > p.Value
	case ">=":
		return x >= p.Value
	}
	return true
}

// BuiltinCases returns the validation cases shipped with scaleplan: every
// figure of SEEDS.md that a scenario can predict, and published MLPerf
// Training results of the catalogue's systems (docs/validation.md lists
// them with their sources).
func BuiltinCases() *CaseFile {
	f, err := ReadCases(bytes.NewReader(builtinCases), "validate/cases.yaml")
	if err != nil {
		panic("validate: the embedded validation cases are invalid: " + err.Error())
	}
	return f
}

// dir returns the directory that the case file's relative paths are
// taken from: the file's own, or "" (the working directory) for the
// built-in cases, whose scenarios and tables are embedded.
func (f *CaseFile) dir() string {
	if f.File == "" || strings.HasPrefix(f.File, "validate/") {
		return ""
	}
	return filepath.Dir(f.File)
}

// ReadCasesFile reads the case file at path, through config.MaxFileSize.
func ReadCasesFile(path string) (*CaseFile, error) {
	data, err := config.ReadFile(path, "case file")
	if err != nil {
		return nil, err
	}
	return ReadCases(bytes.NewReader(data), path)
}

// ReadCases reads a case file strictly and checks every case, reporting
// every problem at once with its line; file names it in errors.
func ReadCases(r io.Reader, file string) (*CaseFile, error) {
	var f CaseFile
	root, err := config.Decode(r, &f)
	if err != nil {
		return nil, config.InFile(file, err)
	}
	f.File = file
	var ps config.Problems
	if len(f.Cases) == 0 {
		ps.Addf("cases", "no cases")
	}
	byName := map[string]int{}
	for i, c := range f.Cases {
		if c.Name == "" {
			continue
		}
		if j, dup := byName[c.Name]; dup {
			ps.Addf(fmt.Sprintf("cases[%d].name", i), "%q is the name of cases[%d] too", c.Name, j)
			continue
		}
		byName[c.Name] = i
	}
	for i := range f.Cases {
		f.check(i, byName, &ps)
	}
	if ps.Err() == nil {
		visit := map[int]visitState{}
		for i := range f.Cases {
			if cyc := f.cycle(i, byName, visit); cyc != "" {
				ps.Addf(fmt.Sprintf("cases[%d].calibrated_by", i), "calibration cycle: %s", cyc)
				break
			}
		}
	}
	if ps.Err() != nil {
		ps.Locate(root)
		return nil, config.InFile(file, &ps)
	}
	return &f, nil
}

// check adds the problems of case i to ps.
func (f *CaseFile) check(i int, byName map[string]int, ps *config.Problems) {
	c := &f.Cases[i]
	p := fmt.Sprintf("cases[%d]", i)
	if c.Name == "" {
		ps.Addf(p+".name", "required")
	}
	if c.Scenario.Ref == "" && c.Scenario.Inline == nil {
		ps.Addf(p+".scenario", "required: a shipped scenario's name, a path or an inline scenario")
	}
	if c.Source == "" {
		ps.Addf(p+".source", "required: say where the figure is published")
	}
	if !slices.Contains(Metrics, c.Metric) {
		ps.Addf(p+".metric", "%s", config.Unknown("metric", c.Metric, Metrics))
	}
	var pub Published
	if c.Published == "" {
		ps.Addf(p+".published", "required")
	} else if slices.Contains(Metrics, c.Metric) {
		var err error
		if pub, err = ParsePublished(c.Metric, c.Published); err != nil {
			ps.Addf(p+".published", "%v", err)
		}
	}
	devKeys := 0
	for k, v := range c.Set {
		if !slices.Contains(setKeys, k) {
			ps.Addf(p+".set", "%s", config.Unknown("key", k, setKeys))
			continue
		}
		if k != "batch" {
			devKeys++
		}
		if v <= 0 || v > sim.MaxRanks {
			ps.Addf(p+".set."+k, "must be in [1, %d], got %d", sim.MaxRanks, v)
		}
	}
	if devKeys > 1 {
		ps.Addf(p+".set", "give the device count once (devices, gpus or ipus)")
	}
	if _, ok := c.Set["batch"]; ok && (c.Metric == V0 || c.Metric == T) {
		ps.Addf(p+".set.batch", "v0 and t are fitted over the sweep's batches; do not set one")
	}
	if c.Calibrates {
		if pub.Bound != "" {
			ps.Addf(p+".published", "a bound cannot calibrate")
		}
		if len(c.Fits) == 0 {
			ps.Addf(p+".fits", "a calibrating case must say which parameters it sets (v0, t)")
		}
		if c.Tuned != "" {
			ps.Addf(p+".tuned", "a calibrating case is left out of the error already")
		}
	} else if len(c.Fits) > 0 {
		ps.Addf(p+".fits", "only a calibrating case (calibrates: true) sets parameters")
	}
	f.checkWith(i, byName, ps)
	checkEpochs(c, p, ps)
	for _, fit := range c.Fits {
		switch {
		case fit == T && c.Metric != T && c.With == "":
			ps.Addf(p+".fits", "t is set only by a case whose metric is t, not %s, or with v0 from two figures (with)", c.Metric)
		case fit == V0 && c.Metric == T:
			ps.Addf(p+".fits", "a t figure cannot set v0")
		case fit != V0 && fit != T:
			ps.Addf(p+".fits", "%s", config.Unknown("parameter", fit, []string{V0, T}))
		}
	}
	for _, name := range c.CalibratedBy {
		j, ok := byName[name]
		if !ok {
			var names []string
			for n := range byName {
				names = append(names, n)
			}
			slices.Sort(names)
			ps.Addf(p+".calibrated_by", "%s", config.Unknown("case", name, names))
			continue
		}
		o := &f.Cases[j]
		if !o.Calibrates {
			ps.Addf(p+".calibrated_by", "case %q does not calibrate (calibrates: false)", name)
		}
	}
}

// checkWith checks a case that fits v0 and t with a second figure: both
// cases calibrate, fit [v0, t] and name each other.
func (f *CaseFile) checkWith(i int, byName map[string]int, ps *config.Problems) {
	c := &f.Cases[i]
	if c.With == "" {
		return
	}
	p := fmt.Sprintf("cases[%d].with", i)
	if !c.Calibrates || !slices.Contains(c.Fits, V0) || !slices.Contains(c.Fits, T) {
		ps.Addf(p, "only a calibrating case with fits: [v0, t] takes a second figure")
	}
	if c.Metric == V0 || c.Metric == T {
		ps.Addf(p, "a %s figure sets its parameter alone", c.Metric)
	}
	j, ok := byName[c.With]
	switch {
	case !ok:
		ps.Addf(p, "no case named %q", c.With)
	case j == i:
		ps.Addf(p, "names the case itself; name the case of the second figure")
	default:
		o := &f.Cases[j]
		if !o.Calibrates || o.With != c.Name {
			ps.Addf(p, "case %q must calibrate too (calibrates: true, fits: [v0, t]) and name %q in its with", c.With, c.Name)
		}
	}
}

// visitState marks a case during the search for calibration cycles.
type visitState int8

const (
	unvisited visitState = iota
	onPath               // on the path being searched
	acyclic              // searched: no cycle is reachable from it
)

// cycle returns a description of a calibration cycle reachable from case
// i, or "". It is a depth-first search that marks every case it finishes
// in visit, so that each case is searched once however many cases name it:
// linear in the cases and their calibrated_by entries.
func (f *CaseFile) cycle(i int, byName map[string]int, visit map[int]visitState) string {
	switch visit[i] {
	case onPath:
		return f.Cases[i].Name
	case acyclic:
		return ""
	}
	visit[i] = onPath
	for _, name := range f.Cases[i].CalibratedBy {
		if s := f.cycle(byName[name], byName, visit); s != "" {
			return f.Cases[i].Name + " → " + s
		}
	}
	visit[i] = acyclic
	return ""
}

// Params are calibration parameters fitted by calibrating cases.
type Params struct {
	V0      float64       // ideal throughput of Devices devices, samples/s; 0 unset
	T       units.Seconds // cost time, seconds; meaningful when HasT
	Devices int           // the device count V0 was measured on
	HasT    bool          // whether T is set
}

// merge sets the parameters o sets.
func (p *Params) merge(o Params) {
	if o.V0 > 0 {
		p.V0, p.Devices = o.V0, o.Devices
	}
	if o.HasT {
		p.T, p.HasT = o.T, true
	}
}

// String lists the set parameters: "v0 = 190.6 samples/s on 1 device".
func (p Params) String() string {
	var parts []string
	if p.V0 > 0 {
		dev := "devices"
		if p.Devices == 1 {
			dev = "device"
		}
		parts = append(parts, fmt.Sprintf("v0 = %s samples/s on %d %s", predict.Rate(p.V0), p.Devices, dev))
	}
	if p.HasT {
		parts = append(parts, "t = "+p.T.String())
	}
	return strings.Join(parts, ", ")
}

// CaseResult is the outcome of one case.
type CaseResult struct {
	Case      *Case     // the case
	Published Published // its parsed published figure
	// Predicted is the prediction in the metric's unit (seconds or
	// samples/s); NaN when Err is set.
	Predicted float64
	// Error is the relative error (Predicted − Published)/Published of a
	// value; for a bound, 0 when it holds and the relative distance past
	// it otherwise.
	Error float64
	// Fitted are the parameters a calibrating case set; zero otherwise.
	Fitted Params
	// Used are the parameters of its calibrated_by cases it used.
	Used Params
	// Devices is the accelerators of a time-to-train case that counts
	// epochs by the law (Case.Epochs); 0 otherwise.
	Devices int
	Err     error // the case could not be predicted
}

// Role returns "calibrates v0", "tuned", "bound" or "prediction".
func (r *CaseResult) Role() string {
	switch {
	case r.Case.Calibrates:
		return "calibrates " + strings.Join(r.Case.Fits, ", ")
	case r.Published.Bound != "":
		return "bound"
	case r.Case.Tuned != "":
		return "tuned"
	}
	return "prediction"
}

// Independent reports whether the case counts in Report.MAE: a value,
// predicted without calibrating on it and without parameters tuned with
// it in view.
func (r *CaseResult) Independent() bool {
	return r.Err == nil && !r.Case.Calibrates && r.Case.Tuned == "" && r.Published.Bound == ""
}

// Report is the outcome of a validation.
type Report struct {
	// Results holds one result per case, in the file's order.
	Results []CaseResult
	// MAE is the mean absolute relative error over the independent cases
	// (neither calibrating nor tuned, not bounds), N of them.
	MAE float64
	N   int
	// MAETuned includes the tuned cases, NTuned of them.
	MAETuned float64
	NTuned   int
	// Bounds and BoundsHeld count the bound cases and those that hold.
	Bounds, BoundsHeld int
	// Failed counts the cases that could not be predicted.
	Failed int
	// Worst is the independent case with the largest absolute error; nil
	// when there is none.
	Worst *CaseResult
	// Sizes are the errors of the independent time-to-train cases that
	// count epochs by the law (Case.Epochs: MLPerf's), by accelerators
	// (SizeBuckets); Scale is the same over all of them.
	Sizes []SizeBucket
	Scale SizeBucket
}

// SizeBucket is the error over the independent MLPerf time-to-train
// cases whose accelerators lie in [Min, Max] (Max 0: no upper end).
type SizeBucket struct {
	Min, Max int
	// N counts the cases; MAE is their mean absolute relative error and
	// Bias their mean signed one (a fraction; positive: predicted slow).
	N         int
	MAE, Bias float64
}

// SizeBuckets are the accelerator ranges issue 48 judges MLPerf's time
// to train by: 64 to 128, 129 to 512 and above 512.
var SizeBuckets = [][2]int{{64, 128}, {129, 512}, {513, 0}}

// add counts a case of relative error e.
func (b *SizeBucket) add(e float64) {
	b.MAE = (b.MAE*float64(b.N) + math.Abs(e)) / float64(b.N+1)
	b.Bias = (b.Bias*float64(b.N) + e) / float64(b.N+1)
	b.N++
}

// sizes fills rep.Sizes and rep.Scale from its independent results that
// count epochs by the law and have a device count.
func (rep *Report) sizes() {
	rep.Sizes = make([]SizeBucket, len(SizeBuckets))
	for i, b := range SizeBuckets {
		rep.Sizes[i].Min, rep.Sizes[i].Max = b[0], b[1]
	}
	rep.Scale.Min = SizeBuckets[0][0]
	for i := range rep.Results {
		r := &rep.Results[i]
		if r.Err != nil || r.Case.Epochs == nil || !r.Independent() || r.Devices < rep.Scale.Min {
			continue
		}
		rep.Scale.add(r.Error)
		for j := range rep.Sizes {
			if b := &rep.Sizes[j]; r.Devices >= b.Min && (b.Max == 0 || r.Devices <= b.Max) {
				b.add(r.Error)
			}
		}
	}
}

// Options controls a validation.
type Options struct {
	Scenario scenarios.Options // extra catalogue and profile files
	Predict  predict.Options   // simulation
}

// CompareCases predicts every case of f and compares it with its published
// figure. Calibrating cases are evaluated first and set their parameters
// (Case.Fits) from their own figure; a case that lists them in
// CalibratedBy predicts with those parameters. A case that cannot be
// predicted is reported with its error and counted in Report.Failed.
func CompareCases(f *CaseFile, opt Options) *Report {
	v := &validator{f: f, opt: opt, done: map[int]*CaseResult{}, byName: map[string]int{}, kinds: map[*Case]computeKind{}, pairs: map[[2]int]pairFit{}}
	for i, c := range f.Cases {
		v.byName[c.Name] = i
	}
	rep := &Report{Results: make([]CaseResult, len(f.Cases))}
	for i := range f.Cases {
		rep.Results[i] = *v.eval(i)
	}
	var sum, sumT float64
	for i := range rep.Results {
		r := &rep.Results[i]
		switch {
		case r.Err != nil:
			rep.Failed++
		case r.Published.Bound != "":
			rep.Bounds++
			if r.Error == 0 {
				rep.BoundsHeld++
			}
		case r.Independent():
			sum += math.Abs(r.Error)
			rep.N++
			if rep.Worst == nil || math.Abs(r.Error) > math.Abs(rep.Worst.Error) {
				rep.Worst = r
			}
			fallthrough
		case !r.Case.Calibrates:
			sumT += math.Abs(r.Error)
			rep.NTuned++
		}
	}
	if rep.N > 0 {
		rep.MAE = sum / float64(rep.N)
	}
	if rep.NTuned > 0 {
		rep.MAETuned = sumT / float64(rep.NTuned)
	}
	rep.sizes()
	return rep
}

// Exceeds reports whether the report fails a limit on the mean absolute
// error (a fraction: 0.15 for 15 %): its MAE is larger, a bound does not
// hold, or a case could not be predicted.
func (rep *Report) Exceeds(maxErr float64) bool {
	return rep.MAE > maxErr || rep.BoundsHeld < rep.Bounds || rep.Failed > 0
}

type validator struct {
	f      *CaseFile
	opt    Options
	byName map[string]int
	done   map[int]*CaseResult
	kinds  map[*Case]computeKind // resolved once per case (carries)
	pairs  map[[2]int]pairFit    // v0 and t of two figures, by their cases in order
}

// pairFit is the outcome of fitPair, shared by its two cases.
type pairFit struct {
	p   Params
	err error
}

// eval evaluates case i once, after the cases it is calibrated by.
func (v *validator) eval(i int) *CaseResult {
	if r, ok := v.done[i]; ok {
		return r
	}
	c := &v.f.Cases[i]
	res := &CaseResult{Case: c, Predicted: math.NaN()}
	v.done[i] = res
	var err error
	if res.Published, err = ParsePublished(c.Metric, c.Published); err != nil {
		res.Err = err
		return res
	}
	for _, name := range c.CalibratedBy {
		o := v.eval(v.byName[name])
		if o.Err != nil {
			res.Err = fmt.Errorf("calibrating case %q failed: %w", name, o.Err)
			return res
		}
		if err := v.carries(&v.f.Cases[v.byName[name]], c); err != nil {
			res.Err = err
			return res
		}
		res.Used.merge(o.Fitted)
	}
	params := res.Used
	if c.Calibrates && c.With != "" {
		fitted, err := v.fitPair(i, v.byName[c.With], params)
		if err != nil {
			res.Err = fmt.Errorf("calibrating with %s: %w", c.With, err)
			return res
		}
		res.Fitted = fitted
		params.merge(fitted)
	} else if c.Calibrates {
		fitted, err := v.fit(c, res.Published, params)
		if err != nil {
			res.Err = fmt.Errorf("calibrating: %w", err)
			return res
		}
		res.Fitted = fitted
		params.merge(fitted)
	}
	res.Predicted, _, err = v.metric(c, params)
	if err == nil && c.Epochs != nil {
		res.Devices, err = v.devices(c, params)
	}
	if err != nil {
		res.Err = err
		return res
	}
	res.Error = res.Predicted/res.Published.Value - 1
	if res.Published.Bound != "" {
		if res.Published.Holds(res.Predicted) {
			res.Error = 0
		}
	}
	return res
}

// computeKind is what a compute calibration is a measurement of.
type computeKind struct {
	model, framework, precision string
	peak                        units.FLOPsPerSec
	bandwidth                   units.BytesPerSec
}

func (k computeKind) String() string {
	return fmt.Sprintf("%s in %s at %s on a device of %v peak and %v memory bandwidth", k.model, k.framework, k.precision, k.peak, k.bandwidth)
}

// kind resolves c's scenario, once, and returns what its compute
// calibration measures.
func (v *validator) kind(c *Case) (computeKind, error) {
	if k, ok := v.kinds[c]; ok {
		return k, nil
	}
	r, err := v.load(c, Params{})
	if err != nil {
		return computeKind{}, err
	}
	k := computeKind{r.Mdl.Name, r.Framework, r.Precision, r.Device.PeakFLOPs(hw.Precision(r.Precision)), r.Device.MemoryBandwidth}
	v.kinds[c] = k
	return k, nil
}

// carries returns an error unless the parameters of calibrating case cal
// apply to case c: the same scenario, or scenarios of the same
// computeKind.
func (v *validator) carries(cal, c *Case) error {
	if cal.Scenario.Inline == nil && c.Scenario.Inline == nil && cal.Scenario.Ref == c.Scenario.Ref {
		return nil
	}
	a, err := v.kind(cal)
	if err != nil {
		return fmt.Errorf("calibrating case %q: %w", cal.Name, err)
	}
	b, err := v.kind(c)
	if err != nil {
		return err
	}
	if a != b {
		return fmt.Errorf("the calibration of case %q (%v) does not carry over to scenario %s (%v): v0 is one device's throughput on one model", cal.Name, a, c.Scenario, b)
	}
	return nil
}

// devices returns the case's device count and the set key that gives it,
// 0 and "" if it sets none.
func (c *Case) devices() (int, string) {
	for _, k := range []string{"devices", "gpus", "ipus"} {
		if n, ok := c.Set[k]; ok {
			return n, k
		}
	}
	return 0, ""
}

// overrides returns what the case's set changes in its scenario and where
// each value comes from, for scenarios.Options.Overrides, added to base.
func (c *Case) overrides(base map[string]string) map[string]string {
	m := maps.Clone(base)
	if m == nil {
		m = map[string]string{}
	}
	if n, k := c.devices(); n > 0 {
		m["sweep.devices"] = fmt.Sprintf("case %s set.%s", c.Name, k)
	}
	if _, ok := c.Set["batch"]; ok {
		m["sweep.batch"] = fmt.Sprintf("case %s set.batch", c.Name)
		m["batch_per_device"] = m["sweep.batch"]
	}
	return m
}

// load resolves the case's scenario with its set and params applied.
func (v *validator) load(c *Case, params Params) (*scenarios.Resolved, error) {
	sopt := v.opt.Scenario
	user := sopt.Edit
	sopt.Overrides = c.overrides(sopt.Overrides)
	sopt.Edit = func(s *scenarios.Scenario) {
		if user != nil {
			user(s)
		}
		if n, _ := c.devices(); n > 0 {
			s.Sweep.Devices = []int{n}
		}
		if b, ok := c.Set["batch"]; ok {
			s.Sweep.Batch = []int{b}
			s.BatchPerDevice = b
		}
		if params.V0 > 0 || params.HasT {
			cal := &scenarios.Calibration{Devices: 1}
			if s.Calibration != nil {
				cp := *s.Calibration
				cal = &cp
			}
			if params.V0 > 0 {
				cal.File, cal.V0, cal.Devices = "", params.V0, params.Devices
			}
			if params.HasT {
				cal.T = params.T
			}
			cal.Source = "validation case calibration: " + params.String()
			s.Calibration = cal
		}
	}
	if in := c.Scenario.Inline; in != nil {
		data, err := yaml.Marshal(in)
		if err != nil {
			return nil, err
		}
		return scenarios.Parse(bytes.NewReader(data), v.f.File+": case "+c.Name, sopt)
	}
	ref, dir := c.Scenario.Ref, v.f.dir()
	if dir != "" && !slices.Contains(scenarios.Names(), ref) && !filepath.IsAbs(ref) {
		ref = filepath.Join(dir, ref)
	}
	r, err := scenarios.Load(ref, sopt)
	if err != nil || c.Epochs == nil {
		return r, err
	}
	if r.StepsToTarget, err = c.Epochs.epochsCurve(float64(r.Data.TrainSamples), dir); err != nil {
		return nil, err
	}
	return r, nil
}

// devices returns the accelerators of the case's one configuration.
func (v *validator) devices(c *Case, params Params) (int, error) {
	r, err := v.load(c, params)
	if err != nil {
		return 0, err
	}
	pts := r.Points()
	if len(pts) != 1 {
		return 0, fmt.Errorf("scenario %s has %d configurations; pick one with set: {devices: N, batch: B}", r.Name, len(pts))
	}
	return pts[0].Devices, nil
}

// metric predicts the case's metric with params. It also returns the
// part of a time to train that does not depend on compute (the
// overheads), 0 for the other metrics.
func (v *validator) metric(c *Case, params Params) (float64, float64, error) {
	nan := math.NaN()
	r, err := v.load(c, params)
	if err != nil {
		return nan, 0, err
	}
	pts := r.Points()
	if c.Metric == V0 || c.Metric == T {
		v0, t, err := fitLaw(r, pts, v.opt.Predict)
		if err != nil {
			return nan, 0, err
		}
		if c.Metric == V0 {
			return v0, 0, nil
		}
		return float64(t), 0, nil
	}
	if len(pts) != 1 {
		return nan, 0, fmt.Errorf("scenario %s has %d configurations; pick one with set: {devices: N, batch: B}", r.Name, len(pts))
	}
	row, err := predict.Evaluate(r, pts[0], v.opt.Predict)
	if err != nil {
		return nan, 0, err
	}
	if row.Err != nil {
		return nan, 0, row.Err
	}
	switch c.Metric {
	case TimeToTrain:
		return float64(row.Time), float64(row.Overheads()), nil
	case SamplesPerSecond:
		return row.Result.SamplesPerSec, 0, nil
	case StepTime:
		return float64(row.Result.StepTime), 0, nil
	case EpochTime:
		spe := r.Rcp.StepsPerEpoch(pts[0].GlobalBatch, int(r.Data.TrainSamples))
		return float64(spe) * float64(row.Result.StepTime), 0, nil
	}
	return nan, 0, errors.New(config.Unknown("metric", c.Metric, Metrics))
}

// fitLaw simulates every point of pts, which must share one device count
// and have at least two batches, and fits 1/v = 1/v0 + t·(1/B).
func fitLaw(r *scenarios.Resolved, pts []scenarios.Point, opt predict.Options) (float64, units.Seconds, error) {
	if len(pts) < 2 {
		return 0, 0, fmt.Errorf("scenario %s: fitting v0 and t needs two or more batches in its sweep, has %d", r.Name, len(pts))
	}
	x, y := make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		if p.Devices != pts[0].Devices {
			return 0, 0, fmt.Errorf("scenario %s: fitting v0 and t needs one device count; pick it with set: {devices: N}", r.Name)
		}
		row, err := predict.Evaluate(r, p, opt)
		if err != nil {
			return 0, 0, err
		}
		if row.Err != nil {
			return 0, 0, row.Err
		}
		x[i], y[i] = 1/float64(p.GlobalBatch), 1/row.Result.SamplesPerSec
	}
	a, b := stat.LinearRegression(x, y, nil, false)
	if !(a > 0) {
		return 0, 0, fmt.Errorf("scenario %s: the fitted 1/v0 = %g is not positive", r.Name, a)
	}
	return 1 / a, units.Seconds(b), nil
}

// fitPair returns one device's v0 and the cost time t that cases i and j
// (a case and its With) set together, solved once for both.
func (v *validator) fitPair(i, j int, start Params) (Params, error) {
	key := [2]int{min(i, j), max(i, j)}
	if r, ok := v.pairs[key]; ok {
		return r.p, r.err
	}
	p, err := v.solvePair(&v.f.Cases[key[0]], &v.f.Cases[key[1]], start)
	v.pairs[key] = pairFit{p, err}
	return p, err
}

// solvePair solves x = 1/v0 (one device's) and t so that the predictions
// of a and b, two configurations of one compute kind, both equal their
// figures. A device's step computes b/v0 + t and waits for what does not
// scale with them (the exchange, the input), so both residuals
// (prediction/figure − 1) are smooth and nearly linear in x and t:
// Newton's method, with the Jacobian by forward differences, takes a few
// steps from x scaled on a's figure at t = 0. The figures must differ in
// the batch per device, or nothing separates t from v0; a t < 0 (the
// smaller batch relatively faster than any fixed cost allows) is refused.
func (v *validator) solvePair(a, b *Case, start Params) (Params, error) {
	if err := v.carries(a, b); err != nil {
		return Params{}, err
	}
	cases := [2]*Case{a, b}
	var pub [2]float64
	for k, c := range cases {
		p, err := ParsePublished(c.Metric, c.Published)
		if err != nil {
			return Params{}, err
		}
		pub[k] = p.Value
	}
	at := func(x, t float64) Params {
		p := start
		p.V0, p.Devices, p.T, p.HasT = 1/x, 1, units.Seconds(t), true
		return p
	}
	resid := func(x, t float64) ([2]float64, error) {
		var r [2]float64
		for k, c := range cases {
			y, _, err := v.metric(c, at(x, t))
			if err != nil {
				return r, err
			}
			r[k] = y/pub[k] - 1
		}
		return r, nil
	}
	x, t := 0.01, 0.0
	for range 40 {
		r, err := resid(x, t)
		if err != nil {
			return Params{}, err
		}
		f := 1 + r[0] // a time grows with x, a rate shrinks
		if a.Metric == SamplesPerSecond {
			f = 1 / f
		}
		if !(f > 0) || math.IsInf(f, 0) {
			return Params{}, fmt.Errorf("cannot scale v0 to %s's %s", a.Name, a.Published)
		}
		if math.Abs(f-1) < 1e-6 {
			break
		}
		x /= f
	}
	const tol = 1e-9
	negative := 0
	for range 60 {
		r, err := resid(x, t)
		if err != nil {
			return Params{}, err
		}
		if math.Abs(r[0]) < tol && math.Abs(r[1]) < tol {
			return at(x, t), nil
		}
		hx, ht := x*1e-6, 1e-6*max(t, 1e-3)
		rx, err := resid(x+hx, t)
		if err != nil {
			return Params{}, err
		}
		rt, err := resid(x, t+ht)
		if err != nil {
			return Params{}, err
		}
		j00, j01 := (rx[0]-r[0])/hx, (rt[0]-r[0])/ht
		j10, j11 := (rx[1]-r[1])/hx, (rt[1]-r[1])/ht
		det := j00*j11 - j01*j10
		// Rows of one shape (the same batch per device) leave det at the
		// finite differences' noise.
		if !(math.Abs(det) > 1e-4*(math.Abs(j00*j11)+math.Abs(j01*j10))) || math.IsInf(det, 0) {
			return Params{}, fmt.Errorf("the figures of %s and %s do not separate v0 from t: give two batches per device", a.Name, b.Name)
		}
		dx := (r[0]*j11 - r[1]*j01) / det
		dt := (j00*r[1] - j10*r[0]) / det
		for x-dx <= 0 {
			dx /= 2
		}
		x, t = x-dx, t-dt
		if t < 0 {
			// Newton lands on a linear problem's root at once: twice
			// below zero is where the figures' root lies.
			if negative++; negative == 2 {
				return Params{}, fmt.Errorf("%s and %s need a negative cost time (t = %v): the smaller batch per device is relatively faster than a fixed cost allows", a.Name, b.Name, units.Seconds(t))
			}
			t = 0
		}
	}
	return Params{}, fmt.Errorf("no v0 and t reproduce both %s's %s and %s's %s", a.Name, a.Published, b.Name, b.Published)
}

// fit returns the parameters a calibrating case sets from its published
// figure pub, given the parameters it starts from.
func (v *validator) fit(c *Case, pub Published, start Params) (Params, error) {
	var out Params
	n, _ := c.devices()
	if n == 0 {
		n = 1
	}
	for _, f := range c.Fits {
		switch {
		case f == T:
			out.T, out.HasT = units.Seconds(pub.Value), true
		case f == V0 && c.Metric == V0:
			out.V0, out.Devices = pub.Value, n
		}
	}
	if !slices.Contains(c.Fits, V0) || c.Metric == V0 {
		return out, nil
	}
	// Solve for v0 so that the prediction equals the figure. Compute time
	// is b/v0 per sample, so a time scales as 1/v0 once the fixed
	// overheads are taken out; a few multiplicative steps converge.
	p := start
	p.merge(out)
	p.V0, p.Devices = 100*float64(n), n
	for range 30 {
		pred, fixed, err := v.metric(c, p)
		if err != nil {
			return out, err
		}
		ratio := pub.Value / pred
		if c.Metric != SamplesPerSecond {
			if !(pub.Value > fixed) {
				return out, fmt.Errorf("the published %s is not more than the fixed overheads (%v)", c.Published, units.Seconds(fixed))
			}
			ratio = (pred - fixed) / (pub.Value - fixed)
		}
		if math.Abs(pred/pub.Value-1) < 1e-12 {
			break
		}
		if !(ratio > 0) || math.IsInf(ratio, 0) {
			return out, fmt.Errorf("cannot solve for v0: prediction %g for published %g", pred, pub.Value)
		}
		p.V0 *= ratio
	}
	pred, _, err := v.metric(c, p)
	if err != nil {
		return out, err
	}
	if math.Abs(pred/pub.Value-1) > 1e-6 {
		return out, fmt.Errorf("v0 does not reach the published %s: the prediction stays at %g (is the configuration bound by something other than compute?)", c.Published, pred)
	}
	out.V0, out.Devices = p.V0, n
	return out, nil
}
