package calib

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"scaleplan/internal/units"
)

// opsSample is a calibration with one operators entry, every field set.
func opsSample() *Calibration {
	return &Calibration{Level: 0.95, Operators: []OperatorsEntry{{
		Device: "h200-sxm-141gb", Mode: "eager",
		Classes: []OperatorClass{
			{Class: "tensor-fp16", Efficiency: 0.45, Interval: []float64{0.4, 0.5}},
			{Class: "grouped-conv", Efficiency: 0.8, Undetermined: true},
		},
		Launch: 24e-6, LaunchInterval: []units.Seconds{20e-6, 30e-6},
		StepHost: 0.001125, StepHostInterval: []units.Seconds{0.0009, 0.0013},
		KernelTime: 11e-6, KernelTimeInterval: []units.Seconds{6e-6, 19e-6},
		ErrorBefore: 0.55, Error: 0.21, Rows: 94, Models: []string{"mlp", "resnet50"}, Source: "a.jsonl,b.jsonl",
	}}}
}

// TestOperatorsRoundTrip writes an operators entry and reads it back.
func TestOperatorsRoundTrip(t *testing.T) {
	want := opsSample()
	var buf bytes.Buffer
	if err := want.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	got, err := Read(&buf)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	g, w := got.Operators[0], want.Operators[0]
	if !reflect.DeepEqual(g.Classes, w.Classes) || !reflect.DeepEqual(g.Models, w.Models) || g.Rows != w.Rows || g.Error != w.Error ||
		!near(float64(g.Launch), float64(w.Launch)) || !near(float64(g.StepHost), float64(w.StepHost)) ||
		!near(float64(g.StepHostInterval[1]), float64(w.StepHostInterval[1])) || g.Source != w.Source ||
		!near(float64(g.KernelTime), float64(w.KernelTime)) || !near(float64(g.KernelTimeInterval[0]), float64(w.KernelTimeInterval[0])) {
		t.Errorf("read back %+v\nwant %+v", g, w)
	}
	var again bytes.Buffer
	if err := got.Encode(&again); err != nil || again.String() != text {
		t.Errorf("written again: %v\n%s\nwant\n%s", err, again.String(), text)
	}
	e, ok := got.OperatorsFor(func(d string) bool { return d == "h200-sxm-141gb" }, "")
	if !ok || e.Rows != 94 {
		t.Errorf("OperatorsFor(h200, eager): %v %v", e, ok)
	}
	if _, ok := got.OperatorsFor(func(d string) bool { return d == "h200-sxm-141gb" }, "compiled"); ok {
		t.Error("OperatorsFor(h200, compiled): found the eager entry")
	}
}

// TestOperatorsValidation checks that each bad field is reported with its
// path.
func TestOperatorsValidation(t *testing.T) {
	for _, tc := range []struct {
		edit func(e *OperatorsEntry)
		want string
	}{
		{func(e *OperatorsEntry) { e.Device = "" }, "operators[0].device"},
		{func(e *OperatorsEntry) { e.Classes[0].Efficiency = 1.5 }, "operators[0].classes[0].efficiency"},
		{func(e *OperatorsEntry) { e.Classes[0].Efficiency = 0 }, "operators[0].classes[0].efficiency"},
		{func(e *OperatorsEntry) { e.Classes[1].Class = "tensor-fp16" }, "operators[0].classes[1].class"},
		{func(e *OperatorsEntry) { e.Classes[0].Interval = []float64{0.5, 0.4} }, "operators[0].classes[0].interval"},
		{func(e *OperatorsEntry) { e.Launch = -1 }, "operators[0].launch"},
		{func(e *OperatorsEntry) { e.StepHost = -1 }, "operators[0].step_host"},
		{func(e *OperatorsEntry) { e.StepHost, e.EventsInStepHost = 0, true }, "operators[0].events_in_step_host"},
		{func(e *OperatorsEntry) { e.KernelTime = -1e-6 }, "operators[0].kernel_time"},
		{func(e *OperatorsEntry) { e.KernelTimeInterval = []units.Seconds{2e-5, 1e-5} }, "operators[0].kernel_time_interval"},
		{func(e *OperatorsEntry) { e.Rows = 0 }, "operators[0].rows"},
		{func(e *OperatorsEntry) { e.Classes = nil }, "operators[0].classes"},
	} {
		c := opsSample()
		tc.edit(&c.Operators[0])
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.want, err)
		}
	}
	c := opsSample()
	c.Operators = append(c.Operators, c.Operators[0])
	c.Operators[1].Mode = ""
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "same device and mode as operators[0]") {
		t.Errorf("duplicate (eager and \"\"): %v", err)
	}
}

// TestOperatorsWithoutKernelTime reads an entry written before the
// device's time per kernel was fitted: it loads, with none.
func TestOperatorsWithoutKernelTime(t *testing.T) {
	text := `operators:
  - device: h200-sxm-141gb
    mode: eager
    classes:
      - class: tensor-fp16
        efficiency: 0.23
    launch: 31.21 us
    step_host: 904.1 us
    error_before: 0.57
    error: 0.17
    rows: 127
    models: [resnet50]
`
	c, err := Read(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if e := c.Operators[0]; e.KernelTime != 0 || e.KernelTimeInterval != nil || !near(float64(e.Launch), 31.21e-6) {
		t.Errorf("read %+v: want no kernel time and the launch", e)
	}
}
