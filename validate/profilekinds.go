package validate

import (
	"fmt"
	"strings"

	"scaleplan/compute"
	"scaleplan/fit/logs"
	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
)

// ProfileKinds is one profiled training configuration's device time per
// operator kind: what torch.profiler measured (the self device time of
// every aten operator, per step) and what the operator model gives for
// the same configuration (compute.KindTimes, uncalibrated).
type ProfileKinds struct {
	Device    *hw.Device
	Model     string
	Precision string
	Batch     int
	Variant   string
	// Step is the bench log's step time of the configuration.
	Step units.Seconds
	// Measured and Modelled are the device times per kind; Measured
	// counts an aten operator of no model kind under its nearest
	// (profileKind), Modelled the optimizer's step (model.Update) as
	// validate predicts it beside the passes (measuredUpdate).
	Measured, Modelled map[model.OpKind]units.Seconds

	config compute.Config
	ops    []model.Op
	// update returns the optimizer's step on a device.
	update func(*hw.Device) units.Seconds
}

// ProfileGroup is a group of operator kinds whose device time a profile's
// comparison adds up (ProfileGroups).
type ProfileGroup struct {
	Name  string
	Kinds []model.OpKind
}

// ProfileGroups are the groups docs/validation-profiles.md and `validate
// --profile` compare a profile's device time in: the products, attention,
// the norms, every other memory-bound kind (autocast's casts and copies
// among them) and the optimizer's step. Every kind either side counts is
// in one of them.
var ProfileGroups = []ProfileGroup{
	{"products", []model.OpKind{model.MatMul, model.Conv, model.GroupedConv}},
	{"attention", []model.OpKind{model.Attention}},
	{"norms", []model.OpKind{model.Norm}},
	{"other memory-bound", []model.OpKind{model.Elementwise, model.Softmax, model.Pool, model.Embedding, model.Loss, compute.CastKind}},
	{"optimizer", []model.OpKind{model.Update}},
}

// Group returns the measured and modelled device time of g's kinds.
func (pk *ProfileKinds) Group(g ProfileGroup) (measured, modelled units.Seconds) {
	for _, k := range g.Kinds {
		measured += pk.Measured[k]
		modelled += pk.Modelled[k]
	}
	return measured, modelled
}

// CompareProfile returns the device time per operator kind of profile p,
// measured and modelled. m is the bench log's record of the same
// configuration (model, precision, batch and labels), which says how the
// program ran it (layout, autocast, the optimizer, fused attention).
func CompareProfile(p *logs.Profile, m *Measured, cat *hw.Catalog, prof *model.Profiles) (*ProfileKinds, error) {
	if p.Model != m.Model || p.Precision != m.Precision || p.Batch != m.Batch {
		return nil, fmt.Errorf("%s: profile of %s %s at batch %d; the log's record is %s %s at batch %d",
			p.Source, p.Model, p.Precision, p.Batch, m.Model, m.Precision, m.Batch)
	}
	d := cat.DeviceCalled(m.Device)
	if d == nil {
		return nil, fmt.Errorf("%s: device %q is not in the catalogue", p.Source, m.Device)
	}
	c, ops, update, err := operatorList(m, d, prof)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Source, err)
	}
	modelled, err := compute.KindTimes(&c, ops)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Source, err)
	}
	modelled[model.Update] = update(d)
	measured := map[model.OpKind]units.Seconds{}
	for i := range p.Ops {
		o := &p.Ops[i]
		if k, ok := profileKind(o); ok {
			measured[k] += o.SelfDevice
		}
	}
	return &ProfileKinds{Device: d, Model: m.Model, Precision: m.Precision, Batch: m.Batch, Variant: m.Variant,
		Step: p.StepTime, Measured: measured, Modelled: modelled, config: c, ops: ops, update: update}, nil
}

// operatorList returns the operator model's configuration and operators
// of m on d, as compute.LawAt lists them (a transformer's attention fused
// where the log or the model's shape says so), and the optimizer's update
// of m on a device as validate predicts it beside them (measuredUpdate).
func operatorList(m *Measured, d *hw.Device, prof *model.Profiles) (compute.Config, []model.Op, func(*hw.Device) units.Seconds, error) {
	mdl, err := prof.Model(m.Model)
	if err != nil {
		return compute.Config{}, nil, nil, err
	}
	if !compute.Covers(d, mdl.Name) {
		return compute.Config{}, nil, nil, fmt.Errorf("the operator model does not cover %s on %s", mdl.Name, d.Name)
	}
	b, seq, err := measuredShape(m, mdl, prof)
	if err != nil {
		return compute.Config{}, nil, nil, err
	}
	c, err := operatorConfig(d, m, seq, nil)
	if err != nil {
		return compute.Config{}, nil, nil, err
	}
	if t, err := model.ProgramTransformer(mdl.Name, c.Framework); err == nil {
		c.FusedAttention = c.FusedAttention || t.FusedAttention
	}
	_, sp, master, err := measuredPrecisions(m.Precision)
	if err != nil {
		return compute.Config{}, nil, nil, err
	}
	ops, err := model.Ops(mdl.Name, model.Shape{Batch: b, Precision: sp, SeqLen: seq, Framework: c.Framework,
		Fused: c.Mode == compute.Compiled, FusedAttention: c.FusedAttention, FuseBNReLU: c.FuseBNReLU})
	if err != nil {
		return compute.Config{}, nil, nil, err
	}
	row := *m
	update := func(d *hw.Device) units.Seconds { return measuredUpdate(mdl, d, &row, sp, master) }
	return c, ops, update, nil
}

// profileKind returns the operator kind a profiled aten operator's device
// time counts under: its class (logs.AtenClass), every foreach operator
// and the gradient scaler's (torch.optim's and GradScaler's steps) under
// model.Update, the copies (autocast's casts and the contiguous copies
// around views) under compute.CastKind, and any other aten operator (the
// bias gradients' sums, fills) under model.Elementwise, the memory-bound
// kind it is closest to; false for a row that is no aten operator (a
// kernel's own row, a framework range), whose time an operator's row
// already holds.
func profileKind(o *logs.OpProfile) (model.OpKind, bool) {
	name, ok := strings.CutPrefix(o.Name, "aten::")
	if !ok {
		return "", false
	}
	switch {
	case o.Class != "":
		return model.OpKind(o.Class), true
	case strings.HasPrefix(name, "_foreach_") || strings.HasPrefix(name, "_amp_"):
		return model.Update, true
	case name == "copy_" || name == "_to_copy":
		return compute.CastKind, true
	}
	return model.Elementwise, true
}

// Carry predicts the configuration's step on device to from the profile's
// measured device times, Habitat's way (Yu et al. 2021, Section 3): each
// kind's measured time scaled by the operator model's ratio of that
// kind's time on to over the profiled device, so that a kind bound by
// compute moves with the peaks and one bound by memory with the
// bandwidths. The measured step scales by the ratio of the carried device
// time to the measured one; the host's time is taken to move with it,
// which holds where the device bounds the step. A kind the model gives no
// time on the profiled device carries at the elementwise ratio (memory
// bound); Carry returns the step and the device time's ratio.
func (pk *ProfileKinds) Carry(to *hw.Device) (step units.Seconds, ratio float64, err error) {
	c := pk.config
	c.Device = to
	there, err := compute.KindTimes(&c, pk.ops)
	if err != nil {
		return 0, 0, err
	}
	there[model.Update] = pk.update(to)
	scale := func(k model.OpKind) float64 {
		if pk.Modelled[k] > 0 {
			return float64(there[k] / pk.Modelled[k])
		}
		if pk.Modelled[model.Elementwise] > 0 {
			return float64(there[model.Elementwise] / pk.Modelled[model.Elementwise])
		}
		return 1
	}
	var measured, carried float64
	for k, t := range pk.Measured {
		measured += float64(t)
		carried += float64(t) * scale(k)
	}
	if !(measured > 0) {
		return 0, 0, fmt.Errorf("%s %s at batch %d: the profile holds no device time", pk.Model, pk.Precision, pk.Batch)
	}
	ratio = carried / measured
	return units.Seconds(float64(pk.Step) * ratio), ratio, nil
}
