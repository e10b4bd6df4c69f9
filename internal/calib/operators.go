package calib

import (
	"fmt"
	"slices"

	"scaleplan/internal/config"
	"scaleplan/internal/units"
)

// OperatorsEntry is the operator model's figures fitted on one device and
// framework mode (validate.FitOperators): the efficiency of each operator
// class and the host's cost per kernel that make the model's step times
// closest to the measured ones. A prediction on Device takes them in place
// of the published constants; one on another device carries them there
// (the class's efficiency kept, the device's own peaks, bandwidth and SMs
// applied: docs/calibrate.md).
type OperatorsEntry struct {
	Device string `yaml:"device"`         // device kind the rows ran on
	Mode   string `yaml:"mode,omitempty"` // framework mode (eager, compiled, cuda-graphs); "" eager
	// Framework is the framework the rows ran under, the first word of
	// their logs' framework ("torch"); "" when they do not say. The host's
	// costs, and a measured law scaled to another device, carry only to
	// rows of the same framework.
	Framework string `yaml:"framework,omitempty"`
	// Classes are the fitted classes, in the order of compute.Classes.
	Classes []OperatorClass `yaml:"classes"`
	// Launch is the host's cost per kernel; LaunchInterval its interval,
	// absent where the fit gives none.
	Launch         units.Seconds   `yaml:"launch"`
	LaunchInterval []units.Seconds `yaml:"launch_interval,flow,omitempty"`
	// LaunchUndetermined says no row depended on Launch.
	LaunchUndetermined bool `yaml:"launch_undetermined,omitempty"`
	// LaunchMeasured says Launch is the rows' host's measured cost of a
	// dispatched kernel (a scripts/torchhost.py table's cuda_op, fit
	// --host), held while the other figures were fitted.
	LaunchMeasured bool `yaml:"launch_measured,omitempty"`
	// StepHost is the host's cost of a step outside its operators'
	// launches (the training loop's own work); 0 where the rows did not
	// determine it. StepHostInterval is its interval.
	StepHost         units.Seconds   `yaml:"step_host,omitempty"`
	StepHostInterval []units.Seconds `yaml:"step_host_interval,flow,omitempty"`
	// KernelTime is the device's time per kernel beyond its operator's
	// roofline time; 0 where the rows did not determine it (a file
	// written before it was fitted: none). KernelTimeInterval is its
	// interval.
	KernelTime         units.Seconds   `yaml:"kernel_time,omitempty"`
	KernelTimeInterval []units.Seconds `yaml:"kernel_time_interval,flow,omitempty"`
	// EventsInStepHost says rows recorded the measuring program's timer
	// events (engine/torchbench's on CUDA) on a host that measured no
	// event's cost (a host table without cuda_event), and that StepHost,
	// fitted, took what they cost: a prediction with the entry charges
	// none again (compute.Efficiencies.EventsInStepHost).
	EventsInStepHost bool `yaml:"events_in_step_host,omitempty"`
	// ErrorBefore and Error are the mean |predicted/measured − 1| of the
	// rows' step times with the published constants and with the fit.
	ErrorBefore float64  `yaml:"error_before"`
	Error       float64  `yaml:"error"`
	Rows        int      `yaml:"rows"`             // measurements fitted
	Models      []string `yaml:"models,flow"`      // models of the rows
	Source      string   `yaml:"source,omitempty"` // log files, comma-separated
}

// OperatorClass is one class's fitted efficiency.
type OperatorClass struct {
	Class      string  `yaml:"class"`
	Efficiency float64 `yaml:"efficiency"`
	// Interval is [low, high] at the file's level; absent where the fit
	// gives none.
	Interval []float64 `yaml:"interval,flow,omitempty"`
	// Undetermined says no row depended on the class: Efficiency is the
	// published default.
	Undetermined bool `yaml:"undetermined,omitempty"`
}

// validateOperators adds the problems of c's operators entries to ps.
func (c *Calibration) validateOperators(ps *config.Problems) {
	seen := map[string]int{}
	for i, e := range c.Operators {
		p := fmt.Sprintf("operators[%d]", i)
		if e.Device == "" {
			ps.Addf(p+".device", "missing: the device kind the rows ran on")
		}
		if len(e.Classes) == 0 {
			ps.Addf(p+".classes", "missing: want the fitted efficiency of one class or more")
		}
		names := map[string]bool{}
		for j, k := range e.Classes {
			q := fmt.Sprintf("%s.classes[%d]", p, j)
			if k.Class == "" || names[k.Class] {
				ps.Addf(q+".class", "%q: want a class name given once", k.Class)
			}
			names[k.Class] = true
			if !(k.Efficiency > 0 && k.Efficiency <= 1) {
				ps.Addf(q+".efficiency", "%v: must be in (0, 1]", k.Efficiency)
			}
			checkPair(ps, q+".interval", k.Interval)
		}
		if !(e.Launch >= 0) || !finite(float64(e.Launch)) {
			ps.Addf(p+".launch", "%v: must be a finite time >= 0", float64(e.Launch))
		}
		checkPair(ps, p+".launch_interval", floats(e.LaunchInterval))
		if !(e.StepHost >= 0) || !finite(float64(e.StepHost)) {
			ps.Addf(p+".step_host", "%v: must be a finite time >= 0", float64(e.StepHost))
		}
		checkPair(ps, p+".step_host_interval", floats(e.StepHostInterval))
		if e.EventsInStepHost && !(e.StepHost > 0) {
			ps.Addf(p+".events_in_step_host", "true with no step_host: the events' cost would be charged nowhere; want a fitted step_host or false")
		}
		if !(e.KernelTime >= 0) || !finite(float64(e.KernelTime)) {
			ps.Addf(p+".kernel_time", "%v: must be a finite time >= 0", float64(e.KernelTime))
		}
		checkPair(ps, p+".kernel_time_interval", floats(e.KernelTimeInterval))
		if !(e.Error >= 0) || !finite(e.Error) || !(e.ErrorBefore >= 0) || !finite(e.ErrorBefore) {
			ps.Addf(p+".error", "%v, %v: errors must be finite and >= 0", e.ErrorBefore, e.Error)
		}
		if e.Rows < 1 {
			ps.Addf(p+".rows", "%d: must be at least 1", e.Rows)
		}
		k := e.Device + "\x00" + OperatorMode(e.Mode)
		if j, dup := seen[k]; dup {
			ps.Addf(p, "same device and mode as operators[%d]", j)
		} else {
			seen[k] = i
		}
	}
}

// OperatorsFor returns the first operators entry of c in mode whose device
// is accepts (is(entry.Device)), and whether there is one.
func (c *Calibration) OperatorsFor(is func(string) bool, mode string) (OperatorsEntry, bool) {
	i := slices.IndexFunc(c.Operators, func(e OperatorsEntry) bool {
		return is(e.Device) && OperatorMode(e.Mode) == OperatorMode(mode)
	})
	if i < 0 {
		return OperatorsEntry{}, false
	}
	return c.Operators[i], true
}

// OperatorMode returns the framework mode m names, "" standing for eager.
func OperatorMode(m string) string {
	if m == "" {
		return "eager"
	}
	return m
}
