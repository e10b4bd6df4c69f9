package model

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"scaleplan/internal/config"
	"scaleplan/internal/units"
)

// Bounds that keep every count, and the products Steps forms from them,
// inside int64.
const (
	maxParams   = 1e15 // parameters of one model
	maxSamples  = 1e13 // samples of one dataset
	maxBatch    = 1e9  // samples of one batch
	maxDevices  = 1e7  // accelerators of one run
	maxSteps    = 1e9  // updates of one run
	maxEpochs   = 1e5  // epochs of one run
	maxAccum    = 1e6  // pipeline stages or accumulated micro-batches
	maxDim      = 1e7  // one dimension of an input shape
	maxUnitless = 1e12 // learning rates, factors and other plain numbers
)

// Plausible ranges of per-sample figures, bounds included. A value outside
// is a mistake (a unit typo, a subnormal number such as 5e-324) that the
// simulator would otherwise turn into absurd step times. Each holds the
// shipped profiles with a margin of at least 300 [shipped], except the
// efficiency's upper bound, which is its natural one.
var (
	flopsSpan = span{1, 1e18, "1 to 1e18 FLOPs", showFLOPs}     // forward_flops per sample [3.7 MFLOPs to 554 GFLOPs]
	bytesSpan = span{1, 1 << 40, "1 B to 1 TiB", showBytes}     // bytes_per_sample, activations.fp32 [4 B to 3 GB]
	fp16Span  = span{0.5, 1 << 40, "0.5 B to 1 TiB", showBytes} // activations.fp16, down to its default for the least fp32
	cpuSpan   = span{1e-9, 1e3, "1 ns to 1000 s", showSeconds}  // cpu_seconds_per_sample when not 0 [100 ns to 15 ms]
	effSpan   = span{1e-3, 1, "0.001 to 1", showPlain}          // efficiency when not 0 [0.1 to 0.4]
)

func showFLOPs(v float64) string   { return units.FLOPs(v).String() }
func showBytes(v float64) string   { return units.Bytes(v).String() }
func showSeconds(v float64) string { return units.Seconds(v).String() }
func showPlain(v float64) string   { return strconv.FormatFloat(v, 'g', -1, 64) }

// span is the range of a figure, as words for the error, and how the
// error prints a value.
type span struct {
	lo, hi float64
	words  string
	show   func(float64) string
}

// within reports a figure outside s (NaN and infinities included); zeroOK
// accepts 0, a figure not given.
func (c *checker) within(rest string, v float64, s span, zeroOK bool) {
	if zeroOK && v == 0 {
		return
	}
	if !(v >= s.lo && v <= s.hi) {
		or := ""
		if zeroOK {
			or = "0 or "
		}
		got := s.show(v)
		if len(got) > 24 { // past the unit's largest prefix: in base units
			got = showPlain(v)
			if one := s.show(1); strings.Contains(one, " ") {
				got += one[strings.LastIndex(one, " "):]
			}
		}
		c.addf(rest, "must be %swithin %s, got %s", or, s.words, got)
	}
}

// subnormal reports whether v is a nonzero number smaller in magnitude
// than the smallest normal float64 (2.2e-308), which no figure is.
func subnormal(v float64) bool { return v != 0 && math.Abs(v) < 0x1p-1022 }

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// issue is a problem with one entry: section is "datasets", "models" or
// "recipes", name the entry, rest the path inside it.
type issue struct {
	section, name, rest, msg string
}

type checker struct {
	issues []issue
	sec    string
	name   string

	// The dataset and model names, listed once, and the Suggester of
	// near names for unknown ones.
	datasets, models []string
	sug              config.Suggester
}

// unknownDataset is the message for an unknown dataset name in p.
func (c *checker) unknownDataset(p *Profiles, name string) string {
	if c.datasets == nil {
		c.datasets = p.DatasetNames()
	}
	return c.sug.Unknown("dataset", name, c.datasets)
}

// unknownModel is the message for an unknown model name in p.
func (c *checker) unknownModel(p *Profiles, name string) string {
	if c.models == nil {
		c.models = p.ModelNames()
	}
	return c.sug.Unknown("model", name, c.models)
}

func (c *checker) addf(rest, format string, args ...any) {
	c.issues = append(c.issues, issue{c.sec, c.name, rest, fmt.Sprintf(format, args...)})
}

func (c *checker) positiveInt(rest string, v int64, max float64) {
	switch {
	case v <= 0:
		c.addf(rest, "must be positive, got %d", v)
	case float64(v) > max:
		c.addf(rest, "%d is too large (at most %g)", v, max)
	}
}

func (c *checker) nonNegInt(rest string, v int64, max float64) {
	switch {
	case v < 0:
		c.addf(rest, "must not be negative, got %d", v)
	case float64(v) > max:
		c.addf(rest, "%d is too large (at most %g)", v, max)
	}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func (c *checker) nonNeg(rest string, v float64) {
	switch {
	case !finite(v):
		c.addf(rest, "must be a finite number, got %v", v)
	case v < 0:
		c.addf(rest, "must not be negative, got %v", v)
	case v > maxUnitless:
		c.addf(rest, "%v is too large", v)
	case subnormal(v):
		c.addf(rest, "%v is too small (0, or at least 2.2e-308)", v)
	}
}

func (c *checker) positive(rest string, v float64) {
	switch {
	case !finite(v):
		c.addf(rest, "must be a finite number, got %v", v)
	case v <= 0:
		c.addf(rest, "must be positive, got %v", v)
	case v > maxUnitless:
		c.addf(rest, "%v is too large", v)
	case subnormal(v):
		c.addf(rest, "%v is too small (at least 2.2e-308)", v)
	}
}

// fraction checks 0 <= v < 1.
func (c *checker) fraction(rest string, v float64) {
	if !finite(v) || v < 0 || v >= 1 {
		c.addf(rest, "must be in [0, 1), got %v", v)
	}
}

func validName(v string, valid []string) bool {
	for _, s := range valid {
		if v == s {
			return true
		}
	}
	return false
}

func (c *checker) oneOf(rest, kind, v string, valid []string) {
	for _, s := range valid {
		if v == s {
			return
		}
	}
	if v == "" {
		c.addf(rest, "missing %s (valid: %s)", kind, strings.Join(valid, ", "))
		return
	}
	c.addf(rest, "%s", config.Unknown(kind, v, valid))
}

// Validate checks every dataset, model and recipe and reports all problems
// at once, each with its YAML path (and file and line when the profiles
// came from YAML). Impossible values are errors: non-positive counts,
// batches and FLOPs, negative rates, a gradient layout that does not sum
// to the parameter count, an unknown optimizer or schedule, a target
// accuracy written as a percentage, a recipe naming a model or dataset
// that does not exist.
func (p *Profiles) Validate() error {
	c := &checker{}
	for _, name := range p.DatasetNames() {
		c.sec, c.name = "datasets", name
		if p.Datasets[name] == nil {
			c.addf("", "empty entry")
			continue
		}
		c.dataset(p.Datasets[name])
	}
	for _, name := range p.ModelNames() {
		c.sec, c.name = "models", name
		if p.Models[name] == nil {
			c.addf("", "empty entry")
			continue
		}
		c.model(p, p.Models[name])
	}
	for _, name := range p.RecipeNames() {
		c.sec, c.name = "recipes", name
		if p.Recipes[name] == nil {
			c.addf("", "empty entry")
			continue
		}
		c.recipe(p, p.Recipes[name])
	}
	return p.report(c.issues)
}

func (c *checker) checkName() {
	if !nameRE.MatchString(c.name) {
		c.addf("", "bad name %q: use letters, digits, '.', '_' and '-', starting with a letter or digit", c.name)
	}
}

func (c *checker) dataset(d *Dataset) {
	c.checkName()
	c.oneOf("sample_unit", "sample unit", string(d.SampleUnit), sampleUnits)
	c.positiveInt("train_samples", d.TrainSamples, maxSamples)
	c.nonNegInt("eval_samples", d.EvalSamples, maxSamples)
	c.within("bytes_per_sample", float64(d.BytesPerSample), bytesSpan, false)
	if len(d.InputShape) == 0 {
		c.addf("input_shape", "missing input shape")
	}
	for i, s := range d.InputShape {
		c.positiveInt(fmt.Sprintf("input_shape[%d]", i), int64(s), maxDim)
	}
	c.within("cpu_seconds_per_sample", float64(d.CPUSecondsPerSample), cpuSpan, true)
}

func (c *checker) model(p *Profiles, m *Model) {
	c.checkName()
	if strings.TrimSpace(m.Task) == "" {
		c.addf("task", "missing task")
	}
	if m.Dataset == "" {
		c.addf("dataset", "missing dataset")
	} else if _, ok := p.Datasets[m.Dataset]; !ok {
		c.addf("dataset", "%s", c.unknownDataset(p, m.Dataset))
	}
	c.positiveInt("params", m.Params, maxParams)
	c.nonNegInt("frozen_params", m.FrozenParams, maxParams)
	c.within("forward_flops", float64(m.ForwardFLOPs), flopsSpan, false)
	c.within("activations.fp32", float64(m.Activations.FP32), bytesSpan, false)
	c.within("activations.fp16", float64(m.Activations.FP16), fp16Span, true)
	c.within("activations.transient", float64(m.Activations.Transient), bytesSpan, true)
	c.oneOf("class", "class", string(m.Class), classes)
	c.within("efficiency", m.Efficiency, effSpan, true)
	if len(m.Layers) == 0 {
		return
	}
	var sum int64
	ok := true
	seen := map[string]int{}
	for i, l := range m.Layers {
		at := fmt.Sprintf("layers[%d]", i)
		if l.Name == "" {
			c.addf(at+".name", "missing layer name")
		} else if j, dup := seen[l.Name]; dup {
			c.addf(at+".name", "layer %q listed twice (also layers[%d])", l.Name, j)
		} else {
			seen[l.Name] = i
		}
		if l.Params <= 0 || float64(l.Params) > maxParams {
			c.positiveInt(at+".params", l.Params, maxParams)
			ok = false
			continue
		}
		sum += l.Params
	}
	if ok && m.Params > 0 && sum != m.Params {
		c.addf("layers", "layers sum to %d parameters, but params is %d (off by %+d)", sum, m.Params, sum-m.Params)
	}
}

func (c *checker) recipe(p *Profiles, r *Recipe) {
	c.checkName()
	for i, u := range r.Unknown {
		c.oneOf(fmt.Sprintf("unknown[%d]", i), "hyperparameter", u, unknownKeys)
	}
	var ds *Dataset
	m := p.Models[r.Model]
	if r.Model == "" {
		c.addf("model", "missing model")
	} else if m == nil {
		c.addf("model", "%s", c.unknownModel(p, r.Model))
	}
	if r.Dataset != "" {
		if d, ok := p.Datasets[r.Dataset]; ok && d != nil {
			ds = d
		} else {
			c.addf("dataset", "%s", c.unknownDataset(p, r.Dataset))
		}
	}
	if m != nil && ds != nil {
		if md := p.Datasets[m.Dataset]; md != nil && md.SampleUnit != ds.SampleUnit {
			c.addf("dataset", "dataset %q counts %ss but model %q is profiled per %s", ds.Name, ds.SampleUnit, m.Name, md.SampleUnit)
		}
	}
	if strings.TrimSpace(r.Source) == "" {
		c.addf("source", "missing source: cite where the figures come from")
	}
	c.oneOf("optimizer", "optimizer", string(r.Optimizer), optimizers)

	// Batch.
	c.positiveInt("per_device_batch", r.PerDeviceBatch, maxBatch)
	c.positiveInt("devices", int64(r.Devices), maxDevices)
	c.positiveInt("pipeline_stages", int64(r.PipelineStages), maxAccum)
	c.positiveInt("gradient_accumulation", int64(r.GradientAccumulation), maxAccum)
	if r.GlobalBatch != 0 || (r.PerDeviceBatch > 0 && r.Devices > 0) {
		c.positiveInt("global_batch", r.GlobalBatch, maxBatch)
	}
	if r.Devices > 0 && r.PipelineStages > 0 && r.Devices%r.PipelineStages != 0 {
		c.addf("pipeline_stages", "%d devices do not split into replicas of %d pipeline stages", r.Devices, r.PipelineStages)
	} else if r.PerDeviceBatch > 0 && r.Devices > 0 && r.PipelineStages > 0 && r.GradientAccumulation > 0 && r.GlobalBatch > 0 {
		want := float64(r.PerDeviceBatch) * float64(r.Devices/r.PipelineStages) * float64(r.GradientAccumulation)
		if want != float64(r.GlobalBatch) {
			c.addf("global_batch", "%d is not per_device_batch %d × %d replicas × gradient_accumulation %d = %.0f",
				r.GlobalBatch, r.PerDeviceBatch, r.Devices/r.PipelineStages, r.GradientAccumulation, want)
		}
	}
	if r.BatchUnit != "" || ds != nil {
		c.oneOf("batch_unit", "sample unit", string(r.BatchUnit), sampleUnits)
	}
	if ds != nil && r.BatchUnit != "" && r.BatchUnit != ds.SampleUnit {
		c.addf("batch_unit", "batches are in %ss but dataset %q counts %ss", r.BatchUnit, ds.Name, ds.SampleUnit)
	}
	c.nonNegInt("eval_batch", r.EvalBatch, maxBatch)
	c.oneOf("precision", "precision", string(r.Precision), precisions)
	c.oneOf("master_weights", "precision", string(r.MasterWeights), precisions)

	// Optimizer hyperparameters.
	if r.IsUnknown("base_lr") && r.BaseLR == 0 {
		// not given by the source
	} else {
		c.positive("base_lr", r.BaseLR)
	}
	c.nonNeg("weight_decay", r.WeightDecay)
	c.fraction("momentum", r.Momentum)
	if r.Optimizer.usesMomentum() && r.Momentum == 0 && !r.IsUnknown("momentum") {
		c.addf("momentum", "optimizer %s needs a momentum in (0, 1); list it under unknown if the source does not give one", r.Optimizer)
	}
	c.nonNeg("lars_eta", r.LARSEta)
	if r.Optimizer == LARS && r.LARSEta == 0 && !r.IsUnknown("lars_eta") {
		c.addf("lars_eta", "optimizer lars needs lars_eta; list it under unknown if the source does not give one")
	}
	if r.Optimizer != LARS && r.LARSEta != 0 && validName(string(r.Optimizer), optimizers) {
		c.addf("lars_eta", "set, but optimizer is %s", r.Optimizer)
	}
	if r.Adam != nil {
		if !r.Optimizer.isAdam() && validName(string(r.Optimizer), optimizers) {
			c.addf("adam", "set, but optimizer is %s", r.Optimizer)
		}
		c.fraction("adam.beta1", r.Adam.Beta1)
		c.fraction("adam.beta2", r.Adam.Beta2)
		c.positive("adam.epsilon", r.Adam.Epsilon)
	}
	c.fraction("label_smoothing", r.LabelSmoothing)

	// Length of training.
	switch {
	case r.Epochs != 0 && r.Iterations != 0:
		c.addf("iterations", "give epochs or iterations, not both")
	case r.Epochs == 0 && r.Iterations == 0:
		c.addf("epochs", "missing epochs or iterations")
	case r.Iterations != 0:
		c.positiveInt("iterations", r.Iterations, maxSteps)
	default:
		if !finite(r.Epochs) || r.Epochs <= 0 || r.Epochs > maxEpochs {
			c.addf("epochs", "must be in (0, %g], got %v", float64(maxEpochs), r.Epochs)
		}
	}

	c.reached(p, r, ds)
	c.schedule(r)
	c.warmup(r)
	c.targets(r)

	c.timedRegion(r.TimedRegion)
	c.nonNegInt("max_global_batch", r.MaxGlobalBatch, maxBatch)
	if s := r.Shortfall; s != nil {
		c.positiveInt("shortfall.global_batch", s.GlobalBatch, maxBatch)
		c.positiveInt("shortfall.compared_to", s.ComparedTo, maxBatch)
		c.positive("shortfall.drop", s.Drop)
		if r.MaxGlobalBatch > 0 && s.GlobalBatch > 0 && s.GlobalBatch <= r.MaxGlobalBatch {
			c.addf("shortfall.global_batch", "%d is not beyond max_global_batch %d", s.GlobalBatch, r.MaxGlobalBatch)
		}
	}
	for i, t := range r.TimeToTrain {
		at := fmt.Sprintf("time_to_train[%d]", i)
		if strings.TrimSpace(t.System) == "" {
			c.addf(at+".system", "missing system")
		}
		c.positiveInt(at+".devices", int64(t.Devices), maxDevices)
		c.positiveInt(at+".global_batch", t.GlobalBatch, maxBatch)
		c.positive(at+".time", float64(t.Time))
	}
}

// reached checks where published runs met the recipe's targets: one
// length, within the recipe's own. ds is the recipe's dataset, or nil for
// the model's.
func (c *checker) reached(p *Profiles, r *Recipe, ds *Dataset) {
	x := r.Reached
	if x == nil {
		return
	}
	if strings.TrimSpace(x.Source) == "" {
		c.addf("reached.source", "missing source: cite the runs that reached the target")
	}
	switch {
	case x.Epochs != 0 && x.Iterations != 0:
		c.addf("reached.iterations", "give epochs or iterations, not both")
		return
	case x.Epochs == 0 && x.Iterations == 0:
		c.addf("reached.epochs", "missing epochs or iterations")
		return
	case x.Iterations != 0:
		c.positiveInt("reached.iterations", x.Iterations, maxSteps)
	case !finite(x.Epochs) || x.Epochs <= 0 || x.Epochs > maxEpochs:
		c.addf("reached.epochs", "must be in (0, %g], got %v", float64(maxEpochs), x.Epochs)
		return
	}
	limit := fmt.Sprintf("%v epochs", r.Epochs)
	if r.Iterations > 0 {
		limit = fmt.Sprintf("%d iterations", r.Iterations)
	}
	var beyond bool
	switch {
	case x.Epochs > 0 && r.Epochs > 0:
		beyond = x.Epochs > r.Epochs
	case x.Iterations > 0 && r.Iterations > 0:
		beyond = x.Iterations > r.Iterations
	default: // one in epochs, the other in iterations: compare the samples seen
		if ds == nil {
			if m := p.Models[r.Model]; m != nil {
				ds = p.Datasets[m.Dataset]
			}
		}
		if ds != nil && r.GlobalBatch > 0 {
			n, b := float64(ds.TrainSamples), float64(r.GlobalBatch)
			beyond = x.Epochs*n+float64(x.Iterations)*b > r.Epochs*n+float64(r.Iterations)*b
		}
	}
	if beyond {
		c.addf("reached", "is beyond the recipe's %s", limit)
	}
}

func (c *checker) schedule(r *Recipe) {
	s := &r.Schedule
	c.oneOf("schedule.kind", "schedule", string(s.Kind), scheduleKinds)
	c.nonNeg("schedule.power", s.Power)
	c.nonNeg("schedule.end_lr", s.EndLR)
	c.nonNeg("schedule.every_epochs", s.EveryEpochs)
	c.nonNegInt("schedule.every_steps", s.EverySteps, maxSteps)
	c.nonNegInt("schedule.start_step", s.StartStep, maxSteps)
	c.nonNegInt("schedule.max_decays", int64(s.MaxDecays), maxSteps)
	needFactor := func() {
		if !finite(s.Factor) || s.Factor <= 0 || s.Factor >= 1 {
			c.addf("schedule.factor", "%s schedule needs a factor in (0, 1), got %v", s.Kind, s.Factor)
		}
	}
	interval := func() {
		if (s.EveryEpochs > 0) == (s.EverySteps > 0) {
			c.addf("schedule", "%s schedule needs exactly one of every_epochs and every_steps", s.Kind)
		}
	}
	switch s.Kind {
	case Step, Exponential:
		needFactor()
		interval()
	case MultiStep:
		needFactor()
		n := len(s.MilestoneEpochs) + len(s.MilestoneSteps)
		switch {
		case len(s.MilestoneEpochs) > 0 && len(s.MilestoneSteps) > 0:
			c.addf("schedule", "give milestone_epochs or milestone_steps, not both")
		case n == 0 && !r.IsUnknown("schedule.milestones"):
			c.addf("schedule", "multistep schedule needs milestone_epochs or milestone_steps; list schedule.milestones under unknown if the source does not give them")
		}
		for i, e := range s.MilestoneEpochs {
			at := fmt.Sprintf("schedule.milestone_epochs[%d]", i)
			if !finite(e) || e <= 0 || (i > 0 && e <= s.MilestoneEpochs[i-1]) {
				c.addf(at, "milestones must be positive and ascending, got %v", e)
			}
		}
		for i, st := range s.MilestoneSteps {
			at := fmt.Sprintf("schedule.milestone_steps[%d]", i)
			if st <= 0 || st > maxSteps || (i > 0 && st <= s.MilestoneSteps[i-1]) {
				c.addf(at, "milestones must be positive and ascending, got %d", st)
			}
		}
	case Polynomial:
		if !(s.Power > 0) {
			c.addf("schedule.power", "polynomial schedule needs a positive power, got %v", s.Power)
		}
	}
	if s.EndLR > 0 && r.BaseLR > 0 && s.EndLR >= r.BaseLR {
		c.addf("schedule.end_lr", "%v is not below base_lr %v", s.EndLR, r.BaseLR)
	}
}

func (c *checker) warmup(r *Recipe) {
	w := &r.Warmup
	if !finite(w.Epochs) || w.Epochs < 0 || w.Epochs > maxEpochs {
		c.addf("warmup.epochs", "must be in [0, %g], got %v", float64(maxEpochs), w.Epochs)
	}
	c.nonNegInt("warmup.steps", w.Steps, maxSteps)
	if w.Epochs > 0 && w.Steps > 0 {
		c.addf("warmup", "give epochs or steps, not both")
	}
	if w.Method != "" {
		c.oneOf("warmup.method", "warm-up method", w.Method, warmupMethods)
	}
	if !finite(w.StartFactor) || w.StartFactor < 0 || w.StartFactor > 1 {
		c.addf("warmup.start_factor", "must be in [0, 1], got %v", w.StartFactor)
	}
	if r.Epochs > 0 && w.Epochs >= r.Epochs {
		c.addf("warmup.epochs", "%v is not shorter than the %v epochs of training", w.Epochs, r.Epochs)
	}
}

func (c *checker) targets(r *Recipe) {
	if len(r.Targets) == 0 {
		c.addf("targets", "missing targets: give at least one metric and value")
	}
	for i, t := range r.Targets {
		at := fmt.Sprintf("targets[%d]", i)
		c.oneOf(at+".metric", "metric", string(t.Metric), metrics)
		c.nonNeg(at+".spread", t.Spread)
		switch {
		case !finite(t.Value) || t.Value <= 0:
			c.addf(at+".value", "must be positive, got %v", t.Value)
		case t.Metric == BLEU:
			if t.Value > 100 {
				c.addf(at+".value", "BLEU %v is above 100", t.Value)
			}
		case t.Value > 1 && t.Value <= 100:
			c.addf(at+".value", "%v is not a fraction: write %.6g for %v%%", t.Value, t.Value/100, t.Value)
		case t.Value > 1:
			c.addf(at+".value", "must be a fraction in (0, 1], got %v", t.Value)
		}
	}
}

// report turns issues into an error: one config.Problems per source file,
// with lines where the entry came from YAML.
func (p *Profiles) report(issues []issue) error {
	if len(issues) == 0 {
		return nil
	}
	type group struct {
		o  origin
		ps *config.Problems
	}
	var groups []*group
	byFile := map[origin]*group{}
	keys := keyIndex{}
	for _, is := range issues {
		key := is.section + "." + is.name
		o := p.origins[key]
		g := byFile[o]
		if g == nil {
			g = &group{o: o, ps: &config.Problems{File: o.file}}
			byFile[o] = g
			groups = append(groups, g)
		}
		path := key
		if is.rest != "" {
			path += "." + is.rest
		}
		g.ps.List = append(g.ps.List, config.Problem{Path: path, Line: lineOf(o.root, is, keys), Msg: is.msg})
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].o.file < groups[j].o.file })
	errs := make([]error, len(groups))
	for i, g := range groups {
		sort.SliceStable(g.ps.List, func(a, b int) bool { return g.ps.List[a].Line < g.ps.List[b].Line })
		errs[i] = g.ps
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// lineOf finds the line of an issue in root: the line of the key that
// names the field, or of the sequence item. The entry name is matched as
// one key, since names may contain dots. A path that does not resolve
// fully gives the line of its deepest resolved part.
func lineOf(root *yaml.Node, is issue, keys keyIndex) int {
	if root == nil {
		return 0
	}
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	_, sec := mapChild(n, is.section)
	if sec == nil {
		return n.Line
	}
	key, val := keys.child(sec, is.name)
	if val == nil {
		return sec.Line
	}
	line := key.Line
	n = val
	for _, part := range splitPath(is.rest) {
		if i, ok := index(part); ok {
			if n.Kind != yaml.SequenceNode || i >= len(n.Content) {
				break
			}
			n = n.Content[i]
			line = n.Line
			continue
		}
		k, v := mapChild(n, part)
		if v == nil {
			break
		}
		n, line = v, k.Line
	}
	return line
}

// splitPath splits "a.b[2].c" into "a", "b", "[2]", "c".
func splitPath(path string) []string {
	var parts []string
	for _, p := range strings.Split(path, ".") {
		for p != "" {
			i := strings.IndexByte(p, '[')
			switch {
			case i < 0:
				parts = append(parts, p)
				p = ""
			case i > 0:
				parts = append(parts, p[:i])
				p = p[i:]
			default:
				j := strings.IndexByte(p, ']')
				if j < 0 {
					parts = append(parts, p)
					p = ""
					continue
				}
				parts = append(parts, p[:j+1])
				p = p[j+1:]
			}
		}
	}
	return parts
}

// index parses "[i]".
func index(part string) (int, bool) {
	if len(part) < 3 || part[0] != '[' || part[len(part)-1] != ']' {
		return 0, false
	}
	i, err := strconv.Atoi(part[1 : len(part)-1])
	return i, err == nil && i >= 0
}

func mapChild(n *yaml.Node, k string) (key, val *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

// keyIndex holds the positions of a section's keys, so that locating many
// issues in a large section does not search it again for each.
type keyIndex map[*yaml.Node]map[string]int

// child is mapChild through the index.
func (x keyIndex) child(n *yaml.Node, k string) (key, val *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		return nil, nil
	}
	pos, ok := x[n]
	if !ok {
		pos = make(map[string]int, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			if _, dup := pos[n.Content[i].Value]; !dup {
				pos[n.Content[i].Value] = i
			}
		}
		x[n] = pos
	}
	i, ok := pos[k]
	if !ok {
		return nil, nil
	}
	return n.Content[i], n.Content[i+1]
}
