package plots

import (
	"math"
	"testing"

	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"scaleplan/fit"
	"scaleplan/internal/units"
)

// FuzzCharts builds every chart from four numbers and draws it as PNG and
// SVG: whatever the numbers, a chart function returns a chart or an
// error, and drawing a chart neither panics nor hangs.
func FuzzCharts(f *testing.F) {
	f.Add(1.0, 2.0, 3.0, 4.0)
	f.Add(8.0, 512.0, 0.054, 258.1)
	f.Add(1e-300, 1e300, 1e300, 1e-300)
	f.Add(0.0, -1.0, math.NaN(), math.Inf(1))
	f.Add(5e-324, math.MaxFloat64, 1.0, 1.0)
	f.Add(1.0, 1.0, 1.0, 1.0)
	f.Fuzz(func(t *testing.T, a, b, c, d float64) {
		builds := map[string]func() (*Chart, error){
			"throughput": func() (*Chart, error) {
				return Throughput(ThroughputData{Groups: []ThroughputGroup{{
					Name:   "g",
					Points: []ThroughputPoint{{Batch: a, Throughput: c, Std: math.Abs(d)}, {Batch: b, Throughput: d}},
					OOM:    []float64{b * 2},
					Fit:    &fit.ThroughputFit{V0: d, T: units.Seconds(c)},
				}}})
			},
			"steps": func() (*Chart, error) {
				return Steps(StepsData{
					Points: []StepsPoint{{Batch: a, Steps: c, Reached: true}, {Batch: b, Steps: d}},
					Fit:    &fit.StepsFit{SMin: c, BNoise: d},
				})
			},
			"time": func() (*Chart, error) {
				return TimeToTrain(ScalingData{Predicted: []Curve{{Name: "p", X: []float64{a, b}, Y: []float64{c, d}}}, Measured: []Curve{{Name: "m", X: []float64{b}, Y: []float64{c}}}})
			},
			"efficiency": func() (*Chart, error) {
				return Efficiency(ScalingData{Predicted: []Curve{{Name: "p", X: []float64{a, b}, Y: []float64{c, d}}}})
			},
			"breakdown": func() (*Chart, error) {
				return StepBreakdown(BreakdownData{Parts: []string{"x", "y"}, Bars: []Breakdown{{Label: "1", Parts: []float64{a, b}}, {Label: "2", Parts: []float64{c, d}}}})
			},
			"timeline": func() (*Chart, error) {
				return Timeline(TimelineData{Spans: []Span{{Row: "r", Kind: "compute", Start: units.Seconds(a), End: units.Seconds(b)}, {Row: "s", Kind: "input", Start: units.Seconds(c), End: units.Seconds(d)}}})
			},
			"pareto": func() (*Chart, error) {
				return Pareto(ParetoData{Points: []PlanPoint{{Label: "x", Time: units.Seconds(a), Cost: b, Feasible: true}, {Label: "y", Time: units.Seconds(c), Cost: d, Feasible: true, Chosen: true}}})
			},
		}
		for name, build := range builds {
			ch, err := build()
			if err != nil {
				if ch != nil {
					t.Errorf("%s: chart and error %v", name, err)
				}
				continue
			}
			drawPlot(ch.Plot, draw.New(vgimg.New(Width/4, Height/4)))
			drawPlot(ch.Plot, draw.New(vgsvg.New(Width, Height)))
			ch.Text()
		}
	})
}
