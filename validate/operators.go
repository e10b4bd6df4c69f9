package validate

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"scaleplan/compute"
	"scaleplan/fit"
	"scaleplan/hw"
	"scaleplan/internal/calib"
	"scaleplan/internal/units"
	"scaleplan/model"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// OperatorsFit is the operator calibration of one device and framework
// mode: the fit and the calibration entry it gives.
type OperatorsFit struct {
	Device string
	Mode   compute.Mode
	Fit    *fit.OperatorsFit
	Entry  calib.OperatorsEntry
}

// operatorRow is one measurement as the operator fit sees it: its
// measured step time and the model's step time as a function of the
// efficiencies, accumulation × profile + update.
type operatorRow struct {
	measured  float64
	profile   *compute.Profile
	accum     float64
	update    units.Seconds
	model     string
	source    string
	framework string
	// host is the measured cost of a dispatched kernel on the row's host
	// (Measured.Host.Kernel), 0 where none was measured.
	host units.Seconds
	// eventsUnmeasured says the row recorded timer events
	// (Measured.TimerEvents) on a host that measured no event's cost.
	eventsUnmeasured bool
}

// FitOperators fits, per device kind and framework mode, the efficiency
// of every operator class and the host's cost per kernel to the
// measurements of one device that the operator model covers (compute.Covers:
// the device gives its SMs, the model has a generator): least squares of
// the logarithm of the step time over all of them (several models,
// batches, precisions), the step time being the operator model's, the
// simulator's update added (fit.FitOperators). Where every row of a
// device and mode ran on one host whose table measures its kernel's cost
// (Measured.Host.Kernel, fit --host), the host's cost per kernel is that,
// not fitted (calib.OperatorsEntry.LaunchMeasured); where rows recorded
// timer events on a host that priced none, the fitted host cost per step
// holds them (calib.OperatorsEntry.EventsInStepHost). Measurements of several
// devices, out-of-memory records and those the model does not cover are
// left out; a device and mode with no measurement left gives no fit.
func FitOperators(ms []Measured, cat *hw.Catalog, prof *model.Profiles, s *fit.Settings) ([]OperatorsFit, error) {
	type key struct {
		dev  *hw.Device
		mode compute.Mode
	}
	groups := map[key][]operatorRow{}
	for i := range ms {
		m := &ms[i]
		where := cmp.Or(m.Source, fmt.Sprintf("measurement %d", i+1))
		row, dev, ok, err := newOperatorRow(m, cat, prof)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if ok {
			k := key{dev, measuredMode(m)}
			groups[k] = append(groups[k], row)
		}
	}
	if len(groups) == 0 {
		return nil, errors.New("operator fit: no measurement of one device that the operator model covers (a device with sms in the catalogue, a model with an operator generator)")
	}
	var fits []OperatorsFit
	for _, k := range slices.SortedFunc(maps.Keys(groups), func(a, b key) int {
		return cmp.Or(strings.Compare(a.dev.Name, b.dev.Name), strings.Compare(string(a.mode), string(b.mode)))
	}) {
		f, err := fitOperatorGroup(groups[k], k.mode, k.dev, s)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", k.dev.Name, k.mode, err)
		}
		fits = append(fits, OperatorsFit{Device: k.dev.Name, Mode: k.mode, Fit: f, Entry: operatorsEntry(k.dev.Name, k.mode, f, groups[k])})
	}
	return fits, nil
}

// newOperatorRow returns m as a row of the operator fit, its device, and
// false when m is not one to fit (several devices, out of memory, not
// covered by the operator model).
func newOperatorRow(m *Measured, cat *hw.Catalog, prof *model.Profiles) (operatorRow, *hw.Device, bool, error) {
	d := cat.DeviceCalled(m.Device)
	if d == nil || max(m.Devices, 1) != 1 || m.OOM || !(m.SamplesPerSec > 0) || m.Batch < 1 {
		return operatorRow{}, nil, false, nil
	}
	mdl, err := prof.Model(m.Model)
	if err != nil || !compute.Covers(d, mdl.Name) {
		return operatorRow{}, nil, false, nil
	}
	// The operators as compute.LawAt lists them for validate's prediction:
	// a compiled program's elementwise chains fused, attention fused where
	// the log or the model says so.
	c, ops, update, err := operatorList(m, d, prof)
	if err != nil {
		return operatorRow{}, nil, false, err
	}
	p, err := compute.NewProfile(c, ops)
	if err != nil {
		return operatorRow{}, nil, false, err
	}
	acc := max(m.Accumulation, 1)
	return operatorRow{
		measured:         float64(m.Batch*acc) / m.SamplesPerSec / m.logShare(), // the padded samples' step
		profile:          p,
		accum:            float64(acc),
		update:           update(d),
		model:            mdl.Name,
		source:           m.Source,
		framework:        frameworkOf(m),
		host:             hostKernel(m),
		eventsUnmeasured: m.TimerEvents > 0 && (m.Host == nil || !(m.Host.Event > 0)),
	}, d, true, nil
}

// hostKernel returns the cost of a dispatched kernel m's host measured,
// 0 where none.
func hostKernel(m *Measured) units.Seconds {
	if m.Host == nil {
		return 0
	}
	return m.Host.Kernel
}

// stepHostStart is where the fit of the host's cost per step starts,
// microseconds: a search start, not a model constant (the uncalibrated
// model has none); an undetermined figure is written as 0.
const stepHostStart = 100

// kernelTimeStart is where the fit of the device's time per kernel
// starts, microseconds: a search start, not a model constant (the
// uncalibrated model's is compute.KernelTime, from which the fit does not
// start: it settles in a worse minimum there); an undetermined figure is
// written as 0, which a prediction reads as compute.KernelTime.
const kernelTimeStart = 0.1

// UncalibratedKernelTime is the uncalibrated model's device time per
// kernel in eager mode (compute.KernelTime), the default fit --operators'
// table gives the fitted one.
const UncalibratedKernelTime = compute.KernelTime

// operatorParams are the figures of an operator fit in mode on d: the
// efficiency of each of compute.Classes (starting at, and where
// undetermined kept at, d's published one), then the host's cost per kernel
// and per step and, in eager mode, the device's time per kernel, in
// microseconds. A compiler fuses kernels that the operator lists keep
// apart (compute.Compiled), so that a time per listed kernel would stand
// for no kernel the device runs: other modes fit none.
func operatorParams(mode compute.Mode, d *hw.Device) []fit.OperatorParam {
	ps := make([]fit.OperatorParam, 0, len(compute.Classes)+3)
	for _, k := range compute.Classes {
		ps = append(ps, fit.OperatorParam{Name: string(k), Default: compute.DeviceEfficiency(d, k), Max: 1})
	}
	ps = append(ps, fit.OperatorParam{Name: "launch", Default: float64(mode.Launch() / units.Microsecond)},
		fit.OperatorParam{Name: "step", Default: stepHostStart})
	if mode == compute.Eager {
		ps = append(ps, fit.OperatorParam{Name: "kernel", Default: kernelTimeStart})
	}
	return ps
}

// efficiencies returns the figures v of operatorParams as Efficiencies.
func efficiencies(v []float64) *compute.Efficiencies {
	var e compute.Efficiencies
	for i, k := range compute.Classes {
		e.Set(k, v[i])
	}
	e.Launch = units.Seconds(v[len(compute.Classes)]) * units.Microsecond
	e.StepHost = units.Seconds(v[len(compute.Classes)+1]) * units.Microsecond
	if n := len(compute.Classes) + 2; len(v) > n {
		e.KernelTime = units.Seconds(v[n]) * units.Microsecond
	}
	return &e
}

// measuredLaunch returns the host's cost per kernel rows share, measured
// on their host (operatorRow.host), or 0 where a row has none or they
// differ.
func measuredLaunch(rows []operatorRow) units.Seconds {
	if len(rows) == 0 {
		return 0
	}
	h := rows[0].host
	for _, r := range rows[1:] {
		if r.host != h {
			return 0
		}
	}
	return h
}

// fitOperatorGroup fits the figures of device d and mode to rows.
func fitOperatorGroup(rows []operatorRow, mode compute.Mode, d *hw.Device, s *fit.Settings) (*fit.OperatorsFit, error) {
	measured := make([]float64, len(rows))
	for i, r := range rows {
		measured[i] = r.measured
	}
	f := func(v []float64) ([]float64, error) {
		e := efficiencies(v)
		t := make([]float64, len(rows))
		for i, r := range rows {
			t[i] = r.accum*float64(r.profile.Time(e)) + float64(r.update)
		}
		return t, nil
	}
	params := operatorParams(mode, d)
	if l := measuredLaunch(rows); l > 0 && mode == compute.Eager {
		n := len(compute.Classes)
		params[n].Default, params[n].Fixed = float64(l/units.Microsecond), true
	}
	return fit.FitOperators(measured, params, f, s)
}

// operatorsEntry returns the calibration entry of a fit of device in mode
// to rows.
func operatorsEntry(device string, mode compute.Mode, f *fit.OperatorsFit, rows []operatorRow) calib.OperatorsEntry {
	e := calib.OperatorsEntry{Device: device, Mode: string(mode), ErrorBefore: f.ErrorBefore, Error: f.Error, Rows: f.Rows}
	for i, r := range rows {
		if i == 0 {
			e.Framework = r.framework
		} else if r.framework != e.Framework {
			e.Framework = "" // rows of several frameworks: none carries
		}
	}
	pair := func(lo, hi float64) []float64 {
		if math.IsNaN(lo) || math.IsNaN(hi) {
			return nil
		}
		return []float64{lo, hi}
	}
	for i, k := range compute.Classes {
		e.Classes = append(e.Classes, calib.OperatorClass{Class: string(k), Efficiency: f.Values[i],
			Interval: pair(f.Low[i], f.High[i]), Undetermined: f.Undetermined[i]})
	}
	n := len(compute.Classes)
	e.Launch = units.Seconds(f.Values[n]) * units.Microsecond
	if iv := pair(f.Low[n], f.High[n]); iv != nil {
		e.LaunchInterval = []units.Seconds{units.Seconds(iv[0]) * units.Microsecond, units.Seconds(iv[1]) * units.Microsecond}
	}
	e.LaunchUndetermined = f.Undetermined[n]
	e.LaunchMeasured = f.Params[n].Fixed
	e.StepHost, e.StepHostInterval = fittedTime(f, n+1)
	if len(f.Values) > n+2 {
		e.KernelTime, e.KernelTimeInterval = fittedTime(f, n+2)
	}
	var files []string
	for _, r := range rows {
		e.EventsInStepHost = e.EventsInStepHost || r.eventsUnmeasured && e.StepHost > 0 // a host cost per step took them
		if !slices.Contains(e.Models, r.model) {
			e.Models = append(e.Models, r.model)
		}
		if file := sourceFile(r.source); file != "" && !slices.Contains(files, file) {
			files = append(files, file)
		}
	}
	slices.Sort(e.Models)
	e.Source = strings.Join(files, ",")
	return e
}

// fittedTime returns f's figure j, microseconds, as a time with its
// interval (none where the fit gives none or an unbounded one); 0 where
// no row determined it, which stands for the uncalibrated model's none.
func fittedTime(f *fit.OperatorsFit, j int) (units.Seconds, []units.Seconds) {
	if f.Undetermined[j] {
		return 0, nil
	}
	v := units.Seconds(f.Values[j]) * units.Microsecond
	lo, hi := f.Low[j], f.High[j]
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(hi, 0) {
		return v, nil
	}
	return v, []units.Seconds{units.Seconds(lo) * units.Microsecond, units.Seconds(hi) * units.Microsecond}
}

// sourceFile returns the file of a measurement's source, "file:line"
// without its line.
func sourceFile(src string) string {
	if i := strings.LastIndexByte(src, ':'); i >= 0 && strings.Trim(src[i+1:], "0123456789") == "" {
		return src[:i]
	}
	return src
}

// operatorsApplied is the operators entry a measurement on d in mode
// takes from cals: the first of d's own kind, else the first of another
// device (carried: its efficiencies on d's peaks, bandwidth and SMs, and
// its host costs where it was fitted under m's framework, else the mode's
// defaults; its cost per kernel m's own host's where m.Host measures one).
// It returns nil when cals have none for mode, with the text a
// row shows ("fitted on H200", "carried from H200", "efficiencies carried
// from H200") and whether m is one of the
// rows the entry was fitted to (d's kind and a log the entry names).
func operatorsApplied(cals []scenarios.CalibrationFile, d *hw.Device, m *Measured) (*compute.Efficiencies, string, bool, int, error) {
	mode := string(measuredMode(m))
	pick := func(is func(string) bool) (calib.OperatorsEntry, int, bool) {
		for i, f := range cals {
			if e, ok := f.Cal.OperatorsFor(is, mode); ok {
				return e, i, true
			}
		}
		return calib.OperatorsEntry{}, -1, false
	}
	e, from, ok := pick(d.Is)
	own := ok
	if !ok {
		if e, from, ok = pick(func(string) bool { return true }); !ok {
			return nil, "", false, -1, nil
		}
	}
	eff, err := scenarios.OperatorEfficiencies(&e)
	if err != nil {
		return nil, "", false, -1, err
	}
	if !own {
		if !sameFramework(e.Framework, m) {
			// The host's costs are the framework's: only the kernels'
			// efficiencies carry to another framework's rows.
			eff.Launch, eff.StepHost, eff.KernelTime, eff.EventsInStepHost = 0, 0, 0, false
			return eff, "efficiencies carried from " + e.Device, false, from, nil
		}
		if hostKernel(m) > 0 {
			// The machine measured its own kernel's host cost
			// (validate --host): it replaces the one fitted on the
			// other machine's host.
			eff.Launch = 0
			return eff, "carried from " + e.Device + ", this host's launch", false, from, nil
		}
		return eff, "carried from " + e.Device, false, from, nil
	}
	fitted := false
	for _, src := range strings.Split(e.Source, ",") {
		if s := strings.TrimSpace(src); s != "" && filepath.Base(s) == filepath.Base(sourceFile(m.Source)) {
			fitted = true
		}
	}
	return eff, "fitted on " + e.Device, fitted, from, nil
}

// carryLaw scales cfg's compute, that of m on device d by the operator
// model with efficiencies carried from another device, by the ratio of
// that device's measured step to its operator-model step, where cals hold
// a throughput entry of m's model, precision and variant on one device of
// a kind that an operators entry was fitted on under m's framework, at a
// batch within the entry's: Habitat's wave scaling (Yu et al. 2021, USENIX ATC '21, Section 3) of a measured
// time by the ratio of the predicted times, t_B = t_A,measured ·
// t_B,model / t_A,model, with the whole step for the operator. It returns
// the device the measurement came from, "" when none applies.
func carryLaw(cfg *sim.Config, cals []scenarios.CalibrationFile, cat *hw.Catalog, mdl *model.Model, d *hw.Device, m *Measured, b, seq int) (string, error) {
	acc := max(m.Accumulation, 1)
	g := m.Batch * acc
	for _, f := range cals {
		for i := range f.Cal.Throughput {
			e := &f.Cal.Throughput[i]
			a := cat.DeviceCalled(e.Device)
			if e.Model != mdl.Name || e.Devices != 1 || e.Precision != m.Precision || calib.RunVariant(e.Labels) != m.Variant ||
				a == nil || a.Name == d.Name || !compute.Covers(a, mdl.Name) || !(e.V0 > 0) ||
				(len(e.Batches) == 2 && (g < e.Batches[0] || g > e.Batches[1])) {
				continue
			}
			effA, _, _, from, err := operatorsApplied(cals, a, m)
			if err != nil {
				return "", err
			}
			if from < 0 || !operatorsOfFramework(cals[from].Cal, a, m) {
				continue // a law measured under another framework, or without A's efficiencies
			}
			cfgA, err := measuredConfig(mdl, a, m, b, seq, effA)
			if err != nil {
				return "", err
			}
			model := stepOf(cfgA.Compute, b, acc)
			measured := float64(g)/e.V0 + float64(e.T)
			if !(model > 0) || !(measured > 0) {
				continue
			}
			r := units.Seconds(measured / model)
			cfg.Compute.PerSample *= r
			cfg.Compute.Fixed *= r
			cfg.Compute.Update *= r
			return e.Device, nil
		}
	}
	return "", nil
}

// stepOf returns the step time of compute c at micro-batch b with acc
// accumulations: acc·(b·PerSample + Fixed) + Update, seconds.
func stepOf(c sim.Compute, b, acc int) float64 {
	return float64(acc)*(float64(b)*float64(c.PerSample)+float64(c.Fixed)) + float64(c.Update)
}

// frameworkOf returns the first word of m's framework, lower-cased
// ("torch" of "torch 2.11.0+cu130"); "" when its log does not say.
func frameworkOf(m *Measured) string {
	f := strings.Fields(strings.ToLower(m.Framework))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// sameFramework reports whether an operators entry fitted under framework
// applies to m's host: both name the same framework.
func sameFramework(framework string, m *Measured) bool {
	return framework != "" && framework == frameworkOf(m)
}

// operatorsOfFramework reports whether c has an operators entry of device
// a in m's mode fitted under m's framework.
func operatorsOfFramework(c *calib.Calibration, a *hw.Device, m *Measured) bool {
	e, ok := c.OperatorsFor(a.Is, string(measuredMode(m)))
	return ok && sameFramework(e.Framework, m)
}
