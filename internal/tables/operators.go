package tables

import (
	"strconv"
	"strings"

	"scaleplan/internal/units"
	"scaleplan/validate"
)

// OperatorsFit is fit --operators' table: one row per device, framework
// mode and figure (each operator class's efficiency, the host's cost per
// kernel and per step, the device's time per kernel) with its default, the fitted value and interval, and the rows'
// mean error of the step time before and after.
func OperatorsFit(fits []validate.OperatorsFit) []Named {
	t := &Table{
		Title:  "Operator classes (least squares of ln(t_model/t_measured) over every row of a device and mode): each class's efficiency and the host's cost per kernel",
		Header: []string{"device", "mode", "rows", "models", "figure", "default", "fitted", "95%", "error before", "error after", "note"},
		Units:  map[string]string{"error before": "percent", "error after": "percent"},
	}
	for _, f := range fits {
		e := f.Entry
		for i, p := range f.Fit.Params {
			val, iv, note := Num(f.Fit.Values[i]), "—", ""
			if lo, hi := f.Fit.Low[i], f.Fit.High[i]; lo == lo && hi == hi {
				iv = "[" + Num(lo) + ", " + Num(hi) + "]"
			}
			name, def := p.Name, Num(p.Default)
			switch p.Name {
			case "launch":
				name = "launch (µs per kernel)"
			case "step":
				name, def = "host (µs per step)", "0"
			case "kernel":
				name, def = "device (µs per kernel)", Num(float64(validate.UncalibratedKernelTime/units.Microsecond))
			}
			switch {
			case p.Fixed:
				note = "measured: the host table's cuda_op (--host), held, not fitted"
			case f.Fit.Collinear != nil && f.Fit.Collinear[i]:
				note = "undetermined: the rows depend on it as on a figure above; the default is kept"
			case f.Fit.Unresolved != nil && f.Fit.Unresolved[i]:
				note = "undetermined: its fitted 95% interval spans more than a factor 10; the default is kept"
			case f.Fit.Undetermined[i]:
				note = "undetermined: no row depends on it; the default is kept"
			}
			t.Rows = append(t.Rows, []string{e.Device, string(f.Mode), strconv.Itoa(e.Rows), strings.Join(e.Models, " "),
				name, def, val, iv, Percent(e.ErrorBefore), Percent(e.Error), note})
		}
	}
	return []Named{{Key: "operators", T: t}}
}
