package plots

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Curve is one scenario variant of charts 3 and 4: time to train against
// device count.
type Curve struct {
	Name string    // legend entry, e.g. "staged"
	X    []float64 // device counts, any order
	Y    []float64 // time to train, seconds; Y[i] at X[i]
}

// ScalingData is the input of charts 3 and 4.
type ScalingData struct {
	// Subject says what is trained where, e.g. "ResNet-50 on TSUBAME 3.0";
	// it ends the title.
	Subject string
	// Predicted curves are drawn as lines with dots.
	Predicted []Curve
	// Measured curves (published values) are drawn as squares, in the
	// colour of the predicted curve of the same name when there is one.
	Measured []Curve
}

// point is one (devices, value) pair of a curve.
type point struct{ n, y float64 }

// sorted returns the points of c by device count; it panics if X and Y
// differ in length and returns an error for a value that is not a finite
// number > 0.
func (c Curve) sorted() ([]point, error) {
	if len(c.X) != len(c.Y) {
		panic(badLength)
	}
	if len(c.X) == 0 {
		return nil, fmt.Errorf("curve %q: no points", c.Name)
	}
	ps := make([]point, len(c.X))
	for i := range c.X {
		if !(c.X[i] > 0) || !finite(c.X[i]) || !(c.Y[i] > 0) || !finite(c.Y[i]) {
			return nil, fmt.Errorf("curve %q point %d: devices %v, time %v s: want finite numbers > 0", c.Name, i+1, c.X[i], c.Y[i])
		}
		ps[i] = point{c.X[i], c.Y[i]}
	}
	slices.SortStableFunc(ps, func(a, b point) int { return cmp.Compare(a.n, b.n) })
	return ps, nil
}

// scalingCurves checks d and returns its curves sorted, with their
// colours.
func scalingCurves(d ScalingData) (pred, meas [][]point, pc, mc []int, err error) {
	if len(d.Predicted)+len(d.Measured) == 0 {
		return nil, nil, nil, nil, ErrNoData
	}
	colour := map[string]int{}
	for i, c := range d.Predicted {
		ps, err := c.sorted()
		if err != nil {
			return nil, nil, nil, nil, err
		}
		pred = append(pred, ps)
		pc = append(pc, i)
		if _, ok := colour[c.Name]; !ok {
			colour[c.Name] = i
		}
	}
	next := len(d.Predicted)
	for _, c := range d.Measured {
		ps, err := c.sorted()
		if err != nil {
			return nil, nil, nil, nil, err
		}
		meas = append(meas, ps)
		i, ok := colour[c.Name]
		if !ok {
			i = next
			next++
		}
		mc = append(mc, i)
	}
	return pred, meas, pc, mc, nil
}

// TimeToTrain draws chart 3, time to train against device count on log
// axes: one line per predicted curve, measured values as squares, and the
// ideal linear scaling of the first curve (predicted, else measured) from
// its smallest device count n0,
//
//	T_ideal(n) = T(n0) · n0 / n.
//
// Times are shown in µs, ms, s, min or h, whichever suits the longest.
//
// TimeToTrain panics if a curve's X and Y differ in length. It returns an
// error wrapping ErrNoData without curves, and an error naming the curve
// and point for an empty curve or a value that is not a finite number > 0.
func TimeToTrain(d ScalingData) (*Chart, error) {
	pred, meas, pc, mc, err := scalingCurves(d)
	if err != nil {
		return nil, fmt.Errorf("time-to-train chart: %w", err)
	}
	var ns, ts []float64
	for _, ps := range append(slices.Clone(pred), meas...) {
		for _, p := range ps {
			ns, ts = append(ns, p.n), append(ts, p.y)
		}
	}
	tlo, thi := minMax(ts...)
	unit, size := timeUnit(thi)
	bd := newBuilder("time", withSubject("Time to train vs device count", d.Subject), "devices", "time to train ("+unit+")")
	p := bd.c.Plot
	logAxis(&p.X, pow2Ticks{})
	logAxis(&p.Y, logTicks{})
	nlo, nhi := minMax(ns...)
	setRange(&p.X, nlo, nhi, 0.05)
	ref, refName := pred, d.Predicted
	if len(ref) == 0 {
		ref, refName = meas, d.Measured
	}
	r := ref[0][0]
	ideal := plotter.XYs{{X: p.X.Min, Y: r.y * r.n / p.X.Min / size}, {X: p.X.Max, Y: r.y * r.n / p.X.Max / size}}
	lo := math.Min(tlo, r.y*r.n/nhi) / size
	setRange(&p.Y, lo, thi/size, 0.06)
	legendAt(p, false, true)

	cols := []string{"devices", unit}
	for i, ps := range pred {
		xy := scaled(ps, size)
		l := bd.line(d.Predicted[i].Name, "", cols, xy, lineStyle(pick(pc[i]), nil))
		s := &plotter.Scatter{XYs: l.XYs, GlyphStyle: glyph(draw.CircleGlyph{}, pick(pc[i]), vg.Points(3.5))}
		p.Add(s)
		p.Legend.Add(d.Predicted[i].Name, l, s)
	}
	for i, ps := range meas {
		bd.points(d.Measured[i].Name+" (measured)", measuredLegend(d, i), cols, scaled(ps, size),
			glyph(draw.BoxGlyph{}, pick(mc[i]), vg.Points(4.5)))
	}
	measuredEntry(p, d)
	bd.line("ideal", fmt.Sprintf("ideal linear scaling from %s at %s", refName[0].Name, devicesName(int(r.n))),
		cols, ideal, lineStyle(gray, dashes))
	return bd.finish(), nil
}

func scaled(ps []point, size float64) plotter.XYs {
	xy := make(plotter.XYs, len(ps))
	for i, p := range ps {
		xy[i] = plotter.XY{X: p.n, Y: p.y / size}
	}
	return xy
}

// Efficiency draws chart 4, the scaling efficiency of each curve against
// device count, relative to the curve's own smallest device count n0,
//
//	E(n) = T(n0) · n0 / (T(n) · n),
//
// in percent, with ideal scaling (100 %) dashed. Its input, panics and
// errors are those of TimeToTrain.
func Efficiency(d ScalingData) (*Chart, error) {
	pred, meas, pc, mc, err := scalingCurves(d)
	if err != nil {
		return nil, fmt.Errorf("efficiency chart: %w", err)
	}
	eff := func(ps []point) plotter.XYs {
		xy := make(plotter.XYs, len(ps))
		for i, p := range ps {
			xy[i] = plotter.XY{X: p.n, Y: 100 * ps[0].y * ps[0].n / (p.y * p.n)}
		}
		return xy
	}
	bd := newBuilder("efficiency", withSubject("Scaling efficiency vs device count", d.Subject), "devices", "scaling efficiency (%)")
	p := bd.c.Plot
	logAxis(&p.X, pow2Ticks{})
	p.Y.Tick.Marker = linTicks{}
	var ns, es []float64
	var pe, me []plotter.XYs
	for _, ps := range pred {
		pe = append(pe, eff(ps))
	}
	for _, ps := range meas {
		me = append(me, eff(ps))
	}
	for _, xys := range append(slices.Clone(pe), me...) {
		for _, q := range xys {
			ns, es = append(ns, q.X), append(es, q.Y)
		}
	}
	nlo, nhi := minMax(ns...)
	setRange(&p.X, nlo, nhi, 0.05)
	_, ehi := minMax(es...)
	p.Y.Min, p.Y.Max = 0, math.Max(112, 1.08*ehi)
	legendAt(p, false, true)

	cols := []string{"devices", "%"}
	for i, xy := range pe {
		l := bd.line(d.Predicted[i].Name, "", cols, xy, lineStyle(pick(pc[i]), nil))
		s := &plotter.Scatter{XYs: l.XYs, GlyphStyle: glyph(draw.CircleGlyph{}, pick(pc[i]), vg.Points(3.5))}
		p.Add(s)
		p.Legend.Add(d.Predicted[i].Name, l, s)
	}
	for i, xy := range me {
		bd.points(d.Measured[i].Name+" (measured)", measuredLegend(d, i), cols, xy,
			glyph(draw.BoxGlyph{}, pick(mc[i]), vg.Points(4.5)))
	}
	measuredEntry(p, d)
	bd.line("ideal", "ideal: 100 %", cols, plotter.XYs{{X: p.X.Min, Y: 100}, {X: p.X.Max, Y: 100}}, lineStyle(gray, dashes))
	return bd.finish(), nil
}

// matched reports whether measured curve i has a predicted curve of its
// name, whose legend entry it shares.
func matched(d ScalingData, i int) bool {
	for _, c := range d.Predicted {
		if c.Name == d.Measured[i].Name {
			return true
		}
	}
	return false
}

// measuredLegend is the legend entry of measured curve i: none when a
// predicted curve has its name, else "name (measured)".
func measuredLegend(d ScalingData, i int) string {
	if matched(d, i) {
		return ""
	}
	return d.Measured[i].Name + " (measured)"
}

// measuredEntry adds one grey legend entry for the measured curves that
// share their colour with a predicted one.
func measuredEntry(p *plot.Plot, d ScalingData) {
	for i := range d.Measured {
		if matched(d, i) {
			p.Legend.Add("measured", &plotter.Scatter{GlyphStyle: glyph(draw.BoxGlyph{}, gray, vg.Points(4.5))})
			return
		}
	}
}
