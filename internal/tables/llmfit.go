package tables

import (
	"fmt"
	"strconv"

	"scaleplan/internal/calib"
)

// LLMFit returns the table of `scaleplan fit --llm`: per measured layout,
// the measured and predicted steps, the fitted compute factor with its
// interval, and the measured MFU.
func LLMFit(es []calib.LLMEntry) *Table {
	t := &Table{Title: "LLM compute calibration (operator times × factor make the step model match the log)",
		Header: []string{"model", "system", "layout", "micro-batch", "global batch", "sequence", "iterations",
			"measured step (s)", "predicted step (s)", "factor", "factor interval", "MFU (%)"}}
	for _, e := range es {
		iv := "-"
		if len(e.FactorInterval) == 2 {
			iv = fmt.Sprintf("[%.4f, %.4f]", e.FactorInterval[0], e.FactorInterval[1])
		}
		t.Rows = append(t.Rows, []string{e.Model, e.System, e.Layout, strconv.Itoa(e.MicroBatch), strconv.Itoa(e.GlobalBatch),
			strconv.Itoa(e.SeqLen), strconv.Itoa(e.Iterations), fmt.Sprintf("%.4f", float64(e.Step)), fmt.Sprintf("%.4f", float64(e.Predicted)),
			fmt.Sprintf("%.4f", e.Factor), iv, fmt.Sprintf("%.1f", 100*e.MFU)})
	}
	return t
}
