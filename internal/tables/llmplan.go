package tables

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/plan"
	"scaleplan/predict"
)

// LLMPlanReport is what `scaleplan plan --llm` prints: the summary, the
// best layouts and the breakdown of the best one's step.
type LLMPlanReport struct{ p plan.LLMPlan }

// LLMPlan returns the report of p.
func LLMPlan(p plan.LLMPlan) *LLMPlanReport { return &LLMPlanReport{p: p} }

// Write prints the report in format: in json and csv the tables
// "layouts", "breakdown" and "summary"; in text and md the summary, the
// layouts and the breakdown.
func (r *LLMPlanReport) Write(w io.Writer, format string) error {
	summary := r.summary()
	layouts := r.layouts()
	parts := r.breakdown()
	if format == "json" || format == "csv" {
		st := &Table{Header: []string{"summary"}}
		for _, l := range summary {
			st.Rows = append(st.Rows, []string{l})
		}
		return Write(w, format, []Named{{Key: "layouts", T: layouts}, {Key: "breakdown", T: parts}, {Key: "summary", T: st}})
	}
	for _, l := range summary {
		fmt.Fprintf(w, "%s%s\n", Bullet(format), l)
	}
	fmt.Fprintln(w)
	if err := layouts.Write(w, format); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return parts.Write(w, format)
}

// summary says what was searched and how the step is modelled.
func (r *LLMPlanReport) summary() []string {
	p := r.p
	res := p.Result
	out := []string{
		fmt.Sprintf("%s on %s GPUs of %s (up to %d nodes of %d %s), global batch %s sequences of %d tokens",
			p.Model, ints(p.GPUs), p.System, p.Nodes, p.GPUsPerNode, p.Device, ints(p.GlobalBatches), p.SeqLen),
		fmt.Sprintf("%d valid layouts (GPUs × batch × TP × sequence parallel × PP × virtual stages × DP × CP × EP × micro-batch × recompute × ZeRO): %d fit memory, %d do not",
			res.Layouts, res.Fit, res.TooLarge),
		fmt.Sprintf("step time: analytic Megatron-LM schedule; compute by the %s in %s; MFU of the bf16 peak %v; collectives as NCCL runs them on the system's network (docs/llm.md)",
			p.Compute, precisionNote(p.Precision), p.Peak),
	}
	if c := p.Calibration; c != nil {
		iv := ""
		if len(c.FactorInterval) == 2 {
			iv = fmt.Sprintf(" [%.3f, %.3f]", c.FactorInterval[0], c.FactorInterval[1])
		}
		out = append(out, fmt.Sprintf("compute calibrated from %s: operator times × %.3f%s, fitted to %s with %s on %s (measured step %v, MFU %.1f%%)",
			p.CalibrationFile, c.Factor, iv, c.Model, c.Layout, c.System, c.Step, 100*c.MFU))
	}
	if p.Tokens > 0 {
		out = append(out, fmt.Sprintf("token budget %.4g", p.Tokens))
	}
	if p.Deadline > 0 || p.MaxGPUHours > 0 {
		out = append(out, fmt.Sprintf("deadline %s, budget %s: %d layouts that fit miss them; ranked %s",
			noneUnless(p.Deadline > 0, predict.Duration(p.Deadline)), noneUnless(p.MaxGPUHours > 0, units.FormatNumber(p.MaxGPUHours)+" GPU-hours"),
			res.Missed, rankedBy(p.Deadline > 0)))
	}
	if p.BeyondSystem {
		out = append(out, fmt.Sprintf("%d nodes exceed the system's: the plan is for a larger cluster of the same nodes and fabric", p.Nodes))
	}
	return out
}

// precisionNote says what runs at precision p.
func precisionNote(p hw.Precision) string {
	if p == hw.FP8 {
		return "fp8 in Transformer Engine's linear layers, bf16 elsewhere"
	}
	return "bf16"
}

// ints joins xs with commas.
func ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// noneUnless returns s when ok, else "none".
func noneUnless(ok bool, s string) string {
	if ok {
		return s
	}
	return "none"
}

// rankedBy says how the layouts are ranked.
func rankedBy(deadline bool) string {
	if deadline {
		return "cheapest first"
	}
	return "fastest first"
}

// layouts lists the best layouts, best first.
func (r *LLMPlanReport) layouts() *Table {
	p := r.p
	t := &Table{Title: "Layouts, " + rankedBy(p.Deadline > 0), Header: []string{"gpus", "batch", "tp", "sp", "pp", "v", "dp", "cp", "ep",
		"micro-batch", "recompute", "zero", "step (s)", "tokens/s", "MFU (%)", "memory (GiB)", "time to train", "GPU-hours", "bottleneck"}}
	for _, c := range p.Result.Best {
		l, s := c.Layout, c.Step
		train, hours := "-", "-"
		if c.Steps > 0 {
			train, hours = predict.Duration(c.TrainTime), units.FormatNumber(c.GPUHours)
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(l.World()), strconv.Itoa(l.GlobalBatch),
			strconv.Itoa(l.TP), strconv.FormatBool(l.SequenceParallel), strconv.Itoa(l.PP),
			strconv.Itoa(max(l.VirtualStages, 1)), strconv.Itoa(l.DP), strconv.Itoa(l.CP), strconv.Itoa(l.EP),
			strconv.Itoa(l.MicroBatch), string(l.Recompute), string(l.Sharding),
			strconv.FormatFloat(float64(s.Time), 'f', 3, 64), units.FormatNumber(s.TokensPerSecond()),
			strconv.FormatFloat(100*s.MFU(p.Peak, l.World()), 'f', 1, 64),
			strconv.FormatFloat(float64(c.Memory.Peak.Total())/float64(units.GiB), 'f', 1, 64), train, hours, s.Bottleneck()})
	}
	return t
}

// breakdown splits the best layout's step into its parts.
func (r *LLMPlanReport) breakdown() *Table {
	t := &Table{Title: "Step of the best layout, by part", Header: []string{"part", "time (s)", "share (%)"}}
	if len(r.p.Result.Best) == 0 {
		return t
	}
	s := r.p.Result.Best[0].Step
	for _, part := range s.Parts() {
		t.Rows = append(t.Rows, []string{part.Name, strconv.FormatFloat(float64(part.Time), 'f', 4, 64),
			strconv.FormatFloat(100*float64(part.Time/s.Time), 'f', 1, 64)})
	}
	return t
}
