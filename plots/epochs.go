package plots

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"scaleplan/fit"
	"scaleplan/internal/mlperfepochs"
)

// roundGlyphs are the shapes of the rounds' points, a shape for each
// turn through Palette's colours but its first (the E_min line's).
var roundGlyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.BoxGlyph{}}

// EpochsPoint is one submission of the epochs chart: the mean and range
// of its runs' epochs to target at its global batch.
type EpochsPoint struct {
	Batch    float64 // global batch, samples per step
	Epochs   float64 // mean epochs (or samples) to target over the runs
	Min, Max float64 // range over the runs; both 0 when unknown
	Round    string  // MLPerf round, e.g. "v3.1"; one colour per round
}

// EpochsData is the input of the epochs chart.
type EpochsData struct {
	// Subject says what was trained, e.g. "resnet lars"; it ends the
	// title.
	Subject string
	// Unit is what Epochs counts: "epochs" or "samples".
	Unit   string
	Points []EpochsPoint
	Fit    *fit.EpochsFit // nil draws the points alone
}

// Epochs draws epochs to target against global batch on log-log axes:
// each submission a dot coloured by its round with a bar over its runs'
// range, and the fitted law
//
//	E(B) = E_min · (1 + B/B_noise)
//
// with its small-batch plateau E_min dashed.
//
// Epochs returns an error wrapping ErrNoData without points, and one naming
// the point for a batch or epoch count that is not a finite number > 0.
func Epochs(d EpochsData) (*Chart, error) {
	if len(d.Points) == 0 {
		return nil, fmt.Errorf("epochs chart: %w: no submission", ErrNoData)
	}
	var bs, es []float64
	for i, p := range d.Points {
		if !(p.Batch > 0) || !finite(p.Batch) || !(p.Epochs > 0) || !finite(p.Epochs) {
			return nil, fmt.Errorf("epochs chart: point %d: batch %v, epochs %v: want finite numbers > 0", i+1, p.Batch, p.Epochs)
		}
		bs, es = append(bs, p.Batch), append(es, p.Epochs)
		if p.Min > 0 && p.Max >= p.Min && finite(p.Max) {
			es = append(es, p.Min, p.Max)
		}
	}
	unit := d.Unit
	if unit == "" {
		unit = "epochs"
	}
	bd := newBuilder("epochs", withSubject("Epochs to target vs global batch", d.Subject),
		"global batch (samples per step)", unit+" to reach the target")
	p := bd.c.Plot
	logAxis(&p.X, pow2Ticks{})
	logAxis(&p.Y, logTicks{})
	blo, bhi := minMax(bs...)
	setRange(&p.X, blo, bhi, 0.04)
	elo, ehi := minMax(es...)
	f := d.Fit
	if f != nil && !(f.EMin > 0 && finite(f.EMin) && f.Steps != nil) {
		f = nil
	}
	if f != nil {
		elo = math.Min(elo, f.EMin)
		ehi = math.Max(ehi, math.Min(f.Predict(p.X.Max), 4*ehi))
	}
	setRange(&p.Y, elo, ehi, 0.08)
	legendAt(p, true, true)
	cols := []string{"batch", unit}
	if f != nil {
		xs := geomSpace(p.X.Min, p.X.Max, 60)
		curve := make(plotter.XYs, len(xs))
		for j, b := range xs {
			curve[j] = plotter.XY{X: b, Y: f.Predict(b)}
		}
		bd.line("fit", fmt.Sprintf("fit: E_min = %s, B_noise = %s", sig4(f.EMin), sig4(f.Steps.BNoise)),
			cols, curve, lineStyle(rgb(0x22, 0x22, 0x22), nil))
		bd.line("E_min", "E_min", cols, plotter.XYs{{X: p.X.Min, Y: f.EMin}, {X: p.X.Max, Y: f.EMin}},
			lineStyle(pick(0), dashes))
	}
	var rounds []string
	for _, pt := range d.Points {
		if !slices.Contains(rounds, pt.Round) {
			rounds = append(rounds, pt.Round)
		}
	}
	slices.Sort(rounds)
	for i, r := range rounds {
		var xy plotter.XYs
		for _, pt := range d.Points {
			if pt.Round != r {
				continue
			}
			xy = append(xy, plotter.XY{X: pt.Batch, Y: pt.Epochs})
			if pt.Min > 0 && pt.Max > pt.Min && finite(pt.Max) {
				bd.line("range "+r, "", cols, plotter.XYs{{X: pt.Batch, Y: pt.Min}, {X: pt.Batch, Y: pt.Max}},
					draw.LineStyle{Color: pick(i%(len(Palette)-1) + 1), Width: vg.Points(1)})
			}
		}
		name := r
		if name == "" {
			name = "round unknown"
		}
		bd.points(name, name, cols, xy, glyph(roundGlyphs[(i/(len(Palette)-1))%len(roundGlyphs)], pick(i%(len(Palette)-1)+1), vg.Points(3.5)))
	}
	return bd.finish(), nil
}

// EpochsFromGroup is the chart data of a group of MLPerf submissions
// (mlperfepochs.Analyse): one point per submission with its runs' range,
// and the group's fit (nil when the group has too few batches).
func EpochsFromGroup(g *mlperfepochs.Group) EpochsData {
	d := EpochsData{Subject: g.Bench + " " + g.Optimizer, Unit: g.Subject.Unit(), Fit: g.Fit}
	for _, r := range g.Rows {
		d.Points = append(d.Points, EpochsPoint{Batch: r.GlobalBatch, Epochs: r.Mean, Min: r.Min, Max: r.Max, Round: r.Round})
	}
	return d
}
