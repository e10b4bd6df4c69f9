package plots

import (
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"scaleplan/internal/units"
)

// Span is one interval of chart 6: a device or stage busy with one kind
// of work.
type Span struct {
	Row        string        // device or stage, e.g. "gpu 0" or "stage 2"; rows are drawn top to bottom in order of first appearance
	Kind       string        // kind of work, e.g. "forward", "backward", "all-reduce", "input"
	Start, End units.Seconds // from the start of the step
}

// TimelineData is the input of chart 6.
type TimelineData struct {
	// Subject ends the title, e.g. "GPipe, 4 stages, 8 micro-batches".
	Subject string
	Spans   []Span
}

// kindColors gives the usual kinds of work a fixed colour; other kinds
// take the colours left, in order of first appearance.
var kindColors = map[string]int{
	"compute": 0, "forward": 0, "backward": 5, "recompute": 6,
	"all-reduce": 1, "allreduce": 1, "communication": 1, "send": 1, "receive": 1,
	"input": 2, "update": 3, "optimizer": 3,
}

// Timeline draws chart 6, one simulated step as a timeline: one row per
// device or stage, a coloured bar for every span. The kinds of work a row
// does share its height in lanes (compute above communication above
// input, in order of first appearance), so work that overlaps in time (an
// all-reduce bucket during the backward pass) shows side by side, and the
// idle gaps of a pipeline (fill and drain) show as white. Times are shown
// in µs, ms, s, min or h, whichever suits the end of the step; the time
// axis extends a quarter past the last span for the legend.
//
// Timeline returns an error wrapping ErrNoData without spans, and an
// error naming the span for a time that is not finite, negative, or an
// end before its start.
func Timeline(d TimelineData) (*Chart, error) {
	if len(d.Spans) == 0 {
		return nil, fmt.Errorf("timeline chart: %w: no span", ErrNoData)
	}
	var rows, kinds []string
	rowOf, kindOf := map[string]int{}, map[string]int{}
	rowKinds := map[string]map[string]bool{}
	tmax := 0.0
	for i, s := range d.Spans {
		a, b := float64(s.Start), float64(s.End)
		if !finite(a) || !finite(b) || a < 0 || b < a {
			return nil, fmt.Errorf("timeline chart: span %d (%s, %s): from %v s to %v s: want finite times, 0 <= start <= end", i+1, s.Row, s.Kind, a, b)
		}
		if _, ok := rowOf[s.Row]; !ok {
			rowOf[s.Row] = len(rows)
			rows = append(rows, s.Row)
			rowKinds[s.Row] = map[string]bool{}
		}
		if _, ok := kindOf[s.Kind]; !ok {
			kindOf[s.Kind] = len(kinds)
			kinds = append(kinds, s.Kind)
		}
		rowKinds[s.Row][s.Kind] = true
		tmax = math.Max(tmax, b)
	}
	unit, size := timeUnit(tmax)
	if tmax == 0 {
		unit, size = "s", 1
	}
	colours := assignColours(kinds)
	bd := newBuilder("timeline", withSubject("One training step", d.Subject), "time ("+unit+")", "device or stage")
	p := bd.c.Plot
	p.X.Tick.Marker = linTicks{}
	// Row r (first on top) spans y in [n-1-r-0.4, n-1-r+0.4]; its kinds
	// split that height into lanes in kind order.
	n := len(rows)
	lane := map[string]map[string][2]float64{}
	for _, r := range rows {
		var ks []string
		for _, k := range kinds {
			if rowKinds[r][k] {
				ks = append(ks, k)
			}
		}
		top := float64(n-1-rowOf[r]) + 0.4
		h := 0.8 / float64(len(ks))
		lane[r] = map[string][2]float64{}
		for j, k := range ks {
			lane[r][k] = [2]float64{top - float64(j+1)*h, top - float64(j)*h}
		}
	}
	rs := &rects{}
	byKind := make([][][]float64, len(kinds))
	byKindRows := make([][]string, len(kinds))
	for _, s := range d.Spans {
		l := lane[s.Row][s.Kind]
		a, b := float64(s.Start)/size, float64(s.End)/size
		rs.r = append(rs.r, rect{x0: a, x1: b, y0: l[0], y1: l[1], c: colours[kindOf[s.Kind]]})
		k := kindOf[s.Kind]
		byKind[k] = append(byKind[k], []float64{a, b, l[0], l[1]})
		byKindRows[k] = append(byKindRows[k], s.Row)
	}
	p.Add(rs)
	for k, name := range kinds {
		bd.record(name, "spans", []string{"from " + unit, "to " + unit, "lane bottom", "lane top"}, byKind[k], byKindRows[k])
		p.Legend.Add(name, swatch{colours[k]})
	}
	p.X.Min, p.X.Max = 0, 1.3*tmax/size
	if tmax == 0 {
		p.X.Max = 1
	}
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	p.Y.Tick.Marker = rowTicks(rows)
	p.Y.Tick.Width, p.Y.Tick.Length = 0, 0
	legendAt(p, true, false)
	return bd.finish(), nil
}

// assignColours gives each kind its colour: the fixed one of kindColors,
// else the first palette colour no kind has, cycling when all are taken.
func assignColours(kinds []string) []color.Color {
	used := map[int]bool{}
	idx := make([]int, len(kinds))
	for i, k := range kinds {
		idx[i] = -1
		if c, ok := kindColors[strings.ToLower(k)]; ok {
			idx[i] = c
			used[c] = true
		}
	}
	next := 0
	for i := range kinds {
		if idx[i] >= 0 {
			continue
		}
		for used[next%len(Palette)] && next < 2*len(Palette) {
			next++
		}
		idx[i] = next % len(Palette)
		used[idx[i]] = true
		next++
	}
	out := make([]color.Color, len(kinds))
	for i, c := range idx {
		out[i] = pick(c)
	}
	return out
}

// rowTicks names the rows, first on top, labelling every one up to 24
// rows and evenly fewer beyond.
func rowTicks(rows []string) plot.ConstantTicks {
	n := len(rows)
	step := (n-1)/24 + 1
	ts := make(plot.ConstantTicks, n)
	for r, name := range rows {
		ts[r].Value = float64(n - 1 - r)
		if r%step == 0 {
			ts[r].Label = name
		}
	}
	return ts
}

type rect struct {
	x0, x1, y0, y1 float64
	c              color.Color
}

// rects is a plotter of filled rectangles in data coordinates.
type rects struct{ r []rect }

func (rs *rects) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, r := range rs.r {
		x0, x1, y0, y1 := trX(r.x0), trX(r.x1), trY(r.y0), trY(r.y1)
		if x1-x0 < vg.Points(0.5) {
			x1 = x0 + vg.Points(0.5) // a very short span stays visible
		}
		c.FillPolygon(r.c, c.ClipPolygonXY([]vg.Point{{X: x0, Y: y0}, {X: x0, Y: y1}, {X: x1, Y: y1}, {X: x1, Y: y0}}))
	}
}

func (rs *rects) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin = math.Inf(1), math.Inf(1)
	xmax, ymax = math.Inf(-1), math.Inf(-1)
	for _, r := range rs.r {
		xmin, xmax = math.Min(xmin, r.x0), math.Max(xmax, r.x1)
		ymin, ymax = math.Min(ymin, r.y0), math.Max(ymax, r.y1)
	}
	return xmin, xmax, ymin, ymax
}
