// Package plots draws scaleplan's charts with gonum/plot and writes them
// as PNG and SVG.
//
// # Charts
//
// Each chart is a function from plain data to a *Chart: the *plot.Plot,
// ready to save or adjust, and the Series it draws. The inputs are types
// of this package (or, for the fitted laws, of package fit), so that any
// source of numbers — a fit report, a simulation, a published table — can
// be drawn.
//
//  1. [Throughput]: throughput vs global batch, the measured points with
//     ± one standard deviation, the fitted law v = b / (b/v0 + t) and its
//     asymptote v0, one colour per device count (seed 003).
//  2. [Steps]: steps to target vs global batch, log-log, the runs, the
//     curve S(B) = S_min (1 + B_noise/B), its perfect-scaling line
//     S_min·B_noise/B and plateau S_min, the three regimes shaded and
//     named (seed 004); runs that missed the target as open triangles.
//  3. [TimeToTrain]: time to train vs device count, log-log, one line per
//     scenario variant, published values as squares, against ideal linear
//     scaling T(n0)·n0/n (seed 001).
//  4. [Efficiency]: scaling efficiency E(n) = T(n0)·n0 / (T(n)·n), in %.
//  5. [StepBreakdown]: the time of one step as stacked bars per
//     configuration: compute, exposed communication, exposed input,
//     bubble, straggler.
//  6. [Timeline]: one step as a timeline, a row per device or stage, which
//     shows overlap and a pipeline's fill and drain.
//  7. [Pareto]: the candidate plans' time vs cost, the Pareto front, the
//     chosen plan ringed.
//  8. [Epochs]: epochs to target vs global batch, log-log, a point per
//     submission coloured by MLPerf round with its runs' range, and the
//     law E(B) = E_min (1 + B/B_noise) (fit.Epochs); [EpochsFromGroup]
//     makes its input from a group of mlperfepochs.Analyse, for
//     `scaleplan plot epochs` and scripts/mlperfepochs (docs/mlperf-epochs.md).
//
// ThroughputFromReport and StepsFromReport turn a fit.Report into the
// inputs of charts 1 and 2.
//
// # Style
//
// Every chart has a title, axes labelled with their units and a legend,
// in Liberation Sans at sizes set for the default 800 × 600 pixels
// (TitleSize and the other sizes, in points). Colours come from Palette,
// which people with the common colour-vision deficiencies can tell apart.
// Batch and device axes are logarithmic with ticks at powers of two; other
// log axes have ticks at 1, 2 and 5 times powers of ten. Times are shown
// in the unit that suits them (µs, ms, s, min or h), named in the label.
//
// # Output
//
// Save writes a plot as PNG (at DPI dots per inch) or SVG, by the file's
// extension, through internal/atomicfile: a reader sees the old file or
// the new one, never part of one. WriteAll writes both, dir/base.png and
// dir/base.svg, at Width × Height.
//
// # Data as text
//
// Chart.Text prints what a chart draws: the title, each axis with its
// label, scale and range, and every series with its rows, numbers to six
// significant digits. The tests compare it with golden files, as gonum's
// own plot tests learned that rendered images differ between machines.
//
// # Errors
//
// A chart function returns an error for data it cannot draw — NaN,
// infinities, values <= 0 on a log axis, an end before its start — naming
// the series and point, and an error wrapping ErrNoData when there is
// nothing to draw. It panics when the lengths of slices that go together
// differ (a Curve's X and Y, a Breakdown's Parts and the part names).
package plots
