package plots

import (
	"fmt"
	"math"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// ShareRatio is how many times the shortest step the longest may be before
// StepBreakdown draws each bar as shares of its own step.
const ShareRatio = 10

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
// Where one part comes to dominate as the configurations grow (an input
// pipeline that cannot keep up, say), the longest step is many times the
// shortest and the short bars would be slivers at the foot of the axis.
// When the longest step is more than ShareRatio times the shortest, each
// bar shows instead the share of its own step that each part takes, 0 to
// 100 %, and the step time above it still gives its length.
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
	tmin, tmax := minMax(totals...)
	unit, size := timeUnit(tmax)
	if tmax == 0 {
		unit, size = "s", 1
	}
	share := tmax > ShareRatio*tmin
	xl := d.XLabel
	if xl == "" {
		xl = "devices"
	}
	yl := "time per step (" + unit + ")"
	if share {
		yl = "share of the step (%)"
	}
	bd := newBuilder("breakdown", withSubject("Step time breakdown", d.Subject), xl, yl)
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
		col := unit
		for i, b := range d.Bars {
			vals[i] = b.Parts[j] / size
			if share {
				vals[i], col = shareOf(b.Parts[j], totals[i]), "%"
			}
			rows[i] = []float64{float64(i), vals[i]}
		}
		bc := &plotter.BarChart{Values: vals, Width: w, Color: pick(j), LineStyle: draw.LineStyle{Color: pick(j), Width: vg.Points(0.5)}}
		if below != nil {
			bc.StackOn(below)
		}
		p.Add(bc)
		bd.record(name, "bars", []string{"bar", col}, rows, labels)
		below = bc
	}
	xy := make(plotter.XYs, len(d.Bars))
	texts := make([]string, len(d.Bars))
	for i, t := range totals {
		xy[i] = plotter.XY{X: float64(i), Y: t / size}
		texts[i] = sig4(t / size)
	}
	sty, off := noteStyle(gray, draw.XCenter, draw.YBottom), vg.Point{Y: vg.Points(3)}
	p.X.Min, p.X.Max = -0.6, float64(len(d.Bars))-0.4
	p.Y.Min, p.Y.Max = 0, 1.08*tmax/size
	if share {
		// The step times stand above bars of 100 %, with their unit.
		at := make(plotter.XYs, len(xy))
		for i := range xy {
			at[i] = plotter.XY{X: xy[i].X, Y: 100}
			texts[i] += " " + unit
		}
		p.Add(&plotter.Labels{XYs: at, Labels: texts, TextStyle: repeatStyle(sty, len(at)), Offset: off})
		bd.record("step time", "labels", []string{"bar", unit}, xyRows(xy), texts)
		p.Y.Max = 108
	} else {
		bd.labels("step time", []string{"bar", unit}, xy, texts, sty, off)
		if tmax == 0 {
			p.Y.Max = 1
		}
	}
	headroom(p, len(parts))
	// The legend lists the parts top to bottom as they are stacked.
	legendAt(p, true, true)
	for j := len(parts) - 1; j >= 0; j-- {
		p.Legend.Add(parts[j], swatch{pick(j)})
	}
	return bd.finish(), nil
}

// shareOf returns part as a percentage of total, 0 for a total of 0.
func shareOf(part, total float64) float64 {
	if total == 0 {
		return 0
	}
	return 100 * part / total
}

// repeatStyle returns n copies of sty.
func repeatStyle(sty text.Style, n int) []text.Style {
	s := make([]text.Style, n)
	for i := range s {
		s[i] = sty
	}
	return s
}
