package tables

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"scaleplan/engine/dist"
	"scaleplan/internal/benchlog"
	"scaleplan/internal/units"
)

// BenchThroughput is bench throughput's table of meas, the measurements
// of a sweep of base on the tensor backend named backend: a row per
// measurement, its step time and the mean phases of a step in
// milliseconds.
func BenchThroughput(base dist.Config, backend string, meas []*dist.Measurement) *Table {
	t := &Table{Title: fmt.Sprintf("%s throughput, %s", base.ModelName(), backend),
		Header: []string{"workers", "batch", "global_batch", "steps", "step_ms", "std_ms", "samples_per_s", "data_ms", "forward_ms", "backward_ms", "allreduce_ms", "wait_ms", "update_ms"}}
	for _, m := range meas {
		p := m.Phases
		t.Rows = append(t.Rows, []string{strconv.Itoa(m.Config.Workers), strconv.Itoa(m.Config.Batch), strconv.Itoa(m.Config.GlobalBatch()), strconv.Itoa(m.Steps),
			strconv.FormatFloat(m.StepTime*1e3, 'f', 2, 64), strconv.FormatFloat(m.StepTimeStd*1e3, 'f', 2, 64),
			strconv.FormatFloat(m.SamplesPerSec, 'f', 0, 64),
			ms(p.DataWait), ms(p.Forward), ms(p.Backward), ms(p.AllReduce), ms(p.Wait), ms(p.Update)})
	}
	return t
}

// ms formats a duration in milliseconds.
func ms(d time.Duration) string { return strconv.FormatFloat(d.Seconds()*1e3, 'f', 2, 64) }

// BenchSteps is the table of bench steps: a row per global batch of
// batches, with convs its search's results in the same order, on the
// engine configuration base.
func BenchSteps(base dist.Config, batches []int, convs []*dist.Convergence) *Table {
	t := &Table{Title: fmt.Sprintf("%s steps to %.4g validation accuracy", base.ModelName(), base.Eval.Target),
		Header: []string{"global_batch", "learning_rate", "reached", "steps_to_target", "accuracy", "trials", "seconds"}}
	for i, conv := range convs {
		var trials []string
		var secs float64
		for _, tr := range conv.Trials {
			trials = append(trials, fmt.Sprintf("%.4g:%s", tr.LR, trialShort(tr)))
			secs += tr.Time.Seconds()
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(batches[i]), strconv.FormatFloat(conv.LR, 'g', 4, 64), yesNo(conv.Reached),
			strconv.Itoa(conv.StepsToTarget), strconv.FormatFloat(conv.Accuracy, 'f', 4, 64), strings.Join(trials, " "),
			strconv.FormatFloat(secs, 'f', 1, 64)})
	}
	return t
}

// Trial describes a trial of bench steps for its progress line: the step
// at which it reached the target, diverged, or its best accuracy.
func Trial(tr dist.Trial) string {
	switch {
	case tr.Reached:
		return fmt.Sprintf("target at step %d (%.1f s)", tr.Steps, tr.Time.Seconds())
	case tr.Diverged:
		return fmt.Sprintf("diverged by step %d", tr.Steps)
	}
	return fmt.Sprintf("not reached in %d steps, best accuracy %.4f (%.1f s)", tr.Steps, tr.Accuracy, tr.Time.Seconds())
}

// trialShort describes a trial in a table cell: the steps to the target,
// "div" or ">cap".
func trialShort(tr dist.Trial) string {
	switch {
	case tr.Reached:
		return strconv.Itoa(tr.Steps)
	case tr.Diverged:
		return "div"
	}
	return ">" + strconv.Itoa(tr.MaxSteps)
}

// yesNo is a boolean cell.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// BenchTrain is the table of bench train, a row per evaluation of res,
// the result of tr with the recipe named recipe on the tensor backend
// named backend, and the line that follows it in text and Markdown: the
// final accuracy and whether and when it reached the target.
func BenchTrain(recipe, backend string, tr *dist.Training, res *dist.Result) (*Table, string) {
	t := &Table{Title: fmt.Sprintf("%s with recipe %s, %s", tr.Config.ModelName(), recipe, backend),
		Header: []string{"epoch", "step", "test_accuracy", "test_loss", "seconds"}}
	for _, e := range res.Evals {
		t.Rows = append(t.Rows, []string{strconv.FormatFloat(tr.Epoch(e.Step), 'g', 4, 64), strconv.Itoa(e.Step),
			strconv.FormatFloat(e.Accuracy, 'f', 4, 64), strconv.FormatFloat(e.Loss, 'f', 4, 64), strconv.FormatFloat(e.Time.Seconds(), 'f', 1, 64)})
	}
	verdict := "not reached"
	if res.StepsToTarget > 0 {
		verdict = fmt.Sprintf("first reached at step %d", res.StepsToTarget)
	}
	line := fmt.Sprintf("final test accuracy %.4f after %d steps in %.1f s; target %.4g %s", res.FinalAccuracy(), len(res.Steps), res.Time.Seconds(), tr.Target, verdict)
	return t, line
}

// BenchTorch returns the measurement and out-of-memory records of a
// torchbench log read from r as bench throughput --framework torch's
// table, titled with the header's framework and device.
func BenchTorch(r io.Reader) (*Table, error) {
	t := &Table{Header: []string{"model", "precision", "workers", "batch", "global_batch", "steps", "step_ms", "std_ms", "samples_per_s", "peak_memory"}}
	br := benchlog.NewReader(r)
	for {
		rec, err := br.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch rec.Kind {
		case benchlog.KindHeader:
			if m := rec.Machine; m != nil {
				dev := m.DeviceName
				if dev == "" {
					dev = m.CPU
				}
				t.Title = strings.TrimSpace(fmt.Sprintf("torch throughput, %s %s", m.Framework, dev))
			}
		case benchlog.KindMeasurement:
			mem := ""
			if rec.PeakMemory > 0 {
				mem = units.Bytes(rec.PeakMemory).Decimal()
			}
			t.Rows = append(t.Rows, []string{rec.Model, rec.Precision, strconv.Itoa(max(rec.Workers, 1)), strconv.Itoa(rec.Batch),
				strconv.Itoa(rec.EffectiveGlobalBatch()), strconv.Itoa(rec.Steps),
				strconv.FormatFloat(rec.StepTime*1e3, 'f', 2, 64), strconv.FormatFloat(rec.StepTimeStd*1e3, 'f', 2, 64),
				strconv.FormatFloat(rec.SamplesPerSec, 'f', 0, 64), mem})
		case benchlog.KindOOM:
			t.Rows = append(t.Rows, []string{rec.Model, rec.Precision, strconv.Itoa(max(rec.Workers, 1)), strconv.Itoa(rec.Batch),
				strconv.Itoa(rec.EffectiveGlobalBatch()), "", "", "", "out of memory", ""})
		}
	}
	return t, nil
}
