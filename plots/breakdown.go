package plots

import (
	"fmt"
	"math"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// BreakdownParts are the default parts of a step in chart 5, bottom to
// top.
var BreakdownParts = []string{"compute", "exposed communication", "exposed input", "bubble", "straggler"}

// Breakdown is one bar of chart 5: where the time of one step went.
type Breakdown struct {
	Label string    // bar label, e.g. "32" (devices)
	Parts []float64 // seconds per step, one per BreakdownData.Parts, bottom to top
}

// BreakdownData is the input of chart 5.
type BreakdownData struct {
	// Subject ends the title, e.g. "ResNet-50 on TSUBAME 3.0, staged".
	Subject string
	// XLabel labels the bars' axis; "" means "devices".
	XLabel string
	// Parts name the parts of every bar, bottom to top; nil means
	// BreakdownParts.
	Parts []string
	// Bars in the order drawn, left to right.
	Bars []Breakdown
}

// StepBreakdown draws chart 5, the time of one step split into its parts
// as stacked bars, one bar per configuration (device count), with the
// step time printed above each bar. Times are shown in µs, ms, s, min or
// h, whichever suits the longest step.
//
// StepBreakdown panics if a bar has not one value per part. It returns an
// error wrapping ErrNoData without bars, and an error naming the bar and
// part for a value that is not a finite number >= 0.
func StepBreakdown(d BreakdownData) (*Chart, error) {
	parts := d.Parts
	if parts == nil {
		parts = BreakdownParts
	}
	if len(d.Bars) == 0 {
		return nil, fmt.Errorf("breakdown chart: %w: no bar", ErrNoData)
	}
	totals := make([]float64, len(d.Bars))
	for i, b := range d.Bars {
		if len(b.Parts) != len(parts) {
			panic(badLength)
		}
		for j, v := range b.Parts {
			if !(v >= 0) || !finite(v) {
				return nil, fmt.Errorf("breakdown chart: bar %q: %s %v s: want a finite number >= 0", b.Label, parts[j], v)
			}
			totals[i] += v
		}
		if math.IsInf(totals[i], 0) {
			return nil, fmt.Errorf("breakdown chart: bar %q: the parts add up to more than a float64 holds", b.Label)
		}
	}
	_, tmax := minMax(totals...)
	unit, size := timeUnit(tmax)
	if tmax == 0 {
		unit, size = "s", 1
	}
	xl := d.XLabel
	if xl == "" {
		xl = "devices"
	}
	bd := newBuilder("breakdown", withSubject("Step time breakdown", d.Subject), xl, "time per step ("+unit+")")
	p := bd.c.Plot
	p.Y.Tick.Marker = linTicks{}
	labels := make([]string, len(d.Bars))
	for i, b := range d.Bars {
		labels[i] = b.Label
	}
	p.NominalX(labels...)
	w := vg.Points(math.Min(60, 360/float64(len(d.Bars))))
	var below *plotter.BarChart
	for j, name := range parts {
		vals := make(plotter.Values, len(d.Bars))
		rows := make([][]float64, len(d.Bars))
		for i, b := range d.Bars {
			vals[i] = b.Parts[j] / size
			rows[i] = []float64{float64(i), vals[i]}
		}
		bc := &plotter.BarChart{Values: vals, Width: w, Color: pick(j), LineStyle: draw.LineStyle{Color: pick(j), Width: vg.Points(0.5)}}
		if below != nil {
			bc.StackOn(below)
		}
		p.Add(bc)
		bd.record(name, "bars", []string{"bar", unit}, rows, labels)
		below = bc
	}
	xy := make(plotter.XYs, len(d.Bars))
	texts := make([]string, len(d.Bars))
	for i, t := range totals {
		xy[i] = plotter.XY{X: float64(i), Y: t / size}
		texts[i] = sig4(t / size)
	}
	bd.labels("step time", []string{"bar", unit}, xy, texts, noteStyle(gray, draw.XCenter, draw.YBottom), vg.Point{Y: vg.Points(3)})
	p.X.Min, p.X.Max = -0.6, float64(len(d.Bars))-0.4
	p.Y.Min, p.Y.Max = 0, 1.08*tmax/size
	if tmax == 0 {
		p.Y.Max = 1
	}
	headroom(p, len(parts))
	// The legend lists the parts top to bottom as they are stacked.
	legendAt(p, true, true)
	for j := len(parts) - 1; j >= 0; j-- {
		p.Legend.Add(parts[j], swatch{pick(j)})
	}
	return bd.finish(), nil
}
