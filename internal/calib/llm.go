package calib

import (
	"fmt"
	"math"

	"scaleplan/internal/config"
	"scaleplan/internal/units"
)

// LLMEntry is the compute factor fitted to the step times a
// Megatron-LM, torchtitan or DeepSpeed log measured for one transformer,
// system and layout (plan.FitLLM): the multiplier on the operator
// model's times that makes llm's step time of the layout equal the
// measured one. `plan --llm --calibration` applies it to the operators of
// the same device (docs/llm.md), so it carries to other layouts and
// model sizes there.
type LLMEntry struct {
	Model     string `yaml:"model"`               // transformer shape (model.TransformerShapes)
	System    string `yaml:"system"`              // catalogue system the log ran on
	Device    string `yaml:"device"`              // its device kind
	Precision string `yaml:"precision,omitempty"` // compute precision; "" bf16
	// Layout is the parallel layout ("tp2 pp1 cp1 dp4"); MicroBatch and
	// GlobalBatch are sequences, SeqLen tokens per sequence.
	Layout      string `yaml:"layout"`
	MicroBatch  int    `yaml:"micro_batch"`
	GlobalBatch int    `yaml:"global_batch"`
	SeqLen      int    `yaml:"seq_len"`
	// Step is the measured mean step; Predicted the model's before the
	// factor.
	Step      units.Seconds `yaml:"step"`
	Predicted units.Seconds `yaml:"predicted"`
	// Factor multiplies every operator's time; FactorInterval is its
	// interval at the file's level over the logged intervals' factors,
	// absent with one interval.
	Factor         float64   `yaml:"factor"`
	FactorInterval []float64 `yaml:"factor_interval,flow,omitempty"`
	// MFU is the measured model FLOPs utilisation.
	MFU float64 `yaml:"mfu"`
	// Iterations are the measured iterations (warm-up left out), Lines
	// the log lines (intervals) they came in.
	Iterations int    `yaml:"iterations"`
	Lines      int    `yaml:"lines"`
	Source     string `yaml:"source,omitempty"`
}

// LLMFor returns the first llm entry of c on device at precision ("" or
// "bf16" the same), and whether there is one.
func (c *Calibration) LLMFor(device, precision string) (LLMEntry, bool) {
	norm := func(p string) string {
		if p == "" {
			return "bf16"
		}
		return p
	}
	for _, e := range c.LLM {
		if e.Device == device && norm(e.Precision) == norm(precision) {
			return e, true
		}
	}
	return LLMEntry{}, false
}

// validateLLM adds the problems of c's llm entries to ps.
func (c *Calibration) validateLLM(ps *config.Problems) {
	pos := func(x float64) bool { return x > 0 && !math.IsInf(x, 0) }
	for i, e := range c.LLM {
		p := fmt.Sprintf("llm[%d]", i)
		if e.Model == "" || e.System == "" || e.Device == "" || e.Layout == "" {
			ps.Addf(p, "model %q, system %q, device %q, layout %q: none may be missing", e.Model, e.System, e.Device, e.Layout)
		}
		if !pos(e.Factor) {
			ps.Addf(p+".factor", "%v: must be a finite number > 0", e.Factor)
		}
		checkPair(ps, p+".factor_interval", e.FactorInterval)
		if !pos(float64(e.Step)) || !pos(float64(e.Predicted)) {
			ps.Addf(p+".step", "%v, predicted %v: must be finite times > 0", float64(e.Step), float64(e.Predicted))
		}
		if !(e.MFU > 0 && e.MFU <= 1) {
			ps.Addf(p+".mfu", "%v: must be in (0, 1]", e.MFU)
		}
		if e.Iterations < 1 || e.Lines < 1 {
			ps.Addf(p+".iterations", "%d iterations in %d lines: want at least 1 of each", e.Iterations, e.Lines)
		}
	}
}
