package validate

import (
	"fmt"
	"math"
	"testing"

	"scaleplan/compute"
	"scaleplan/hw"
	"scaleplan/internal/calib"
	"scaleplan/internal/units"
	"scaleplan/model"
	"scaleplan/predict"
	"scaleplan/scenarios"
)

// trueEff are the efficiencies the synthetic measurements are made with:
// none of them a default.
func trueEff() *compute.Efficiencies {
	e := &compute.Efficiencies{Launch: 12 * units.Microsecond, StepHost: 700 * units.Microsecond, KernelTime: 4 * units.Microsecond}
	e.Set(compute.TensorFP16, 0.45)
	e.Set(compute.TensorTF32, 0.6)
	e.Set(compute.CUDACore, 0.7)
	e.Set(compute.MemoryBound, 0.65)
	return e
}

// synthetic returns measurements of one device of kind dev whose samples/s
// come from the operator model's Step under e, with eager PyTorch's host
// (momentum SGD; autocast and the gradient scaler at amp-fp16), plus the
// update validate predicts (measuredUpdate: the simulator's and the
// program's passes), as PyTorch logs them in channels_last (NHWC, as
// Step's Config is here): ResNet-50 at fp32, tf32 and amp-fp16 and
// the engine's MLP at fp32, at several batches.
func synthetic(t *testing.T, cat *hw.Catalog, prof *model.Profiles, dev string, e *compute.Efficiencies) []Measured {
	t.Helper()
	return syntheticOn(t, cat, prof, dev, e, nil)
}

// syntheticOn is synthetic on a host with costs h (nil: the default's),
// which the measurements record as theirs (Measured.Host).
func syntheticOn(t *testing.T, cat *hw.Catalog, prof *model.Profiles, dev string, e *compute.Efficiencies, h *compute.HostCosts) []Measured {
	t.Helper()
	d, err := cat.Device(dev)
	if err != nil {
		t.Fatal(err)
	}
	var ms []Measured
	for _, g := range []struct {
		model, prec string
		hp          hw.Precision
		sp          model.Precision
	}{
		{"resnet50", "fp32", hw.FP32, model.FP32},
		{"resnet50", "tf32", hw.TF32, model.FP32},
		{"resnet50", "amp-fp16", hw.FP16, model.FP16},
		{"mlp", "fp32", hw.FP32, model.FP32},
	} {
		mdl, err := prof.Model(g.model)
		if err != nil {
			t.Fatal(err)
		}
		master := g.sp
		if g.prec != string(g.hp) {
			master = model.FP32
		}
		for _, b := range []int{8, 32, 128, 512} {
			ops, err := model.Ops(g.model, model.Shape{Batch: b, Precision: g.sp})
			if err != nil {
				t.Fatal(err)
			}
			m := Measured{Model: g.model, Device: dev, Precision: g.prec, Batch: b, Devices: 1, Framework: "torch 2.11.0+cu130", Variant: "channels_last",
				Source: fmt.Sprintf("%s.jsonl:%d", dev, len(ms)+1), Host: h}
			// PyTorch's eager host: momentum SGD's foreach step, and at
			// amp-fp16 autocast and the gradient scaler.
			c := compute.Config{Device: d, Precision: g.hp, Mode: compute.Eager, Eff: e, Optimizer: model.Momentum, Host: h}
			c.Autocast = g.prec != string(g.hp)
			c.GradScaler = c.Autocast
			s, err := compute.Step(&c, ops)
			if err != nil {
				t.Fatal(err)
			}
			m.SamplesPerSec = float64(b) / float64(s.Compute()+measuredUpdate(mdl, d, &m, g.sp, master))
			ms = append(ms, m)
		}
	}
	return ms
}

// TestFitOperatorsRecovers fits the operator figures to synthetic step
// times made with known efficiencies and checks that each figure the rows
// depend on comes back within 1 %, and that the classes no row uses
// (bf16, grouped convolutions, fused attention) are reported undetermined
// at their defaults.
func TestFitOperatorsRecovers(t *testing.T) {
	cat, prof := defaults(t)
	want := trueEff()
	fits, err := FitOperators(synthetic(t, cat, prof, "h200-sxm-141gb", want), cat, prof, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(fits) != 1 || fits[0].Device != "h200-sxm-141gb" || fits[0].Mode != compute.Eager {
		t.Fatalf("fits %+v: want one, of h200-sxm-141gb eager", fits)
	}
	f := fits[0].Fit
	undetermined := map[string]bool{string(compute.TensorBF16): true, string(compute.Grouped): true, string(compute.Flash): true}
	for i, p := range f.Params {
		var w float64
		switch p.Name {
		case "launch":
			w = float64(want.Launch / units.Microsecond)
		case "step":
			w = float64(want.StepHost / units.Microsecond)
		case "kernel":
			w = float64(want.KernelTime / units.Microsecond)
		default:
			k, _ := compute.ParseClass(p.Name)
			w = want.Of(k)
			if undetermined[p.Name] { // kept at the device's published figure
				w = compute.DeviceEfficiency(cat.DeviceCalled("h200-sxm-141gb"), k)
			}
		}
		if f.Undetermined[i] != undetermined[p.Name] {
			t.Errorf("%s: undetermined %v, want %v", p.Name, f.Undetermined[i], undetermined[p.Name])
		}
		if got := f.Values[i]; math.Abs(got/w-1) > 0.01 {
			t.Errorf("%s: fitted %.4g, want %.4g within 1%%", p.Name, got, w)
		}
	}
	if f.Error > 1e-3 {
		t.Errorf("mean error after the fit %.3g: want about 0", f.Error)
	}
	e := fits[0].Entry
	if err := (&calib.Calibration{Operators: []calib.OperatorsEntry{e}}).Validate(); err != nil {
		t.Errorf("entry does not validate: %v", err)
	}
}

// calibrateOnH200 fits the operator figures on synthetic H200
// measurements made with e and returns the measurements, the fits and
// the calibration of their entry, as file ops.yaml.
func calibrateOnH200(t *testing.T, cat *hw.Catalog, prof *model.Profiles, e *compute.Efficiencies) ([]Measured, []OperatorsFit, []scenarios.CalibrationFile) {
	t.Helper()
	onA := synthetic(t, cat, prof, "h200-sxm-141gb", e)
	fits, err := FitOperators(onA, cat, prof, nil)
	if err != nil {
		t.Fatal(err)
	}
	cal := &calib.Calibration{Operators: []calib.OperatorsEntry{fits[0].Entry}}
	return onA, fits, []scenarios.CalibrationFile{{Path: "ops.yaml", Cal: cal}}
}

// TestCalibrateOnAPredictB fits the operator figures on synthetic H200
// measurements and predicts synthetic H100 measurements made with the same
// efficiencies: the premise of Habitat's scaling holds exactly, so each
// prediction is within 1 % of the measurement and is marked as carried,
// while the H200 rows are marked calibrating and left out of the errors.
func TestCalibrateOnAPredictB(t *testing.T) {
	cat, prof := defaults(t)
	e := trueEff()
	onA, fits, cals := calibrateOnH200(t, cat, prof, e)
	ms := append(synthetic(t, cat, prof, "h100-sxm5-80gb", e), onA...)
	other := ms[0] // the same run, of a log that names no framework
	other.Framework, other.Source = "", "other.csv:2"
	ms = append(ms, other)
	rep, err := CompareCalibrated(ms, cat, prof, cals, predict.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fits[0].Entry.Framework != "torch" {
		t.Errorf("entry framework %q, want torch", fits[0].Entry.Framework)
	}
	if rep.Fitted != len(onA) {
		t.Errorf("%d rows fitted, want the %d of the H200", rep.Fitted, len(onA))
	}
	for _, g := range rep.Groups {
		for _, r := range g.Rows {
			switch {
			case r.Source == "other.csv:2":
				if r.Operators != "efficiencies carried from h200-sxm-141gb" || r.Fitted {
					t.Errorf("a row of another framework: operators %q, fitted %v: want the efficiencies only", r.Operators, r.Fitted)
				}
			case g.Device == "h200-sxm-141gb":
				if !r.Fitted || r.Operators != "fitted on h200-sxm-141gb" {
					t.Errorf("%s: fitted %v, operators %q: want a calibrating row", r.Source, r.Fitted, r.Operators)
				}
			case r.Operators != "carried from h200-sxm-141gb":
				t.Errorf("%s: operators %q: want carried from the H200", r.Source, r.Operators)
			case math.Abs(r.Error()) > 0.01:
				t.Errorf("%s %s %s b=%d: predicted %.4g, measured %.4g", g.Device, g.Model, g.Precision, r.Batch, r.Predicted, r.SamplesPerSec)
			}
		}
	}
}

// TestCarryToMeasuredHost fits the operator figures on synthetic H200
// measurements and predicts H100 measurements made with the same device
// efficiencies on a slower host, 30 µs a kernel where the H200's fit
// found 12: carried as fitted, the H100's small batches come out too
// fast; given the H100 host's own table (Measured.Host, validate --host),
// the carried efficiencies with that host's launch predict each row
// within 1 %, and the row says so.
func TestCarryToMeasuredHost(t *testing.T) {
	cat, prof := defaults(t)
	e := trueEff()
	_, _, cals := calibrateOnH200(t, cat, prof, e)
	host := compute.MeasuredHost
	host.Kernel = 30 * units.Microsecond
	onB := *e
	onB.Launch = 0 // the host's own
	for _, tc := range []struct {
		host     *compute.HostCosts
		operator string
		within   bool
	}{
		{nil, "carried from h200-sxm-141gb", false},
		{&host, "carried from h200-sxm-141gb, this host's launch", true},
	} {
		ms := syntheticOn(t, cat, prof, "h100-sxm5-80gb", &onB, &host)
		for i := range ms {
			ms[i].Host = tc.host
		}
		rep, err := CompareCalibrated(ms, cat, prof, cals, predict.Options{})
		if err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for _, g := range rep.Groups {
			for _, r := range g.Rows {
				if r.Operators != tc.operator {
					t.Errorf("host %v: %s: operators %q, want %q", tc.host != nil, r.Source, r.Operators, tc.operator)
				}
				worst = math.Max(worst, math.Abs(r.Error()))
			}
		}
		if tc.within != (worst <= 0.01) {
			t.Errorf("host %v: worst error %.3g: want within 1 %% %v", tc.host != nil, worst, tc.within)
		}
	}
}

// TestFitOperatorsMeasuredHost fits synthetic H200 measurements made on a
// host whose table measures 12 µs a dispatched kernel (Measured.Host):
// the host's cost per kernel is held at the table's, marked measured and
// not fitted, and the device's figures the rows depend on come back
// within 1 % of those the rows were made with.
func TestFitOperatorsMeasuredHost(t *testing.T) {
	cat, prof := defaults(t)
	want := trueEff()
	host := compute.MeasuredHost
	host.Kernel = want.Launch
	dev := *want
	dev.Launch = 0 // the host's own
	fits, err := FitOperators(syntheticOn(t, cat, prof, "h200-sxm-141gb", &dev, &host), cat, prof, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(fits) != 1 {
		t.Fatalf("%d fits, want 1", len(fits))
	}
	e := fits[0].Entry
	if !e.LaunchMeasured || e.Launch != want.Launch || e.LaunchInterval != nil || e.LaunchUndetermined {
		t.Errorf("launch %v (measured %v, interval %v, undetermined %v): want the host's %v, measured, no interval", e.Launch, e.LaunchMeasured, e.LaunchInterval, e.LaunchUndetermined, want.Launch)
	}
	for _, c := range e.Classes {
		k, err := compute.ParseClass(c.Class)
		if err != nil {
			t.Fatal(err)
		}
		if !c.Undetermined && math.Abs(c.Efficiency/want.Of(k)-1) > 0.01 {
			t.Errorf("%s: %.4g, want %.4g", c.Class, c.Efficiency, want.Of(k))
		}
	}
	if math.Abs(float64(e.StepHost/want.StepHost)-1) > 0.01 || math.Abs(float64(e.KernelTime/want.KernelTime)-1) > 0.01 {
		t.Errorf("host per step %v, device per kernel %v: want %v and %v", e.StepHost, e.KernelTime, want.StepHost, want.KernelTime)
	}
	if err := (&calib.Calibration{Operators: []calib.OperatorsEntry{e}}).Validate(); err != nil {
		t.Errorf("entry does not validate: %v", err)
	}
}

// TestOperatorRowFramework checks that the operator fit times a
// measurement with the program its framework names, as validate predicts
// it (model.Shape.Framework): torchvision's Mask R-CNN, maskrcnn-
// benchmark's and TensorFlow 2's differ in their bookkeeping, so that a
// row fitted with another program's operators would differ from the
// profile built here.
func TestOperatorRowFramework(t *testing.T) {
	cat, prof := defaults(t)
	times := map[units.Seconds]string{}
	for _, fw := range []string{"torch 2.11.0+cu130 torchvision 0.26.0+cu130", "torch 2.11.0", "tensorflow 2.4"} {
		m := Measured{Model: "maskrcnn-r50-fpn", Device: "NVIDIA H200", Precision: "amp-fp16", Batch: 4, SamplesPerSec: 60, Framework: fw}
		row, _, ok, err := newOperatorRow(&m, cat, prof)
		if err != nil || !ok {
			t.Fatalf("%s: row %v, %v", fw, ok, err)
		}
		c, err := operatorConfig(cat.DeviceCalled(m.Device), &m, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		ops, err := model.Ops(m.Model, model.Shape{Batch: 4, Precision: model.FP16, Framework: fw})
		if err != nil {
			t.Fatal(err)
		}
		p, err := compute.NewProfile(c, ops)
		if err != nil {
			t.Fatal(err)
		}
		got, want := row.profile.Time(nil), p.Time(nil) // the default efficiencies
		if got != want {
			t.Errorf("%s: the fit's row takes %v, its program %v", fw, got, want)
		}
		if other, dup := times[got]; dup {
			t.Errorf("%s: the same time as %s's, %v: want the programs to differ", fw, other, got)
		}
		times[got] = fw
	}
}

// TestOperatorRowCompiled checks that the fit's row of a compiled
// program (torch.compile, the variant compile) of BERT, whose attention's
// scaling and mask kernels a fusing program folds, takes the operators with
// their elementwise chains fused, as compute.LawAt lists them for the
// prediction, and that they differ from the eager program's.
func TestOperatorRowCompiled(t *testing.T) {
	cat, prof := defaults(t)
	times := map[bool]units.Seconds{}
	for _, compiled := range []bool{false, true} {
		m := Measured{Model: "bert-large", Device: "NVIDIA H200", Precision: "amp-fp16", Batch: 16, SamplesPerSec: 300, Framework: "torch 2.11.0"}
		if compiled {
			m.Variant = "compile"
		}
		row, _, ok, err := newOperatorRow(&m, cat, prof)
		if err != nil || !ok {
			t.Fatalf("compiled %v: row %v, %v", compiled, ok, err)
		}
		mdl, err := prof.Model(m.Model)
		if err != nil {
			t.Fatal(err)
		}
		b, seq, err := measuredShape(&m, mdl, prof)
		if err != nil {
			t.Fatal(err)
		}
		c, err := operatorConfig(cat.DeviceCalled(m.Device), &m, seq, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tr, err := model.LookupTransformer(mdl.Name); err == nil {
			c.FusedAttention = tr.FusedAttention
		}
		ops, err := model.Ops(mdl.Name, model.Shape{Batch: b, Precision: model.FP16, SeqLen: seq, Framework: m.Framework, Fused: compiled})
		if err != nil {
			t.Fatal(err)
		}
		p, err := compute.NewProfile(c, ops)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := row.profile.Time(nil), p.Time(nil); got != want {
			t.Errorf("compiled %v: the fit's row takes %v, its program %v", compiled, got, want)
		}
		times[compiled] = row.profile.Time(nil)
	}
	if times[true] == times[false] {
		t.Errorf("compiled and eager rows both take %v: want the fused program to differ", times[true])
	}
}

// TestFitOperatorsTimerEvents fits rows whose program recorded five timer
// events a step at 20 µs each (100 µs of host time a step). With the
// host's event cost measured the fit charges them apart and recovers the
// true host cost per step, 700 µs; without it the step's host cost takes
// them, 800 µs, and the entry says so (EventsInStepHost), so that the
// entry applied to the rows, now with the event's cost measured, times
// them as measured instead of charging the events twice.
func TestFitOperatorsTimerEvents(t *testing.T) {
	cat, prof := defaults(t)
	want := trueEff()
	host := compute.MeasuredHost
	host.Kernel, host.Event = want.Launch, 20*units.Microsecond
	gen := *want
	gen.Launch = 0                             // the host's own
	gen.StepHost += 5 * 20 * units.Microsecond // the events, host time of the step like StepHost
	noEvent := host
	noEvent.Event = 0
	for _, tc := range []struct {
		host     *compute.HostCosts
		stepHost units.Seconds
		inStep   bool
	}{
		{&host, want.StepHost, false},
		{&noEvent, gen.StepHost, true},
	} {
		ms := syntheticOn(t, cat, prof, "h200-sxm-141gb", &gen, &host)
		for i := range ms {
			ms[i].TimerEvents, ms[i].Host = TorchbenchTimerEvents, tc.host
		}
		fits, err := FitOperators(ms, cat, prof, nil)
		if err != nil {
			t.Fatal(err)
		}
		e := fits[0].Entry
		if math.Abs(float64(e.StepHost/tc.stepHost)-1) > 0.01 || e.EventsInStepHost != tc.inStep {
			t.Errorf("event %v: host per step %v, events in it %v: want %v, %v", tc.host.Event, e.StepHost, e.EventsInStepHost, tc.stepHost, tc.inStep)
		}
		eff, err := scenarios.OperatorEfficiencies(&e)
		if err != nil {
			t.Fatal(err)
		}
		for i := range ms {
			ms[i].Host = &host // the event's cost measured now
			row, _, ok, err := newOperatorRow(&ms[i], cat, prof)
			if err != nil || !ok {
				t.Fatalf("row %d: %v, %v", i, ok, err)
			}
			if got := row.accum*float64(row.profile.Time(eff)) + float64(row.update); math.Abs(got/row.measured-1) > 0.02 {
				t.Errorf("event %v: %s with the fitted entry: %.4g s, measured %.4g s", tc.host.Event, ms[i].Source, got, row.measured)
			}
		}
	}
}
