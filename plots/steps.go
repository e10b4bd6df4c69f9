package plots

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"scaleplan/fit"
)

// StepsPoint is one training run of chart 2.
type StepsPoint struct {
	Batch    float64 // global batch, samples per step
	Steps    float64 // steps to reach the target; where the run stopped when not Reached
	Reached  bool    // whether the run reached the target
	Excluded bool    // the curve does not explain it; left out of the fit
}

// StepsData is the input of chart 2.
type StepsData struct {
	// Subject says what was trained, e.g. "resnet50 to 0.759"; it ends
	// the title.
	Subject string
	Points  []StepsPoint
	Fit     *fit.StepsFit // nil draws the points alone
}

// Regime colours: the shading of the three regimes of chart 2.
var regimeColors = map[fit.Regime]int{fit.PerfectScaling: 2, fit.DiminishingReturns: 4, fit.MaximalDataParallelism: 0}

// Steps draws chart 2, steps to reach a target against global batch on
// log-log axes (seed 004): the runs that reached the target as dots
// (crosses where the fit excluded them), those that did not as open
// triangles at the step where they stopped, the fitted curve
//
//	S(B) = S_min · (1 + B_noise/B),
//
// its perfect-scaling asymptote S_min·B_noise/B and its plateau S_min
// dashed, and the three regimes of fit.StepsFit.Regime shaded and named:
// perfect scaling below B = RegimeTolerance·B_noise, maximal data
// parallelism above B_noise/RegimeTolerance, diminishing returns between.
// The batch axis extends past the data, up to eight-fold, so that every
// regime shows.
//
// Steps returns an error wrapping ErrNoData without points, and an error
// naming the point for a batch or step count that is not a finite
// number > 0.
func Steps(d StepsData) (*Chart, error) {
	if len(d.Points) == 0 {
		return nil, fmt.Errorf("steps chart: %w: no run", ErrNoData)
	}
	var bs, ss []float64
	for i, p := range d.Points {
		if !(p.Batch > 0) || !finite(p.Batch) || !(p.Steps > 0) || !finite(p.Steps) {
			return nil, fmt.Errorf("steps chart: point %d: batch %v, steps %v: want finite numbers > 0", i+1, p.Batch, p.Steps)
		}
		bs, ss = append(bs, p.Batch), append(ss, p.Steps)
	}
	f := d.Fit
	if f != nil && !(f.SMin > 0 && finite(f.SMin) && f.BNoise >= 0 && finite(f.BNoise)) {
		f = nil // nothing sensible to draw
	}
	bd := newBuilder("steps", withSubject("Steps to target vs batch size", d.Subject),
		"global batch (samples per step)", "steps to reach the target")
	p := bd.c.Plot
	logAxis(&p.X, pow2Ticks{})
	logAxis(&p.Y, logTicks{})
	blo, bhi := minMax(bs...)
	if f != nil && f.BNoise > 0 {
		// Show the regime boundaries when they are within eight-fold.
		blo = math.Min(blo, math.Max(0.5*fit.RegimeTolerance*f.BNoise, blo/8))
		bhi = math.Max(bhi, math.Min(2*f.BNoise/fit.RegimeTolerance, bhi*8))
	}
	setRange(&p.X, blo, bhi, 0.04)
	xlo, xhi := p.X.Min, p.X.Max
	slo, shi := minMax(ss...)
	if f != nil {
		slo = math.Min(slo, f.SMin)
		shi = math.Max(shi, math.Min(f.Predict(xlo), 8*shi))
	}
	setRange(&p.Y, slo, shi, 0.08)
	p.Y.Max *= math.Pow(p.Y.Max/p.Y.Min, 0.08) // room for the regime names
	legendAt(p, true, false)
	p.Legend.YOffs = -vg.Points(26) // below the regime names

	cols := []string{"batch", "steps"}
	if f != nil && f.BNoise > 0 {
		edges := []float64{xlo, fit.RegimeTolerance * f.BNoise, f.BNoise / fit.RegimeTolerance, xhi}
		regimes := []fit.Regime{fit.PerfectScaling, fit.DiminishingReturns, fit.MaximalDataParallelism}
		for j, r := range regimes {
			a, b := math.Max(edges[j], xlo), math.Min(edges[j+1], xhi)
			if !(b > a) {
				continue
			}
			bd.band(r.String(), a, b, faded(pick(regimeColors[r]), 0x38))
			// Name the regime inside its band, where the text fits:
			// left-aligned in the first band, right-aligned in the last,
			// centred between.
			names := []string{r.String()}
			sty, x, off := noteStyle(gray, draw.XCenter, draw.YTop), math.Sqrt(a*b), vg.Points(0)
			switch j {
			case 0:
				sty.XAlign, x, off = draw.XLeft, a, vg.Points(6)
				names = append([]string{fmt.Sprintf("%s: B ≤ %s", r, sig4(edges[1]))}, names...)
			case len(regimes) - 1:
				sty.XAlign, x, off = draw.XRight, b, -vg.Points(6)
				names = append([]string{fmt.Sprintf("%s: B ≥ %s", r, sig4(edges[2]))}, names...)
			}
			room := vg.Length(0.85 * float64(Width) * math.Log(b/a) / math.Log(xhi/xlo))
			for _, name := range names {
				if sty.Width(name)+vg.Points(12) <= room {
					bd.inset("regime name", cols, plotter.XYs{{X: x, Y: p.Y.Max}}, []string{name}, sty, vg.Point{X: off, Y: -vg.Points(4)})
					break
				}
			}
		}
	}
	if f != nil {
		xs := geomSpace(xlo, xhi, 60)
		curve := make(plotter.XYs, len(xs))
		for j, b := range xs {
			curve[j] = plotter.XY{X: b, Y: f.Predict(b)}
		}
		bd.line("fit", fmt.Sprintf("fit: S_min = %s, B_noise = %s", sig4(f.SMin), sig4(f.BNoise)),
			cols, curve, lineStyle(rgb(0x22, 0x22, 0x22), nil))
		if f.BNoise > 0 {
			// S_min·B_noise/B down to the bottom of the plot.
			end := math.Min(xhi, f.SMin*f.BNoise/p.Y.Min)
			if end > xlo {
				xs := geomSpace(xlo, end, 2)
				line := plotter.XYs{{X: xs[0], Y: f.SMin * f.BNoise / xs[0]}, {X: xs[1], Y: f.SMin * f.BNoise / xs[1]}}
				bd.line("perfect-scaling line", "S_min·B_noise/B", cols, line, lineStyle(pick(regimeColors[fit.PerfectScaling]), dashes))
			}
		}
		bd.line("plateau", "S_min", cols, plotter.XYs{{X: xlo, Y: f.SMin}, {X: xhi, Y: f.SMin}},
			lineStyle(pick(regimeColors[fit.MaximalDataParallelism]), dashes))
	}
	pts := slices.Clone(d.Points)
	slices.SortStableFunc(pts, func(a, b StepsPoint) int { return cmp.Compare(a.Batch, b.Batch) })
	var reached, excluded, stopped plotter.XYs
	for _, pt := range pts {
		xy := plotter.XY{X: pt.Batch, Y: pt.Steps}
		switch {
		case !pt.Reached:
			stopped = append(stopped, xy)
		case pt.Excluded:
			excluded = append(excluded, xy)
		default:
			reached = append(reached, xy)
		}
	}
	dark := rgb(0x11, 0x11, 0x11)
	if len(reached) > 0 {
		bd.points("reached", "reached the target", cols, reached, glyph(draw.CircleGlyph{}, dark, vg.Points(4.5)))
	}
	if len(excluded) > 0 {
		bd.points("excluded", "excluded from the fit", cols, excluded, glyph(draw.CrossGlyph{}, dark, vg.Points(6)))
	}
	if len(stopped) > 0 {
		bd.points("not reached", "did not reach the target", cols, stopped,
			glyph(draw.TriangleGlyph{}, pick(1), vg.Points(6)))
	}
	return bd.finish(), nil
}

// StepsFromReport turns the steps-to-target groups of a fit report into
// chart 2 inputs, one per model, target and labels.
func StepsFromReport(rep *fit.Report) []StepsData {
	var out []StepsData
	for _, sg := range rep.Steps {
		if len(sg.Points) == 0 {
			continue
		}
		subject := sg.Model
		if sg.Target > 0 {
			subject = fmt.Sprintf("%s to %s", cmp.Or(subject, "?"), tickLabel(roundTo(sg.Target, 6)))
		}
		if l := labelString(sg.Labels); l != "" {
			subject += " " + l
		}
		sd := StepsData{Subject: subject, Fit: sg.Fit}
		for _, pt := range sg.Points {
			sd.Points = append(sd.Points, StepsPoint{
				Batch: float64(pt.Batch), Steps: float64(pt.Steps), Reached: pt.Reached, Excluded: pt.Excluded,
			})
		}
		out = append(out, sd)
	}
	return out
}

// labelString is "k=v k=v" in key order.
func labelString(labels map[string]string) string {
	keys := slices.Sorted(maps.Keys(labels))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + labels[k]
	}
	return strings.Join(parts, " ")
}
