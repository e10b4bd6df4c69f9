package cmd

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"scaleplan/fit/logs"
	"scaleplan/internal/benchlog"
	"scaleplan/internal/calib"
	"scaleplan/internal/tables"
	"scaleplan/internal/units"
	"scaleplan/llm"
	"scaleplan/plan"
)

// runFitLLM is `scaleplan fit --llm MODEL --system SYSTEM LOG...`: the
// compute factor of each measurement of the logs (plan.FitLLM), written
// as llm entries with --out.
func runFitLLM(c *cli.Context, args []string, format string) error {
	name, system := c.String("llm"), c.String("system")
	if system == "" || len(args) == 0 {
		return usagef("fit --llm %s: want --system SYSTEM (the catalogue system the log ran on) and a LOG", name)
	}
	if err := checkOutputs("fit", flagPaths(c.String, "out"), commandInputs(c, "LOG", args)); err != nil {
		return err
	}
	lgs, err := readFitLogs(c, args)
	if err != nil {
		return err
	}
	var es []calib.LLMEntry
	for _, lg := range lgs {
		for i, r := range lg.Records {
			if r.Kind != benchlog.KindMeasurement {
				continue
			}
			e, err := fitLLMRecord(c, lg, r)
			if err != nil {
				return fmt.Errorf("fit --llm: %s:%d: %w", lg.Name, lg.Lines[i], err)
			}
			es = append(es, e)
		}
	}
	if len(es) == 0 {
		return fmt.Errorf("fit --llm: no measurement in %s: want a Megatron-LM, torchtitan or DeepSpeed log with timed iterations", strings.Join(args, ", "))
	}
	if err := tables.Write(c.App.Writer, format, []tables.Named{{Key: "llm", T: tables.LLMFit(es)}}); err != nil {
		return err
	}
	if out := c.String("out"); out != "" {
		if err := (&calib.Calibration{LLM: es}).WriteFile(out); err != nil {
			return err
		}
		fmt.Fprintf(c.App.ErrWriter, "fit: wrote %d llm entries to %s: plan --llm --calibration %s applies their factor\n", len(es), out, out)
	}
	return nil
}

// fitLLMRecord fits the compute factor of measurement r of lg: its
// layout the log's (LayoutLabel) or --layout's, its batches and sequence
// length the log's, its intervals the run's logged lines at its global
// batch, else the record's mean as one.
func fitLLMRecord(c *cli.Context, lg *logs.Log, r benchlog.Record) (calib.LLMEntry, error) {
	if r.Precision == "fp32" {
		return calib.LLMEntry{}, fmt.Errorf("precision fp32: the LLM step model computes in bf16 (or fp16)")
	}
	var l llm.Layout
	spec := r.Labels[logs.LayoutLabel]
	if s := c.String("layout"); s != "" {
		spec = s
	}
	if spec == "" {
		spec = fmt.Sprintf("tp1 pp1 cp1 dp%d", r.Workers) // DeepSpeed prints none: data parallel
	}
	if err := plan.ParseLayout(spec, &l); err != nil {
		return calib.LLMEntry{}, err
	}
	l.MicroBatch, l.GlobalBatch = r.Batch, r.EffectiveGlobalBatch()
	if s, ok := strings.CutPrefix(r.Labels[calib.SampleLabel], "sequence-"); ok {
		l.SeqLen, _ = strconv.Atoi(s)
	}
	var ivs []plan.LLMInterval
	for _, run := range lg.Runs {
		if run.Run != r.Run {
			continue
		}
		for _, iv := range run.Intervals {
			if iv.GlobalBatch == r.GlobalBatch {
				ivs = append(ivs, plan.LLMInterval{Iterations: iv.Iterations, Step: iv.Step})
			}
		}
	}
	if len(ivs) == 0 {
		ivs = []plan.LLMInterval{{Iterations: max(r.Steps, 1), Step: units.Seconds(r.StepTime)}}
	}
	return plan.FitLLM(plan.LLMFitRequest{Model: c.String("llm"), System: c.String("system"), Layout: l, Intervals: ivs, Source: lg.Name})
}
