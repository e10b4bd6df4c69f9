package tables

import (
	"fmt"
	"strconv"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/validate"
)

// Profiles is validate --profile's table: a row per profiled
// configuration, its step and each group of operator kinds'
// (validate.ProfileGroups) device time a step, measured by the profile and
// modelled by the operator model, in milliseconds; with a device to
// carry to (to, nil for none), the model's ratio of the device time there
// to the profiled device's and the step it predicts there
// (validate.ProfileKinds.Carry).
func Profiles(rows []*validate.ProfileKinds, to *hw.Device) (*Table, error) {
	t := &Table{Title: "Device time per operator kind a step: the profile's, measured, and the operator model's (uncalibrated)",
		Header: []string{"device", "model", "precision", "variant", "batch", "step (ms)"}}
	for _, g := range validate.ProfileGroups {
		n := Snake(g.Name)
		t.Header = append(t.Header, n+"_measured (ms)", n+"_modelled (ms)")
	}
	if to != nil {
		t.Header = append(t.Header, "carried_to", "device_time_ratio", "carried_step (ms)")
	}
	milli := func(s units.Seconds) string { return strconv.FormatFloat(1e3*float64(s), 'f', 2, 64) }
	for _, pk := range rows {
		r := []string{pk.Device.Name, pk.Model, pk.Precision, Dash(pk.Variant), strconv.Itoa(pk.Batch), milli(pk.Step)}
		for _, g := range validate.ProfileGroups {
			m, p := pk.Group(g)
			r = append(r, milli(m), milli(p))
		}
		if to != nil {
			step, ratio, err := pk.Carry(to)
			if err != nil {
				return nil, fmt.Errorf("%s %s at batch %d: carrying to %s: %w", pk.Model, pk.Precision, pk.Batch, to.Name, err)
			}
			r = append(r, to.Name, strconv.FormatFloat(ratio, 'f', 3, 64), milli(step))
		}
		t.Rows = append(t.Rows, r)
	}
	return t, nil
}
