// Package report turns the simulations of a scenario's sweep into what a
// person reads: the data of the scenario charts (time to train and
// scaling efficiency against device count, the step-time breakdown, one
// step as a timeline) that package plots draws, and the self-contained
// HTML page of `scaleplan report`, with its predictions, shares, charts
// as inline SVG and every input.
//
// A Run is one scenario's sweep, simulated (Simulate); Charts and
// AllCharts draw it; Render writes its page. The package maps library
// results (scenarios, sim, predict) onto the plain inputs of plots, so
// that plots itself needs none of them.
package report
