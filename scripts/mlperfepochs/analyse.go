package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"scaleplan/fit"
	"scaleplan/internal/calib"
	"scaleplan/internal/mlperfepochs"
	"scaleplan/plots"
)

// Group is the submissions of one benchmark and optimizer family, fitted
// (mlperfepochs.Analyse), with what only this program writes of it.
type Group struct{ *mlperfepochs.Group }

// analyse groups and fits a benchmark's rows as mlperfepochs.Analyse does.
func analyse(bench string, rows []mlperfepochs.Row) ([]*Group, error) {
	gs, err := mlperfepochs.Analyse(bench, rows)
	if err != nil {
		return nil, err
	}
	out := make([]*Group, len(gs))
	for i, g := range gs {
		out[i] = &Group{g}
	}
	return out, nil
}

// entry is the calibration's steps entry of a fitted group: S(B) in steps
// of the benchmark's epoch (for BERT, of one sample per step unit).
func (g *Group) entry() calib.StepsEntry {
	f := g.Fit.Steps
	e := calib.StepsEntry{
		Model: g.Subject.Model, Target: g.Subject.Target,
		Labels: map[string]string{"optimizer": g.Optimizer, "source": "mlperf"},
		SMin:   f.SMin, BNoise: f.BNoise, R2: f.R2, Points: f.Used,
		MaxBatch: int(slices.Max(g.Batches())),
		Source:   "internal/mlperfepochs/" + g.Bench + ".csv",
	}
	if iv := f.SMinInterval; !math.IsNaN(iv[0]) {
		e.SMinInterval = []float64{iv[0], iv[1]}
	}
	if iv := f.BNoiseInterval; !math.IsNaN(iv[0]) {
		e.BNoiseInterval = []float64{iv[0], iv[1]}
	}
	return e
}

// shipped reports whether the group's law goes into the calibration: it
// was fitted and its data bound B_noise away from 0 and infinity (the
// 95 % interval's ends finite and > 0). A group whose batches all sit on
// the law's plateau (ResNet-50 with SGD, 832 to 3,328) leaves B_noise
// unbounded above and is listed in the tables only.
func (g *Group) shipped() bool {
	if g.Fit == nil {
		return false
	}
	iv := g.Fit.Steps.BNoiseInterval
	return iv[0] > 0 && !math.IsInf(iv[1], 0) && iv[1] < 10*slices.Max(g.Batches())
}

func runFit(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("fit", flag.ContinueOnError)
	data := fs.String("data", "internal/mlperfepochs", "directory of the tables extract wrote")
	calOut := fs.String("calibration", "", "write the fitted laws as a calibration file here")
	charts := fs.String("charts", "", "write the charts (PNG and SVG) into this directory")
	table := fs.String("table", "", "write the Markdown tables here (default: standard output)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var groups []*Group
	for _, b := range benchmarks {
		f, err := os.Open(filepath.Join(*data, b.Name+".csv"))
		if err != nil {
			return err
		}
		rows, err := mlperfepochs.ReadRows(f, f.Name())
		f.Close()
		if err != nil {
			return err
		}
		gs, err := analyse(b.Name, rows)
		if err != nil {
			return err
		}
		groups = append(groups, gs...)
	}
	return writeOutputs(groups, *calOut, *charts, *table, stdout)
}

func writeOutputs(groups []*Group, calOut, charts, table string, stdout io.Writer) error {
	if calOut != "" {
		c := &calib.Calibration{Level: 0.95}
		for _, g := range groups {
			if g.shipped() {
				c.Steps = append(c.Steps, g.entry())
			}
		}
		if err := c.Validate(); err != nil {
			return err
		}
		if err := writeFileWith(calOut, func(w io.Writer) error { return writeCalibration(w, c) }); err != nil {
			return err
		}
	}
	if charts != "" {
		var cs []*plots.Chart
		for _, g := range groups {
			if g.Fit == nil {
				continue
			}
			c, err := plots.Epochs(plots.EpochsFromGroup(g.Group))
			if err != nil {
				return err
			}
			cs = append(cs, c)
		}
		if _, err := plots.WriteCharts(charts, cs, nil); err != nil {
			return err
		}
	}
	if table == "" {
		return writeTables(stdout, groups)
	}
	return writeFileWith(table, func(w io.Writer) error { return writeTables(w, groups) })
}

// calibrationNote heads the calibration in place of calib's header.
const calibrationNote = `# Epochs to target against global batch from MLPerf Training results v0.6 to
# v4.1 (closed division), written by "go run ./scripts/mlperfepochs fit" from
# internal/mlperfepochs (docs/mlperf-epochs.md). Each entry is
# S(B) = s_min * (1 + b_noise / B) in optimizer steps, B the global batch;
# epochs to target are S(B) * B / N for N samples per epoch; for BERT,
# S(B) * B is the samples to target. Intervals are at level.
`

// writeCalibration writes c with calibrationNote as its header.
func writeCalibration(w io.Writer, c *calib.Calibration) error {
	var buf strings.Builder
	if err := c.Encode(&buf); err != nil {
		return err
	}
	body := buf.String()
	for strings.HasPrefix(body, "#") {
		_, body, _ = strings.Cut(body, "\n")
	}
	_, err := io.WriteString(w, calibrationNote+body)
	return err
}

// writeTables writes, per benchmark, the fitted laws and the
// leave-one-round-out errors as Markdown.
func writeTables(w io.Writer, groups []*Group) error {
	var b strings.Builder
	b.WriteString("| benchmark | optimizer | submissions | batches | B_noise (95 %) | S_min, steps (95 %) | E_min | R² | rel. resid. | power law k | power resid. |\n")
	b.WriteString("|---|---|---:|---|---|---|---:|---:|---:|---:|---:|\n")
	for _, g := range groups {
		bs := mlperfepochs.Distinct(g.Batches())
		if g.Fit == nil {
			fmt.Fprintf(&b, "| %s | %s | %d | %s | not fitted: %d distinct batches | | | | | | |\n",
				g.Bench, g.Optimizer, len(g.Rows), batchRange(bs), len(bs))
			continue
		}
		f := g.Fit.Steps
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s %s | %s %s | %s | %.3f | %.3f | %.3f | %.3f |\n",
			g.Bench, g.Optimizer, len(g.Rows), batchRange(bs), sig(f.BNoise), interval(f.BNoiseInterval), sig(f.SMin), interval(f.SMinInterval),
			sig(g.Fit.EMin), f.R2, f.S, g.Power.K, g.Power.S)
	}
	b.WriteString("\nLeave one round out: mean |error| (mean signed error) of the held-out round's submissions, law E(B) = E_min(1 + B/B_noise) / power law A·B^k.\n\n")
	b.WriteString("| benchmark | optimizer | round | held out | law | power law |\n|---|---|---|---:|---|---|\n")
	for _, g := range groups {
		for i, h := range g.Holdouts {
			fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s |\n", g.Bench, g.Optimizer, h.Group, h.Held, holdoutText(h), holdoutText(g.PowerHoldouts[i]))
		}
	}
	b.WriteString("\nResiduals of the law by batch against B_noise: mean (E − Ê)/Ê and submissions, points the fit kept.\n\n")
	b.WriteString("| benchmark | optimizer | B < B_noise/4 | B_noise/4 ≤ B < B_noise | B ≥ B_noise |\n|---|---|---|---|---|\n")
	for _, g := range groups {
		if g.Fit == nil {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s |", g.Bench, g.Optimizer)
		for _, c := range g.residualBuckets() {
			if c.n == 0 {
				b.WriteString(" none |")
				continue
			}
			fmt.Fprintf(&b, " %+.1f %% (%d) |", 100*c.mean, c.n)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// bucket is the mean relative residual of n points.
type bucket struct {
	mean float64
	n    int
}

// residualBuckets are the mean relative residuals of the points the fit
// kept, below B_noise/4, from B_noise/4 to B_noise, and above.
func (g *Group) residualBuckets() [3]bucket {
	var out [3]bucket
	f := g.Fit.Steps
	for i, r := range g.Rows {
		if f.Excluded[i] {
			continue
		}
		k := 0
		switch {
		case r.GlobalBatch >= f.BNoise:
			k = 2
		case r.GlobalBatch >= f.BNoise/4:
			k = 1
		}
		out[k].n++
		out[k].mean += f.Residuals[i]
	}
	for k := range out {
		if out[k].n > 0 {
			out[k].mean /= float64(out[k].n)
		}
	}
	return out
}

func holdoutText(h fit.Holdout) string {
	if h.Err != nil {
		return "no fit without it"
	}
	return fmt.Sprintf("%.1f %% (%+.1f %%)", 100*h.MeanAbsErr, 100*h.MeanErr)
}

func batchRange(bs []float64) string {
	if len(bs) == 0 {
		return ""
	}
	return fmt.Sprintf("%s–%s", sig(bs[0]), sig(bs[len(bs)-1]))
}

func interval(iv [2]float64) string {
	if math.IsNaN(iv[0]) {
		return ""
	}
	return fmt.Sprintf("[%s, %s]", sig(iv[0]), sig(iv[1]))
}

// sig is v to 3 significant digits.
func sig(v float64) string {
	return strings.TrimSuffix(fmt.Sprintf("%.3g", v), ".")
}
