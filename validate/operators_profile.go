package validate

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"scaleplan/compute"
	"scaleplan/fit"
	"scaleplan/fit/logs"
	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
)

// FitProfiles fits, per device kind and framework mode, the efficiency of
// the compute classes that per-operator profiles time (torch.profiler's
// table, logs.ReadProfiles) directly from the operators' times: for each
// class, the FLOPs torch counted for its operators (matrix products and
// convolutions at the profile's precision, fused attention) over their
// device time at the class's peak,
//
//	e(class) = Σ FLOPs / Σ (peak(class) · t_device)
//
// cut at 1, and the host's cost per kernel as the mean host time of one
// call of an operator of any class (Σ self CPU / Σ calls). The memory
// efficiency and the host's cost per step are not determined by a
// profile (it records no bytes), nor a class no profiled operator ran.
// A profile of a device the catalogue does not know or that gives no SM
// count is an error.
func FitProfiles(ps []logs.Profile, cat *hw.Catalog) ([]OperatorsFit, error) {
	type key struct {
		dev  string
		mode compute.Mode
	}
	groups := map[key][]logs.Profile{}
	for _, p := range ps {
		d := cat.DeviceCalled(p.Device)
		if d == nil || d.SMs <= 0 {
			return nil, fmt.Errorf("%s: device %q: want a GPU of the catalogue with sms (rename it with --device FROM=TO)", p.Source, p.Device)
		}
		mode := compute.Eager
		if p.Labels["compile"] != "" {
			mode = compute.Compiled
		}
		k := key{d.Name, mode}
		groups[k] = append(groups[k], p)
	}
	var fits []OperatorsFit
	for _, k := range slices.SortedFunc(maps.Keys(groups), func(a, b key) int {
		return cmp.Or(strings.Compare(a.dev, b.dev), strings.Compare(string(a.mode), string(b.mode)))
	}) {
		d := cat.DeviceCalled(k.dev)
		f, rows, err := fitProfileGroup(groups[k], d, k.mode)
		if err != nil {
			return nil, err
		}
		fits = append(fits, OperatorsFit{Device: k.dev, Mode: k.mode, Fit: f, Entry: operatorsEntry(k.dev, k.mode, f, rows)})
	}
	return fits, nil
}

// profileOp is one profiled operator's FLOPs and device time in a class.
type profileOp struct {
	class             compute.Class
	flops, time, peak float64
}

// profileClass returns the class of a profiled operator at precision p,
// and false for an operator of no compute class or without FLOPs.
func profileClass(o *logs.OpProfile, p hw.Precision) (compute.Class, bool) {
	if !(o.FLOPs > 0) {
		return "", false
	}
	switch o.Class {
	case "matmul", "conv":
		c := compute.Config{Precision: p}
		return c.ClassOf(&model.Op{Kind: model.MatMul}), true
	case "attention":
		return compute.Flash, true
	}
	return "", false
}

// fitProfileGroup fits the profiles of one device and mode.
func fitProfileGroup(ps []logs.Profile, d *hw.Device, mode compute.Mode) (*fit.OperatorsFit, []operatorRow, error) {
	var ops []profileOp
	var host, calls float64
	var rows []operatorRow
	for _, p := range ps {
		prec, _, _, err := measuredPrecisions(p.Precision)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p.Source, err)
		}
		rows = append(rows, operatorRow{model: p.Model, source: p.Source})
		for i := range p.Ops {
			o := &p.Ops[i]
			if o.Class != "" {
				host += float64(o.SelfCPU)
				calls += o.Calls
			}
			t := float64(o.SelfDevice)
			if k, ok := profileClass(o, prec); ok && t > 0 {
				ops = append(ops, profileOp{k, o.FLOPs, t, float64(d.PeakFLOPs(prec))})
			}
		}
	}
	params := operatorParams(mode, d)
	f := &fit.OperatorsFit{Params: params, Values: make([]float64, len(params)), Undetermined: make([]bool, len(params)),
		Low: make([]float64, len(params)), High: make([]float64, len(params)), Rows: len(ops), Level: 0.95}
	for i, p := range params {
		f.Values[i], f.Undetermined[i], f.Low[i], f.High[i] = p.Default, true, math.NaN(), math.NaN()
	}
	if len(ops) == 0 {
		return nil, nil, fmt.Errorf("%s: no operator with FLOPs and device time (profile a GPU run with torch.profiler's with_flops)", ps[0].Source)
	}
	flops, work := map[compute.Class]float64{}, map[compute.Class]float64{}
	for _, o := range ops {
		flops[o.class] += o.flops
		work[o.class] += o.peak * o.time
	}
	for i, k := range compute.Classes {
		if work[k] > 0 {
			f.Values[i], f.Undetermined[i] = math.Min(1, flops[k]/work[k]), false
		}
	}
	if n := len(compute.Classes); calls > 0 && host > 0 {
		f.Values[n], f.Undetermined[n] = host/calls/float64(units.Microsecond), false
	}
	errAt := func(v []float64) float64 {
		var s float64
		for _, o := range ops {
			s += math.Abs(o.flops/(o.peak*v[slices.Index(compute.Classes, o.class)])/o.time - 1)
		}
		return s / float64(len(ops))
	}
	def := make([]float64, len(params))
	for i, p := range params {
		def[i] = p.Default
	}
	f.ErrorBefore, f.Error = errAt(def), errAt(f.Values)
	return f, rows, nil
}
