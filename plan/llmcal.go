package plan

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"scaleplan/hw"
	"scaleplan/internal/calib"
	"scaleplan/internal/units"
	"scaleplan/llm"
	"scaleplan/model"
)

// LLMInterval is one logged interval of a training run: the mean step of
// Iterations iterations (a Megatron-LM iteration line covers the log
// interval's iterations).
type LLMInterval struct {
	Iterations int
	Step       units.Seconds
}

// LLMFitRequest asks for the compute factor of a measured layout: the
// transformer Model on System with Layout, measured over Intervals (the
// warm-up left out).
type LLMFitRequest struct {
	Model, System string
	Layout        llm.Layout
	Intervals     []LLMInterval
	// Level is the confidence level of the factor's interval; 0 takes
	// calib.DefaultLevel.
	Level float64
	// Source names the logs, for the entry.
	Source string
	// Catalog is the hardware catalogue; nil takes hw.Default().
	Catalog *hw.Catalog
}

// Factor bounds of the bisection: a step model 100 times off in either
// direction is not a calibration but a wrong model or layout.
const (
	minFactor = 0.01
	maxFactor = 100.0
)

// FitLLM fits the compute factor f of req: the multiplier on every
// operator's time (the operator model's of the system's device in bf16,
// as plan --llm times them) that makes the layout's step time
// (llm.Layout.StepTime) equal each interval's measured step. The step
// time grows with f (compute, the bubble and the compute that hides
// communication all scale with it), so bisection finds f. The entry's
// factor is the iteration-weighted mean of the intervals' factors; its
// interval the Student-t interval of that mean over the intervals
// (n − 1 degrees of freedom), absent with one interval.
func FitLLM(req LLMFitRequest) (calib.LLMEntry, error) {
	if len(req.Intervals) == 0 {
		return calib.LLMEntry{}, fmt.Errorf("llm fit: %s on %s: no measured interval (the log's warm-up is left out)", req.Model, req.System)
	}
	st, err := newLLMStepper(req.Model, req.System, req.Layout, hw.BF16, 0, req.Catalog)
	if err != nil {
		return calib.LLMEntry{}, err
	}
	var fs, ws []float64
	var iters int
	var stepSum float64
	for i, iv := range req.Intervals {
		if iv.Iterations < 1 || !(iv.Step > 0) || math.IsInf(float64(iv.Step), 0) {
			return calib.LLMEntry{}, fmt.Errorf("llm fit: interval %d: %d iterations of %v: want at least 1 of a finite step > 0", i+1, iv.Iterations, float64(iv.Step))
		}
		f, err := st.factor(iv.Step)
		if err != nil {
			return calib.LLMEntry{}, err
		}
		fs, ws = append(fs, f), append(ws, float64(iv.Iterations))
		iters += iv.Iterations
		stepSum += float64(iv.Step) * float64(iv.Iterations)
	}
	level := req.Level
	if level == 0 {
		level = calib.DefaultLevel
	}
	mean, iv := weightedInterval(fs, ws, level)
	pred, err := st.step(1)
	if err != nil {
		return calib.LLMEntry{}, err
	}
	step := units.Seconds(stepSum / float64(iters))
	l := req.Layout
	mfu := pred.ModelFLOPs / (float64(step) * float64(st.h.Peak) * float64(l.World()))
	if !(mfu <= 1) {
		return calib.LLMEntry{}, fmt.Errorf("llm fit: step %v of %s with %s: MFU %.0f%% is above 100%%: a wrong model, sequence length or layout", step, st.t.Name, LayoutString(l), 100*mfu)
	}
	return calib.LLMEntry{Model: st.t.Name, System: st.system, Device: st.dev.Name, Precision: "bf16",
		Layout: LayoutString(l), MicroBatch: l.MicroBatch, GlobalBatch: l.GlobalBatch, SeqLen: st.t.SeqLen,
		Step: step, Predicted: pred.Time, Factor: mean, FactorInterval: iv,
		MFU:        pred.ModelFLOPs / (float64(step) * float64(st.h.Peak) * float64(l.World())),
		Iterations: iters, Lines: len(fs), Source: req.Source}, nil
}

// LLMStep returns the step of layout l of req.Model on req.System as LLM
// times it (the operator model, or the roofline at req.Efficiency), its
// operator times scaled by the factor of req.Calibrations' entry for the
// system's device. l's tensor groups must fit a node.
func LLMStep(req LLMRequest, l llm.Layout) (llm.StepTime, error) {
	st, err := newLLMStepper(req.Model, req.System, l, cmp.Or(req.Precision, hw.BF16), req.Efficiency, req.Catalog)
	if err != nil {
		return llm.StepTime{}, err
	}
	cal, _, err := llmCalibration(req.Calibrations, st.dev.Name, cmp.Or(req.Precision, hw.BF16))
	if err != nil {
		return llm.StepTime{}, err
	}
	f := 1.0
	if cal != nil {
		f = cal.Factor
	}
	return st.step(f)
}

// LayoutString writes l's degrees as the Megatron-LM reader labels them:
// "tp2 pp1 cp1 dp4".
func LayoutString(l llm.Layout) string {
	return fmt.Sprintf("tp%d pp%d cp%d dp%d", l.TP, l.PP, max(l.CP, 1), l.DP)
}

// ParseLayout reads "tp2 pp1 cp1 dp4" (any order; cp 1 when absent, and
// "ep", "v" for expert parallelism and virtual stages, a sharding name
// such as "zero1" or "distopt") into l's degrees and sharding.
func ParseLayout(s string, l *llm.Layout) error {
	l.CP, l.EP = 1, 1
	for _, f := range strings.Fields(s) {
		if sh := llm.Sharding(f); slices.Contains(layoutShardings, sh) {
			l.Sharding = sh
			continue
		}
		i := strings.IndexAny(f, "0123456789")
		var n int
		if i <= 0 {
			return fmt.Errorf("layout %q: %q: want tpN, ppN, cpN, dpN, epN or vN", s, f)
		}
		if _, err := fmt.Sscanf(f[i:], "%d", &n); err != nil || n < 1 || fmt.Sprint(n) != f[i:] {
			return fmt.Errorf("layout %q: %q: want a degree of 1 or more", s, f)
		}
		switch f[:i] {
		case "tp":
			l.TP = n
		case "pp":
			l.PP = n
		case "cp":
			l.CP = n
		case "dp":
			l.DP = n
		case "ep":
			l.EP = n
		case "v":
			l.VirtualStages = n
		default:
			return fmt.Errorf("layout %q: %q: want tpN, ppN, cpN, dpN, epN or vN", s, f)
		}
	}
	if l.TP < 1 || l.PP < 1 || l.DP < 1 {
		return fmt.Errorf("layout %q: want tp, pp and dp degrees", s)
	}
	return nil
}

// layoutShardings are the shardings ParseLayout reads.
var layoutShardings = []llm.Sharding{llm.ShardNone, llm.ShardZeRO1, llm.ShardZeRO2, llm.ShardZeRO3, llm.ShardFSDP, llm.ShardHSDP, llm.ShardDistOpt}

// weightedInterval returns the w-weighted mean of x and its Student-t
// interval at level over len(x) − 1 degrees of freedom, the effective
// variance of the weighted mean Σw²(x−m)²/(Σw)² · n/(n−1); nil with one
// value.
func weightedInterval(x, w []float64, level float64) (float64, []float64) {
	var sw, sx float64
	for i := range x {
		sw += w[i]
		sx += w[i] * x[i]
	}
	m := sx / sw
	n := float64(len(x))
	if len(x) < 2 {
		return m, nil
	}
	var v float64
	for i := range x {
		v += w[i] * w[i] * (x[i] - m) * (x[i] - m)
	}
	se := math.Sqrt(v / (sw * sw) * n / (n - 1))
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(0.5 + level/2)
	return m, []float64{max(m-q*se, 0), m + q*se}
}

// llmStepper times one layout of a transformer on a system with its
// operator times scaled.
type llmStepper struct {
	t      model.TransformerShape
	system string
	dev    *hw.Device
	h      llm.Hardware
	op     llm.OpTime
	l      llm.Layout
}

// newLLMStepper resolves the model and system of a fit as LLM does, its
// operators timed as llmHardware times them at precision p and
// efficiency e.
func newLLMStepper(name, system string, l llm.Layout, p hw.Precision, e float64, cat *hw.Catalog) (*llmStepper, error) {
	if cat == nil {
		var err error
		if cat, err = hw.Default(); err != nil {
			return nil, err
		}
	}
	t, err := model.LookupTransformer(name)
	if err != nil {
		return nil, err
	}
	t.FusedAttention = true
	sys, node, dev, err := cat.Resolve(system)
	if err != nil {
		return nil, err
	}
	h, _, err := llmHardware(cat, system, p, e, t.FusedAttention, nil)
	if err != nil {
		return nil, err
	}
	h.GPUsPerNode = min(node.Devices, l.World())
	if l.SeqLen > 0 {
		t.SeqLen, l.SeqLen = l.SeqLen, 0
	}
	st := &llmStepper{t: t, system: sys.Name, dev: dev, h: h, op: h.Compute, l: l}
	if _, err := st.step(1); err != nil {
		return nil, fmt.Errorf("llm fit: %s with %s: %w", t.Name, LayoutString(l), err)
	}
	return st, nil
}

// step returns the layout's step with every operator's time times f.
func (s *llmStepper) step(f float64) (llm.StepTime, error) {
	h := s.h
	h.Compute = ScaledOpTime(s.op, f)
	return s.l.StepTime(s.t, h)
}

// factor returns the f whose step is measured, by bisection on log f to
// a relative 1e-9.
func (s *llmStepper) factor(measured units.Seconds) (float64, error) {
	lo, hi := math.Log(minFactor), math.Log(maxFactor)
	for _, b := range []float64{lo, hi} {
		st, err := s.step(math.Exp(b))
		if err != nil {
			return 0, err
		}
		if (b == lo) != (st.Time <= measured) {
			return 0, fmt.Errorf("llm fit: step %v of %s: outside what compute %g to %g times the operator model gives: a wrong model, system or layout", measured, LayoutString(s.l), minFactor, maxFactor)
		}
	}
	for hi-lo > 1e-9 {
		mid := (lo + hi) / 2
		st, err := s.step(math.Exp(mid))
		if err != nil {
			return 0, err
		}
		if st.Time < measured {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Exp((lo + hi) / 2), nil
}

// ScaledOpTime returns op with every time multiplied by f.
func ScaledOpTime(op llm.OpTime, f float64) llm.OpTime {
	return func(o model.Op) units.Seconds { return op(o) * units.Seconds(f) }
}

// llmCalibration returns the first llm entry of the files for device at
// precision p and its file; nil without files. Files without one are an error
// that lists what they have.
func llmCalibration(files []string, device string, p hw.Precision) (*calib.LLMEntry, string, error) {
	var have []string
	for _, f := range files {
		c, err := calib.ReadFile(f)
		if err != nil {
			return nil, "", fmt.Errorf("llm plan: %w", err)
		}
		if e, ok := c.LLMFor(device, string(p)); ok {
			return &e, f, nil
		}
		for _, e := range c.LLM {
			have = append(have, fmt.Sprintf("%s %s", e.Device, cmp.Or(e.Precision, "bf16")))
		}
	}
	if len(files) == 0 {
		return nil, "", nil
	}
	return nil, "", fmt.Errorf("llm plan: calibration %s: no llm entry of device %s in %s (the files have: %s); write one with fit --llm",
		strings.Join(files, ", "), device, p, cmp.Or(strings.Join(have, ", "), "none"))
}
