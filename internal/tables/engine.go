package tables

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"scaleplan/calibrate"
	"scaleplan/engine/dist"
	"scaleplan/internal/benchlog"
	"scaleplan/internal/units"
)

// EngineTitle is the title of validate --engine's report for model on
// backend and a machine of cores.
func EngineTitle(model, backend string, cores int) string {
	return fmt.Sprintf("Engine: predicted against measured, %s, %s, %d cores", model, backend, cores)
}

// Engine returns the table of validate --engine, under title: a row per
// configuration of rows, predicted against measured.
func Engine(title string, rows []calibrate.Row) *Table {
	t := &Table{Title: title,
		Header: []string{"workers", "transport", "batch", "global_batch", "predicted_samples_per_s", "measured_samples_per_s", "error (%)",
			"predicted_step_ms", "measured_step_ms", "predicted_exposed_comm_ms", "measured_exposed_comm_ms"}}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{strconv.Itoa(r.Workers), r.Transport, strconv.Itoa(r.Batch), strconv.Itoa(r.Predicted.GlobalBatch),
			strconv.FormatFloat(r.Predicted.SamplesPerSec, 'f', 0, 64), strconv.FormatFloat(r.Measured.SamplesPerSec, 'f', 0, 64),
			signedPct(r.Error), strconv.FormatFloat(float64(r.Predicted.StepTime)*1e3, 'f', 2, 64),
			strconv.FormatFloat(r.Measured.StepTime*1e3, 'f', 2, 64), strconv.FormatFloat(r.PredComm*1e3, 'f', 2, 64),
			strconv.FormatFloat(r.MeasWait*1e3, 'f', 2, 64)})
	}
	return t
}

// EngineCalibration states cal, a line each, as text and Markdown print
// it above the table of validate --engine: each sweep's law, each
// sweep's jitter, the rounds, the cores and the links.
func EngineCalibration(cal *calibrate.Calibration) []string {
	var lines []string
	for _, sw := range cal.Sweeps {
		law := sw.Law
		v0 := fmt.Sprintf("%.0f samples/s", law.V0)
		if law.V0Unbounded {
			v0 = "unbounded (the step time did not grow with the batch)"
		}
		lines = append(lines, fmt.Sprintf("%s, %d batches): v0 = %s, t = %.2f ms, R² = %.4f; update %.2f ms, forward share %.2f",
			sw.Text(cal.Cores, len(cal.Sweeps) > 1), law.Used, v0, float64(law.T)*1e3, law.R2, sw.Update*1e3, sw.Forward))
	}
	lines = append(lines, jitterLines(cal)...)
	perRound, warmed := "", ""
	switch cal.Warm {
	case 0:
	case 1:
		warmed = ", after a warm-up round set aside"
	default:
		warmed = fmt.Sprintf(", after %d warm-up rounds set aside", cal.Warm)
	}
	if cal.Rounds > 1 {
		lines = append(lines, fmt.Sprintf("Every configuration measured in %d alternating rounds, over the timed steps of all of them%s", cal.Rounds, warmed))
		perRound = fmt.Sprintf(", median of %d rounds", cal.Rounds)
	} else if warmed != "" {
		lines = append(lines, fmt.Sprintf("Every configuration measured once%s", warmed))
	}
	if g := cal.Guard; g != nil {
		lines = append(lines, fmt.Sprintf("Cores: %s", g))
	}
	return append(lines, linkLines(cal, perRound)...)
}

// jitterLines states the jitter of each sweep of cal that has one.
func jitterLines(cal *calibrate.Calibration) []string {
	var lines []string
	for _, sw := range cal.Sweeps {
		j := sw.JitterText()
		switch {
		case j == "":
		case len(cal.Sweeps) == 1:
			lines = append(lines, fmt.Sprintf("Jitter (the calibrated worker's spread from step to step, median of the rounds; every simulated worker's compute varies so): %s", j))
		default:
			lines = append(lines, fmt.Sprintf("Jitter of %s (the calibrated worker's spread from step to step, median of the rounds; each simulated worker's compute varies so): %s", calibrate.WorkersText(sw.Serves), j))
		}
	}
	return lines
}

// linkLines states the links of cal, by name, each measured as perRound
// says ("" for one round).
func linkLines(cal *calibrate.Calibration, perRound string) []string {
	names := make([]string, 0, len(cal.Links))
	for n := range cal.Links {
		names = append(names, n)
	}
	slices.Sort(names)
	var lines []string
	for _, n := range names {
		k := cal.Links[n]
		cold := ""
		if k.Evict > 0 {
			cold = fmt.Sprintf(" on buffers out of the cache (%s written before each step)", units.Bytes(k.Evict))
		}
		lines = append(lines, fmt.Sprintf("Link %s (ring step of two ranks%s%s): latency %.1f us, bandwidth %s", n, cold, perRound, k.Latency*1e6, units.BytesPerSec(k.Bandwidth)))
	}
	return lines
}

// EngineSummary is the last lines of validate --engine's report, each
// ending in a newline: the mean absolute errors, how many rows at batch
// >= calibrate.Large are within calibrate.Target, and the worst rows.
func EngineSummary(rows []calibrate.Row) string {
	s := calibrate.SummaryOf(rows)
	where := func(r calibrate.Row) string {
		return fmt.Sprintf("%s%% (%d workers, %s, batch %d)", signedPct(r.Error), r.Workers, r.Transport, r.Batch)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "mean absolute error %.1f%% over %d configurations", 100*s.All.MAE, s.All.N)
	if s.Large.N > 0 {
		fmt.Fprintf(&b, ", %.1f%% over the %d with batch >= %d", 100*s.Large.MAE, s.Large.N, calibrate.Large)
	}
	fmt.Fprintf(&b, "; worst %s\n", where(s.All.Worst))
	if s.Large.N > 0 {
		fmt.Fprintf(&b, "within %.0f%% at batch >= %d: %d of %d; worst there %s\n", 100*calibrate.Target, calibrate.Large, s.Large.Within, s.Large.N, where(s.Large.Worst))
	}
	return b.String()
}

// EngineWorkers names the workers of cfg for validate --engine's
// progress: "2 workers tcp", "4 workers in step over tcp", "2 independent
// workers".
func EngineWorkers(cfg dist.Config) string {
	switch {
	case cfg.InStep:
		return fmt.Sprintf("%d workers in step over %s", cfg.Workers, cfg.Transport)
	case cfg.Independent:
		return fmt.Sprintf("%d independent workers", cfg.Workers)
	}
	return fmt.Sprintf("%d workers %s", cfg.Workers, cfg.Transport)
}

// Machine names the machine of a log's header in a few words: its CPU
// and host, cores and backend.
func Machine(m *benchlog.Machine) string {
	if m == nil {
		return "an unnamed machine"
	}
	return fmt.Sprintf("%s (%d cores, %s)", strings.TrimSpace(m.CPU+" "+m.Host), m.Cores, m.Backend)
}

// WriteEngine prints validate --engine's report: the calibration (in text
// and Markdown), the table of predicted against measured under title, and
// the error summary (in text and Markdown).
func WriteEngine(w io.Writer, format, title string, cal *calibrate.Calibration, rows []calibrate.Row) error {
	text := format == "text" || format == "md"
	if text {
		for _, l := range EngineCalibration(cal) {
			fmt.Fprintln(w, l)
		}
		fmt.Fprintln(w)
	}
	if err := Engine(title, rows).Write(w, format); err != nil {
		return err
	}
	if text && len(rows) > 0 {
		fmt.Fprintln(w)
		fmt.Fprint(w, EngineSummary(rows))
	}
	return nil
}

// ChunkNote returns " in N chunks" for a configuration whose workers run
// each micro-batch in N > 1 chunks (dist.Config.Chunk), else "".
func ChunkNote(cfg dist.Config) string {
	if n := cfg.Chunks(); n > 1 {
		return fmt.Sprintf(" in %d chunks", n)
	}
	return ""
}
