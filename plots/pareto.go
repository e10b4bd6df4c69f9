package plots

import (
	"cmp"
	"fmt"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"scaleplan/internal/units"
)

// PlanPoint is one configuration of chart 7.
type PlanPoint struct {
	Label    string        // e.g. "32 × dgx-a100, batch 4096"
	Time     units.Seconds // time to train
	Cost     float64       // in ParetoData.CostUnit
	Chosen   bool          // the plan's pick
	Feasible bool          // meets the plan's constraints (deadline, budget, memory)
}

// ParetoData is the input of chart 7.
type ParetoData struct {
	// Subject ends the title, e.g. "ResNet-50 to 75.9 %, deadline 2 h".
	Subject string
	// CostUnit is the unit of PlanPoint.Cost, e.g. "USD" or "GPU-hours".
	CostUnit string
	Points   []PlanPoint
}

// Pareto draws chart 7, the plan's configurations as cost against time to
// train: the Pareto front of the feasible ones (no other feasible point
// is both faster and cheaper) as a staircase with its points named, the
// other feasible points as grey dots, infeasible ones as light crosses,
// and the chosen point ringed. An axis is logarithmic when its values
// span a factor of ten or more (and are > 0). Times are shown in µs, ms,
// s, min or h, whichever suits the longest.
//
// A point is on the front when, after sorting by time and then cost, its
// cost is below that of every faster point:
//
//	front = {p feasible : cost(p) < min {cost(q) : q feasible, q before p}}
//
// Pareto returns an error wrapping ErrNoData without points, and an error
// naming the point for a time that is not a finite number > 0 or a cost
// that is not a finite number >= 0.
func Pareto(d ParetoData) (*Chart, error) {
	if len(d.Points) == 0 {
		return nil, fmt.Errorf("pareto chart: %w: no configuration", ErrNoData)
	}
	var ts, cs []float64
	for i, q := range d.Points {
		t := float64(q.Time)
		if !(t > 0) || !finite(t) || !(q.Cost >= 0) || !finite(q.Cost) {
			return nil, fmt.Errorf("pareto chart: point %d (%s): time %v s, cost %v: want finite numbers, time > 0, cost >= 0", i+1, q.Label, t, q.Cost)
		}
		ts, cs = append(ts, t), append(cs, q.Cost)
	}
	tlo, thi := minMax(ts...)
	clo, chi := minMax(cs...)
	unit, size := timeUnit(thi)
	cu := d.CostUnit
	if cu == "" {
		cu = "arbitrary units"
	}
	bd := newBuilder("pareto", withSubject("Time vs cost of the candidate plans", d.Subject), "time to train ("+unit+")", "cost ("+cu+")")
	p := bd.c.Plot
	if thi >= 10*tlo {
		logAxis(&p.X, logTicks{})
	} else {
		p.X.Tick.Marker = linTicks{}
	}
	if clo > 0 && chi >= 10*clo {
		logAxis(&p.Y, logTicks{})
	} else {
		p.Y.Tick.Marker = linTicks{}
	}
	setRange(&p.X, tlo/size, thi/size, 0.06)
	setRange(&p.Y, clo, chi, 0.08)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		if _, log := a.Scale.(plot.LogScale); !log && a.Min < 0 {
			a.Min = 0 // neither time nor cost is negative
		}
	}
	legendAt(p, true, false)

	pts := slices.Clone(d.Points)
	slices.SortStableFunc(pts, func(a, b PlanPoint) int {
		return cmp.Or(cmp.Compare(a.Time, b.Time), cmp.Compare(a.Cost, b.Cost))
	})
	var front, other, infeasible, chosen plotter.XYs
	var frontLabels, chosenLabels []string
	best := 0.0
	for _, q := range pts {
		xy := plotter.XY{X: float64(q.Time) / size, Y: q.Cost}
		switch {
		case !q.Feasible:
			infeasible = append(infeasible, xy)
		case len(front) == 0 || q.Cost < best:
			front = append(front, xy)
			frontLabels = append(frontLabels, q.Label)
			best = q.Cost
		default:
			other = append(other, xy)
		}
		if q.Chosen {
			chosen = append(chosen, xy)
			chosenLabels = append(chosenLabels, q.Label)
		}
	}
	cols := []string{unit, cu}
	if len(infeasible) > 0 {
		bd.points("infeasible", "infeasible", cols, infeasible, glyph(draw.CrossGlyph{}, lightGray, vg.Points(5)))
	}
	if len(other) > 0 {
		bd.points("dominated", "feasible, dominated", cols, other, glyph(draw.CircleGlyph{}, lightGray, vg.Points(4)))
	}
	front = bd.drawable(front)
	if len(front) > 0 {
		c := pick(0)
		l := &plotter.Line{XYs: front, LineStyle: lineStyle(c, nil), StepStyle: plotter.PostStep}
		s := &plotter.Scatter{XYs: front, GlyphStyle: glyph(draw.CircleGlyph{}, c, vg.Points(4.5))}
		p.Add(l, s)
		p.Legend.Add("Pareto front", l, s)
		bd.record("Pareto front", "steps", cols, xyRows(front), frontLabels)
		if len(front) <= 12 {
			bd.labels("front labels", cols, front, frontLabels, noteStyle(gray, draw.XLeft, draw.YBottom), vg.Point{X: vg.Points(6), Y: vg.Points(4)})
		}
	}
	for i, xy := range chosen {
		bd.points("chosen", "chosen: "+chosenLabels[i], cols, plotter.XYs{xy}, glyph(draw.RingGlyph{}, pick(1), vg.Points(10)))
	}
	return bd.finish(), nil
}
